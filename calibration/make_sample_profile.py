"""Make calibration/sample_profile.json: the calibration profile for the sample videos.

Run from the repository root:  python calibration/make_sample_profile.py

1. The lens: the sample camera's lens is calibrated the way a user would, from
   eight views of the ChArUco board (rendered through that lens here, since the
   "camera" is the renderer's) -> calibration/sample_lens.json.
2. The table: the first still frames of sample_videos/demo_match.mp4 (the standard
   set-up; else legal_pins.mp4 or carom.mp4, same camera) with that lens. When the sample videos are
   not there, a set-up frame of the same camera and render settings is rendered
   instead, and the profile says so in ``extra["made_from"]``.

Writes sample_profile.json and sample_profile_preview.png next to this script.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import cv2

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from vision_ref.calibrate import auto  # noqa: E402
from vision_ref.calibrate.lens import BoardSpec, board_view_cameras, calibrate_lens, render_board_view  # noqa: E402
from vision_ref.calibrate.preview import draw_preview  # noqa: E402
from vision_ref.camera import CameraModel  # noqa: E402

SAMPLES = ROOT / "sample_videos"


def _video() -> Path:
    """demo_match.mp4 (the standard set-up), else the first sample clip there is."""
    for name in ("demo_match", "legal_pins", "carom"):
        p = SAMPLES / f"{name}.mp4"
        if p.exists() and p.with_suffix("").with_suffix(".camera.json").exists():
            return p
    return SAMPLES / "demo_match.mp4"


def main() -> int:
    VIDEO = _video()
    cam_json = VIDEO.with_suffix("").with_suffix(".camera.json")
    if cam_json.exists():
        doc = json.loads(cam_json.read_text())
        camera = CameraModel.from_dict(doc["camera"])
        render = doc.get("render", {})
    else:
        camera = CameraModel.overhead(1456, 1088)  # what vision_ref.sim.samples renders with
        render = {}
    spec = BoardSpec.load()
    views = [render_board_view(c, spec, px_per_mm=6.0, seed=i) for i, c in enumerate(board_view_cameras(camera, spec, 8, seed=5))]
    lens = calibrate_lens(views, spec)
    lens.save(HERE / "sample_lens.json")
    details: dict = {}
    if VIDEO.exists():
        from vision_ref.video import VideoReader

        start, frames = auto.first_still_frames(iter(VideoReader(VIDEO, strict=False)), n=8)
        made_from = f"sample_videos/{VIDEO.name}, frames {start}..{start + len(frames) - 1}"
    else:
        from vision_ref.calibrate.colours import SetupPositions
        from vision_ref.calibrate.truth import StillScene
        from vision_ref.sim.render import Renderer, RenderSettings

        st = RenderSettings(draw_cue=False, **{k: render[k] for k in ("seed", "noise_sigma") if k in render})
        r = Renderer(camera, settings=st)
        scene = StillScene(SetupPositions.standard(cue=(-900.0, 260.0)))
        frames = [r.render_frame(scene, i) for i in range(4)]
        made_from = "a rendered set-up frame of the sample camera (no sample video was there yet)"
    prof = auto.calibrate_from_frames(frames, lens=lens.camera, source="sample camera", details=details)
    prof.extra["made_from"] = made_from
    prof.extra["lens_file"] = "calibration/sample_lens.json"
    prof.save(HERE / "sample_profile.json")
    img = draw_preview(details["frame"], prof.camera, prof.table, edge_points=details["edges"].points,
                       marks=details["marks"], positions=details["positions"],
                       lines=[f"sample profile: {made_from}"[:100]], scale=0.5)  # half size: small enough to commit
    cv2.imwrite(str(HERE / "sample_profile_preview.png"), img)
    err = ""
    if cam_json.exists() or not VIDEO.exists():
        import numpy as np

        from vision_ref.rules.table import DEFAULT_TABLE as T

        xs, ys = np.meshgrid(np.linspace(-1400, 1400, 29), np.linspace(-690, 690, 15))
        P = np.column_stack([xs.ravel(), ys.ravel(), np.zeros(xs.size)])
        e = np.linalg.norm(prof.camera.pixels_to_plane(camera.project(P), 0.0) - P[:, :2], axis=1)
        err = f"; against the true camera: median {np.median(e):.2f} mm, worst {e.max():.2f} mm"
        del T
    print(f"sample profile from {made_from}: lens f={lens.camera.K[0, 0]:.1f} px (rms {lens.rms_px:.3f} px){err}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
