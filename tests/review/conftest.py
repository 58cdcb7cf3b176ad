"""Shared fixtures of the review tests: simulated shots with known truth (no rendering)."""

import math
import warnings

import pytest

from vision_ref.rules import Match


def _shot(angle_offset: float, speed: float = 4000.0):
    from vision_ref.sim.physics import Layout, Strike, simulate

    angle = math.atan2(-150, 200) + angle_offset
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return simulate(Layout.standard(), Strike("cue", speed, angle, 0.1, 0.2), lead_in=0.3, tail=0.3)


@pytest.fixture(scope="session")
def foul_shot():
    """The cue ball hits white1, then white2 ... and knocks three pins itself (F5)."""
    shot = _shot(0.04)
    record = shot.truth_record(60)
    decision = Match(["A", "B"]).play(record)
    assert decision["foul"] and decision["pins_down"], "fixture shot changed: it must be an F5 foul with pins down"
    return shot, record, decision


@pytest.fixture(scope="session")
def legal_shot():
    """The cue ball hits white1, which knocks pins legally (L1)."""
    shot = _shot(-0.08)
    record = shot.truth_record(60)
    decision = Match(["A", "B"]).play(record)
    assert not decision["foul"] and decision["points"] > 0, "fixture shot changed: it must score legally"
    return shot, record, decision
