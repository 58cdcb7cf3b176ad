"""The tracker on rendered footage (728x544, rendered once per test session) and on bad input.

Accuracy figures of this scenario are kept in ``metrics.json``; the test fails when
any gets worse, so accuracy can only ratchet up. After an improvement, rewrite the
file with ``VISION_REF_UPDATE_METRICS=1 python -m pytest tests/track/test_tracker.py``.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision_ref.calibrate.truth import profile_from_camera
from vision_ref.camera import CameraModel
from vision_ref.errors import CalibrationError, SourceError
from vision_ref.messages import BallState, Frame, PinState
from vision_ref.rules.table import BALL_IDS, DEFAULT_TABLE, PIN_IDS
from vision_ref.sim.physics import Layout, Strike, simulate
from vision_ref.sim.render import Renderer, RenderSettings
from vision_ref.track.tracker import Tracker, track_frames

METRICS = Path(__file__).with_name("metrics.json")
W, H = 728, 544
N_FRAMES = 100


@pytest.fixture(scope="module")
def footage():
    """A slow shot into the pins, rendered once: frames, per-frame truth, profile."""
    camera = CameraModel.overhead(W, H)
    layout = Layout.standard()
    cx, cy = layout.balls["cue"]
    shot = simulate(layout, Strike(speed=2500.0, angle=math.atan2(-cy, -cx)), tail=0.2)
    settings = RenderSettings(draw_cue=False, player="none", seed=3)
    renderer = Renderer(camera, settings=settings)
    profile = profile_from_camera(camera, settings=settings, renderer=renderer)
    frames = [renderer.render_frame(shot, i) for i in range(N_FRAMES)]
    truth = renderer.frame_truth(shot)["frames"][:N_FRAMES]
    return {"camera": camera, "profile": profile, "frames": frames, "truth": truth,
            "exposure": settings.exposure_s, "renderer": renderer}


def frame(i, bgr, fps=60.0):
    return Frame(i, int(round(i * 1e9 / fps)), bgr=bgr)


def to_yuv_frame(i, bgr):
    """The Pi's YUV420 layout (Y + interleaved half-resolution UV) from a BGR frame."""
    i420 = cv2.cvtColor(bgr, cv2.COLOR_BGR2YUV_I420)
    h, w = bgr.shape[:2]
    y = i420[:h]
    u = i420[h:h + h // 4].reshape(h // 2, w // 2)
    v = i420[h + h // 4:].reshape(h // 2, w // 2)
    return Frame(i, int(round(i * 1e9 / 60.0)), y=y, uv=np.dstack([u, v]))


def run(footage, make=frame):
    tr = Tracker(footage["profile"], 60.0, footage["exposure"])
    obs = [tr.update(make(i, f)) for i, f in enumerate(footage["frames"])]
    return tr, obs


def errors(obs, truth):
    xy = np.array([o.ball_xy for o in obs])
    t = np.array([[f["balls"][b]["xyz"][:2] for b in BALL_IDS] for f in truth])
    moving = np.zeros(t.shape[:2], bool)
    step = np.linalg.norm(np.diff(t, axis=0), axis=2) > 0.05
    moving[1:] |= step
    moving[:-1] |= step
    return np.linalg.norm(xy - t, axis=2), moving


@pytest.fixture(scope="module")
def bgr_run(footage):
    return run(footage)


@pytest.fixture(scope="module")
def yuv_run(footage):
    return run(footage, to_yuv_frame)


def position_errors(err, moving, prefix=""):
    return {
        f"{prefix}rest_error_mm": float(np.nanmedian(err[~moving])),
        f"{prefix}moving_error_mm": float(np.nanmedian(err[moving])),
        f"{prefix}moving_p90_mm": float(np.nanpercentile(err[moving], 90)),
    }


def measured(footage, bgr_run, yuv_run):
    """The BGR frames' figures, and the same frames as YUV420 (the Pi's and a decoded video's
    layout, whose half-resolution chroma the ball refinement has to live with)."""
    tr, obs = bgr_run
    err, moving = errors(obs, footage["truth"])
    pin_truth = np.array([[f["pins"][p]["state"] for p in PIN_IDS] for f in footage["truth"]])
    pin_obs = np.array([o.pin_state for o in obs])
    return {
        **position_errors(err, moving),
        **position_errors(*errors(yuv_run[1], footage["truth"]), "yuv_"),
        "found_fraction": float(np.mean(~np.isnan(err))),
        "pin_state_accuracy": float(np.mean(pin_obs == pin_truth)),
    }


def test_accuracy_only_ratchets_up(footage, bgr_run, yuv_run):
    got = measured(footage, bgr_run, yuv_run)
    if os.environ.get("VISION_REF_UPDATE_METRICS"):
        METRICS.write_text(json.dumps({k: round(v, 4) for k, v in got.items()}, indent=1) + "\n")
    want = json.loads(METRICS.read_text())
    for key in ("rest_error_mm", "moving_error_mm", "moving_p90_mm",
                "yuv_rest_error_mm", "yuv_moving_error_mm", "yuv_moving_p90_mm"):
        assert got[key] <= want[key] * 1.05 + 0.01, f"{key} got worse: {got[key]:.4f} > {want[key]:.4f}"
    for key in ("found_fraction", "pin_state_accuracy"):
        assert got[key] >= want[key] - 0.005, f"{key} got worse: {got[key]:.4f} < {want[key]:.4f}"
    # and the targets of the issue, scaled to this resolution (4.5 mm per pixel here)
    assert got["rest_error_mm"] < 1.0 and got["moving_error_mm"] < 3.0 and got["found_fraction"] == 1.0


def test_identities_and_motion_states(footage, bgr_run):
    tr, obs = bgr_run
    truth = footage["truth"]
    err, moving = errors(obs, truth)
    t = np.array([[f["balls"][b]["xyz"][:2] for b in BALL_IDS] for f in truth])
    xy = np.array([o.ball_xy for o in obs])
    # every ball is nearer its own truth than any other ball's: no identity swap
    for i in range(3):
        for j in range(3):
            if i != j:
                assert np.all(np.linalg.norm(xy[:, i] - t[:, j], axis=1) > err[:, i])
    states = np.array([o.ball_state for o in obs])
    cue = BALL_IDS.index("cue")
    assert np.all(states[3:30, :] == BallState.AT_REST)  # before the strike (frame 36)
    assert np.mean(states[moving[:, cue] & (np.arange(N_FRAMES) > 40), cue] == BallState.MOVING) > 0.95
    assert any(o.extra["table_moving"] for o in obs[40:])
    assert not obs[20].extra["table_moving"]


def test_yuv420_frames_track_like_bgr(footage, bgr_run, yuv_run):
    _, obs_bgr = bgr_run
    _, obs_yuv = yuv_run
    a = np.array([o.ball_xy for o in obs_bgr])
    b = np.array([o.ball_xy for o in obs_yuv])
    assert np.nanmedian(np.linalg.norm(a - b, axis=2)) < 0.6
    err, moving = errors(obs_yuv, footage["truth"])
    assert np.nanmedian(err[~moving]) < 1.0 and np.mean(~np.isnan(err)) == 1.0


def test_pins_standing_then_knocked(footage, bgr_run):
    _, obs = bgr_run
    truth = footage["truth"]
    for k, p in enumerate(PIN_IDS):
        assert obs[10].pin_state[k] == PinState.STANDING
        spot = np.array(truth[10]["pins"][p]["xy"])
        assert np.linalg.norm(obs[10].pin_xy[k] - spot) < 4.0  # a standing pin's base, mm
    last = obs[-1]
    down = [k for k, p in enumerate(PIN_IDS) if truth[-1]["pins"][p]["state"] == PinState.DOWN]
    assert down, "the scenario must knock pins down"
    for k in down:
        assert last.pin_state[k] in (PinState.DOWN, PinState.MOVING), (PIN_IDS[k], last.pin_state[k])


def test_ball_lifted_and_placed_by_hand(footage):
    """Paint a resting ball out (lifted), then paint it back elsewhere (placed)."""
    prof = footage["profile"]
    bg = cv2.resize(prof.background, (W, H), interpolation=cv2.INTER_LINEAR)
    still = footage["frames"][5]
    cam = footage["camera"]
    r_px = 9.0
    w2 = footage["truth"][5]["balls"]["white2"]["px"]
    mask = np.zeros((H, W), np.uint8)
    cv2.circle(mask, (int(round(w2[0])), int(round(w2[1]))), int(2.2 * r_px), 255, -1)
    lifted = still.copy()
    lifted[mask > 0] = bg[mask > 0]
    placed = lifted.copy()
    target = cam.project(np.array([[400.0, 300.0, 30.75]]))[0]
    dx, dy = int(round(target[0] - w2[0])), int(round(target[1] - w2[1]))
    shifted = np.roll(np.roll(still, dy, axis=0), dx, axis=1)
    m2 = np.roll(np.roll(mask, dy, axis=0), dx, axis=1)
    placed[m2 > 0] = shifted[m2 > 0]
    tr = Tracker(prof, 60.0, footage["exposure"])
    seq = [still] * 6 + [lifted] * 8 + [placed] * 12
    obs = [tr.update(frame(i, f)) for i, f in enumerate(seq)]
    k = BALL_IDS.index("white2")
    assert obs[5].ball_state[k] == BallState.AT_REST
    assert obs[13].ball_state[k] == BallState.IN_HAND and np.isnan(obs[13].ball_xy[k, 0])
    placed_at = [i for i, o in enumerate(obs) if "white2" in o.extra.get("placed", [])]
    assert placed_at and placed_at[0] >= 14
    assert obs[-1].ball_state[k] == BallState.AT_REST
    assert np.linalg.norm(obs[-1].ball_xy[k] - (400.0, 300.0)) < 3.0
    # the other balls never moved
    for other in ("cue", "white1"):
        j = BALL_IDS.index(other)
        assert all(o.ball_state[j] == BallState.AT_REST for o in obs[3:])


def test_track_frames_lists_missing_frames_as_dropped(footage):
    frames = [frame(i, f) for i, f in enumerate(footage["frames"][:12]) if i != 7]
    tracks = track_frames(frames, footage["profile"], 60.0, footage["exposure"])
    assert list(tracks.dropped) == [7]
    assert len(tracks.t) == 11 and 7 not in tracks.frame_index
    assert set(tracks.balls) == set(BALL_IDS) and set(tracks.pins) == set(PIN_IDS)
    assert np.all(tracks.balls["cue"].state[3:] == BallState.AT_REST)
    assert tracks.pins["king"].angle is not None


def test_tracking_without_the_per_frame_message_gives_the_same_tracks(footage, bgr_run):
    """Review and the live loop read only the tracks: update(observe=False) skips the
    Observations message and must leave every track row as it was."""
    tr = Tracker(footage["profile"], 60.0, footage["exposure"])
    assert all(tr.update(frame(i, f), observe=False) is None for i, f in enumerate(footage["frames"]))
    want, got = bgr_run[0].tracks(), tr.tracks()
    for name in BALL_IDS:
        for field in ("xy", "vel", "state", "conf"):
            np.testing.assert_array_equal(getattr(got.balls[name], field), getattr(want.balls[name], field))
    for name in PIN_IDS:
        for field in ("xy", "state", "conf", "angle"):
            np.testing.assert_array_equal(getattr(got.pins[name], field), getattr(want.pins[name], field))
    np.testing.assert_array_equal(got.moving, want.moving)


@pytest.mark.parametrize(
    "make, error, words",
    [
        (lambda fr: Frame(0, 0, bgr=np.zeros((100, 120, 3), np.uint8)), CalibrationError, ["728x544", "120x100"]),
        (lambda fr: Frame(0, 0, y=fr[:, :, 0].copy()), SourceError, ["UV"]),
        (lambda fr: "not a frame", SourceError, ["Frame"]),
        (lambda fr: Frame(0, 0, bgr=fr.astype(np.float32)), SourceError, ["uint8"]),
    ],
)
def test_bad_frames_are_refused_clearly(footage, make, error, words):
    tr = Tracker(footage["profile"], 60.0)
    with pytest.raises(error) as exc:
        tr.update(make(footage["frames"][0]))
    for w in words:
        assert w in str(exc.value)


def test_out_of_order_frames_and_bad_profiles(footage):
    tr = Tracker(footage["profile"], 60.0)
    tr.update(frame(5, footage["frames"][0]))
    with pytest.raises(SourceError, match="out of order: frame 4 after frame 5"):
        tr.update(frame(4, footage["frames"][1]))
    with pytest.raises(SourceError, match="timestamp"):
        tr.update(Frame(6, 0, bgr=footage["frames"][1]))
    with pytest.raises(CalibrationError, match="calibration profile"):
        Tracker(None, 60.0)
    with pytest.raises(CalibrationError, match="no background"):
        Tracker(replace(footage["profile"], background=None), 60.0)
    with pytest.raises(SourceError, match="exposure"):
        Tracker(footage["profile"], 60.0, exposure_s=0.5)


def test_ball_leaving_the_table_is_off_table():
    """The physics' script sends the cue ball over the left cushion at its first contact."""
    from vision_ref.sim.physics import Script

    camera = CameraModel.overhead(W, H)
    layout = Layout.standard()
    shot = simulate(layout, Strike(speed=3000.0, angle=math.pi / 2), script=Script(off_table={"cue": 1}), tail=0.2)
    settings = RenderSettings(draw_cue=False, player="none", seed=4)
    renderer = Renderer(camera, settings=settings)
    profile = profile_from_camera(camera, settings=settings, renderer=renderer)
    tr = Tracker(profile, 60.0, settings.exposure_s)
    n = min(renderer.n_frames(shot), 80)
    obs = [tr.update(frame(i, renderer.render_frame(shot, i))) for i in range(n)]
    k = BALL_IDS.index("cue")
    states = [int(o.ball_state[k]) for o in obs]
    assert states[10] == BallState.AT_REST
    assert BallState.MOVING in states[36:50]
    assert states[-1] == BallState.OFF_TABLE, states
    assert all(o.ball_state[BALL_IDS.index("white1")] == BallState.AT_REST for o in obs[3:])


def test_other_table_light_and_lens():
    """Green cloth, a yellow cue ball, one off-centre lamp plus a window, a tilted camera with barrel distortion."""
    camera = CameraModel.overhead(W, H, tilt_deg=4.0, dist=(-0.08, 0.01, 0.0, 0.0, 0.0))
    layout = Layout.standard()
    cx, cy = layout.balls["cue"]
    shot = simulate(layout, Strike(speed=3500.0, angle=math.atan2(-cy, -cx) + 0.05), tail=0.2)
    settings = RenderSettings(draw_cue=False, player="none", seed=7, cloth_rgb="green", cue_ball_rgb="yellow",
                              lamps="window")
    renderer = Renderer(camera, settings=settings)
    profile = profile_from_camera(camera, settings=settings, renderer=renderer)
    tr = Tracker(profile, 60.0, settings.exposure_s)
    truth = renderer.frame_truth(shot)["frames"]
    n = 100
    obs = [tr.update(frame(i, renderer.render_frame(shot, i))) for i in range(n)]
    err, moving = errors(obs, truth[:n])
    assert np.mean(~np.isnan(err)) == 1.0
    assert np.nanmedian(err[~moving]) < 1.0 and np.nanmedian(err[moving]) < 3.0
    pin_truth = np.array([[f["pins"][p]["state"] for p in PIN_IDS] for f in truth[:n]])
    assert np.mean(np.array([o.pin_state for o in obs]) == pin_truth) > 0.93


def test_pins_thrown_onto_the_rail():
    """The physics' script throws the king onto the rail (lying) and the head pin (standing)."""
    from vision_ref.sim.physics import Script

    camera = CameraModel.overhead(W, H)
    layout = Layout.standard()
    cx, cy = layout.balls["cue"]
    shot = simulate(layout, Strike(speed=2500.0, angle=math.atan2(-cy, -cx)),
                    script=Script(pin_to_rail={"head": "rail_standing", "king": "rail_down"}), tail=0.3)
    settings = RenderSettings(draw_cue=False, player="none", seed=3)
    renderer = Renderer(camera, settings=settings)
    profile = profile_from_camera(camera, settings=settings, renderer=renderer)
    tr = Tracker(profile, 60.0, settings.exposure_s)
    n = min(renderer.n_frames(shot), 130)
    obs = [tr.update(frame(i, renderer.render_frame(shot, i))) for i in range(n)]
    truth = renderer.frame_truth(shot)["frames"][n - 1]["pins"]
    assert truth["king"]["state"] == PinState.RAIL_DOWN and truth["head"]["state"] == PinState.RAIL_STANDING
    last = obs[-1]
    assert last.pin_state[PIN_IDS.index("king")] == PinState.RAIL_DOWN
    assert last.pin_state[PIN_IDS.index("head")] == PinState.RAIL_STANDING
    head_xy = last.pin_xy[PIN_IDS.index("head")]
    assert np.linalg.norm(head_xy - np.array(truth["head"]["xy"])) < 10.0  # mm, a standing pin's base on the rail


def test_passes_through_refuses_balls_crossing_each_other():
    from vision_ref.track.tracker import _passes_through

    a0, b0 = np.array([0.0, 0.0]), np.array([30.0, 0.0])
    # head-on: A continues to where B was, B stops: fine; swapped labels: they crossed
    assert _passes_through(a0, b0, np.array([2.0, 0.0]), np.array([60.0, 0.0]), 20.0) == 0.0
    assert _passes_through(a0, b0, np.array([60.0, 0.0]), np.array([2.0, 0.0]), 20.0) == 1.0
    assert _passes_through(a0, b0, np.array([0.0, 5.0]), np.array([30.0, 5.0]), 20.0) == 0.0


def test_white_hits_white_head_on_without_a_swap():
    """Identical balls in a head-on hit exchange velocities: position alone would swap them."""
    camera = CameraModel.overhead(W, H)
    layout = Layout.standard(balls={"white1": (-400.0, 300.0), "white2": (-100.0, 300.0)})
    shot = simulate(layout, Strike(ball="white1", speed=2000.0, angle=0.0), tail=0.2)
    settings = RenderSettings(draw_cue=False, player="none", seed=5)
    renderer = Renderer(camera, settings=settings)
    profile = profile_from_camera(camera, settings=settings, renderer=renderer)
    tr = Tracker(profile, 60.0, settings.exposure_s)
    n = min(renderer.n_frames(shot), 80)
    obs = [tr.update(frame(i, renderer.render_frame(shot, i))) for i in range(n)]
    truth = renderer.frame_truth(shot)["frames"][:n]
    err, _ = errors(obs, truth)
    t = np.array([[f["balls"][b]["xyz"][:2] for b in BALL_IDS] for f in truth])
    xy = np.array([o.ball_xy for o in obs])
    w1, w2 = BALL_IDS.index("white1"), BALL_IDS.index("white2")
    assert np.linalg.norm(t[-1, w2] - t[0, w2]) > 100.0  # white2 was sent on
    assert np.all(np.linalg.norm(xy[:, w1] - t[:, w1], axis=1) < 10.0)
    assert np.all(np.linalg.norm(xy[:, w2] - t[:, w2], axis=1) < 10.0)


# ---- pins put back by hand between shots ----------------------------------------------------
SEQ_W, SEQ_H, SEQ_FPS = 546, 408, 30.0


@pytest.fixture(scope="module")
def respot_clip():
    """Two shots at 546x408, 30 fps: the first knocks the head pin ~750 mm from its spot, where it
    lies until it is picked up and stood back on its spot by hand before the second strike."""
    from vision_ref.sim.sequence import PLACE_FRACTION, ShotSequence

    layout = Layout.standard()
    cx, cy = layout.balls["cue"]
    seq = ShotSequence(layout, [Strike(speed=5000.0, angle=math.atan2(-cy, -cx)), Strike(speed=1500.0, angle=0.3)],
                       gap_s=0.5, lead_in=0.3, tail=0.2, seed=1, fps=SEQ_FPS)
    assert "head" in seq.played[0].respot  # the scenario this test is about
    camera = CameraModel.overhead(SEQ_W, SEQ_H)
    settings = RenderSettings(draw_cue=False, player="none", seed=3, fps=SEQ_FPS)
    renderer = Renderer(camera, settings=settings)
    profile = profile_from_camera(camera, settings=settings, renderer=renderer)
    win = seq.shot_windows
    gap0, gap1 = win[0]["end"], win[1]["start"]
    place = int(math.ceil((gap0 + PLACE_FRACTION * (gap1 - gap0)) * SEQ_FPS))
    strike = int(round(win[1]["strike"] * SEQ_FPS))
    frames = [Frame(i, int(round(i * 1e9 / SEQ_FPS)), bgr=renderer.render_frame(seq, i)) for i in range(strike + 2)]
    return {"profile": profile, "frames": frames, "place": place, "strike": strike,
            "exposure": settings.exposure_s}


def test_pin_respotted_by_hand_far_from_where_it_lay_is_found_again(respot_clip):
    c = respot_clip
    tr = Tracker(c["profile"], SEQ_FPS, c["exposure"])
    obs = [tr.update(f) for f in c["frames"]]
    head = PIN_IDS.index("head")
    lying = obs[c["place"] - 8]  # where the first shot left it, far from its spot
    assert lying.pin_state[head] == PinState.DOWN
    assert np.linalg.norm(lying.pin_xy[head] - np.array(DEFAULT_TABLE.pin_spot("head"))) > 300.0
    assert obs[c["place"] - 1].pin_state[head] == PinState.ABSENT  # picked up
    spot = np.array(DEFAULT_TABLE.pin_spot("head"))
    # standing on its spot within a few frames of being put down (2 of them MOVING: it just appeared)
    first = next(i for i in range(c["place"], len(obs)) if obs[i].pin_state[head] == PinState.STANDING)
    assert first - c["place"] <= 4
    at_strike = obs[c["strike"]]
    assert all(s == PinState.STANDING for s in at_strike.pin_state)
    assert np.linalg.norm(at_strike.pin_xy[head] - spot) < 8.0


def test_pin_standing_anywhere_on_the_cloth_is_found():
    """A pin not on or near its spot (put down elsewhere by hand) is found by the whole-cloth search."""
    from vision_ref.sim.physics import PinPlacement

    layout = Layout.standard()
    layout.pins["head"] = PinPlacement((-600.0, 250.0))
    shot = simulate(layout, Strike(speed=800.0, angle=0.0), tail=0.1)
    camera = CameraModel.overhead(SEQ_W, SEQ_H)
    settings = RenderSettings(draw_cue=False, player="none", seed=5)
    renderer = Renderer(camera, settings=settings)
    profile = profile_from_camera(camera, settings=settings, renderer=renderer)
    still = renderer.render_frame(shot, 0)
    tr = Tracker(profile, 60.0, settings.exposure_s)
    obs = [tr.update(frame(i, still)) for i in range(12)]
    head = PIN_IDS.index("head")
    assert obs[-1].pin_state[head] == PinState.STANDING
    assert np.linalg.norm(obs[-1].pin_xy[head] - np.array([-600.0, 250.0])) < 8.0
    assert all(o.pin_state[PIN_IDS.index(p)] == PinState.STANDING for o in obs[-3:] for p in PIN_IDS)


def test_identical_frames_of_a_heap_give_identical_readings():
    """A ball come to rest against lying pins, then the same frame again and again: every
    reading stays as it was. (Before the still-image hold the heap's blob readings changed
    with one another's masks and cycled through moving / absent / standing on identical
    frames, 54 changes in 110 frames here; each cycle read as a pin knock.)"""
    from vision_ref.sim.random_shots import random_shot

    rng = np.random.default_rng(2026)
    for _ in range(104):  # the 105th shot of this seed ends with the cue ball in a heap of pins
        random_shot(rng)
    shot = random_shot(rng)
    fps = 120.0
    camera = CameraModel.overhead(W, H)
    settings = RenderSettings(fps=fps, seed=7, player="none", draw_cue=False, min_samples=2, blur_step_px=1.5,
                              max_blur_samples=16)
    renderer = Renderer(camera, settings=settings)
    profile = profile_from_camera(camera, settings=settings, renderer=renderer)
    n_end = int(shot.duration * fps) - 2
    # through a lossy codec, as a video file gives them (identical frames stay identical)
    frames = [cv2.imdecode(cv2.imencode(".jpg", renderer.render_frame(shot, i), [cv2.IMWRITE_JPEG_QUALITY, 60])[1],
                           cv2.IMREAD_COLOR) for i in range(n_end - 200, n_end)]
    frames += [frames[-1]] * 100
    tr = Tracker(profile, fps, 0.5 / fps)
    obs = [tr.update(Frame(i, int(round(i * 1e9 / fps)), bgr=f)) for i, f in enumerate(frames)]
    still = obs[-90:]
    for a, b in zip(still, still[1:]):
        np.testing.assert_array_equal(a.ball_state, b.ball_state)
        np.testing.assert_array_equal(a.pin_state, b.pin_state)
        np.testing.assert_allclose(a.ball_xy, b.ball_xy, atol=0.5)  # (a resting ball's averaging is finer)
        np.testing.assert_allclose(a.pin_xy, b.pin_xy, atol=0.5)
    assert sum(o.pin_state[k] in (PinState.DOWN, PinState.LEANING) for o in still[-1:] for k in range(5)) >= 2
    assert tr.still_holds > 0


# 2 mm apart the two fits still pull each other by several mm (a known limit: the
# refinement of a ball against a touching neighbour depends on where it starts)
@pytest.mark.parametrize("gap_mm, cue_mm, white_mm", [(2.0, 8.0, 12.0), (10.0, 3.0, 8.0)])
def test_a_cue_ball_beside_a_white_is_found_from_the_first_frame(gap_mm, cue_mm, white_mm):
    """At the coarse search's stride a cue ball a few mm from a white is one blob with it
    (a shot of the random corpus lost the cue ball until it was struck away): what is
    left of the blob once the white is found, and the white's surroundings, are
    searched for the cue ball."""
    camera = CameraModel.overhead(W, H)
    white = (855.0, 252.5)
    d = 2 * DEFAULT_TABLE.ball_radius + gap_mm
    cue = (white[0] + d * math.cos(0.23), white[1] + d * math.sin(0.23))
    layout = Layout.standard(balls={"cue": cue, "white1": white})
    shot = simulate(layout, Strike(speed=1500.0, angle=0.23), tail=0.1)
    settings = RenderSettings(draw_cue=False, player="none", seed=5)
    renderer = Renderer(camera, settings=settings)
    profile = profile_from_camera(camera, settings=settings, renderer=renderer)
    tr = Tracker(profile, 60.0, settings.exposure_s)
    truth = renderer.frame_truth(shot)["frames"]
    obs = [tr.update(frame(i, renderer.render_frame(shot, i))) for i in range(3)]
    errs = {b: [] for b in BALL_IDS}
    for o, t in zip(obs, truth):
        true_xy = {b: np.array(t["balls"][b]["xyz"][:2]) for b in BALL_IDS}
        err = {b: float(np.hypot(*(o.ball_xy[k] - true_xy[b]))) for k, b in enumerate(BALL_IDS)}
        # the whites' names at first sight go by the spots, not by this layout's names:
        # the better of the two pairings, the same for both whites
        k1, k2 = BALL_IDS.index("white1"), BALL_IDS.index("white2")
        swapped = {"white1": float(np.hypot(*(o.ball_xy[k1] - true_xy["white2"]))),
                   "white2": float(np.hypot(*(o.ball_xy[k2] - true_xy["white1"])))}
        if swapped["white1"] + swapped["white2"] < err["white1"] + err["white2"]:
            err.update(swapped)
        for b in BALL_IDS:
            errs[b].append(err[b])
    assert np.max(errs["cue"]) < cue_mm, errs  # np.max: a nan (not found) fails too
    assert np.max(errs["white1"] + errs["white2"]) < white_mm, errs


def test_a_ball_creeping_to_a_stop_at_120_fps_is_not_taken_for_one_at_rest():
    """At 120 fps five readings span 33 ms: a cue ball creeping at 60-90 mm/s moved less than
    the rest spread in that time, was taken for one at rest and held at its anchor while
    its image changed too slowly to show, 10 mm behind (its last cushion touch was lost:
    random_2026_044 of the review corpus). A rest now takes REST_WINDOW_S of readings that
    do not drift one way."""
    camera = CameraModel.overhead(W, H)
    layout = Layout.standard()
    fps = 120.0
    shot = simulate(layout, Strike(speed=450.0, angle=0.3), tail=0.3)
    settings = RenderSettings(fps=fps, draw_cue=False, player="none", seed=5)
    renderer = Renderer(camera, settings=settings)
    profile = profile_from_camera(camera, settings=settings, renderer=renderer)
    tr = Tracker(profile, fps, settings.exposure_s)
    start = int(shot.strike_time * fps) - 5
    n = renderer.n_frames(shot)
    truth = renderer.frame_truth(shot)["frames"]
    k = BALL_IDS.index("cue")
    rows = []
    for i in range(n):
        o = tr.update(Frame(i, int(round(i * 1e9 / fps)), bgr=renderer.render_frame(shot, i)))
        if i >= start:
            rows.append((o.ball_state[k], o.ball_xy[k].copy(), np.array(truth[i]["balls"]["cue"]["xyz"][:2])))
    xy_t = np.array([r[2] for r in rows])
    speed = np.zeros(len(rows))
    speed[1:-1] = np.linalg.norm(xy_t[2:] - xy_t[:-2], axis=1) * fps / 2.0
    # (the first frames after the strike are a start, not a stop)
    slow = [i for i in range(15, len(rows) - 1) if 30.0 < speed[i] < 120.0]
    assert len(slow) > 20, "the shot must creep slowly for a while"
    # never at rest while it still rolls at 30+ mm/s, and never held far behind it
    assert all(rows[i][0] != BallState.AT_REST for i in slow), [i for i in slow if rows[i][0] == BallState.AT_REST]
    err = np.array([np.hypot(*(r[1] - r[2])) for r in rows])
    assert np.nanmax(err) < 3.0, np.nanmax(err)
    assert rows[-1][0] == BallState.AT_REST


def test_a_lying_pin_a_ball_comes_to_rest_against_does_not_rise_to_lean():
    """A ball put down against a lying pin's head end cuts the pin's blob short with its
    mask: 41 mm of a 70 mm pin. Tilted length beside a ball reads leaning, but a pin that
    has lain on the cloth does not rise to lean (random_2026_089@120 and four more corpus
    shots: lying pins read leaning once the ball that pushed them stopped)."""
    from vision_ref.sim.physics import PinPlacement

    at = (-300.0, 200.0)
    camera = CameraModel.overhead(W, H)
    settings = RenderSettings(draw_cue=False, player="none", seed=5)
    renderer = Renderer(camera, settings=settings)
    profile = profile_from_camera(camera, settings=settings, renderer=renderer)

    def still(balls):
        layout = Layout.standard(balls=balls)
        layout.pins["head"] = PinPlacement(at, "down", direction=0.0)
        return renderer.render_frame(simulate(layout, Strike(speed=500.0, angle=math.pi), tail=0.1), 0)

    alone, against = still(None), still({"white2": (at[0] + 46.0, at[1] + 12.0)})
    tr = Tracker(profile, 60.0, settings.exposure_s)
    head = PIN_IDS.index("head")
    obs = [tr.update(frame(i, alone if i < 20 else against)) for i in range(40)]
    assert obs[19].pin_state[head] == PinState.DOWN
    assert tr.pins[head].length_mm < 0.62 * tr.pin_h[head]  # cut short: the length alone would say leaning
    after = [o.pin_state[head] for o in obs[20:]]
    assert PinState.LEANING not in after, after
    assert after[-1] == PinState.DOWN
