import copy
import math

import numpy as np
import pytest

from tests.events.conftest import corpus_shot, rephase
from vision_ref.errors import ContractError
from vision_ref.events.baseline import frame_level_events
from vision_ref.events.compare import compare, onset_truth
from vision_ref.events.infer import InferenceSettings, infer_shot
from vision_ref.events.segment import ShotWindow, segment_shots
from vision_ref.events.synthetic import tracks_from_truth
from vision_ref.rules import Match, validate_shot
from vision_ref.sim.physics import Layout, Strike, simulate
from vision_ref.sim.scenarios import get_scenario


def _infer(shot, fps, seed=0, phase=0.37, noise=0.7, dropped=(), settings=None):
    rephase(shot, fps, phase)
    tracks = tracks_from_truth(shot, fps, noise_mm=noise, seed=seed, exposure_s=0.5 / fps, dropped=dropped)
    (window,) = segment_shots(tracks)
    rec = infer_shot(tracks, window, shooter="A", settings=settings)
    return rec, onset_truth(shot.truth_record(fps), shot, fps), tracks, window


@pytest.mark.parametrize("fps", [60.0, 120.0])
def test_contact_times_are_sub_frame(carom_shot, fps):
    rec, truth, _, _ = _infer(carom_shot, fps, seed=3)
    c = compare(rec, truth)
    assert c.order_ok
    frames = [e * fps for e in c.time_errors]
    assert len(frames) == 4  # ball-ball + three cushions
    assert max(frames) < 0.25  # every contact within a quarter frame
    assert np.median(frames) < 0.125  # the target


def test_pin_chain_order_times_and_attribution(pin_shot):
    rec, truth, _, _ = _infer(pin_shot, 120.0, seed=1)
    c = compare(rec, truth)
    assert c.order_ok
    assert c.pins_total == 4 and c.pins_right == c.pins_confident == 4
    by = {e["pin"]: e["by"] for e in rec["events"] if e["type"] == "pin_hit"}
    assert by == {"head": "cue", "king": "head", "foot": "king", "right": "cue"}
    ball_knocks = c.time_errors_by_kind["pin_by_ball"]
    assert max(ball_knocks) * 120 < 0.5


def test_sub_frame_beats_the_frame_level_baseline():
    """At 60 fps a fast shot puts several contacts in one frame interval: the baseline
    gets their order wrong in many shots, the fitted paths do not."""
    from vision_ref.sim.random_shots import random_shot

    rng = np.random.default_rng(11)
    ours = base = 0
    n = 12
    errs, base_errs, roots_wrong = [], [], []
    for i in range(n):
        shot = rephase(random_shot(rng), 60.0, rng.uniform())
        tracks = tracks_from_truth(shot, 60.0, noise_mm=0.7, seed=i, exposure_s=1 / 120)
        (w,) = segment_shots(tracks)
        truth = onset_truth(shot.truth_record(60.0), shot, 60.0)
        c = compare(infer_shot(tracks, w, shooter="A"), truth)
        cb = compare({"events": frame_level_events(tracks, w)}, truth)
        ours += c.order_ok
        base += cb.order_ok
        errs += c.time_errors
        base_errs += cb.time_errors
        roots_wrong += c.roots_wrong
    assert ours >= 0.66 * n  # the benchmark measures ~80 % at 60 fps on a larger corpus
    assert ours >= base + 3
    assert np.median(errs) * 60 < 0.125  # the target: 1/8 frame
    assert np.median(errs) < 0.5 * np.median(base_errs)
    assert roots_wrong == []  # no confident knock blamed on the wrong ball


@pytest.mark.parametrize("name", ["legal_L3_cue_off_cushion", "legal_L4_white_off_white", "legal_L5_pin_chain",
                                  "foul_F2_cue_off_table", "foul_F4_direct", "foul_F6_wrong_ball",
                                  "B2_white_off_table", "score_6_three_pins"])
def test_scenarios_give_the_truths_decision(name):
    shot = get_scenario(name).simulate(0)
    for fps in (60.0, 120.0):
        rec, truth, _, _ = _infer(shot, fps, seed=2)
        assert compare(rec, truth).order_ok, (name, fps)
        ours = Match(["A", "B"], "A").play(rec)
        exact = Match(["A", "B"], "A").play(shot.truth_record(fps))
        for key in ("foul", "fouls", "points", "pins_down", "next", "carom"):
            assert ours[key] == exact[key], (name, fps, key)


def test_off_table_ball(off_table_shot):
    rec, truth, _, _ = _infer(off_table_shot, 60.0)
    kinds = [e["type"] for e in rec["events"]]
    assert "off_table" in kinds
    off = next(e for e in rec["events"] if e["type"] == "off_table")
    cushion = next(e for e in rec["events"] if e["type"] == "cushion" and e["ball"] == off["ball"])
    assert off["t"] >= cushion["t"]
    assert rec["after"]["balls"]["cue"] is None
    exact = next(e for e in truth["events"] if e["type"] == "off_table")
    assert abs(off["t"] - exact["t"]) < 0.25 / 60.0


def test_record_is_valid_and_carries_its_extras(pin_shot):
    rec, _, tracks, window = _infer(pin_shot, 60.0)
    validate_shot(rec)
    assert rec["frames"]["strike"] == int(tracks.frame_index[window.strike_row])
    assert 0.0 <= rec["confidence"] <= 1.0
    for e in rec["events"]:
        assert 0.0 <= e["confidence"] <= 1.0
        if e["type"] != "strike":
            assert e["frames"][0] <= e["frames"][1]
    assert [e["t"] for e in rec["events"]] == sorted(e["t"] for e in rec["events"])


def test_a_lone_moving_ball_at_a_pin_is_no_doubt():
    """A white at rest beside the pin is no candidate: only the moving cue ball is."""
    R = 30.75
    reach = R + 10.0
    # white1 rolls at the head pin from +y, the cue ball from -x; both arrive at t ~ 0.2 s
    v_cue, v_w = 2500.0, 2500.0
    t_hit = 0.2
    head = np.array([-73.5, 0.0])
    cue0 = head + np.array([-(reach + 0.5 * 0) - v_cue * t_hit * 0.985, 0.0])
    layout = Layout.standard(balls={"cue": tuple(cue0), "white1": (-73.5, 0.0 + reach + v_w * t_hit * 0.985),
                                    "white2": (900.0, 300.0)})
    shot = simulate(layout, Strike("cue", v_cue, 0.0))
    truth = shot.truth_record(60.0)
    pin_events = [e for e in truth["events"] if e["type"] in ("pin_hit", "doubt")]
    if not any(e.get("pin") == "head" for e in pin_events):
        pytest.skip("the set-up did not reach the head pin")
    # the cue alone moves here (white1 is at rest): the knock is clear, no doubt
    rec, _, _, _ = _infer(shot, 60.0)
    head_ev = next(e for e in rec["events"] if e.get("pin") == "head")
    assert head_ev["type"] == "pin_hit" and head_ev["by"] == "cue"


def test_dropped_frame_in_a_contact_window_is_never_guessed(pin_shot):
    fps = 60.0
    rephase(pin_shot, fps, 0.37)
    # drop the frame in which the king starts to fall
    t_king = next(e.t for e in pin_shot.events if e.type == "pin_hit" and e.data["pin"] == "king")
    drop = int(math.floor((pin_shot.strike_time + t_king) * fps)) + 1
    rec, _, tracks, _ = _infer(pin_shot, fps, dropped=[drop])
    assert drop in tracks.dropped
    king = [e for e in rec["events"] if e.get("pin") == "king"][0]
    # either a doubt, or a knock whose every candidate leads to one ball, marked as in a gap
    assert king["type"] == "doubt" or (king.get("gap") and len(king["root_candidates"]) == 1)
    assert king["confidence"] < 1.0 or king["type"] == "doubt"


def test_dropped_frame_at_a_ball_contact_is_flagged(carom_shot):
    fps = 60.0
    rephase(carom_shot, fps, 0.37)
    t_bb = next(e.t for e in carom_shot.events if e.type == "ball_ball")
    drop = int(math.floor((carom_shot.strike_time + t_bb) * fps))
    rec, truth, _, _ = _infer(carom_shot, fps, dropped=[drop, drop + 1])
    bb = next(e for e in rec["events"] if e["type"] == "ball_ball")
    assert bb.get("gap") is True
    assert bb["confidence"] <= 0.5
    assert compare(rec, truth).order_ok


def test_confidence_setting_is_validated():
    with pytest.raises(ContractError) as err:
        InferenceSettings(confidence=1.5)
    assert err.value.field == "settings.confidence"


def test_bad_window_and_shooter(carom_shot):
    tracks = tracks_from_truth(carom_shot, 60.0)
    (w,) = segment_shots(tracks)
    bad = ShotWindow(start_row=0, strike_row=5, end_row=len(tracks.t) + 10, struck="cue", strike_t=0.6,
                     strike_sigma=0.001)
    with pytest.raises(ContractError) as err:
        infer_shot(tracks, bad, shooter="A")
    assert err.value.field == "window"
    with pytest.raises(ContractError):
        infer_shot(tracks, w, shooter="")
    with pytest.raises(ContractError):
        infer_shot(tracks, {"start_row": 0}, shooter="A")
    with pytest.raises(ContractError):
        infer_shot("tracks", w, shooter="A")


def test_occlusions_and_dropped_frames_do_not_break_inference():
    from vision_ref.sim.random_shots import random_shot

    rng = np.random.default_rng(5)
    for i in range(4):
        shot = random_shot(rng)
        tracks = tracks_from_truth(shot, 60.0, noise_mm=1.0, seed=i, exposure_s=1 / 120,
                                   dropped=sorted(set(rng.integers(40, 100, size=3).tolist())))
        for tr in list(tracks.balls.values()) + list(tracks.pins.values()):
            hidden = rng.random(len(tr.t)) < 0.04
            tr.xy[hidden] = np.nan
            tr.state[hidden] = 0  # UNKNOWN
        for w in segment_shots(tracks):
            validate_shot(infer_shot(tracks, w, shooter="A"))


def test_two_shots_in_one_stretch(carom_shot, pin_shot):
    from tests.events.conftest import concat_tracks

    a = tracks_from_truth(rephase(carom_shot, 60.0, 0.2), 60.0, noise_mm=0.5, seed=1)
    b = tracks_from_truth(rephase(pin_shot, 60.0, 0.7), 60.0, noise_mm=0.5, seed=2)
    both = concat_tracks(a, b)
    w1, w2 = segment_shots(both)
    r1 = infer_shot(both, w1, shooter="A")
    r2 = infer_shot(both, w2, shooter="B")
    t1 = onset_truth(carom_shot.truth_record(60.0), carom_shot, 60.0)
    t2 = onset_truth(pin_shot.truth_record(60.0), pin_shot, 60.0)
    assert compare(r1, t1).order_ok and compare(r2, t2).order_ok
    # white2 never moved: the same place after shot 1 and before shot 2
    assert np.allclose(r1["after"]["balls"]["white2"], r2["before"]["balls"]["white2"], atol=1.0)


def test_f8_scenario_is_doubted_and_the_reach_reading_agrees():
    """The F8 scenario: white1 and white2 both come within 3 mm of touching the standing
    foot pin inside one frame interval. The fits cannot settle which knocked it: a
    doubt naming both, F8; the cautious reach reading gives the same doubt."""
    shot = get_scenario("foul_F8_doubt").simulate(0)
    rec, truth, tracks, window = _infer(shot, 60.0, seed=1, phase=0.3)
    doubted = [e for e in truth["events"] if e["type"] == "doubt"]
    assert doubted
    exact = doubted[0]
    # matched by pin and time: the pin starts to move up to two frames after the contact
    ours = [e for e in rec["events"] if e.get("pin") == exact["pin"] and abs(e["t"] - exact["t"]) < 3 / 60.0]
    assert ours and ours[0]["type"] == "doubt" and set(ours[0]["candidates"]) == set(exact["candidates"])
    assert any(f["rule"] == "F8" for f in Match(["A", "B"], "A").play(rec)["fouls"])
    cautious = infer_shot(tracks, window, shooter="A", settings=InferenceSettings(reach_doubt=True))
    d = [e for e in cautious["events"] if e.get("pin") == exact["pin"] and e["type"] == "doubt"]
    assert d and set(d[0]["candidates"]) == set(exact["candidates"])
    assert any(f["rule"] == "F8" for f in Match(["A", "B"], "A").play(cautious)["fouls"])


def test_a_flickering_pin_state_is_no_knock(carom_shot):
    """A tracker that calls a far-away standing pin 'moving' for two frames must not
    make a knock (or an F8 doubt) of it."""
    from vision_ref.messages import PinState

    rephase(carom_shot, 60.0, 0.37)
    tracks = tracks_from_truth(carom_shot, 60.0, noise_mm=0.7, seed=4, exposure_s=1 / 120)
    (w,) = segment_shots(tracks)
    r = w.strike_row + 30
    tracks.pins["left"].state[r:r + 2] = int(PinState.MOVING)
    rec = infer_shot(tracks, w, shooter="A")
    assert not [e for e in rec["events"] if e.get("pin") == "left"]
    assert any("pin left reported moving" in m for m in rec["warnings"])


@pytest.mark.parametrize("fps", [60.0, 120.0])
@pytest.mark.parametrize("phase", [0.1, 0.6])
def test_ball_struck_from_near_a_cushion_into_it(fps, phase):
    """A cue ball 9 mm off the right cushion driven into it: the cushion contact
    comes a fraction of a frame after the strike, before any moving row shows the
    approach (it was lost: the fit before it was the ball at rest)."""
    from vision_ref.messages import BallState
    from vision_ref.rules.table import DEFAULT_TABLE as T

    y = -(T.half_width - T.ball_radius - 9.0)
    shot = simulate(Layout.standard(balls={"cue": (510.0, y)}), Strike(speed=4900.0, angle=5.18))
    rephase(shot, fps, phase)
    truth = onset_truth(shot.truth_record(fps), shot, fps)
    assert truth["events"][1]["type"] == "cushion" and truth["events"][1]["t"] < 0.5 / fps
    tracks = tracks_from_truth(shot, fps, noise_mm=0.7, seed=3, exposure_s=0.5 / fps)
    (w,) = segment_shots(tracks)
    record = infer_shot(tracks, w, shooter="A")
    c = compare(record, truth)
    assert c.order_ok, (c.missing, c.extra)
    first = record["events"][1]
    assert (first["type"], first["ball"], first["cushion"]) == ("cushion", "cue", "right")


@pytest.mark.parametrize("fps", [60.0, 120.0])
def test_a_ball_creeping_into_a_cushion_and_back(fps):
    """T3's cue ball ends by creeping into the left cushion and turning back a few mm:
    a touch too slow to bend the path beyond the noise (seed 2 lost it)."""
    shot = get_scenario("T3_pin_lying_on_rail").simulate(0)
    truth = onset_truth(shot.truth_record(fps), shot, fps)
    for seed in range(6):
        tracks = tracks_from_truth(shot, fps, noise_mm=0.7, seed=seed, exposure_s=0.5 / fps)
        (w,) = segment_shots(tracks)
        c = compare(infer_shot(tracks, w, shooter="A"), truth)
        assert c.order_ok, (seed, c.missing, c.extra)


@pytest.mark.parametrize("early", [1, 2])
def test_a_pin_reported_moving_early_as_a_ball_nears_it_is_still_attributed(pin_shot, early):
    """A ball next to a pin spills into the pin's image: trackers report the pin moving
    (slightly off its place, then unseen) a few frames before the ball touches it. The
    knock is the ball's, timed by its fitted path, not a doubt with nothing in reach."""
    from vision_ref.messages import PinState

    rec, truth, tracks, window = _infer(pin_shot, 60.0, seed=2)
    head = next(e for e in rec["events"] if e.get("pin") == "head")
    assert head["type"] == "pin_hit" and head["by"] == "cue"
    tr = tracks.pins["head"]
    onset = int(np.nonzero(tr.state == int(PinState.MOVING))[0][0])
    rest_xy = tr.xy[onset - 1].copy()
    for k in range(onset - early, onset):
        tr.state[k] = int(PinState.MOVING)
        tr.xy[k] = rest_xy + (1.5, -1.0) if k < onset - 1 else np.nan  # blurred, then hidden
    rec2 = infer_shot(tracks, window, shooter="A")
    head2 = next(e for e in rec2["events"] if e.get("pin") == "head")
    assert head2["type"] == "pin_hit" and head2["by"] == "cue"
    assert abs(head2["t"] - head["t"]) < 0.5 / 60.0
    # a pin that starts moving with no ball anywhere near and is then lost is not attributed
    # to a ball by its timing (reported back in its place soon after, it is a misreading: no
    # event at all)
    far = tracks.pins["foot"]
    k = window.strike_row + 2
    if int(far.state[k]) == int(PinState.STANDING):
        back = copy.deepcopy(tracks)
        far.state[k:k + 3] = int(PinState.MOVING)
        far.xy[k + 1:k + 3] += (20.0, 0.0)
        bf = back.pins["foot"]
        bf.state[k:k + 3], bf.xy[k:k + 3] = far.state[k:k + 3], far.xy[k:k + 3]
        far.state[k + 3:] = int(PinState.ABSENT)
        far.xy[k + 3:] = np.nan
        rec3 = infer_shot(tracks, window, shooter="A")
        # (only the cue ball has moved: its chain, whatever the unseen knocker)
        foot = [e for e in rec3["events"] if e.get("pin") == "foot" and e["type"] in ("pin_hit", "doubt")]
        assert [(e["type"], e.get("root"), e.get("by_unseen")) for e in foot][:1] == [("pin_hit", "cue", True)]
        rec4 = infer_shot(back, window, shooter="A")
        early = [e for e in rec4["events"] if e.get("pin") == "foot" and e["t"] < rec4["events"][0]["t"] + 0.1]
        assert early == [] and any("pin foot reported moving" in w and "standing in its place again" in w
                                   for w in rec4["warnings"])


def test_a_lying_pin_that_shifts_with_nothing_in_reach_is_no_new_knock(pin_shot):
    """The tracker's two readings of a lying body (or the pin still sliding) move it by a
    few mm with no ball near: it is down already, so this is a warning, not an F8 doubt."""
    from vision_ref.messages import PinState

    rec, _, tracks, window = _infer(pin_shot, 60.0, seed=2)
    base_doubts = sum(e["type"] == "doubt" for e in rec["events"])
    # a pin lying still near the end of the shot, every ball far from it
    pin, row = None, None
    for p, tr in tracks.pins.items():
        down = np.nonzero(tr.state[: window.end_row - 3] == int(PinState.DOWN))[0]
        for r in down[::-1]:
            far = all(np.hypot(*(tracks.balls[b].xy[r] - tr.xy[r])) > 300 for b in tracks.balls
                      if np.all(np.isfinite(tracks.balls[b].xy[r])))
            if far and np.all(tr.state[r - 8:r + 3] == int(PinState.DOWN)):
                pin, row = p, int(r)
                break
        if pin:
            break
    assert pin is not None
    tracks.pins[pin].xy[row] += (8.0, -5.0)
    rec2 = infer_shot(tracks, window, shooter="A")
    assert sum(e["type"] == "doubt" for e in rec2["events"]) == base_doubts
    assert any(f"lying pin {pin} shifted" in w for w in rec2["warnings"])


def test_a_knocked_pin_read_at_rest_for_a_frame_is_still_moving(pin_shot):
    """A toppling pin read lying (at rest) for a frame between two readings of motion
    is not knocked again when it is next read moving: it never stopped."""
    from vision_ref.messages import PinState

    rec, _, tracks, window = _infer(pin_shot, 60.0, seed=2)
    knocked = [e["pin"] for e in rec["events"] if e["type"] == "pin_hit"]
    pin = knocked[0]
    tr = tracks.pins[pin]
    onset = next(r for r in range(window.strike_row, window.end_row) if tr.state[r] == int(PinState.MOVING))
    end = next(r for r in range(onset, window.end_row) if tr.state[r] != int(PinState.MOVING))
    assert end - onset >= 3
    tr.state[onset + 1] = int(PinState.DOWN)  # read at rest for a frame mid-fall
    tr.xy[onset + 1] = tr.xy[onset]
    rec2 = infer_shot(tracks, window, shooter="A")
    n = lambda r: sum(e["type"] in ("pin_hit", "doubt") and e["pin"] == pin for e in r["events"])  # noqa: E731
    assert n(rec2) == n(rec)
    assert any(f"pin {pin} reported moving again" in w for w in rec2["warnings"])


def test_a_pin_only_blurred_and_hidden_by_a_ball_resting_beside_it_is_no_knock(pin_shot):
    """A ball that rolls up and stops next to a standing pin spills into the pin's image
    and hides it (the tracker may say "moving", then lose it to the end): that is no
    evidence of a knock while no ball's path reached it. Without the ball beside it
    the same report is a knock by something unseen of the one moving ball's chain."""
    from vision_ref.messages import BallState, PinState

    rec, _, tracks, window = _infer(pin_shot, 60.0, seed=2)
    knocked = {e["pin"] for e in rec["events"] if e["type"] in ("pin_hit", "doubt")}
    pin = next(p for p in tracks.pins if p not in knocked)
    tr = tracks.pins[pin]
    at = tr.xy[window.strike_row].copy()
    k = (window.strike_row + window.end_row) // 2
    tr.state[k:k + 2] = int(PinState.MOVING)
    tr.xy[k:k + 2] = at + (1.5, 1.0)
    tr.state[k + 2:] = int(PinState.ABSENT)
    tr.xy[k + 2:] = np.nan

    def pin_events(record):
        return [e for e in record["events"] if e.get("pin") == pin]

    alone = infer_shot(tracks, window, shooter="A")
    # (only the cue ball has moved: its chain, the knocker unseen)
    assert [(e["type"], e.get("by_unseen")) for e in pin_events(alone)] == [("pin_hit", True)]
    # now white2 rests beside it all along (a ball's width from its base)
    w2 = tracks.balls["white2"]
    w2.xy[:] = at + (48.0, 0.0)
    w2.vel[:] = 0.0
    w2.state[:] = int(BallState.AT_REST)
    beside = infer_shot(tracks, window, shooter="A")
    assert pin_events(beside) == []
    assert any(f"pin {pin} blurred by a ball beside it" in w for w in beside["warnings"])


def test_pin_knocks_whose_chain_reaches_no_ball_are_reordered_or_doubted():
    """The adjudicator refuses a pin down whose pin_hit chain reaches no ball (L5); the
    inference never hands it one: two coarse times of one instant are put in causal
    order, and a knock by a pin whose own knock is a doubt becomes a doubt."""
    from vision_ref.events.infer import _doubt_rootless_knocks
    from vision_ref.rules.events import knock_of

    dt = 1 / 60
    tie = [{"t": 0.0, "type": "strike", "ball": "cue"},
           {"t": 0.2619, "type": "pin_hit", "pin": "left", "by": "king"},
           {"t": 0.2622, "type": "pin_hit", "pin": "king", "by": "cue"}]
    warnings: list[str] = []
    _doubt_rootless_knocks(tie, ["cue", "white1", "white2"], warnings, dt)
    assert [e.get("pin") for e in tie] == [None, "king", "left"]
    assert knock_of(tie, "left").root == "cue" and not warnings
    doubted = [{"t": 0.0, "type": "strike", "ball": "cue"},
               {"t": 0.30, "type": "doubt", "pin": "king", "candidates": ["cue", "white1"]},
               {"t": 0.35, "type": "pin_hit", "pin": "left", "by": "king"},
               {"t": 0.50, "type": "pin_hit", "pin": "head", "by": "white1"}]
    _doubt_rootless_knocks(doubted, ["cue", "white1", "white2"], warnings, dt)
    assert doubted[2]["type"] == "doubt" and doubted[2]["candidates"] == ["cue", "white1"]
    assert doubted[3]["type"] == "pin_hit" and len(warnings) == 1
    # two pins knocking each other in one frame, neither seen knocked: a doubt while
    # several balls have moved, the one moved ball's chain when only it has
    cycle = [{"t": 0.0, "type": "strike", "ball": "cue"},
             {"t": 0.03, "type": "pin_hit", "pin": "king", "by": "foot"},
             {"t": 0.03, "type": "pin_hit", "pin": "foot", "by": "king"}]
    several = copy.deepcopy(cycle)
    _doubt_rootless_knocks(several, ["cue", "white1", "white2"], [], dt, moved_at=lambda t: ["cue", "white1"])
    assert several[1]["type"] == "doubt" and several[1]["candidates"] == ["cue", "white1", "white2"]
    one = copy.deepcopy(cycle)
    _doubt_rootless_knocks(one, ["cue", "white1", "white2"], [], dt, moved_at=lambda t: ["cue"])
    assert [(e["type"], e["by"], e.get("by_unseen")) for e in one[1:]] == [("pin_hit", "cue", True),
                                                                           ("pin_hit", "king", None)]
    assert knock_of(one, "foot").root == "cue"


def test_a_knocked_pin_never_seen_again_is_down_unless_a_ball_hides_it(pin_shot):
    """A pin knocked off the table leaves the view for good: it is down (not the
    "standing" it was last seen as). A pin lost beside a resting ball may be hidden
    by it: its last seen state stands, with a warning."""
    from vision_ref.messages import PinState

    rec, _, tracks, window = _infer(pin_shot, 60.0, seed=2)
    hit = next(e for e in rec["events"] if e["type"] == "pin_hit" and e["pin"] == "head")
    tr = tracks.pins["head"]
    k = int(np.nonzero(tr.state == int(PinState.MOVING))[0][0]) + 1  # gone right after the knock
    tr.state[k:] = int(PinState.ABSENT)
    tr.xy[k:] = np.nan
    gone = infer_shot(tracks, window, shooter="A")
    assert gone["after"]["pins"]["head"]["state"] == "down"
    assert any("pin head was knocked and not seen again" in w for w in gone["warnings"])
    assert "pin head was knocked and not seen again: check that it fell" in gone["review"]
    assert hit["by"] == "cue"
    last_seen = tr.xy[k - 1].copy()
    w2 = tracks.balls["white2"]
    w2.xy[window.end_row - 30:] = last_seen + (45.0, 0.0)
    w2.state[window.end_row - 30:] = int(1)  # AT_REST
    hidden = infer_shot(tracks, window, shooter="A")
    assert hidden["after"]["pins"]["head"]["state"] == "standing"
    assert any("pin head hidden by white2" in w for w in hidden["warnings"])
    assert "pin head hidden by white2 resting beside it at the end: check whether it stands" in hidden["review"]
    # last seen standing 60 mm from its place (a lying pin pushed along and misread),
    # then hidden: counted down, as any knocked pin read standing away from its place
    far = tr.xy[window.start_row] + (0.0, 60.0)
    tr.xy[k - 1], tr.state[k - 1] = far, int(PinState.STANDING)
    w2.xy[window.end_row - 30:] = far + (45.0, 0.0)
    pushed = infer_shot(tracks, window, shooter="A")
    assert any(e["type"] == "pin_hit" and e["pin"] == "head" for e in pushed["events"])
    assert pushed["after"]["pins"]["head"] == {"at": [round(float(x), 2) for x in far], "state": "down"}
    assert any(p.startswith("pin head hidden by white2") for p in pushed["review"])
    assert any(p.startswith("pin head was knocked and is reported standing") and "counted down" in p
               for p in pushed["review"]), pushed["review"]


def test_points_to_check_name_grazes_hidden_pins_and_pins_in_one_place():
    from vision_ref.events.infer import _review_points

    window = ShotWindow(start_row=0, strike_row=5, end_row=50, struck="cue", strike_t=0.1, strike_sigma=0.001)
    pins = {p: {"at": list(xy), "state": "standing"} for p, xy in
            {"king": (0, 0), "head": (-73.5, 0), "foot": (73.5, 0), "left": (0, 73.5), "right": (0, -73.5)}.items()}
    rec = {"events": [{"t": 0.0, "type": "strike", "ball": "cue", "confidence": 1.0},
                      {"t": 0.4, "type": "ball_ball", "a": "cue", "b": "white1", "confidence": 0.9}],
           "warnings": [], "after": {"pins": copy.deepcopy(pins)}}
    assert _review_points(rec, window, []) == []
    rec["events"][1]["graze"] = True
    hidden = "pin head hidden by white2 resting beside it at the end: check whether it stands"
    rec["after"]["pins"]["foot"] = {"at": [30.0, -300.0], "state": "down"}
    rec["after"]["pins"]["right"] = {"at": [32.0, -296.0], "state": "down"}
    pts = _review_points(rec, window, [hidden])
    assert len(pts) == 3
    assert "cue and white1 barely met" in pts[0]
    assert pts[1].startswith("pin head hidden by white2") and "check whether it stands" in pts[1]
    assert "pins foot and right were tracked to one place" in pts[2]


def test_a_ball_missing_at_the_strike_or_moved_with_no_contact_is_a_point_to_check():
    """Every ball is on the table at a strike, and only a ball (or a knocked pin flying into
    it) sets a resting ball rolling: a ball the tracks miss before the strike, or one that
    moved with no contact found, means a contact may be missing from the record (a slow
    kiss merged into one blob), and the call with it."""
    from vision_ref.events.infer import _review_points

    window = ShotWindow(start_row=0, strike_row=5, end_row=50, struck="cue", strike_t=0.1, strike_sigma=0.001)
    pins = {p: {"at": list(xy), "state": "standing"} for p, xy in
            {"king": (0, 0), "head": (-73.5, 0), "foot": (73.5, 0), "left": (0, 73.5), "right": (0, -73.5)}.items()}
    balls = {"cue": [-700.0, 100.0], "white1": [900.0, 300.0], "white2": [850.0, -50.0]}
    rec = {"struck": "cue", "events": [{"t": 0.0, "type": "strike", "ball": "cue", "confidence": 1.0}],
           "warnings": [], "before": {"balls": copy.deepcopy(balls), "pins": copy.deepcopy(pins)},
           "after": {"balls": dict(copy.deepcopy(balls), cue=[800.0, -60.0]), "pins": copy.deepcopy(pins)}}
    assert _review_points(rec, window, []) == []  # the cue ball moved: it was struck
    rec["after"]["balls"]["white2"] = [900.0, -40.0]
    (pt,) = _review_points(rec, window, [])
    assert pt.startswith("white2 moved 51 mm with no ball seen touching it")
    # a slow kiss moves it only a few mm (review corpus: 7 mm, the contact lost): still asked
    rec["after"]["balls"]["white2"] = [856.0, -47.0]
    (pt,) = _review_points(rec, window, [])
    assert pt.startswith("white2 moved 7 mm")
    rec["after"]["balls"]["white2"] = [850.3, -50.2]  # its tracking noise at rest: nothing
    assert _review_points(rec, window, []) == []
    rec["after"]["balls"]["white2"] = [900.0, -40.0]
    rec["events"].append({"t": 2.4, "type": "ball_ball", "a": "cue", "b": "white2", "confidence": 0.9})
    assert _review_points(rec, window, []) == []
    rec["events"].pop()
    rec["after"]["pins"]["foot"] = {"at": [700.0, -20.0], "state": "down"}  # a knocked pin flew into it
    assert _review_points(rec, window, []) == []
    rec["before"]["balls"]["white1"] = None
    (pt,) = _review_points(rec, window, [])
    assert pt.startswith("white1 was not found on the table before the strike")


def test_a_one_frame_flicker_of_a_pin_knocked_later_is_no_doubt(pin_shot):
    """Called moving for a frame with nothing near, then standing in its place again:
    a flicker, even though the pin is knocked later (so it is not standing at the end)."""
    from vision_ref.messages import PinState

    rec, _, tracks, window = _infer(pin_shot, 60.0, seed=2)
    tr = tracks.pins["head"]
    k = window.strike_row + 2
    assert int(tr.state[k]) == int(PinState.STANDING)
    tr.state[k] = int(PinState.MOVING)
    again = infer_shot(tracks, window, shooter="A")
    assert [e["type"] for e in again["events"] if e.get("pin") == "head"] == \
        [e["type"] for e in rec["events"] if e.get("pin") == "head"]
    assert any("pin head reported moving at frame" in w for w in again["warnings"])


def test_ball_knocking_a_leaning_pin_down_is_a_knock():
    """A ball rolling into a leaning pin's tilted body (its reported point is the centre
    of the silhouette, the body runs along its direction) knocks it, while the ball it
    leans on does not. Seeded random shot: the cue ball knocks king onto white1 and,
    crawling, knocks it off again 3.41 s after the strike."""
    from vision_ref.sim.random_shots import random_shot

    rng = np.random.default_rng(2026)
    for _ in range(4):
        shot = random_shot(rng)
    truth_king = [e for e in shot.truth_record(60.0)["events"] if e["type"] == "pin_hit" and e["pin"] == "king"]
    assert len(truth_king) == 2 and truth_king[1]["t"] > 3.0
    rec, truth, _, _ = _infer(shot, 60.0, seed=5)
    king = [e for e in rec["events"] if e["type"] in ("pin_hit", "doubt") and e["pin"] == "king"]
    assert len(king) == 2
    assert king[1]["type"] == "pin_hit" and king[1]["by"] == "cue"
    assert abs(king[1]["t"] - truth_king[1]["t"]) < 1.0 / 60.0
    assert compare(rec, truth).order_ok


def test_same_frame_pin_knocks_follow_the_chain():
    # 120 fps only: at 60 fps head and right still swap at most strike phases (open)
    fps = 120.0
    # white1 knocks right while king (knocked by white1 a frame earlier) reaches head,
    # both inside one frame interval: the pin-pin contact is timed where the bodies
    # meet, not where they first come within the noise tolerance (which put head first)
    # Only the first knocks are this test's subject: the re-knocks of lying pins later
    # (white2 into head 108 ms after it came to rest, head into king and foot) fall
    # under REKNOCK_REST_S, which drops such short-rest re-knocks because on the
    # tracker's real output four in five of them are a rolling pin read at rest.
    shot = get_scenario("F4_exception_carom_first").simulate(0)
    for phase in (0.15, 0.3, 0.5, 0.7, 0.85):
        rec, truth, _, _ = _infer(shot, fps, seed=2, phase=phase)
        first = [e for e in truth["events"] if e["t"] < 0.4]
        assert len(first) == 8 and first[-1]["type"] == "pin_hit" and first[-1]["pin"] == "head"
        got = [e for e in rec["events"] if e["t"] < 0.4]
        assert compare({**rec, "events": got}, {**truth, "events": first}).order_ok, phase


def test_a_knocked_down_pin_pushed_again_by_two_balls_keeps_its_knocker(pin_shot):
    """Head lies where the cue ball's chain knocked it; later white1 and white2 roll
    into it from both sides at once and shift it. Which of them pushed it is a doubt,
    reported as a push of a lying pin; its fall stays the cue's, so no F8 (F8 is about
    who knocked a pin down); the same doubt on a standing pin is F8."""
    from vision_ref.messages import BallState, PinState

    rec, _, tracks, window = _infer(pin_shot, 60.0, seed=2)
    head = tracks.pins["head"]
    assert np.all(head.state[80:window.end_row] == int(PinState.DOWN))
    at = head.xy[300].copy()
    gap = 46.0  # centre distance: touching the lying body
    for ball, side in (("white1", -1.0), ("white2", 1.0)):
        tr = tracks.balls[ball]
        for r in range(285, 311):
            tr.xy[r] = at + (side * (gap + 300.0 * (310 - r) / 25.0), 0.0)
            tr.vel[r] = (-side * 300.0 * 60.0 / 25.0, 0.0)
            tr.state[r] = int(BallState.MOVING)
        tr.xy[311:] = at + (side * gap, 0.0)
        tr.vel[311:] = 0.0
        tr.state[311:] = int(BallState.AT_REST)
    head.xy[310:] += (0.0, 6.0)
    head.state[310:312] = int(PinState.MOVING)

    again = infer_shot(tracks, window, shooter="A")
    knocks = [(e["type"], e.get("by"), e.get("lying")) for e in again["events"] if e.get("pin") == "head"]
    assert knocks == [("pin_hit", "cue", None), ("doubt", None, True)]
    assert [f["rule"] for f in Match(["A", "B"], "A").play(again)["fouls"]] == \
        [f["rule"] for f in Match(["A", "B"], "A").play(rec)["fouls"]]
    standing = copy.deepcopy(again)
    for e in standing["events"]:
        e.pop("lying", None)
    assert "F8" in [f["rule"] for f in Match(["A", "B"], "A").play(standing)["fouls"]]


def _infer_unphased(shot, fps, seed):
    """The shot's own strike phase, as the review benchmark's perfect tracks have it."""
    tracks = tracks_from_truth(shot, fps, noise_mm=0.5, seed=seed, exposure_s=min(0.004, 1.0 / fps))
    (window,) = segment_shots(tracks)
    return infer_shot(tracks, window, shooter="A")


def test_a_ball_set_moving_just_before_a_glancing_knock_is_its_knocker():
    """foul_F5_cue_knocks_pin: white1 sets white2 moving 9 ms before white2 clips head
    in passing, all inside one 60 fps frame interval. The path after the knock, traced
    back, enters the pin's reach at the knock and leaves it ~25 ms later (the ball runs
    on through the pin's place): the knock is the entry, so white2 is its knocker, not
    a doubt with the timing fitting neither."""
    shot = get_scenario("foul_F5_cue_knocks_pin").simulate(0)
    t_truth = next(e["t"] for e in shot.truth_record(60.0)["events"] if e["type"] == "pin_hit" and e["pin"] == "head")
    for seed in (1, 2, 3):
        rec = _infer_unphased(shot, 60.0, seed)
        head = [e for e in rec["events"] if e["type"] in ("pin_hit", "doubt") and e["pin"] == "head"]
        assert [e["type"] for e in head] == ["pin_hit"], seed
        assert head[0]["by"] == "white2"
        assert abs(head[0]["t"] - t_truth) < 1.0 / 60.0


def test_pins_set_moving_in_one_frame_are_each_decided_once():
    """Seeded random shot 44 of rng 2026: the cue ball knocks head (seen moving a frame
    earlier) and king, and head knocks right; king and right are seen moving in the
    same frame, head's clear motion in between them (episodes sort by that). Each pin
    gets one event (right was decided twice and head never), in the truth's order."""
    from vision_ref.sim.random_shots import random_shot

    rng = np.random.default_rng(2026)
    for _ in range(45):
        shot = random_shot(rng)
    rec = _infer_unphased(shot, 60.0, seed=1)
    pins = [(e["pin"], e["type"], e.get("by")) for e in rec["events"] if e["type"] in ("pin_hit", "doubt")]
    assert pins == [("head", "pin_hit", "cue"), ("king", "pin_hit", "cue"), ("right", "pin_hit", "head")]


def test_a_resting_ball_pulled_and_back_is_no_contact():
    """A ball rolling 6 mm past a resting white: at low resolution the tracker merges
    their blobs for a few frames and reports the white pulled towards it and back to
    where it rested. No contact (the review corpus had one, and with it a missed F1)."""
    from dataclasses import replace as dc_replace

    from vision_ref.messages import BallState
    from vision_ref.rules.table import DEFAULT_TABLE as T

    fps = 120.0
    lay = Layout.standard(balls={"white2": (900.0, 500.0)})  # out of the way
    (cx, cy), (wx, wy) = lay.balls["cue"], lay.balls["white1"]
    dist = math.hypot(wx - cx, wy - cy)
    angle = math.atan2(wy - cy, wx - cx) + math.asin((2 * T.ball_radius + 6.0) / dist)
    shot = simulate(lay, Strike(speed=1500.0, angle=angle))
    truth = shot.truth_record(fps)
    assert not any(e["type"] == "ball_ball" for e in truth["events"])
    tracks = tracks_from_truth(shot, fps, noise_mm=0.3, seed=4, exposure_s=0.5 / fps)
    cue, w1 = tracks.balls["cue"].xy, tracks.balls["white1"].xy
    closest = int(np.nanargmin(np.hypot(*(cue - w1).T)))
    clean = infer_shot(tracks, segment_shots(tracks)[0], shooter="A")
    assert not any(e["type"] == "ball_ball" for e in clean["events"])
    # the flicker: white1 reported moving, dragged towards the cue ball, for 4 frames
    tr = tracks.balls["white1"]
    xy, st = tr.xy.copy(), tr.state.copy()
    rows = np.arange(closest - 2, closest + 2)
    pull = (cue[rows] - w1[rows]) * 0.45
    xy[rows] = w1[rows] + pull
    xy[rows[1]] = np.nan
    st[rows] = int(BallState.MOVING)
    flick = dc_replace(tracks, balls={**tracks.balls, "white1": dc_replace(tr, xy=xy, state=st)})
    got = infer_shot(flick, segment_shots(flick)[0], shooter="A")
    assert not any(e["type"] == "ball_ball" for e in got["events"]), got["events"]


def test_a_standing_pin_that_wanders_with_nothing_near_is_no_doubt(carom_shot):
    """A far-away standing pin read as moving for two frames and a few mm off its place from
    then on (the centre of a 5 px blob wanders under compression noise), still standing at
    the end with no ball in reach: nothing fell, so no knock and no F8 doubt. A pin that
    ends further off than that keeps its doubt."""
    from vision_ref.events.infer import noise_of
    from vision_ref.messages import PinState

    rephase(carom_shot, 60.0, 0.37)
    tracks = tracks_from_truth(carom_shot, 60.0, noise_mm=0.7, seed=4, exposure_s=1 / 120)
    (w,) = segment_shots(tracks)
    clear_mm = 8 * noise_of(tracks) + 2.0
    r = w.strike_row + 30
    base = copy.deepcopy(tracks)

    def wander(shift_mm):
        t = copy.deepcopy(base)
        t.pins["left"].state[r:r + 2] = int(PinState.MOVING)
        t.pins["left"].xy[r:] += np.array([shift_mm, 0.0])
        return infer_shot(t, w, shooter="A")

    rec = wander(1.3 * clear_mm)
    assert not [e for e in rec["events"] if e.get("pin") == "left"]
    assert any("pin left reported moving" in m and "standing in its place at the end" in m for m in rec["warnings"])
    assert not any(f["rule"] == "F8" for f in Match(["A", "B"], "A").play(rec)["fouls"])
    far = wander(3.0 * clear_mm)
    assert [e["type"] for e in far["events"] if e.get("pin") == "left"] == ["doubt"]


@pytest.mark.parametrize("seen_rows", [1, 2])
def test_a_pin_lost_from_sight_while_it_topples_still_knocks_its_neighbour(seen_rows):
    """score_4_two_pins: white1 knocks right, right topples onto head. Right seen moving
    at its base for ``seen_rows`` rows, then unseen until it lies (merged with the passing
    ball's blob, as the tracker at 728x544 loses it): head's knocker is still right,
    white1's chain, not a doubt with no candidate in reach (a false F8)."""
    from vision_ref.messages import PinState

    shot = get_scenario("score_4_two_pins").simulate(0)
    rec, truth, tracks, window = _infer(shot, 60.0, seed=1)
    head = [e for e in rec["events"] if e.get("pin") == "head"]
    assert [(e["type"], e.get("by")) for e in head] == [("pin_hit", "right")]
    right = tracks.pins["right"]
    moving = np.nonzero(right.state[window.strike_row:] == int(PinState.MOVING))[0] + window.strike_row
    start, down = int(moving[0]), int(moving[-1])
    assert down - start >= 4
    right.xy[start:start + seen_rows] = right.xy[start - 1]
    right.state[start + seen_rows:down] = int(PinState.ABSENT)
    right.xy[start + seen_rows:down] = np.nan
    lost = infer_shot(tracks, window, shooter="A")
    head = [e for e in lost["events"] if e.get("pin") in ("head", "right")]
    assert [(e["type"], e["pin"], e.get("root")) for e in head] == [("pin_hit", "right", "white1"), ("pin_hit", "head", "white1")]
    assert not any(f["rule"] == "F8" for f in Match(["A", "B"], "A").play(lost)["fouls"])


def test_a_pin_falling_with_nothing_in_reach_while_one_ball_has_moved_is_that_balls_chain(pin_shot):
    """The knocker of a pin is not seen (the tracker lost the pin that fell on it), but only
    the cue ball has moved so far: whatever set it moving is the cue ball's chain (L5), a
    knock with the root certain, not an F8 doubt (and nothing to check). With a second
    ball set moving before it, the same report stays a doubt naming both, unless only one
    of them was near the pin (its chain then, with a point to check)."""
    from vision_ref.messages import BallState, PinState

    rec, _, tracks, window = _infer(pin_shot, 60.0, seed=2)
    knocked = {e["pin"] for e in rec["events"] if e["type"] in ("pin_hit", "doubt")}
    pin = next(p for p in tracks.pins if p not in knocked)
    moved = [b for b in tracks.balls if (tracks.balls[b].state[window.strike_row:] == int(BallState.MOVING)).any()]
    k = window.strike_row + 6
    assert [b for b in moved if (tracks.balls[b].state[window.strike_row - 1:k + 1] == int(BallState.MOVING)).any()] \
        == ["cue"]
    tr = tracks.pins[pin]
    at = tr.xy[k - 1].copy()
    tr.state[k:k + 6] = int(PinState.MOVING)
    tr.xy[k:k + 6] = at + np.linspace(3.0, 30.0, 6)[:, None] * np.array([1.0, 0.0])
    tr.state[k + 6:] = int(PinState.DOWN)
    tr.xy[k + 6:] = at + (30.0, 0.0)
    tr.angle[k + 6:] = 0.0
    got = infer_shot(tracks, window, shooter="A")
    ev = [e for e in got["events"] if e.get("pin") == pin]
    assert [(e["type"], e["root"], e.get("by_unseen")) for e in ev] == [("pin_hit", "cue", True)]
    assert not any(f"pin {pin} started to fall" in p for p in got["review"])  # the chain is certain
    assert not any(f["rule"] == "F8" for f in Match(["A", "B"], "A").play(got)["fouls"])
    # white2 set moving (a flicker of motion) before the pin moved: two roots possible
    w2 = tracks.balls["white2"]
    w2.state[k - 3:k - 1] = int(BallState.MOVING)
    two = infer_shot(tracks, window, shooter="A")
    ev = [e for e in two["events"] if e.get("pin") == pin]
    assert [e["type"] for e in ev] == ["doubt"] and set(ev[0]["candidates"]) == {"cue", "white2"}
    # white2 resting (and flickering) a ball's width from the pin, the cue ball far away:
    # white2's chain, not a doubt
    from dataclasses import replace

    from vision_ref.rules.table import DEFAULT_TABLE as T

    assert float(np.hypot(*(tracks.balls["cue"].xy[k] - at))) > 300.0
    xy = tracks.balls["white2"].xy.copy()
    xy[:] = at + (T.ball_radius + 20.0, 0.0)
    beside = replace(tracks, balls={**tracks.balls, "white2": replace(tracks.balls["white2"], xy=xy)})
    got = infer_shot(beside, window, shooter="A")
    ev = [e for e in got["events"] if e.get("pin") == pin]
    assert [(e["type"], e.get("root"), e.get("root_by")) for e in ev][:1] == [("pin_hit", "white2", "only_near")]
    # the likeliest root, not the only possible one: a point to check
    assert any(f"pin {pin} started to fall" in p and "check what knocked it" in p for p in got["review"])


def test_a_fallen_pin_read_standing_for_a_moment_then_shifting_is_no_new_knock(pin_shot):
    """A pin knocked down earlier in the shot, read as standing for two frames (its body
    end-on) and then shifting with nothing in reach, is still a fallen pin: no new knock
    (a doubt, or a knock by something unseen)."""
    from vision_ref.messages import PinState

    rec, _, tracks, window = _infer(pin_shot, 60.0, seed=2)
    down = [p for p, v in rec["after"]["pins"].items() if v["state"] == "down"]
    pin = down[0]
    tr = tracks.pins[pin]
    lying = np.nonzero(tr.state == int(PinState.DOWN))[0]
    k = int(lying[0]) + 20
    assert k + 8 < window.end_row and np.all(tr.state[k:k + 8] == int(PinState.DOWN))
    tr.state[k:k + 2] = int(PinState.STANDING)
    tr.state[k + 2:k + 5] = int(PinState.MOVING)
    tr.xy[k + 2:] += (12.0, 0.0)
    got = infer_shot(tracks, window, shooter="A")
    late = [e for e in got["events"] if e.get("pin") == pin and e["t"] > rec["events"][0]["t"] + (k - window.strike_row - 1) / 60.0]
    assert late == []
    assert any(f"lying pin {pin} shifted" in w for w in got["warnings"])
    assert not any(f["rule"] == "F8" for f in Match(["A", "B"], "A").play(got)["fouls"])


@pytest.mark.parametrize("pin", ["head", "foot", "right"])
def test_a_knocked_pin_never_read_lying_that_moves_again_alone_is_its_earlier_knock(pin_shot, pin):
    """A knocked pin flown onto the rail may be read standing there (never lying) and
    move again as it settles, with nothing in reach: the same fall, not a second knock
    blamed on whichever ball had moved (an extra pin hit breaks the contact order)."""
    from vision_ref.messages import PinState

    rec, _, tracks, window = _infer(pin_shot, 60.0, seed=2)
    knocks = [e for e in rec["events"] if e["type"] == "pin_hit" and e["pin"] == pin]
    assert len(knocks) == 1
    tr = tracks.pins[pin]
    first = int(np.nonzero(tr.state == int(PinState.DOWN))[0][0])
    k = first + 25
    assert k + 4 < window.end_row
    tr.state[first:] = int(PinState.STANDING)
    tr.state[k:k + 4] = int(PinState.MOVING)
    tr.xy[k:] += (0.0, 15.0)
    got = infer_shot(tracks, window, shooter="A")
    assert [e for e in got["events"] if e.get("pin") == pin] == knocks
    assert any(f"pin {pin}, knocked earlier, moved again" in w for w in got["warnings"])


def test_a_pin_standing_on_the_rail_at_the_end_is_a_point_to_check():
    from vision_ref.events.infer import _review_points

    window = ShotWindow(start_row=0, strike_row=5, end_row=50, struck="cue", strike_t=0.1, strike_sigma=0.001)
    pins = {p: {"at": list(xy), "state": "standing"} for p, xy in
            {"king": (0, 0), "head": (-73.5, 0), "foot": (73.5, 0), "left": (0, 73.5), "right": (0, -73.5)}.items()}
    rec = {"events": [], "warnings": [], "after": {"pins": pins}}
    assert _review_points(rec, window, []) == []
    pins["foot"] = {"at": [-350.0, -808.0], "state": "rail_standing"}
    (pt,) = _review_points(rec, window, [])
    assert pt.startswith("pin foot reported standing on the rail") and "T2" in pt


def test_a_pin_read_moving_as_a_ball_passes_and_standing_in_place_again_is_no_knock(carom_shot):
    """A ball passing a standing pin merges with its blob: the pin is read moving and
    displaced for two frames, then stands in its place again and to the end. Nothing
    fell, so there is no knock and no doubt (F8 is about falls), even though the ball
    was in reach."""
    from dataclasses import replace

    from vision_ref.messages import PinState
    from vision_ref.rules.table import DEFAULT_TABLE as T

    rephase(carom_shot, 60.0, 0.37)
    tracks = tracks_from_truth(carom_shot, 60.0, noise_mm=0.5, seed=4, exposure_s=1 / 120)
    (w,) = segment_shots(tracks)
    ball = tracks.balls["white1"]
    k = w.strike_row + 40
    v = ball.xy[k + 1] - ball.xy[k - 1]
    side = np.array([-v[1], v[0]]) / np.hypot(*v)
    # the left pin stands (all shot long) 1 mm clear of white1's path at row k (within the tracking error)
    at = ball.xy[k] + side * (T.ball_radius + T.pin_top_radius("left") + 1.0)
    tr = tracks.pins["left"]
    xy = np.tile(at, (len(tr.xy), 1)) + np.random.default_rng(1).normal(0.0, 0.3, (len(tr.xy), 2))
    st = np.full(len(tr.state), int(PinState.STANDING), tr.state.dtype)
    clean = replace(tracks, pins={**tracks.pins, "left": replace(tr, xy=xy.copy(), state=st.copy())})
    rec = infer_shot(clean, w, shooter="A")
    assert [e for e in rec["events"] if e.get("pin") == "left"] == []
    st[k:k + 2] = int(PinState.MOVING)
    xy[k:k + 2] += 12.0 * side
    flick = replace(tracks, pins={**tracks.pins, "left": replace(tr, xy=xy, state=st)})
    got = infer_shot(flick, w, shooter="A")
    assert [e for e in got["events"] if e.get("pin") == "left"] == []
    assert any("pin left reported moving" in m and "no fall, ignored" in m for m in got["warnings"])


def test_a_pin_misread_as_a_ball_passes_then_standing_still_is_knocked_only_later(carom_shot):
    """A ball passing a standing pin merges with its blob (read moving and displaced for
    two frames); the pin then stands still in its place for longer than a fall takes to
    start and falls only later. The later fall is its knock; the misreading is none,
    even though the pin does not stand at the end."""
    from dataclasses import replace

    from vision_ref.messages import PinState
    from vision_ref.rules.table import DEFAULT_TABLE as T

    rephase(carom_shot, 60.0, 0.37)
    tracks = tracks_from_truth(carom_shot, 60.0, noise_mm=0.5, seed=4, exposure_s=1 / 120)
    (w,) = segment_shots(tracks)
    ball = tracks.balls["white1"]
    k = w.strike_row + 40
    v = ball.xy[k + 1] - ball.xy[k - 1]
    side = np.array([-v[1], v[0]]) / np.hypot(*v)
    at = ball.xy[k] + side * (T.ball_radius + T.pin_top_radius("left") + 1.0)
    tr = tracks.pins["left"]
    xy = np.tile(at, (len(tr.xy), 1)) + np.random.default_rng(1).normal(0.0, 0.3, (len(tr.xy), 2))
    st = np.full(len(tr.state), int(PinState.STANDING), tr.state.dtype)
    st[k:k + 2] = int(PinState.MOVING)
    xy[k:k + 2] += 12.0 * side
    fall = k + 30  # half a second later it falls (toppling over 12 rows, then lying)
    st[fall:fall + 12] = int(PinState.MOVING)
    xy[fall:fall + 12] += np.outer(np.arange(1, 13) * 6.0, side)
    st[fall + 12:] = int(PinState.DOWN)
    xy[fall + 12:] = xy[fall + 11]
    got = infer_shot(replace(tracks, pins={**tracks.pins, "left": replace(tr, xy=xy, state=st)}), w, shooter="A")
    left = [e for e in got["events"] if e.get("pin") == "left"]
    assert len(left) == 1 and left[0]["frames"][-1] == int(tracks.frame_index[fall]), left
    assert any("pin left reported moving" in m and "standing in its place again soon after and still" in m for m in got["warnings"])


def test_a_knocked_pin_reported_standing_away_from_its_place_is_a_point_to_check(pin_shot):
    from vision_ref.messages import PinState

    rec, _, tracks, window = _infer(pin_shot, 60.0, seed=2)
    down = [p for p, v in rec["after"]["pins"].items() if v["state"] == "down"]
    assert not any("reported standing" in p for p in rec["review"])
    tr = tracks.pins[down[0]]
    lying = np.nonzero(tr.state == int(PinState.DOWN))[0]
    tr.state[lying] = int(PinState.STANDING)  # its lying body read as a pin standing there
    got = infer_shot(tracks, window, shooter="A")
    # knocked pins rarely land upright far from their place (T1); a lying one misread is likelier
    assert got["after"]["pins"][down[0]]["state"] == "down"
    assert any(p.startswith(f"pin {down[0]} was knocked and is reported standing") and "counted down" in p
               and "T1" in p for p in got["review"])


def test_knocked_pins_reported_leaning_or_lying_against_a_ball_are_points_to_check(pin_shot):
    from dataclasses import replace

    from vision_ref.messages import PinState
    from vision_ref.rules.table import DEFAULT_TABLE as T

    rec, _, tracks, window = _infer(pin_shot, 60.0, seed=2)
    assert not any("T4" in p for p in rec["review"])
    pin = next(p for p, v in rec["after"]["pins"].items() if v["state"] == "down")
    tr = tracks.pins[pin]
    lying = np.nonzero(tr.state == int(PinState.DOWN))[0]
    leaning = replace(tracks, pins={**tracks.pins, pin: replace(tr, state=np.where(
        tr.state == int(PinState.DOWN), int(PinState.LEANING), tr.state).astype(tr.state.dtype))})
    got = infer_shot(leaning, window, shooter="A")
    assert any(p.startswith(f"pin {pin} was knocked and is reported leaning") for p in got["review"])
    # a resting ball put beside the lying pin's centre: its top may rest on the ball
    at = np.array(rec["after"]["pins"][pin]["at"])
    ball = next(b for b, xy in rec["after"]["balls"].items() if xy is not None)
    btr = tracks.balls[ball]
    xy = btr.xy.copy()
    xy[window.end_row - 20:] = at + (T.ball_radius + 30.0, 0.0)
    near = replace(tracks, balls={**tracks.balls, ball: replace(btr, xy=xy)})
    got = infer_shot(near, window, shooter="A")
    assert any(p.startswith(f"pin {pin} was knocked and is reported lying against a ball") for p in got["review"])
    assert lying[-1] >= window.end_row - 20


@pytest.mark.parametrize("fps", [60.0, 120.0])
def test_a_pin_read_leaning_where_it_cannot_lean_is_counted_down(fps):
    """A pin that fell onto a ball at rest leans on it (T4): not down, a point to check.
    Read leaning after it was seen lying (a lying pin does not get up), read leaning
    only now and then at the end, or beside a ball still rolling at the end, it is a
    lying pin read short in a heap: counted down, with a point to check."""
    from dataclasses import replace

    from vision_ref.messages import BallState, PinState

    shot = get_scenario("T4_pin_leans_on_ball").simulate(0)
    rec, _, tracks, window = _infer(shot, fps, seed=1)
    (pin,) = [p for p, v in rec["after"]["pins"].items() if v["state"] == "leaning"]
    assert any(p.startswith(f"pin {pin} was knocked and is reported leaning at the end") for p in rec["review"])
    tr = tracks.pins[pin]
    lean = np.nonzero(tr.state == int(PinState.LEANING))[0]
    n_lying = int(round(0.2 * fps))

    def counted_down(state=None, balls=None) -> bool:
        pins = {**tracks.pins, pin: replace(tr, state=state)} if state is not None else tracks.pins
        got = infer_shot(replace(tracks, pins=pins, balls=balls or tracks.balls), window, shooter="A")
        down = got["after"]["pins"][pin]["state"] == "down"
        assert down == any(p.startswith(f"pin {pin} was knocked and is reported leaning, but") and
                           "counted down" in p for p in got["review"])
        return down

    assert not counted_down()
    seen_lying = tr.state.copy()
    seen_lying[lean[0]:lean[0] + n_lying] = int(PinState.DOWN)
    assert counted_down(state=seen_lying)
    flicker = tr.state.copy()
    flicker[window.end_row - 12:window.end_row + 1:3] = int(PinState.MOVING)  # 1 row in 3 ...
    flicker[window.end_row - 11:window.end_row + 1:3] = int(PinState.ABSENT)  # ... and another
    assert counted_down(state=flicker)
    support = min((b for b, xy in rec["after"]["balls"].items() if xy is not None),
                  key=lambda b: math.dist(rec["after"]["balls"][b], rec["after"]["pins"][pin]["at"]))
    btr = tracks.balls[support]
    rolling = btr.state.copy()
    rolling[window.end_row - 3:] = int(BallState.MOVING)
    assert counted_down(balls={**tracks.balls, support: replace(btr, state=rolling)})


def test_a_slow_kiss_whose_resting_ball_is_lost_in_the_merged_blob_is_found():
    """The cue ball crawls into white1 at rest. The tracker, as the blobs merge, reports
    white1 moving (pulled 3 mm towards the cue ball) a frame before they touch, then
    loses it for 0.3 s, and sees it again pushed on: the kiss is still found, timed
    where the cue ball's path reaches 2R of white1 (random_2026_149@120: a miss, F1,
    called from a carom)."""
    from vision_ref.messages import BallState

    layout = Layout.standard()
    cx, cy = layout.balls["cue"]
    wx, wy = layout.balls["white1"]
    shot = simulate(layout, Strike(speed=900.0, angle=math.atan2(wy - cy, wx - cx) + 0.02))
    fps = 120.0
    truth = onset_truth(shot.truth_record(fps), shot, fps)
    kiss = next(e for e in truth["events"] if e["type"] == "ball_ball")
    tracks = tracks_from_truth(shot, fps, noise_mm=0.3, seed=3, exposure_s=0.5 / fps)
    (w,) = segment_shots(tracks)
    rec = infer_shot(tracks, w, shooter="A")
    assert any(e["type"] == "ball_ball" for e in rec["events"])
    w1 = tracks.balls["white1"]
    k = int(np.nonzero(w1.state == int(BallState.MOVING))[0][0])  # its first moving row
    cue = tracks.balls["cue"]
    pull = (cue.xy[k - 2] - w1.xy[k - 2]) / np.hypot(*(cue.xy[k - 2] - w1.xy[k - 2])) * 3.0
    w1.state[k - 2:k] = int(BallState.MOVING)
    w1.xy[k - 2:k] = w1.xy[k - 3] + pull
    lost = slice(k, k + int(0.3 * fps))
    # the merged blob's centre is reported for the cue ball, then it is found again
    merged = slice(k, k + int(0.1 * fps))
    cue.xy[merged] = 0.5 * (cue.xy[merged] + w1.xy[merged])
    w1.state[lost] = int(BallState.IN_HAND)
    w1.xy[lost] = np.nan
    got = infer_shot(tracks, w, shooter="A")
    kisses = [e for e in got["events"] if e["type"] == "ball_ball"]
    assert kisses and {kisses[0]["a"], kisses[0]["b"]} == {"cue", "white1"}
    assert abs(kisses[0]["t"] - kiss["t"]) < 1.0 / fps
    # the slow-kiss timing itself (the fitted paths cannot time it): white1's reported
    # start is 2 rows early, before the pair's candidate interval
    from vision_ref.events.infer import _Contact, _resting_ball_set_moving, _Shot
    from vision_ref.rules.table import DEFAULT_TABLE

    sh = _Shot(tracks, w, DEFAULT_TABLE, InferenceSettings())
    c = _Contact("ball_ball", ("cue", "white1"), float(tracks.t[k]), rows=(k, k + 1), span=(k, k + 6))
    res = _resting_ball_set_moving(sh, c)
    assert res is not None and abs(res[0] - w.strike_t - kiss["t"]) < 1.0 / fps


def test_a_cushion_graze_may_miss_the_line_by_the_trackers_error_near_a_cushion(carom_shot, monkeypatch):
    """A ball grazing a cushion is tracked up to ~4 mm inside its place (the review
    corpus): a fitted path that comes that close and turns away is a graze of the
    cushion; a ball-ball graze keeps the tight tolerance (a near miss of two balls is
    common play, and a wrong kiss decides a carom)."""
    import vision_ref.events.infer as inf
    from vision_ref.rules.table import DEFAULT_TABLE

    _, _, tracks, w = _infer(carom_shot, 60.0, seed=3)
    sh = inf._Shot(tracks, w, DEFAULT_TABLE, inf.InferenceSettings())
    t0 = w.strike_t + 0.2

    def h(t):  # a path that comes within 3 mm of the line at t0 and turns away
        return 3.0 + 40.0 * (np.asarray(t) - t0) ** 2

    def v(t):
        return 0.04 + 0.0 * np.asarray(t)  # 0.2 mm: 2 sigma + 0.3 mm is not 3 mm

    assert sh.time_contact(h, v, None, None, t0 - 0.1, t0 + 0.1) is None
    t, _, touched = sh.time_contact(h, v, None, None, t0 - 0.1, t0 + 0.1, graze_mm=inf.CUSHION_GRAZE_MM)
    assert abs(t - t0) < 0.01 and not touched
    # the cushion timing asks for that tolerance
    seen = []
    real = inf._Shot.time_contact
    monkeypatch.setattr(inf._Shot, "time_contact", lambda self, *a, **k: seen.append(k) or real(self, *a, **k))
    infer_shot(tracks, w, shooter="A")
    assert {"graze_mm": inf.CUSHION_GRAZE_MM} in seen


def test_a_pin_counted_down_with_another_lying_across_its_place_is_a_point_to_check(pin_shot):
    """From above at a few pixels a pin standing against a lying one merges with it, and its
    identity may go with the lying pin's body (random_2026_003 at 120 fps of the review
    corpus: the foot stood, the king lay across its place, the foot was counted down with no
    doubt). Such a pin counted down is a point to check; with the other pin lying elsewhere
    it is not."""
    from dataclasses import replace

    from vision_ref.messages import PinState
    from vision_ref.rules.table import DEFAULT_TABLE as T

    rec, _, tracks, window = _infer(pin_shot, 60.0, seed=2)
    rows = slice(window.end_row - 30, None)
    # the foot falls 37 mm from where it stood, the king it knocked lies across that place:
    # the king is moved away to lie elsewhere first (then no point), then the left pin is
    # laid across the foot's place (a point), then beside it (none)
    down, mover, other = "foot", "king", "left"
    assert rec["after"]["pins"][down]["state"] == "down" and rec["after"]["pins"][other]["state"] == "standing"
    stood, lies = np.array(rec["before"]["pins"][down]["at"]), np.array(rec["after"]["pins"][down]["at"])
    assert np.hypot(*(lies - stood)) < 0.9 * T.pin_height_of(other)
    u = (lies - stood) / np.hypot(*(lies - stood))
    side = np.array([-u[1], u[0]])

    def lying(tracks, pin, centre):
        tr = tracks.pins[pin]
        xy, st, ang = tr.xy.copy(), tr.state.copy(), tr.angle.copy()
        xy[rows], st[rows], ang[rows] = centre, int(PinState.DOWN), math.atan2(u[1], u[0])
        return replace(tracks, pins={**tracks.pins, pin: replace(tr, xy=xy, state=st, angle=ang)})

    tracks = lying(tracks, mover, stood + 300.0 * side)
    got = infer_shot(tracks, window, shooter="A")
    assert not any("lies across" in p for p in got["review"]), got["review"]

    def lying_at(centre):
        return lying(tracks, other, centre)

    # lying across both the place it stood and where it is reported, 5 mm off their line
    got = infer_shot(lying_at(0.5 * (stood + lies) + 5.0 * side), window, shooter="A")
    assert got["after"]["pins"][other]["state"] == "down"
    assert any(p.startswith(f"pin {down} is counted down, but pin {other} lies across where it stood")
               for p in got["review"]), got["review"]
    # beside it, as a pin fallen against it lies: not a point to check
    got = infer_shot(lying_at(0.5 * (stood + lies) + (T.pin_base_diameter + 12.0) * side), window, shooter="A")
    assert not any("lies across" in p for p in got["review"])


def test_a_span_is_cut_where_the_clearance_rises_between_two_dips():
    from types import SimpleNamespace

    from vision_ref.events.infer import SPLIT_RISE_MM, SPLIT_RISE_SIGMA, _split_span

    sh = SimpleNamespace(sig=0.5)
    rise = SPLIT_RISE_SIGMA * sh.sig + SPLIT_RISE_MM
    two = [6.0, 0.5, 0.2, 1.0 + rise, 0.3, 5.0]  # touch, part by more than the noise, touch
    assert _split_span(sh, 10, 15, lambda k: two[k - 10]) == [(10, 13), (13, 15)]
    one = [6.0, 0.5, 0.2, rise - 0.5, 0.3, 5.0]  # a wobble within the noise: one contact
    assert _split_span(sh, 10, 15, lambda k: one[k - 10]) == [(10, 15)]
    assert _split_span(sh, 3, 5, lambda k: two[k - 3]) == [(3, 5)]  # too short to hold two


def test_a_double_kiss_a_few_frames_apart_is_two_contacts():
    """random_2026_106 of the review corpus: the cue ball meets white2 at 2.251 s and
    again at 2.299 s (white2 touching a cushion between), three frames at 60 fps. The two
    stay near each other throughout, so their rows make one candidate span; both kisses
    must be found."""
    shot = corpus_shot(106)
    fps = 60.0
    truth = onset_truth(shot.truth_record(fps), shot, fps)
    kisses = [e["t"] for e in truth["events"] if e["type"] == "ball_ball" and {e["a"], e["b"]} == {"cue", "white2"}]
    assert len([t for t in kisses if 2.2 < t < 2.35]) == 2
    tracks = tracks_from_truth(shot, fps, noise_mm=0.5, seed=1, exposure_s=0.004)
    (w,) = segment_shots(tracks)
    rec = infer_shot(tracks, w, shooter="A")
    got = [e["t"] for e in rec["events"] if e["type"] == "ball_ball" and {e["a"], e["b"]} == {"cue", "white2"}]
    near = [t for t in got if 2.2 < t < 2.35]
    assert len(near) == 2
    assert all(min(abs(t - k) for k in kisses) < 0.5 / fps for t in near)


def test_lying_pins_of_a_heap_read_moving_together_with_no_ball_near_are_no_knock(pin_shot):
    """The tracker parts a heap of lying pins anew: all read moving from the same frame,
    each in reach of the others and no ball near any (scenario score_9_king_and_three at
    60 fps: three doubts, a call put in doubt for nothing). None of them was moving before
    to knock the others, so nothing is reported but warnings."""
    from vision_ref.messages import PinState

    rec, _, tracks, window = _infer(pin_shot, 60.0, seed=2)
    n_events = sum(e["type"] in ("pin_hit", "doubt") for e in rec["events"])
    # two pins lying still side by side near the end of the shot, every ball far away
    heap = None
    for r in range(window.end_row - 12, window.strike_row, -1):
        lying = [p for p, tr in tracks.pins.items() if np.all(tr.state[r - 20:r + 6] == int(PinState.DOWN))]
        far = lambda xy: all(np.hypot(*(tracks.balls[b].xy[r] - xy)) > 300 for b in tracks.balls  # noqa: E731
                             if np.all(np.isfinite(tracks.balls[b].xy[r])))
        pairs = [(p, q) for i, p in enumerate(lying) for q in lying[i + 1:]
                 if np.hypot(*(tracks.pins[p].xy[r] - tracks.pins[q].xy[r])) < 80
                 and far(tracks.pins[p].xy[r]) and far(tracks.pins[q].xy[r])]
        if pairs:
            heap, row = pairs[0], r
            break
    assert heap is not None
    for k, p in enumerate(heap):
        tr = tracks.pins[p]
        tr.state[row:row + 2] = int(PinState.MOVING)
        tr.xy[row:row + 2] += (6.0, 4.0 - 8.0 * k)
        tr.xy[row + 2:] += (3.0, 2.0 - 4.0 * k)
    rec2 = infer_shot(tracks, window, shooter="A")
    assert sum(e["type"] in ("pin_hit", "doubt") for e in rec2["events"]) == n_events
    assert all(any(f"lying pin {p} shifted" in w for w in rec2["warnings"]) for p in heap)


@pytest.mark.parametrize("fps", [60.0, 120.0])
def test_ball_kissed_into_the_cushion_it_lay_near(fps):
    """random_2026_139: white2, resting near the head cushion, is kissed into it and
    bounces 10 ms later (less than two frames at 120 fps, one at 60). The path fitted
    before the cushion is the rest before the kiss, which never nears the cushion; the
    row between the two contacts shows the approach, and the cushion contact is reported
    after the kiss. At 60 fps the kiss is timed from no fit across the bounce (the path
    after it, run back, would put the kiss after the bounce)."""
    shot = corpus_shot(139)
    truth = onset_truth(shot.truth_record(fps), shot, fps)
    (kiss,) = [e["t"] for e in truth["events"] if e["type"] == "ball_ball" and e["t"] < 0.3]
    (bounce,) = [e["t"] for e in truth["events"] if e["type"] == "cushion" and e["ball"] == "white2"
                 and e["cushion"] == "head" and e["t"] < 0.3]
    assert 0.0 < bounce - kiss < 2.0 / fps
    tracks = tracks_from_truth(shot, fps, noise_mm=0.5, seed=1, exposure_s=0.004)
    (w,) = segment_shots(tracks)
    rec = infer_shot(tracks, w, shooter="A")
    got = [e for e in rec["events"] if e["t"] < 0.25 and e["type"] in ("ball_ball", "cushion")]
    assert [(e["type"], e.get("ball")) for e in got] == [("ball_ball", None), ("cushion", "white2")]
    assert abs(got[1]["t"] - bounce) < 1.0 / fps


def test_a_ball_creeping_into_a_cushion_and_back_is_a_contact():
    """random_2026_199: at the end of its run the cue ball creeps into the right cushion
    at 24 mm/s and comes back out at 13 mm/s, to rest 1.7 mm off it. Too slow a kink for
    the contact fits; the clearance falls, then rises, and the two lines meet at the
    cushion. A ball that only rolls to rest near a cushion shows no such turn."""
    shot = corpus_shot(199)
    for fps in (60.0, 120.0):
        truth = onset_truth(shot.truth_record(fps), shot, fps)
        (creep,) = [e["t"] for e in truth["events"] if e["type"] == "cushion" and e["cushion"] == "right"]
        tracks = tracks_from_truth(shot, fps, noise_mm=0.5, seed=1, exposure_s=0.004)
        (w,) = segment_shots(tracks)
        rec = infer_shot(tracks, w, shooter="A")
        got = [e["t"] for e in rec["events"] if e["type"] == "cushion" and e["cushion"] == "right"]
        assert len(got) == 1 and abs(got[0] - creep) < 3.0 / fps, (fps, got, creep)


def test_a_slow_turn_is_a_cushion_touch_only_at_the_cushion():
    from types import SimpleNamespace

    from vision_ref.events.infer import _turns_at_cushion

    fps, bound = 60.0, 679.25  # clearance = bound - y (the cushion at +y)
    t = np.arange(0.0, 2.0, 1.0 / fps)
    rng = np.random.default_rng(5)

    def turn(clearance, breaks=(), span=(30, 110)):
        xy = np.stack([np.zeros_like(t), bound - clearance + rng.normal(0.0, 0.5, len(t))], axis=1)
        sh = SimpleNamespace(sig=0.5, dt=1.0 / fps, tm=t, r0=0, r1=len(t) - 1, valid={"cue": np.ones(len(t), bool)},
                             tracks=SimpleNamespace(balls={"cue": SimpleNamespace(xy=xy)}),
                             w=SimpleNamespace(struck="white1", strike_t=0.0),
                             other_breaks=lambda ball, own: list(breaks))
        c = SimpleNamespace(objs=("cue", "top"), span=span, rows=None, t=1.0)
        return _turns_at_cushion(sh, c, 1, 1.0, bound)

    # in at 25 mm/s, out at 12 mm/s for 0.15 s, then at rest 1.8 mm off the cushion
    creep = np.where(t < 1.0, 25.0 * (1.0 - t), 12.0 * np.clip(t - 1.0, 0.0, 0.15))
    got = turn(creep)
    assert got is not None and abs(got[0] - 1.0) < 2.0 / fps
    # rolling to rest 1 mm off it: no turn
    assert turn(np.maximum(1.0, 1.0 + 25.0 * (1.0 - t) * np.abs(1.0 - t))) is None
    # a curve that turns 8 mm off the cushion: not a touch
    assert turn(8.0 + 30.0 * np.abs(t - 1.0)) is None
    # the touch read 4 mm off the cushion (its nose hides the ball's rim; the review
    # corpus, random_2026_044@60 in a corner: 3.1 mm when the truth touched)
    got = turn(creep + 4.0)
    assert got is not None and abs(got[0] - 1.0) < 2.0 / fps
    # out at 6 mm/s: the candidate's few rows hold no measurable rise, the rows after do
    slow_out = np.where(t < 1.0, 25.0 * (1.0 - t), 6.0 * np.clip(t - 1.0, 0.0, 0.25))
    got = turn(slow_out, span=(54, 66))
    assert got is not None and abs(got[0] - 1.0) < 3.0 / fps
    # another contact of the ball within the rows turned it
    assert turn(creep, breaks=(0.95,)) is None


def test_a_ball_struck_square_into_a_near_cushion_bounces_off_it():
    """random_2026_005@60: the cue ball rests 8 mm off the head cushion and is struck
    square into it; it bounces 14 ms later, within the first frame, and comes back along
    the way it went in (so the rebound run backwards passes its rest place, as a ball
    played away would). The frame after the strike shows it nearer the cushion than it
    rested: a contact."""
    shot = corpus_shot(5)
    fps = 60.0
    truth = onset_truth(shot.truth_record(fps), shot, fps)
    assert [e["type"] for e in truth["events"]] == ["strike", "cushion"]
    tracks = tracks_from_truth(shot, fps, noise_mm=0.5, seed=1, exposure_s=0.004)
    (w,) = segment_shots(tracks)
    rec = infer_shot(tracks, w, shooter="A")
    assert [(e["type"], e.get("cushion")) for e in rec["events"]] == [("strike", None), ("cushion", "head")]


def test_a_pin_seen_lying_away_then_lost_and_read_standing_is_down(pin_shot):
    """A knocked pin seen lying well away from its place, then lost, and then read
    standing near its place to the end (the tracker's identity gone to a neighbour or to
    what the pin left behind, scenario Re@60): a lying pin does not get up, so it is
    counted down where it was last seen lying, and the referee is asked to look. A pin
    read standing again without being seen lying away stays standing."""
    from vision_ref.messages import PinState

    rec, truth, tracks, window = _infer(pin_shot, 60.0, seed=2)
    assert rec["after"]["pins"]["head"]["state"] == "down"
    tr = tracks.pins["head"]
    place = np.array(rec["before"]["pins"]["head"]["at"])
    rows = np.arange(window.strike_row, window.end_row + 1)
    lying = [r for r in rows if int(tr.state[r]) == int(PinState.DOWN)
             and np.hypot(*(tr.xy[r] - place)) > 0.5 * 73.5]
    assert lying, "the head pin is seen lying away from its place"
    r = lying[0] + 2
    last = tr.xy[r - 1].copy()
    tr.state[r:r + 12], tr.xy[r:r + 12] = int(PinState.ABSENT), np.nan
    tr.state[r + 12:], tr.xy[r + 12:] = int(PinState.STANDING), place + (6.0, 8.0)
    got = infer_shot(tracks, window, shooter="A")
    assert got["after"]["pins"]["head"] == {"at": [round(float(x), 2) for x in last], "state": "down"}
    assert any(p.startswith("pin head was seen lying away from its place, lost, and read standing again")
               for p in got["review"])
    # not lost between: read standing away from lying straight on (the tracker kept it)
    tr.state[r:r + 12], tr.xy[r:r + 12] = int(PinState.STANDING), place + (6.0, 8.0)
    kept = infer_shot(tracks, window, shooter="A")
    assert not any("read standing again" in p for p in kept["review"])


def test_a_ball_squeezed_between_a_ball_and_the_cushion_bounces_off_it():
    """random_2026_106@60: the cue ball kisses white2 into the left cushion, white2
    bounces and meets the cue ball again 48 ms later; the bounce lies between two rows
    and no fit can time it. White2's clearance falls and rises over three rows, and the
    only contact between them is the cue ball's second kiss, which comes from the far
    side and so could only have driven it in: a cushion contact, placed where the
    speeds in and out agree with a bounce."""
    shot = corpus_shot(106)
    fps = 60.0
    truth = onset_truth(shot.truth_record(fps), shot, fps)
    (bounce,) = [e["t"] for e in truth["events"] if e["type"] == "cushion" and e["ball"] == "white2"
                 and e["cushion"] == "left" and 2.2 < e["t"] < 2.35]
    tracks = tracks_from_truth(shot, fps, noise_mm=0.5, seed=1, exposure_s=0.004)
    (w,) = segment_shots(tracks)
    rec = infer_shot(tracks, w, shooter="A")
    near = [(e["type"], e.get("ball")) for e in rec["events"] if 2.2 < e["t"] < 2.35]
    assert near == [("ball_ball", None), ("cushion", "white2"), ("ball_ball", None)]
    (got,) = [e["t"] for e in rec["events"] if e["type"] == "cushion" and 2.2 < e["t"] < 2.35]
    assert abs(got - bounce) < 0.25 / fps


def test_a_graze_too_thin_to_bend_either_path_is_found_from_the_impulse_both_balls_share():
    """random_2026_043 of the review corpus, 120 fps: at 1.91 s the cue ball grazes white2.
    Their speeds change by 11 % and 6 %, inside each path's own noise, and the paths from
    before run the balls into each other by a fraction of a millimetre: neither the kink
    test nor the depth test sees it. The two changes are equal, opposite and along the
    line of centres: a contact. With white2 rolling on unchanged there is no such pair."""
    import vision_ref.events.infer as inf
    from vision_ref.rules.table import DEFAULT_TABLE

    shot = corpus_shot(43)
    fps = 120.0
    truth = onset_truth(shot.truth_record(fps), shot, fps)
    (kiss,) = [e for e in truth["events"] if e["type"] == "ball_ball" and e["t"] > 1.5]
    tracks = tracks_from_truth(shot, fps, noise_mm=0.5, seed=1, exposure_s=0.004)
    (w,) = segment_shots(tracks)
    rec = infer_shot(tracks, w, shooter="A")
    got = [e for e in rec["events"] if e["type"] == "ball_ball" and e["t"] > 1.5]
    assert len(got) == 1 and {got[0]["a"], got[0]["b"]} == {"cue", "white2"}
    assert abs(got[0]["t"] - kiss["t"]) < 0.5 / fps
    t = w.strike_t + kiss["t"]
    sh = inf._Shot(tracks, w, DEFAULT_TABLE, inf.InferenceSettings())
    assert inf._impulses_exchanged(sh, "cue", "white2", t, 0.0, (t,))
    # white2 rolling on along its path from before the graze: one ball turned, no exchange
    unturned = copy.deepcopy(tracks)
    w2 = unturned.balls["white2"]
    k = int(np.searchsorted(tracks.t, t))
    before = slice(k - 12, k)
    coef = np.polyfit(tracks.t[before], w2.xy[before], 2)
    after = slice(k, k + 30)
    w2.xy[after] = np.stack([np.polyval(coef[:, j], tracks.t[after]) for j in range(2)], axis=1)
    sh = inf._Shot(unturned, w, DEFAULT_TABLE, inf.InferenceSettings())
    assert not inf._impulses_exchanged(sh, "cue", "white2", t, 0.0, (t,))


def test_a_resting_ball_left_where_it_lay_was_not_touched():
    """random_2026_123 of the review corpus, 60 fps: the cue ball passes white1 at rest
    with a fraction of a millimetre to spare, and the fitted paths read a graze (a carom
    the shot never had). White1 never leaves its place, and any touch sets a resting ball
    rolling: no contact. Frozen against a third ball it could pass a push on and stay
    (a cradle): then it is not judged so."""
    import vision_ref.events.infer as inf
    from vision_ref.rules.table import DEFAULT_TABLE

    shot = corpus_shot(123)
    fps = 60.0
    tracks = tracks_from_truth(shot, fps, noise_mm=0.5, seed=1, exposure_s=0.004)
    (w,) = segment_shots(tracks)
    rec = infer_shot(tracks, w, shooter="A")
    assert not [e for e in rec["events"] if e["type"] == "ball_ball"]
    cue, w1 = tracks.balls["cue"].xy, tracks.balls["white1"].xy
    rows = np.arange(w.strike_row, w.end_row)
    r = int(rows[np.nanargmin(np.hypot(*(cue[rows] - w1[rows]).T))])
    assert np.hypot(*(cue[r] - w1[r])) < 2 * DEFAULT_TABLE.ball_radius + 3.0  # the near pass
    t = float(tracks.t[r])
    sh = inf._Shot(tracks, w, DEFAULT_TABLE, inf.InferenceSettings())
    assert inf._left_where_it_lay(sh, "white1", "cue", t)
    assert not inf._left_where_it_lay(sh, "cue", "white1", t)  # the moving ball
    frozen = copy.deepcopy(tracks)
    away = (w1[r] - cue[r]) / np.hypot(*(w1[r] - cue[r]))
    frozen.balls["white2"].xy[:] = w1[r] + 2 * DEFAULT_TABLE.ball_radius * away
    sh = inf._Shot(frozen, w, DEFAULT_TABLE, inf.InferenceSettings())
    assert not inf._left_where_it_lay(sh, "white1", "cue", t)
    # the same pass with white1's blob merged into the cue ball's for three frames: the
    # tracker reports white1 dragged out and back (_back_where_it_rested). The cue ball's
    # path reaches 2R of its place, but it was left where it lay all the same
    from dataclasses import replace as dc_replace

    from vision_ref.messages import BallState
    tr = tracks.balls["white1"]
    xy, st = tr.xy.copy(), tr.state.copy()
    pulled = np.arange(r - 1, r + 2)
    xy[pulled] = w1[pulled] + 0.4 * (cue[pulled] - w1[pulled])
    st[pulled] = int(BallState.MOVING)
    flick = dc_replace(tracks, balls={**tracks.balls, "white1": dc_replace(tr, xy=xy, state=st)})
    sh = inf._Shot(flick, w, DEFAULT_TABLE, inf.InferenceSettings())
    rested = inf._back_where_it_rested(sh, "white1", t)
    assert rested is not None and inf._left_where_it_lay(sh, "white1", "cue", t, rested)
    rec = infer_shot(flick, w, shooter="A")
    assert not [e for e in rec["events"] if e["type"] == "ball_ball"], rec["events"]


def test_a_soft_kiss_reported_late_by_the_tracker_is_timed_where_the_mover_passes():
    """random_2026_002 of the review corpus, 120 fps: the cue ball passing at 0.9 m/s
    sets white2 rolling at 60 mm/s; the tracker holds a resting ball at its place until it
    is a few mm off it, so white2 is reported moving 7 frames after the kiss, and its
    start timed back from there misses the cue ball's path by 6 mm (on the kept real
    tracks the cue ball, read 1 mm off white2's blob, never reaches 2R either: no kiss,
    a wrong call). The kiss is where the cue ball's path passes nearest white2's place,
    white2 leaving along the line of centres. Sent the other way (not how a push moves
    a ball) it is no kiss."""
    import vision_ref.events.infer as inf
    from vision_ref.messages import BallState
    from vision_ref.rules.table import DEFAULT_TABLE

    shot = corpus_shot(2)
    fps = 120.0
    truth = onset_truth(shot.truth_record(fps), shot, fps)
    (kiss,) = [e for e in truth["events"] if e["type"] == "ball_ball" and e["t"] > 4.0]
    assert "cue" in (kiss["a"], kiss["b"])
    rester = kiss["b"] if kiss["a"] == "cue" else kiss["a"]
    tracks = tracks_from_truth(shot, fps, noise_mm=0.5, seed=1, exposure_s=0.004)
    (w,) = segment_shots(tracks)
    w2 = tracks.balls[rester]
    k = int(np.searchsorted(tracks.t, w.strike_t + kiss["t"]))
    rest = w2.xy[k - 5:k].mean(axis=0)
    held = k
    while np.hypot(*(w2.xy[held] - rest)) < 6.0:
        held += 1
    assert held - k >= 5
    w2.xy[k:held] = rest  # held at its place, as the tracker does
    w2.state[k:held] = int(BallState.AT_REST)
    sh = inf._Shot(tracks, w, DEFAULT_TABLE, inf.InferenceSettings())
    res = inf._kiss_before_reported_start(sh, "cue", rester, held, rest)
    assert res is not None and abs(res[0] - w.strike_t - kiss["t"]) < 1.0 / fps
    pulled = copy.deepcopy(tracks)  # white2 leaving towards the cue ball's side instead
    p = pulled.balls[rester]
    p.xy[held:] = rest - (p.xy[held:] - rest)
    sh = inf._Shot(pulled, w, DEFAULT_TABLE, inf.InferenceSettings())
    assert inf._kiss_before_reported_start(sh, "cue", rester, held, rest) is None


def test_a_resting_ball_sent_off_its_place_as_a_just_struck_ball_passes_was_kissed():
    """random_2026_110 of the review corpus, 60 fps: the cue ball, struck at 6.5 m/s,
    kisses white1 resting beside its path between the strike's frame and the next one:
    no fit on either side can time it (a row or two), yet white1 flies off 1 m. The only
    moving ball whose path between two frames reaches 2R of its place kissed it, timed by
    white1's start. A ball that only shifted (not sent off its place) is no kiss."""
    import vision_ref.events.infer as inf
    from vision_ref.messages import BallState
    from vision_ref.rules.table import DEFAULT_TABLE

    shot = corpus_shot(110)
    fps = 60.0
    truth = onset_truth(shot.truth_record(fps), shot, fps)
    kiss = truth["events"][1]
    assert kiss["type"] == "ball_ball" and kiss["t"] < 1.5 / fps
    rester = kiss["b"] if kiss["a"] == "cue" else kiss["a"]
    tracks = tracks_from_truth(shot, fps, noise_mm=0.5, seed=1, exposure_s=0.004)
    (w,) = segment_shots(tracks)
    rec = infer_shot(tracks, w, shooter="A")
    got = [e for e in rec["events"] if e["type"] == "ball_ball" and {e["a"], e["b"]} == {"cue", rester}]
    assert got and abs(got[0]["t"] - kiss["t"]) < 0.5 / fps
    assert compare(rec, truth).order_ok  # the cue ball's next contacts are fitted from the kiss on
    sh = inf._Shot(tracks, w, DEFAULT_TABLE, inf.InferenceSettings())
    rows = range(w.strike_row, w.strike_row + 6)
    assert inf._struck_off_its_place(sh, "cue", rester, rows) is not None
    shifted = copy.deepcopy(tracks)
    b = shifted.balls[rester]
    k = next(q for q in rows if b.state[q] == int(BallState.MOVING))
    b.xy[k:] = b.xy[k - 1] + 0.1 * (b.xy[k:] - b.xy[k - 1]) / np.maximum(np.hypot(*(b.xy[k:] - b.xy[k - 1]).T), 1.0)[:, None] * 50.0
    sh = inf._Shot(shifted, w, DEFAULT_TABLE, inf.InferenceSettings())
    assert inf._struck_off_its_place(sh, "cue", rester, rows) is None


def test_a_resting_ball_nudged_without_being_reported_moving_was_kissed():
    """random_2026_109 of the review corpus: white1 grazes white2 at rest and sends it 3.9 mm;
    the tracker never reported white2 moving, it moved its rest place instead. The place
    moved away from white1's passing path, and only a touch does that: a kiss, timed where
    the path passes. The same shift towards the path (a merged blob's pull) is none."""
    from vision_ref.messages import BallState

    shot = corpus_shot(109)
    fps = 120.0
    truth = shot.truth_record(fps)
    t_kiss = next(e["t"] for e in truth["events"] if e["type"] == "ball_ball" and {e["a"], e["b"]} == {"white1", "white2"})
    tracks = tracks_from_truth(shot, fps, noise_mm=0.3, seed=2, exposure_s=0.5 / fps)
    (w,) = segment_shots(tracks)
    t0 = float(tracks.t[w.strike_row]) - truth["events"][0]["t"]  # shot time -> track time
    w1, w2 = tracks.balls["white1"], tracks.balls["white2"]
    k = int(np.searchsorted(tracks.t, t0 + t_kiss))
    place = w2.xy[k - 2].copy()
    moved = w2.xy[min(k + 60, len(tracks.t) - 1)] - place
    assert 2.0 < np.hypot(*moved) < 8.0  # a few mm: the graze

    def nudged(shift):
        t = copy.deepcopy(tracks)
        b = t.balls["white2"]
        rng = np.random.default_rng(5)
        b.state[:] = int(BallState.AT_REST)  # never reported moving ...
        b.xy[:k + 12] = place + rng.normal(0.0, 0.3, (k + 12, 2))  # ... its place moved 0.1 s on
        b.xy[k + 12:] = place + shift + rng.normal(0.0, 0.3, (len(t.t) - k - 12, 2))
        return [e for e in infer_shot(t, w, shooter="A")["events"] if e["type"] == "ball_ball" and {e["a"], e["b"]} == {"white1", "white2"}]

    (kiss,) = nudged(moved)
    # timed where the path passes nearest: a graze begins a little before (here 1.9 frames)
    assert abs(kiss["t"] - t_kiss) < 2.5 / fps
    towards = w1.xy[k] - place
    assert not nudged(np.hypot(*moved) * towards / np.hypot(*towards))


def test_a_pin_knocked_unseen_by_a_neighbour_that_has_just_landed_names_that_neighbour():
    """Scenario legal_L5_pin_chain: the king falls onto the head. The tracker read the king
    lying two frames before it saw the head move (their blobs merged), and the head's late
    start fits no contact, so its knocker is the nearest of white2's chain. The king lying
    against it counts, having landed just before; the left pin, still falling further off,
    does not win by being the only one 'in motion'."""
    from vision_ref.messages import PinState

    shot = get_scenario("legal_L5_pin_chain").simulate(0)
    fps = 120.0
    truth = shot.truth_record(fps)
    t_head = next(e["t"] for e in truth["events"] if e["type"] == "pin_hit" and e["pin"] == "head")
    assert next(e["by"] for e in truth["events"] if e["type"] == "pin_hit" and e["pin"] == "head") == "king"
    tracks = tracks_from_truth(shot, fps, noise_mm=0.3, seed=3, exposure_s=0.5 / fps)
    (w,) = segment_shots(tracks)
    t0 = float(tracks.t[w.strike_row]) - truth["events"][0]["t"]
    k = int(np.searchsorted(tracks.t, t0 + t_head))
    late = k + 5  # the head first read moving 5 frames (42 ms) after the king's touch
    head, king = tracks.pins["head"], tracks.pins["king"]
    head.state[k - 1:late] = int(PinState.STANDING)
    head.xy[k - 1:late] = head.xy[k - 2]
    lies = king.xy[late - 3].copy()
    king.state[late - 3:] = int(PinState.DOWN)  # read lying, still, from two frames before that
    king.xy[late - 3:] = lies
    rec = infer_shot(tracks, w, shooter="A")
    (hit,) = [e for e in rec["events"] if e["type"] == "pin_hit" and e["pin"] == "head"]
    assert hit.get("by_unseen") and hit["root"] == "white2"
    assert hit["by"] == "king"


def test_a_pin_read_at_rest_briefly_knocks_on_in_its_chain_from_the_frame_it_moves_again():
    """random_2026_164@120 of the review corpus: a falling king read at rest for 25 ms
    moves again in the frame the pin it falls onto starts to move. Its moving again is
    its own knock going on (the brief rest is a misreading), so the pin it knocks is of
    its chain; the call had been a doubt between the balls, a wrong F8."""
    from vision_ref.messages import PinState

    shot = get_scenario("legal_L5_pin_chain").simulate(0)
    fps = 120.0
    tracks = tracks_from_truth(shot, fps, noise_mm=0.3, seed=3, exposure_s=0.5 / fps)
    (w,) = segment_shots(tracks)
    head, king = tracks.pins["head"], tracks.pins["king"]
    h = w.strike_row + int(np.argmax(head.state[w.strike_row:] == int(PinState.MOVING)))  # head seen moving
    assert king.state[h - 4] == int(PinState.MOVING)
    king.state[h - 3:h] = int(PinState.DOWN)  # read at rest for 3 frames before it moves on
    king.xy[h - 3:h] = king.xy[h - 4]
    rec = infer_shot(tracks, w, shooter="A")
    assert any("still moving from its knock" in x for x in rec["warnings"])
    (hit,) = [e for e in rec["events"] if e["type"] in ("pin_hit", "doubt") and e["pin"] == "head"]
    assert hit["type"] == "pin_hit" and hit["by"] == "king" and hit["root"] == "white2"


def test_a_lying_pin_read_shifting_beside_a_creeping_ball_is_no_new_knock(monkeypatch):
    """random_2026_113@60 of the review corpus: the cue ball creeps (< 50 mm/s) past the
    lying head pin, and as its mask cuts the pin's blob the pin's reading jumps 4.6 mm in
    a frame and settles 7 mm off. A ball that slow cannot push a pin that fast, and its
    path fits the start poorly: no second knock of the head. Were the ball not creeping
    (the speed bound at 0), the same shift would be a second, weak knock."""
    from vision_ref.messages import PinState

    shot = corpus_shot(113)
    fps = 60.0
    tracks = tracks_from_truth(shot, fps, noise_mm=0.3, seed=4, exposure_s=0.5 / fps)
    (w,) = segment_shots(tracks)
    head, cue = tracks.pins["head"], tracks.balls["cue"]
    rows = np.arange(w.strike_row, w.end_row)
    speed = np.hypot(*cue.vel[rows].T)
    dist = np.hypot(*(cue.xy[rows] - head.xy[rows]).T)
    lying = head.state[rows] == int(PinState.DOWN)
    # a row where the cue ball creeps within 60 mm of the lying head, with 0.3 s of lying before
    cands = [r for r, s, d, ly in zip(rows, speed, dist, lying)
             if ly and 5.0 < s < 40.0 and d < 60.0 and np.all(head.state[r - 18:r] == int(PinState.DOWN))]
    assert cands
    k = int(cands[0])
    away = (head.xy[k] - cue.xy[k]) / np.hypot(*(head.xy[k] - cue.xy[k]))

    def head_hits(t):
        rec = infer_shot(t, w, shooter="A")
        return [e for e in rec["events"] if e["type"] in ("pin_hit", "doubt") and e["pin"] == "head"]

    def shifted():
        t = copy.deepcopy(tracks)
        p = t.pins["head"]
        for i, step in enumerate((4.6, 6.4, 6.6)):
            p.xy[k + i] = tracks.pins["head"].xy[k - 1] + step * away
        p.state[k:k + 2] = int(PinState.MOVING)
        p.xy[k + 3:] = p.xy[k + 2]
        return head_hits(t)

    n0 = len(head_hits(tracks))
    assert len(shifted()) == n0
    from vision_ref.events import infer

    monkeypatch.setattr(infer, "CREEP_MM_S", 0.0)
    hits = shifted()
    assert len(hits) == n0 + 1 and hits[-1].get("weak")


def test_a_hidden_pin_read_again_on_another_pins_blob_did_not_reach_there():
    """random_2026_108 of the review corpus: the head, toppled at its own spot, is lost
    in the pile; its label comes back on the falling king's blob, beside the foot, as
    the foot starts to move. That reading is the king's, not the head's: the head's fall
    from its spot cannot reach the foot, so it is no candidate for the foot's knock (it
    had been named, and the king lost the foot). Read there with no other pin beside it,
    the same reading is the head's own, and it is in reach."""
    from types import SimpleNamespace

    from vision_ref.events.infer import _unseen_pin_reach
    from vision_ref.messages import PinState
    from vision_ref.rules.table import DEFAULT_TABLE

    n, fps = 30, 60.0
    t = np.arange(n) / fps
    head_xy = np.full((n, 2), np.nan)
    head_xy[:10] = np.linspace((-73.5, 0.0), (-40.0, 0.0), 10)  # toppling from its spot, then lost
    head_state = np.full(n, int(PinState.ABSENT))
    head_state[:10] = int(PinState.MOVING)
    head_xy[15], head_state[15] = (20.0, -4.0), int(PinState.MOVING)  # read again beside the foot
    king_xy = np.linspace((0.0, 0.0), (30.0, -6.0), n)
    king_xy[14] = (21.0, -4.0)  # the falling king's blob, a frame before
    pins = {"head": SimpleNamespace(xy=head_xy, state=head_state),
            "king": SimpleNamespace(xy=king_xy, state=np.full(n, int(PinState.MOVING)))}
    sh = SimpleNamespace(tracks=SimpleNamespace(pins=pins), tm=t, r1=n - 1, table=DEFAULT_TABLE, sig=0.5, dt=1.0 / fps)
    foot = SimpleNamespace(pin="foot", onset_row=12, t_lo=t[11], t_hi=t[12], geom=("circle", np.array([73.5, 0.0])))
    reach = 2 * DEFAULT_TABLE.pin_top_radius("head")
    base0 = np.array([-73.5, 0.0])
    assert _unseen_pin_reach(sh, "head", base0, foot, reach) is None
    king_xy[14] = (21.0, 60.0)  # the king elsewhere: the reading is the head's own
    tc, sigma, direction = _unseen_pin_reach(sh, "head", base0, foot, reach)
    assert foot.t_lo <= tc <= foot.t_hi and direction[0] > 0.9


def test_a_ball_kissed_into_the_cushion_it_runs_along_bounces_off_it():
    """random_2026_140 of the review corpus: the cue ball runs along the left cushion,
    3 mm off it, kisses white2 and is back off the cushion 10 ms later. The clearance
    dips by 2 mm, within the noise, so only the velocities show the bounce: the two
    balls' changes no longer sum to zero, and what is left is the cushion's push. The
    bounce comes after the kiss, within the frame."""
    shot = corpus_shot(140)
    for fps in (60.0, 120.0):
        truth = onset_truth(shot.truth_record(fps), shot, fps)
        tracks = tracks_from_truth(shot, fps, noise_mm=0.5, seed=1, exposure_s=0.004)
        (w,) = segment_shots(tracks)
        rec = infer_shot(tracks, w, shooter="A")
        c = compare(rec, truth)
        assert c.order_ok, (fps, c.missing, c.extra)
        (kiss,) = [e["t"] for e in rec["events"] if e["type"] == "ball_ball" and 0.8 < e["t"] < 0.9]
        bounce = [e["t"] for e in rec["events"] if e["type"] == "cushion" and e["ball"] == "cue" and 0.8 < e["t"] < 0.9]
        assert len(bounce) == 1 and kiss < bounce[0] <= kiss + 1.0 / fps, (fps, kiss, bounce)


def test_a_pin_touched_just_before_its_last_frame_at_rest_names_its_first_toucher():
    """A standing pin touched shows no motion at once: its top has to move by some part of
    a pixel first, so the last frame read at rest can follow the touch by a few ms
    (ONSET_LAG_S). random_2026_088: the king falls onto the foot just before the frame
    read at rest, the cue ball arrives inside the onset interval after it;
    random_2026_059@60 with the king read at rest one frame late: each pin was the first
    to touch, not the ball."""
    from vision_ref.messages import PinState

    def knocker(shot, fps, pin, hold=0):
        tracks = tracks_from_truth(shot, fps, noise_mm=0.5, seed=1, exposure_s=0.004)
        (w,) = segment_shots(tracks)
        tr = tracks.pins[pin]
        on = w.strike_row + int(np.argmax(tr.state[w.strike_row:] == int(PinState.MOVING)))
        tr.state[on:on + hold], tr.xy[on:on + hold] = tr.state[on - 1], tr.xy[on - 1]
        rec = infer_shot(tracks, w, shooter="A")
        return next(e["by"] for e in rec["events"] if e["type"] == "pin_hit" and e["pin"] == pin)

    for fps in (60.0, 120.0):
        assert knocker(corpus_shot(88), fps, "foot") == "king"
    assert knocker(corpus_shot(59), 60.0, "king", hold=1) == "foot"


def test_a_lying_pin_barely_shifted_is_no_new_hit_but_one_pushed_along_is():
    """Scenario respot_Re_short_spots_taken: white1 touches the lying right pin at 1.64 s
    so slightly that neither end moves by 2 mm (a hit no camera shows, onset_truth hides
    it); a tracker reading it moving then must not report a second knock. Lying pins
    truly pushed along again (score_8's left, score_6's head) still are."""
    from vision_ref.events.infer import LYING_SHIFT_MM

    def record(name, fps):
        shot = get_scenario(name).simulate(0)
        tracks = tracks_from_truth(shot, fps, noise_mm=0.5, seed=1, exposure_s=0.004)
        (w,) = segment_shots(tracks)
        return infer_shot(tracks, w, shooter="A")

    for fps in (60.0, 120.0):
        rec = record("respot_Re_short_spots_taken", fps)
        right = [e["t"] for e in rec["events"] if e.get("pin") == "right"]
        assert len(right) == 1 and right[0] < 1.0, right
        assert any(f"never {LYING_SHIFT_MM:g} mm off where it lay" in w for w in rec["warnings"])
        for name, pin in (("score_8_four_pins", "left"), ("score_6_three_pins", "head")):
            hits = [e for e in record(name, fps)["events"] if e["type"] == "pin_hit" and e["pin"] == pin]
            assert len(hits) >= 2, (name, fps)


def test_a_pin_touched_again_by_another_chains_ball_is_a_point_to_check():
    """Scenario F4_exception_carom_first as benchmarks/events.py draws it: white1's chain
    fells the head; 100 ms later white2 touches it again. The head's re-motion is judged
    its knock going on (white2 fits it at 0.985, under REKNOCK_FIT_P), so the foot it then
    knocks is white1's, where the truth says white2's. The call cannot tell, so the
    referee is asked: the foot's knock carries ``retouched_by`` and the record a review point."""
    shot = get_scenario("F4_exception_carom_first").simulate(0)
    for fps, phase, seed in ((60.0, 0.7972808, 140565303), (120.0, 0.7145901, 624731305)):
        rephase(shot, fps, phase)
        tracks = tracks_from_truth(shot, fps, noise_mm=0.7, seed=seed, exposure_s=0.5 / fps)
        (w,) = segment_shots(tracks)
        rec = infer_shot(tracks, w, shooter="A", settings=InferenceSettings(confidence=0.5))
        (foot,) = [e for e in rec["events"] if e["type"] == "pin_hit" and e["pin"] == "foot" and e["t"] > 0.4]
        assert foot["by"] == "head" and foot["retouched_by"]["ball"] == "white2", foot
        assert any("if white2 touched it, pin foot's fall is white2's" in x for x in rec["review"]), rec["review"]
        validate_shot(rec)
