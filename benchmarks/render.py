"""Renderer speed: frames per second of vision_ref.sim.render vs a naive baseline, in one run.

    python benchmarks/render.py [--quick]

The shot is the scenario ``legal_L4_white_off_white`` (cue stick and arms in the
lead-in, three balls and falling pins after the strike). Frames are timed in three
groups: *cue* (the stick and the player's arms in view), *moving* (balls and pins
moving, no cue) and *still* (everything at rest). Times are CPU seconds of this
process (the machine is shared; wall time is printed too).

Baselines, same frames: the renderer as it was before its speed work (commit
``b75e240``, loaded from git when available), and the *naive* renderer --
every frame is ray-cast in full through the same kernel (one box covering the whole
image, every object in it, the frame's largest sample count), then finished in full.
That is what the renderer's static-background cache, object boxes, per-object
sample counts and culling save.

Last line: ``render: key=value ...``.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np


def naive_frame(r, sim, i):
    """The whole frame through render_box at the frame's largest per-cluster sample count."""
    from vision_ref.sim import _render_kernels as K
    from vision_ref.sim.render import _Cluster, _jitter

    st = r.settings
    t0 = r.frame_time(i)
    probe = t0 + np.linspace(0.0, st.exposure_s, 3)
    balls, pins, prims = r._pack(sim, sim.sample(probe))
    cl = _Cluster(0, 0, r.H, r.W, balls=list(range(balls.shape[1])), pins=list(range(pins.shape[1])), cue=True)
    disp = r._motion_px(balls, pins, prims, cl)
    n = int(min(st.max_blur_samples, max(st.min_samples, math.ceil(disp / st.blur_step_px))))
    times = t0 + (np.arange(n) + 0.5) * st.exposure_s / n
    cb, cp, cq = r._pack(sim, sim.sample(times))
    img = np.zeros((r.H, r.W, 3))
    # min_samples = n: every pixel takes every sample (no per-pixel adaptation)
    K.render_box(0, 0, r.H, r.W, r.rays, r.origin, r.focal, r.bg_lin, r.bg_pt, r.bg_t, r.gain, times, t0, 0.0,
                 st.exposure_s, _jitter(n), cb, r.table.ball_radius, r._ball_alb, cp, r._pin_kind, r._pin_prof,
                 r._pin_height, r._pin_rmax, r._pin_cols, cq, r._prim_alb, r.lamps, r.ambient, r.cloth_lin,
                 3.5 * r.table.ball_radius, float(st.blur_step_px), n, img)
    out = np.empty((r.H, r.W, 3), np.uint8)
    K.finish_kernel(img, 0, 0, r._lut, float(st.noise_sigma), r._noise, r._noise_offset(i), r.W, out)
    return out


BEFORE_COMMIT = "b75e240"  # the renderer before its speed work (issue 3), for the "before" column


def previous_renderer(camera, settings):
    """The renderer as of BEFORE_COMMIT, loaded from git into a temporary module (None without git)."""
    import importlib.util
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    try:
        kern = subprocess.run(["git", "show", f"{BEFORE_COMMIT}:vision_ref/sim/_render_kernels.py"], cwd=repo,
                              capture_output=True, text=True, check=True).stdout
        rend = subprocess.run(["git", "show", f"{BEFORE_COMMIT}:vision_ref/sim/render.py"], cwd=repo,
                              capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    d = Path(tempfile.gettempdir()) / "vision_ref_render_before"
    d.mkdir(exist_ok=True)
    (d / "before_render_kernels.py").write_text(kern)
    (d / "before_render.py").write_text(rend.replace("from vision_ref.sim import _render_kernels as K",
                                                     "import before_render_kernels as K"))
    sys.path.insert(0, str(d))
    spec = importlib.util.spec_from_file_location("before_render", d / "before_render.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["before_render"] = mod  # dataclasses look their module up while it loads
    spec.loader.exec_module(mod)
    st = settings
    old_settings = mod.RenderSettings(fps=st.fps, seed=st.seed)
    return mod.Renderer(camera, settings=old_settings)


def timed(fn, frames):
    cpu, wall = [], []
    for i in frames:
        c, w = time.process_time(), time.perf_counter()
        fn(i)
        cpu.append(time.process_time() - c)
        wall.append(time.perf_counter() - w)
    return float(np.mean(cpu)), float(np.mean(wall))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="728x544 and fewer frames")
    args = ap.parse_args()
    from vision_ref.camera import CameraModel
    from vision_ref.sim.render import Renderer, RenderSettings
    from vision_ref.sim.scenarios import get_scenario

    size = (728, 544) if args.quick else (1456, 1088)
    per_group = 3 if args.quick else 6
    sim = get_scenario("legal_L4_white_off_white").simulate(0)
    t0 = time.perf_counter()
    r = Renderer(CameraModel.overhead(*size), settings=RenderSettings(fps=60.0))
    setup = time.perf_counter() - t0
    fps = r.settings.fps
    s0 = int(sim.strike_time * fps)
    groups = {
        "cue": list(np.linspace(2, s0 + 12, per_group).astype(int)),
        "moving": list(np.linspace(s0 + 125, s0 + 125 + 2 * per_group, per_group).astype(int)),
        "still": list(np.linspace(r.n_frames(sim) - 1 - per_group, r.n_frames(sim) - 1, per_group).astype(int)),
    }
    ws = sim.sample(np.array([r.frame_time(i) for i in groups["moving"]]))
    assert not ws.cue_visible.any(), "the 'moving' frames must not show the cue"
    r.render_frame(sim, groups["cue"][0])  # warm-up (numba cache load)
    naive_frame(r, sim, groups["moving"][0])
    print(f"renderer {size[0]}x{size[1]}: set-up (rays + static background) {setup:.2f} s")
    summary = {"size": f"{size[0]}x{size[1]}"}
    before = previous_renderer(r.camera, r.settings)
    if before is not None:
        print(f"(compiling the {BEFORE_COMMIT} renderer for the 'before' column; not timed)")
        before.render_frame(sim, groups["cue"][0])
        before.render_frame(sim, groups["moving"][0])
    for name, frames in groups.items():
        cpu, wall = timed(lambda i: r.render_frame(sim, i), frames)
        ncpu, nwall = timed(lambda i: naive_frame(r, sim, i), frames)
        line = (f"{name:7s}: {cpu:.3f} s/frame CPU ({wall:.3f} wall), {1 / cpu:.1f} frames/s; "
                f"naive {ncpu:.3f} s/frame CPU ({nwall:.3f} wall), speed-up {ncpu / cpu:.1f}x")
        summary[f"{name}_s"] = round(cpu, 4)
        summary[f"{name}_naive_s"] = round(ncpu, 4)
        summary[f"{name}_speedup"] = round(ncpu / cpu, 1)
        if before is not None:
            bcpu, _ = timed(lambda i: before.render_frame(sim, i), frames)
            line += f"; {BEFORE_COMMIT} renderer {bcpu:.3f} s/frame CPU, speed-up {bcpu / cpu:.1f}x"
            summary[f"{name}_before_s"] = round(bcpu, 4)
        print(line)
    # the first 3 s of the clip (lead-in with the cue, strike, balls and pins moving) at 60 fps
    step = 4 if args.quick else 1
    frames = list(range(0, int(3 * fps), step))
    cpu, wall = timed(lambda i: r.render_frame(sim, i), frames)
    total = cpu * 3 * fps
    print(f"a 3 s stretch at 60 fps ({'every 4th frame timed, ' if step > 1 else ''}cue in view for the first ~1.1 s): "
          f"{total:.1f} s CPU ({wall * 3 * fps:.1f} s wall) to render, {cpu:.3f} s/frame")
    summary["shot3s_s"] = round(total, 1)
    print("render: " + " ".join(f"{k}={v}" for k, v in summary.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
