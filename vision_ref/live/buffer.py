"""The bounded buffer between the capture thread and the pipeline, with backpressure.

The capture thread puts every frame; the pipeline takes them in order. When the
buffer is full:

- policy ``block`` (files, synthetic streams): the capture thread waits — nothing
  is lost, the source simply slows down;
- policy ``shed_still`` (a live camera, which will not wait): while the table is
  still — the pipeline says nothing moves *and* the capture-side motion gate saw no
  change in a queued frame — the oldest such frame is shed (counted, and told to
  the tracker as dropped). While anything moves, the capture thread
  waits instead: then the camera itself runs out of buffers and the loss shows up
  honestly as a timestamp gap in the shot, reported as doubtful, never hidden.

Control messages (source ended, camera lost) bypass the bound so they are never
lost behind frames.
"""

from __future__ import annotations

import collections
import threading
import time

import numpy as np

from vision_ref.messages import Frame


class MotionGate:
    """A cheap change detector on 1/``scale`` luma: is this frame different from the last?

    Area-averaging over scale x scale blocks removes sensor noise (sigma 2 -> 0.25 at
    8x8), so a block that changed by more than ``threshold`` grey levels is real
    change: a ball, a pin, a hand. ``min_blocks`` changed blocks make the frame moving.
    """

    def __init__(self, scale: int = 8, threshold: float = 12.0, min_blocks: int = 3):
        self.scale = int(scale)
        self.threshold = float(threshold)
        self.min_blocks = int(min_blocks)
        self._prev: np.ndarray | None = None

    def _small(self, frame: Frame) -> np.ndarray:
        import cv2

        img = frame.y if frame.y is not None else cv2.cvtColor(frame.bgr, cv2.COLOR_BGR2GRAY)
        h, w = img.shape
        return cv2.resize(img, (max(1, w // self.scale), max(1, h // self.scale)), interpolation=cv2.INTER_AREA).astype(np.int16)

    def moving(self, frame: Frame) -> bool:
        small = self._small(frame)
        prev, self._prev = self._prev, small
        if prev is None or prev.shape != small.shape:
            return True
        return int(np.count_nonzero(np.abs(small - prev) > self.threshold)) >= self.min_blocks


class FrameBuffer:
    """Bounded FIFO of frames (plus unbounded control messages)."""

    def __init__(self, capacity: int, policy: str = "block", gate: MotionGate | None = None):
        if capacity < 1:
            raise ValueError(f"buffer capacity must be >= 1, got {capacity}")
        if policy not in ("block", "shed_still"):
            raise ValueError(f"buffer policy must be block or shed_still, got {policy!r}")
        self.capacity = int(capacity)
        self.policy = policy
        self.gate = gate if gate is not None else (MotionGate() if policy == "shed_still" else None)
        self._q: collections.deque = collections.deque()
        self._controls: collections.deque = collections.deque()
        self._cv = threading.Condition()
        self.consumer_moving = False  # set by the pipeline after each frame
        self.closed = False
        self.shed: list[int] = []  # frame indices shed while still
        self.high_water = 0
        self.blocked_s = 0.0  # time the capture thread waited (backpressure)
        self.puts = 0

    def __len__(self) -> int:
        return len(self._q)

    def put(self, frame: Frame) -> bool:
        """Queue a frame; False when the buffer was closed (the consumer has stopped)."""
        still = self.gate is not None and not self.gate.moving(frame)
        with self._cv:
            while len(self._q) >= self.capacity and not self.closed:
                if self.policy == "shed_still" and not self.consumer_moving:
                    k = next((j for j, (_, st) in enumerate(self._q) if st), None)
                    if k is not None:  # the oldest frame in which nothing changed
                        old, _ = self._q[k]
                        del self._q[k]
                        self.shed.append(int(old.index))
                        continue
                t0 = time.monotonic()
                self._cv.wait(0.05)
                self.blocked_s += time.monotonic() - t0
            if self.closed:
                return False
            self._q.append((frame, still))
            self.puts += 1
            self.high_water = max(self.high_water, len(self._q))
            self._cv.notify_all()
            return True

    def put_control(self, kind: str, payload=None) -> None:
        with self._cv:
            self._controls.append((kind, payload))
            self._cv.notify_all()

    def get(self, timeout: float = 0.1):
        """('frame', Frame), a control message (kind, payload), or None on timeout.
        Frames queued before a control message come out first."""
        deadline = time.monotonic() + timeout
        with self._cv:
            while True:
                if self._q:
                    frame, _ = self._q.popleft()
                    self._cv.notify_all()
                    return "frame", frame
                if self._controls:
                    return self._controls.popleft()
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._cv.wait(left)

    def take_shed(self) -> list[int]:
        with self._cv:
            out, self.shed = self.shed, []
            return out

    def close(self) -> None:
        with self._cv:
            self.closed = True
            self._cv.notify_all()
