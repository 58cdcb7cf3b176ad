import numpy as np
import pytest

from vision_ref.camera import CameraModel
from vision_ref.rules.table import DEFAULT_TABLE


@pytest.mark.parametrize("tilt,roll,dist", [(0, 0, (0, 0, 0, 0, 0)), (6, 2, (-0.12, 0.03, 0.001, -0.001, 0.0))])
def test_project_then_back_to_plane_round_trips(tilt, roll, dist):
    cam = CameraModel.overhead(1456, 1088, tilt_deg=tilt, roll_deg=roll, dist=dist)
    rng = np.random.default_rng(1)
    pts = np.column_stack([rng.uniform(-1420, 1420, 200), rng.uniform(-710, 710, 200)])
    for z in (0.0, DEFAULT_TABLE.ball_radius):
        px = cam.project(np.column_stack([pts, np.full(len(pts), z)]))
        back = cam.pixels_to_plane(px, z=z)
        assert np.max(np.abs(back - pts)) < 1e-3


def test_overhead_frames_the_whole_table():
    cam = CameraModel.overhead(1456, 1088)
    corners = np.array([[-1420, -710], [1420, -710], [1420, 710], [-1420, 710]], float)
    px = cam.project(corners)
    assert np.all(px[:, 0] > 0) and np.all(px[:, 0] < 1456)
    assert np.all(px[:, 1] > 0) and np.all(px[:, 1] < 1088)
    # head on the left, left cushion (+y) at the top of the image
    assert px[0, 0] < px[1, 0] and px[3, 1] < px[0, 1]


def test_round_trip_dict():
    cam = CameraModel.overhead(640, 480, tilt_deg=3, dist=(-0.1, 0, 0, 0, 0))
    again = CameraModel.from_dict(cam.to_dict())
    assert np.allclose(again.K, cam.K) and np.allclose(again.rvec, cam.rvec)


def test_bad_shape_names_field():
    with pytest.raises(ValueError, match="camera K"):
        CameraModel(10, 10, np.eye(2))
