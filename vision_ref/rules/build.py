"""Compact construction of valid shot records (tests, scenarios, hand-written matches).

>>> make_shot("A", [("bb", "cue", "white1"), ("cush", "white1", "left"), ("pin", "head", "white1")],
...           down=["head"])

Event shorthands (times are spaced ``dt`` apart from 0 unless a tuple starts with a
number, which is then its time): ``("strike", ball)`` · ``("bb", a, b)`` ·
``("cush", ball, cushion)`` · ``("pin", pin, by)`` · ``("off", ball)`` ·
``("doubt", pin, [candidates])``. A ``strike`` of ``struck`` is prepended when the
list has none. Full event dicts are passed through unchanged.
"""

from __future__ import annotations

import copy
from typing import Any, Iterable

from vision_ref.rules.record import SHOT_FORMAT
from vision_ref.rules.table import DEFAULT_TABLE, PIN_IDS, TableSpec

BEFORE_BALLS = {"cue": [-900.0, 120.0], "white1": [-710.0, 0.0], "white2": [710.0, 0.0]}
AFTER_BALLS = {"cue": [300.0, -400.0], "white1": [-400.0, 500.0], "white2": [900.0, 300.0]}


def event(spec: Any, t: float) -> dict:
    if isinstance(spec, dict):
        return dict(spec)
    spec = list(spec)
    if spec and isinstance(spec[0], (int, float)) and not isinstance(spec[0], bool):
        t = float(spec.pop(0))
    kind, *args = spec
    if kind == "strike":
        return {"t": t, "type": "strike", "ball": args[0]}
    if kind == "bb":
        return {"t": t, "type": "ball_ball", "a": args[0], "b": args[1]}
    if kind == "cush":
        return {"t": t, "type": "cushion", "ball": args[0], "cushion": args[1]}
    if kind == "pin":
        return {"t": t, "type": "pin_hit", "pin": args[0], "by": args[1]}
    if kind == "off":
        return {"t": t, "type": "off_table", "ball": args[0]}
    if kind == "doubt":
        return {"t": t, "type": "doubt", "pin": args[0], "candidates": list(args[1])}
    raise ValueError(f"unknown event shorthand {kind!r}")


def _kind(spec: Any) -> str:
    if isinstance(spec, dict):
        return spec.get("type", "")
    words = [x for x in spec if isinstance(x, str)]
    return words[0] if words else ""


def make_shot(
    shooter: str | None = "A",
    events: Iterable[Any] = (),
    *,
    struck: str = "cue",
    down: Iterable[str] = (),
    before_balls: dict | None = None,
    after_balls: dict | None = None,
    before_pins: dict | None = None,
    after_pins: dict | None = None,
    calls: Iterable[Any] = (),
    dt: float = 0.1,
    table: TableSpec = DEFAULT_TABLE,
    **extra: Any,
) -> dict:
    """A shot record. ``down``: pins that end the shot down (near their spot);
    ``after_pins`` overrides single pins (others stand on their spots)."""
    evs: list[dict] = []
    specs = list(events)
    if not any(_kind(e) == "strike" for e in specs):
        specs.insert(0, ("strike", struck))
    t = 0.0
    for spec in specs:
        ev = event(spec, t)
        evs.append(ev)
        t = ev["t"] + dt
    down = set(down)
    pins_after = {}
    for p in PIN_IDS:
        x, y = table.pin_spot(p)
        pins_after[p] = {"at": [x + 15.0, y + 10.0], "state": "down"} if p in down else {"at": [x, y], "state": "standing"}
    if after_pins:
        pins_after.update(copy.deepcopy(after_pins))
    rec: dict = {
        "format": SHOT_FORMAT,
        "struck": struck,
        "before": {"balls": copy.deepcopy(before_balls or BEFORE_BALLS)},
        "events": evs,
        "after": {"balls": copy.deepcopy(after_balls or AFTER_BALLS), "pins": pins_after},
        "calls": [c if isinstance(c, dict) else {"type": c} for c in calls],
    }
    if shooter is not None:
        rec["shooter"] = shooter
    if before_pins:
        rec["before"]["pins"] = copy.deepcopy(before_pins)
    # Off-table balls: events say so, so after must be null unless overridden.
    for e in evs:
        if e["type"] == "off_table" and (after_balls is None or e["ball"] not in after_balls):
            rec["after"]["balls"][e["ball"]] = None
    rec.update(extra)
    return rec


def make_match(shots: list[dict], players=("A", "B"), first="A", **header: Any) -> dict:
    out = {"format": "vision-ref.match/1", "players": list(players), "first": first, "shots": shots}
    out.update(header)
    return out


def play_shots(shots: list[dict], players=("A", "B"), first="A", **match_kwargs: Any) -> list[dict]:
    """Play ``shots`` in a fresh Match and return the decisions."""
    from vision_ref.rules.match import Match

    m = Match(list(players), first, **match_kwargs)
    return [m.play(s) for s in shots]
