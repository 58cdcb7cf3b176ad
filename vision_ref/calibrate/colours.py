"""Colour models learnt from the set-up position: cloth, cushion, whites, cue ball, pins, king.

One code path for both the ground-truth profile (known camera, rendered frame) and
the real calibration (detected camera, camera frame): given the camera and where the
objects stand, collect each class's pixels from geometric masks (projected ball
discs, pin silhouettes, the open cloth away from objects, shadows and marks),
trim outliers robustly and fit a Gaussian in OpenCV 8-bit Lab. Because the models
come from this table under this light, identities (cue ball vs whites, king vs
plain pins) follow the real colours, whatever colour the cue ball is.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from vision_ref.calibrate.profile import ColourModel
from vision_ref.camera import CameraModel
from vision_ref.errors import CalibrationError
from vision_ref.rules.table import DEFAULT_TABLE, PIN_IDS, TableSpec

# Lab covariance floor (grey levels^2): keeps models usable when the pixels are
# nearly constant (noise-free renders) and covers sensor noise of a real camera.
COV_FLOOR = 4.0
MIN_PIXELS = 12
MIN_PIN_PIXELS = 5  # a pin's head is only a few pixels across at 728x544


@dataclass
class SetupPositions:
    """Where the objects stand in the frame the colours are learnt from (table mm)."""

    balls: dict[str, tuple[float, float]] = field(default_factory=dict)  # cue, white1, white2
    pins: dict[str, tuple[float, float]] = field(default_factory=dict)  # standing pins

    @classmethod
    def standard(cls, table: TableSpec = DEFAULT_TABLE, cue: tuple[float, float] | None = None) -> "SetupPositions":
        """Whites on spots 1 and 3, pins on their places; the cue ball where given (default: the sim's)."""
        cue_xy = cue if cue is not None else (-table.length / 4.0 - 200.0, 150.0)
        return cls(
            balls={"cue": tuple(map(float, cue_xy)), "white1": table.ball_spot(1), "white2": table.ball_spot(3)},
            pins={p: table.pin_spot(p) for p in PIN_IDS},
        )

    def to_dict(self) -> dict:
        return {"balls": {k: list(v) for k, v in self.balls.items()}, "pins": {k: list(v) for k, v in self.pins.items()}}


def to_lab(frame_bgr: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(frame_bgr, cv2.COLOR_BGR2LAB)


def fit_colour(pixels_lab: np.ndarray, trim_sigma: float = 3.0, iterations: int = 3, min_pixels: int = MIN_PIXELS) -> ColourModel:
    """Gaussian (mean, covariance) of Lab pixels (N,3), trimmed of outliers (specular spots, strays)."""
    px = np.asarray(pixels_lab, dtype=np.float64).reshape(-1, 3)
    if len(px) < min_pixels:
        raise CalibrationError(f"only {len(px)} pixels to learn a colour from (need {min_pixels})")
    keep = np.ones(len(px), bool)
    for _ in range(iterations):
        sel = px[keep]
        mean = np.median(sel, axis=0)
        cov = np.cov(sel.T) + np.eye(3) * COV_FLOOR
        d2 = _mahalanobis2(px, mean, cov)
        new_keep = d2 <= trim_sigma**2 * 3.0  # chi^2-ish scale for 3 dof
        if new_keep.sum() < max(min_pixels, 0.5 * len(px)) or np.array_equal(new_keep, keep):
            break
        keep = new_keep
    sel = px[keep]
    mean = sel.mean(axis=0)
    cov = np.cov(sel.T) + np.eye(3) * COV_FLOOR
    return ColourModel(mean=mean.tolist(), cov=cov.tolist())


def _mahalanobis2(px: np.ndarray, mean, cov) -> np.ndarray:
    inv = np.linalg.inv(np.asarray(cov, dtype=np.float64))
    d = px - np.asarray(mean, dtype=np.float64)
    return np.einsum("ni,ij,nj->n", d, inv, d)


def colour_distance2(model: ColourModel, pixels_lab: np.ndarray) -> np.ndarray:
    """Squared Mahalanobis distance of Lab pixels (N,3) to a colour model."""
    return _mahalanobis2(np.asarray(pixels_lab, np.float64).reshape(-1, 3), model.mean, model.cov)


# ---- geometric masks ------------------------------------------------------------------------------
def ball_radius_px(camera: CameraModel, xy, table: TableSpec = DEFAULT_TABLE) -> float:
    """Apparent radius (px) of a ball resting at ``xy``."""
    R = table.ball_radius
    c = np.array([[xy[0], xy[1], R]])
    u = camera.project(c)[0]
    # two perpendicular offsets in the plane through the centre facing the camera
    cam_c = camera.centre_world
    view = c[0] - cam_c
    view /= np.linalg.norm(view)
    a = np.cross(view, [0.0, 0.0, 1.0])
    if np.linalg.norm(a) < 1e-9:
        a = np.array([1.0, 0.0, 0.0])
    a /= np.linalg.norm(a)
    b = np.cross(view, a)
    pts = camera.project(np.vstack([c[0] + R * a, c[0] - R * a, c[0] + R * b, c[0] - R * b]))
    return float(np.mean(np.linalg.norm(pts - u, axis=1)))


def _disc(mask: np.ndarray, centre, radius: float, value: int = 255) -> None:
    shift = 4
    cx, cy = (int(round(v * (1 << shift))) for v in centre)
    cv2.circle(mask, (cx, cy), max(int(round(radius * (1 << shift))), 1), value, -1, cv2.LINE_8, shift)


def ball_core_mask(shape, camera, xy, table=DEFAULT_TABLE, fraction: float = 0.72) -> np.ndarray:
    m = np.zeros(shape[:2], np.uint8)
    centre = camera.project(np.array([[xy[0], xy[1], table.ball_radius]]))[0]
    _disc(m, centre, fraction * ball_radius_px(camera, xy, table))
    return m > 0


def pin_core_mask(shape, camera, pin: str, xy, table=DEFAULT_TABLE, fraction: float = 0.8) -> np.ndarray:
    """The upper body and head of a standing pin as seen by the camera (discs along its axis)."""
    m = np.zeros(shape[:2], np.uint8)
    h = table.pin_height_of(pin)
    r_mm = table.pin_top_radius(pin) * fraction
    for z in np.linspace(0.3 * h, 0.92 * h, 12):
        c = np.array([[xy[0], xy[1], z]])
        u = camera.project(c)[0]
        depth = float(camera.depth(c)[0])
        r_px = r_mm * float(camera.K[0, 0]) / max(depth, 1.0)
        _disc(m, u, max(r_px, 0.8))
    return m > 0


def cloth_polygon_px(camera: CameraModel, table: TableSpec, inset_mm: float, n: int = 40) -> np.ndarray:
    """The playing area shrunk by ``inset_mm``, as an image polygon (densely sampled: lens distortion)."""
    hx, hy = table.half_length - inset_mm, table.half_width - inset_mm
    t = np.linspace(0.0, 1.0, n, endpoint=False)
    edges = [
        np.column_stack([-hx + 2 * hx * t, np.full(n, -hy)]),
        np.column_stack([np.full(n, hx), -hy + 2 * hy * t]),
        np.column_stack([hx - 2 * hx * t, np.full(n, hy)]),
        np.column_stack([np.full(n, -hx), hy - 2 * hy * t]),
    ]
    return camera.project(np.vstack(edges))


def cloth_mask(shape, camera, table, positions: SetupPositions, inset_mm: float = 40.0) -> np.ndarray:
    """Open cloth: inside the playing area, away from objects, their shadows and the printed marks."""
    m = np.zeros(shape[:2], np.uint8)
    poly = cloth_polygon_px(camera, table, inset_mm)
    cv2.fillPoly(m, [np.round(poly * 16).astype(np.int32)], 255, cv2.LINE_8, 4)
    mm_px = 1.0 / camera.mm_per_pixel()
    for xy in positions.balls.values():  # ball + shadow (lamps a metre up throw ~2R shadows)
        u = camera.project(np.array([[xy[0], xy[1], table.ball_radius]]))[0]
        _disc(m, u, 3.2 * table.ball_radius * mm_px + 3, 0)
    for pin, xy in positions.pins.items():
        for z in (0.0, table.pin_height_of(pin)):
            u = camera.project(np.array([[xy[0], xy[1], z]]))[0]
            _disc(m, u, (table.pin_height_of(pin) * 0.9 + 15.0) * mm_px + 3, 0)
    marks = [table.ball_spot(n) for n in (1, 2, 3)] + [table.pin_spot(p) for p in PIN_IDS]
    for xy in marks:
        u = camera.project(np.array([[xy[0], xy[1], 0.0]]))[0]
        _disc(m, u, 2.0 * table.spot_mark_diameter * mm_px + 2, 0)
    return m > 0


def cushion_mask(shape, camera, table) -> np.ndarray:
    """The top of the cushion rubber, between its nose and the rail (seen from above)."""
    m = np.zeros(shape[:2], np.uint8)
    outer = cloth_polygon_px(camera, table, -(table.cushion_width - 12.0))
    inner = cloth_polygon_px(camera, table, -12.0)
    cv2.fillPoly(m, [np.round(outer * 16).astype(np.int32)], 255, cv2.LINE_8, 4)
    cv2.fillPoly(m, [np.round(inner * 16).astype(np.int32)], 0, cv2.LINE_8, 4)
    return m > 0


# ---- learning -------------------------------------------------------------------------------------
def learn_colours(
    frame_bgr: np.ndarray,
    camera: CameraModel,
    positions: SetupPositions,
    table: TableSpec = DEFAULT_TABLE,
) -> dict[str, ColourModel]:
    """Colour models of the set-up frame: cloth, cushion, white (both whites), cue, pin, king.

    Raises CalibrationError naming the object whose pixels cannot be found (off the
    frame, too small) so the user knows what to fix.
    """
    if frame_bgr.ndim != 3 or frame_bgr.shape[2] != 3:
        raise CalibrationError(f"expected a colour (BGR) frame, got shape {frame_bgr.shape}")
    if frame_bgr.shape[:2] != (camera.height, camera.width):
        raise CalibrationError(
            f"frame is {frame_bgr.shape[1]}x{frame_bgr.shape[0]} but the camera is {camera.width}x{camera.height}"
        )
    lab = to_lab(frame_bgr)
    shape = frame_bgr.shape
    models: dict[str, ColourModel] = {}

    def fit(name: str, mask: np.ndarray, min_pixels: int = MIN_PIXELS) -> ColourModel:
        px = lab[mask]
        if len(px) < min_pixels:
            raise CalibrationError(
                f"cannot learn the {name} colour: only {len(px)} pixels of it are in view "
                "(is it on the table and inside the frame? is the camera high enough?)"
            )
        return fit_colour(px, min_pixels=min_pixels)

    models["cloth"] = fit("cloth", cloth_mask(shape, camera, table, positions))
    models["cushion"] = fit("cushion", cushion_mask(shape, camera, table))
    cloth = models["cloth"]

    def not_cloth(mask: np.ndarray) -> np.ndarray:
        # drop cloth showing through the mask edge (a mask is geometric; objects are round)
        ys, xs = np.nonzero(mask)
        d2 = colour_distance2(cloth, lab[ys, xs])
        keep = d2 > 16.0
        out = np.zeros_like(mask)
        out[ys[keep], xs[keep]] = True
        return out

    whites = np.zeros(shape[:2], bool)
    for b in ("white1", "white2"):
        if b in positions.balls:
            whites |= ball_core_mask(shape, camera, positions.balls[b], table)
    if "cue" not in positions.balls or not whites.any():
        raise CalibrationError("the set-up position needs the cue ball and at least one white on the table")
    models["white"] = fit("white ball", not_cloth(whites))
    models["cue"] = fit("cue ball", not_cloth(ball_core_mask(shape, camera, positions.balls["cue"], table)))
    plain = np.zeros(shape[:2], bool)
    for p, xy in positions.pins.items():
        if p != "king":
            plain |= pin_core_mask(shape, camera, p, xy, table)
    if plain.any():
        models["pin"] = fit("pin", not_cloth(plain), MIN_PIN_PIXELS)
    if "king" in positions.pins:
        models["king"] = fit("king", not_cloth(pin_core_mask(shape, camera, "king", positions.pins["king"], table)),
                             MIN_PIN_PIXELS)
    return models


def identity_check(models: dict[str, ColourModel]) -> dict[str, float]:
    """Separations (Mahalanobis, symmetric) that the identities rely on; small = ambiguous."""
    pairs = [("cue", "white"), ("cue", "cloth"), ("white", "cloth"), ("pin", "cloth"), ("king", "pin")]
    out = {}
    for a, b in pairs:
        if a in models and b in models:
            ma, mb = np.asarray(models[a].mean), np.asarray(models[b].mean)
            cov = 0.5 * (np.asarray(models[a].cov) + np.asarray(models[b].cov))
            out[f"{a}_vs_{b}"] = float(np.sqrt(_mahalanobis2((ma - mb)[None], np.zeros(3), cov)[0]))
    return out
