import math

import numpy as np
import pytest

from vision_ref.messages import Track, Tracks
from vision_ref.sim.physics import Layout, Script, Strike, simulate


def rephase(shot, fps, phase):
    """Put the strike at ``phase`` (0..1) of a frame interval (the default lead-in puts
    it exactly on a frame start, an unrealistically easy case)."""
    shot.lead_in = shot.strike_time = 0.6 + phase / fps
    shot.duration = shot.strike_time + shot.end_time + shot.tail
    return shot


@pytest.fixture(scope="session")
def carom_shot():
    """Cue ball into white1 (at rest on spot 1), white1 on to three cushions."""
    return simulate(Layout.standard(), Strike(speed=3000.0, angle=math.atan2(-150.0, 200.0)))


@pytest.fixture(scope="session")
def pin_shot():
    """Cue ball through the pin cross: pin-pin chains and cue knocks (F5)."""
    return simulate(Layout.standard(), Strike(speed=3000.0, angle=math.atan2(-150.0, 910.0 - 200.0)), lead_in=0.6137)


@pytest.fixture(scope="session")
def off_table_shot():
    return simulate(Layout.standard(), Strike(speed=4000.0, angle=math.pi / 2 + 0.2),
                    script=Script(off_table={"cue": 1}))


def concat_tracks(a: Tracks, b: Tracks, moved: dict | None = None, hand_rows: int = 12) -> Tracks:
    """Two clips one after the other as one stretch of tracks, with ``hand_rows`` rows
    between them in which every ball whose place differs is lifted (IN_HAND, not
    seen) and carried to b's place; ``moved``: ball -> (dx, dy) added to all of b."""
    from vision_ref.messages import BallState

    moved = moved or {}
    dt = 1.0 / a.fps
    n_a, n_h, n_b = len(a.t), hand_rows, len(b.t)
    t = np.concatenate([a.t, a.t[-1] + dt * np.arange(1, n_h + 1), b.t + a.t[-1] + (n_h + 1) * dt])
    fi = np.concatenate([a.frame_index, a.frame_index[-1] + np.arange(1, n_h + 1),
                         b.frame_index + a.frame_index[-1] + n_h + 1])

    def join(ta: Track, tb: Track, shift=(0.0, 0.0), is_ball=True) -> Track:
        xy_b = tb.xy + np.asarray(shift)
        lifted = is_ball and np.hypot(*(ta.xy[-1] - xy_b[0])) > 1.0
        xy_h = np.full((n_h, 2), np.nan) if lifted else np.repeat(ta.xy[-1:], n_h, axis=0)
        st_h = np.full(n_h, int(BallState.IN_HAND) if lifted else ta.state[-1], dtype=np.int8)
        ang = None if ta.angle is None else np.concatenate([ta.angle, np.repeat(ta.angle[-1:], n_h), tb.angle])
        return Track(ta.object_id, t.copy(), fi.copy(), np.concatenate([ta.xy, xy_h, xy_b]),
                     np.concatenate([ta.vel, np.zeros((n_h, 2)), tb.vel]),
                     np.concatenate([ta.state, st_h, tb.state]),
                     np.concatenate([ta.conf, np.where(lifted, 0.0, 1.0) * np.ones(n_h), tb.conf]), ang)

    balls = {k: join(a.balls[k], b.balls[k], moved.get(k, (0.0, 0.0))) for k in a.balls}
    pins = {k: join(a.pins[k], b.pins[k], is_ball=False) for k in a.pins}
    assert n_a + n_h + n_b == len(t)
    return Tracks(t=t, frame_index=fi, balls=balls, pins=pins,
                  moving=np.concatenate([a.moving, np.zeros(n_h, dtype=bool), b.moving]),
                  dropped=np.concatenate([a.dropped, b.dropped + a.frame_index[-1] + n_h + 1]), fps=a.fps,
                  exposure_s=a.exposure_s, position_noise_mm=a.position_noise_mm)


def corpus_shot(index: int, seed: int = 2026):
    """Shot ``index`` of benchmarks/review.py's seeded random corpus (random_<seed>_<index>)."""
    from vision_ref.sim import random_shots

    rng = np.random.default_rng(seed)
    for _ in range(index):
        random_shots.random_shot(rng)
    return random_shots.random_shot(rng)
