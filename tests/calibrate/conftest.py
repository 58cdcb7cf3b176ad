"""Shared rendered fixtures for the calibration tests (small frames, rendered once per session)."""

import numpy as np
import pytest

SMALL = (728, 544)
CUE_XY = (-1000.0, -300.0)


@pytest.fixture(scope="session")
def small_camera():
    from vision_ref.camera import CameraModel

    return CameraModel.overhead(*SMALL, tilt_deg=3.0, offset_mm=(20.0, -15.0), dist=(-0.06, 0.012, 0.0, 0.0, 0.0))


@pytest.fixture(scope="session")
def small_renderer(small_camera):
    from vision_ref.sim.render import Renderer, RenderSettings

    return Renderer(small_camera, settings=RenderSettings(draw_cue=False, seed=3))


@pytest.fixture(scope="session")
def setup_positions():
    from vision_ref.calibrate.colours import SetupPositions

    return SetupPositions.standard(cue=CUE_XY)


@pytest.fixture(scope="session")
def setup_frame(small_renderer):
    from vision_ref.calibrate.truth import render_setup_frame

    return render_setup_frame(small_renderer)


@pytest.fixture(scope="session")
def setup_frames(small_renderer, setup_positions):
    from vision_ref.calibrate.truth import StillScene

    scene = StillScene(setup_positions)
    return [small_renderer.render_frame(scene, i) for i in range(3)]


def grid_error_mm(cam_true, cam_fit, table, z=0.0, inset=20.0):
    """(median, max) mm error of cloth points mapped through the fitted camera."""
    xs, ys = np.meshgrid(np.linspace(-table.half_length + inset, table.half_length - inset, 25),
                         np.linspace(-table.half_width + inset, table.half_width - inset, 13))
    P = np.column_stack([xs.ravel(), ys.ravel(), np.full(xs.size, z)])
    back = cam_fit.pixels_to_plane(cam_true.project(P), z)
    e = np.linalg.norm(back - P[:, :2], axis=1)
    return float(np.median(e)), float(e.max())
