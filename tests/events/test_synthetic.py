import numpy as np
import pytest

from vision_ref.errors import ContractError
from vision_ref.events.synthetic import tracks_from_truth
from vision_ref.messages import BallState, PinState
from vision_ref.rules.table import BALL_IDS, PIN_IDS


def test_noise_free_positions_match_the_world(carom_shot):
    tr = tracks_from_truth(carom_shot, 60, noise_mm=0.0)
    ws = carom_shot.sample(tr.t)
    for i, b in enumerate(BALL_IDS):
        assert np.allclose(tr.balls[b].xy, ws.ball_xyz[:, i, :2], atol=1e-9)
    assert set(tr.pins) == set(PIN_IDS)


def test_noise_has_the_requested_spread(carom_shot):
    clean = tracks_from_truth(carom_shot, 60, noise_mm=0.0)
    noisy = tracks_from_truth(carom_shot, 60, noise_mm=0.8, seed=3)
    d = (noisy.balls["white2"].xy - clean.balls["white2"].xy).ravel()
    assert 0.7 < d.std() < 0.9
    again = tracks_from_truth(carom_shot, 60, noise_mm=0.8, seed=3)
    assert np.array_equal(again.balls["cue"].xy, noisy.balls["cue"].xy, equal_nan=True)


def test_exposure_reports_the_blur_centroid(carom_shot):
    fps, exp = 60.0, 1 / 120
    tr = tracks_from_truth(carom_shot, fps, noise_mm=0.0, exposure_s=exp)
    sub = np.linspace(0, exp, 7)
    row = int(np.searchsorted(tr.t, carom_shot.strike_time)) + 2
    ws = carom_shot.sample(tr.t[row] + sub)
    assert np.allclose(tr.balls["cue"].xy[row], ws.ball_xyz[:, 0, :2].mean(axis=0))


def test_states_follow_the_motion(carom_shot):
    tr = tracks_from_truth(carom_shot, 60)
    cue = tr.balls["cue"]
    before = tr.t + 1e-9 < carom_shot.strike_time
    assert np.all(cue.state[before] == BallState.AT_REST)
    assert np.any(cue.state == BallState.MOVING)
    assert np.all(tr.pins["king"].state == PinState.STANDING)
    assert tr.moving.any() and not tr.moving[0] and not tr.moving[-1]


def test_off_table_ball_is_reported_off(off_table_shot):
    tr = tracks_from_truth(off_table_shot, 60)
    cue = tr.balls["cue"]
    assert cue.state[-1] == BallState.OFF_TABLE
    assert np.isnan(cue.xy[-1]).all()


def test_dropped_frames_have_no_row(carom_shot):
    tr = tracks_from_truth(carom_shot, 60, dropped=[40, 41])
    assert 40 not in tr.frame_index and 41 not in tr.frame_index
    assert list(tr.dropped) == [40, 41]
    assert len(tr.balls["cue"]) == len(tr.t)


@pytest.mark.parametrize("kwargs, field", [
    ({"fps": 0}, "fps"),
    ({"fps": 60, "noise_mm": -1}, "noise_mm"),
    ({"fps": 60, "exposure_s": 0.1}, "exposure_s"),
    ({"fps": 60, "dropped": [10**6]}, "dropped"),
])
def test_bad_input_names_the_field(carom_shot, kwargs, field):
    with pytest.raises(ContractError) as err:
        tracks_from_truth(carom_shot, **kwargs)
    assert err.value.field == field
