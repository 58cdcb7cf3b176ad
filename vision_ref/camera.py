"""Pinhole camera with OpenCV lens distortion, shared by the renderer, calibration and tracking.

World frame: table millimetres (RULES.md E3) with ``z`` up from the cloth. The model
is OpenCV's: ``x_cam = R @ X_world + t``, pixels from ``K`` and distortion
``(k1, k2, p1, p2, k3)``. Ball centres sit at ``z = R_ball`` above the cloth, so
mapping a ball's image centre back to the table uses :meth:`pixels_to_plane` with
that height, not the cloth plane.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from vision_ref.rules.table import DEFAULT_TABLE, TableSpec


def _as_array(value: Any, shape: tuple[int, ...], name: str) -> np.ndarray:
    arr = np.asarray(value, dtype=np.float64)
    if arr.shape != shape:
        raise ValueError(f"camera {name}: expected shape {shape}, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"camera {name}: contains non-finite values")
    return arr


@dataclass
class CameraModel:
    width: int
    height: int
    K: np.ndarray  # 3x3 intrinsics
    dist: np.ndarray = field(default_factory=lambda: np.zeros(5))  # k1 k2 p1 p2 k3
    rvec: np.ndarray = field(default_factory=lambda: np.zeros(3))  # world -> camera (Rodrigues)
    tvec: np.ndarray = field(default_factory=lambda: np.zeros(3))  # world -> camera, mm

    def __post_init__(self) -> None:
        self.width = int(self.width)
        self.height = int(self.height)
        if self.width <= 0 or self.height <= 0:
            raise ValueError(f"camera size must be positive, got {self.width}x{self.height}")
        self.K = _as_array(self.K, (3, 3), "K")
        self.dist = _as_array(np.ravel(self.dist), (5,), "dist")
        self.rvec = _as_array(np.ravel(self.rvec), (3,), "rvec")
        self.tvec = _as_array(np.ravel(self.tvec), (3,), "tvec")

    # ---- geometry ------------------------------------------------------------
    @property
    def R(self) -> np.ndarray:
        return cv2.Rodrigues(self.rvec)[0]

    @property
    def centre_world(self) -> np.ndarray:
        """Camera centre in table mm."""
        return -self.R.T @ self.tvec

    def project(self, points: np.ndarray) -> np.ndarray:
        """World points (N,3) or (N,2) on the cloth (z=0) -> distorted pixels (N,2)."""
        pts = np.asarray(points, dtype=np.float64).reshape(-1, np.shape(points)[-1])
        if pts.shape[1] == 2:
            pts = np.hstack([pts, np.zeros((len(pts), 1))])
        if len(pts) == 0:
            return np.zeros((0, 2))
        img, _ = cv2.projectPoints(pts, self.rvec, self.tvec, self.K, self.dist)
        return img.reshape(-1, 2)

    def depth(self, points: np.ndarray) -> np.ndarray:
        """Distance along the optical axis (camera z) of world points (N,3)."""
        pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
        return (pts @ self.R.T + self.tvec)[:, 2]

    def undistort_pixels(self, pixels: np.ndarray) -> np.ndarray:
        """Distorted pixels (N,2) -> normalised image coordinates (N,2) of the ideal pinhole."""
        px = np.asarray(pixels, dtype=np.float64).reshape(-1, 1, 2)
        if len(px) == 0:
            return np.zeros((0, 2))
        crit = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 40, 1e-12)
        return cv2.undistortPoints(px, self.K, self.dist, R=None, P=None, criteria=crit).reshape(-1, 2)

    def pixels_to_plane(self, pixels: np.ndarray, z: float = 0.0) -> np.ndarray:
        """Distorted pixels (N,2) -> table points (N,2) on the horizontal plane at height ``z`` mm."""
        norm = self.undistort_pixels(pixels)
        rays_cam = np.hstack([norm, np.ones((len(norm), 1))])
        R = self.R
        rays = rays_cam @ R  # camera -> world directions (R.T @ ray for each row)
        c = self.centre_world
        with np.errstate(divide="ignore", invalid="ignore"):
            s = (z - c[2]) / rays[:, 2]
        return c[:2] + rays[:, :2] * s[:, None]

    def mm_per_pixel(self, z: float = 0.0) -> float:
        """Approximate scale at the table centre (for tolerances in pixels <-> mm)."""
        c = self.project(np.array([[0.0, 0.0, z], [10.0, 0.0, z]]))
        return 10.0 / float(np.linalg.norm(c[1] - c[0]))

    # ---- construction --------------------------------------------------------
    @classmethod
    def overhead(
        cls,
        width: int = 1456,
        height: int = 1088,
        table: TableSpec = DEFAULT_TABLE,
        camera_height_mm: float | None = None,
        margin_mm: float | None = None,
        tilt_deg: float = 0.0,
        roll_deg: float = 0.0,
        offset_mm: tuple[float, float] = (0.0, 0.0),
        dist: tuple[float, float, float, float, float] = (0.0, 0.0, 0.0, 0.0, 0.0),
        focal_px: float | None = None,
    ) -> "CameraModel":
        """A camera above the table looking down, framing the table with its rails.

        ``tilt_deg`` tips the optical axis towards +x (about the table's y axis);
        ``roll_deg`` turns the image about the optical axis; ``offset_mm`` moves the
        camera in x, y. When ``focal_px`` is not given it is chosen so that the
        table plus ``margin_mm`` (default: cushions + rails + 40 mm) fills the frame.
        The image's long side follows the table's long axis.
        """
        if margin_mm is None:
            margin_mm = table.cushion_width + table.rail_width + 40.0
        if camera_height_mm is None:
            camera_height_mm = 2400.0
        half_x = table.half_length + margin_mm
        half_y = table.half_width + margin_mm
        if focal_px is None:
            focal_px = min((width / 2.0) * camera_height_mm / half_x, (height / 2.0) * camera_height_mm / half_y)
        K = np.array([[focal_px, 0.0, (width - 1) / 2.0], [0.0, focal_px, (height - 1) / 2.0], [0.0, 0.0, 1.0]])
        # Camera axes for a straight-down view: image x along table +x, image y along table -y
        # (so the image is the table seen from above with the head on the left), optical axis -z.
        base = np.array([[1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, -1.0]])
        t = math.radians(tilt_deg)
        # Tilt about the world y axis: the optical axis leans towards +x.
        tilt = np.array([[math.cos(t), 0.0, -math.sin(t)], [0.0, 1.0, 0.0], [math.sin(t), 0.0, math.cos(t)]])
        r = math.radians(roll_deg)
        roll = np.array([[math.cos(r), -math.sin(r), 0.0], [math.sin(r), math.cos(r), 0.0], [0.0, 0.0, 1.0]])
        R = roll @ base @ tilt.T
        centre = np.array([offset_mm[0], offset_mm[1], camera_height_mm])
        # Keep the table centre in view when tilted: move the camera back along x.
        centre[0] -= camera_height_mm * math.tan(t)
        tvec = -R @ centre
        rvec = cv2.Rodrigues(R)[0].ravel()
        return cls(width, height, K, np.asarray(dist, dtype=np.float64), rvec, tvec)

    # ---- serialisation ---------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "width": self.width,
            "height": self.height,
            "K": self.K.tolist(),
            "dist": self.dist.tolist(),
            "rvec": self.rvec.tolist(),
            "tvec": self.tvec.tolist(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "CameraModel":
        missing = [k for k in ("width", "height", "K", "dist", "rvec", "tvec") if k not in data]
        if missing:
            raise ValueError(f"camera: missing field(s) {', '.join(missing)}")
        return cls(data["width"], data["height"], data["K"], data["dist"], data["rvec"], data["tvec"])
