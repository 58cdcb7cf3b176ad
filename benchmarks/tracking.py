"""Tracking benchmark: speed against cv2.HoughCircles and cv2.cvtColor, accuracy against the renderer's truth.

    python benchmarks/tracking.py            # all clips, all frames
    python benchmarks/tracking.py --quick    # fewer frames (under a minute once footage is cached)

Rendered footage is cached under --cache (default /tmp/vision_ref_tracking_footage):
rendering costs ~0.4 s per frame at 1456x1088, so it is done once and reused.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

FOOTAGE_VERSION = 1
# name -> (strike speed mm/s, aim point, render settings overrides)
CLIPS = {
    # slow shot into the pins: toppling, lying and standing pins, balls at rest and rolling
    "pins": dict(speed=2500.0, aim=(0.0, 0.0), settings=dict(draw_cue=False, player="none")),
    # 8 m/s: long motion-blur streaks, a ball-ball collision, cushions, pins hit at speed
    "fast": dict(speed=8000.0, aim=(710.0, 0.0), settings=dict(draw_cue=False, player="none")),
    # cue stick and arms over the table before and just after the strike: partial occlusion
    "cue": dict(speed=3000.0, aim=(-710.0, 0.0), settings=dict(player="arms"), max_frames=75),
}


def clip_shot(name: str):
    from vision_ref.sim.physics import Layout, Strike, simulate

    spec = CLIPS[name]
    layout = Layout.standard()
    cx, cy = layout.balls["cue"]
    ax, ay = spec["aim"]
    return simulate(layout, Strike(speed=spec["speed"], angle=math.atan2(ay - cy, ax - cx)), tail=0.3)


def ensure_footage(cache: Path, name: str, width: int = 1456, height: int = 1088, fps: float = 60.0) -> dict:
    """Render clip ``name`` once into ``cache`` (mp4 + per-frame truth) and return its paths."""
    from vision_ref.camera import CameraModel
    from vision_ref.sim.render import Renderer, RenderSettings
    from vision_ref.video import VideoWriter

    stem = cache / f"{name}_{width}x{height}_v{FOOTAGE_VERSION}"
    video, truth_path = stem.with_suffix(".mp4"), stem.with_suffix(".truth.json")
    if video.exists() and truth_path.exists():
        return {"video": video, "truth": truth_path}
    cache.mkdir(parents=True, exist_ok=True)
    spec = CLIPS[name]
    shot = clip_shot(name)
    camera = CameraModel.overhead(width, height)
    settings = RenderSettings(fps=fps, seed=5, **spec["settings"])
    renderer = Renderer(camera, settings=settings)
    n = min(renderer.n_frames(shot), spec.get("max_frames", 10**9))
    t0 = time.perf_counter()
    tmp = video.with_suffix(".part.mp4")
    with VideoWriter(tmp, width, height, fps, crf=16, preset="fast") as vw:
        for i in range(n):
            vw.write(renderer.render_frame(shot, i), renderer.timestamp_ns(i))
    truth = renderer.frame_truth(shot)
    truth["frames"] = truth["frames"][:n]
    truth["n_frames"] = n
    truth["camera"] = camera.to_dict()
    truth["render"] = settings.to_dict()
    truth_path.write_text(json.dumps(truth, separators=(",", ":")))
    tmp.replace(video)
    txt_tmp = tmp.with_name(tmp.name.replace(".mp4", ".timestamps.txt"))
    if txt_tmp.exists():
        txt_tmp.replace(video.with_name(video.stem + ".timestamps.txt"))
    print(f"rendered {name}: {n} frames in {time.perf_counter() - t0:.0f} s -> {video}", file=sys.stderr)
    return {"video": video, "truth": truth_path}


if __name__ == "__main__" and "--render-only" in sys.argv:
    cache = Path("/tmp/vision_ref_tracking_footage")
    for nm in sys.argv[sys.argv.index("--render-only") + 1:] or list(CLIPS):
        ensure_footage(cache, nm)
