import pytest

from vision_ref.live.stages import ShotTimeline

SCENARIOS4 = ("legal_L1_white_off_cushion", "foul_F5_cue_knocks_pin", "carom_P2", "score_4_two_pins")


@pytest.fixture(scope="session")
def shots4():
    """Four scenario shots: a legal knock, a foul, a bare carom, two pins."""
    from vision_ref.sim.scenarios import get_scenario

    return [get_scenario(name).simulate(0) for name in SCENARIOS4]


@pytest.fixture(scope="session")
def timeline4(shots4):
    return ShotTimeline(shots4, 60.0)


@pytest.fixture(scope="session")
def records4(timeline4):
    recs = []
    for k in range(len(timeline4.shots)):
        r = timeline4.record(k)
        r.pop("shooter", None)
        recs.append(r)
    return recs
