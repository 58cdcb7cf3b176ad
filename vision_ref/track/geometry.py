"""Pixel <-> table lookup grids built once per calibration profile.

The tracker works in image pixels (windows, predictions) and reports table
millimetres. Mapping every measurement through OpenCV's iterative undistortion
would cost more than the detection itself, so the camera is sampled once on a grid
every ``STEP`` pixels and looked up bilinearly (the mapping is smooth: the lookup
error is a few hundredths of a millimetre even with strong barrel distortion).

- ``ball``: for a pixel that is the *centroid of a ball's silhouette*, the table
  position of that ball's centre and the silhouette's radius in pixels. A sphere
  seen off-axis images as an ellipse whose centroid lies slightly outward of the
  projected centre (~0.3 mm at the table's corners); the grid corrects for it.
- ``plane``: ray intersections with the cloth (z = 0) and with z = ``Z_REF``; any
  height in between is exact by linear interpolation along the ray.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from vision_ref.camera import CameraModel
from vision_ref.rules.table import TableSpec
from vision_ref.track import _kernels as K

STEP = 8
Z_REF = 100.0
_SILHOUETTE_POINTS = 48


def _grid_pixels(width: int, height: int) -> tuple[np.ndarray, int, int]:
    gw = width // STEP + 2
    gh = height // STEP + 2
    ys, xs = np.mgrid[0:gh, 0:gw]
    px = np.column_stack([xs.ravel() * STEP, ys.ravel() * STEP]).astype(np.float64)
    return px, gh, gw


def silhouette(camera: CameraModel, centres: np.ndarray, radius: float, n: int = _SILHOUETTE_POINTS):
    """Area centroids (N,2) and equivalent radii (N,) in pixels of spheres at ``centres`` (N,3)."""
    c = np.asarray(centres, dtype=np.float64).reshape(-1, 3)
    o = camera.centre_world
    d = o[None, :] - c
    dist = np.linalg.norm(d, axis=1, keepdims=True)
    axis = d / dist
    # the tangent circle: centre R^2/d towards the camera, radius R sqrt(1 - R^2/d^2)
    circ_c = c + axis * (radius * radius / dist)
    rho = radius * np.sqrt(np.maximum(1.0 - (radius / dist[:, 0]) ** 2, 0.0))
    ref = np.where(np.abs(axis[:, 2:3]) < 0.9, np.array([[0.0, 0.0, 1.0]]), np.array([[1.0, 0.0, 0.0]]))
    a = np.cross(axis, ref)
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    b = np.cross(axis, a)
    th = np.linspace(0.0, 2.0 * math.pi, n, endpoint=False)
    pts = (circ_c[:, None, :] + rho[:, None, None] * (np.cos(th)[None, :, None] * a[:, None, :]
                                                     + np.sin(th)[None, :, None] * b[:, None, :]))
    img, _ = cv2.projectPoints(pts.reshape(-1, 3), camera.rvec, camera.tvec, camera.K, camera.dist)
    img = img.reshape(len(c), n, 2)
    x, y = img[:, :, 0], img[:, :, 1]
    xn, yn = np.roll(x, -1, axis=1), np.roll(y, -1, axis=1)
    cross = x * yn - xn * y
    area = 0.5 * cross.sum(axis=1)
    cx = ((x + xn) * cross).sum(axis=1) / (6.0 * area)
    cy = ((y + yn) * cross).sum(axis=1) / (6.0 * area)
    return np.column_stack([cx, cy]), np.sqrt(np.abs(area) / math.pi)


class Geometry:
    """Lookup grids and table geometry in pixels for one camera and table."""

    def __init__(self, camera: CameraModel, table: TableSpec):
        self.camera = camera
        self.table = table
        self.width, self.height = camera.width, camera.height
        px, gh, gw = _grid_pixels(camera.width, camera.height)
        R = table.ball_radius
        # ball grid: pixel = silhouette centroid -> centre (x, y) and radius in px. The
        # centroid's shift and the radius vary slowly: computed every 4th node, interpolated.
        coarse = STEP * 4
        cgw, cgh = camera.width // coarse + 2, camera.height // coarse + 2
        cys, cxs = np.mgrid[0:cgh, 0:cgw]
        cpx = np.column_stack([cxs.ravel() * coarse, cys.ravel() * coarse]).astype(np.float64)
        guess = camera.pixels_to_plane(cpx, z=R)
        cen, rad = silhouette(camera, np.column_stack([guess, np.full(len(guess), R)]), R)
        shift = np.column_stack([cen - cpx, rad]).reshape(cgh, cgw, 3)
        fine = np.zeros((len(px), 3))
        K.grid_lookup(np.ascontiguousarray(shift), float(coarse), px[:, 0].copy(), px[:, 1].copy(), fine, len(px))
        corrected = camera.pixels_to_plane(px - fine[:, :2], z=R)  # undo the outward shift of the centroid
        self.ball = np.ascontiguousarray(np.column_stack([corrected, fine[:, 2]]).reshape(gh, gw, 3))
        p0 = camera.pixels_to_plane(px, z=0.0)
        p1 = camera.pixels_to_plane(px, z=Z_REF)
        self.plane = np.ascontiguousarray(np.column_stack([p0, p1]).reshape(gh, gw, 4))
        self._buf_p = np.zeros((16, 2))
        self._buf_o3 = np.zeros((16, 3))
        self._buf_o4 = np.zeros((16, 4))
        c = camera.project(np.array([[0.0, 0.0, R], [10.0, 0.0, R]]))
        self.mm_per_px = 10.0 / float(np.linalg.norm(c[1] - c[0]))

    # ---- lookups -----------------------------------------------------------------------------
    def ball_at(self, px: np.ndarray) -> np.ndarray:
        """Silhouette centroids (N,2) px -> (N,3): table x, y (mm) and apparent radius (px)."""
        p = np.ascontiguousarray(px, dtype=np.float64).reshape(-1, 2)
        out = np.zeros((len(p), 3))
        K.grid_lookup(self.ball, float(STEP), p[:, 0].copy(), p[:, 1].copy(), out, len(p))
        return out

    def plane_at(self, px: np.ndarray, z) -> np.ndarray:
        """Pixels (N,2) -> table points (N,2) on the plane at height z (scalar or (N,)) mm."""
        p = np.ascontiguousarray(px, dtype=np.float64).reshape(-1, 2)
        out = np.zeros((len(p), 4))
        K.grid_lookup(self.plane, float(STEP), p[:, 0].copy(), p[:, 1].copy(), out, len(p))
        f = np.asarray(z, dtype=np.float64).reshape(-1, 1) / Z_REF
        return out[:, :2] + (out[:, 2:] - out[:, :2]) * f

    def plane_point(self, x: float, y: float, z: float) -> tuple[float, float]:
        """One pixel -> table point at height z (the cheap scalar path of the per-frame loop)."""
        return K.grid_point(self.plane, float(STEP), x, y, 0, z / Z_REF)

    def ball_point(self, x: float, y: float) -> tuple[float, float]:
        """One silhouette centroid (px) -> ball centre on the table (mm)."""
        return K.grid_point(self.ball, float(STEP), x, y, 0, 0.0)

    def ball_radius_px(self, x: float, y: float) -> float:
        gh, gw = self.ball.shape[:2]
        i = min(max(int(x / STEP + 0.5), 0), gw - 1)
        j = min(max(int(y / STEP + 0.5), 0), gh - 1)
        return float(self.ball[j, i, 2])

    def ball_px(self, xy: np.ndarray) -> np.ndarray:
        """Table positions (N,2) of resting balls -> silhouette centroids (N,2) px."""
        xy = np.asarray(xy, dtype=np.float64).reshape(-1, 2)
        cen, _ = silhouette(self.camera, np.column_stack([xy, np.full(len(xy), self.table.ball_radius)]),
                            self.table.ball_radius)
        return cen

    def point_px(self, xyz: np.ndarray) -> np.ndarray:
        return self.camera.project(np.asarray(xyz, dtype=np.float64).reshape(-1, 3))
