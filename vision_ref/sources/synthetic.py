"""Synthetic frames: the renderer streaming a simulated shot or match, or frames in memory.

:class:`SyntheticSource` renders a :class:`ShotSimulation` (a scenario, a random
shot, a multi-shot sequence) frame by frame, paced at the camera rate (a rehearsal
of live play: the consumer must keep up) or as fast as the renderer goes. It can
lose chosen frames on purpose (``drop``), the way a camera does, to test that the
loop reports them. :class:`MemorySource` streams pre-rendered frames (for the
benchmark: rendering would otherwise dominate the time measured).
"""

from __future__ import annotations

import time
from typing import Iterable, Iterator, Sequence

import numpy as np

from vision_ref.errors import SourceError
from vision_ref.messages import Frame
from vision_ref.sources.base import FrameSource, SourceStats


class Pacer:
    def __init__(self, fps: float, paced: bool):
        self.period = 1.0 / fps
        self.paced = paced
        self.t0: float | None = None

    def wait(self, i: int) -> None:
        if not self.paced:
            return
        now = time.monotonic()
        if self.t0 is None:
            self.t0 = now - i * self.period
        delay = self.t0 + i * self.period - now
        if delay > 0:
            time.sleep(delay)


class SyntheticSource(FrameSource):
    """Rendered frames of ``sim`` seen by ``camera`` with ``settings`` (fps, exposure...).

    ``mode``: "bgr" or "yuv" (the Pi's layout). ``drop``: frame indices to lose.
    ``realtime`` follows ``paced``: a paced stream is a camera that does not wait.
    """

    def __init__(self, sim, camera, settings=None, table=None, paced: bool = False, mode: str = "bgr",
                 drop: Iterable[int] = (), name: str = "synthetic", renderer=None):
        super().__init__()
        from vision_ref.rules.table import DEFAULT_TABLE
        from vision_ref.sim.render import RenderSettings

        if mode not in ("bgr", "yuv"):
            raise SourceError(f"synthetic mode must be bgr or yuv, got {mode!r}")
        self.sim = sim
        self.camera = camera
        self.settings = settings or RenderSettings()
        self.table = table or DEFAULT_TABLE
        self.paced = paced
        self.realtime = paced
        self.mode = mode
        self.drop = set(int(i) for i in drop)
        self.name = name
        self._renderer = renderer

    @property
    def fps(self) -> float:
        return float(self.settings.fps)

    @property
    def size(self) -> tuple[int, int]:
        return int(self.camera.width), int(self.camera.height)

    @property
    def exposure_s(self) -> float | None:
        return self.settings.exposure_s

    @property
    def renderer(self):
        if self._renderer is None:
            from vision_ref.sim.render import Renderer

            self._renderer = Renderer(self.camera, self.table, self.settings)
        return self._renderer

    @property
    def n_frames(self) -> int:
        return self.renderer.n_frames(self.sim)

    def frames(self) -> Iterator[Frame]:
        r = self.renderer
        pacer = Pacer(self.fps, self.paced)
        self.stats = SourceStats(period_ns=1e9 / self.fps)
        for i in range(r.n_frames(self.sim)):
            if i in self.drop:
                self.stats.dropped += 1
                continue
            img = r.render_frame(self.sim, i)
            pacer.wait(i)
            self.stats.frames += 1
            yield make_frame(i, r.timestamp_ns(i), img, self.mode)


def make_frame(index: int, ts: int, bgr: np.ndarray, mode: str) -> Frame:
    if mode == "yuv":
        from vision_ref.sources.opencv import bgr_to_yuv420

        y, uv = bgr_to_yuv420(bgr)
        return Frame(index, ts, y=y, uv=uv)
    return Frame(index, ts, bgr=bgr)


class MemorySource(FrameSource):
    """Frames held in memory (BGR arrays or Frames), stamped at ``fps``, optionally
    repeated ``repeat`` times; ``paced`` as for :class:`SyntheticSource`."""

    def __init__(self, frames: Sequence, fps: float, paced: bool = False, repeat: int = 1,
                 drop: Iterable[int] = (), mode: str = "bgr", name: str = "memory", exposure_s: float | None = None):
        super().__init__()
        if not len(frames):
            raise SourceError("memory source: no frames")
        self._frames = list(frames)
        self._fps = float(fps)
        self.paced = paced
        self.realtime = paced
        self.repeat = int(repeat)
        self.drop = set(int(i) for i in drop)
        self.mode = mode
        self.name = name
        self._exposure_s = exposure_s
        first = self._frames[0]
        img = first.y if isinstance(first, Frame) and first.y is not None else (
            first.bgr if isinstance(first, Frame) else first)
        self._size = (int(img.shape[1]), int(img.shape[0]))

    def frames(self) -> Iterator[Frame]:
        pacer = Pacer(self._fps, self.paced)
        n = len(self._frames)
        self.stats = SourceStats(period_ns=1e9 / self._fps)
        for i in range(n * self.repeat):
            if i in self.drop:
                self.stats.dropped += 1
                continue
            src = self._frames[i % n]
            ts = int(round(i * 1e9 / self._fps))
            pacer.wait(i)
            self.stats.frames += 1
            if isinstance(src, Frame):
                yield Frame(i, ts, y=src.y, uv=src.uv, bgr=src.bgr)
            else:
                yield make_frame(i, ts, src, self.mode)
