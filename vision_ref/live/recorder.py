"""Recording every live session: H.264 video segments + timestamps sidecars, on a disk budget.

Frames are offered by the capture thread without ever waiting: the recorder has
its own bounded queue and thread, so a slow disk or encoder can lose *recorded*
frames (counted, and visible as gaps in the sidecar) but never delays the referee.

Each segment is ``SESSION-NNNN.mp4`` with ``SESSION-NNNN.timestamps.txt`` beside it
(the sensor timestamp of every frame written, one per line, appended as it goes, and
the exposure time when the source knows it),
so `vision-ref review SEGMENT.mp4` sees the same frame times — and the same drops —
as the live loop did. The mp4 is fragmented (a fragment per second): after a power
cut everything up to the last second is readable; after a crash of the referee the
encoder sees its input close and finishes the file normally.

Disk budget: at each new segment and once a second, the oldest segments in the
recording directory (of any session, never the one being written) are deleted
until the directory fits in ``budget_bytes``; each deletion is reported.
"""

from __future__ import annotations

import collections
import os
import threading
import time
from pathlib import Path
from typing import Callable

from vision_ref.errors import VideoError
from vision_ref.messages import Frame


class SessionRecorder:
    def __init__(self, out_dir: str | Path, session: str, fps: float, budget_bytes: int = 20 * 2**30,
                 segment_s: float = 600.0, crf: int = 23, preset: str = "ultrafast", queue_s: float = 2.0,
                 on_incident: Callable[[str, str], None] | None = None, exposure_s: float | None = None):
        if budget_bytes <= 0:
            raise VideoError(f"recording budget must be positive, got {budget_bytes} bytes")
        self.dir = Path(out_dir)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.session = session
        self.fps = float(fps)
        self.exposure_s = exposure_s  # written to each sidecar: review times contacts by it
        self.budget_bytes = int(budget_bytes)
        self.segment_frames = max(1, int(round(segment_s * fps)))
        self.crf, self.preset = int(crf), preset
        self.capacity = max(4, int(round(queue_s * fps)))
        self.on_incident = on_incident or (lambda kind, msg: None)
        self._q: collections.deque = collections.deque()
        self._cv = threading.Condition()
        self._stop = False
        self.lost = 0  # frames the recorder could not keep up with
        self.written = 0
        self.deleted: list[str] = []
        self.segments: list[dict] = []  # {"video", "first_index", "first_ns", "frames"}
        self.error: str | None = None
        self._writer = None
        self._ts_file = None
        self._thread = threading.Thread(target=self._run, name="recorder", daemon=True)
        self._thread.start()

    # ---- capture side -----------------------------------------------------------------
    def offer(self, frame: Frame, block: bool = False) -> None:
        """Queue a frame for the recording. A live camera never waits (``block=False``:
        a full queue loses the frame from the recording only); a file or synthetic
        stream waits, so its recording is complete."""
        with self._cv:
            while block and len(self._q) >= self.capacity and not (self._stop or self.error):
                self._cv.wait(0.05)
            if self._stop or self.error:
                return
            if len(self._q) >= self.capacity:
                self.lost += 1
                return
            self._q.append(frame)
            self._cv.notify()

    # ---- writer thread --------------------------------------------------------------
    def _run(self) -> None:
        while True:
            with self._cv:
                while not self._q and not self._stop:
                    self._cv.wait(0.2)
                if not self._q and self._stop:
                    break
                frame = self._q.popleft()
                self._cv.notify_all()
            try:
                self._write(frame)
            except (VideoError, OSError) as exc:
                self.error = str(exc)
                self.on_incident("recording", f"recording stopped: {exc}")
                with self._cv:
                    self._q.clear()
                break
        self._close_segment()

    def _input_format(self, frame: Frame) -> str:
        if frame.bgr is not None:
            return "bgr"
        return "nv12" if frame.uv is not None else "gray"

    def _open_segment(self, frame: Frame) -> None:
        from vision_ref.video import VideoWriter, sidecar_paths

        self._close_segment()
        self.enforce_budget()
        n = len(self.segments) + 1
        path = self.dir / f"{self.session}-{n:04d}.mp4"
        h, w = frame.shape
        gop = str(max(1, int(round(self.fps))))
        self._writer = VideoWriter(
            path, w, h, self.fps, crf=self.crf, preset=self.preset, input_format=self._input_format(frame),
            timestamps=False,
            extra_args=["-tune", "zerolatency", "-g", gop, "-flush_packets", "1",
                        "-movflags", "+frag_keyframe+empty_moov+default_base_moof"])
        txt = sidecar_paths(path)[0]
        self._ts_file = open(txt, "w", buffering=1)
        self._ts_file.write(f"# session: {self.session}\n# fps: {self.fps:g}\n")
        if self.exposure_s is not None:
            self._ts_file.write(f"# exposure_s: {self.exposure_s:g}\n")
        self.segments.append({"video": str(path), "first_index": int(frame.index), "first_ns": int(frame.timestamp_ns),
                              "frames": 0})

    def _write(self, frame: Frame) -> None:
        seg = self.segments[-1] if self.segments else None
        if self._writer is None or seg is None or seg["frames"] >= self.segment_frames:
            self._open_segment(frame)
            seg = self.segments[-1]
        self._writer.write_frame(frame)
        self._ts_file.write(f"{int(frame.timestamp_ns)}\n")
        seg["frames"] += 1
        self.written += 1
        if seg["frames"] % max(1, int(round(self.fps))) == 0:
            self.enforce_budget()  # once a second: a long segment must not overrun the budget

    def _close_segment(self) -> None:
        w, self._writer = self._writer, None
        f, self._ts_file = self._ts_file, None
        if f is not None:
            f.flush()
            os.fsync(f.fileno())
            f.close()
        if w is not None:
            try:
                w.close()
            except VideoError as exc:
                self.error = str(exc)
                self.on_incident("recording", f"segment not finished: {exc}")

    # ---- budget ---------------------------------------------------------------------------
    def usage_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.dir.glob("*") if p.is_file())

    def enforce_budget(self) -> None:
        current = {Path(s["video"]).name for s in self.segments[-1:]} if self._writer is not None else set()
        videos = sorted((p for p in self.dir.glob("*.mp4") if p.name not in current), key=lambda p: p.stat().st_mtime)
        total = self.usage_bytes()
        for v in videos:
            if total <= self.budget_bytes:
                break
            freed = 0
            for p in (v, v.with_name(v.stem + ".timestamps.txt"), v.with_name(v.stem + ".timestamps.json")):
                if p.exists():
                    freed += p.stat().st_size
                    p.unlink()
            total -= freed
            self.deleted.append(str(v))
            self.on_incident("recording", f"disk budget: deleted the oldest recording {v.name} ({freed / 2**20:.1f} MiB)")

    def segment_for(self, frame_index: int) -> str | None:
        """The segment file holding a sensor frame index (for the shot's log entry)."""
        found = None
        for s in self.segments:
            if s["first_index"] <= frame_index:
                found = s["video"]
        return found

    def close(self, timeout: float = 30.0) -> None:
        with self._cv:
            self._stop = True
            self._cv.notify_all()
        self._thread.join(timeout)

    def stats(self) -> dict:
        return {"written": self.written, "lost": self.lost, "segments": [s["video"] for s in self.segments],
                "deleted": list(self.deleted), "error": self.error}
