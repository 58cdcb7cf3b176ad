"""The one interface every frame source implements, and drop detection from timestamps.

A :class:`FrameSource` yields :class:`vision_ref.messages.Frame` objects whose
``index`` counts *sensor* frames: when the camera (or the capture) loses frames,
the next frame's index jumps over them. A consumer therefore sees every drop as
an index gap and can tell the tracker (``Tracker.mark_dropped``) instead of
silently treating the next frame as the following one.

Drops are found from sensor timestamps (:class:`DropDetector`): a camera running at
a fixed frame duration delivers frames one period apart (with jitter); an
interval of about ``k`` periods means ``k - 1`` frames never reached us.
"""

from __future__ import annotations

import statistics
from abc import ABC, abstractmethod
from collections import deque
from dataclasses import dataclass, field
from typing import Iterator

from vision_ref.errors import SourceError
from vision_ref.messages import Frame


@dataclass
class Gap:
    """Frames missing between two delivered frames.

    ``first_index`` is the index the first missing frame would have had; ``count``
    how many are missing; ``t_before_ns`` / ``t_after_ns`` the timestamps of the
    delivered frames either side.
    """

    first_index: int
    count: int
    t_before_ns: int
    t_after_ns: int

    @property
    def indices(self) -> range:
        return range(self.first_index, self.first_index + self.count)

    def to_dict(self) -> dict:
        return {"first_index": self.first_index, "count": self.count,
                "t_before_ns": self.t_before_ns, "t_after_ns": self.t_after_ns}


@dataclass
class SourceStats:
    """What a source delivered so far: frames, drops (with where), timing jitter."""

    frames: int = 0
    dropped: int = 0
    gaps: list[Gap] = field(default_factory=list)
    period_ns: float = 0.0  # measured frame period (first to last timestamp over the frames between)
    jitter_ns: float = 0.0  # standard deviation of the clean intervals seen
    max_interval_ns: int = 0

    @property
    def measured_fps(self) -> float:
        return 1e9 / self.period_ns if self.period_ns > 0 else 0.0

    def to_dict(self) -> dict:
        return {"frames": self.frames, "dropped": self.dropped, "gaps": [g.to_dict() for g in self.gaps],
                "measured_fps": round(self.measured_fps, 3), "jitter_us": round(self.jitter_ns / 1e3, 2),
                "max_interval_ms": round(self.max_interval_ns / 1e6, 3)}


class DropDetector:
    """Numbers frames on the sensor's timeline and finds drops from timestamp gaps.

    ``nominal_fps`` is what the camera was asked for (``FrameDurationLimits``). The
    period used to count missing frames starts at the nominal one and follows the
    median of the last ``window`` clean intervals, so a sensor that really runs at
    60.38 instead of 60 fps does not accumulate phantom drops over a long match. An
    interval longer than ``tolerance`` periods (default 1.5: anything less is
    jitter) counts ``round(interval / period) - 1`` missing frames.
    A timestamp that does not increase is refused (SourceError): a clock that goes
    backwards would make every later frame time wrong.
    """

    def __init__(self, nominal_fps: float, tolerance: float = 1.5, window: int = 64):
        if nominal_fps <= 0:
            raise SourceError(f"frame rate must be positive, got {nominal_fps}")
        if not 1.0 < tolerance < 2.0:
            raise ValueError(f"tolerance must be in (1, 2) periods, got {tolerance}")
        self.nominal_period_ns = 1e9 / float(nominal_fps)
        self.tolerance = float(tolerance)
        self._recent: deque[int] = deque(maxlen=window)
        self._last_ts: int | None = None
        self._first: tuple[int, int] | None = None
        self._next_index = 0
        # running mean/variance of clean intervals (Welford) for the jitter figure
        self._n = 0
        self._mean = 0.0
        self._m2 = 0.0
        self.stats = SourceStats(period_ns=self.nominal_period_ns)

    @property
    def period_ns(self) -> float:
        if len(self._recent) >= 8:
            return float(statistics.median(self._recent))
        return self.nominal_period_ns

    def observe(self, timestamp_ns: int) -> tuple[int, Gap | None]:
        """The index of a frame with this timestamp, and the gap before it (or None)."""
        ts = int(timestamp_ns)
        st = self.stats
        gap = None
        if self._last_ts is None:
            index = self._next_index
        else:
            dt = ts - self._last_ts
            if dt <= 0:
                raise SourceError(
                    f"sensor timestamp went backwards or repeated at frame {self._next_index} "
                    f"({ts} ns after {self._last_ts} ns)")
            st.max_interval_ns = max(st.max_interval_ns, dt)
            period = self.period_ns
            if dt > self.tolerance * period:
                missing = max(1, int(round(dt / period)) - 1)
                gap = Gap(self._next_index, missing, self._last_ts, ts)
                st.gaps.append(gap)
                st.dropped += missing
                self._next_index += missing
            else:
                self._recent.append(dt)
                self._n += 1
                d = dt - self._mean
                self._mean += d / self._n
                self._m2 += d * (dt - self._mean)
                st.jitter_ns = (self._m2 / (self._n - 1)) ** 0.5 if self._n > 1 else 0.0
            index = self._next_index
        if self._first is None:
            self._first = (ts, index)
        self._last_ts = ts
        self._next_index += 1
        st.frames += 1
        # the reported rate: first to last timestamp over the frames between them
        # (drops included), which a long stream pins down far better than any median
        span = index - self._first[1]
        st.period_ns = (ts - self._first[0]) / span if span >= 8 else self.period_ns
        return index, gap

    def skip(self, count: int) -> None:
        """Frames the source knows it lost without a timestamp (e.g. a decode error)."""
        self._next_index += int(count)
        self.stats.dropped += int(count)


class FrameSource(ABC):
    """A stream of frames: a camera, a video file or the renderer.

    Use as ``with source: for frame in source.frames(): ...``. ``fps`` is the rate
    the frames are (meant to be) taken at, ``size`` (width, height). ``realtime``
    says whether the source is a camera that will not wait: if it is not read in
    time, frames are lost at the sensor (and show up as index gaps). File and
    synthetic sources simply wait, so a slow consumer loses nothing.
    ``exposure_s`` is the exposure time when known (for blur-aware tracking).
    """

    name: str = "source"
    realtime: bool = False

    def __init__(self) -> None:
        self.stats = SourceStats()
        self._opened = False

    # Sources that know their rate, size and exposure up front keep them here; the
    # properties can be overridden by sources that read them from elsewhere.
    _fps: float = 0.0
    _size: tuple[int, int] = (0, 0)
    _exposure_s: float | None = None

    @property
    def fps(self) -> float:
        return self._fps

    @property
    def size(self) -> tuple[int, int]:
        return self._size

    @property
    def exposure_s(self) -> float | None:
        return self._exposure_s

    def open(self) -> "FrameSource":
        self._opened = True
        return self

    def close(self) -> None:
        self._opened = False

    @abstractmethod
    def frames(self) -> Iterator[Frame]:
        """Frames in order; ``index`` jumps over frames that were lost."""

    def describe(self) -> dict:
        """What the match log records about the source."""
        w, h = self.size
        return {"name": self.name, "fps": self.fps, "width": w, "height": h, "realtime": self.realtime,
                "exposure_s": self.exposure_s}

    def __enter__(self) -> "FrameSource":
        if not self._opened:
            self.open()
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close()


def renumber(frames: Iterator[Frame], detector: DropDetector) -> Iterator[Frame]:
    """Re-index frames on the sensor timeline from their timestamps (drops -> index gaps)."""
    for f in frames:
        index, _ = detector.observe(f.timestamp_ns)
        f.index = index
        yield f
