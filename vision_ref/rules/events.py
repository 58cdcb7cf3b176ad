"""Pure functions over a validated shot's event log (the pooltool habit).

Events are ordered by ``t`` and, at equal ``t``, by their place in the list, so
"before" always means "earlier in the list". Every function takes the event list
(or a validated record) and returns plain values; nothing here mutates its input.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from vision_ref.rules.record import DOWN_STATES, WHITE_IDS
from vision_ref.rules.table import BALL_IDS, PIN_IDS

Event = dict


# ---- filters ----------------------------------------------------------------
def by_type(events: list[Event], *kinds: str) -> list[tuple[int, Event]]:
    """(index, event) pairs whose type is one of ``kinds``."""
    return [(i, ev) for i, ev in enumerate(events) if ev["type"] in kinds]


def involves(ev: Event, ball: str) -> bool:
    """True when the event is a movement of ``ball`` (it is a party to it)."""
    kind = ev["type"]
    if kind in ("strike", "cushion", "off_table"):
        return ev["ball"] == ball
    if kind == "ball_ball":
        return ball in (ev["a"], ev["b"])
    if kind == "pin_hit":
        return ev["by"] == ball
    return False


def by_ball(events: list[Event], ball: str) -> list[tuple[int, Event]]:
    return [(i, ev) for i, ev in enumerate(events) if involves(ev, ball)]


def before_index(pairs: list[tuple[int, Event]], index: int) -> list[tuple[int, Event]]:
    """The pairs strictly earlier than event ``index``."""
    return [(i, ev) for i, ev in pairs if i < index]


def between(pairs: list[tuple[int, Event]], start: int, end: int) -> list[tuple[int, Event]]:
    """The pairs strictly after ``start`` and strictly before ``end``."""
    return [(i, ev) for i, ev in pairs if start < i < end]


def contacts(events: list[Event], ball: str, other: str | None = None) -> list[tuple[int, Event]]:
    """Ball–ball contacts of ``ball`` (with ``other`` only, when given)."""
    out = []
    for i, ev in by_type(events, "ball_ball"):
        if ball in (ev["a"], ev["b"]):
            partner = ev["b"] if ev["a"] == ball else ev["a"]
            if other is None or partner == other:
                out.append((i, ev))
    return out


def partner_of(ev: Event, ball: str) -> str:
    return ev["b"] if ev["a"] == ball else ev["a"]


def cushions(events: list[Event], ball: str) -> list[tuple[int, Event]]:
    return [(i, ev) for i, ev in by_type(events, "cushion") if ev["ball"] == ball]


def first_index(pairs: list[tuple[int, Event]]) -> int | None:
    return pairs[0][0] if pairs else None


# ---- carom --------------------------------------------------------------------
def carom_index(events: list[Event]) -> int | None:
    """Index of the event completing the carom (the cue ball has touched both whites)."""
    seen: set[str] = set()
    for i, ev in contacts(events, "cue"):
        other = partner_of(ev, "cue")
        if other in WHITE_IDS:
            seen.add(other)
            if len(seen) == 2:
                return i
    return None


# ---- pin-hit chains (L5) ------------------------------------------------------
@dataclass(frozen=True)
class Knock:
    """Why a pin fell: the chain of pins back to the ball at its root (L5)."""

    pin: str
    root: str | None  # the ball at the root, or None when no ball set it moving
    root_index: int | None  # index of the pin_hit by the root ball that started the chain
    chain: tuple[str, ...]  # pins from this one back to the one the ball touched
    implied: bool = False  # the chain passes through a leaning pin's support


def pin_hits(events: list[Event], pin: str) -> list[tuple[int, Event]]:
    return [(i, ev) for i, ev in by_type(events, "pin_hit") if ev["pin"] == pin]


def ball_first_move(record: dict, ball: str, tolerance: float) -> int | None:
    """Index of the first event moving ``ball``; -1 when it moved without any event
    naming it (seen only in before/after); None when it did not move."""
    moves = by_ball(record["events"], ball)
    if moves:
        return moves[0][0]
    b, a = record["before"]["balls"][ball], record["after"]["balls"][ball]
    if b is not None and a is not None and ((b[0] - a[0]) ** 2 + (b[1] - a[1]) ** 2) ** 0.5 > tolerance:
        return -1
    return None


def with_implied_hits(record: dict, tolerance: float) -> list[Event]:
    """The event list plus a synthetic ``pin_hit`` for each pin that was leaning in
    ``before`` and fell without being hit, when its support moved (T4/T5): the support
    set it moving. The synthetic events carry ``"implied": True``."""
    events = [dict(ev) for ev in record["events"]]
    before, after = record["before"]["pins"], record["after"]["pins"]
    changed = True
    while changed:
        changed = False
        for pin in PIN_IDS:
            if before[pin]["state"] != "leaning" or after[pin]["state"] not in DOWN_STATES:
                continue
            if any(ev["type"] == "pin_hit" and ev["pin"] == pin for ev in events):
                continue
            support = before[pin]["on"]
            if support in BALL_IDS:
                start = ball_first_move({**record, "events": events}, support, tolerance)
                if start is None:
                    continue
                t = events[start]["t"] if start >= 0 else (events[0]["t"] if events else 0.0)
                pos = start + 1 if start >= 0 else 0
            else:
                hits = pin_hits(events, support)
                if not hits:
                    continue
                pos = hits[0][0] + 1
                t = hits[0][1]["t"]
            events.insert(pos, {"t": t, "type": "pin_hit", "pin": pin, "by": support, "implied": True})
            changed = True
    return events


def knock_of(events: list[Event], pin: str, at_index: int | None = None) -> Knock:
    """What knocked ``pin``: follow its first pin_hit (or, with ``at_index``, the latest
    pin_hit on it before that index) back through pins to a ball."""
    chain: list[str] = [pin]
    implied = False
    current = pin
    limit = at_index
    for _ in range(len(events) + 1):
        hits = pin_hits(events, current)
        if limit is None:
            chosen = hits[0] if hits else None
        else:
            earlier = [h for h in hits if h[0] < limit]
            chosen = earlier[-1] if earlier else None
        if chosen is None:
            return Knock(pin, None, None, tuple(chain), implied)
        idx, ev = chosen
        implied = implied or bool(ev.get("implied"))
        if ev["by"] in BALL_IDS:
            return Knock(pin, ev["by"], idx, tuple(chain), implied)
        # No identity cycle check: a pin may be hit again later (head -> foot -> head),
        # and following only hits strictly earlier than the last one always ends.
        current = ev["by"]
        chain.append(current)
        limit = idx
    return Knock(pin, None, None, tuple(chain), implied)


# ---- legality of a white's knock (L1–L4) ----------------------------------------
@dataclass
class WhiteLegality:
    ball: str
    first_pin_index: int
    ways: list[str] = field(default_factory=list)  # L ids that held before the first pin touch
    why_direct: str = ""

    @property
    def legal(self) -> bool:
        return bool(self.ways)


def white_legality(events: list[Event], white: str) -> WhiteLegality | None:
    """Which of L1–L4 held before ``white`` first touched a pin (None: it touched none)."""
    first_pin = [i for i, ev in by_type(events, "pin_hit") if ev["by"] == white]
    if not first_pin:
        return None
    tw = first_pin[0]
    result = WhiteLegality(white, tw)
    own = before_index(contacts(events, white), tw)
    cue_cushions = cushions(events, "cue")
    carom = carom_index(events)

    moved_at = own[0][0] if own else None
    # L1: the white came off a cushion after the cue ball struck it.
    cue_hits = before_index(contacts(events, white, "cue"), tw)
    if cue_hits and between(cushions(events, white), cue_hits[0][0], tw):
        result.ways.append("L1")
    # L2: the carom was completed before the white reached its first pin.
    if carom is not None and carom < tw:
        result.ways.append("L2")
    # L3: the cue ball struck the white after touching a cushion.
    if any(before_index(cue_cushions, i) for i, _ in cue_hits):
        result.ways.append("L3")
    # L4: the white came off a ball: set moving by the other white, or it touched
    # another ball after being struck and before the pins.
    if own:
        first_partner = partner_of(own[0][1], white)
        if first_partner in WHITE_IDS or len(own) >= 2:
            result.ways.append("L4")
    if not result.ways:
        if moved_at is None:
            result.why_direct = f"{white} reached a pin without being struck by any ball"
        else:
            result.why_direct = (
                f"{white} went straight from the cue ball to the pins (no cushion, no other ball, no carom first)"
            )
    return result
