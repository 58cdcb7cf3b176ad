"""Automatic calibration from still frames of the table: pose, lens, set-up objects, colours, background.

``calibrate_from_frames`` runs the whole chain on a few frames of a still table:
median of the frames (less noise), the cloth region and the sub-pixel cushion
noses (:mod:`table_detect`), the camera fit (:mod:`pose`) refined with the rail
diamonds and cloth marks found near their predicted places (:mod:`features`), the
set-up objects (balls and standing pins, :func:`find_setup_positions`), the colour
models from them (:func:`colours.learn_colours`, the same code the ground-truth
profile uses) and an empty-table background with the objects painted out.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from vision_ref.calibrate import colours as C
from vision_ref.calibrate.features import find_marks
from vision_ref.calibrate.pose import CUSHION_ORDER, NoseEdge, assign_cushions, fit_pose, initial_camera
from vision_ref.calibrate.profile import CalibrationProfile
from vision_ref.calibrate.table_detect import find_cloth_region, find_cushion_edges
from vision_ref.camera import CameraModel
from vision_ref.errors import CalibrationError
from vision_ref.rules.table import DEFAULT_TABLE, PIN_IDS, TableSpec

BACKGROUND_SCALE = 0.5


def median_frame(frames_bgr: list[np.ndarray]) -> np.ndarray:
    if not frames_bgr:
        raise CalibrationError("no frames to calibrate from")
    shapes = {f.shape for f in frames_bgr}
    if len(shapes) != 1:
        raise CalibrationError(f"the frames differ in size: {sorted(shapes)}")
    if len(frames_bgr) == 1:
        return frames_bgr[0]
    return np.median(np.stack(frames_bgr[:15]), axis=0).astype(np.uint8)


def locate_table(frame: np.ndarray, *, lens: CameraModel | None = None, table: TableSpec = DEFAULT_TABLE,
                 edge: NoseEdge | None = None, corners: list | None = None,
                 positions: C.SetupPositions | None = None, initial=None):
    """Camera pose from one frame: returns (PoseFit, CushionEdges | None, MarkSet, info dict).

    Marks used: the rail diamonds always; the cloth marks (spots, pin places) only
    when ``positions`` says which of them objects cover (a pin's head on its place
    looks like a mark but is 70 mm up).
    """
    H, W = frame.shape[:2]
    edge = edge or NoseEdge.for_table(table)
    if lens is not None and (lens.width, lens.height) != (W, H):
        raise CalibrationError(
            f"the lens calibration is for {lens.width}x{lens.height} frames but these are {W}x{H}; "
            "calibrate the lens in this camera mode"
        )
    info: dict = {}
    if corners is not None:
        fit = _fit_from_corners(frame, corners, lens, table, edge)
        marks = find_marks(frame, fit.camera, table)
        info["marks_found"] = []
        return fit, None, _select_marks(marks, table, positions), info
    coarse = find_cloth_region(frame)
    cam_edges = find_cushion_edges(frame, coarse, table)
    names = assign_cushions(coarse.quad)
    edges = {n: p for n, p in zip(names, cam_edges.points)}
    info["edge_points"] = {n: int(len(p)) for n, p in edges.items()}
    info["edge_profiles_rejected"] = {n: int(r) for n, r in zip(names, cam_edges.rejected)}
    fit = fit_pose(edges, (W, H), table, edge, lens, initial=initial)
    marks = _select_marks(find_marks(frame, fit.camera, table), table, positions)
    for _ in range(2):
        if len(marks.names) == 0:
            break
        fit = fit_pose(edges, (W, H), table, edge, lens, marks.world, marks.image, initial=fit.camera)
        marks = _select_marks(find_marks(frame, fit.camera, table), table, positions)
    fit, edges, marks = _check_with_diamonds(frame, fit, edges, marks, lens, table, edge, positions, info)
    cam_edges.points = [edges[n] for n in names]
    info["marks_found"] = list(marks.names)
    return fit, cam_edges, marks, info


def _check_with_diamonds(frame, fit, edges, marks, lens, table, edge, positions, info):
    """The rail diamonds must agree with the cushion lines; if they do not, trust the diamonds.

    A side taken from the wrong edge (the rail's, when the nose's step is lost in side
    light and compression) does not show in its own fit: the table's size absorbs it.
    The diamonds, looked for in a wide window, do show it. Then the camera is fitted
    to the diamonds first, every nose re-found near where that camera puts it, and the
    whole fit repeated; if they still disagree the calibration is refused.
    """
    H, W = frame.shape[:2]
    cushion_px = table.cushion_width / fit.camera.mm_per_pixel(edge.height_mm)
    wide = _select_marks(find_marks(frame, fit.camera, table, search_px=max(6.0, 0.9 * cushion_px)), table, None)
    if len(wide.names) < 8:
        return fit, edges, marks
    res = np.linalg.norm(fit.camera.project(wide.world) - wide.image, axis=1)
    if np.median(res) < 1.5:
        return fit, edges, marks
    info.setdefault("notes", []).append(
        f"cushion lines and rail diamonds disagreed by {np.median(res):.1f} px: noses re-found from the diamonds")
    f_d = fit_pose(edges, (W, H), table, edge, lens, wide.world, wide.image, point_weight=40.0, initial=fit.camera)
    guided = _guided_edges(frame, f_d.camera, table, edge)
    if any(len(guided.get(n, ())) < 12 for n in CUSHION_ORDER):
        raise CalibrationError(
            f"the cushion lines and the rail diamonds disagree by {np.median(res):.1f} px and the noses could not be "
            "re-found: light the cushions more evenly (no strong side light) or give the corners with --corners"
        )
    fit = fit_pose(guided, (W, H), table, edge, lens, wide.world, wide.image, initial=f_d.camera)
    marks = _select_marks(find_marks(frame, fit.camera, table), table, positions)
    fit = fit_pose(guided, (W, H), table, edge, lens, marks.world, marks.image, initial=fit.camera)
    res = np.linalg.norm(fit.camera.project(marks.world) - marks.image, axis=1) if len(marks.names) else np.zeros(1)
    if np.median(res) > 1.5:
        raise CalibrationError(
            f"the cushion lines and the rail diamonds disagree by {np.median(res):.1f} px: light the cushions more "
            "evenly (no strong side light) or give the corners with --corners"
        )
    return fit, guided, marks


def _guided_edges(frame, cam: CameraModel, table: TableSpec, edge: NoseEdge) -> dict:
    from vision_ref.calibrate.pose import cushion_coordinate
    from vision_ref.calibrate.table_detect import guided_cushion_edges

    curves = {}
    t = np.linspace(-1.0, 1.0, 200)
    for c in CUSHION_ORDER:
        axis, v = cushion_coordinate(c, table, edge)
        if axis == 0:
            P = np.column_stack([np.full_like(t, v), t * table.half_width, np.full_like(t, edge.height_mm)])
        else:
            P = np.column_stack([t * table.half_length, np.full_like(t, v), np.full_like(t, edge.height_mm)])
        curves[c] = cam.project(P)
    return guided_cushion_edges(frame, curves, table.cushion_width / cam.mm_per_pixel(edge.height_mm))


def _select_marks(marks, table: TableSpec, positions: C.SetupPositions | None):
    """Diamonds always; cloth marks only when known to be uncovered (see :func:`locate_table`)."""
    from vision_ref.calibrate.features import MarkSet

    keep = []
    for i, (n, P) in enumerate(zip(marks.names, marks.world)):
        if n.startswith("diamond"):
            keep.append(i)
            continue
        if positions is None:
            continue
        objs = list(positions.balls.values()) + list(positions.pins.values())
        if all(np.hypot(P[0] - o[0], P[1] - o[1]) > 2.5 * table.ball_radius for o in objs):
            keep.append(i)
    k = np.array(keep, dtype=int)
    return MarkSet([marks.names[i] for i in keep], marks.world[k].reshape(-1, 3), marks.image[k].reshape(-1, 2),
                   marks.predicted[k].reshape(-1, 2))


def _fit_from_corners(frame, corners, lens, table, edge):
    """Manual fallback: four given playing-area corners (in any order) -> camera (no sub-pixel edges)."""
    from vision_ref.calibrate.pose import PoseFit

    H, W = frame.shape[:2]
    pts = np.asarray(corners, dtype=np.float64).reshape(-1, 2)
    if pts.shape != (4, 2):
        raise CalibrationError("--corners needs exactly four x,y points")
    if np.any(pts < 0) or np.any(pts[:, 0] >= W) or np.any(pts[:, 1] >= H):
        raise CalibrationError(f"--corners: every corner must lie inside the {W}x{H} frame")
    # order them round the centre, then reuse the edge machinery with two points per cushion
    c = pts.mean(axis=0)
    ang = np.arctan2(pts[:, 1] - c[1], pts[:, 0] - c[0])
    quad = pts[np.argsort(ang)]
    names = assign_cushions(quad)
    edges = {}
    for i, n in enumerate(names):
        a, b = quad[i], quad[(i + 1) % 4]
        t = np.linspace(0.1, 0.9, 9)[:, None]
        edges[n] = a + t * (b - a)
    # corners are clicked at the nose itself, not at the detected face-to-top step; four points
    # fix the pose exactly (IPPE), the lens (or a focal estimate from the homography) the rest
    nose = NoseEdge(0.0, table.cushion_nose_height)
    cam = initial_camera(edges, (W, H), table, nose, lens)
    fit = PoseFit(cam, {n: 0.0 for n in names}, float("nan"), 4, 0, lens is None, 0, 1.0)
    fit.notes.append("manual corners: pose from four points, no sub-pixel edges" +
                     ("" if lens is not None else ", no lens file: focal length from the view's perspective, no distortion"))
    return fit


def _ball_blobs(frame: np.ndarray, cam: CameraModel, table: TableSpec, cloth: C.ColourModel):
    """Ball-sized non-cloth blobs inside the playing area: list of (pixel centroid, mean Lab, area ratio)."""
    lab = C.to_lab(frame)
    H, W = frame.shape[:2]
    m = np.zeros((H, W), np.uint8)
    poly = C.cloth_polygon_px(cam, table, 5.0)
    cv2.fillPoly(m, [np.round(poly).astype(np.int32)], 1)
    inside = m > 0
    d2 = C.colour_distance2(cloth, lab.reshape(-1, 3)).reshape(H, W)
    # against the local cloth shade too: on a grey cloth under one lamp the cloth's global spread
    # of lightness is as large as a white ball's difference from it
    r_px = C.ball_radius_px(cam, (0.0, 0.0), table)
    k = int(2 * round(2.5 * r_px * 0.5) + 1)
    L = lab[:, :, 0]
    L_small = cv2.resize(L, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)
    L_local = cv2.resize(cv2.medianBlur(L_small, max(k, 3)), (W, H), interpolation=cv2.INTER_LINEAR)
    local = np.abs(L.astype(np.int16) - L_local.astype(np.int16)) > 28
    fg = (((d2 > 60.0) | local) & inside).astype(np.uint8)
    fg = cv2.morphologyEx(fg, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
    n, labels, stats, cents = cv2.connectedComponentsWithStats(fg, connectivity=8)
    out = []
    for k in range(1, n):
        cx, cy = cents[k]
        xy = cam.pixels_to_plane(np.array([[cx, cy]]), table.ball_radius)[0]
        r_px = C.ball_radius_px(cam, xy, table)
        ratio = stats[k, cv2.CC_STAT_AREA] / (np.pi * r_px * r_px)
        if 0.45 <= ratio <= 1.8:
            sel = labels == k
            out.append((np.array([cx, cy]), lab[sel].reshape(-1, 3).mean(axis=0), float(ratio), xy))
    return out


def find_setup_positions(frame: np.ndarray, cam: CameraModel, table: TableSpec = DEFAULT_TABLE) -> tuple[C.SetupPositions, list[str]]:
    """Where the three balls and the standing pins are (whites on spots 1 and 3 expected, cue ball anywhere)."""
    notes: list[str] = []
    empty = C.SetupPositions(balls={}, pins={})
    cloth_mask = C.cloth_mask(frame.shape, cam, table, empty)
    lab = C.to_lab(frame)
    cloth = C.fit_colour(lab[cloth_mask])  # robust trimming drops the balls and pins inside the mask
    blobs = _ball_blobs(frame, cam, table, cloth)
    if len(blobs) < 3:
        raise CalibrationError(
            f"the set-up position needs the three balls on the cloth (whites on spots 1 and 3); found {len(blobs)} "
            "ball-sized object(s). Put the balls on the table, or check that the light is even"
        )
    # the cue ball is the odd colour out among the three most ball-like blobs
    blobs = sorted(blobs, key=lambda b: abs(np.log(b[2])))[:3]
    cols = np.array([b[1] for b in blobs])
    dsum = [sum(np.linalg.norm(cols[i] - cols[j]) for j in range(3) if j != i) for i in range(3)]
    cue_i = int(np.argmax(dsum))
    whites = [b for i, b in enumerate(blobs) if i != cue_i]
    sep = min(np.linalg.norm(cols[cue_i] - w[1]) for w in whites)
    if sep < 8.0:
        notes.append(f"the cue ball's colour is close to the whites' (Lab distance {sep:.1f}): identities may be weak")
    whites.sort(key=lambda b: b[3][0])  # white1 nearer the head (spot 1), white2 the foot (spot 3)
    balls = {"cue": tuple(map(float, _refine_ball_centre(frame, cam, table, blobs[cue_i][3]))),
             "white1": tuple(map(float, _refine_ball_centre(frame, cam, table, whites[0][3]))),
             "white2": tuple(map(float, _refine_ball_centre(frame, cam, table, whites[1][3])))}
    for w, n in ((balls["white1"], 1), (balls["white2"], 3)):
        dd = float(np.hypot(w[0] - table.ball_spot(n)[0], w[1] - table.ball_spot(n)[1]))
        if dd > 40:
            notes.append(f"a white is {dd:.0f} mm from spot {n} (not the standard set-up)")
    pins = {}
    for p in PIN_IDS:
        xy = table.pin_spot(p)
        core = C.pin_core_mask(frame.shape, cam, p, xy, table)
        if not core.any():
            continue
        d2 = C.colour_distance2(cloth, lab[core])
        # or against the cloth right round the place (a grey cloth's global spread hides a pin)
        ring = C.pin_core_mask(frame.shape, cam, p, xy, table, fraction=3.0) & ~C.pin_core_mask(
            frame.shape, cam, p, xy, table, fraction=1.8)
        local_L = float(np.median(lab[ring][:, 0])) if ring.any() else float(cloth.mean[0])
        differs = (d2 > 30.0) | (np.abs(lab[core][:, 0].astype(np.float64) - local_L) > 25.0)
        if np.mean(differs) > 0.5:
            pins[p] = xy
        else:
            notes.append(f"the {p} pin is not standing on its place")
    return C.SetupPositions(balls=balls, pins=pins), notes


def _refine_ball_centre(frame, cam, table, xy0):
    """Ball centre (table mm, at ball height) from the circle through its silhouette edge."""
    grey = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY).astype(np.float32)
    u0 = cam.project(np.array([[xy0[0], xy0[1], table.ball_radius]]))[0]
    r = C.ball_radius_px(cam, xy0, table)
    angs = np.linspace(0, 2 * np.pi, 48, endpoint=False)
    s = np.linspace(0.5 * r, 1.5 * r, 41)
    pts = []
    for a in angs:
        d = np.array([np.cos(a), np.sin(a)])
        xs = (u0[0] + s * d[0]).astype(np.float32)[None]
        ys = (u0[1] + s * d[1]).astype(np.float32)[None]
        prof = cv2.remap(grey, xs, ys, cv2.INTER_LINEAR).ravel()
        g = np.abs(np.gradient(prof))
        k = int(np.argmax(g))
        if 0 < k < len(s) - 1:
            pts.append(u0 + s[k] * d)
    if len(pts) < 12:
        return xy0
    pts = np.array(pts)
    # algebraic circle fit, then trim the worst (shadows, neighbours) and refit
    for _ in range(2):
        A = np.column_stack([2 * pts[:, 0], 2 * pts[:, 1], np.ones(len(pts))])
        b = (pts ** 2).sum(axis=1)
        sol = np.linalg.lstsq(A, b, rcond=None)[0]
        c = sol[:2]
        rad = np.sqrt(max(sol[2] + c @ c, 1e-9))
        res = np.abs(np.linalg.norm(pts - c, axis=1) - rad)
        keep = res < max(1.0, 2.5 * np.median(res))
        pts = pts[keep]
        if len(pts) < 10:
            break
    if abs(rad - r) > 0.35 * r or np.linalg.norm(c - u0) > 0.6 * r:
        return xy0
    return cam.pixels_to_plane(c[None], table.ball_radius)[0]


def empty_table_background(frame: np.ndarray, cam: CameraModel, positions: C.SetupPositions, table: TableSpec,
                           scale: float = BACKGROUND_SCALE) -> np.ndarray:
    """The set-up frame with the balls, pins and their shadows painted out (the cloth under them unseen)."""
    H, W = frame.shape[:2]
    m = np.zeros((H, W), np.uint8)
    px_mm = 1.0 / cam.mm_per_pixel()
    for xy in positions.balls.values():
        u = cam.project(np.array([[xy[0], xy[1], table.ball_radius]]))[0]
        cv2.circle(m, (int(round(u[0])), int(round(u[1]))), int(np.ceil(2.0 * table.ball_radius * px_mm + 3)), 255, -1)
    for p, xy in positions.pins.items():
        for z in (0.0, table.pin_height_of(p)):
            u = cam.project(np.array([[xy[0], xy[1], z]]))[0]
            cv2.circle(m, (int(round(u[0])), int(round(u[1]))), int(np.ceil((0.5 * table.pin_height_of(p) + 12) * px_mm + 2)), 255, -1)
    small = cv2.resize(frame, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    ms = cv2.resize(m, (small.shape[1], small.shape[0]), interpolation=cv2.INTER_NEAREST)
    return cv2.inpaint(small, ms, 5, cv2.INPAINT_TELEA)


def _as_lens(lens):
    """A CameraModel, or a path to a lens JSON (or a profile / NAME.camera.json whose intrinsics to reuse)."""
    if lens is None or isinstance(lens, CameraModel):
        return lens
    from vision_ref.calibrate.lens import load_lens

    return load_lens(lens)


def calibrate_from_frames(frames_bgr: list[np.ndarray], *, lens: CameraModel | None = None,
                          table: TableSpec = DEFAULT_TABLE, source: str = "", corners: list | None = None,
                          edge: NoseEdge | None = None, details: dict | None = None) -> CalibrationProfile:
    """A calibration profile from still frames of the set-up table (raises CalibrationError saying why not).

    ``details``, when given, receives the frame used, the edge points, marks and set-up positions (for the preview).
    """
    frame = median_frame(list(frames_bgr))
    lens = _as_lens(lens)
    edge = edge or NoseEdge.for_table(table)
    fit, cam_edges, marks, info = locate_table(frame, lens=lens, table=table, edge=edge, corners=corners)
    positions, notes = find_setup_positions(frame, fit.camera, table)
    if corners is None:
        # again with the cloth marks that no object covers (an empty table shows them all)
        fit, cam_edges, marks, info = locate_table(frame, lens=lens, table=table, edge=edge, positions=positions,
                                                   initial=fit.camera)
        positions, notes = find_setup_positions(frame, fit.camera, table)
    cam = fit.camera
    if details is not None:
        details.update(frame=frame, edges=cam_edges, marks=marks, positions=positions, fit=fit)
    models = C.learn_colours(frame, cam, positions, table)
    bg = empty_table_background(frame, cam, positions, table)
    quality = {
        "edge_rms_px": round(float(np.nanmean(list(fit.edge_rms_px.values()))), 4),
        **{f"edge_rms_px_{k}": round(v, 4) for k, v in fit.edge_rms_px.items()},
        "edge_points": float(fit.n_edge_points),
        "edge_inlier_fraction": round(fit.inlier_fraction, 4),
        "marks_found": float(len(marks.names)),
        "mark_rms_px": round(fit.point_rms_px, 4) if np.isfinite(fit.point_rms_px) else -1.0,
        "mm_per_px": round(cam.mm_per_pixel(), 4),
        **{f"sep_{k}": round(v, 2) for k, v in C.identity_check(models).items()},
    }
    if cam_edges is not None:
        quality["edge_contrast"] = round(float(np.median(cam_edges.contrast)), 2)
    return CalibrationProfile(
        camera=cam, table=table, colours=models, background=bg, background_scale=BACKGROUND_SCALE,
        source=source, quality=quality,
        extra={
            "method": "corners" if corners is not None else "auto",
            "lens": "given" if lens is not None else "estimated (f, k1, k2 from the table)",
            "nose_edge": edge.to_dict(),
            "setup_positions": positions.to_dict(),
            "notes": notes + fit.notes + info.get("notes", []),
            "cushion_points": {k: v for k, v in info.get("edge_points", {}).items()},
            "marks_found": info.get("marks_found", []),
        },
    )


def first_still_frames(frames, n: int = 8, max_scan: int = 600, still_level: float = 1.2):
    """(index of the first frame of a still run, up to ``n`` BGR frames of it) from an iterable of Frames."""
    prev = None
    run: list[np.ndarray] = []
    start = None
    seen = 0
    for fr in frames:
        seen += 1
        bgr = fr.bgr if fr.bgr is not None else cv2.cvtColor(fr.y, cv2.COLOR_GRAY2BGR)
        small = cv2.resize(cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY), None, fx=0.25, fy=0.25, interpolation=cv2.INTER_AREA).astype(np.float32)
        if prev is not None:
            moving = float(np.mean(np.abs(small - prev) > 12.0)) * 100.0  # % of pixels that changed clearly
            if moving < still_level:
                if start is None:
                    start = fr.index - 1
                    run = [prev_bgr]
                run.append(bgr)
                if len(run) >= n:
                    return start, run
            else:
                start, run = None, []
        prev, prev_bgr = small, bgr
        if seen >= max_scan:
            break
    if run:
        return start, run
    if prev is not None and seen == 1:
        return 0, [prev_bgr]
    raise CalibrationError(
        f"no still stretch in the first {seen} frames: calibrate from a moment when nothing moves on the table"
    )


def calibrate_from_video(path, *, lens: CameraModel | None = None, table: TableSpec = DEFAULT_TABLE,
                         n_frames: int = 8, corners: list | None = None) -> tuple[CalibrationProfile, int]:
    """Calibrate from the first still frames of a video: (profile, index of the first still frame used).

    Without ``lens``, a ``NAME.lens.json`` next to ``NAME.mp4`` is used when present.
    """
    from vision_ref.errors import VideoError
    from vision_ref.video import VideoReader

    path = Path(path)
    if not path.exists():
        raise CalibrationError(f"video {path} does not exist")
    sidecar = path.with_suffix(".lens.json")
    if lens is None and sidecar.exists():
        lens = sidecar  # the camera's lens calibration kept next to its footage
    lens = _as_lens(lens)
    reader = VideoReader(path, mode="bgr", strict=False)
    try:
        start, frames = first_still_frames(iter(reader), n=n_frames)
    except VideoError as exc:
        raise CalibrationError(f"cannot read {path}: {exc}") from None
    prof = calibrate_from_frames(frames, lens=lens, table=table, source=str(path), corners=corners)
    prof.extra["first_still_frame"] = int(start)
    return prof, int(start)
