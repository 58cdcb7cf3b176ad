"""Frames from a USB camera (``/dev/videoN`` through OpenCV) or from a video file.

A device is read with OpenCV's V4L2 backend; UVC cameras give no sensor timestamp
OpenCV can be trusted with, so a frame is stamped with the host's monotonic clock
when it is read (jitter of a millisecond or two; drop detection allows half a
period). A file is decoded with the project's ffmpeg reader
(:class:`vision_ref.video.VideoReader`, exact colours) and its frames are stamped
from the recording's timestamps sidecar when there is one, so the drops the live
recorder saw come back as the same index gaps.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Iterator

from vision_ref.errors import SourceError, VideoError
from vision_ref.messages import Frame
from vision_ref.sources.base import DropDetector, FrameSource

DEVICE_RE = re.compile(r"^(/dev/video(\d+)|video(\d+)|\d+)$")


def is_device(spec: str) -> bool:
    return bool(DEVICE_RE.match(str(spec)))


def device_number(spec: str) -> int:
    m = DEVICE_RE.match(str(spec))
    if not m:
        raise SourceError(f"{spec!r} is not a camera device (expected /dev/videoN)")
    return int(next(g for g in m.groups()[1:] if g is not None) if not m.group(0).isdigit() else m.group(0))


class OpenCVCameraSource(FrameSource):
    """A V4L2 camera. ``size`` and ``fps`` are requested; what the driver grants is kept.
    ``timeout_s``: the read that fails or a device that stops answering -> SourceError."""

    realtime = True

    def __init__(self, device: str | int, size: tuple[int, int] | None = None, fps: float = 60.0,
                 mode: str = "bgr", fourcc: str | None = "MJPG"):
        super().__init__()
        self.device = device_number(str(device))
        self.name = f"/dev/video{self.device}"
        self._want_size = size
        self._fps = float(fps)
        self._size = size or (0, 0)
        self.mode = mode
        self.fourcc = fourcc
        self._cap = None
        self.detector: DropDetector | None = None

    def open(self) -> "OpenCVCameraSource":
        import cv2

        if not Path(self.name).exists():
            raise SourceError(f"{self.name}: no such camera device")
        cap = cv2.VideoCapture(self.device, cv2.CAP_V4L2)
        if not cap.isOpened():
            raise SourceError(f"{self.name}: cannot open the camera (in use, or no permission: add the user to 'video')")
        if self.fourcc:
            cap.set(cv2.CAP_PROP_FOURCC, cv2.VideoWriter_fourcc(*self.fourcc))
        if self._want_size:
            cap.set(cv2.CAP_PROP_FRAME_WIDTH, self._want_size[0])
            cap.set(cv2.CAP_PROP_FRAME_HEIGHT, self._want_size[1])
        cap.set(cv2.CAP_PROP_FPS, self._fps)
        cap.set(cv2.CAP_PROP_BUFFERSIZE, 4)
        granted = cap.get(cv2.CAP_PROP_FPS)
        if granted and granted > 0:
            self._fps = float(granted)
        self._size = (int(cap.get(cv2.CAP_PROP_FRAME_WIDTH)), int(cap.get(cv2.CAP_PROP_FRAME_HEIGHT)))
        self._cap = cap
        self.detector = DropDetector(self._fps)
        self.stats = self.detector.stats
        self._opened = True
        return self

    def close(self) -> None:
        cap, self._cap = self._cap, None
        if cap is not None:
            cap.release()
        self._opened = False

    def frames(self) -> Iterator[Frame]:
        if self._cap is None or self.detector is None:
            raise SourceError(f"{self.name}: not open")
        while self._cap is not None:
            ok, img = self._cap.read()
            if not ok or img is None:
                raise SourceError(f"{self.name}: camera lost (read failed)")
            ts = time.monotonic_ns()
            index, _ = self.detector.observe(ts)
            yield _frame(index, ts, img, self.mode)


def _frame(index: int, ts: int, bgr, mode: str) -> Frame:
    if mode == "yuv":
        y, uv = bgr_to_yuv420(bgr)
        return Frame(index, ts, y=y, uv=uv)
    return Frame(index, ts, bgr=bgr)


def bgr_to_yuv420(bgr):
    """Y (H, W) and interleaved UV (H/2, W/2, 2) as the Pi camera and the project's video
    reader deliver them: BT.601 limited range (Y 16..235, UV 16..240) — SMPTE 170M, what
    ffmpeg writes and decodes for these files and what the Pi adapter asks libcamera for
    — with each 2x2 block's chroma averaged. (OpenCV's own BGR2YUV_I420 uses other
    coefficients: its frames would not match what the tracker sees from files.)"""
    import cv2
    import numpy as np

    f = np.asarray(bgr, dtype=np.float32)
    b, g, r = f[:, :, 0], f[:, :, 1], f[:, :, 2]
    luma = 0.299 * r + 0.587 * g + 0.114 * b
    y = np.clip(np.rint(16.0 + luma * (219.0 / 255.0)), 0, 255).astype(np.uint8)
    u = 128.0 + (b - luma) * (0.564 * 224.0 / 255.0)
    v = 128.0 + (r - luma) * (0.713 * 224.0 / 255.0)
    h, w = y.shape
    size = (w // 2, h // 2)
    u2 = cv2.resize(u, size, interpolation=cv2.INTER_AREA)
    v2 = cv2.resize(v, size, interpolation=cv2.INTER_AREA)
    uv = np.clip(np.rint(np.dstack([u2, v2])), 0, 255).astype(np.uint8)
    return y, uv


class FileSource(FrameSource):
    """A video file, with its timestamps sidecar when present. ``paced`` replays at
    the recorded rate (a rehearsal of live play); otherwise as fast as it decodes."""

    realtime = False

    def __init__(self, path: str | Path, mode: str = "bgr", paced: bool = False):
        super().__init__()
        self.path = Path(path)
        self.name = str(self.path)
        self.mode = mode
        self.paced = paced
        self._reader = None
        self.detector: DropDetector | None = None

    @property
    def fps(self) -> float:
        return self._reader.fps if self._reader else 0.0

    @property
    def size(self) -> tuple[int, int]:
        return (self._reader.width, self._reader.height) if self._reader else (0, 0)

    def open(self) -> "FileSource":
        from vision_ref.video import VideoReader

        try:
            self._reader = VideoReader(self.path, mode=self.mode)
        except VideoError as exc:
            raise SourceError(str(exc)) from None
        self.detector = DropDetector(self._reader.fps)
        self.stats = self.detector.stats
        self.has_sidecar = self._reader.timestamps_ns is not None
        self._opened = True
        return self

    def close(self) -> None:
        self._opened = False

    def frames(self) -> Iterator[Frame]:
        if self._reader is None or self.detector is None:
            raise SourceError(f"{self.path}: not open")
        t0 = None
        try:
            for f in self._reader:
                f.index, _ = self.detector.observe(f.timestamp_ns)
                if self.paced:
                    now = time.monotonic()
                    if t0 is None:
                        t0 = (now, f.timestamp_ns)
                    wait = t0[0] + (f.timestamp_ns - t0[1]) * 1e-9 - now
                    if wait > 0:
                        time.sleep(wait)
                yield f
        except VideoError as exc:
            raise SourceError(str(exc)) from None
