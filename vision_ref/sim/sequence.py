"""A stretch of play: shots one after another, as one continuous clip.

Each shot starts where the previous one left the balls. Between shots the knocked
pins (and any white off the table) are put back *by hand* where the adjudicator's
decision says (``decision["respot"]``, RULES R/B2/T2): in a short still gap the
fallen pins are picked up (they vanish), and a moment later stand at their respot
places; pins that stayed standing (T1) or leaning (T4) are left alone. A cue ball
off the table is placed by the next player in the zone the decision gives (B1).

:class:`ShotSequence` implements the ``ShotSimulation`` protocol of
:mod:`vision_ref.sim.world` (``duration``, ``strike_time``, ``sample(times)``,
``truth_record``) plus ``truth_records(fps)`` (one shot record per shot, times from
its own strike, with the extra ``clip_strike_time``), ``shot_windows`` (clip
times of each shot) and ``truth_frames(fps)``.

Shots are given as *plans*: a :class:`~vision_ref.sim.physics.Strike` (with an
optional :class:`Script`), or a goal name that :func:`plan_strike` turns into a
strike by a seeded search on the layout the previous shots left (``"legal_pins"``,
``"carom"``, ``"foul"``, ``"foul_F4"``, ``"foul_F5"``, ``"foul_F1"``, ``"any"``).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from vision_ref.messages import BallState
from vision_ref.rules.table import BALL_IDS, DEFAULT_TABLE, PIN_IDS, TableSpec
from vision_ref.sim import _physics_kernels as K
from vision_ref.sim.physics import Layout, PinPlacement, Script, SimulatedShot, Strike, simulate
from vision_ref.sim.world import WorldSamples

PICKUP_FRACTION = 0.35  # of the gap: pins lie until then, are gone until PLACE_FRACTION
PLACE_FRACTION = 0.65


@dataclass
class ShotPlan:
    """One shot of a sequence: a strike (and script), or a goal for :func:`plan_strike`."""

    strike: Strike | None = None
    goal: str | None = None
    script: Script | None = None

    def __post_init__(self) -> None:
        if (self.strike is None) == (self.goal is None):
            raise ValueError("a ShotPlan needs exactly one of strike or goal")
        if self.goal is not None and self.goal not in GOALS:
            raise ValueError(f"unknown shot goal {self.goal!r}; known: {', '.join(sorted(GOALS))}")


def _fouls(d: dict) -> set[str]:
    return {f["rule"] for f in d["fouls"]}


GOALS: dict[str, Callable[[dict], bool]] = {
    "legal_pins": lambda d: not d["foul"] and bool(d["pins_down"]),
    "carom": lambda d: not d["foul"] and d["carom"] and not d["pins_down"],
    "foul": lambda d: d["foul"] and _fouls(d) <= {"F1", "F4", "F5"},
    "foul_pins": lambda d: d["foul"] and bool(d["pins_down"]) and _fouls(d) <= {"F4", "F5"},
    "foul_F4": lambda d: _fouls(d) == {"F4"},
    "foul_F5": lambda d: _fouls(d) == {"F5"},
    "foul_F1": lambda d: _fouls(d) == {"F1"},
    "no_score": lambda d: not d["foul"] and d["points"] == 0,
    "any": lambda d: True,
}


def _aimed_strike(layout: Layout, rng: np.random.Generator, table: TableSpec, speed=(600.0, 5000.0)) -> Strike:
    """A random strike of the cue ball aimed at a white (ghost-ball cut) or at the pins."""
    R = table.ball_radius
    cue = np.asarray(layout.balls["cue"])
    whites = [np.asarray(layout.balls[b]) for b in ("white1", "white2") if layout.balls.get(b) is not None]
    if whites and rng.random() < 0.85:
        obj = whites[int(rng.integers(len(whites)))]
        to = obj - cue
        dist = float(np.hypot(*to))
        off = math.asin(min(0.95 * 2 * R / max(dist, 2 * R), 1.0))
        angle = math.atan2(to[1], to[0]) + rng.uniform(-off, off)
    else:
        tgt = rng.uniform(-60.0, 60.0, 2)
        angle = math.atan2(tgt[1] - cue[1], tgt[0] - cue[0])
    r = 0.4 * math.sqrt(rng.random())
    phi = rng.uniform(-math.pi, math.pi)
    sp = float(np.exp(rng.uniform(math.log(speed[0]), math.log(speed[1]))))
    return Strike("cue", sp, angle % (2 * math.pi), r * math.cos(phi), r * math.sin(phi))


def plan_strike(layout: Layout, match, goal: str, rng: np.random.Generator, table: TableSpec = DEFAULT_TABLE,
                trials: int = 3000, fps: float = 60.0, max_shot_s: float = 9.0) -> tuple[Strike, SimulatedShot, dict]:
    """A strike from ``layout`` whose adjudicated truth meets ``goal`` (seeded search).

    ``match``: the :class:`vision_ref.rules.Match` so far (copied, not changed).
    Prefers shots that come to rest within ``max_shot_s``. Raises RuntimeError when
    no strike is found within ``trials``.
    """
    want = GOALS[goal]
    for _ in range(trials):
        strike = _aimed_strike(layout, rng, table)
        try:
            shot = simulate(layout, strike, table)
        except (ValueError, RuntimeError):
            continue
        if shot.end_time > max_shot_s:
            continue
        shot.shooter = match.turn
        rec = shot.truth_record(fps)
        m = copy.deepcopy(match)
        try:
            d = m.play(rec)
        except Exception:  # noqa: BLE001 - a record the adjudicator rejects is not a candidate
            continue
        if want(d):
            return strike, shot, d
    raise RuntimeError(f"no strike meeting {goal!r} found in {trials} trials")


@dataclass
class _Played:
    shot: SimulatedShot
    start: float  # clip time of the shot's own clip time 0
    decision: dict
    record: dict
    respot: dict[str, tuple[float, float]] = field(default_factory=dict)  # piece -> where it is put back


class ShotSequence:
    """Shots one after another in one clip (see the module docstring)."""

    def __init__(self, layout: Layout, plans: list[ShotPlan | Strike | str], *, players=("A", "B"), first="A",
                 table: TableSpec = DEFAULT_TABLE, seed: int = 0, gap_s: float = 1.2, fps: float = 60.0,
                 lead_in: float = 0.6, tail: float = 0.4, max_shot_s: float = 9.0,
                 match_kw: dict | None = None) -> None:
        from vision_ref.rules import Match

        if not plans:
            raise ValueError("a sequence needs at least one shot")
        if gap_s < 0.2:
            raise ValueError(f"gap_s must be at least 0.2 s (time to respot by hand), got {gap_s}")
        self.table = table
        self.gap_s = float(gap_s)
        self.fps = float(fps)
        self.players = tuple(players)
        self.first = first
        self.match = Match(list(players), first=first, **(match_kw or {}))
        rng = np.random.default_rng([int(seed), 0x5E0])
        self.played: list[_Played] = []
        t = 0.0
        current = layout.copy()
        for k, plan in enumerate(plans):
            if isinstance(plan, Strike):
                plan = ShotPlan(strike=plan)
            elif isinstance(plan, str):
                plan = ShotPlan(goal=plan)
            if self.match.game_over:
                raise ValueError(f"the game is over after shot {k}; no more shots can be played")
            if plan.goal is not None:
                _, shot, _ = plan_strike(current, self.match, plan.goal, rng, table, fps=fps, max_shot_s=max_shot_s)
            else:
                shot = simulate(current, plan.strike, table, script=plan.script)
            shot.lead_in = lead_in
            shot.strike_time = lead_in
            shot.tail = tail
            shot.duration = lead_in + shot.end_time + tail
            shot.shooter = self.match.turn
            rec = shot.truth_record(fps)
            decision = self.match.play(rec)
            rec["clip_strike_time"] = round(float(t + shot.strike_time), 6)
            played = _Played(shot, t, decision, rec)
            current = self._next_layout(shot, decision, rng, played)
            self.played.append(played)
            t = float(t + shot.duration + self.gap_s)
        self.duration = t - self.gap_s
        self.strike_time = self.played[0].start + self.played[0].shot.strike_time
        self.shooter = first
        self.meta: dict[str, Any] = {"sequence": True, "shots": len(self.played), "seed": int(seed)}

    # ---- between shots: the hand respot -----------------------------------------------
    def _next_layout(self, shot: SimulatedShot, decision: dict, rng, played: _Played) -> Layout:
        end = shot.positions_at(shot.end_time + 1e-6)
        # exact centres (the record's are rounded to 0.01 mm): the next shot starts exactly there
        balls = {}
        for i, b in enumerate(BALL_IDS):
            pos, _, codes = shot.tracks[i].evaluate(np.array([shot.end_time + 1e-6]))
            balls[b] = None if codes[0] in (K.GONE, K.AIRBORNE) else (float(pos[0, 0]), float(pos[0, 1]))
        respot = {r["piece"]: (float(r["at"][0]), float(r["at"][1])) for r in decision["respot"]}
        for b in ("white1", "white2"):
            if b in respot:
                balls[b] = respot[b]
        bih = decision.get("ball_in_hand")
        if balls["cue"] is None or bih:
            balls["cue"] = self._place_cue(balls, bih["zone"] if bih else "either", rng)
            respot["cue"] = balls["cue"]
        played.respot = respot
        pins: dict[str, PinPlacement] = {}
        for k, p in enumerate(PIN_IDS):
            info = end["pins"][p]
            seg = shot.pins.pins[k].segments[-1]
            if p in respot:
                pins[p] = PinPlacement(respot[p])
            elif info["state"] == "standing":
                pins[p] = PinPlacement(tuple(info["at"]))
            elif info["state"] == "leaning":
                pins[p] = PinPlacement(tuple(info["at"]), "leaning", float(seg.phi), info.get("on"), float(seg.tilt))
            else:  # a down pin with no respot instruction cannot happen; stand it on its spot
                pins[p] = PinPlacement(self.table.pin_spot(p))
        return Layout(balls, pins)

    def _place_cue(self, balls: dict, zone: str, rng) -> tuple[float, float]:
        """Where the next player puts the cue ball by hand (B1/B4): a free point of the zone."""
        t = self.table
        R = t.ball_radius
        for _ in range(10000):
            x = rng.uniform(R + 40.0, t.half_length - R - 40.0) * (1.0 if rng.random() < 0.5 else -1.0)
            if zone == "head_half":
                x = -abs(x)
            elif zone == "foot_half":
                x = abs(x)
            y = rng.uniform(-t.half_width + R + 40.0, t.half_width - R - 40.0)
            far_pins = all(math.hypot(x - q[0], y - q[1]) > 200.0 for q in t.pin_spots().values())
            far_balls = all(b is None or math.hypot(x - b[0], y - b[1]) > 3 * R for k, b in balls.items() if k != "cue")
            if far_pins and far_balls:
                return (x, y)
        raise RuntimeError("no free place for the cue ball")  # pragma: no cover - the cloth is large

    # ---- the protocol -------------------------------------------------------------------------
    @property
    def shot_windows(self) -> list[dict]:
        """Clip times of each shot: start, strike, rest (end of motion) and end (incl. its tail)."""
        out = []
        for k, p in enumerate(self.played):
            out.append({"shot": k + 1, "start": round(float(p.start), 6),
                        "strike": round(float(p.start + p.shot.strike_time), 6),
                        "rest": round(float(p.start + p.shot.strike_time + p.shot.end_time), 6),
                        "end": round(float(p.start + p.shot.duration), 6)})
        return out

    def _locate(self, t: float) -> tuple[int, str]:
        """(shot index, "shot" | "gap") of clip time t: shot k covers [start, start + duration),
        the gap after it runs to the next shot's start; times past the end belong to the last shot."""
        last = len(self.played) - 1
        for k, p in enumerate(self.played):
            if t < p.start + p.shot.duration or k == last:
                return k, "shot"
            if t < self.played[k + 1].start:
                return k, "gap"
        return last, "shot"  # pragma: no cover - the loop returns at the last shot

    def sample(self, times) -> WorldSamples:
        t = np.atleast_1d(np.asarray(times, dtype=np.float64))
        parts = [self.played[0].shot.sample(np.zeros(1))]  # shapes
        f = len(t)
        out = {name: np.zeros((f,) + getattr(parts[0], name).shape[1:], dtype=getattr(parts[0], name).dtype)
               for name in ("ball_xyz", "ball_rot", "ball_visible", "pin_xy", "pin_tilt", "pin_dir", "pin_z",
                            "pin_state", "pin_visible", "cue_tip", "cue_angle", "cue_visible")}
        where = [self._locate(x) for x in t]
        keys = sorted(set(where))
        for k, kind in keys:
            idx = np.array([i for i, w in enumerate(where) if w == (k, kind)])
            p = self.played[k]
            if kind == "shot":
                ws = p.shot.sample(t[idx] - p.start)
            else:
                ws = self._gap_sample(k, t[idx])
            for name in out:
                out[name][idx] = getattr(ws, name)
        return WorldSamples(t=t, **out)

    def _gap_sample(self, k: int, t: np.ndarray) -> WorldSamples:
        """Between shot k and k+1: the end of shot k, knocked pins picked up, then placed."""
        p = self.played[k]
        nxt = self.played[k + 1]
        g0 = p.start + p.shot.duration
        frac = (t - g0) / max(nxt.start - g0, 1e-9)
        end = p.shot.sample(np.full(len(t), p.shot.duration))
        new = nxt.shot.sample(np.zeros(len(t)))  # the next layout, before its cue stick comes in
        moved = [i for i, pin in enumerate(PIN_IDS) if pin in p.respot]
        ws = end
        placed = frac >= PLACE_FRACTION
        gone = (frac >= PICKUP_FRACTION) & ~placed
        for i in moved:
            ws.pin_visible[gone, i] = False
            for name in ("pin_xy", "pin_tilt", "pin_dir", "pin_z", "pin_state", "pin_visible"):
                getattr(ws, name)[placed, i] = getattr(new, name)[placed, i]
        for b, key in (("white1", 1), ("white2", 2), ("cue", 0)):
            if b in p.respot:
                ws.ball_visible[gone, key] = False
                ws.ball_xyz[placed, key] = new.ball_xyz[placed, key]
                ws.ball_visible[placed, key] = new.ball_visible[placed, key]
        ws.cue_visible[:] = False
        return ws

    def truth_records(self, fps: float | None = None) -> list[dict]:
        """One shot record per shot (times from its own strike; extra ``clip_strike_time``)."""
        out = []
        for p in self.played:
            rec = p.shot.truth_record(fps or self.fps)
            rec["clip_strike_time"] = round(float(p.start + p.shot.strike_time), 6)
            out.append(rec)
        return out

    def truth_record(self, fps: float | None = None) -> dict:
        """The whole stretch as a match file (``vision-ref.match/1``) of its shot records."""
        return {"format": "vision-ref.match/1", "players": list(self.players), "first": self.first,
                "target": self.match.target, "shots": self.truth_records(fps),
                "decisions": [p.decision for p in self.played], "shot_windows": self.shot_windows}

    def truth_frames(self, fps: float) -> dict:
        """Per-frame truth of every object at ``fps`` (as :func:`vision_ref.sim.truth.truth_frames`)."""
        n = int(math.floor(self.duration * fps)) + 1
        t = np.arange(n) / float(fps)
        ws = self.sample(t)
        codes = np.full((n, len(BALL_IDS)), int(BallState.AT_REST), dtype=np.int64)
        shot_of = np.full(n, 0, dtype=np.int64)
        for f, x in enumerate(t):
            k, kind = self._locate(x)
            shot_of[f] = k + 1
            if kind == "shot":
                p = self.played[k]
                ts = x - p.start - p.shot.strike_time
                for i in range(len(BALL_IDS)):
                    c = int(p.shot.tracks[i].evaluate(np.array([ts]))[2][0])
                    codes[f, i] = int(BallState.MOVING) if c in (K.SLIDING, K.ROLLING) else (
                        int(BallState.OFF_TABLE) if c in (K.GONE, K.AIRBORNE) else int(BallState.AT_REST))
        moving = (codes == int(BallState.MOVING)).any(axis=1) | (ws.pin_state == 2).any(axis=1)
        balls = {b: {"xy": np.round(ws.ball_xyz[:, i, :2], 3).tolist(), "z": np.round(ws.ball_xyz[:, i, 2], 3).tolist(),
                     "state": codes[:, i].tolist(), "visible": ws.ball_visible[:, i].astype(bool).tolist()}
                 for i, b in enumerate(BALL_IDS)}
        pins = {p: {"xy": np.round(ws.pin_xy[:, k], 3).tolist(), "tilt": np.round(ws.pin_tilt[:, k], 5).tolist(),
                    "dir": np.round(ws.pin_dir[:, k], 5).tolist(), "z": np.round(ws.pin_z[:, k], 3).tolist(),
                    "state": ws.pin_state[:, k].astype(int).tolist(), "visible": ws.pin_visible[:, k].astype(bool).tolist()}
                for k, p in enumerate(PIN_IDS)}
        return {"fps": float(fps), "t": np.round(t, 9).tolist(), "strike_time": self.strike_time, "balls": balls,
                "pins": pins, "cue": {"tip": np.round(ws.cue_tip, 3).tolist(), "angle": np.round(ws.cue_angle, 5).tolist(),
                                      "visible": ws.cue_visible.astype(bool).tolist()},
                "moving": moving.tolist(), "shot": shot_of.tolist()}
