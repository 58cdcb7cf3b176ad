import numpy as np
import pytest

from vision_ref.calibrate.background import BackgroundModel
from vision_ref.calibrate.health import health
from vision_ref.calibrate.truth import profile_from_camera


@pytest.fixture(scope="module")
def profile(small_camera, small_renderer):
    return profile_from_camera(small_camera, renderer=small_renderer)


def test_health_is_good_on_the_calibrated_view(profile, setup_frame):
    rep = health(profile, setup_frame)
    assert rep.ok and rep.score > 0.8 and rep.shift_px < 0.5


def test_health_sees_a_bumped_camera(profile, setup_frame):
    moved = np.roll(setup_frame, (4, 5), axis=(0, 1))
    rep = health(profile, moved)
    assert not rep.ok and "moved" in rep.reason
    assert rep.shift_px == pytest.approx(np.hypot(4, 5), abs=1.5)


def test_health_sees_the_light_change(profile, setup_frame):
    darker = (setup_frame.astype(np.float32) * 0.55).astype(np.uint8)
    rep = health(profile, darker)
    assert not rep.ok and "light" in rep.reason


def test_health_refuses_another_resolution(profile):
    from vision_ref.errors import CalibrationError

    with pytest.raises(CalibrationError, match="728x544"):
        health(profile, np.zeros((1088, 1456, 3), np.uint8))


def test_background_updates_only_while_still_and_never_absorbs_a_ball(profile, small_camera, small_renderer):
    from vision_ref.calibrate.colours import SetupPositions, ball_core_mask
    from vision_ref.calibrate.truth import StillScene

    model = BackgroundModel(profile, rate=0.5)
    before = model.image().copy()
    pos = SetupPositions(balls={"cue": (300.0, 200.0)}, pins={})
    frame = small_renderer.render_frame(StillScene(pos), 0)
    brighter = np.clip(frame.astype(np.int16) + 6, 0, 255).astype(np.uint8)  # a slow light drift
    model.update(brighter, table_still=False)
    assert np.array_equal(model.image(), before) and model.skipped_moving == 1
    for _ in range(6):
        model.update(brighter, table_still=True)
    img = model.image(full_size=True).astype(np.int16)
    ball = ball_core_mask(frame.shape, small_camera, (300.0, 200.0))
    cloth_far = ball_core_mask(frame.shape, small_camera, (-300.0, -200.0), fraction=3.0)
    assert np.abs(img[ball].mean(axis=0) - frame[ball].mean(axis=0)).max() > 40  # the ball stayed out
    drift = img[cloth_far].mean() - before.astype(np.int16).mean()
    assert img[cloth_far].mean() > np.asarray(profile.background, np.int16).mean() - 50
    assert abs((img[cloth_far] - brighter[cloth_far]).mean()) < 3.0  # the drift was followed
    del drift
