"""Find the playing area in one frame: the cloth region, then the four cushion noses to sub-pixel.

Two stages:

1. **Coarse** (on a ~480 px wide copy): the cloth is the large region of one
   chromaticity around the image centre. Chromaticity (r, g of normalised RGB) does
   not change with the lamps' intensity, so uneven light and dark corners do not cut
   the region; a brightness floor keeps a grey cloth apart from a dark floor. The
   region (cloth + cushion tops, same fabric) is closed, its holes (balls, pins,
   marks) filled, and its convex hull gives four side lines: clutter at the edge (a
   player, a cue) and balls on the cushions only dent the region, and the hull
   ignores dents.
2. **Fine** (full resolution): along each side, hundreds of profiles across the
   cushion, from the rail inwards. The cushion top is a band of fairly even shade;
   the nose is the first strong step away from it going inwards (to the dark face
   or shadow below the nose, or straight to the cloth). Each profile gives one edge
   point from the gradient peak (parabolic sub-pixel fit); outliers (a ball against
   the cushion, a hand) are rejected by a robust curve fit per side. Lens
   distortion bends the lines, so the per-side model is a quadratic, and the exact
   model is the camera fit of :mod:`vision_ref.calibrate.pose`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import cv2
import numpy as np

from vision_ref.errors import CalibrationError
from vision_ref.rules.table import DEFAULT_TABLE, TableSpec

SIDES = ("head", "foot", "left", "right")  # cushion ids (table frame), see TableSpec.cushion_line


@dataclass
class CoarseTable:
    """The cloth region found on the small copy, mapped back to full-resolution pixels."""

    mask: np.ndarray  # bool, full resolution: cloth + cushion tops
    quad: np.ndarray  # (4,2) float: region corners, order around the region
    lines: list[tuple[np.ndarray, np.ndarray]]  # per quad side: (point, unit direction)
    cloth_lab: np.ndarray  # Lab (OpenCV 8-bit) median of the central cloth
    brightness: float  # median grey of the central cloth


@dataclass
class CushionEdges:
    """Sub-pixel nose points per image side (0..3 in quad order) and their fit quality."""

    points: list[np.ndarray]  # per side (N,2) inlier edge points, full-res distorted pixels
    rejected: list[int]  # per side: profiles with no edge or rejected as outliers
    scanned: list[int]
    residual_px: list[float]  # per side: RMS of inliers about the side's quadratic
    contrast: list[float]  # per side: median edge step (grey levels)
    outer: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)


# ---- stage 1: the cloth region ---------------------------------------------------------------------
_LINEAR_LUT = (((np.arange(256) / 255.0) ** 2.2) * 255.0 + 0.5).astype(np.float32)


def _chromaticity(img: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Chromaticity of linearised RGB (invariant to light intensity) and the linear brightness."""
    f = _LINEAR_LUT[img] + 0.5
    s = f.sum(axis=2)
    return f / s[:, :, None], s / 3.0


def find_cloth_region(frame_bgr: np.ndarray, work_width: int = 480) -> CoarseTable:
    """The cloth-coloured region round the image centre; raises CalibrationError saying why not."""
    if frame_bgr is None or frame_bgr.ndim != 3 or frame_bgr.shape[2] != 3:
        raise CalibrationError("expected a colour frame (H, W, 3)")
    H, W = frame_bgr.shape[:2]
    grey_full = cv2.cvtColor(frame_bgr, cv2.COLOR_BGR2GRAY)
    mean_grey = float(grey_full.mean())
    if mean_grey < 18:
        raise CalibrationError(
            f"the frame is too dark to find the table (mean grey {mean_grey:.0f}/255): switch the table lights on "
            "or lengthen the exposure"
        )
    if float((grey_full >= 250).mean()) > 0.4:
        raise CalibrationError(
            f"the frame is overexposed ({100 * float((grey_full >= 250).mean()):.0f}% of pixels saturated): "
            "shorten the exposure or lower the gain"
        )
    scale = min(1.0, work_width / float(W))
    small = cv2.resize(frame_bgr, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) if scale < 1 else frame_bgr
    small = cv2.GaussianBlur(small, (0, 0), 1.2)
    h, w = small.shape[:2]
    chrom, val = _chromaticity(small)
    y0, y1, x0, x1 = int(h * 0.35), int(h * 0.65), int(w * 0.35), int(w * 0.65)
    ref_c = np.median(chrom[y0:y1, x0:x1].reshape(-1, 3), axis=0)
    ref_v = float(np.median(val[y0:y1, x0:x1]))
    dist = np.linalg.norm(chrom - ref_c, axis=2)
    centre = dist[y0:y1, x0:x1]
    spread = float(np.median(np.abs(centre - np.median(centre)))) * 1.4826
    thr = max(0.045, 6.0 * spread + float(np.median(centre)))
    mask = ((dist < thr) & (val > 0.15 * ref_v)).astype(np.uint8)
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=4)
    if n <= 1:
        raise CalibrationError(
            "no table found: nothing of one cloth colour around the image centre (point the camera at the "
            "table so that the cloth fills the middle of the frame)"
        )
    counts = np.bincount(labels[y0:y1, x0:x1].ravel(), minlength=n)
    counts[0] = 0
    best = int(np.argmax(counts))
    if counts[best] < 0.5 * (y1 - y0) * (x1 - x0):
        raise CalibrationError(
            "no table found: the middle of the frame is not one even cloth colour (is the table in the centre "
            "of the view? is something covering it?)"
        )
    region = (labels == best).astype(np.uint8)
    area_frac = float(region.mean())
    if area_frac < 0.12:
        raise CalibrationError(
            f"no table found: the cloth-coloured region covers only {100 * area_frac:.0f}% of the frame "
            "(lower the camera or zoom in so that the table fills most of the view)"
        )
    if area_frac > 0.9 or spread > 0.05:
        raise CalibrationError(
            "no table found: no cloth region bounded by cushions (the frame is one colour, or the middle is not "
            "an even cloth); point the camera at the table so that cloth, cushions and rails are in view"
        )
    contours, _ = cv2.findContours(region, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    contour = max(contours, key=cv2.contourArea)
    hull = cv2.convexHull(contour)
    filled = np.zeros_like(region)
    cv2.drawContours(filled, [contour], -1, 1, -1)
    touches = _touches_border(hull.reshape(-1, 2), w, h)
    quad = _quad_from_hull(contour.reshape(-1, 2).astype(np.float64), hull.reshape(-1, 2).astype(np.float64))
    if quad is None:
        raise CalibrationError("no table found: the cloth region is not four-sided (is the whole table in view?)")
    if touches >= 1:
        raise CalibrationError(
            "the table is cut off by the frame edge: the cloth runs out of the picture, so a cushion is not in "
            "view; raise or centre the camera (or widen the lens) so that all four cushions and some rail show"
        )
    quad_full = quad / scale
    mask_full = cv2.resize(filled, (W, H), interpolation=cv2.INTER_NEAREST).astype(bool)
    lab_small = cv2.cvtColor(small, cv2.COLOR_BGR2LAB)
    cloth_lab = np.median(lab_small[y0:y1, x0:x1].reshape(-1, 3), axis=0)
    grey_small = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    lines = []
    for i in range(4):
        a, b = quad_full[i], quad_full[(i + 1) % 4]
        d = (b - a) / np.linalg.norm(b - a)
        lines.append((a, d))
    return CoarseTable(mask_full, quad_full, lines, cloth_lab, float(np.median(grey_small[y0:y1, x0:x1])))


def _touches_border(pts: np.ndarray, w: int, h: int) -> int:
    m = 2
    sides = [np.mean(pts[:, 0] <= m), np.mean(pts[:, 0] >= w - 1 - m), np.mean(pts[:, 1] <= m), np.mean(pts[:, 1] >= h - 1 - m)]
    return sum(1 for s in sides if s > 0.15)


def _fit_line(pts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    c = pts.mean(axis=0)
    _, _, vt = np.linalg.svd(pts - c)
    return c, vt[0]


def _intersect(l1, l2) -> np.ndarray | None:
    (p, d), (q, e) = l1, l2
    A = np.array([d, -e]).T
    if abs(np.linalg.det(A)) < 1e-9:
        return None
    s = np.linalg.solve(A, q - p)
    return p + s[0] * d


def _quad_from_hull(contour: np.ndarray, hull: np.ndarray) -> np.ndarray | None:
    """Four side lines from the region outline: hull edges grouped by direction, lines fitted robustly.

    Pool tables' pockets and balls on the cushions cut the region; the longest hull
    edges of each of four direction groups are the straight cushion stretches.
    """
    n = len(hull)
    if n < 4:
        return None
    centre = hull.mean(axis=0)
    # principal axis of the region: the long side of the table
    rect = cv2.minAreaRect(hull.astype(np.float32))
    ang = math.radians(rect[2])
    axes = [np.array([math.cos(ang), math.sin(ang)]), np.array([-math.sin(ang), math.cos(ang)])]
    normals = [axes[0], -axes[0], axes[1], -axes[1]]
    groups: list[list[tuple[float, np.ndarray, np.ndarray]]] = [[], [], [], []]
    for i in range(n):
        a, b = hull[i], hull[(i + 1) % n]
        seg = b - a
        L = float(np.linalg.norm(seg))
        if L < 1e-6:
            continue
        nrm = np.array([seg[1], -seg[0]]) / L
        if np.dot(nrm, (a + b) / 2 - centre) < 0:
            nrm = -nrm
        k = int(np.argmax([np.dot(nrm, m) for m in normals]))
        if np.dot(nrm, normals[k]) < math.cos(math.radians(35)):
            continue  # a corner cut (pocket), not a side
        groups[k].append((L, a, b))
    lines = []
    for k in range(4):
        if not groups[k]:
            return None
        total = sum(g[0] for g in groups[k])
        # contour points near the group's long hull edges: the straight stretches of that side
        pts = []
        for L, a, b in groups[k]:
            if L < 0.15 * total:
                continue
            d = (b - a) / L
            rel = contour - a
            along = rel @ d
            off = np.abs(rel @ np.array([-d[1], d[0]]))
            sel = (along > 0.05 * L) & (along < 0.95 * L) & (off < 2.5)
            pts.append(contour[sel])
        pts = np.vstack(pts) if pts else np.zeros((0, 2))
        if len(pts) < 10:
            L, a, b = max(groups[k], key=lambda g: g[0])
            pts = np.vstack([a, b])
        lines.append(_fit_line(pts))
    # order sides around the region: +axis0, +axis1, -axis0, -axis1
    order = [0, 2, 1, 3]
    ls = [lines[i] for i in order]
    quad = []
    for i in range(4):
        p = _intersect(ls[i - 1], ls[i])
        if p is None:
            return None
        quad.append(p)
    return np.array(quad)


# ---- stage 2: sub-pixel cushion noses ----------------------------------------------------------------
def _profiles(grey: np.ndarray, origins: np.ndarray, normal: np.ndarray, tangent: np.ndarray,
              start: float, stop: float, step: float = 0.25, width: int = 7) -> tuple[np.ndarray, np.ndarray]:
    """Grey profiles (N, S) along ``normal`` from each origin, averaged over ``width`` parallel lines."""
    s = np.arange(start, stop, step, dtype=np.float64)
    offs = np.arange(width, dtype=np.float64) - (width - 1) / 2.0
    xs = origins[:, None, None, 0] + s[None, None, :] * normal[0] + offs[None, :, None] * tangent[0]
    ys = origins[:, None, None, 1] + s[None, None, :] * normal[1] + offs[None, :, None] * tangent[1]
    n, m, k = xs.shape
    vals = cv2.remap(grey, xs.reshape(n * m, k).astype(np.float32), ys.reshape(n * m, k).astype(np.float32),
                     cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return s, vals.reshape(n, m, k).mean(axis=1)


def _gauss_smooth_rows(p: np.ndarray, sigma: float) -> np.ndarray:
    r = int(math.ceil(3 * sigma))
    x = np.arange(-r, r + 1)
    k = np.exp(-0.5 * (x / sigma) ** 2)
    k /= k.sum()
    padded = np.pad(p, ((0, 0), (r, r)), mode="edge")
    out = np.zeros_like(p)
    for i, kv in enumerate(k):
        out += kv * padded[:, i:i + p.shape[1]]
    return out


def rising_edges(s: np.ndarray, prof: np.ndarray, g_thr: float, min_rise: float = 0.0,
                 half_width: float = 2.0) -> tuple[np.ndarray, np.ndarray]:
    """Sub-pixel positions and strengths of the rising steps (going outwards) of a smoothed profile.

    A step must also rise by ``min_rise`` grey levels across +-``half_width`` px: the
    codec's ringing next to a strong edge makes steep but tiny wiggles.
    """
    step = s[1] - s[0]
    g = np.gradient(prof, step)
    k = np.nonzero((g[1:-1] > g_thr) & (g[1:-1] >= g[:-2]) & (g[1:-1] > g[2:]))[0] + 1
    if min_rise > 0 and len(k):
        m = max(1, int(round(half_width / step)))
        rise = prof[np.minimum(k + m, len(prof) - 1)] - prof[np.maximum(k - m, 0)]
        k = k[rise >= min_rise]
    if len(k) == 0:
        return np.zeros(0), np.zeros(0)
    a, b, c = g[k - 1], g[k], g[k + 1]
    den = a - 2 * b + c
    off = np.where(den < 0, 0.5 * (a - c) / np.where(den < 0, den, -1.0), 0.0)
    off = np.clip(off, -1.0, 1.0)
    return s[k] + off * step, b


def _nose_track(s, prof, ts, origins, nrm, cushion_px, rng_seed: int = 0):
    """The nose along one side: the innermost rising step that runs consistently along the side.

    Every profile offers its rising steps (the nose, the groove-to-rail step, balls,
    marks, codec wiggles). Usually each profile's innermost step is the nose (a dark
    band or shadow below it only adds a falling step inside), which a robust quadratic
    confirms; otherwise a RANSAC over quadratic tracks finds those many profiles share
    and takes the innermost well-supported one.
    """
    step = s[1] - s[0]
    i0, i1 = int(np.searchsorted(s, -2.9 * cushion_px)), int(np.searchsorted(s, -2.2 * cushion_px))
    g_cloth = np.gradient(prof[:, i0:i1], step, axis=1)
    noise_g = 1.4826 * float(np.median(np.abs(g_cloth - np.median(g_cloth))))
    g_thr = max(3.5 * noise_g, 0.6)
    noise_p = 1.4826 * float(np.median(np.abs(prof[:, i0:i1] - np.median(prof[:, i0:i1], axis=1, keepdims=True))))
    min_rise = max(3.0, 4.0 * noise_p)
    lo = int(np.searchsorted(s, -2.0 * cushion_px))
    cand_t, cand_s, cand_g, cand_k = [], [], [], []
    for k in range(len(ts)):
        pos, strength = rising_edges(s[lo:], prof[k, lo:], g_thr, min_rise, half_width=max(1.0, 0.09 * cushion_px))
        pos, strength = pos[:3], strength[:3]  # the nose is among the innermost steps; outside is rail texture
        cand_t += [ts[k]] * len(pos)
        cand_s += list(pos)
        cand_g += list(strength)
        cand_k += [k] * len(pos)
    if len(cand_t) < 12:
        return [], [], []
    T = np.array(cand_t)
    S = np.array(cand_s)
    G = np.array(cand_g)
    Kp = np.array(cand_k)
    rng = np.random.default_rng(rng_seed)
    tol = max(1.0, 0.06 * cushion_px)
    span = ts[-1] - ts[0]
    tn = (T - ts[0]) / max(span, 1e-9) - 0.5  # -0.5 .. 0.5 along the side
    n = len(T)
    # usually the nose is simply the innermost step of each profile (inside it there is only cloth)
    first = np.array([np.nonzero(Kp == k)[0][0] for k in np.unique(Kp)])
    coef1, keep1 = _robust_quadratic(tn[first], S[first], tol=tol)
    keep1 = np.abs(S[first] - np.polyval(coef1, (tn[first] - tn[first].mean()) / max(tn[first].std(), 1e-9))) < 2 * tol
    if keep1.sum() >= 0.6 * len(ts):
        picks = first[keep1]
        return ([origins[Kp[q]] + S[q] * nrm for q in picks], [ts[Kp[q]] for q in picks], [G[q] * 2.0 for q in picks])
    # else (shadow edges, balls along the cushion): the innermost track that many profiles share
    # three candidates from three stretches of the side define a quadratic track (lens distortion bends it)
    thirds = [np.nonzero(tn < -1 / 6)[0], np.nonzero(np.abs(tn) <= 1 / 6)[0], np.nonzero(tn > 1 / 6)[0]]
    if any(len(x) == 0 for x in thirds):
        return [], [], []
    tracks = []
    for _ in range(900):
        idx = [int(rng.choice(x)) for x in thirds]
        A = np.column_stack([tn[idx] ** 2, tn[idx], np.ones(3)])
        try:
            coef = np.linalg.solve(A, S[idx])
        except np.linalg.LinAlgError:
            continue
        if abs(coef[1]) > 0.05 * span or abs(coef[0]) > 0.03 * span:
            continue  # the coarse line runs close to the nose, and distortion bends it only a little
        res = np.abs(S - (coef[0] * tn**2 + coef[1] * tn + coef[2]))
        inl = res < tol
        support = len(np.unique(Kp[inl]))
        tracks.append((support, float(np.median(S[inl])), coef))
    if not tracks:
        return [], [], []
    # inside the nose there is only cloth (smooth: no steps but balls and marks, which no track
    # links); outside, rail texture offers steps everywhere. So: the innermost well-seen track.
    good = [t for t in tracks if t[0] >= 0.4 * len(ts)]
    if not good:
        return [], [], []
    support, _, coef = min(good, key=lambda t: t[1])
    for _ in range(3):
        pred = coef[0] * tn**2 + coef[1] * tn + coef[2]
        picks = []
        for k in range(len(ts)):
            sel = np.nonzero((Kp == k) & (np.abs(S - pred) < tol))[0]
            if len(sel):
                picks.append(sel[np.argmin(np.abs(S[sel] - pred[sel]))])
        if len(picks) < 6:
            return [], [], []
        picks = np.array(picks)
        coef = np.polyfit(tn[picks], S[picks], 2)
    pts = [origins[Kp[q]] + S[q] * nrm for q in picks]
    ok_t = [ts[Kp[q]] for q in picks]
    steps = [G[q] * 2.0 for q in picks]  # ~ the step over two pixels
    return pts, ok_t, steps


def _robust_quadratic(t: np.ndarray, e: np.ndarray, tol: float, iters: int = 8) -> tuple[np.ndarray, np.ndarray]:
    """Fit e ~ quadratic(t) robustly; returns (coef in normalised t, inlier mask).

    Starts from the line through the medians of the two halves (a run of outliers, a
    ball or a bright patch along a stretch of cushion, cannot pull it), then trimmed
    refits; the inlier scale comes from the inliers only.
    """
    tn = (t - t.mean()) / max(t.std(), 1e-9)
    lo, hi = tn < np.median(tn), tn >= np.median(tn)
    if lo.sum() >= 2 and hi.sum() >= 2:
        x1, y1, x2, y2 = np.median(tn[lo]), np.median(e[lo]), np.median(tn[hi]), np.median(e[hi])
        slope = (y2 - y1) / max(x2 - x1, 1e-9)
        r = e - (y1 + slope * (tn - x1))
        keep = np.abs(r - np.median(r)) < 4 * tol
    else:
        keep = np.ones(len(t), bool)
    for it in range(iters):
        deg = 1 if it < 2 else 2
        if keep.sum() < deg + 3:
            break
        coef = np.polyfit(tn[keep], e[keep], deg)
        r = e - np.polyval(coef, tn)
        sig = max(1.4826 * float(np.median(np.abs(r[keep]))), 0.05)
        new = np.abs(r) < (max(2 * tol, 3.0 * sig) if it < 2 else min(max(tol, 3.0 * sig), 2 * tol))
        if it >= 2 and np.array_equal(new, keep):
            break
        keep = new
    coef = np.polyfit(tn[keep], e[keep], 2) if keep.sum() >= 5 else np.zeros(3)
    return coef, keep


def find_cushion_edges(frame_bgr: np.ndarray, coarse: CoarseTable, table: TableSpec = DEFAULT_TABLE,
                       spacing_px: float = 3.0) -> CushionEdges:
    """Nose points along each of the four sides of ``coarse.quad`` (thresholds from each side's own cloth)."""
    grey = cv2.cvtColor(frame_bgr, cv2.COLOR_BGR2GRAY).astype(np.float32)
    quad = coarse.quad
    centre = quad.mean(axis=0)
    sides_len = [float(np.linalg.norm(quad[(i + 1) % 4] - quad[i])) for i in range(4)]
    # mm -> px along the table, from the longer pair of sides
    long_pair = max(sides_len[0] + sides_len[2], sides_len[1] + sides_len[3]) / 2.0
    px_per_mm = long_pair / (table.length + 2 * table.cushion_width)
    cushion_px = table.cushion_width * px_per_mm
    out = CushionEdges([], [], [], [], [], [])
    for i in range(4):
        a, b = quad[i], quad[(i + 1) % 4]
        L = float(np.linalg.norm(b - a))
        d = (b - a) / L
        nrm = np.array([-d[1], d[0]])
        if np.dot(nrm, centre - (a + b) / 2) > 0:
            nrm = -nrm  # outwards
        # keep away from the corners (pockets, the cushion's turn)
        ts = np.arange(0.06 * L + 2 * cushion_px, 0.94 * L - 2 * cushion_px, spacing_px)
        origins = a[None, :] + ts[:, None] * d[None, :]
        s, prof = _profiles(grey, origins, nrm, d, -3.0 * cushion_px, 3.2 * cushion_px)
        # ~1.4 px at 1456 px wide, scaled with the cushion: averages out sensor noise and the
        # codec's blocks (H.264 moves a lightly smoothed edge by up to a pixel); NoseEdge is
        # measured with this smoothing
        prof = _gauss_smooth_rows(prof, sigma=max(0.6, 0.064 * cushion_px) / (s[1] - s[0]))
        pts, ok_t, steps = _nose_track(s, prof, ts, origins, nrm, cushion_px)
        scanned = len(ts)
        if len(pts) < 12:
            raise CalibrationError(
                f"cushion {i + 1} of 4: the nose edge was found in only {len(pts)} of {scanned} places "
                "(is the cushion in view and lit? is something lying along it?)"
            )
        pts_a = np.array(pts)
        t_a = np.array(ok_t)
        e_a = (pts_a - a) @ nrm
        coef, keep = _robust_quadratic(t_a, e_a, tol=0.8)
        if keep.sum() < 10:
            raise CalibrationError(f"cushion {i + 1} of 4: no consistent nose line (too many profiles disagree)")
        r = e_a - np.polyval(coef, (t_a - t_a.mean()) / max(t_a.std(), 1e-9))
        out.points.append(pts_a[keep])
        out.rejected.append(int(scanned - keep.sum()))
        out.scanned.append(int(scanned))
        out.residual_px.append(float(np.sqrt(np.mean(r[keep] ** 2))))
        out.contrast.append(float(np.median(np.array(steps)[keep])))
        out.outer.append((a, d))
    return out


def fit_side_curves(edges: CushionEdges) -> list[np.ndarray]:
    """Per side, dense points of its robust quadratic (for drawing and line-error measurement)."""
    curves = []
    for pts in edges.points:
        c, d = _fit_line(pts)
        t = (pts - c) @ d
        nrm = np.array([-d[1], d[0]])
        e = (pts - c) @ nrm
        coef = np.polyfit(t, e, 2)
        tt = np.linspace(t.min(), t.max(), 60)
        curves.append(c + tt[:, None] * d + np.polyval(coef, tt)[:, None] * nrm)
    return curves


def guided_cushion_edges(frame_bgr: np.ndarray, predicted: dict[str, np.ndarray], cushion_px: float,
                         window_px: float | None = None, spacing_px: float = 3.0) -> dict[str, np.ndarray]:
    """Nose points re-found near where a camera puts each nose (``predicted``: dense curve per cushion).

    Each profile runs across the predicted curve (its local normal, pointing away
    from the table centre) and takes the rising step nearest the prediction within
    ``window_px``: a side first taken from the wrong edge (the rail, a shadow line)
    is re-found from a camera the other evidence (the diamonds) fixed.
    """
    grey = cv2.cvtColor(frame_bgr, cv2.COLOR_BGR2GRAY).astype(np.float32)
    window_px = window_px if window_px is not None else max(2.0, 0.25 * cushion_px)
    centre = np.mean(np.vstack(list(predicted.values())), axis=0)
    out: dict[str, np.ndarray] = {}
    for name, curve in predicted.items():
        seg = np.linalg.norm(np.diff(curve, axis=0), axis=1)
        arc = np.concatenate([[0.0], np.cumsum(seg)])
        ts = np.arange(arc[-1] * 0.04, arc[-1] * 0.96, spacing_px)
        origins = np.column_stack([np.interp(ts, arc, curve[:, 0]), np.interp(ts, arc, curve[:, 1])])
        tang = np.gradient(origins, axis=0)
        tang /= np.linalg.norm(tang, axis=1, keepdims=True)
        nrm = np.column_stack([-tang[:, 1], tang[:, 0]])
        flip = np.sum(nrm * (origins - centre), axis=1) < 0
        nrm[flip] *= -1
        pts = []
        for k in range(len(ts)):
            s, prof = _profiles(grey, origins[k:k + 1], nrm[k], tang[k], -1.2 * cushion_px, 1.2 * cushion_px)
            prof = _gauss_smooth_rows(prof, sigma=max(0.6, 0.064 * cushion_px) / (s[1] - s[0]))
            pos, _ = rising_edges(s, prof[0], 0.6, 3.0, half_width=max(1.0, 0.09 * cushion_px))
            if len(pos) == 0:
                continue
            j = int(np.argmin(np.abs(pos)))
            if abs(pos[j]) <= window_px:
                pts.append(origins[k] + pos[j] * nrm[k])
        if len(pts) >= 12:
            p = np.array(pts)
            c0 = p.mean(axis=0)
            _, _, vt = np.linalg.svd(p - c0)
            _, keep = _robust_quadratic((p - c0) @ vt[0], (p - c0) @ vt[1], tol=max(0.8, 0.04 * cushion_px))
            out[name] = p[keep]
    return out
