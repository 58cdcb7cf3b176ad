"""Several shots in one footage (from perfect tracks): segmentation, the turn, the match file."""

import copy
import math
import warnings

import numpy as np
import pytest

from vision_ref.messages import Track, Tracks
from vision_ref.review.pipeline import adjudicate_tracks
from vision_ref.rules import Match
from vision_ref.rules.table import BALL_IDS, DEFAULT_TABLE, PIN_IDS

FPS = 60.0


def _concat(parts: list[Tracks], fps: float) -> Tracks:
    """One footage from shots filmed back to back (clock and frame numbers continue)."""
    ts, fis, balls, pins, moving = [], [], {b: [] for b in BALL_IDS}, {p: [] for p in PIN_IDS}, []
    t0, f0 = 0.0, 0
    for tr in parts:
        ts.append(tr.t + t0)
        fis.append(tr.frame_index + f0)
        moving.append(tr.moving)
        for group, out in ((tr.balls, balls), (tr.pins, pins)):
            for k, track in group.items():
                out[k].append(track)
        t0 = float(ts[-1][-1]) + 1.0 / fps
        f0 = int(fis[-1][-1]) + 1

    def join(oid, tracks):
        ang = [tr.angle for tr in tracks]
        return Track(oid, np.concatenate(ts), np.concatenate(fis), np.concatenate([tr.xy for tr in tracks]),
                     np.concatenate([tr.vel for tr in tracks]), np.concatenate([tr.state for tr in tracks]),
                     np.concatenate([tr.conf for tr in tracks]),
                     None if any(a is None for a in ang) else np.concatenate(ang))

    return Tracks(np.concatenate(ts), np.concatenate(fis), {b: join(b, v) for b, v in balls.items()},
                  {p: join(p, v) for p, v in pins.items()}, np.concatenate(moving), fps=fps,
                  exposure_s=parts[0].exposure_s, position_noise_mm=parts[0].position_noise_mm)


@pytest.fixture(scope="module")
def three_shots():
    from vision_ref.sim.physics import Layout, Strike, simulate

    shots = []
    layout = Layout.standard()
    strikes = [Strike("cue", 4000, math.atan2(-150, 200) - 0.08, 0.1, 0.2)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for k in range(3):
            shot = simulate(layout, strikes[-1], lead_in=0.6, tail=0.6)
            shots.append(shot)
            after = shot.truth_record(FPS)["after"]["balls"]
            # balls stay where they stopped; knocked pins are stood back on their spots by hand
            layout = Layout.standard(balls={b: tuple(p) for b, p in after.items()})
            cue, w2 = np.array(after["cue"]), np.array(after["white2"])
            d = w2 - cue
            strikes.append(Strike("cue", 3000, math.atan2(d[1], d[0]) + 0.01 * k, 0.0, 0.2))
    return shots


def test_each_shot_is_found_and_decided_with_the_right_shooter(three_shots):
    from vision_ref.events.synthetic import tracks_from_truth

    parts = [tracks_from_truth(s, FPS, noise_mm=0.3, seed=i, exposure_s=0.004) for i, s in enumerate(three_shots)]
    tracks = _concat(parts, FPS)
    m = Match(["Ann", "Bob"], first="Ann")
    notes = []
    outcomes = adjudicate_tracks(tracks, m, table=DEFAULT_TABLE, notes=notes)
    assert len(outcomes) == 3, notes
    # the same decisions as the truth records played in order
    truth = Match(["Ann", "Bob"], first="Ann")
    for o, shot in zip(outcomes, three_shots):
        rec = copy.deepcopy(shot.truth_record(FPS))
        rec.pop("shooter")
        want = truth.play(rec)
        assert o.decision["shooter"] == want["shooter"] == o.record["shooter"]
        assert (o.decision["points"], o.decision["credited_to"], o.decision["next"]) == \
               (want["points"], want["credited_to"], want["next"])
    assert m.final() == truth.final()
    # strikes in clock order, each inside its own part of the footage
    starts = np.cumsum([0.0] + [p.t[-1] + 1.0 / FPS for p in parts[:-1]])
    for o, s0, shot in zip(outcomes, starts, three_shots):
        assert o.strike_t == pytest.approx(s0 + shot.strike_time, abs=0.5 / FPS)


def test_no_shot_is_played_after_the_game_is_over(three_shots):
    from vision_ref.events.synthetic import tracks_from_truth

    tracks = _concat([tracks_from_truth(s, FPS, noise_mm=0.3, seed=i) for i, s in enumerate(three_shots)], FPS)
    first = Match(["Ann", "Bob"])
    rec = copy.deepcopy(three_shots[0].truth_record(FPS))
    rec.pop("shooter")
    pts = first.play(rec)["points"]
    assert pts > 0
    m = Match(["Ann", "Bob"], target=pts)  # the first shot wins the game
    notes = []
    outcomes = adjudicate_tracks(tracks, m, table=DEFAULT_TABLE, notes=notes)
    assert len(outcomes) == 1 and m.game_over
    assert any("2 shots after the end of the game" in n for n in notes)


def test_respotting_by_hand_is_shown_and_checked(three_shots, tmp_path):
    from vision_ref.events.synthetic import tracks_from_truth
    from vision_ref.review.pipeline import write_outputs

    parts = [tracks_from_truth(s, FPS, noise_mm=0.3, seed=i, exposure_s=0.004) for i, s in enumerate(three_shots)]
    tracks = _concat(parts, FPS)
    m = Match(["Ann", "Bob"], first="Ann")
    outcomes = adjudicate_tracks(tracks, m, table=DEFAULT_TABLE, notes=[])
    knocked = outcomes[0].decision["pins_down"]
    assert knocked, "the first shot of the fixture knocks pins"
    moved = {p["piece"] for p in outcomes[1].window.hand_placements}
    assert set(knocked) <= moved  # the knocked pins were stood up again by hand
    # they went back on their spots, as the decision said: nothing to warn about
    assert not [w for w in outcomes[1].warnings if w.startswith("placement before this shot")]
    write_outputs(tmp_path, m, outcomes, tracks, DEFAULT_TABLE)
    page = (tmp_path / "report.html").read_text()
    section = page[page.index('id="shot-2"'):page.index('id="shot-3"')]
    assert "placed by hand before this shot" in section and all(p in section for p in knocked)
