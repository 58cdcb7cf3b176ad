"""The message types passed between the vision stages (ARCHITECTURE.md data flow).

FrameSource --Frame--> Detector --Observations--> Tracker --Tracks--> EventInference.
Shot records and decisions are JSON dicts per ../shared/rules/SHOT_RECORD.md and
live in :mod:`vision_ref.rules`.

Each message validates its arrays on construction and names the field with the
expected and actual shape when they disagree. Object order is fixed everywhere:
balls ``BALL_IDS`` (cue, white1, white2), pins ``PIN_IDS`` (king, head, foot, left, right).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np

from vision_ref.rules.table import BALL_IDS, PIN_IDS

N_BALLS = len(BALL_IDS)
N_PINS = len(PIN_IDS)


class BallState(IntEnum):
    UNKNOWN = 0  # not seen (occluded, not yet found)
    AT_REST = 1
    MOVING = 2
    OFF_TABLE = 3  # left the table over a cushion
    IN_HAND = 4  # lifted by hand


class PinState(IntEnum):
    UNKNOWN = 0
    STANDING = 1
    MOVING = 2  # wobbling, toppling, sliding
    DOWN = 3  # lying on the cloth
    LEANING = 4  # T4/T6: on a ball or another pin
    RAIL_STANDING = 5  # T2
    RAIL_DOWN = 6  # T3
    ABSENT = 7  # not on the table (being set, taken away)


def _check(name: str, arr: np.ndarray, shape: tuple, dtype=None) -> np.ndarray:
    a = np.asarray(arr) if dtype is None else np.asarray(arr, dtype=dtype)
    if len(shape) != a.ndim or any(s is not None and s != d for s, d in zip(shape, a.shape)):
        want = "(" + ", ".join("N" if s is None else str(s) for s in shape) + ")"
        raise ValueError(f"{name}: expected shape {want}, got {a.shape}")
    return a


@dataclass
class Frame:
    """One camera frame.

    ``y`` is the grey/luma plane (H, W) uint8; ``uv`` the half-resolution chroma
    (H/2, W/2, 2) uint8 as YUV420 delivers it; ``bgr`` a full colour frame
    (H, W, 3) when the source decodes to BGR. A frame carries ``y`` (+ ``uv``) or
    ``bgr`` or both; detectors use what is there.
    """

    index: int
    timestamp_ns: int
    y: np.ndarray | None = None
    uv: np.ndarray | None = None
    bgr: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.y is None and self.bgr is None:
            raise ValueError("Frame: needs a y plane or a bgr image")
        if self.y is not None:
            self.y = _check("Frame.y", self.y, (None, None))
        if self.bgr is not None:
            self.bgr = _check("Frame.bgr", self.bgr, (None, None, 3))
        if self.uv is not None:
            h, w = self.shape
            self.uv = _check("Frame.uv", self.uv, (h // 2, w // 2, 2))

    @property
    def shape(self) -> tuple[int, int]:
        img = self.y if self.y is not None else self.bgr
        return int(img.shape[0]), int(img.shape[1])

    @property
    def t(self) -> float:
        return self.timestamp_ns * 1e-9


@dataclass
class Observations:
    """What the detector saw in one frame, in table millimetres.

    Balls (N_BALLS rows, BALL_IDS order): ``ball_xy`` centre (NaN when not found),
    ``ball_conf`` 0..1, ``ball_state`` BallState codes. Pins (N_PINS rows,
    PIN_IDS order): ``pin_xy`` base (standing) or centre (lying), ``pin_angle`` the
    direction a lying pin points from base to head (radians, table frame),
    ``pin_state`` PinState codes, ``pin_conf`` 0..1.
    """

    frame_index: int
    t: float
    ball_xy: np.ndarray
    ball_conf: np.ndarray
    ball_state: np.ndarray
    pin_xy: np.ndarray
    pin_angle: np.ndarray
    pin_state: np.ndarray
    pin_conf: np.ndarray
    extra: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.ball_xy = _check("Observations.ball_xy", self.ball_xy, (N_BALLS, 2), np.float64)
        self.ball_conf = _check("Observations.ball_conf", self.ball_conf, (N_BALLS,), np.float64)
        self.ball_state = _check("Observations.ball_state", self.ball_state, (N_BALLS,), np.int8)
        self.pin_xy = _check("Observations.pin_xy", self.pin_xy, (N_PINS, 2), np.float64)
        self.pin_angle = _check("Observations.pin_angle", self.pin_angle, (N_PINS,), np.float64)
        self.pin_state = _check("Observations.pin_state", self.pin_state, (N_PINS,), np.int8)
        self.pin_conf = _check("Observations.pin_conf", self.pin_conf, (N_PINS,), np.float64)


@dataclass
class Track:
    """Time series of one object (a ball or a pin), one row per frame it was tracked in."""

    object_id: str
    t: np.ndarray  # (N,) seconds (sensor timestamps)
    frame_index: np.ndarray  # (N,) int
    xy: np.ndarray  # (N, 2) mm, NaN where not seen
    vel: np.ndarray  # (N, 2) mm/s (filtered)
    state: np.ndarray  # (N,) BallState or PinState codes
    conf: np.ndarray  # (N,) 0..1
    angle: np.ndarray | None = None  # (N,) pins only: lying direction

    def __post_init__(self) -> None:
        self.t = _check(f"Track[{self.object_id}].t", self.t, (None,), np.float64)
        n = len(self.t)
        self.frame_index = _check(f"Track[{self.object_id}].frame_index", self.frame_index, (n,), np.int64)
        self.xy = _check(f"Track[{self.object_id}].xy", self.xy, (n, 2), np.float64)
        self.vel = _check(f"Track[{self.object_id}].vel", self.vel, (n, 2), np.float64)
        self.state = _check(f"Track[{self.object_id}].state", self.state, (n,), np.int8)
        self.conf = _check(f"Track[{self.object_id}].conf", self.conf, (n,), np.float64)
        if self.angle is not None:
            self.angle = _check(f"Track[{self.object_id}].angle", self.angle, (n,), np.float64)

    def __len__(self) -> int:
        return len(self.t)


@dataclass
class Tracks:
    """Everything the tracker hands to event inference for a stretch of frames.

    ``t``/``frame_index`` are the frames covered (all tracks share them, one row per
    frame); ``moving`` says per frame whether anything on the table moves;
    ``dropped`` lists frame indices known to be missing (camera or pipeline drops),
    which event inference must treat as gaps (F8), never interpolate silently.
    ``exposure_s`` is the exposure time when known (for blur-aware timing).
    """

    t: np.ndarray
    frame_index: np.ndarray
    balls: dict[str, Track]
    pins: dict[str, Track]
    moving: np.ndarray
    dropped: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    fps: float = 60.0
    exposure_s: float | None = None
    position_noise_mm: float = 0.5

    def __post_init__(self) -> None:
        self.t = _check("Tracks.t", self.t, (None,), np.float64)
        n = len(self.t)
        self.frame_index = _check("Tracks.frame_index", self.frame_index, (n,), np.int64)
        self.moving = _check("Tracks.moving", self.moving, (n,), bool)
        self.dropped = _check("Tracks.dropped", self.dropped, (None,), np.int64)
        for ids, group, name in ((BALL_IDS, self.balls, "balls"), (PIN_IDS, self.pins, "pins")):
            if set(group) != set(ids):
                raise ValueError(f"Tracks.{name}: expected ids {list(ids)}, got {sorted(group)}")
            for oid, tr in group.items():
                if len(tr) != n:
                    raise ValueError(f"Tracks.{name}[{oid}]: expected {n} rows, got {len(tr)}")
