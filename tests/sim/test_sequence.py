"""Multi-shot sequences: balls stay put, knocked pins are respotted by hand, truth replays."""

import numpy as np
import pytest

from vision_ref.rules import adjudicate_match
from vision_ref.rules.table import BALL_IDS, PIN_IDS
from vision_ref.sim.physics import Layout, Strike
from vision_ref.sim.sequence import GOALS, ShotPlan, ShotSequence


@pytest.fixture(scope="module")
def seq():
    return ShotSequence(Layout.standard(), ["legal_pins", "foul_pins", "carom"], seed=1, max_shot_s=7.0)


def test_each_shot_meets_its_goal_and_shooters_follow_the_turn(seq):
    d = [p.decision for p in seq.played]
    assert GOALS["legal_pins"](d[0]) and GOALS["foul_pins"](d[1]) and GOALS["carom"](d[2])
    assert d[0]["shooter"] == "A" and d[1]["shooter"] == d[0]["next"] and d[2]["shooter"] == d[1]["next"]


def test_balls_stay_where_they_stopped_and_pins_are_respotted(seq):
    recs = seq.truth_records()
    for prev, nxt, p in zip(recs, recs[1:], seq.played):
        respot = {r["piece"]: r["at"] for r in p.decision["respot"]}
        for b in BALL_IDS:
            if b in respot:
                assert nxt["before"]["balls"][b] == pytest.approx(respot[b], abs=0.02)
            else:
                assert nxt["before"]["balls"][b] == pytest.approx(prev["after"]["balls"][b], abs=0.02)
        for pin in PIN_IDS:
            before = nxt["before"]["pins"][pin]
            if pin in respot:
                assert before["state"] == "standing" and before["at"] == pytest.approx(respot[pin], abs=0.02)
            else:
                assert before["state"] == prev["after"]["pins"][pin]["state"]
                assert before["at"] == pytest.approx(prev["after"]["pins"][pin]["at"], abs=0.02)


def test_truth_records_replay_to_the_same_decisions(seq):
    match = seq.truth_record()
    assert match["format"] == "vision-ref.match/1" and len(match["shots"]) == 3
    replay = adjudicate_match({k: match[k] for k in ("format", "players", "first", "target", "shots")})
    for a, b in zip(replay["decisions"], [p.decision for p in seq.played]):
        assert (a["points"], a["credited_to"], a["pins_down"], a["next"]) == (b["points"], b["credited_to"], b["pins_down"], b["next"])


def test_gaps_are_still_pins_vanish_then_stand_and_no_cue_stick(seq):
    w = seq.shot_windows
    assert all(a["end"] < b["start"] for a, b in zip(w, w[1:]))
    assert seq.duration == pytest.approx(w[-1]["end"])
    p = seq.played[0]
    knocked = [PIN_IDS.index(r["piece"]) for r in p.decision["respot"] if r["piece"] in PIN_IDS]
    assert knocked
    t = np.linspace(w[0]["end"] + 1e-6, w[1]["start"] - 1e-6, 60)
    ws = seq.sample(t)
    assert not ws.cue_visible.any()
    assert np.ptp(ws.ball_xyz, axis=0).max() < 1e-9  # the balls do not move in the gap
    k = knocked[0]
    vis = ws.pin_visible[:, k]
    assert vis[0] and not vis.all() and vis[-1]  # lying, picked up, then placed
    assert ws.pin_tilt[-1, k] == 0.0
    nxt = seq.played[1].record["before"]["pins"][PIN_IDS[k]]["at"]
    assert ws.pin_xy[-1, k] == pytest.approx(nxt, abs=0.02)
    # the clip is continuous into the next shot's first instant
    a = seq.sample([w[1]["start"] - 1e-6, w[1]["start"] + 1e-6])
    assert np.abs(a.ball_xyz[0] - a.ball_xyz[1]).max() < 1e-6


def test_per_frame_truth_covers_the_clip(seq):
    tf = seq.truth_frames(30.0)
    n = len(tf["t"])
    assert n == int(seq.duration * 30.0) + 1 and set(tf["shot"]) == {1, 2, 3}
    assert any(tf["moving"]) and not all(tf["moving"])


def test_explicit_strikes_and_bad_plans():
    s = ShotSequence(Layout.standard(balls={"cue": (-1000.0, 300.0)}), [Strike(speed=800.0, angle=0.3)], seed=0)
    assert len(s.truth_records()) == 1
    with pytest.raises(ValueError, match="unknown shot goal"):
        ShotPlan(goal="win_the_game")
    with pytest.raises(ValueError, match="at least one shot"):
        ShotSequence(Layout.standard(), [])
