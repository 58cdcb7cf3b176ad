"""Strict validation of shot records and match files (SHOT_RECORD.md).

Every check raises :class:`vision_ref.errors.ContractError` with the dotted path of
the offending field (``events[3].by``) and one line saying what is wrong. Validation
never modifies its input: it returns a normalised deep copy (pins missing from
``before`` filled in as standing on their spots, ``events`` and ``calls`` defaulted
to empty lists). Fields the contract does not define are kept and otherwise ignored.
"""

from __future__ import annotations

import copy
import json
import math
from typing import Any

from vision_ref.errors import ContractError
from vision_ref.rules.table import BALL_IDS, CUSHION_IDS, DEFAULT_TABLE, PIN_IDS, TableSpec

SHOT_FORMAT = "vision-ref.shot/1"
MATCH_FORMAT = "vision-ref.match/1"

WHITE_IDS = ("white1", "white2")
PIN_STATES = ("standing", "down", "leaning", "rail_standing", "rail_down")
DOWN_STATES = ("down", "rail_down")
EVENT_TYPES = ("strike", "ball_ball", "cushion", "pin_hit", "off_table", "doubt")
CALL_TYPES = (
    "touch",  # F3 / B6
    "cue_side",  # F9
    "self_stop",  # F10
    "partner_stop_cue",  # B4
    "partner_stop_white",  # B5 (with "ball")
    "bystander",  # B3
    "pin_not_set",  # F7
    "stance",  # S3
)
MODES = ("series", "shtoss")


def _fail(field: str, problem: str) -> None:
    raise ContractError(field, problem)


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "boolean", int: "number", float: "number", str: "string", list: "array", dict: "object"}.get(
        type(value), type(value).__name__
    )


def _require_object(value: Any, field: str) -> dict:
    if not isinstance(value, dict):
        _fail(field, f"must be an object, got {_type_name(value)}")
    return value


def _require_list(value: Any, field: str) -> list:
    if not isinstance(value, list):
        _fail(field, f"must be an array, got {_type_name(value)}")
    return value


def _require_number(value: Any, field: str) -> float:
    # bool is an int subclass in Python but never a number in JSON.
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        _fail(field, f"must be a number, got {_type_name(value)}")
    if not math.isfinite(value):
        _fail(field, f"must be a finite number, got {value!r}")
    return float(value)


def _require_point(value: Any, field: str) -> list[float]:
    if not isinstance(value, list) or len(value) != 2:
        _fail(field, f"must be [x, y] in mm, got {json.dumps(value) if _jsonable(value) else _type_name(value)}")
    return [_require_number(value[0], f"{field}[0]"), _require_number(value[1], f"{field}[1]")]


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
        return True
    except (TypeError, ValueError):
        return False


def _require_id(value: Any, field: str, allowed: tuple[str, ...], what: str) -> str:
    if not isinstance(value, str):
        _fail(field, f"must be a {what} id (one of {', '.join(allowed)}), got {_type_name(value)}")
    if value not in allowed:
        _fail(field, f"unknown {what} id {value!r} (expected one of {', '.join(allowed)})")
    return value


def _require_format(data: dict, expected: str, field: str = "format") -> None:
    tag = data.get("format")
    if tag is None:
        _fail(field, f"missing (expected {expected!r})")
    if tag != expected:
        _fail(field, f"wrong format tag {tag!r} (expected {expected!r})")


def _validate_balls(value: Any, field: str) -> dict[str, list[float] | None]:
    balls = _require_object(value, field)
    out: dict[str, list[float] | None] = {}
    for key in balls:
        if key not in BALL_IDS:
            _fail(f"{field}.{key}", f"unknown ball id (expected one of {', '.join(BALL_IDS)})")
    for ball in BALL_IDS:
        if ball not in balls:
            _fail(f"{field}.{ball}", "missing (every ball must be listed; null when off the table)")
        pos = balls[ball]
        out[ball] = None if pos is None else _require_point(pos, f"{field}.{ball}")
    return out


def _validate_pin(value: Any, field: str, pin: str) -> dict:
    entry = _require_object(value, field)
    if "at" not in entry:
        _fail(f"{field}.at", "missing (the pin's centre [x, y] in mm)")
    at = _require_point(entry["at"], f"{field}.at")
    if "state" not in entry:
        _fail(f"{field}.state", f"missing (one of {', '.join(PIN_STATES)})")
    state = entry["state"]
    if not isinstance(state, str) or state not in PIN_STATES:
        _fail(f"{field}.state", f"unknown pin state {state!r} (expected one of {', '.join(PIN_STATES)})")
    out = dict(entry)
    out["at"] = at
    if state == "leaning":
        if "on" not in entry:
            _fail(f"{field}.on", "missing (a leaning pin names the ball or pin it leans on)")
        _require_id(entry["on"], f"{field}.on", BALL_IDS + PIN_IDS, "ball or pin")
        if entry["on"] == pin:
            _fail(f"{field}.on", "a pin cannot lean on itself")
    return out


def _validate_pins(value: Any, field: str, *, complete: bool, table: TableSpec) -> dict[str, dict]:
    pins = _require_object(value, field)
    for key in pins:
        if key not in PIN_IDS:
            _fail(f"{field}.{key}", f"unknown pin id (expected one of {', '.join(PIN_IDS)})")
    out: dict[str, dict] = {}
    for pin in PIN_IDS:
        if pin in pins:
            out[pin] = _validate_pin(pins[pin], f"{field}.{pin}", pin)
        elif complete:
            _fail(f"{field}.{pin}", "missing (after must list every pin)")
        else:
            # SHOT_RECORD.md: pins missing from `before` stand on their spots.
            out[pin] = {"at": list(table.pin_spot(pin)), "state": "standing", "implied": True}
    return out


def _validate_position(value: Any, field: str, *, complete_pins: bool, table: TableSpec) -> dict:
    pos = _require_object(value, field)
    if "balls" not in pos:
        _fail(f"{field}.balls", "missing")
    out = dict(pos)
    out["balls"] = _validate_balls(pos["balls"], f"{field}.balls")
    if "pins" not in pos:
        if complete_pins:
            _fail(f"{field}.pins", "missing (after must list every pin)")
        pins_value: Any = {}
    else:
        pins_value = pos["pins"]
    out["pins"] = _validate_pins(pins_value, f"{field}.pins", complete=complete_pins, table=table)
    return out


def _validate_event(ev: Any, field: str) -> dict:
    ev = _require_object(ev, field)
    if "type" not in ev:
        _fail(f"{field}.type", f"missing (one of {', '.join(EVENT_TYPES)})")
    kind = ev["type"]
    if not isinstance(kind, str) or kind not in EVENT_TYPES:
        _fail(f"{field}.type", f"unknown event type {kind!r} (expected one of {', '.join(EVENT_TYPES)})")
    if "t" not in ev:
        _fail(f"{field}.t", "missing (seconds from the strike)")
    out = dict(ev)
    out["t"] = _require_number(ev["t"], f"{field}.t")

    def need(name: str) -> Any:
        if name not in ev:
            _fail(f"{field}.{name}", f"missing (required for a {kind} event)")
        return ev[name]

    if kind in ("strike", "off_table"):
        _require_id(need("ball"), f"{field}.ball", BALL_IDS, "ball")
    elif kind == "ball_ball":
        a = _require_id(need("a"), f"{field}.a", BALL_IDS, "ball")
        b = _require_id(need("b"), f"{field}.b", BALL_IDS, "ball")
        if a == b:
            _fail(f"{field}.b", f"a ball cannot collide with itself ({a!r})")
    elif kind == "cushion":
        _require_id(need("ball"), f"{field}.ball", BALL_IDS, "ball")
        _require_id(need("cushion"), f"{field}.cushion", CUSHION_IDS, "cushion")
    elif kind == "pin_hit":
        pin = _require_id(need("pin"), f"{field}.pin", PIN_IDS, "pin")
        by = _require_id(need("by"), f"{field}.by", BALL_IDS + PIN_IDS, "ball or pin")
        if by == pin:
            _fail(f"{field}.by", f"a pin cannot knock itself ({pin!r})")
    elif kind == "doubt":
        _require_id(need("pin"), f"{field}.pin", PIN_IDS, "pin")
        cands = _require_list(need("candidates"), f"{field}.candidates")
        for j, c in enumerate(cands):
            _require_id(c, f"{field}.candidates[{j}]", BALL_IDS, "ball")
        if "lying" in ev and not isinstance(ev["lying"], bool):
            _fail(f"{field}.lying", f"expected true or false, got {ev['lying']!r}")
    return out


def _validate_call(call: Any, field: str) -> dict:
    call = _require_object(call, field)
    if "type" not in call:
        _fail(f"{field}.type", f"missing (one of {', '.join(CALL_TYPES)})")
    kind = call["type"]
    if not isinstance(kind, str) or kind not in CALL_TYPES:
        _fail(f"{field}.type", f"unknown call type {kind!r} (expected one of {', '.join(CALL_TYPES)})")
    if kind == "partner_stop_white":
        if "ball" not in call:
            _fail(f"{field}.ball", "missing (which white the partner stopped)")
        _require_id(call["ball"], f"{field}.ball", WHITE_IDS, "white ball")
    if kind == "touch" and "restore" in call and not isinstance(call["restore"], bool):
        _fail(f"{field}.restore", f"must be true or false, got {_type_name(call['restore'])}")
    return dict(call)


def _check_consistency(rec: dict, field: str) -> None:
    """Cross-field checks: what the events say must agree with `before` / `after`."""
    before, after, events = rec["before"], rec["after"], rec["events"]
    calls = {c["type"] for c in rec["calls"]}
    for i, ev in enumerate(events):
        if ev["type"] == "strike" and ev["ball"] != rec["struck"]:
            _fail(f"{field}events[{i}].ball", f"strike of {ev['ball']!r} but struck is {rec['struck']!r}")
    strikes = [i for i, ev in enumerate(events) if ev["type"] == "strike"]
    if len(strikes) > 1:
        _fail(f"{field}events[{strikes[1]}]", "more than one strike in one shot")
    if before["balls"][rec["struck"]] is None:
        _fail(f"{field}before.balls.{rec['struck']}", "the struck ball is off the table before the shot")
    off = {}
    for i, ev in enumerate(events):
        for key in ("ball", "a", "b"):
            ball = ev.get(key) if ev["type"] != "pin_hit" else None
            if ev["type"] in ("strike", "ball_ball", "cushion", "off_table") and ball in BALL_IDS:
                if before["balls"][ball] is None:
                    _fail(f"{field}events[{i}].{key}", f"ball {ball!r} is off the table before the shot")
                if ball in off and ev["type"] != "off_table" and not (ball == "cue" and "bystander" in calls):
                    _fail(f"{field}events[{i}]", f"ball {ball!r} moves after leaving the table")
        if ev["type"] == "pin_hit" and ev["by"] in BALL_IDS:
            gone_before = ev["by"] in off and not (ev["by"] == "cue" and "bystander" in calls)
            if before["balls"][ev["by"]] is None or gone_before:
                _fail(f"{field}events[{i}].by", f"ball {ev['by']!r} is off the table")
        if ev["type"] == "off_table":
            if ev["ball"] in off:
                _fail(f"{field}events[{i}].ball", f"ball {ev['ball']!r} leaves the table twice")
            off[ev["ball"]] = i
    for ball in BALL_IDS:
        gone = after["balls"][ball] is None
        if gone and ball not in off and before["balls"][ball] is not None:
            _fail(f"{field}after.balls.{ball}", "null (off the table) but there is no off_table event for it")
        if not gone and ball in off:
            if ball == "cue" and "bystander" in calls:
                continue  # B3: the cue ball bounced back off a bystander
            _fail(f"{field}after.balls.{ball}", "on the table but an off_table event says it left")
    if "bystander" in calls and after["balls"]["cue"] is None:
        _fail(f"{field}calls", "bystander (B3) means the cue ball fell back: after.balls.cue must not be null")
    # A pin that is down at the end of the shot but was up before must have been set
    # moving by something the record names (a pin_hit, a doubt, or the ball/pin it leaned on).
    hit = {ev["pin"] for ev in events if ev["type"] in ("pin_hit", "doubt")}
    for pin in PIN_IDS:
        was = before["pins"][pin]["state"]
        now = after["pins"][pin]["state"]
        if now in DOWN_STATES and was not in DOWN_STATES and pin not in hit and was != "leaning":
            _fail(f"{field}after.pins.{pin}.state", f"{now} but no pin_hit or doubt event names pin {pin!r}")


def validate_shot(
    record: Any,
    *,
    table: TableSpec = DEFAULT_TABLE,
    players: tuple[str, ...] | list[str] | None = None,
    on_turn: str | None = None,
    field_prefix: str = "",
) -> dict:
    """Check one shot record against the contract and return a normalised copy.

    ``players`` and ``on_turn`` (when given) check ``shooter``: it may be omitted,
    in which case ``on_turn`` fills it in; a value that is not the player on turn is
    an error. ``field_prefix`` (e.g. ``"shots[3]."``) is prepended to field names.
    """
    p = field_prefix
    if isinstance(record, (str, bytes)):
        try:
            record = json.loads(record)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            _fail(p.rstrip(".") or "shot", f"not JSON ({exc})")
    rec_in = _require_object(record, p.rstrip(".") or "shot")
    _require_format(rec_in, SHOT_FORMAT, f"{p}format")
    rec = copy.deepcopy(rec_in)

    shooter = rec.get("shooter")
    if shooter is None:
        if on_turn is None:
            _fail(f"{p}shooter", "missing (no match context says whose turn it is)")
        shooter = on_turn
    elif not isinstance(shooter, str):
        _fail(f"{p}shooter", f"must be a player id string, got {_type_name(shooter)}")
    if players is not None and shooter not in players:
        _fail(f"{p}shooter", f"unknown player {shooter!r} (players are {', '.join(players)})")
    if on_turn is not None and shooter != on_turn:
        _fail(f"{p}shooter", f"{shooter!r} is not on turn ({on_turn!r} is)")
    rec["shooter"] = shooter

    if "struck" not in rec:
        _fail(f"{p}struck", "missing (the ball hit with the cue)")
    _require_id(rec["struck"], f"{p}struck", BALL_IDS, "ball")
    for part in ("before", "after"):
        if part not in rec:
            _fail(f"{p}{part}", "missing")
    rec["before"] = _validate_position(rec["before"], f"{p}before", complete_pins=False, table=table)
    rec["after"] = _validate_position(rec["after"], f"{p}after", complete_pins=True, table=table)

    events = _require_list(rec.get("events", []), f"{p}events")
    rec["events"] = [_validate_event(ev, f"{p}events[{i}]") for i, ev in enumerate(events)]
    for i in range(1, len(rec["events"])):
        if rec["events"][i]["t"] < rec["events"][i - 1]["t"]:
            _fail(
                f"{p}events[{i}].t",
                f"out of time order ({rec['events'][i]['t']} after {rec['events'][i - 1]['t']})",
            )
    calls = _require_list(rec.get("calls", []), f"{p}calls")
    rec["calls"] = [_validate_call(c, f"{p}calls[{i}]") for i, c in enumerate(calls)]
    _check_consistency(rec, p)
    return rec


def validate_match_file(data: Any, *, table: TableSpec | None = None) -> dict:
    """Check a match file's header (not its shots) and return a normalised copy.

    The shots are validated one by one while they are played, because whether a
    shooter is on turn depends on the decisions before it.
    """
    if isinstance(data, (str, bytes)):
        try:
            data = json.loads(data)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            _fail("match", f"not JSON ({exc})")
    m = _require_object(data, "match")
    _require_format(m, MATCH_FORMAT)
    out = copy.deepcopy(m)
    players = _require_list(m.get("players"), "players") if "players" in m else _fail("players", "missing")
    if len(players) != 2:
        _fail("players", f"must list exactly two players, got {len(players)}")
    for i, pl in enumerate(players):
        if not isinstance(pl, str) or not pl:
            _fail(f"players[{i}]", f"must be a non-empty string, got {_type_name(pl)}")
    if players[0] == players[1]:
        _fail("players", f"the two players must differ (both {players[0]!r})")
    out["players"] = list(players)
    first = m.get("first", players[0])
    if first not in players:
        _fail("first", f"unknown player {first!r} (players are {', '.join(players)})")
    out["first"] = first
    target = m.get("target", 100)
    if isinstance(target, bool) or not isinstance(target, int) or target <= 0:
        _fail("target", f"must be a positive whole number, got {json.dumps(target) if _jsonable(target) else target}")
    out["target"] = target
    out["modes"] = validate_modes(m.get("modes"), players)
    out["score"] = validate_score(m.get("score"), players)
    shots = m.get("shots", [])
    _require_list(shots, "shots")
    if "settings" in m and m["settings"] is not None:
        _require_object(m["settings"], "settings")
    if "table" in m and m["table"] is not None:
        _require_object(m["table"], "table")
    return out


def validate_modes(modes: Any, players: list[str] | tuple[str, ...]) -> dict[str, str]:
    if modes is None:
        return {pl: "series" for pl in players}
    modes = _require_object(modes, "modes")
    for key in modes:
        if key not in players:
            _fail(f"modes.{key}", f"unknown player (players are {', '.join(players)})")
    out = {}
    for pl in players:
        mode = modes.get(pl, "series")
        if mode not in MODES:
            _fail(f"modes.{pl}", f"unknown mode {mode!r} (expected series or shtoss)")
        out[pl] = mode
    return out


def validate_score(score: Any, players: list[str] | tuple[str, ...]) -> dict[str, int]:
    if score is None:
        return {pl: 0 for pl in players}
    score = _require_object(score, "score")
    for key in score:
        if key not in players:
            _fail(f"score.{key}", f"unknown player (players are {', '.join(players)})")
    out = {}
    for pl in players:
        v = score.get(pl, 0)
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            _fail(f"score.{pl}", f"must be a whole number >= 0, got {v!r}")
        out[pl] = v
    return out


DECISION_FIELDS = (
    "shot",
    "shooter",
    "foul",
    "fouls",
    "carom",
    "pins_down",
    "points",
    "credited_to",
    "next",
    "ball_in_hand",
    "restore",
    "respot",
    "score",
    "game_over",
    "winner",
    "rules",
)


def validate_decision(decision: Any, field: str = "decision") -> dict:
    """Check that a decision dict carries every contract field with the right type."""
    d = _require_object(decision, field)
    for name in DECISION_FIELDS:
        if name not in d:
            _fail(f"{field}.{name}", "missing")
    if not isinstance(d["shot"], int) or d["shot"] < 1:
        _fail(f"{field}.shot", "must be a shot number >= 1")
    for name in ("foul", "carom", "restore", "game_over"):
        if not isinstance(d[name], bool):
            _fail(f"{field}.{name}", f"must be true or false, got {_type_name(d[name])}")
    for i, f in enumerate(_require_list(d["fouls"], f"{field}.fouls")):
        f = _require_object(f, f"{field}.fouls[{i}]")
        if not isinstance(f.get("rule"), str) or not isinstance(f.get("detail"), str) or not f["detail"]:
            _fail(f"{field}.fouls[{i}]", "needs a rule id and a one-line detail")
    if d["foul"] != bool(d["fouls"]):
        _fail(f"{field}.foul", "must be true exactly when fouls is not empty")
    for j, pin in enumerate(_require_list(d["pins_down"], f"{field}.pins_down")):
        _require_id(pin, f"{field}.pins_down[{j}]", PIN_IDS, "pin")
    if isinstance(d["points"], bool) or not isinstance(d["points"], int) or d["points"] < 0:
        _fail(f"{field}.points", "must be a whole number >= 0")
    if (d["points"] == 0) != (d["credited_to"] is None):
        _fail(f"{field}.credited_to", "must be null exactly when points is 0")
    for j, r in enumerate(_require_list(d["respot"], f"{field}.respot")):
        r = _require_object(r, f"{field}.respot[{j}]")
        _require_id(r.get("piece"), f"{field}.respot[{j}].piece", PIN_IDS + BALL_IDS, "piece")
        _require_point(r.get("at"), f"{field}.respot[{j}].at")
        if not isinstance(r.get("rule"), str):
            _fail(f"{field}.respot[{j}].rule", "missing")
    bih = d["ball_in_hand"]
    if bih is not None:
        bih = _require_object(bih, f"{field}.ball_in_hand")
        if bih.get("zone") not in ("head_half", "foot_half", "either", "anywhere"):
            _fail(f"{field}.ball_in_hand.zone", f"unknown zone {bih.get('zone')!r}")
    _require_object(d["score"], f"{field}.score")
    if not isinstance(d["rules"], list) or not all(isinstance(r, str) for r in d["rules"]):
        _fail(f"{field}.rules", "must be an array of rule ids")
    return d
