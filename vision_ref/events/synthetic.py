"""What a good detector + tracker would report for a simulated shot: :class:`Tracks`.

Used by event inference tests, the review stage's tests and the benchmarks, so that
inference can be measured against the simulator's exact truth without rendering.

Conventions (the same a real tracker follows, see vision_ref.messages):

- one row per frame actually delivered; frame ``i`` starts its exposure at clip time
  ``i / fps`` (``Track.t``); a frame listed in ``dropped`` has no row at all and is
  named in ``Tracks.dropped``;
- a ball's reported centre is the centroid of its image over the exposure (the mean
  of the path across ``[t, t + exposure]``, sampled at several sub-times) plus
  seeded Gaussian noise of ``noise_mm`` per axis; ``NaN`` while it is not visible;
- a pin's reported point is its base while standing and the centre of its silhouette
  once tilted (``base + H/2 sin(tilt)`` along its direction), ``angle`` the direction
  it points, NaN while upright;
- states come from the sampled world (not from simulator internals), so any
  ``ShotSimulation`` (a single shot or a multi-shot sequence) works: a ball is
  MOVING when its centre moves faster than 5 mm/s, OFF_TABLE when invisible or
  outside the cushions, below the cloth or flying, IN_HAND when lifted (slowly)
  above the cloth inside the cushions.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from vision_ref.errors import ContractError
from vision_ref.messages import BallState, PinState, Track, Tracks
from vision_ref.rules.table import BALL_IDS, DEFAULT_TABLE, PIN_IDS, TableSpec

_SUBSAMPLES = 7  # sub-times per exposure for the blur centroid
_MOVING_SPEED = 5.0  # mm/s: slower than this reads as at rest


def frame_clock(duration: float, fps: float) -> np.ndarray:
    """Exposure start times of the frames of a clip of ``duration`` seconds."""
    n = int(math.floor(duration * fps)) + 1
    return np.arange(n) / float(fps)


def tracks_from_truth(
    shot,
    fps: float,
    noise_mm: float = 0.5,
    seed: int = 0,
    dropped: Iterable[int] = (),
    exposure_s: float | None = None,
    table: TableSpec | None = None,
) -> Tracks:
    """Tracks a good detector would report for ``shot`` filmed at ``fps``.

    ``exposure_s`` None means an instantaneous exposure; otherwise it must not exceed
    the frame interval. ``dropped`` frame indices are removed from the rows and listed
    in ``Tracks.dropped``.
    """
    if not (math.isfinite(fps) and fps > 0):
        raise ContractError("fps", f"must be a positive number, got {fps!r}")
    if noise_mm < 0 or not math.isfinite(noise_mm):
        raise ContractError("noise_mm", f"must be >= 0, got {noise_mm!r}")
    if exposure_s is not None and not (0.0 <= exposure_s <= 1.0 / fps + 1e-12):
        raise ContractError("exposure_s", f"must be within 0 .. 1/fps = {1.0 / fps:.6f} s, got {exposure_s!r}")
    table = table or getattr(shot, "table", None) or DEFAULT_TABLE
    rng = np.random.default_rng(seed)
    t_all = frame_clock(shot.duration, fps)
    n_all = len(t_all)
    drop = np.array(sorted({int(i) for i in dropped}), dtype=np.int64)
    if len(drop) and (drop.min() < 0 or drop.max() >= n_all):
        raise ContractError("dropped", f"frame indices must be within 0 .. {n_all - 1}")
    keep = np.ones(n_all, dtype=bool)
    keep[drop] = False
    idx = np.nonzero(keep)[0]
    t = t_all[idx]
    n = len(t)
    exp = float(exposure_s or 0.0)

    # sample every frame at sub-times across its exposure (one sample when instantaneous)
    k = _SUBSAMPLES if exp > 0 else 1
    offsets = np.linspace(0.0, exp, k) if k > 1 else np.zeros(1)
    sub_t = (t[:, None] + offsets[None, :]).ravel()
    mid = t + 0.5 * exp
    ws = shot.sample(sub_t)
    ws_mid = shot.sample(mid)
    eps = 1e-3
    ws_a = shot.sample(mid - eps)
    ws_b = shot.sample(mid + eps)

    R = table.ball_radius
    balls: dict[str, Track] = {}
    moving = np.zeros(n, dtype=bool)
    for i, b in enumerate(BALL_IDS):
        xyz = ws.ball_xyz[:, i].reshape(n, k, 3)
        vis_sub = ws.ball_visible[:, i].reshape(n, k)
        xy = xyz[:, :, :2].mean(axis=1)
        z = ws_mid.ball_xyz[:, i, 2]
        vis = vis_sub.all(axis=1)
        speed = np.hypot(*(ws_b.ball_xyz[:, i, :2] - ws_a.ball_xyz[:, i, :2]).T) / (2 * eps)
        outside = (np.abs(ws_mid.ball_xyz[:, i, 0]) > table.half_length - R + 1.0) | (
            np.abs(ws_mid.ball_xyz[:, i, 1]) > table.half_width - R + 1.0
        )
        state = np.full(n, int(BallState.AT_REST), dtype=np.int8)
        state[speed > _MOVING_SPEED] = int(BallState.MOVING)
        # a ball above the cloth inside the cushions, moving slowly, is in a hand; one
        # beyond the cushions, below the cloth or flying fast has left the table
        flying = speed > 1000.0
        lifted = (z > R + 5.0) & ~outside & ~flying
        state[lifted] = int(BallState.IN_HAND)
        off = ~vis | outside | (z < R - 5.0) | ((z > R + 5.0) & flying)
        state[off] = int(BallState.OFF_TABLE)
        moving |= state == int(BallState.MOVING)
        xy = xy + rng.normal(0.0, noise_mm, size=xy.shape) if noise_mm > 0 else xy.copy()
        xy[~vis] = np.nan
        vel = _velocity(t, xy)
        conf = np.where(vis, 1.0, 0.0)
        balls[b] = Track(b, t.copy(), idx.copy(), xy, vel, state, conf)

    pins: dict[str, Track] = {}
    for j, p in enumerate(PIN_IDS):
        H = table.pin_height_of(p)
        base = ws_mid.pin_xy[:, j]
        tilt = ws_mid.pin_tilt[:, j]
        direction = ws_mid.pin_dir[:, j]
        d = np.stack([np.cos(direction), np.sin(direction)], axis=1)
        xy = base + d * (0.5 * H * np.sin(tilt))[:, None]
        state = ws_mid.pin_state[:, j].astype(np.int8)
        vis = ws_mid.pin_visible[:, j].astype(bool)
        moving |= state == int(PinState.MOVING)
        xy = xy + rng.normal(0.0, noise_mm, size=xy.shape) if noise_mm > 0 else xy.copy()
        xy[~vis] = np.nan
        state = np.where(vis, state, int(PinState.ABSENT)).astype(np.int8)
        angle = np.where(tilt > 0.05, direction, np.nan)
        pins[p] = Track(p, t.copy(), idx.copy(), xy, _velocity(t, xy), state, np.where(vis, 1.0, 0.0), angle)

    return Tracks(
        t=t.copy(), frame_index=idx.copy(), balls=balls, pins=pins, moving=moving, dropped=drop,
        fps=float(fps), exposure_s=exposure_s, position_noise_mm=float(noise_mm),
    )


def _velocity(t: np.ndarray, xy: np.ndarray) -> np.ndarray:
    """Central differences (what a tracker's filter would roughly give); NaN next to gaps."""
    vel = np.full_like(xy, np.nan)
    if len(t) >= 2:
        vel[1:-1] = (xy[2:] - xy[:-2]) / (t[2:] - t[:-2])[:, None]
        vel[0] = (xy[1] - xy[0]) / (t[1] - t[0])
        vel[-1] = (xy[-1] - xy[-2]) / (t[-1] - t[-2])
    return vel
