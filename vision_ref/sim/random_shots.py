"""Seeded random shots for corpora: whole-table positions, 0.5-8 m/s, side and top/back spin.

``random_shot(rng)`` places the three balls anywhere on the cloth (apart from each
other and from the pins; the cue ball wholly in one half, as S2 requires of a first
shot), and strikes the cue ball at 0.5-8 m/s with a tip offset anywhere within half a
radius. Most shots are aimed at a ball with a random cut (``aimed`` fraction), some at
the pins, the rest in a random direction, so a corpus holds caroms, pin knocks of
every kind, fouls and misses in roughly the proportions of real play.
"""

from __future__ import annotations

import math

import numpy as np

from vision_ref.rules.table import DEFAULT_TABLE, PIN_IDS, TableSpec


def random_layout_and_strike(rng: np.random.Generator, table: TableSpec = DEFAULT_TABLE,
                             speed_range: tuple[float, float] = (500.0, 8000.0), aimed: float = 0.6,
                             at_pins: float = 0.2):
    """(balls dict, Strike) of one random shot; see the module docstring."""
    from vision_ref.sim.physics import Strike

    R = table.ball_radius
    xmax, ymax = table.half_length - R - 3.0, table.half_width - R - 3.0
    pins = [np.array(table.pin_spot(p)) for p in PIN_IDS]
    for _ in range(10000):
        pts = rng.uniform([-xmax, -ymax], [xmax, ymax], size=(3, 2))
        if abs(pts[0, 0]) < R + 2.0:
            continue
        if any(np.hypot(*(p - q)) < R + table.pin_top_radius("king") + 2.0 for p in pts for q in pins):
            continue
        if min(np.hypot(*(pts[i] - pts[j])) for i in range(3) for j in range(i + 1, 3)) < 2 * R + 2.0:
            continue
        break
    else:  # pragma: no cover - the cloth is large; this cannot run out
        raise RuntimeError("no random layout found")
    cue = pts[0]
    u = rng.random()
    if u < aimed:
        obj = pts[1 + int(rng.integers(2))]
        # aim at a random point of the object ball's ghost circle: cut up to ~70 degrees
        to = obj - cue
        base = math.atan2(to[1], to[0])
        dist = float(np.hypot(*to))
        max_off = math.asin(min(0.94 * 2 * R / dist, 1.0))
        angle = base + rng.uniform(-max_off, max_off)
    elif u < aimed + at_pins:
        tgt = rng.uniform(-60.0, 60.0, size=2)
        angle = math.atan2(tgt[1] - cue[1], tgt[0] - cue[0])
    else:
        angle = rng.uniform(-math.pi, math.pi)
    speed = float(np.exp(rng.uniform(math.log(speed_range[0]), math.log(speed_range[1]))))
    r = 0.48 * math.sqrt(rng.random())
    phi = rng.uniform(-math.pi, math.pi)
    strike = Strike("cue", speed, angle % (2 * math.pi), r * math.cos(phi), r * math.sin(phi))
    balls = {"cue": tuple(pts[0]), "white1": tuple(pts[1]), "white2": tuple(pts[2])}
    return balls, strike


def random_shot(rng: np.random.Generator, table: TableSpec = DEFAULT_TABLE, **kw):
    """One seeded random shot simulated to rest (a SimulatedShot)."""
    from vision_ref.sim.physics import Layout, simulate

    balls, strike = random_layout_and_strike(rng, table, **kw)
    shot = simulate(Layout.standard(table, balls=balls), strike, table)
    shot.meta.update({"random": True})
    return shot
