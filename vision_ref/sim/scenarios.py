"""The named, seeded scenario library: one simulated shot per rule a camera can see.

Every scenario is a physical shot (layout, strike, and -- only where the 2-D physics
cannot do it -- a :class:`~vision_ref.sim.physics.Script`) whose exact truth record
adjudicates to the rules the scenario declares. Shots that need a precise outcome
(nine points, a ball stopping on a pin spot, two balls at the pins in one frame
interval) were found by a seeded search against the physics; the found set-ups are
cached in :mod:`vision_ref.sim._scenario_params`, so loading is instant. Regenerate
them (after a change to the physics) with::

    python -m vision_ref.sim.scenarios --regenerate            # every scenario
    python -m vision_ref.sim.scenarios --regenerate respot_Rd  # some of them
    python -m vision_ref.sim.scenarios --check                 # verify the cache

The search samples the set-up *families* below (parametrised by a point of the unit
cube, so one sample is tested against every goal of its family), keeps the sample
nearest to each goal and refines it by a (1+1) evolution strategy where the goal
has a continuous distance (respotting: how far a ball stopped from a pin spot).

``Scenario.simulate(seed)``: seed 0 is the cached set-up itself; any other seed
jitters the positions (+-1 mm), the aim (+-0.3 mrad) and the speed (+-0.3 %), and
keeps the first jitter whose truth still meets the scenario's goal (falling back to
the cached set-up), so seeded variants differ slightly but never change meaning.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from vision_ref.rules.table import BALL_IDS, DEFAULT_TABLE, PIN_IDS

TABLE = DEFAULT_TABLE
R = TABLE.ball_radius
XMAX = TABLE.half_length - R
YMAX = TABLE.half_width - R
FPS = 60.0  # frame rate of the truth record scenarios are adjudicated at (F8 doubts)
PIN_SPOTS = {p: np.array(TABLE.pin_spot(p)) for p in PIN_IDS}
WHITES = ("white1", "white2")


# ------------------------------------------------------------------ set-ups
@dataclass
class Setup:
    """A shot set-up in plain numbers (what the cache stores)."""

    balls: dict[str, tuple[float, float] | None]
    strike: dict
    pins: dict[str, dict] = field(default_factory=dict)  # non-default pins: at, state, direction, on
    script: dict = field(default_factory=dict)  # off_table / pin_to_rail

    def to_dict(self) -> dict:
        return {
            "balls": {b: (None if p is None else [round(float(p[0]), 4), round(float(p[1]), 4)]) for b, p in self.balls.items()},
            "strike": {k: (round(v, 7) if isinstance(v, float) else v) for k, v in self.strike.items()},
            "pins": self.pins,
            "script": self.script,
        }

    @classmethod
    def from_dict(cls, d: dict) -> "Setup":
        balls = {b: (None if p is None else (float(p[0]), float(p[1]))) for b, p in d["balls"].items()}
        return cls(balls, dict(d["strike"]), {k: dict(v) for k, v in d.get("pins", {}).items()}, dict(d.get("script", {})))

    def simulate(self):
        from vision_ref.sim.physics import Layout, PinPlacement, Script, Strike, simulate

        layout = Layout.standard(TABLE, balls=self.balls)
        for name, p in self.pins.items():
            layout.pins[name] = PinPlacement(tuple(p["at"]), p.get("state", "standing"), float(p.get("direction", 0.0)), p.get("on"))
        script = Script(off_table=dict(self.script.get("off_table", {})), pin_to_rail=dict(self.script.get("pin_to_rail", {})))
        return simulate(layout, Strike(**self.strike), TABLE, script=script)

    def jittered(self, rng: np.random.Generator) -> "Setup":
        balls = {b: (None if p is None else (p[0] + rng.uniform(-1, 1), p[1] + rng.uniform(-1, 1))) for b, p in self.balls.items()}
        strike = dict(self.strike)
        strike["angle"] = float(strike["angle"]) + rng.uniform(-3e-4, 3e-4)
        strike["speed"] = float(strike["speed"]) * (1.0 + rng.uniform(-3e-3, 3e-3))
        return Setup(balls, strike, {k: dict(v) for k, v in self.pins.items()}, dict(self.script))


def valid_setup(s: Setup) -> bool:
    """Balls on the cloth, apart from each other and from standing pins; cue ball in a half (S2)."""
    pts = []
    for b, p in s.balls.items():
        if p is None:
            continue
        if abs(p[0]) > XMAX - 2.0 or abs(p[1]) > YMAX - 2.0:
            return False
        if b == "cue" and abs(p[0]) < R + 2.0:
            return False
        for name in PIN_IDS:
            info = s.pins.get(name)
            if info is not None and info.get("state") != "standing":
                continue
            at = PIN_SPOTS[name] if info is None else np.asarray(info["at"])
            if math.hypot(p[0] - at[0], p[1] - at[1]) < R + TABLE.pin_top_radius(name) + 1.0:
                return False
        pts.append(p)
    for i in range(len(pts)):
        for j in range(i + 1, len(pts)):
            if math.hypot(pts[i][0] - pts[j][0], pts[i][1] - pts[j][1]) < 2 * R + 1.0:
                return False
    return True


# ------------------------------------------------------------------ goals
@dataclass
class Goal:
    """What the adjudicated truth of a scenario must show.

    ``rules``: ids that must be in ``decision["rules"]``; ``absent``: ids that must not;
    ``fouls``: the exact set of foul rules (None: any); ``points`` / ``pins``: the exact
    points and knocked pins (None: any); ``distance(shot, record, decision)``: an extra
    continuous condition, 0 when met (lets the search refine towards it).
    """

    rules: tuple[str, ...]
    fouls: frozenset[str] | None = frozenset()
    absent: tuple[str, ...] = ()
    points: int | None = None
    pins: frozenset[str] | None = None
    distance: Callable | None = None

    def score(self, shot, record: dict, decision: dict) -> float:
        """0 when met; otherwise 1000 per unmet discrete condition plus the distance."""
        miss = 0
        got = set(decision["rules"])
        miss += sum(r not in got for r in self.rules)
        miss += sum(r in got for r in self.absent)
        if self.fouls is not None:
            miss += len(self.fouls ^ {f["rule"] for f in decision["fouls"]})
        if self.points is not None and decision["points"] != self.points:
            miss += 1
        if self.pins is not None and set(decision["pins_down"]) != self.pins:
            miss += 1
        extra = float(self.distance(shot, record, decision)) if self.distance else 0.0
        return 1000.0 * miss + extra


def adjudicate(record: dict) -> dict:
    """The decision on a scenario's truth record as the first shot of a match."""
    from vision_ref.rules import Match

    return Match(["A", "B"], first="A").play(record)


def _occupy(*spots: str) -> Callable:
    """Distance condition: some ball's centre within the footprint overlap of each pin spot."""

    def distance(shot, record, decision) -> float:
        balls = [np.asarray(p) for p in record["after"]["balls"].values() if p is not None]
        total = 0.0
        used: set[int] = set()
        for s in spots:
            reach = R + TABLE.pin_base_radius(s) - 3.0  # 3 mm inside the overlap: robust
            best, bi = math.inf, -1
            for i, b in enumerate(balls):
                if i in used:
                    continue
                d = float(np.hypot(*(b - PIN_SPOTS[s])))
                if d < best:
                    best, bi = d, i
            used.add(bi)
            total += max(best - reach, 0.0)
        # the pins must be down too (a smooth pull towards the goal for the refinement)
        total += sum(50.0 for sp in spots if sp not in decision["pins_down"])
        return total

    return distance


def _through_lying_pin(shot, record, decision) -> float:
    """F5 through a lying pin: the cue ball pushes a pin lying after a white knocked it
    into a standing pin that falls."""
    events = record["events"]
    for i, e in enumerate(events):
        if e["type"] != "pin_hit" or e["by"] != "cue":
            continue
        q = e["pin"]
        pin = shot.pins.pins[PIN_IDS.index(q)]
        seg = [s for s in pin.segments if s.t0 <= e["t"] + 1e-9][-1]
        if seg.mode != "lying":
            continue
        first = next(x for x in events if x["type"] == "pin_hit" and x["pin"] == q)
        if first["by"] == "cue":
            continue
        for later in events[i + 1:]:
            if later["type"] == "pin_hit" and later["by"] == q and later["pin"] in decision["pins_down"]:
                return 0.0
    return 1.0


# ------------------------------------------------------------------ families
class _Unit:
    """Reads coordinates of a unit-cube point as values in ranges."""

    def __init__(self, x: np.ndarray) -> None:
        self.x = x
        self.i = 0

    def take(self, lo: float, hi: float) -> float:
        v = lo + (hi - lo) * float(self.x[self.i])
        self.i += 1
        return v

    def pick(self, options):
        k = min(int(self.take(0, len(options))), len(options) - 1)
        return options[k]


def _dir(a: float) -> np.ndarray:
    return np.array([math.cos(a), math.sin(a)])


def _ang(v: np.ndarray) -> float:
    return math.atan2(v[1], v[0])


def _tip(u: _Unit, max_off: float = 0.45) -> tuple[float, float]:
    side, height = u.take(-0.4, 0.4), u.take(-0.4, 0.45)
    n = math.hypot(side, height)
    if n > max_off:
        side, height = side * max_off / n, height * max_off / n
    return side, height


def _strike(ball: str, speed: float, d: np.ndarray, tip) -> dict:
    return {"ball": ball, "speed": float(speed), "angle": _ang(d) % (2 * math.pi), "side": float(tip[0]), "height": float(tip[1])}


def _target(u: _Unit, spread: float = 80.0) -> np.ndarray:
    """A point at the pins the object ball is sent through."""
    return np.array([u.take(-spread, spread), u.take(-spread, spread)])


def _cut(u: _Unit, obj: np.ndarray, out_dir: np.ndarray, max_cut: float = 55.0):
    """Cue position and direction that send ``obj`` along ``out_dir`` (ghost-ball aim)."""
    ghost = obj - 2 * R * out_dir
    cut = math.radians(u.take(-max_cut, max_cut))
    d = _dir(_ang(out_dir) + cut)
    cue = ghost - u.take(120.0, 900.0) * d
    return cue, d


def _far_white(u: _Unit, away_from: list[np.ndarray]) -> np.ndarray:
    p = np.array([u.take(-XMAX + 40, XMAX - 40), u.take(-YMAX + 40, YMAX - 40)])
    return p


def fam_direct(u: "_Unit") -> Setup | None:
    """cue -> white1 -> the pins (F4, T1, T4, F8, F5 via lying pin, respots); white2
    either far away or resting close to the pins (a support for T4)."""
    tgt = _target(u)
    out = _dir(u.take(-math.pi, math.pi))
    w1 = tgt - u.take(140.0, 800.0) * out
    cue, d = _cut(u, w1, out)
    near = u.take(0, 1) < 0.4
    if near:
        w2 = _dir(u.take(-math.pi, math.pi)) * u.take(110.0, 170.0)
        u.take(0, 1)
    else:
        w2 = _far_white(u, [])
    speed = u.take(250.0, 4500.0)
    return Setup({"cue": tuple(cue), "white1": tuple(w1), "white2": tuple(w2)}, _strike("cue", speed, d, _tip(u)))


def fam_chain(u: "_Unit") -> Setup | None:
    """cue -> white1 -> white2 -> the pins (L4 and the P1 combinations)."""
    tgt = _target(u, 70.0)
    out2 = _dir(u.take(-math.pi, math.pi))
    w2 = tgt - u.take(150.0, 700.0) * out2
    out1 = _dir(_ang(out2) + math.radians(u.take(-45.0, 45.0)))
    g2 = w2 - 2 * R * out2
    w1 = g2 - u.take(150.0, 700.0) * out1
    cue, d = _cut(u, w1, out1, 40.0)
    speed = u.take(1500.0, 8000.0)
    return Setup({"cue": tuple(cue), "white1": tuple(w1), "white2": tuple(w2)}, _strike("cue", speed, d, _tip(u)))


def _mirror(p: np.ndarray, cushion: str) -> np.ndarray:
    q = p.copy()
    if cushion == "left":
        q[1] = 2 * YMAX - p[1]
    elif cushion == "right":
        q[1] = -2 * YMAX - p[1]
    elif cushion == "foot":
        q[0] = 2 * XMAX - p[0]
    else:
        q[0] = -2 * XMAX - p[0]
    return q


def fam_bank(u: "_Unit") -> Setup | None:
    """cue -> white1 -> a cushion -> the pins (L1)."""
    tgt = _target(u, 70.0)
    cushion = u.pick(("left", "right", "head", "foot"))
    virt = _mirror(tgt, cushion)
    w1 = np.array([u.take(-XMAX + 60, XMAX - 60), u.take(-YMAX + 60, YMAX - 60)])
    out = virt - w1
    out /= np.hypot(*out)
    cue, d = _cut(u, w1, out, 45.0)
    w2 = _far_white(u, [])
    speed = u.take(1500.0, 7000.0)
    return Setup({"cue": tuple(cue), "white1": tuple(w1), "white2": tuple(w2)}, _strike("cue", speed, d, _tip(u)))


def fam_cue_bank(u: "_Unit") -> Setup | None:
    """cue -> a cushion -> white1 -> the pins (L3)."""
    tgt = _target(u, 70.0)
    out = _dir(u.take(-math.pi, math.pi))
    w1 = tgt - u.take(150.0, 600.0) * out
    ghost = w1 - 2 * R * out
    cushion = u.pick(("left", "right", "head", "foot"))
    virt = _mirror(ghost, cushion)
    cue = np.array([u.take(-XMAX + 60, XMAX - 60), u.take(-YMAX + 60, YMAX - 60)])
    d = virt - cue
    d /= np.hypot(*d)
    # the ghost must be reached at a feasible cut: the bounced path meets the ghost from behind
    w2 = _far_white(u, [])
    speed = u.take(2000.0, 8000.0)
    return Setup({"cue": tuple(cue), "white1": tuple(w1), "white2": tuple(w2)}, _strike("cue", speed, d, _tip(u)))


def _deflect(u: _Unit, first: np.ndarray, dest: np.ndarray, near_stun: bool = True):
    """Cue ball set-up that cuts ``first`` and then (stun: 90 degrees) travels to ``dest``.

    Returns (first ball's centre, cue position, cue direction)."""
    uc = dest - first
    uc /= np.hypot(*uc)
    side = u.pick((-1.0, 1.0))
    u1 = np.array([-uc[1], uc[0]]) * side
    w1 = first + 2 * R * u1
    phi = math.radians(u.take(20.0, 70.0))
    d = math.cos(phi) * u1 + math.sin(phi) * uc
    d /= np.hypot(*d)
    cue = first - u.take(150.0, 800.0) * d
    return w1, cue, d


def fam_carom_second(u: "_Unit") -> Setup | None:
    """cue -> white1 (cut away) -> white2 (carom) -> white2 into the pins (L2; P2 when short)."""
    tgt = _target(u, 70.0)
    out2 = _dir(u.take(-math.pi, math.pi))
    w2 = tgt - u.take(150.0, 600.0) * out2
    g2 = w2 - 2 * R * out2
    g1 = g2 - u.take(250.0, 900.0) * _dir(u.take(-math.pi, math.pi))
    w1, cue, d = _deflect(u, g1, g2)
    speed = u.take(1500.0, 7000.0)
    side, height = _tip(u, 0.3)
    return Setup({"cue": tuple(cue), "white1": tuple(w1), "white2": tuple(w2)}, _strike("cue", speed, d, (side, min(height, 0.1))))


def fam_carom_first(u: "_Unit") -> Setup | None:
    """cue -> white1 (sent at the pins) and on to white2 close by: the carom completes
    before white1 reaches the pins (F4's exception, L2); also F4 when it comes late."""
    tgt = _target(u, 70.0)
    out1 = _dir(u.take(-math.pi, math.pi))
    w1 = tgt - u.take(350.0, 900.0) * out1
    g1 = w1 - 2 * R * out1
    side = u.pick((-1.0, 1.0))
    uc = np.array([-out1[1], out1[0]]) * side
    w2 = g1 + u.take(90.0, 300.0) * uc + 2 * R * uc
    phi = math.radians(u.take(25.0, 65.0))
    d = math.cos(phi) * out1 + math.sin(phi) * uc
    d /= np.hypot(*d)
    cue = g1 - u.take(150.0, 700.0) * d
    speed = u.take(1200.0, 6000.0)
    tip = _tip(u, 0.3)
    return Setup({"cue": tuple(cue), "white1": tuple(w1), "white2": tuple(w2)}, _strike("cue", speed, d, (tip[0], min(tip[1], 0.1))))


def fam_cue_to_pins(u: "_Unit") -> Setup | None:
    """cue cuts white1 and is deflected into the pins (F5 directly)."""
    tgt = _target(u, 60.0)
    g1 = tgt - u.take(200.0, 700.0) * _dir(u.take(-math.pi, math.pi))
    w1, cue, d = _deflect(u, g1, tgt)
    w2 = _far_white(u, [])
    speed = u.take(800.0, 5000.0)
    tip = _tip(u, 0.3)
    return Setup({"cue": tuple(cue), "white1": tuple(w1), "white2": tuple(w2)}, _strike("cue", speed, d, (tip[0], min(tip[1], 0.1))))


def fam_axis(u: "_Unit") -> Setup | None:
    """cue -> white1 straight along a pin axis through the cross; white1 and the
    following cue ball stop on pin spots (respotting Rd on the long axis, Re on the short)."""
    axis = u.pick((0, 1))
    sign = u.pick((-1.0, 1.0))
    along = np.zeros(2)
    along[axis] = sign
    across = np.array([-along[1], along[0]])
    w1 = -along * u.take(140.0, 500.0) + across * u.take(-6.0, 6.0)
    ghost = w1 - 2 * R * along
    cue = ghost - along * u.take(100.0, 500.0) + across * u.take(-45.0, 45.0)
    d = ghost - cue
    d /= np.hypot(*d)
    w2 = _far_white(u, [])
    speed = u.take(300.0, 3000.0)
    side, height = u.take(-0.15, 0.15), u.take(-0.3, 0.45)
    return Setup({"cue": tuple(cue), "white1": tuple(w1), "white2": tuple(w2)}, _strike("cue", speed, d, _tip_clip(side, height)))


def _tip_clip(side: float, height: float, max_off: float = 0.45) -> tuple[float, float]:
    n = math.hypot(side, height)
    if n > max_off:
        side, height = side * max_off / n, height * max_off / n
    return side, height


def fam_miss(u: "_Unit") -> Setup | None:
    """The cue ball is played and touches nothing (F1) -- or leaves the table (F2)."""
    cue = np.array([u.take(-XMAX + 60, -200.0), u.take(-YMAX + 60, YMAX - 60)])
    d = _dir(u.take(-math.pi, math.pi))
    speed = u.take(500.0, 4000.0)
    return Setup({"cue": tuple(cue), "white1": TABLE.ball_spot(1), "white2": TABLE.ball_spot(3)}, _strike("cue", speed, d, _tip(u)))


def fam_wrong_ball(u: "_Unit") -> Setup | None:
    """The player strikes white1 instead of the cue ball (F6)."""
    s = fam_direct(u)
    if s is None:
        return None
    d = _dir(u.take(-math.pi, math.pi))
    s.strike = _strike("white1", u.take(500.0, 3000.0), d, (0.0, 0.2))
    return s


def _scripted(base: Callable, script: Callable[[_Unit], dict]) -> Callable:
    def fam(u: _Unit) -> Setup | None:
        s = base(u)
        if s is None:
            return None
        s.script = script(u)
        return s

    fam.__doc__ = (base.__doc__ or "") + " (with a script)"
    return fam


def fam_lean_on_cue(u: "_Unit") -> Setup | None:
    """A plain pin leans on the cue ball before the shot; the cue ball is played away (T6)."""
    pin = u.pick(("head", "foot", "left", "right"))
    out = PIN_SPOTS[pin] / np.hypot(*PIN_SPOTS[pin])
    # tilt 0.5 rad (PinSystem's leaning pose): the pin's side touches the ball 63.2 mm out
    cue = PIN_SPOTS[pin] + _lean_distance(pin) * out
    if abs(cue[0]) < R + 2.0:
        cue[0] += math.copysign(R + 2.0, cue[0] if cue[0] else 1.0)
    hit = _dir(_ang(out) + math.radians(u.take(-70.0, 70.0)))
    w1 = cue + u.take(200.0, 800.0) * hit
    d = _dir(_ang(hit) + math.radians(u.take(-12.0, 12.0)))
    w2 = _far_white(u, [])
    speed = u.take(800.0, 4000.0)
    pins = {pin: {"at": [float(PIN_SPOTS[pin][0]), float(PIN_SPOTS[pin][1])], "state": "leaning",
                  "direction": _ang(out), "on": "cue"}}
    return Setup({"cue": tuple(cue), "white1": tuple(w1), "white2": tuple(w2)}, _strike("cue", speed, d, _tip(u)), pins)


def _lean_distance(pin: str, tilt: float = 0.5) -> float:
    """Horizontal base-to-ball-centre distance at which a pin tilted ``tilt`` touches a ball."""
    r = TABLE.pin_top_radius(pin)
    return (R + r + R * math.sin(tilt)) / math.cos(tilt)


fam_cue_off = _scripted(fam_direct, lambda u: {"off_table": {"cue": int(u.take(1, 2.99))}})
fam_white_off = _scripted(fam_direct, lambda u: {"off_table": {"white1": int(u.take(1, 1.99))}})
fam_chain_rail_standing = _scripted(fam_chain, lambda u: {"pin_to_rail": {u.pick(PIN_IDS): "rail_standing"}})
fam_chain_rail_down = _scripted(fam_chain, lambda u: {"pin_to_rail": {u.pick(PIN_IDS): "rail_down"}})
DIMS = 24  # unit-cube coordinates per sample (families read what they need, in order)
FAMILIES: dict[str, Callable] = {
    "direct": fam_direct, "chain": fam_chain, "bank": fam_bank, "cue_bank": fam_cue_bank,
    "carom_second": fam_carom_second, "carom_first": fam_carom_first, "cue_to_pins": fam_cue_to_pins,
    "axis": fam_axis, "miss": fam_miss, "wrong_ball": fam_wrong_ball, "lean_on_cue": fam_lean_on_cue,
    "cue_off": fam_cue_off, "white_off": fam_white_off,
    "chain_rail_standing": fam_chain_rail_standing, "chain_rail_down": fam_chain_rail_down,
}


def _close_doubt(max_gap_mm: float = 3.0) -> Callable:
    """Distance condition of a genuine F8: a standing pin knocked by one ball while
    another moving ball came within ``max_gap_mm`` of touching it in the same frame
    interval (60 fps), so no fit of the paths can tell the two apart -- not merely a
    second ball passing within the truth labelling's ball diameter."""
    from vision_ref.sim.truth import other_ball_clearances

    def distance(shot, record, decision) -> float:
        best = math.inf
        for d in record["events"]:
            if d["type"] != "doubt" or d.get("lying"):
                continue
            ev = next((e for e in shot.events if e.type == "pin_hit" and e.data["pin"] == d["pin"]
                       and abs(e.t - d["t"]) < 1e-6), None)
            if ev is not None:
                gaps = other_ball_clearances(shot, ev, FPS).values()
                best = min(best, min(gaps, default=math.inf))
        return 100.0 if best == math.inf else max(best - max_gap_mm, 0.0)

    return distance


# ------------------------------------------------------------------ the library
@dataclass(frozen=True)
class Spec:
    name: str
    rules: tuple[str, ...]
    description: str
    goal: Goal
    families: tuple[str, ...]


def _pins(*p: str) -> frozenset[str]:
    return frozenset(p)


_LEGAL = ("direct", "chain", "bank", "cue_bank", "carom_second", "carom_first")
_NO_OTHER_WAYS = {w: tuple(x for x in ("L1", "L2", "L3", "L4") if x != w) for w in ("L1", "L2", "L3", "L4")}

SPECS: list[Spec] = [
    Spec("legal_L1_white_off_cushion", ("L1", "P1"), "cue ball strikes white1, which comes off a cushion into the pins (doublet)",
         Goal(("L1", "P1"), absent=_NO_OTHER_WAYS["L1"]), ("bank",)),
    Spec("legal_L2_white_after_carom", ("L2", "P1"), "the carom completes on white2, which then runs into the pins",
         Goal(("L2", "P1"), absent=_NO_OTHER_WAYS["L2"]), ("carom_second",)),
    Spec("legal_L3_cue_off_cushion", ("L3", "P1"), "the cue ball comes off a cushion, strikes white1, which knocks pins",
         Goal(("L3", "P1"), absent=_NO_OTHER_WAYS["L3"]), ("cue_bank",)),
    Spec("legal_L4_white_off_white", ("L4", "P1"), "cue ball -> white1 -> white2 -> the pins (off a ball)",
         Goal(("L4", "P1"), absent=_NO_OTHER_WAYS["L4"]), ("chain",)),
    Spec("legal_L5_pin_chain", ("L5", "L4", "P1"), "a pin knocked by a falling pin inherits the legal knock of white2",
         Goal(("L5", "L4", "P1")), ("chain",)),
    Spec("score_2_one_pin", ("P1",), "one plain pin knocked legally: 2 points",
         Goal(("P1",), points=2), ("chain", "bank", "carom_second")),
    Spec("score_4_two_pins", ("P1",), "two plain pins knocked legally: 4 points",
         Goal(("P1",), points=4), ("chain", "bank", "carom_second")),
    Spec("score_6_three_pins", ("P1",), "three plain pins knocked legally: 6 points",
         Goal(("P1",), points=6), ("chain", "bank", "carom_second")),
    Spec("score_8_four_pins", ("P1",), "all four plain pins knocked legally, the king stands: 8 points",
         Goal(("P1",), points=8), ("chain", "bank", "carom_second")),
    Spec("score_5_king_alone", ("P1",), "the king alone knocked legally: 5 points",
         Goal(("P1",), points=5, pins=_pins("king")), ("chain", "bank", "carom_second")),
    Spec("score_5_king_and_one", ("P1",), "the king and one plain pin knocked legally: 5 points",
         Goal(("P1",), points=5, distance=lambda s, r, d: 0.0 if len(d["pins_down"]) == 2 else 1.0), ("chain", "bank", "carom_second")),
    Spec("score_7_king_and_two", ("P1",), "the king and two plain pins knocked legally: 7 points",
         Goal(("P1",), points=7), ("chain", "bank", "carom_second")),
    Spec("score_9_king_and_three", ("P1",), "the king and three plain pins knocked legally: 9 points",
         Goal(("P1",), points=9), ("chain", "bank", "carom_second")),
    Spec("score_30_all_five", ("P1",), "all five pins knocked legally: 30 points",
         Goal(("P1",), points=30), ("chain", "bank", "carom_second")),
    Spec("carom_P2", ("P2",), "a bare carom, no pin knocked: 3 points and the turn passes",
         Goal(("P2",), points=3), ("carom_second", "carom_first")),
    Spec("foul_F1_miss", ("F1",), "the cue ball touches no ball",
         Goal(("F1",), fouls=_pins("F1")), ("miss",)),
    Spec("foul_F2_cue_off_table", ("F2", "B1"), "the cue ball strikes white1 and jumps the cushion off the table (scripted flight)",
         Goal(("F2", "B1"), fouls=_pins("F2")), ("cue_off",)),
    Spec("foul_F4_direct", ("F4",), "white1 goes straight from the cue ball into the pins",
         Goal(("F4", "P1"), fouls=_pins("F4")), ("direct",)),
    Spec("F4_exception_carom_first", ("L2", "P1"), "white1 goes straight at the pins, but the carom on white2 completes before it reaches them",
         Goal(("L2", "P1"), absent=("L1", "L3", "L4"),
              distance=lambda s, r, d: 0.0 if _direct_after_carom(r) else 1.0), ("carom_first",)),
    Spec("foul_F5_cue_knocks_pin", ("F5",), "the cue ball, after cutting white1, knocks a pin itself",
         Goal(("F5",), fouls=_pins("F5")), ("cue_to_pins", "direct")),
    Spec("foul_F5_through_lying_pin", ("F5", "L5"), "the cue ball pushes a pin lying after white1 knocked it into a standing pin",
         Goal(("F5", "L5"), fouls=None, distance=_through_lying_pin), ("direct", "cue_to_pins")),
    Spec("foul_F6_wrong_ball", ("F6",), "the player strikes white1 instead of the cue ball",
         Goal(("F6",), fouls=_pins("F6")), ("wrong_ball",)),
    Spec("foul_F8_doubt", ("F8",), "two balls reach a standing pin within one frame interval (60 fps): the knocker is doubtful",
         Goal(("F8",), fouls=None, distance=_close_doubt()), ("direct", "carom_first", "chain")),
    Spec("B2_white_off_table", ("B2",), "white1 jumps the cushion off the table (scripted): respotted, no foul, the turn passes",
         Goal(("B2",)), ("white_off",)),
    Spec("T1_pin_moved_standing", ("T1",), "white1 touches a pin, which rocks but stays standing",
         Goal(("T1",), pins=frozenset()), ("direct",)),
    Spec("T2_pin_standing_on_rail", ("T2",), "a knocked pin flies onto the rail and stands there (scripted): placed by the cushion",
         Goal(("T2",), fouls=None), ("chain_rail_standing",)),
    Spec("T3_pin_lying_on_rail", ("T3", "P1"), "a pin knocked legally ends lying on the rail (scripted): down, respotted",
         Goal(("T3", "P1")), ("chain_rail_down",)),
    Spec("T4_pin_leans_on_ball", ("T4",), "a pin toppled by white1 falls onto white2 at rest and leans there",
         Goal(("T4",), fouls=None), ("direct",)),
    Spec("T6_pin_leaning_on_cue", ("T6",), "a pin leans on the cue ball; the shot makes it fall: penalty points to the partner",
         Goal(("T6",), fouls=_pins("T6")), ("lean_on_cue",)),
    Spec("respot_Ra_king_spot_taken", ("Ra", "R0"), "a ball stops on the king's spot: the king goes next to the outer long-axis pin",
         Goal(("Ra",), fouls=None, distance=_occupy("king")), ("direct", "chain", "cue_to_pins")),
    Spec("respot_Rb_pin_spot_taken", ("Rb",), "a ball stops on a knocked plain pin's spot: it goes midway to the opposite pin",
         Goal(("Rb",), fouls=None), ("direct", "chain", "cue_to_pins")),
    Spec("respot_Rc_king_and_pin_taken", ("Rc", "R0"), "balls stop on the king's and a plain pin's spots",
         Goal(("Rc",), fouls=None), ("direct", "chain", "cue_to_pins")),
    Spec("respot_Rd_long_spots_taken", ("Rd",), "balls stop on both long-axis pin spots",
         Goal(("Rd",), fouls=None, distance=_occupy("head", "foot")), ("axis", "direct", "chain")),
    Spec("respot_Re_short_spots_taken", ("Re",), "balls stop on both short-axis pin spots",
         Goal(("Re",), fouls=None, distance=_occupy("left", "right")), ("axis", "direct", "chain")),
]


def _direct_after_carom(record: dict) -> bool:
    """F4's exception: the knocking white came straight from the cue ball (no cushion,
    no other ball), and the carom completed before it reached the pins."""
    from vision_ref.rules import events as ev_

    events = record["events"]
    carom = ev_.carom_index(events)
    for i, e in enumerate(events):
        if e["type"] == "pin_hit" and e["by"] in WHITES:
            w = e["by"]
            own = [k for k, x in ev_.contacts(events, w) if k < i]
            cush = [k for k, x in ev_.cushions(events, w) if k < i]
            return carom is not None and carom < i and len(own) == 1 and not cush and ev_.partner_of(events[own[0]], w) == "cue"
    return False


# ------------------------------------------------------------------ public API
@dataclass(frozen=True)
class Scenario:
    """A named scenario: the rule ids it demonstrates and how to simulate it."""

    name: str
    rules: tuple[str, ...]
    description: str
    setup: Setup = field(compare=False, repr=False)
    goal: Goal = field(compare=False, repr=False)

    def simulate(self, seed: int = 0):
        """The scenario's shot (seed 0: the cached set-up; others: a verified jitter)."""
        if seed:
            rng = np.random.default_rng([seed, 3])
            for _ in range(12):
                cand = self.setup.jittered(rng)
                if not valid_setup(cand):
                    continue
                shot = cand.simulate()
                if self.meets(shot):
                    return self._tag(shot, seed, "jittered")
        return self._tag(self.setup.simulate(), seed, "cached")

    def meets(self, shot) -> bool:
        rec = shot.truth_record(FPS)
        return self.goal.score(shot, rec, adjudicate(rec)) == 0.0

    def _tag(self, shot, seed: int, variant: str):
        # "cached": the library's own set-up (seed 0, or no jitter of this seed kept the meaning)
        shot.meta.update({"scenario": self.name, "rules": list(self.rules), "seed": int(seed), "variant": variant})
        return shot


def _load() -> dict[str, Scenario]:
    from vision_ref.sim._scenario_params import PARAMS

    out = {}
    for spec in SPECS:
        entry = PARAMS.get(spec.name)
        if entry is None:
            continue
        out[spec.name] = Scenario(spec.name, spec.rules, spec.description, Setup.from_dict(entry["setup"]), spec.goal)
    return out


_CACHE: dict[str, Scenario] | None = None


def list_scenarios() -> list[Scenario]:
    """Every scenario with cached parameters, in library order."""
    global _CACHE
    if _CACHE is None:
        _CACHE = _load()
    return list(_CACHE.values())


def get_scenario(name: str) -> Scenario:
    for s in list_scenarios():
        if s.name == name:
            return s
    from vision_ref.sim.cli import ScenarioError

    raise ScenarioError(f"unknown scenario {name!r}; `vision-ref scenarios` lists the names")


def random_scenario_setup(rng: np.random.Generator) -> Setup:
    """A valid set-up from a random family (used by the random shot generator's mix)."""
    names = list(FAMILIES)
    while True:
        fam = FAMILIES[names[int(rng.integers(len(names)))]]
        s = fam(_Unit(rng.random(DIMS)))
        if s is not None and valid_setup(s):
            return s


# ------------------------------------------------------------------ search
def _evaluate(setup: Setup):
    try:
        shot = setup.simulate()
        rec = shot.truth_record(FPS)
        dec = adjudicate(rec)
    except Exception:  # noqa: BLE001 - a sample the physics or the contract rejects is just a miss
        return None
    return shot, rec, dec


def _robust(spec: Spec, setup: Setup, rng: np.random.Generator, n: int = 3) -> int:
    ok = 0
    for _ in range(n):
        cand = setup.jittered(rng)
        if not valid_setup(cand):
            continue
        r = _evaluate(cand)
        if r is not None and spec.goal.score(*r) == 0.0:
            ok += 1
    return ok


def search(specs: list[Spec], seed: int = 0, trials: int = 600, refine: int = 300, log=print) -> dict[str, dict]:
    """Seeded search for set-ups meeting each spec's goal. Returns name -> cache entry."""
    rng = np.random.default_rng(seed)
    best: dict[str, tuple[float, np.ndarray, str, Setup]] = {}
    found: dict[str, dict] = {}
    by_family: dict[str, list[Spec]] = {}
    for s in specs:
        for f in s.families:
            by_family.setdefault(f, []).append(s)

    def consider(spec: Spec, score: float, x, fam: str, setup: Setup) -> None:
        if spec.name in found:
            return
        if score == 0.0:
            robust = _robust(spec, setup, rng)
            score = 0.0 if robust >= 2 else 0.5 * (3 - robust)
            if score == 0.0:
                found[spec.name] = {"setup": setup.to_dict(), "family": fam, "x": [round(float(v), 6) for v in x]}
                log(f"  found {spec.name} ({fam})")
                return
        if spec.name not in best or score < best[spec.name][0]:
            best[spec.name] = (score, x, fam, setup)

    for fam_name, group in by_family.items():
        fam = FAMILIES[fam_name]
        t0 = time.time()
        n = 0
        while n < trials and any(s.name not in found for s in group):
            x = rng.random(DIMS)
            setup = fam(_Unit(x))
            if setup is None or not valid_setup(setup):
                continue
            n += 1
            r = _evaluate(setup)
            if r is None:
                continue
            for spec in group:
                consider(spec, spec.goal.score(*r), x, fam_name, setup)
        log(f"family {fam_name}: {n} samples in {time.time() - t0:.1f} s")
    # (1+1)-ES refinement of the nearest sample of each goal still open
    for spec in specs:
        if spec.name in found or spec.name not in best:
            continue
        score, x, fam_name, setup = best[spec.name]
        fam = FAMILIES[fam_name]
        sigma = 0.05
        for _ in range(refine):
            if spec.name in found:
                break
            x2 = np.clip(x + rng.normal(0.0, sigma, DIMS), 0.0, 1.0)
            s2 = fam(_Unit(x2))
            if s2 is None or not valid_setup(s2):
                continue
            r = _evaluate(s2)
            if r is None:
                continue
            sc = spec.goal.score(*r)
            consider(spec, sc, x2, fam_name, s2)
            if sc <= score:
                x, score = x2, sc
                sigma = min(sigma * 1.5, 0.2)
            else:
                sigma = max(sigma * 0.9, 0.002)
        if spec.name not in found:
            sc, x, fam_name, setup = best[spec.name]
            if sc < 1000.0 and spec.goal.distance is None or sc < 1000.0 and _meets_exactly(spec, setup):
                # the goal is met but jitters break it: keep it (seeded variants fall back to it)
                found[spec.name] = {"setup": setup.to_dict(), "family": fam_name, "x": [round(float(v), 6) for v in x],
                                    "fragile": True}
                log(f"  found {spec.name} ({fam_name}, fragile: seeded jitters mostly break it)")
            else:
                log(f"  NOT found {spec.name} (best score {sc:.2f})")
    return found


def _meets_exactly(spec: Spec, setup: Setup) -> bool:
    r = _evaluate(setup)
    return r is not None and spec.goal.score(*r) == 0.0


def _write_cache(entries: dict[str, dict], path=None) -> None:
    from pathlib import Path

    path = Path(path or Path(__file__).with_name("_scenario_params.py"))
    try:
        from vision_ref.sim._scenario_params import PARAMS as old
    except ImportError:
        old = {}
    merged = {s.name: (entries.get(s.name) or old.get(s.name)) for s in SPECS}
    merged = {k: v for k, v in merged.items() if v is not None}
    body = json.dumps(merged, indent=1, sort_keys=False)
    path.write_text(
        '"""Cached set-ups of the scenario library (generated: do not edit by hand).\n\n'
        "Regenerate with `python -m vision_ref.sim.scenarios --regenerate [NAME ...]`.\n"
        '"""\n\n'
        "PARAMS = " + body.replace("null", "None").replace("true", "True").replace("false", "False") + "\n"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vision_ref.sim.scenarios", description=__doc__.split("\n\n")[0])
    ap.add_argument("--regenerate", nargs="*", metavar="NAME", help="search set-ups for these scenarios (default: all)")
    ap.add_argument("--missing", action="store_true", help="with --regenerate: only scenarios without a cached set-up")
    ap.add_argument("--check", action="store_true", help="simulate every cached scenario and check its goal")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--trials", type=int, default=600, help="random samples per family")
    ap.add_argument("--refine", type=int, default=300, help="refinement steps per open goal")
    args = ap.parse_args(argv)
    if args.regenerate is not None:
        names = args.regenerate or [s.name for s in SPECS]
        unknown = [n for n in names if n not in {s.name for s in SPECS}]
        if unknown:
            print(f"error: unknown scenario(s) {', '.join(unknown)}", file=sys.stderr)
            return 2
        specs = [s for s in SPECS if s.name in names]
        if args.missing:
            have = {s.name for s in list_scenarios()}
            specs = [s for s in specs if s.name not in have]
        found = search(specs, seed=args.seed, trials=args.trials, refine=args.refine)
        _write_cache(found)
        print(f"{len(found)}/{len(specs)} scenarios found; cache written")
        return 0 if len(found) == len(specs) else 1
    if args.check:
        bad = 0
        for s in list_scenarios():
            ok = s.meets(s.setup.simulate())
            bad += not ok
            print(f"{'ok ' if ok else 'BAD'} {s.name}")
        missing = [s.name for s in SPECS if s.name not in {x.name for x in list_scenarios()}]
        for m in missing:
            print(f"MISSING {m}")
        return 1 if bad or missing else 0
    ap.print_help()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
