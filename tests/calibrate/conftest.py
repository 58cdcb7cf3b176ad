"""Shared rendered fixtures for the calibration tests (small frames, rendered once per session)."""

import pytest

SMALL = (728, 544)


@pytest.fixture(scope="session")
def small_camera():
    from vision_ref.camera import CameraModel

    return CameraModel.overhead(*SMALL, dist=(-0.06, 0.012, 0.0, 0.0, 0.0))


@pytest.fixture(scope="session")
def small_renderer(small_camera):
    from vision_ref.sim.render import Renderer, RenderSettings

    return Renderer(small_camera, settings=RenderSettings(draw_cue=False, seed=3))


@pytest.fixture(scope="session")
def setup_frame(small_renderer):
    from vision_ref.calibrate.truth import render_setup_frame

    return render_setup_frame(small_renderer)
