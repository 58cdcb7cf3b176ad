"""Lookup grids: pixel <-> table mappings agree with the camera model."""

from __future__ import annotations

import numpy as np
import pytest

from vision_ref.camera import CameraModel
from vision_ref.rules.table import DEFAULT_TABLE
from vision_ref.track.geometry import Geometry, silhouette


@pytest.fixture(scope="module", params=[(0.0, (0.0, 0.0, 0.0, 0.0, 0.0)), (4.0, (-0.12, 0.03, 0.0, 0.0, 0.0))])
def geo(request):
    tilt, dist = request.param
    return Geometry(CameraModel.overhead(728, 544, tilt_deg=tilt, dist=dist), DEFAULT_TABLE)


def test_ball_grid_round_trip(geo):
    rng = np.random.default_rng(1)
    xy = np.column_stack([rng.uniform(-1380, 1380, 40), rng.uniform(-680, 680, 40)])
    px = geo.ball_px(xy)  # silhouette centroids of balls resting there
    back = np.array([geo.ball_point(*p) for p in px])
    assert np.max(np.linalg.norm(back - xy, axis=1)) < 0.05  # mm
    r = np.array([geo.ball_radius_px(*p) for p in px])
    assert np.all(np.abs(r - DEFAULT_TABLE.ball_radius / geo.mm_per_px) < 0.15 * r)


def test_silhouette_centroid_lies_outward_of_the_projected_centre(geo):
    cam = geo.camera
    R = DEFAULT_TABLE.ball_radius
    near, far = np.array([[0.0, 0.0, R]]), np.array([[1380.0, 650.0, R]])
    centre_px = cam.project(np.vstack([near, far]))
    cen, _ = silhouette(cam, np.vstack([near, far]), R)
    axis_px = cam.project(np.array([cam.centre_world[:2].tolist() + [R]]))[0]
    shift = cen - centre_px
    # off-axis: the image of the sphere is pushed away from the principal point
    assert np.dot(shift[1], centre_px[1] - axis_px) > 0
    assert np.linalg.norm(shift[1]) > np.linalg.norm(shift[0])


def test_plane_lookup_matches_camera(geo):
    rng = np.random.default_rng(2)
    px = np.column_stack([rng.uniform(20, 700, 30), rng.uniform(20, 520, 30)])
    for z in (0.0, 35.0, 45.0):
        want = geo.camera.pixels_to_plane(px, z=z)
        got = np.array([geo.plane_point(x, y, z) for x, y in px])
        assert np.max(np.linalg.norm(got - want, axis=1)) < 0.06  # mm, even with strong barrel distortion
        np.testing.assert_allclose(geo.plane_at(px, z), got, atol=1e-9)
