import numpy as np
import pytest

from vision_ref.calibrate.pose import (NoseEdge, assign_cushions, cushion_coordinate, edge_line_error_px,
                                       fit_pose, focal_from_homography)
from vision_ref.camera import CameraModel
from vision_ref.errors import CalibrationError
from vision_ref.rules.table import DEFAULT_TABLE as T

from .conftest import grid_error_mm


def _synthetic_edges(cam, noise=0.1, seed=0):
    """Exact seen-edge points of each cushion projected through ``cam`` (+ noise)."""
    rng = np.random.default_rng(seed)
    edge = NoseEdge.for_table(T)
    out = {}
    for c in ("head", "foot", "left", "right"):
        axis, v = cushion_coordinate(c, T, edge)
        t = np.linspace(-0.9, 0.9, 120)
        if axis == 0:
            P = np.column_stack([np.full_like(t, v), t * T.half_width, np.full_like(t, edge.height_mm)])
        else:
            P = np.column_stack([t * T.half_length, np.full_like(t, v), np.full_like(t, edge.height_mm)])
        out[c] = cam.project(P) + rng.normal(0, noise, (len(t), 2))
    return out


@pytest.mark.parametrize("kw", [dict(tilt_deg=6.0), dict(roll_deg=3.0, offset_mm=(50.0, -40.0)),
                                dict(camera_height_mm=2000.0, tilt_deg=-4.0)])
def test_pose_from_exact_edges_with_known_lens(kw):
    cam = CameraModel.overhead(1456, 1088, dist=(-0.08, 0.02, 0, 0, 0), **kw)
    fit = fit_pose(_synthetic_edges(cam), (1456, 1088), lens=cam)
    med, worst = grid_error_mm(cam, fit.camera, T)
    assert med < 0.2 and worst < 0.5
    assert max(edge_line_error_px(cam, fit.camera, T, NoseEdge.for_table(T)).values()) < 0.1


def test_a_run_of_bad_edge_points_is_down_weighted():
    cam = CameraModel.overhead(1456, 1088, tilt_deg=5.0, dist=(-0.06, 0.012, 0, 0, 0))
    edges = _synthetic_edges(cam)
    edges["left"][40:55] += np.array([0.0, 9.0])  # a ball along the cushion
    fit = fit_pose(edges, (1456, 1088), lens=cam)
    assert grid_error_mm(cam, fit.camera, T)[1] < 0.8


def test_focal_length_from_a_tilted_view():
    cam = CameraModel.overhead(1456, 1088, tilt_deg=15.0, roll_deg=5.0)
    import cv2

    P = np.array([[-1420, -710], [1420, -710], [1420, 710], [-1420, 710]], float)
    img = cam.project(P)
    H, _ = cv2.findHomography(P, img)
    f = focal_from_homography(H, cam.K[0, 2], cam.K[1, 2])
    assert f == pytest.approx(cam.K[0, 0], rel=0.01)


def test_cushion_assignment_follows_the_overhead_convention():
    cam = CameraModel.overhead(1456, 1088)
    corners = cam.project(np.array([[-1420, 710, 0], [1420, 710, 0], [1420, -710, 0], [-1420, -710, 0]], float))
    # quad in image order starting top-left: sides top, right, bottom, left
    assert assign_cushions(corners) == ["left", "foot", "right", "head"]


def test_missing_cushion_is_named():
    cam = CameraModel.overhead(1456, 1088)
    edges = _synthetic_edges(cam)
    edges["foot"] = edges["foot"][:3]
    with pytest.raises(CalibrationError, match="foot cushion"):
        fit_pose(edges, (1456, 1088), lens=cam)
