import numpy as np
import pytest

from vision_ref.calibrate.colours import SetupPositions, colour_distance2, learn_colours, to_lab
from vision_ref.calibrate.profile import CalibrationProfile
from vision_ref.calibrate.truth import StillScene, profile_from_camera
from vision_ref.errors import CalibrationError


def test_profile_from_camera_round_trips_and_keeps_the_camera(small_camera, small_renderer, tmp_path):
    prof = profile_from_camera(small_camera, renderer=small_renderer)
    assert np.allclose(prof.camera.K, small_camera.K) and np.allclose(prof.camera.tvec, small_camera.tvec)
    assert prof.background.shape == (272, 364, 3)
    assert set(prof.colours) >= {"cloth", "cushion", "white", "cue", "pin", "king"}
    prof.save(tmp_path / "p.json")
    back = CalibrationProfile.load(tmp_path / "p.json")
    assert back.colours["cue"].mean == pytest.approx(prof.colours["cue"].mean)
    with pytest.raises(CalibrationError, match="728x544"):
        back.check_frame_size(1456, 1088)


def test_learnt_colours_identify_each_ball(small_camera, small_renderer, setup_frame):
    """Each ball's own pixels are nearer its own model than the other ball's (cue vs white)."""
    pos = SetupPositions.standard()
    models = learn_colours(setup_frame, small_camera, pos)
    lab = to_lab(setup_frame)
    for ball, own, other in (("cue", "cue", "white"), ("white1", "white", "cue"), ("white2", "white", "cue")):
        u = small_camera.project(np.array([[*pos.balls[ball], 30.75]]))[0]
        x, y = int(round(u[0])), int(round(u[1]))
        patch = lab[y - 3:y + 4, x - 3:x + 4].reshape(-1, 3)
        assert np.median(colour_distance2(models[own], patch)) < np.median(colour_distance2(models[other], patch))
    # the cloth model explains the open cloth and not the balls
    assert models["cloth"].mean[0] < models["white"].mean[0] - 60


def test_yellow_cue_ball_is_learnt_as_yellow(small_camera):
    from vision_ref.sim.render import Renderer, RenderSettings

    r = Renderer(small_camera, settings=RenderSettings(cue_ball_rgb="yellow", cloth_rgb="green", draw_cue=False))
    prof = profile_from_camera(small_camera, renderer=r)
    # OpenCV Lab: b > 128 is yellow; a red ball has a >> 128, a yellow one b >> a
    L, a, b = prof.colours["cue"].mean
    assert b > 160 and a < 145
    La, aa, ba = prof.colours["cloth"].mean
    assert aa < 120  # green cloth: a below neutral


def test_missing_cue_ball_is_named(small_camera, setup_frame):
    pos = SetupPositions.standard()
    pos.balls["cue"] = (5000.0, 0.0)  # off the frame
    with pytest.raises(CalibrationError, match="cue ball"):
        learn_colours(setup_frame, small_camera, pos)


def test_still_scene_samples_standing_pins():
    scene = StillScene(SetupPositions.standard())
    ws = scene.sample(np.array([0.0, 0.5]))
    assert ws.pin_visible.all() and ws.ball_visible.all() and not ws.cue_visible.any()
    assert np.allclose(ws.ball_xyz[:, 1, :2], (-710.0, 0.0))
