"""What the live loop runs on each frame: frames in, finished shot records out.

:class:`ShotStages` is the small protocol the loop drives:

- ``update(frame)`` for every delivered frame, ``mark_dropped(index)`` for every
  frame that never arrived (so the tracker knows about the gap);
- ``table_moving``: a shot (or anything) is in progress — the loop then never sheds
  a frame;
- ``next_shot(shooter)``: a :class:`CompletedShot` once a shot has ended and settled,
  else None; called again until None (the shooter of a second shot depends on the
  decision of the first);
- ``reset()``: forget everything after a camera loss (the table may have changed).

:class:`VisionStages` is the real pipeline: ``track.tracker.Tracker`` ->
``events.segment.segment_shots`` -> ``events.infer.infer_shot``.
:class:`TruthStages` reads the simulator's truth instead (the perfect detector of
``events.synthetic.tracks_from_truth``, one level further: exact records) — for
rehearsing the loop, the log, the operator calls and the crash tests without
rendering, and for measuring the loop's own overhead.
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Iterator, Protocol, Sequence

import numpy as np

from vision_ref.errors import ContractError
from vision_ref.messages import Frame
from vision_ref.sources.base import FrameSource, SourceStats
from vision_ref.sources.synthetic import Pacer


@dataclass
class CompletedShot:
    """A finished shot: its record (SHOT_RECORD.md) and where it is in the stream.

    ``window``: ``start_frame``, ``strike_frame``, ``end_frame`` (sensor frame
    indices) and ``strike_ns`` (the strike frame's timestamp: record times are
    seconds from it).
    """

    record: dict
    window: dict = field(default_factory=dict)


class ShotStages(Protocol):
    def update(self, frame: Frame) -> None: ...

    def mark_dropped(self, frame_index: int) -> None: ...

    @property
    def table_moving(self) -> bool: ...

    def next_shot(self, shooter: str) -> CompletedShot | None: ...

    def reset(self) -> None: ...

    def flush(self) -> None:
        """The stream ended (a file): hand over a shot that has come to rest."""


# ---- the real pipeline ------------------------------------------------------------------


class VisionStages:
    """Tracker -> shot segmentation -> event inference on the frames as they come.

    A shot is handed over once the table has been still for ``settle_s`` after
    motion; the tracker's rows up to the end of that shot are then done with and
    the next segmentation starts there.
    """

    def __init__(self, profile, fps: float, exposure_s: float | None = None, table=None,
                 settle_s: float = 0.5, settings=None):
        from vision_ref.track.tracker import Tracker

        self.profile = profile
        self.fps = float(fps)
        self.exposure_s = exposure_s
        self.table = table or profile.table
        self.settings = settings
        self.settle_frames = max(1, int(round(settle_s * fps)))
        self._make = lambda: Tracker(profile, fps, exposure_s=exposure_s)
        self.tracker = self._make()
        self._row0 = 0
        self._prev_start: int | None = None
        self._still = 0
        self._motion = False

    def reset(self) -> None:
        self.tracker = self._make()
        self._row0 = 0
        self._prev_start = None
        self._still = 0
        self._motion = False

    def update(self, frame: Frame) -> None:
        self.tracker.update(frame, observe=False)  # the shot stage reads the tracks
        if self.tracker.table_moving:
            self._motion = True
            self._still = 0
        else:
            self._still += 1

    def mark_dropped(self, frame_index: int) -> None:
        self.tracker.mark_dropped(frame_index)

    @property
    def table_moving(self) -> bool:
        return bool(self.tracker.table_moving)

    def flush(self) -> None:
        """The stream has ended: a shot that came to rest may be handed over now."""
        self._flushing = True

    def next_shot(self, shooter: str) -> CompletedShot | None:
        flushing = getattr(self, "_flushing", False)
        if not self._motion or (self._still < self.settle_frames and not flushing):
            return None
        from vision_ref.events.infer import infer_shot
        from vision_ref.events.segment import segment_shots

        # The tracks handed over start at the previous shot's window, as review's whole-clip
        # tracks would have it there: segmentation sees the previous shot (hand placements
        # since then) and inference can look back to the last known pin states.
        base = self._prev_start if self._prev_start is not None else self._row0
        tracks = self.tracker.tracks(start_row=base)
        cut = self._row0 - base  # rows before this belong to shots already decided
        last = len(tracks.t) - (0 if flushing else 1)
        windows = [w for w in segment_shots(tracks)
                   if w.strike_row >= cut and getattr(w, "complete", True) and w.end_row < last]
        if not windows:
            # motion without a strike (a ball placed by hand, a pin set): nothing to decide
            self._motion = False
            self._row0 = max(self._row0, self.tracker.n_rows - self.settle_frames)
            return None
        w = windows[0]
        fi = tracks.frame_index
        window = {"start_frame": int(fi[w.start_row]), "strike_frame": int(fi[w.strike_row]),
                  "end_frame": int(fi[w.end_row]), "strike_ns": int(round(tracks.t[w.strike_row] * 1e9))}
        self._row0 = base + int(w.end_row)
        self._prev_start = base + int(w.start_row)
        if len(windows) == 1:
            self._motion = False
        try:
            record = infer_shot(tracks, w, shooter=shooter, table=self.table, settings=self.settings)
        except ContractError as exc:
            # the tracks do not make a valid record (a ball not found before the strike):
            # reported by the loop, never guessed
            return CompletedShot({}, dict(window, error=str(exc)))
        return CompletedShot(record, window)


# ---- the simulator's truth ----------------------------------------------------------------


class ShotTimeline:
    """Simulated shots played one after another on one clock (clip time 0 = frame 0).

    ``shots``: ShotSimulation objects (each with ``duration``, ``strike_time``,
    ``truth_record(fps)``, ``truth_frames(fps)``). Shot k occupies clip times
    ``[offset_k, offset_k + duration_k)``.
    """

    def __init__(self, shots: Sequence, fps: float, settle_s: float = 0.3):
        if not shots:
            raise ValueError("a timeline needs at least one shot")
        self.shots = list(shots)
        self.fps = float(fps)
        self.settle_s = float(settle_s)
        self.offsets: list[float] = []
        t = 0.0
        for s in self.shots:
            self.offsets.append(t)
            t += float(s.duration)
        self.duration = t
        self._records: dict[int, dict] = {}
        self._moving: dict[int, np.ndarray] = {}
        self._moving_all: np.ndarray | None = None  # one clip's per-frame motion (a sequence)

    @classmethod
    def from_sequence(cls, seq, fps: float, settle_s: float = 0.3) -> "ShotTimeline":
        """The shots of a :class:`vision_ref.sim.sequence.ShotSequence` at their clip times
        (the respot-by-hand gaps between them included): the same clip the renderer makes."""
        tl = cls([p.shot for p in seq.played], fps, settle_s)
        tl.offsets = [float(p.start) for p in seq.played]
        tl.duration = float(seq.duration)
        recs = seq.truth_records(fps)
        tl._records = {k: r for k, r in enumerate(recs)}
        tl._moving_all = np.asarray(seq.truth_frames(fps)["moving"], dtype=bool)
        return tl

    @property
    def n_frames(self) -> int:
        return int(math.floor(self.duration * self.fps))

    def frame_time(self, i: int) -> float:
        return i / self.fps

    def timestamp_ns(self, i: int) -> int:
        return int(round(i * 1e9 / self.fps))

    def shot_at(self, t: float) -> int:
        for k in range(len(self.shots) - 1, -1, -1):
            if t >= self.offsets[k]:
                return k
        return 0

    def first_frame(self, k: int) -> int:
        return int(math.ceil(self.offsets[k] * self.fps - 1e-9))

    def record(self, k: int) -> dict:
        if k not in self._records:
            self._records[k] = self.shots[k].truth_record(fps=self.fps)
        return copy.deepcopy(self._records[k])

    def moving(self, i: int) -> bool:
        if self._moving_all is not None:
            return bool(self._moving_all[min(max(i, 0), len(self._moving_all) - 1)])
        t = self.frame_time(i)
        k = self.shot_at(t)
        if k not in self._moving:
            self._moving[k] = np.asarray(self.shots[k].truth_frames(self.fps)["moving"], dtype=bool)
        j = int(round((t - self.offsets[k]) * self.fps))
        mv = self._moving[k]
        return bool(mv[min(max(j, 0), len(mv) - 1)])

    def strike_frame(self, k: int) -> int:
        return int(math.ceil((self.offsets[k] + self.shots[k].strike_time) * self.fps - 1e-9))

    def ready_frame(self, k: int) -> int:
        """The first frame at which shot k has ended and settled (its record may be handed over)."""
        s = self.shots[k]
        end = self.offsets[k] + s.strike_time + (s.duration - s.strike_time - getattr(s, "tail", 0.0)) + self.settle_s
        return min(int(math.ceil(end * self.fps)), int(math.floor((self.offsets[k] + s.duration) * self.fps)))


class TruthStages:
    """Exact shot records from a :class:`ShotTimeline`, handed over when shot k's
    settle frame has been seen (``skip_shots``: shots already decided before a resume)."""

    def __init__(self, timeline: ShotTimeline, skip_shots: int = 0):
        self.timeline = timeline
        self._next = int(skip_shots)
        self._last_index = -1
        self._moving = False
        self.dropped: list[int] = []

    def reset(self) -> None:
        # after a camera loss the shot in progress is gone; move on to the next shot
        k = self.timeline.shot_at(self.timeline.frame_time(max(self._last_index, 0)))
        if self._next <= k and self._last_index >= self.timeline.strike_frame(k):
            self._next = k + 1
        self._moving = False

    def update(self, frame: Frame) -> None:
        self._last_index = int(frame.index)
        self._moving = self.timeline.moving(frame.index)

    def mark_dropped(self, frame_index: int) -> None:
        self.dropped.append(int(frame_index))

    def flush(self) -> None:
        pass

    @property
    def table_moving(self) -> bool:
        return self._moving

    def next_shot(self, shooter: str) -> CompletedShot | None:
        k = self._next
        tl = self.timeline
        if k >= len(tl.shots) or self._last_index < tl.ready_frame(k):
            return None
        self._next += 1
        rec = tl.record(k)
        rec["shooter"] = shooter
        strike = tl.strike_frame(k)
        window = {"start_frame": tl.first_frame(k), "strike_frame": strike, "end_frame": tl.ready_frame(k),
                  "strike_ns": int(round((tl.offsets[k] + tl.shots[k].strike_time) * 1e9)), "timeline_shot": k}
        return CompletedShot(rec, window)


class TimelineSource(FrameSource):
    """Blank frames on a timeline's clock: what :class:`TruthStages` needs is the
    timestamps, not pixels. ``start_frame`` resumes part-way; ``drop`` loses frames;
    ``motion_marks`` paints a moving square while the table moves (so pixel-based
    gates, like the buffer's motion gate, see the motion)."""

    name = "timeline"

    def __init__(self, timeline: ShotTimeline, size: tuple[int, int] = (64, 48), paced: bool = False,
                 start_frame: int = 0, drop: Sequence[int] = (), motion_marks: bool = False):
        super().__init__()
        self.timeline = timeline
        self.motion_marks = motion_marks
        self._size = (int(size[0]), int(size[1]))
        self.paced = paced
        self.realtime = paced
        self.start_frame = int(start_frame)
        self._img = np.zeros((self._size[1], self._size[0]), np.uint8)
        self._drop = set(int(i) for i in drop)

    @property
    def fps(self) -> float:
        return self.timeline.fps

    @property
    def size(self) -> tuple[int, int]:
        return self._size

    def frames(self) -> Iterator[Frame]:
        tl = self.timeline
        pacer = Pacer(tl.fps, self.paced)
        self.stats = SourceStats(period_ns=1e9 / tl.fps)
        for i in range(self.start_frame, tl.n_frames):
            if i in self._drop:
                self.stats.dropped += 1
                continue
            pacer.wait(i - self.start_frame)
            self.stats.frames += 1
            img = self._img
            if self.motion_marks and tl.moving(i):
                img = img.copy()
                w, h = self._size
                x = (4 * i) % max(1, w - 16)
                img[h // 2 - 8:h // 2 + 8, x:x + 16] = 255
            yield Frame(i, tl.timestamp_ns(i), y=img)


def demo_shots(n: int, seed: int = 0, table=None) -> list:
    """``n`` seeded shots from the standard layout (random_shot when the sim has it)."""
    from vision_ref.sim.physics import Layout, Strike, simulate

    rng = np.random.default_rng(seed)
    try:
        from vision_ref.sim.random_shots import random_shot

        return [random_shot(rng) for _ in range(n)]
    except ImportError:
        pass
    shots = []
    for _ in range(n):
        layout = Layout.standard()
        cue = layout.balls["cue"]
        target = layout.balls["white1"] if rng.random() < 0.5 else (0.0, 0.0)
        ang = math.atan2(target[1] - cue[1], target[0] - cue[0]) + rng.normal(0.0, 0.12)
        shots.append(simulate(layout, Strike(speed=float(rng.uniform(1500.0, 4500.0)), angle=ang,
                                             side=float(rng.uniform(-0.3, 0.3)))))
    return shots
