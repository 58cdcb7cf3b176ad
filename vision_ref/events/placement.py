"""Checking what was placed by hand between shots against the adjudicator's decision.

After a shot the decision lists where every knocked pin (and a white that left the
table) must go (``respot``). The next shot's ``before`` shows where they were put.
:func:`check_respot` compares the two and returns one plain warning per difference:
a piece placed elsewhere, a pin left lying, a white not put back. It never raises on
a disagreement -- placing is the players' business, the referee only says so.
"""

from __future__ import annotations

import math

from vision_ref.errors import ContractError
from vision_ref.rules.table import BALL_IDS, DEFAULT_TABLE, PIN_IDS, TableSpec


def _dist(p, q) -> float:
    return math.hypot(float(p[0]) - float(q[0]), float(p[1]) - float(q[1]))


def check_respot(decision: dict, next_before: dict, *, after: dict | None = None,
                 tolerance_mm: float | None = None, table: TableSpec = DEFAULT_TABLE) -> list[str]:
    """Warnings where ``next_before`` (the next record's ``before``) differs from the
    decision's ``respot`` instructions.

    ``after`` (the shot's own ``after``), when given, also flags pieces that were
    moved by hand although nothing said to move them. ``tolerance_mm`` defaults to
    half the pin spacing's free gap (a pin within it is "on its place").
    """
    if not isinstance(decision, dict):
        raise ContractError("decision", f"must be an object, got {type(decision).__name__}")
    if not isinstance(next_before, dict) or "balls" not in next_before:
        raise ContractError("next_before", "must be a position with balls (and pins)")
    tol = float(tolerance_mm) if tolerance_mm is not None else 0.25 * table.ball_diameter
    balls = next_before.get("balls") or {}
    pins = next_before.get("pins") or {}
    warnings: list[str] = []
    told: set[str] = set()
    respot = decision.get("respot") or []
    if not isinstance(respot, list):
        raise ContractError("decision.respot", "must be a list")
    for k, item in enumerate(respot):
        if not isinstance(item, dict) or "piece" not in item or "at" not in item:
            raise ContractError(f"decision.respot[{k}]", "needs piece and at")
        piece, at, rule = item["piece"], item["at"], item.get("rule", "spot")
        told.add(piece)
        where = f"({float(at[0]):.0f}, {float(at[1]):.0f})"
        if piece in PIN_IDS:
            entry = pins.get(piece)
            if entry is None:
                # SHOT_RECORD.md: a pin missing from before stands on its spot
                entry = {"at": list(table.pin_spot(piece)), "state": "standing"}
            if entry.get("state") != "standing":
                warnings.append(f"pin {piece} was to be set up at {where} ({rule}) but is {entry.get('state')}")
                continue
            d = _dist(entry["at"], at)
            if d > tol:
                warnings.append(f"pin {piece} was to be set at {where} ({rule}) but stands "
                                f"{d:.0f} mm away at ({entry['at'][0]:.0f}, {entry['at'][1]:.0f})")
        elif piece in BALL_IDS:
            pos = balls.get(piece)
            if pos is None:
                warnings.append(f"{piece} was to be put back at {where} ({rule}) but is not on the table")
                continue
            d = _dist(pos, at)
            if d > tol:
                warnings.append(f"{piece} was to be put back at {where} ({rule}) but is {d:.0f} mm away "
                                f"at ({pos[0]:.0f}, {pos[1]:.0f})")
        else:
            raise ContractError(f"decision.respot[{k}].piece", f"unknown piece {piece!r}")
    if after is not None:
        bih = decision.get("ball_in_hand") or None
        for b in BALL_IDS:
            if b in told or (b == "cue" and bih):
                continue
            p, q = (after.get("balls") or {}).get(b), balls.get(b)
            if p is not None and q is not None and _dist(p, q) > tol:
                warnings.append(f"{b} was moved by hand between shots ({_dist(p, q):.0f} mm)")
            elif (p is None) != (q is None):
                warnings.append(f"{b} was {'put on' if p is None else 'taken off'} the table between shots")
        for pin in PIN_IDS:
            if pin in told:
                continue
            a = (after.get("pins") or {}).get(pin)
            n = pins.get(pin) or {"at": list(table.pin_spot(pin)), "state": "standing"}
            if a is None:
                continue
            if a.get("state") != n.get("state") or _dist(a["at"], n["at"]) > tol:
                warnings.append(f"pin {pin} was moved by hand between shots although no rule said to "
                                f"({a.get('state')} -> {n.get('state')})")
    return warnings
