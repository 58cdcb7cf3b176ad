"""Video files shared by every stage: an H.264 writer, a reader, and the timestamps sidecar.

Both directions pipe raw frames through the static ffmpeg that imageio-ffmpeg ships
(``imageio_ffmpeg.get_ffmpeg_exe()``), so there is one codec stack everywhere:
OpenCV's own writer has no H.264 and ``mp4v`` does not play in browsers.

Timestamps sidecar (written by the renderer and the live recorder, read by the
reader): next to ``NAME.mp4`` either ``NAME.timestamps.txt`` — one sensor timestamp
in integer nanoseconds per line, in frame order, ``#`` lines are comments — or
``NAME.timestamps.json`` — ``{"timestamps_ns": [...], ...}`` with any extra keys
(e.g. ``"clock"``, ``"source"``, ``"dropped"``). When both exist the ``.txt`` wins.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from vision_ref.errors import VideoError
from vision_ref.messages import Frame

# Exact colour conversion: swscale's fast default path shifts grey by ~3 levels
# (128 -> 123,126,124 after a round trip); these flags make the round trip exact.
_SWS = ("-sws_flags", "accurate_rnd+full_chroma_int+bitexact")
_IMAGE_DEMUXERS = re.compile(r"^(image2|\w+_pipe|apng|gif|webp|tiff|svg)", re.I)


def ffmpeg_exe() -> str:
    try:
        import imageio_ffmpeg
    except ImportError:  # pragma: no cover - a declared dependency
        raise VideoError("imageio-ffmpeg is not installed; it provides the ffmpeg used for video files") from None
    try:
        return imageio_ffmpeg.get_ffmpeg_exe()
    except RuntimeError as exc:  # pragma: no cover - broken install
        raise VideoError(f"no ffmpeg binary available: {exc}") from None


# ---- timestamps sidecar ------------------------------------------------------------


def sidecar_paths(video_path: str | os.PathLike) -> tuple[Path, Path]:
    """(txt, json) sidecar paths of a video: NAME.timestamps.txt, NAME.timestamps.json."""
    p = Path(video_path)
    stem = p.with_suffix("")
    return stem.with_name(stem.name + ".timestamps.txt"), stem.with_name(stem.name + ".timestamps.json")


def write_timestamps(
    video_path: str | os.PathLike, timestamps_ns, fmt: str = "txt", meta: dict | None = None
) -> Path:
    """Write the sidecar of ``video_path`` (one int ns per frame); returns its path.

    ``meta`` goes into the JSON form as extra keys, or as ``# key: value`` comment
    lines at the top of the text form.
    """
    ts = np.asarray(timestamps_ns, dtype=np.int64).ravel()
    txt, js = sidecar_paths(video_path)
    if fmt == "txt":
        lines = [f"# {k}: {v}" for k, v in (meta or {}).items()]
        lines += [str(int(v)) for v in ts]
        txt.write_text("\n".join(lines) + "\n")
        return txt
    if fmt == "json":
        data = dict(meta or {})
        data["timestamps_ns"] = [int(v) for v in ts]
        js.write_text(json.dumps(data) + "\n")
        return js
    raise ValueError(f"timestamps format must be 'txt' or 'json', got {fmt!r}")


def append_timestamp(sidecar_txt: str | os.PathLike, timestamp_ns: int) -> None:
    """Append one line to a text sidecar (for recorders that write as they go)."""
    with open(sidecar_txt, "a") as fh:
        fh.write(f"{int(timestamp_ns)}\n")


def read_sidecar_meta(video_path: str | os.PathLike) -> dict[str, str]:
    """The sidecar's ``key: value`` facts (the text form's ``# key: value`` lines, the
    JSON form's keys other than the timestamps), as strings; {} without a sidecar."""
    txt, js = sidecar_paths(video_path)
    meta: dict[str, str] = {}
    if txt.is_file():
        for line in txt.read_text().splitlines():
            s = line.strip()
            if s.startswith("#") and ":" in s:
                key, value = s[1:].split(":", 1)
                meta[key.strip()] = value.strip()
    elif js.is_file():
        try:
            data = json.loads(js.read_text())
        except ValueError:
            return {}  # read_timestamps names the problem
        if isinstance(data, dict):
            meta = {str(k): str(v) for k, v in data.items() if k != "timestamps_ns"}
    return meta


def sidecar_exposure(video_path: str | os.PathLike, fps: float) -> float | None:
    """The exposure time (s) the sidecar records (``exposure_s``), or None when it
    says nothing. A value that is not a time in (0, 1/fps] is a VideoError naming it."""
    raw = read_sidecar_meta(video_path).get("exposure_s")
    if raw is None or raw.lower() in ("", "none", "null", "unknown"):
        return None
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (0.0 < value <= 1.0 / fps + 1e-9):
        txt, js = sidecar_paths(video_path)
        src = txt if txt.is_file() else js
        raise VideoError(f"{src}: exposure_s must be a time in seconds in (0, 1/fps = {1.0 / fps:.4f}], got {raw!r}")
    return value


def read_timestamps(video_path: str | os.PathLike) -> np.ndarray | None:
    """The sidecar's timestamps (int64 ns) or None when the video has no sidecar.

    Raises VideoError naming the file and line for a malformed sidecar.
    """
    txt, js = sidecar_paths(video_path)
    if txt.is_file():
        vals = []
        for no, line in enumerate(txt.read_text().splitlines(), 1):
            s = line.strip()
            if not s or s.startswith("#"):
                continue
            try:
                vals.append(int(s))
            except ValueError:
                raise VideoError(f"{txt}: line {no} is not an integer timestamp in ns: {s[:40]!r}") from None
        ts = np.asarray(vals, dtype=np.int64)
        src = txt
    elif js.is_file():
        try:
            data = json.loads(js.read_text())
            ts = np.asarray(data["timestamps_ns"], dtype=np.int64).ravel()
        except (ValueError, KeyError, TypeError) as exc:
            raise VideoError(f"{js}: not a timestamps sidecar ({exc.__class__.__name__}: {exc})") from None
        src = js
    else:
        return None
    if len(ts) > 1 and np.any(np.diff(ts) <= 0):
        bad = int(np.argmax(np.diff(ts) <= 0)) + 1
        raise VideoError(f"{src}: timestamps must increase; frame {bad} is not after frame {bad - 1}")
    return ts


# ---- probing ----------------------------------------------------------------------


@dataclass
class VideoInfo:
    path: str
    width: int
    height: int
    fps: float
    frame_count: int  # from the container's duration x fps (exact count: VideoReader.count_frames)
    duration_s: float
    codec: str
    pix_fmt: str


def _run(cmd: list[str], timeout: float = 120.0) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, timeout=timeout)


def probe(path: str | os.PathLike) -> VideoInfo:
    """Size, frame rate, duration and codec of a video, from ``ffmpeg -i``'s report."""
    p = Path(path)
    if not p.exists():
        raise VideoError(f"{p}: no such file")
    if not p.is_file():
        raise VideoError(f"{p}: not a file")
    if p.stat().st_size == 0:
        raise VideoError(f"{p}: empty file, not a video")
    res = _run([ffmpeg_exe(), "-hide_banner", "-i", str(p)])
    err = res.stderr.decode("utf-8", "replace")
    if "moov atom not found" in err:
        raise VideoError(f"{p}: unreadable mp4 (moov atom not found: the file was cut off before it was finished)")
    m_in = re.search(r"Input #0, ([\w,]+), from", err)
    if not m_in:
        last = [ln for ln in err.strip().splitlines() if ln.strip()][-1:] or ["unknown format"]
        raise VideoError(f"{p}: not a video ({last[0].split(': ')[-1].strip()})")
    if _IMAGE_DEMUXERS.match(m_in.group(1)):
        raise VideoError(f"{p}: not a video (a still image, format {m_in.group(1)})")
    m_v = re.search(r"Stream #0:\d+[^:]*: Video: (\w+)[^\n]*", err)
    if not m_v:
        raise VideoError(f"{p}: not a video (no video stream)")
    line = m_v.group(0)
    codec = m_v.group(1)
    m_size = re.search(r"[ ,](\d{2,5})x(\d{2,5})[ ,\[]", line)
    if not m_size:
        raise VideoError(f"{p}: video stream has no frame size ({line.strip()[:80]})")
    width, height = int(m_size.group(1)), int(m_size.group(2))
    m_fmt = re.search(r"Video: \w+[^,]*, (\w+)", line)
    pix_fmt = m_fmt.group(1) if m_fmt else "unknown"
    fps = 0.0
    for key in ("fps", "tbr"):
        m = re.search(r"([\d.]+)(k?) " + key, line)
        if m:
            fps = float(m.group(1)) * (1000.0 if m.group(2) else 1.0)
            break
    if fps <= 0:
        raise VideoError(f"{p}: video stream has no frame rate ({line.strip()[:80]})")
    m_d = re.search(r"Duration: (\d+):(\d+):([\d.]+)", err)
    duration = int(m_d.group(1)) * 3600 + int(m_d.group(2)) * 60 + float(m_d.group(3)) if m_d else 0.0
    return VideoInfo(str(p), width, height, fps, int(round(duration * fps)), duration, codec, pix_fmt)


# ---- writer -----------------------------------------------------------------------


class VideoWriter:
    """H.264 (libx264, yuv420p, +faststart) mp4 writer fed with raw frames over a pipe.

    ``write(bgr)`` takes (H, W, 3) uint8 BGR; ``write_frame(frame)`` takes a
    :class:`Frame` (bgr, or y + uv as the Pi's YUV420 delivers). Use as a context
    manager or call ``close()``; an ffmpeg failure raises VideoError with its message.
    Timestamps given to ``write``/``write_frame`` are written to the ``.txt`` sidecar
    on close (pass ``timestamps=False`` to skip), with ``timestamps_meta`` (e.g. the
    exposure time) as its ``# key: value`` lines.
    """

    def __init__(
        self,
        path: str | os.PathLike,
        width: int,
        height: int,
        fps: float,
        crf: int = 23,
        preset: str = "medium",
        input_format: str = "bgr",
        timestamps: bool = True,
        extra_args: list[str] | None = None,
        timestamps_meta: dict | None = None,
    ):
        if width % 2 or height % 2:
            raise VideoError(f"H.264 yuv420p needs an even frame size, got {width}x{height}")
        if not 0 <= crf <= 51:
            raise VideoError(f"crf must be in 0..51, got {crf}")
        if fps <= 0:
            raise VideoError(f"fps must be positive, got {fps}")
        if input_format not in ("bgr", "nv12", "gray"):
            raise VideoError(f"input_format must be bgr, nv12 or gray, got {input_format!r}")
        self.path = Path(path)
        self.width, self.height, self.fps = int(width), int(height), float(fps)
        self.input_format = input_format
        self.frames_written = 0
        self._timestamps: list[int] | None = [] if timestamps else None
        self._timestamps_meta = dict(timestamps_meta or {})
        self.path.parent.mkdir(parents=True, exist_ok=True)
        pix = {"bgr": "bgr24", "nv12": "nv12", "gray": "gray"}[input_format]
        cmd = [
            ffmpeg_exe(), "-hide_banner", "-loglevel", "error", "-y",
            "-f", "rawvideo", "-pix_fmt", pix, "-s", f"{self.width}x{self.height}", "-r", f"{self.fps:g}",
            "-i", "-", *_SWS, "-an", "-c:v", "libx264", "-preset", preset, "-crf", str(int(crf)),
            "-pix_fmt", "yuv420p", "-movflags", "+faststart",
            *(extra_args or []), str(self.path),
        ]
        # stderr to a file, not a pipe: a chatty ffmpeg must never block on a full pipe.
        self._err = tempfile.TemporaryFile()
        try:
            self._proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=self._err)
        except OSError as exc:
            raise VideoError(f"cannot start ffmpeg for {self.path}: {exc}") from None
        self._closed = False

    def _ffmpeg_error(self) -> str:
        self._err.seek(0)
        msg = self._err.read().decode("utf-8", "replace").strip().splitlines()
        return msg[-1] if msg else "ffmpeg exited"

    def _push(self, data: bytes, timestamp_ns: int | None) -> None:
        if self._closed:
            raise VideoError(f"{self.path}: write after close")
        try:
            self._proc.stdin.write(data)
        except (BrokenPipeError, OSError):
            self._proc.wait()
            raise VideoError(f"{self.path}: ffmpeg stopped after {self.frames_written} frames: {self._ffmpeg_error()}") from None
        if self._timestamps is not None:
            ts = timestamp_ns if timestamp_ns is not None else int(round(self.frames_written * 1e9 / self.fps))
            self._timestamps.append(int(ts))
        self.frames_written += 1

    def write(self, bgr: np.ndarray, timestamp_ns: int | None = None) -> None:
        if self.input_format == "gray":
            img = np.asarray(bgr)
            if img.ndim == 3:
                raise VideoError(f"{self.path}: gray writer got a colour image {img.shape}")
            exp = (self.height, self.width)
        else:
            img = np.asarray(bgr)
            exp = (self.height, self.width, 3)
            if self.input_format != "bgr":
                raise VideoError(f"{self.path}: writer expects {self.input_format} frames; use write_frame")
        if img.shape != exp or img.dtype != np.uint8:
            raise VideoError(f"{self.path}: frame must be {exp} uint8, got {img.shape} {img.dtype}")
        self._push(np.ascontiguousarray(img).tobytes(), timestamp_ns)

    def write_frame(self, frame: Frame) -> None:
        if self.input_format == "nv12":
            if frame.y is None or frame.uv is None:
                raise VideoError(f"{self.path}: nv12 writer needs frames with y and uv planes")
            if frame.shape != (self.height, self.width):
                raise VideoError(f"{self.path}: frame is {frame.shape}, writer is {(self.height, self.width)}")
            data = np.ascontiguousarray(frame.y, np.uint8).tobytes() + np.ascontiguousarray(frame.uv, np.uint8).tobytes()
            self._push(data, frame.timestamp_ns)
        elif self.input_format == "gray":
            self.write(frame.y if frame.y is not None else frame.bgr.mean(axis=2).astype(np.uint8), frame.timestamp_ns)
        else:
            if frame.bgr is None:
                raise VideoError(f"{self.path}: bgr writer needs frames with a bgr image")
            self.write(frame.bgr, frame.timestamp_ns)

    def close(self) -> Path:
        if self._closed:
            return self.path
        self._closed = True
        try:
            self._proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass
        rc = self._proc.wait()
        msg = self._ffmpeg_error() if rc else ""
        self._err.close()
        if rc:
            raise VideoError(f"{self.path}: ffmpeg failed after {self.frames_written} frames: {msg}")
        if self._timestamps is not None and self.frames_written:
            write_timestamps(self.path, self._timestamps, meta=self._timestamps_meta)
        return self.path

    def __enter__(self) -> "VideoWriter":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.close()
        else:  # keep what was written: close the pipe so ffmpeg finalises the file
            try:
                self.close()
            except VideoError:
                pass


# ---- reader -----------------------------------------------------------------------


class VideoReader:
    """Decode a video with ffmpeg into :class:`Frame` objects.

    ``mode="bgr"`` gives ``Frame.bgr`` (H, W, 3); ``mode="yuv"`` gives ``Frame.y``
    (H, W) and ``Frame.uv`` (H/2, W/2, 2) — the YUV420 layout the Pi delivers, with
    no colour conversion. Timestamps come from the sidecar when present, else
    ``index / fps``. A decode that stops early (truncated or corrupt file) still
    yields every good frame; then ``self.error`` holds a VideoError saying how many
    frames were read and where it stopped, and with ``strict=True`` (default) it is
    raised after the last good frame.
    """

    def __init__(self, path: str | os.PathLike, mode: str = "bgr", strict: bool = True,
                 info: VideoInfo | None = None, reuse_buffers: int = 0):
        if mode not in ("bgr", "yuv"):
            raise VideoError(f"reader mode must be 'bgr' or 'yuv', got {mode!r}")
        # a caller that probed already passes what it found (each probe runs ffmpeg)
        self.info = info if info is not None and Path(info.path) == Path(path) else probe(path)
        self.path = Path(path)
        self.mode = mode
        self.strict = strict
        # reuse_buffers=N: frames are decoded into a ring of N buffers, so the frame
        # yielded N frames ago is overwritten: for a consumer that keeps no frame
        # (the tracker copies what it keeps). Saves a fresh allocation, and its page
        # faults, per frame.
        if reuse_buffers < 0 or reuse_buffers == 1:
            raise VideoError(f"reuse_buffers must be 0 (off) or at least 2, got {reuse_buffers}")
        self.reuse_buffers = int(reuse_buffers)
        self.width, self.height, self.fps = self.info.width, self.info.height, self.info.fps
        if mode == "yuv" and (self.width % 2 or self.height % 2):
            raise VideoError(f"{self.path}: yuv mode needs an even frame size, got {self.width}x{self.height}")
        self.timestamps_ns = read_timestamps(self.path)
        # how long each frame exposed, when the recorder knew it: positions of moving
        # balls are those at mid-exposure, so event times need it
        self.exposure_s = sidecar_exposure(self.path, self.fps)
        self.frames_read = 0
        self.error: VideoError | None = None
        self.timestamp_note: str | None = None
        self._count: int | None = None
        self._pending = None  # a decoder started ahead of iteration (start())

    @property
    def frame_count(self) -> int:
        """Frames in the file (exact count from a stream copy; no decoding)."""
        if self._count is None:
            self._count = self.count_frames()
        return self._count

    def count_frames(self) -> int:
        res = _run([ffmpeg_exe(), "-hide_banner", "-nostats", "-v", "error", "-progress", "pipe:1",
                    "-i", str(self.path), "-map", "0:v:0", "-c", "copy", "-f", "null", "-"])
        found = re.findall(rb"frame=(\d+)", res.stdout)
        return int(found[-1]) if found else 0

    @property
    def expected_frames(self) -> int:
        """What the container header promises (duration x fps)."""
        return self.info.frame_count

    def _timestamp(self, i: int) -> int:
        ts = self.timestamps_ns
        if ts is not None and i < len(ts):
            return int(ts[i])
        if ts is not None and len(ts):
            if self.timestamp_note is None:
                self.timestamp_note = f"sidecar has {len(ts)} timestamps; later frames are extrapolated at {self.fps:g} fps"
            return int(ts[-1] + round((i - len(ts) + 1) * 1e9 / self.fps))
        return int(round(i * 1e9 / self.fps))

    def start(self) -> "VideoReader":
        """Start the decoder now (iterating starts it otherwise): a caller with set-up
        work of its own does it while ffmpeg opens the file and decodes the first
        frames (some 30 ms of waiting per file at 728x544)."""
        if self._pending is None:
            self._pending = self._spawn()
        return self

    def close(self) -> None:
        """Stop a decoder started by start() that was never iterated."""
        if self._pending is not None:
            proc, err = self._pending
            self._pending = None
            proc.stdout.close()
            proc.kill()
            proc.wait()
            err.close()

    def _spawn(self):
        pix = "bgr24" if self.mode == "bgr" else "nv12"
        cmd = [ffmpeg_exe(), "-hide_banner", "-nostdin", "-v", "error", *_SWS, "-i", str(self.path),
               "-map", "0:v:0", "-f", "rawvideo", "-pix_fmt", pix, "-fps_mode", "passthrough", "-"]
        err = tempfile.TemporaryFile()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, bufsize=0)
        _widen_pipe(proc.stdout, self._frame_bytes())
        return proc, err

    def _frame_bytes(self) -> int:
        w, h = self.width, self.height
        return w * h * 3 if self.mode == "bgr" else w * h * 3 // 2

    def __iter__(self) -> Iterator[Frame]:
        w, h = self.width, self.height
        size = self._frame_bytes()
        proc, err = self._pending if self._pending is not None else self._spawn()
        self._pending = None
        self.frames_read = 0
        self.error = None
        partial = 0
        ring = [np.empty(size, np.uint8) for _ in range(self.reuse_buffers)]
        try:
            while True:
                if ring:
                    arr = ring[self.frames_read % len(ring)]
                    got = _read_into(proc.stdout, arr)
                else:
                    buf = _read_exact(proc.stdout, size)
                    got = len(buf)
                    arr = np.frombuffer(buf, np.uint8) if got == size else None
                if got < size:
                    partial = got
                    break
                i = self.frames_read
                if self.mode == "bgr":
                    frame = Frame(i, self._timestamp(i), bgr=arr.reshape(h, w, 3))
                else:
                    frame = Frame(i, self._timestamp(i), y=arr[: w * h].reshape(h, w),
                                  uv=arr[w * h:].reshape(h // 2, w // 2, 2))
                self.frames_read += 1
                yield frame
        finally:
            if proc.poll() is None:
                proc.stdout.close()
                proc.kill()
            rc = proc.wait()
            err.seek(0)
            msg = err.read().decode("utf-8", "replace").strip()
            err.close()
        # Only reached when the loop ended by itself (not when the caller stopped early).
        problems = [ln for ln in msg.splitlines() if ln.strip()]
        short = self.expected_frames > 0 and self.frames_read < self.expected_frames - 1
        if rc != 0 or partial or short or problems:
            where = f"stopped after {self.frames_read} good frames"
            if self.expected_frames:
                where += f" of {self.expected_frames} the header promises"
            if self.frames_read:
                where += f" (last good frame {self.frames_read - 1}, t={self._timestamp(self.frames_read - 1) / 1e9:.3f} s)"
            detail = problems[0][:160] if problems else ("incomplete last frame" if partial else "stream ends early")
            kind = "truncated" if (short or partial) else "corrupt"
            self.error = VideoError(f"{self.path}: {kind} video, {where}: {detail}")
            self.error.frames_read = self.frames_read  # type: ignore[attr-defined]
            if self.frames_read == 0 and rc != 0:
                self.error = VideoError(f"{self.path}: unreadable video, no frame decoded: {detail}")
                self.error.frames_read = 0  # type: ignore[attr-defined]
            if self.strict:
                raise self.error

    def read_all(self) -> list[Frame]:
        """Every frame (strict mode raises after reading; keep ``frames`` from ``self.error``)."""
        frames: list[Frame] = []
        try:
            for f in self:
                frames.append(f)
        except VideoError as exc:
            exc.frames = frames  # type: ignore[attr-defined]
            raise
        return frames


def _widen_pipe(stream, frame_bytes: int) -> None:
    """Let the pipe hold a whole frame (Linux), so a frame is one read instead of
    sixteen 64 KiB ones and ffmpeg can decode the next frame while this one is used:
    review wall time -25 % on the benchmark clips (728x544)."""
    try:
        import fcntl

        fcntl.fcntl(stream.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), min(max(frame_bytes, 1 << 16), 1 << 20))
    except (ImportError, OSError, ValueError):  # not Linux, or more than the system's pipe-max-size
        pass


def _read_exact(stream, n: int) -> bytes:
    chunks = []
    got = 0
    while got < n:
        b = stream.read(n - got)
        if not b:
            break
        chunks.append(b)
        got += len(b)
    return b"".join(chunks)


def _read_into(stream, arr: np.ndarray) -> int:
    view = memoryview(arr).cast("B")
    got, n = 0, len(view)
    while got < n:
        k = stream.readinto(view[got:])
        if not k:
            break
        got += k
    return got


def write_video(path: str | os.PathLike, frames, fps: float, crf: int = 23, timestamps_ns=None, preset: str = "medium") -> Path:
    """Write an iterable of BGR frames to ``path`` (convenience for tests and tools)."""
    it = iter(frames)
    first = next(it, None)
    if first is None:
        raise VideoError(f"{path}: no frames to write")
    h, w = first.shape[:2]
    ts = None if timestamps_ns is None else list(timestamps_ns)
    with VideoWriter(path, w, h, fps, crf=crf, preset=preset) as vw:
        vw.write(first, None if ts is None else ts[0])
        for i, f in enumerate(it, 1):
            vw.write(f, None if ts is None else ts[i])
    return Path(path)


