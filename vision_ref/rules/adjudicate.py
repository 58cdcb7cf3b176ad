"""Deciding one shot: a pure function from (validated record, match state) to
(decision, new match state). :class:`vision_ref.rules.match.Match` wraps it for live
and batch use; both paths run exactly this code.

The match state is a plain JSON-able dict (see :func:`initial_state`), so a crashed
live session can be resumed from a saved state or by replaying its records.
"""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass, fields
from typing import Any

from vision_ref.errors import ContractError
from vision_ref.rules import events as ev_
from vision_ref.rules.record import DOWN_STATES, WHITE_IDS
from vision_ref.rules.respot import Layout, Placement, rail_pin_placement, respot_pins, respot_white
from vision_ref.rules.table import BALL_IDS, PIN_IDS, TableSpec

F9_PENALTY = 2
F10_PENALTY = 30
B5_AWARD = 30
CAROM_POINTS = 3


@dataclass(frozen=True)
class RuleSettings:
    """The readings RULES.md calls configurable, with their documented defaults."""

    foul_minimum: int = 0  # F1–F10 reading: points credited for a foul whose shot played nothing
    repetition_limit: int = 3  # G4: times each player may repeat the shot from one position
    repetition_tolerance_mm: float = 5.0  # G4: two positions are the same when every ball is this close
    centre_line_margin_mm: float | None = None  # S2/B1: how far the cue ball must be from x = 0
    # (None: one ball radius, i.e. the ball lies wholly in its half, "without crossing the line")
    hand_violation_is_foul: bool = True  # S2/B1/S3: playing from hand from a wrong place is a foul
    moved_tolerance_mm: float = 3.0  # T4/T5: a ball moved when its centre shifted more than this
    misplaced_tolerance_mm: float = 5.0  # T7: a standing pin this far from its spot is "set wrongly"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> "RuleSettings":
        if not data:
            return cls()
        known = {f.name: f for f in fields(cls)}
        for key, value in data.items():
            if key not in known:
                raise ContractError(f"settings.{key}", f"unknown setting (known: {', '.join(known)})")
            if key == "hand_violation_is_foul":
                if not isinstance(value, bool):
                    raise ContractError(f"settings.{key}", "must be true or false")
            elif key == "centre_line_margin_mm" and value is None:
                pass
            elif isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ContractError(f"settings.{key}", f"must be a number >= 0, got {value!r}")
        if "repetition_limit" in data and (not isinstance(data["repetition_limit"], int) or data["repetition_limit"] < 1):
            raise ContractError("settings.repetition_limit", "must be a whole number >= 1")
        if "foul_minimum" in data and not isinstance(data["foul_minimum"], int):
            raise ContractError("settings.foul_minimum", "must be a whole number")
        return cls(**data)


# ---- scoring (P1) -----------------------------------------------------------------
def pin_points(pins: list[str] | set[str] | tuple[str, ...]) -> int:
    """P1: points for a set of legally knocked pins."""
    pins = set(pins)
    plain = len(pins - {"king"})
    if "king" not in pins:
        return 2 * plain
    return {0: 5, 1: 5, 2: 7, 3: 9, 4: 30}[plain]


# ---- state ---------------------------------------------------------------------
def initial_state(
    players: list[str],
    first: str,
    target: int = 100,
    modes: dict[str, str] | None = None,
    score: dict[str, int] | None = None,
) -> dict:
    return {
        "players": list(players),
        "first": first,
        "target": target,
        "modes": dict(modes) if modes else {p: "series" for p in players},
        "score": dict(score) if score else {p: 0 for p in players},
        "turn": first,
        "shot": 0,
        # S2: the starter places the cue ball in either half.
        "ball_in_hand": {"player": first, "zone": "either", "rule": "S2"},
        "leaning": {},
        "repetition": {},
        "game_over": False,
        "winner": None,
    }


def other_player(state: dict, player: str) -> str:
    a, b = state["players"]
    return b if player == a else a


def _dist(p: list[float] | tuple[float, float], q: list[float] | tuple[float, float]) -> float:
    return ((p[0] - q[0]) ** 2 + (p[1] - q[1]) ** 2) ** 0.5


def same_position(p: dict | None, q: dict | None, tolerance: float) -> bool:
    """G4: two ball positions are the same when the cue ball is within ``tolerance``
    of its place and the two whites are, as an unordered pair (they are alike)."""
    if p is None or q is None:
        return False
    if _dist(p["cue"], q["cue"]) > tolerance:
        return False
    straight = _dist(p["white1"], q["white1"]) <= tolerance and _dist(p["white2"], q["white2"]) <= tolerance
    crossed = _dist(p["white1"], q["white2"]) <= tolerance and _dist(p["white2"], q["white1"]) <= tolerance
    return straight or crossed


def _position(balls: dict) -> dict | None:
    if any(balls[b] is None for b in BALL_IDS):
        return None
    return {b: list(balls[b]) for b in BALL_IDS}


class _Rules:
    """An ordered set of rule ids."""

    def __init__(self) -> None:
        self.ids: list[str] = []

    def add(self, *ids: str) -> None:
        for i in ids:
            if i not in self.ids:
                self.ids.append(i)


def _zone_ok(zone: str, cue: list[float], table: TableSpec, margin: float) -> bool:
    x, y = cue
    if not table.on_cloth(x, y, margin=table.ball_radius - 1e-9):
        return False
    if zone == "anywhere":
        return True
    if zone == "head_half":
        return x <= -margin
    if zone == "foot_half":
        return x >= margin
    return abs(x) >= margin  # either half, not across the centre line


def _hand_zone(whites: list[list[float] | tuple[float, float]]) -> str:
    """B1: with both whites in one half the cue ball is played from the other half."""
    if all(w[0] < 0 for w in whites):
        return "foot_half"
    if all(w[0] > 0 for w in whites):
        return "head_half"
    return "either"


def _felled_before(events: list[dict], pin: str) -> bool:
    """The pin's first knock among ``events`` is an established ``pin_hit`` and no doubt
    about its fall came before (a doubtful fall is F8 whatever happens next)."""
    mine = [e for e in events if e["type"] in ("pin_hit", "doubt") and e["pin"] == pin]
    return bool(mine) and mine[0]["type"] == "pin_hit" and \
        not any(e["type"] == "doubt" and not e.get("lying") for e in mine)


def decide(record: dict, state: dict, table: TableSpec, settings: RuleSettings) -> tuple[dict, dict]:
    """Decide one validated shot record (see record.validate_shot) against ``state``.

    Returns ``(decision, new_state)``; ``state`` is not modified. Raises
    ContractError when the record is valid in form but impossible in substance
    (e.g. a pin knocked by a pin nothing set moving).
    """
    if state["game_over"]:
        raise ContractError("shot", "the game is over; no more shots can be played")
    new = copy.deepcopy(state)
    shooter = record["shooter"]
    partner = other_player(state, shooter)
    shot_no = state["shot"] + 1
    rules = _Rules()
    fouls: list[dict] = []
    reasons: list[str] = []
    calls = [c["type"] for c in record["calls"]]
    call_set = set(calls)
    before_pins, after_pins = record["before"]["pins"], record["after"]["pins"]
    before_balls, after_balls = record["before"]["balls"], record["after"]["balls"]
    events = ev_.with_implied_hits(record, settings.moved_tolerance_mm)
    raw_events = record["events"]
    margin = table.ball_radius if settings.centre_line_margin_mm is None else settings.centre_line_margin_mm

    def foul(rule: str, detail: str) -> None:
        fouls.append({"rule": rule, "detail": detail})
        rules.add(rule)

    if state["shot"] == 0:
        rules.add("S1")  # the match file's `first` is the player the lots chose

    # ---- playing from hand (S2, B1, B4) ----
    bih = state.get("ball_in_hand")
    if bih and bih["player"] == shooter:
        rule = bih.get("rule", "B1")
        rules.add(rule)
        zone = bih["zone"]
        if before_balls["cue"] is None:
            # the record does not say where the cue ball was placed (not seen before the
            # strike): nothing to hold against the player, and the referee is told
            reasons.append("playing from hand: where the cue ball was placed is not in the record, not checked")
        elif not _zone_ok(zone, before_balls["cue"], table, margin):
            where = {"head_half": "the head half", "foot_half": "the foot half", "either": "one half", "anywhere": "the cloth"}
            text = (
                f"the cue ball was placed at x = {before_balls['cue'][0]:.0f} mm, not wholly in {where[zone]}"
                if zone != "anywhere"
                else "the cue ball was placed off the cloth"
            )
            if settings.hand_violation_is_foul:
                foul(rule, f"playing from hand: {text}")
            else:
                reasons.append(f"playing from hand: {text} (not penalised: hand_violation_is_foul is off)")
        if "stance" in call_set:
            foul("S3", "playing from hand, the player's body went beyond the long cushions' extension")
    elif "stance" in call_set:
        foul("S3", "the player's stance broke S3 (called by the operator)")

    # ---- T5: a pin left leaning that fell before this shot counts for its causer ----
    credits: list[dict] = []
    late_groups: dict[tuple[str, int], list[str]] = {}
    late_orig: dict[tuple[str, int], list[str]] = {}
    for pin, info in sorted(state["leaning"].items()):
        if before_pins[pin]["state"] != "leaning":
            key = (info["beneficiary"], info["shot"])
            late_groups.setdefault(key, []).append(pin)
            late_orig[key] = info["orig_pins"]
            new["leaning"].pop(pin)
    late_pins: list[str] = []
    for (who, shot), pins in late_groups.items():
        pts = pin_points(late_orig[(who, shot)] + pins) - pin_points(late_orig[(who, shot)])
        late_pins += pins
        rules.add("T5")
        credits.append({"player": who, "points": pts, "rules": ["T5"], "pins": pins, "from_shot": shot})
        reasons.append(
            f"{', '.join(pins)} left leaning after shot {shot} fell before this shot: {pts} points to {who} (T5)"
        )

    # ---- F7: a pin not set at the strike ----
    not_set = [p for p in PIN_IDS if before_pins[p]["state"] in DOWN_STATES]
    if not_set:
        foul("F7", f"shot made while pin {', '.join(not_set)} was not set")
    elif "pin_not_set" in call_set:
        foul("F7", "shot made while a pin was not yet set or being set (called by the operator)")

    # ---- which pins fell in this shot, and who knocked them (L1–L5, F4, F5, F8, T5, T6) ----
    doubts: dict[str, dict] = {}
    for i, e in enumerate(raw_events):
        if e["type"] != "doubt":
            continue
        if e.get("lying") and _felled_before(raw_events[:i], e["pin"]):
            # a pin lying where an established knock felled it, pushed again by one of
            # several balls: who knocked it down is not in doubt (F8: "which ball knocked
            # the pin down", source text), and its fall stays with that knock
            reasons.append(f"pin {e['pin']}, already down, pushed again by "
                           f"{' or '.join(e.get('candidates') or []) or 'a ball'}: no doubt about its fall (F8)")
            continue
        doubts.setdefault(e["pin"], e)
    knocked = [p for p in PIN_IDS if after_pins[p]["state"] in DOWN_STATES and before_pins[p]["state"] not in DOWN_STATES]
    first_touch = {}
    for i, e in enumerate(events):
        if e["type"] in ("pin_hit", "doubt") and e["pin"] not in first_touch:
            first_touch[e["pin"]] = i
    knocked.sort(key=lambda p: (first_touch.get(p, len(events)), PIN_IDS.index(p)))
    counted: list[str] = []
    put_back: list[str] = []  # T5: fell during this shot without being hit
    legal_knocks: dict[str, str] = {}
    for pin in knocked:
        knock = ev_.knock_of(events, pin)
        if pin in doubts:
            counted.append(pin)
            cands = doubts[pin].get("candidates") or []
            foul("F8", f"pin {pin}: doubtful knocker ({' or '.join(cands) if cands else 'unknown'})")
            continue
        if knock.root is None:
            if before_pins[pin]["state"] == "leaning":
                put_back.append(pin)
                rules.add("T5")
                reasons.append(f"pin {pin} fell during the shot without being hit: put back, no points (T5)")
                continue
            raise ContractError("events", f"pin {pin} is down but its pin_hit chain reaches no ball")
        counted.append(pin)
        if len(knock.chain) > 1:
            rules.add("L5")
        via = "" if len(knock.chain) == 1 else " via pin " + " and pin ".join(knock.chain[1:])
        if after_pins[pin]["state"] == "rail_down":
            rules.add("T3")
        if knock.root == "cue":
            support = before_pins[pin].get("on") if before_pins[pin]["state"] == "leaning" else None
            if support == "cue" or any(
                before_pins[q]["state"] == "leaning" and before_pins[q].get("on") == "cue" for q in knock.chain
            ):
                continue  # T6 below covers pins that were resting on the cue ball
            foul("F5", f"pin {pin} knocked by the cue ball{via}")
            continue
        leg = ev_.white_legality(events, knock.root)
        if leg is None or not leg.legal:
            why = leg.why_direct if leg else f"{knock.root} never touched a pin"
            foul("F4", f"pin {pin} knocked directly by {knock.root}{via}: {why}")
            continue
        rules.add(*leg.ways)
        legal_knocks[pin] = knock.root
        reasons.append(f"pin {pin} knocked legally by {knock.root}{via} ({', '.join(leg.ways)})")
    for pin, e in doubts.items():
        if pin not in knocked:
            cands = e.get("candidates") or []
            foul("F8", f"pin {pin}: doubtful knock ({' or '.join(cands) if cands else 'unknown'})")

    on_cue = [p for p in PIN_IDS if before_pins[p]["state"] == "leaning" and before_pins[p].get("on") == "cue"]
    if on_cue:
        foul("T6", f"pin {', '.join(on_cue)} rested on the cue ball: the shot's points are penalty points")

    # ---- fouls of the shot itself ----
    struck = record["struck"]
    carom_at = ev_.carom_index(raw_events)
    carom = carom_at is not None
    if struck != "cue":
        foul("F6", f"the player struck {struck} instead of the cue ball")
    elif not ev_.contacts(raw_events, "cue"):
        foul("F1", "miss: the cue ball touched no ball")
    cue_off = any(e["type"] == "off_table" and e["ball"] == "cue" for e in raw_events)
    if cue_off:
        if "bystander" in call_set:
            rules.add("B3")
            reasons.append("the cue ball left the table and fell back off a bystander: no foul, the turn passes (B3)")
        else:
            foul("F2", "the cue ball left the table")
            rules.add("B1")
    restore = False
    if "touch" in call_set:
        touch = next(c for c in record["calls"] if c["type"] == "touch")
        played = any(e["type"] == "strike" for e in raw_events)
        restore = played and touch.get("restore", True)
        foul("F3", "the player touched a ball with cue, rest, hand or clothing" + (" and then played" if restore else ""))
        if restore:
            rules.add("B6")
    penalty = 0
    if "cue_side" in call_set:
        foul("F9", f"hit with the side or the butt of the cue: {F9_PENALTY} penalty points")
        penalty += F9_PENALTY
    if "self_stop" in call_set:
        foul("F10", f"the player deflected or stopped the rolling cue ball: {F10_PENALTY} penalty points")
        penalty += F10_PENALTY

    # ---- points (P1–P3) ----
    is_foul = bool(fouls)
    if counted:
        played_points = pin_points(counted)
        rules.add("P1")
    elif carom:
        played_points = CAROM_POINTS
        rules.add("P2")
    else:
        played_points = 0
    bare_carom = carom and not counted and not is_foul
    b5 = "partner_stop_white" in call_set
    if is_foul:
        rules.add("P3")
        points = max(played_points + penalty, settings.foul_minimum)
        beneficiary = partner
        main_rules = ["P3"] + [f["rule"] for f in fouls]
    else:
        points = played_points + (B5_AWARD if b5 else 0)
        beneficiary = shooter
        main_rules = (["P1"] if counted else (["P2"] if carom else [])) + (["B5"] if b5 else [])
    main_credit = {"player": beneficiary, "points": points, "rules": list(dict.fromkeys(main_rules))}
    credits.insert(len(credits), main_credit)
    if b5:
        rules.add("B5")
        stopped = next(c["ball"] for c in record["calls"] if c["type"] == "partner_stop_white")
        if is_foul:
            credits.append({"player": shooter, "points": B5_AWARD, "rules": ["B5"]})
        reasons.append(f"the partner stopped the rolling {stopped}: {B5_AWARD} points to {shooter}, the balls stay (B5)")

    for c in credits:
        new["score"][c["player"]] += c["points"]

    # ---- whose turn next (M1–M3, P2, B2–B5) ----
    modes = state["modes"]
    mode_rule = "M3" if len(set(modes.values())) > 1 else ("M1" if modes[shooter] == "series" else "M2")
    white_off = [b for b in WHITE_IDS if after_balls[b] is None]
    if b5:
        nxt = shooter
    elif is_foul or bare_carom or white_off or ("bystander" in call_set and cue_off):
        nxt = partner
        if white_off:
            rules.add("B2")
        if bare_carom:
            reasons.append("a carom with no pin knocked: 3 points and the turn passes (P2)")
    elif modes[shooter] == "series":
        nxt = shooter if counted else partner
        rules.add(mode_rule)
    else:
        nxt = partner
        rules.add(mode_rule)
    if "partner_stop_cue" in call_set:
        rules.add("B4")
        reasons.append("the partner stopped the cue ball: the player places it anywhere (B4)")

    # ---- end of the game (G1–G4) ----
    target = state["target"]
    winner = None
    ends = []  # (player, rule) in the order the credits were made
    for c in credits:
        if c is main_credit:
            if is_foul:
                ends.append(partner)
            elif points > 0 and not bare_carom:
                ends.append(shooter)
        elif c["points"] > 0:
            ends.append(c["player"])
    for who in ends:
        if new["score"][who] >= target:
            winner = who
            rules.add("G1", "G2")
            break
    if winner is None and bare_carom and new["score"][shooter] >= target:
        rules.add("G3")
        reasons.append(f"{shooter} reached {target} with a bare carom, which does not end the game (G3)")

    # G4: repetition of the same position.
    credited_any = any(c["points"] > 0 for c in credits)
    pos_before, pos_after = _position(before_balls), _position(after_balls)
    rep = new["repetition"]
    tol = settings.repetition_tolerance_mm
    if credited_any or is_foul or pos_before is None:
        rep.clear()
    else:
        mine = rep.get(shooter)
        if mine and same_position(mine["pos"], pos_before, tol):
            mine["n"] += 1
        else:
            rep[shooter] = {"pos": pos_before, "n": 1}
        other = rep.get(partner)
        if (
            winner is None
            and other
            and all(rep.get(p, {}).get("n", 0) >= settings.repetition_limit for p in state["players"])
            and same_position(other["pos"], pos_after, tol)
        ):
            winner = "draw"
            rules.add("G4")
            reasons.append(
                f"the same position was played {settings.repetition_limit} times by each player without change: draw (G4)"
            )
    game_over = winner is not None

    # ---- respotting (R0–Rz, B2, B6, T1–T7) ----
    respot: list[Placement] = []
    balls_now = {b: (tuple(before_balls[b]) if restore else (tuple(after_balls[b]) if after_balls[b] else None)) for b in BALL_IDS}
    if restore:
        for b in BALL_IDS:
            if after_balls[b] is None and before_balls[b] is not None:
                respot.append(Placement(b, tuple(before_balls[b]), "B6"))
    staying = {p: tuple(after_pins[p]["at"]) for p in PIN_IDS if after_pins[p]["state"] in ("standing", "leaning")}
    rail = [p for p in PIN_IDS if after_pins[p]["state"] == "rail_standing"]
    for b in WHITE_IDS:
        if balls_now[b] is None:
            pl = respot_white(table, b, balls_now, staying)
            balls_now[b] = pl.at
            respot.append(pl)
    if rail:
        layout = Layout(table, balls_now, staying)
        for p in rail:
            pl = rail_pin_placement(table, p, tuple(after_pins[p]["at"]), layout)
            staying[p] = pl.at
            respot.append(pl)
        rules.add("T2")
    to_place = [p for p in PIN_IDS if after_pins[p]["state"] in DOWN_STATES]
    if to_place:
        cue_xy = balls_now["cue"] if balls_now["cue"] is not None else tuple(before_balls["cue"])
        placements, r_rules = respot_pins(table, to_place, balls_now, staying, cue_xy)
        respot += placements
        rules.add(*[r for r in r_rules if r != "spot"])
    # T1/T4/T6/T7: pins that stay where they are.
    for p in PIN_IDS:
        a = after_pins[p]
        hit = any(e["type"] == "pin_hit" and e["pin"] == p for e in raw_events)
        if a["state"] == "standing" and hit:
            rules.add("T1")
        if a["state"] == "standing" and not hit and before_pins[p]["state"] == "standing":
            if _dist(before_pins[p]["at"], table.pin_spot(p)) > settings.misplaced_tolerance_mm:
                rules.add("T7")
        if a["state"] == "leaning":
            rules.add("T4")
            if a.get("on") == "cue":
                rules.add("T6")
            if before_pins[p]["state"] != "leaning" or hit or p not in new["leaning"]:
                new["leaning"][p] = {
                    "on": a["on"],
                    "causer": shooter,
                    "beneficiary": partner if is_foul else shooter,
                    "orig_pins": list(counted),
                    "shot": shot_no,
                }
        elif p in new["leaning"]:
            new["leaning"].pop(p)

    # ---- ball in hand next ----
    ball_in_hand = None
    if not game_over and not restore:
        if "partner_stop_cue" in call_set:
            ball_in_hand = {"player": shooter, "zone": "anywhere"}
        elif cue_off and "bystander" not in call_set:
            whites = [balls_now[b] for b in WHITE_IDS]
            ball_in_hand = {"player": partner, "zone": _hand_zone(whites)}
    if ball_in_hand:
        new["ball_in_hand"] = dict(ball_in_hand, rule="B4" if ball_in_hand["zone"] == "anywhere" else "B1")
    else:
        new["ball_in_hand"] = None

    new["shot"] = shot_no
    new["turn"] = None if game_over else nxt
    new["game_over"] = game_over
    new["winner"] = winner
    if game_over:
        new["ball_in_hand"] = None

    if restore:
        reasons.append("the balls are put back where they were before the shot (B6)")
    decision = {
        "shot": shot_no,
        "shooter": shooter,
        "foul": is_foul,
        "fouls": fouls,
        "carom": carom,
        "pins_down": counted,
        "points": points,
        "credited_to": beneficiary if points > 0 else None,
        "next": None if game_over else nxt,
        "ball_in_hand": ball_in_hand,
        "restore": restore,
        "respot": [pl.to_dict() for pl in respot],
        "score": dict(new["score"]),
        "game_over": game_over,
        "winner": winner,
        "rules": rules.ids,
        # Additions (allowed by the contract):
        "credits": [c for c in credits if c["points"] > 0],
        "put_back": put_back,
        "late_pins": late_pins,
        "reasons": reasons,
    }
    return decision, new
