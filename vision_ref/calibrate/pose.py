"""Camera pose (and, without a lens file, focal length and radial distortion) from the cushion noses.

The four nose edges are straight 3-D lines of known position, so every sub-pixel
edge point constrains the camera: back-projected to the edge's height it must land
on its cushion's line. A Levenberg–Marquardt fit over all edge points (Huber
weights, so a ball against a cushion cannot pull the line) gives ``rvec, tvec`` and,
when no lens calibration is given, ``f, k1, k2``. Point features of known 3-D
position (spot marks, the pin cross, rail diamonds) join the same fit when found;
they are what separates the focal length from the camera height, which four lines
at one height cannot (see docs/calibration.md).

The seen edge is not the nose line itself but where the face of the nose turns
into its rounded top: :class:`NoseEdge` says where that is (outwards from the nose
line, and height above the cloth).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import cv2
import numpy as np

from vision_ref.calibrate._lm import levenberg_marquardt
from vision_ref.camera import CameraModel
from vision_ref.errors import CalibrationError
from vision_ref.rules.table import DEFAULT_TABLE, TableSpec

CUSHION_ORDER = ("head", "foot", "left", "right")


@dataclass(frozen=True)
class NoseEdge:
    """Where the detected nose edge lies: ``outward_mm`` past the nose line, ``height_mm`` above the cloth.

    Default: measured on the renderer's cushion profile with the detector's profile
    smoothing (the face-to-top step of the rounded nose; 6300 edge points from seven
    cameras fit one 3-D line per cushion at +0.4 mm, 32.8 mm with 0.16 mm rms). A real
    carom cushion's crest is seen likewise a few millimetres below the nose top.
    """

    outward_mm: float = 0.4
    height_mm: float = 32.8

    @classmethod
    def for_table(cls, table: TableSpec) -> "NoseEdge":
        return cls(0.4, table.cushion_nose_height - 4.2)

    def to_dict(self) -> dict:
        return {"outward_mm": self.outward_mm, "height_mm": self.height_mm}


@dataclass
class PoseFit:
    camera: CameraModel
    edge_rms_px: dict[str, float]  # per cushion, inlier rms distance of edge points to the model line
    point_rms_px: float
    n_edge_points: int
    n_point_features: int
    fitted_intrinsics: bool
    iterations: int
    inlier_fraction: float
    notes: list[str] = field(default_factory=list)


def cushion_coordinate(cushion: str, table: TableSpec, edge: NoseEdge) -> tuple[int, float]:
    """(axis 0=x / 1=y, coordinate) of a cushion's seen edge line in table mm."""
    axis, c = table.cushion_line(cushion)
    sign = 1.0 if c > 0 else -1.0
    return (0 if axis == "x" else 1), c + sign * edge.outward_mm


def assign_cushions(quad: np.ndarray) -> list[str]:
    """Cushion id of each quad side (side i runs quad[i] -> quad[i+1]).

    The long sides are left/right (y = +-W/2), the short ones head/foot. With no
    marking on the table the head is taken as the short side nearer the image's left
    (or top, for a portrait view); left follows so that the table is seen from above
    (not mirrored), as the overhead camera model of the renderer does.
    """
    lens = [float(np.linalg.norm(quad[(i + 1) % 4] - quad[i])) for i in range(4)]
    mids = [(quad[i] + quad[(i + 1) % 4]) / 2 for i in range(4)]
    long_first = lens[0] + lens[2] >= lens[1] + lens[3]
    short = [1, 3] if long_first else [0, 2]
    longs = [0, 2] if long_first else [1, 3]
    # head: the short side nearer the left (landscape) or top (portrait)
    span = np.ptp(quad, axis=0)
    key = 0 if span[0] >= span[1] else 1
    head = min(short, key=lambda i: mids[i][key])
    foot = short[0] if head == short[1] else short[1]
    # left cushion (+y): the long side to the left of the head->foot direction, seen from above.
    # Image y points down, so "left seen from above" is the side with negative cross product.
    hf = mids[foot] - mids[head]
    centre = quad.mean(axis=0)

    def side_sign(i):
        v = mids[i] - centre
        return hf[0] * v[1] - hf[1] * v[0]

    left = min(longs, key=side_sign)
    right = longs[0] if left == longs[1] else longs[1]
    out = [""] * 4
    out[head], out[foot], out[left], out[right] = "head", "foot", "left", "right"
    return out


def _line(pts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    c = pts.mean(axis=0)
    _, _, vt = np.linalg.svd(pts - c)
    return c, vt[0]


def _intersect(l1, l2) -> np.ndarray:
    (p, d), (q, e) = l1, l2
    s = np.linalg.solve(np.array([d, -e]).T, q - p)
    return p + s[0] * d


def corner_points(edges: dict[str, np.ndarray]) -> tuple[np.ndarray, list[tuple[str, str]]]:
    """Image corners from straight lines through each cushion's edge points: (4,2) and their cushion pairs."""
    lines = {k: _line(v) for k, v in edges.items()}
    pairs = [("head", "right"), ("foot", "right"), ("foot", "left"), ("head", "left")]
    return np.array([_intersect(lines[a], lines[b]) for a, b in pairs]), pairs


def world_corners(pairs, table: TableSpec, edge: NoseEdge) -> np.ndarray:
    pts = []
    for a, b in pairs:
        xy = [0.0, 0.0]
        for c in (a, b):
            axis, v = cushion_coordinate(c, table, edge)
            xy[axis] = v
        pts.append((xy[0], xy[1], edge.height_mm))
    return np.array(pts)


def focal_from_homography(Hm: np.ndarray, cx: float, cy: float) -> float | None:
    """Focal length (px, square pixels, known principal point) from a plane homography, if it is observable."""
    T = np.array([[1, 0, -cx], [0, 1, -cy], [0, 0, 1.0]])
    h = T @ Hm
    h1, h2 = h[:, 0], h[:, 1]
    cands = []
    den = h1[2] * h2[2]
    if abs(den) > 1e-12:
        f2 = -(h1[0] * h2[0] + h1[1] * h2[1]) / den
        if f2 > 0:
            cands.append(f2)
    den = h1[2] ** 2 - h2[2] ** 2
    if abs(den) > 1e-12:
        f2 = (h2[0] ** 2 + h2[1] ** 2 - h1[0] ** 2 - h1[1] ** 2) / den
        if f2 > 0:
            cands.append(f2)
    if not cands:
        return None
    f = math.sqrt(float(np.median(cands)))
    return f


def initial_camera(edges: dict[str, np.ndarray], size: tuple[int, int], table: TableSpec, edge: NoseEdge,
                   lens: CameraModel | None = None, focal_guess: float | None = None) -> CameraModel:
    W, H = size
    img, pairs = corner_points(edges)
    obj = world_corners(pairs, table, edge)
    if lens is not None:
        K, dist = lens.K.copy(), lens.dist.copy()
    else:
        cx, cy = (W - 1) / 2.0, (H - 1) / 2.0
        Hm, _ = cv2.findHomography(obj[:, :2], img, 0)
        f = focal_from_homography(Hm, cx, cy) if Hm is not None else None
        f0 = focal_guess or 0.75 * W
        if f is None or not (0.3 * f0 < f < 3.0 * f0):
            f = f0
        K = np.array([[f, 0, cx], [0, f, cy], [0, 0, 1.0]])
        dist = np.zeros(5)
    # IPPE wants the plane at z = 0: solve for the plane at the edge height, then shift
    obj0 = obj.copy()
    obj0[:, 2] = 0.0
    ok, rvec, tvec = cv2.solvePnP(obj0, img.reshape(-1, 1, 2), K, dist, flags=cv2.SOLVEPNP_IPPE)
    if not ok:
        raise CalibrationError("could not compute a camera pose from the four cushion corners")
    R = cv2.Rodrigues(rvec)[0]
    tvec = tvec.ravel() - R @ np.array([0.0, 0.0, edge.height_mm])
    cam = CameraModel(W, H, K, dist, rvec.ravel(), tvec)
    if cam.centre_world[2] <= 0:
        raise CalibrationError("the camera pose puts the camera below the table: the cushion lines are inconsistent")
    return cam


# ---- the joint fit ----------------------------------------------------------------------------------
class _Model:
    """Parameter vector <-> camera; residuals of edge points and point features."""

    def __init__(self, cam0: CameraModel, fit_intrinsics: bool, fit_k2: bool = True):
        self.cam0 = cam0
        self.fit_intrinsics = fit_intrinsics
        self.fit_k2 = fit_k2

    def x0(self) -> np.ndarray:
        c = self.cam0
        x = list(c.rvec) + list(c.tvec)
        if self.fit_intrinsics:
            x += [math.log(c.K[0, 0]), c.dist[0]]
            if self.fit_k2:
                x += [c.dist[1]]
        return np.array(x, dtype=np.float64)

    def steps(self) -> np.ndarray:
        s = [1e-6] * 3 + [1e-3] * 3
        if self.fit_intrinsics:
            s += [1e-6, 1e-6] + ([1e-6] if self.fit_k2 else [])
        return np.array(s)

    def camera(self, x: np.ndarray) -> CameraModel:
        c = self.cam0
        K = c.K.copy()
        dist = c.dist.copy()
        if self.fit_intrinsics:
            f = math.exp(x[6])
            K[0, 0] = K[1, 1] = f
            dist[0] = x[7]
            if self.fit_k2:
                dist[1] = x[8]
        return CameraModel(c.width, c.height, K, dist, x[0:3], x[3:6])


def _edge_residuals(cam: CameraModel, pts: np.ndarray, axis: np.ndarray, coord: np.ndarray, z: float) -> np.ndarray:
    """Signed px distance of each edge point from its cushion's line (back-projected at height ``z``)."""
    norm = cam.undistort_pixels(pts)
    rays_cam = np.column_stack([norm, np.ones(len(norm))])
    R = cam.R
    rays = rays_cam @ R
    C = cam.centre_world
    s = (z - C[2]) / rays[:, 2]  # = depth along the optical axis (camera z of the ray is 1)
    X = C[None, :2] + rays[:, :2] * s[:, None]
    along = np.where(axis == 0, X[:, 0], X[:, 1])
    f = cam.K[0, 0]
    return (along - coord) * f / np.abs(s)


def fit_pose(
    edges: dict[str, np.ndarray],
    size: tuple[int, int],
    table: TableSpec = DEFAULT_TABLE,
    edge: NoseEdge | None = None,
    lens: CameraModel | None = None,
    points_world: np.ndarray | None = None,
    points_image: np.ndarray | None = None,
    point_weight: float = 3.0,
    initial: CameraModel | None = None,
    focal_prior_sigma: float = 0.35,
    dist_prior_sigma: tuple[float, float] = (0.15, 0.05),
) -> PoseFit:
    """Camera from the nose edges (+ optional point features). ``edges``: cushion id -> (N,2) pixels."""
    edge = edge or NoseEdge.for_table(table)
    for c in CUSHION_ORDER:
        if c not in edges or len(edges[c]) < 8:
            raise CalibrationError(f"the {c} cushion's nose was not found: it is needed for the camera pose")
    cam0 = initial or initial_camera(edges, size, table, edge, lens)
    fit_intr = lens is None
    names, pts_l, axis_l, coord_l = [], [], [], []
    for c in CUSHION_ORDER:
        axis, coord = cushion_coordinate(c, table, edge)
        p = np.asarray(edges[c], dtype=np.float64)
        pts_l.append(p)
        axis_l.append(np.full(len(p), axis))
        coord_l.append(np.full(len(p), coord))
        names += [c] * len(p)
    pts = np.vstack(pts_l)
    axis = np.concatenate(axis_l)
    coord = np.concatenate(coord_l)
    names_a = np.array(names)
    have_pts = points_world is not None and points_image is not None and len(points_world) > 0
    pw = np.asarray(points_world, np.float64).reshape(-1, 3) if have_pts else np.zeros((0, 3))
    pi = np.asarray(points_image, np.float64).reshape(-1, 2) if have_pts else np.zeros((0, 2))
    f_prior = math.log(cam0.K[0, 0])
    # the edge points of each cushion share one weight budget, so a long cushion does not outvote a short one
    counts = {c: int((names_a == c).sum()) for c in CUSHION_ORDER}
    mean_n = np.mean(list(counts.values()))
    edge_w = np.sqrt(np.array([mean_n / counts[c] for c in names_a]))

    def residuals(model: _Model, x: np.ndarray) -> np.ndarray:
        cam = model.camera(x)
        r = [_edge_residuals(cam, pts, axis, coord, edge.height_mm) * edge_w]
        if have_pts:
            proj = cam.project(pw)
            r.append(((proj - pi) * point_weight).ravel())
        if model.fit_intrinsics:
            # weak prior: four lines at one height leave focal length vs. camera height free
            r.append(np.array([(x[6] - f_prior) / focal_prior_sigma]))
            # weak priors towards a low-distortion lens: compressed or low-resolution edges
            # otherwise buy a better fit with a wild k1/k2 that maps the cloth worse
            r.append(np.array([x[7] / dist_prior_sigma[0]]))
            if model.fit_k2:
                r.append(np.array([x[8] / dist_prior_sigma[1]]))
        return np.concatenate(r)

    # a first pass without k2 (better conditioned), then the full model
    stages = [(_Model(cam0, fit_intr, fit_k2=False), 25), (None, 40)] if fit_intr else [(_Model(cam0, False), 40)]
    cam = cam0
    res = None
    for model, iters in stages:
        if model is None:
            model = _Model(cam, True, fit_k2=True)
        x0 = model.x0()
        res = levenberg_marquardt(lambda x, m=model: residuals(m, x), x0, model.steps(), huber_k=0.6, max_iter=iters)
        cam = model.camera(res.x)
    assert res is not None
    r_edge = _edge_residuals(cam, pts, axis, coord, edge.height_mm)
    inl = np.abs(r_edge) < 1.5
    rms = {c: float(np.sqrt(np.mean(r_edge[(names_a == c) & inl] ** 2))) if np.any((names_a == c) & inl) else float("nan")
           for c in CUSHION_ORDER}
    prms = float(np.sqrt(np.mean(np.sum((cam.project(pw) - pi) ** 2, axis=1)))) if have_pts else float("nan")
    notes = []
    if cam.centre_world[2] < 500:
        raise CalibrationError(f"the fitted camera is only {cam.centre_world[2]:.0f} mm above the cloth: the cushion lines are inconsistent")
    return PoseFit(cam, rms, prms, len(pts), len(pw), fit_intr, res.iterations, float(inl.mean()), notes)


def edge_line_error_px(cam_true: CameraModel, cam_fit: CameraModel, table: TableSpec, edge: NoseEdge, n: int = 50) -> dict[str, float]:
    """Per cushion, the largest image distance (px) between the fitted and the true edge line (dense samples)."""
    out = {}
    for c in CUSHION_ORDER:
        axis, coord = cushion_coordinate(c, table, edge)
        t = np.linspace(-1, 1, n)
        if axis == 0:
            P = np.column_stack([np.full(n, coord), t * table.half_width, np.full(n, edge.height_mm)])
        else:
            P = np.column_stack([t * table.half_length, np.full(n, coord), np.full(n, edge.height_mm)])
        a = cam_true.project(P)
        b = cam_fit.project(P)
        # distance of b from the true curve (the curve is dense; nearest segment point)
        d = []
        for q in b:
            dd = np.min(np.linalg.norm(a - q, axis=1))
            d.append(dd)
        # sub-sample accuracy: project b onto the polyline of a
        seg = np.diff(a, axis=0)
        best = []
        for q in b:
            rel = q - a[:-1]
            tt = np.clip(np.sum(rel * seg, axis=1) / np.sum(seg * seg, axis=1), 0, 1)
            proj = a[:-1] + tt[:, None] * seg
            best.append(float(np.min(np.linalg.norm(proj - q, axis=1))))
        out[c] = float(np.max(best))
    return out
