"""Calibration accuracy on rendered set-ups with known cameras, and table outlines on real frames.

    python benchmarks/calibration.py [--quick] [--size 1456x1088] [--out DIR]

Rendered part: each case draws a camera (tilt, roll, offset, height, lens
distortion), a cloth colour, a cue-ball colour, a lamp layout and a cue-ball
place, renders three still frames of the set-up and calibrates them

- ``lens``:    with the lens calibrated by ChArUco from 8 synthetic board views of
               the same lens (``vision_ref.calibrate.lens``), as a user would;
- ``nolens``:  with focal length and k1, k2 estimated from the table itself;
- baselines:   ``quad4`` the common approach: four corners of the cloth region,
               cv2.getPerspectiveTransform to the playing area, no lens model, no
               cushion height; ``corner4`` the same with our sub-pixel nose corners.

Measured: table points on a grid over the cloth (z = 0) and at ball-centre height
mapped through the calibration vs the truth (median and worst, mm), the
seen-cushion-line error against the true camera (px, worst point of any cushion),
and identities (cue ball and whites found where they are and told apart by the
learnt colours; the five pins found standing; the king's colour nearer its own
model than the plain pins').

Real part (``../shared/real/``, evaluation only, never committed): the cloth
region and sub-pixel nose edges on the pool frames; the outline (the four
per-side curves) is written as a preview PNG to check by eye, and the edge points'
rms about their curves is printed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from vision_ref.calibrate import colours as C  # noqa: E402
from vision_ref.calibrate.auto import calibrate_from_frames  # noqa: E402
from vision_ref.calibrate.lens import BoardSpec, board_view_cameras, calibrate_lens, render_board_view  # noqa: E402
from vision_ref.calibrate.pose import NoseEdge, assign_cushions, corner_points, edge_line_error_px  # noqa: E402
from vision_ref.calibrate.table_detect import find_cloth_region, find_cushion_edges, fit_side_curves  # noqa: E402
from vision_ref.calibrate.truth import StillScene  # noqa: E402
from vision_ref.camera import CameraModel  # noqa: E402
from vision_ref.errors import CalibrationError  # noqa: E402
from vision_ref.rules.table import DEFAULT_TABLE as T  # noqa: E402

REAL = ROOT.parent / "shared" / "real"
CLOTHS = ["carom-blue", "green", "blue", "teal", "grey"]
CUES = ["red", "yellow", "orange"]
LAMPS = ["three", "window", "two", "four", "single"]
LENSES = [(-0.06, 0.012, 1070.0), (-0.11, 0.03, 1000.0), (-0.03, 0.0, 1050.0)]  # k1, k2, focal px at 1456 wide


def grid(z: float, inset: float = 15.0) -> np.ndarray:
    xs, ys = np.meshgrid(np.linspace(-T.half_length + inset, T.half_length - inset, 41),
                         np.linspace(-T.half_width + inset, T.half_width - inset, 21))
    return np.column_stack([xs.ravel(), ys.ravel(), np.full(xs.size, z)])


def map_errors(cam_true: CameraModel, to_table, z: float) -> tuple[float, float]:
    P = grid(z)
    back = to_table(cam_true.project(P))
    e = np.linalg.norm(back - P[:, :2], axis=1)
    return float(np.median(e)), float(e.max())


def cases(quick: bool, size, seed: int = 7):
    rng = np.random.default_rng(seed)
    n = 4 if quick else 12
    out = []
    for i in range(n):
        k1, k2, f = LENSES[i % (2 if quick else len(LENSES))]
        f *= size[0] / 1456.0
        out.append(dict(
            name=f"case{i}",
            camera=dict(tilt_deg=float(rng.uniform(-8, 8)) if i else 0.0, roll_deg=float(rng.uniform(-2.5, 2.5)),
                        offset_mm=(float(rng.uniform(-60, 60)), float(rng.uniform(-50, 50))),
                        camera_height_mm=float(rng.uniform(2420, 2700)), dist=(k1, k2, 0.0, 0.0, 0.0), focal_px=f),
            lens_key=(k1, k2, f),
            cloth=CLOTHS[i % len(CLOTHS)], cue=CUES[i % len(CUES)], lamps=LAMPS[i % len(LAMPS)],
            cue_xy=(float(rng.uniform(-1300, -800)), float(rng.uniform(-550, 550))),
            seed=int(i),
        ))
    return out


def lens_for(base: CameraModel, cache: dict, key) -> tuple[CameraModel, float]:
    if key not in cache:
        spec = BoardSpec()
        # a lens calibrated for one focal length serves cameras with the same intrinsics
        cams = board_view_cameras(base, spec, n=8, seed=11)
        views = [render_board_view(c, spec, px_per_mm=6.0, seed=j) for j, c in enumerate(cams)]
        cal = calibrate_lens(views, spec)
        cache[key] = (cal.camera, cal.rms_px)
    return cache[key]


def identities(prof, frame, cam_true, case) -> dict:
    pos = prof.extra["setup_positions"]
    truth_b = {"cue": case["cue_xy"], "white1": T.ball_spot(1), "white2": T.ball_spot(3)}
    ok_place = all(np.hypot(*(np.array(pos["balls"][b]) - truth_b[b])) < 15.0 for b in truth_b)
    lab = C.to_lab(frame)
    ok_colour = True
    for b, xy in truth_b.items():
        m = C.ball_core_mask(frame.shape, cam_true, xy, T, fraction=0.6)
        px = lab[m]
        d_cue = np.median(C.colour_distance2(prof.colours["cue"], px))
        d_white = np.median(C.colour_distance2(prof.colours["white"], px))
        ok_colour &= (d_cue < d_white) == (b == "cue")
    pins_ok = set(pos["pins"]) == {"king", "head", "foot", "left", "right"}
    king_ok = True
    if "king" in prof.colours and "pin" in prof.colours:
        for p in ("king", "head", "foot", "left", "right"):
            m = C.pin_core_mask(frame.shape, cam_true, p, T.pin_spot(p), T)
            px = lab[m]
            ll_k = np.mean(C.colour_distance2(prof.colours["king"], px) + np.log(np.linalg.det(prof.colours["king"].cov)))
            ll_p = np.mean(C.colour_distance2(prof.colours["pin"], px) + np.log(np.linalg.det(prof.colours["pin"].cov)))
            king_ok &= (ll_k < ll_p) == (p == "king")
    return {"balls_placed": ok_place, "cue_by_colour": bool(ok_colour), "pins_standing": pins_ok, "king_by_colour": bool(king_ok)}


def h264_roundtrip(frames, path: Path) -> list[np.ndarray]:
    """The frames as the sample videos carry them: H.264 at crf 26, decoded again."""
    from vision_ref.video import VideoReader, write_video

    write_video(path, frames * 3, fps=60.0, crf=26)
    return [f.bgr for f in VideoReader(path)][: len(frames) * 3]


def baseline_quad4(frame):
    """The common approach: the cloth region's four corners -> playing-area corners, a plain homography."""
    coarse = find_cloth_region(frame)
    names = assign_cushions(coarse.quad)
    world = {("head", "left"): (-T.half_length, T.half_width), ("left", "foot"): (T.half_length, T.half_width),
             ("foot", "right"): (T.half_length, -T.half_width), ("right", "head"): (-T.half_length, -T.half_width)}
    src, dst = [], []
    for i in range(4):
        a, b = names[i - 1], names[i]  # corner i joins side i-1 and side i
        key = (a, b) if (a, b) in world else (b, a)
        src.append(coarse.quad[i])
        dst.append(world[key])
    H = cv2.getPerspectiveTransform(np.float32(src), np.float32(dst))
    return lambda px: cv2.perspectiveTransform(np.asarray(px, np.float64).reshape(-1, 1, 2), H).reshape(-1, 2)


def baseline_corner4(frame):
    """Our sub-pixel nose lines, intersected into four corners, then a plain homography (no lens, no height)."""
    coarse = find_cloth_region(frame)
    edges = find_cushion_edges(frame, coarse)
    names = assign_cushions(coarse.quad)
    img, pairs = corner_points({n: p for n, p in zip(names, edges.points)})
    dst = [(T.half_length * (1 if "foot" in pr else -1), T.half_width * (1 if "left" in pr else -1)) for pr in pairs]
    H = cv2.getPerspectiveTransform(np.float32(img), np.float32(dst))
    return lambda px: cv2.perspectiveTransform(np.asarray(px, np.float64).reshape(-1, 1, 2), H).reshape(-1, 2)


def run_rendered(quick: bool, size, out: Path) -> list[dict]:
    from vision_ref.sim.render import Renderer, RenderSettings

    lens_cache: dict = {}
    rows = []
    edge = NoseEdge.for_table(T)
    for case in cases(quick, size):
        t0 = time.perf_counter()
        cam = CameraModel.overhead(*size, **case["camera"])
        st = RenderSettings(draw_cue=False, cloth_rgb=case["cloth"], cue_ball_rgb=case["cue"], lamps=case["lamps"],
                            seed=case["seed"])
        r = Renderer(cam, settings=st)
        pos = C.SetupPositions.standard(cue=case["cue_xy"])
        scene = StillScene(pos)
        frames = [r.render_frame(scene, i) for i in range(3)]
        lens, lens_rms = lens_for(cam, lens_cache, case["lens_key"])
        row = {"case": case["name"], "cloth": case["cloth"], "cue": case["cue"], "lamps": case["lamps"],
               "tilt": round(case["camera"]["tilt_deg"], 1), "k1": case["lens_key"][0], "lens_rms_px": round(lens_rms, 3)}
        h264 = h264_roundtrip(frames, out / f"{case['name']}.mp4")
        for mode, lens_arg, frs in (("lens", lens, frames), ("nolens", None, frames), ("lens_h264", lens, h264),
                                    ("nolens_h264", None, h264)):
            try:
                prof = calibrate_from_frames(frs, lens=lens_arg, source=case["name"])
            except CalibrationError as exc:
                row[mode] = {"error": str(exc)}
                continue
            pc = prof.camera
            z0 = map_errors(cam, lambda px: pc.pixels_to_plane(px, 0.0), 0.0)
            zr = map_errors(cam, lambda px: pc.pixels_to_plane(px, T.ball_radius), T.ball_radius)
            line = max(edge_line_error_px(cam, pc, T, edge).values())
            row[mode] = {"median_mm": round(z0[0], 3), "worst_mm": round(z0[1], 3), "ball_median_mm": round(zr[0], 3),
                         "ball_worst_mm": round(zr[1], 3), "line_px": round(line, 3),
                         **identities(prof, frames[0], cam, case)}
        frame = np.median(np.stack(frames), axis=0).astype(np.uint8)
        for name, fn in (("quad4", baseline_quad4), ("corner4", baseline_corner4)):
            try:
                m = fn(frame)
                e = map_errors(cam, m, 0.0)
                row[name] = {"median_mm": round(e[0], 3), "worst_mm": round(e[1], 3)}
            except CalibrationError as exc:
                row[name] = {"error": str(exc)}
        row["seconds"] = round(time.perf_counter() - t0, 1)
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def run_real(out: Path) -> list[dict]:
    if not REAL.is_dir():
        print("real: ../shared/real/ not present, skipped")
        return []
    items = []
    for name in ("pool_rig_empty.jpg", "pool_rig_balls.jpg"):
        p = REAL / name
        if p.exists():
            items.append((name, cv2.imread(str(p))))
    for name in ("pool_broadcast_1.mp4", "pool_broadcast_5.mp4"):
        p = REAL / name
        if p.exists():
            cap = cv2.VideoCapture(str(p))
            ok, fr = cap.read()
            cap.release()
            if ok:
                items.append((name, fr))
    rows = []
    for name, img in items:
        try:
            coarse = find_cloth_region(img)
            edges = find_cushion_edges(img, coarse)
        except CalibrationError as exc:
            rows.append({"real": name, "error": str(exc)})
            print(json.dumps(rows[-1]))
            continue
        curves = fit_side_curves(edges)
        vis = img.copy()
        for cv in curves:
            cv2.polylines(vis, [np.round(cv * 16).astype(np.int32)], False, (255, 255, 0), 1, cv2.LINE_AA, 4)
        for pts in edges.points:
            for q in pts[::4]:
                cv2.circle(vis, (int(round(q[0] * 16)), int(round(q[1] * 16))), 16, (0, 0, 255), -1, cv2.LINE_AA, 4)
        png = out / f"real_{Path(name).stem}.png"
        cv2.imwrite(str(png), vis)
        row = {"real": name, "edge_rms_px": [round(v, 3) for v in edges.residual_px],
               "inliers": [len(p) for p in edges.points], "scanned": edges.scanned, "preview": str(png)}
        # an independent check of the outline: pool tables (2:1 like carom) have their head and foot
        # spots at the quarter lines too; the camera fitted to the noses alone predicts them
        try:
            from vision_ref.calibrate.features import find_marks
            from vision_ref.calibrate.pose import fit_pose

            names = assign_cushions(coarse.quad)
            fit = fit_pose({n: p for n, p in zip(names, edges.points)}, (img.shape[1], img.shape[0]))
            marks = find_marks(img, fit.camera, search_px=12.0)
            sel = [i for i, n in enumerate(marks.names) if n in ("spot1", "spot3")]
            if sel:
                d = np.linalg.norm(marks.image[sel] - marks.predicted[sel], axis=1)
                row["spot_check_px"] = [round(float(v), 2) for v in d]
        except CalibrationError as exc:
            row["spot_check"] = str(exc)
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="calibration accuracy benchmark")
    ap.add_argument("--quick", action="store_true", help="4 rendered cases instead of 12")
    ap.add_argument("--size", default="1456x1088")
    ap.add_argument("--out", default="/tmp/vision_ref_calibration_bench")
    a = ap.parse_args(argv)
    size = tuple(int(v) for v in a.size.lower().split("x"))
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    rows = run_rendered(a.quick, size, out)
    real = run_real(out)

    def collect(mode, key):
        return [r[mode][key] for r in rows if key in r.get(mode, {})]

    summ = {}
    for mode in ("lens", "nolens", "lens_h264", "nolens_h264", "quad4", "corner4"):
        med, worst = collect(mode, "median_mm"), collect(mode, "worst_mm")
        if med:
            summ[mode] = (float(np.median(med)), float(np.max(worst)))
    ids = all(r[m].get(k, False) for r in rows for m in ("lens", "nolens") if "error" not in r[m]
              for k in ("balls_placed", "cue_by_colour", "pins_standing"))
    king = sum(bool(r[m].get("king_by_colour")) for r in rows for m in ("lens",) if "error" not in r[m])
    fails = sum(1 for r in rows for m in ("lens", "nolens", "lens_h264", "nolens_h264") if "error" in r[m])
    lines = collect("lens", "line_px")
    print()
    print(f"{'method':12s} {'median mm':>10s} {'worst mm':>9s}   (z=0 cloth grid, {len(rows)} cases at {size[0]}x{size[1]})")
    for mode, (m, w) in summ.items():
        print(f"{mode:12s} {m:10.3f} {w:9.3f}")
    if "lens" in summ and "quad4" in summ:
        print(f"ratio quad4/lens median: {summ['quad4'][0] / max(summ['lens'][0], 1e-9):.1f}x, "
              f"corner4/lens: {summ['corner4'][0] / max(summ['lens'][0], 1e-9):.1f}x")
    real_rms = [v for r in real for v in r.get("edge_rms_px", [])]
    print(f"real frames: {len(real)} ({sum('error' in r for r in real)} failed), edge rms about the outline "
          f"median {np.median(real_rms) if real_rms else float('nan'):.2f} px, previews in {out}")
    print(f"calibration: cases={len(rows)} size={size[0]}x{size[1]} "
          f"lens_median_mm={summ.get('lens', (np.nan,))[0]:.3f} lens_worst_mm={summ.get('lens', (0, np.nan))[1]:.3f} "
          f"nolens_median_mm={summ.get('nolens', (np.nan,))[0]:.3f} nolens_worst_mm={summ.get('nolens', (0, np.nan))[1]:.3f} "
          f"h264_lens_median_mm={summ.get('lens_h264', (np.nan,))[0]:.3f} h264_lens_worst_mm={summ.get('lens_h264', (0, np.nan))[1]:.3f} "
          f"h264_nolens_median_mm={summ.get('nolens_h264', (np.nan,))[0]:.3f} "
          f"line_px_worst={max(lines) if lines else float('nan'):.3f} identities_ok={ids} king_by_colour={king}/{len(rows)} "
          f"failures={fails} quad4_median_mm={summ.get('quad4', (np.nan,))[0]:.2f} "
          f"corner4_median_mm={summ.get('corner4', (np.nan,))[0]:.2f} real_ok={sum('error' not in r for r in real)}/{len(real)} "
          f"seconds={time.perf_counter() - t0:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
