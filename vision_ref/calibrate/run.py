"""What `vision-ref calibrate SOURCE` does: read the source, calibrate, write the profile and the preview."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from vision_ref.calibrate.lens import IMAGE_SUFFIXES, load_lens
from vision_ref.errors import CalibrationError, SourceError, VisionRefError
from vision_ref.rules.table import DEFAULT_TABLE

VIDEO_SUFFIXES = {".mp4", ".mkv", ".avi", ".mov", ".h264", ".webm", ".m4v"}


def _camera_frames(spec: str, n: int):
    """Frames from a live camera via the sources package (pi, pi:N, /dev/videoN, camera:N)."""
    try:
        from vision_ref.sources.factory import open_source
    except ImportError:
        raise CalibrationError(
            f"{spec!r} looks like a camera, but the camera sources (vision_ref.sources) are not available here; "
            "record a short video of the still table and calibrate from that"
        ) from None
    if spec.startswith("camera:"):
        spec = "/dev/video" + spec.split(":", 1)[1]
    from vision_ref.calibrate.auto import first_still_frames

    try:
        with open_source(spec) as src:
            it = src.frames()
            start, frames = first_still_frames(it, n=n, max_scan=300)
    except SourceError as exc:
        raise CalibrationError(f"camera {spec}: {exc}") from None
    return start, frames


def load_source_frames(source: str, n_frames: int = 8):
    """(kind, first still index, BGR frames) of an image, a video or a camera."""
    p = Path(source)
    if p.suffix.lower() in IMAGE_SUFFIXES:
        if not p.exists():
            raise CalibrationError(f"image {p} does not exist")
        img = cv2.imread(str(p), cv2.IMREAD_COLOR)
        if img is None:
            raise CalibrationError(f"cannot read image {p} (not an image, or damaged)")
        return "image", 0, [img]
    if p.exists():
        from vision_ref.calibrate.auto import first_still_frames
        from vision_ref.errors import VideoError
        from vision_ref.video import VideoReader

        try:
            reader = VideoReader(p, mode="bgr", strict=False)
            start, frames = first_still_frames(iter(reader), n=n_frames)
        except VideoError as exc:
            raise CalibrationError(f"cannot read video {p}: {exc}") from None
        return "video", start, frames
    if source in ("pi",) or source.startswith(("pi:", "/dev/video", "camera:")):
        start, frames = _camera_frames(source, n_frames)
        return "camera", start, frames
    if p.suffix.lower() in VIDEO_SUFFIXES:
        raise CalibrationError(f"video {p} does not exist")
    raise CalibrationError(f"{source!r} is not an image, a video file, nor a camera (pi, /dev/videoN, camera:N)")


def calibrate_source(source: str, *, out: str, lens_path: str | None = None, preview: str | None = None,
                     corners=None, n_frames: int = 8, table=DEFAULT_TABLE) -> str:
    from vision_ref.calibrate import auto
    from vision_ref.calibrate.preview import draw_preview

    lens = load_lens(lens_path) if lens_path else None
    kind, start, frames = load_source_frames(source, n_frames)
    frame = auto.median_frame(frames)
    try:
        details: dict = {}
        prof = auto.calibrate_from_frames(frames, lens=lens, table=table, source=str(source), corners=corners,
                                          details=details)
    except CalibrationError as exc:
        # the table may still have been found: show it, so the user sees what went wrong
        if preview:
            try:
                fit, cam_edges, marks, _ = auto.locate_table(frame, lens=lens, table=table, corners=corners)
                img = draw_preview(frame, fit.camera, table, edge_points=cam_edges.points if cam_edges else None,
                                   marks=marks, nose_height=table.cushion_nose_height,
                                   lines=["table found; calibration failed:", str(exc)[:90]])
                _write_png(preview, img)
            except VisionRefError:
                pass
        raise
    prof.extra["source_kind"] = kind
    prof.extra["first_still_frame"] = int(start)
    if lens_path:
        prof.extra["lens_file"] = str(lens_path)
    out_p = Path(out)
    if out_p.parent and not out_p.parent.exists():
        raise CalibrationError(f"--out: folder {out_p.parent} does not exist")
    prof.save(out_p)
    q = prof.quality
    msg = (f"calibration: {out} ({prof.camera.width}x{prof.camera.height}, camera {prof.camera.centre_world[2]:.0f} mm "
           f"above the cloth, {q.get('mm_per_px', 0):.2f} mm/px, nose edges rms {q.get('edge_rms_px', float('nan')):.2f} px, "
           f"{int(q.get('marks_found', 0))} marks; lens {prof.extra.get('lens')})")
    if preview:
        cam_edges, marks, pos = details["edges"], details["marks"], details["positions"]
        img = draw_preview(frame, prof.camera, table, edge_points=cam_edges.points if cam_edges else None,
                           marks=marks, positions=pos, nose_height=table.cushion_nose_height,
                           lines=[f"{Path(str(source)).name}: {q.get('mm_per_px', 0):.2f} mm/px, edge rms "
                                  f"{q.get('edge_rms_px', float('nan')):.2f} px, {int(q.get('marks_found', 0))} marks"])
        _write_png(preview, img)
        msg += f"\npreview: {preview}"
    for note in prof.extra.get("notes", []):
        msg += f"\nnote: {note}"
    return msg


def _write_png(path: str, img: np.ndarray) -> None:
    if not cv2.imwrite(str(path), img):
        raise CalibrationError(f"cannot write the preview {path}")
