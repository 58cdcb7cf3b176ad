"""Where knocked pins and balls off the table go back (RULES.md R0–Rz, B2, T2).

All geometry is in millimetres in the table frame (E3) and comes from one
:class:`TableSpec`. A pin's own spot is *occupied* when a ball's footprint overlaps
the pin's base there: ``distance < ball radius + pin base radius``. Pins that stay
on the table (standing, leaning, placed earlier in the same respot) are obstacles
too: a new pin is not put where its base would overlap theirs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from vision_ref.rules.table import PIN_DIRECTIONS, PIN_IDS, TableSpec

Point = tuple[float, float]
LONG_PINS = ("head", "foot")
SHORT_PINS = ("left", "right")
PLAIN_ORDER = ("head", "foot", "left", "right")


@dataclass(frozen=True)
class Placement:
    piece: str
    at: Point
    rule: str

    def to_dict(self) -> dict:
        return {"piece": self.piece, "at": [round(self.at[0], 2) + 0.0, round(self.at[1], 2) + 0.0], "rule": self.rule}


def _sign(v: float) -> int:
    # A cue ball exactly on an axis counts as being on the positive side (documented tie-break).
    return -1 if v < 0 else 1


def _dist(a: Point, b: Point) -> float:
    return math.hypot(a[0] - b[0], a[1] - b[1])


class Layout:
    """The table as the respot sees it: balls, pins that stay, pins already placed."""

    def __init__(self, table: TableSpec, balls: dict[str, Point | None], staying_pins: dict[str, Point]):
        self.table = table
        self.balls = {b: p for b, p in balls.items() if p is not None}
        self.pins: dict[str, Point] = dict(staying_pins)

    def ball_on(self, pin: str, at: Point) -> bool:
        """True when a ball's footprint overlaps ``pin``'s base placed at ``at``."""
        reach = self.table.ball_radius + self.table.pin_base_radius(pin)
        return any(_dist(at, b) < reach for b in self.balls.values())

    def pin_on(self, pin: str, at: Point) -> bool:
        for other, p in self.pins.items():
            if other == pin:
                continue
            # Bodies, not bases: two pins side by side must not touch at their widest.
            if _dist(at, p) < self.table.pin_top_radius(pin) + self.table.pin_top_radius(other):
                return True
        return False

    def free(self, pin: str, at: Point) -> bool:
        t = self.table
        on_cloth = t.on_cloth(at[0], at[1], margin=t.pin_top_radius(pin))
        return on_cloth and not self.ball_on(pin, at) and not self.pin_on(pin, at)

    def place(self, pin: str, at: Point) -> None:
        self.pins[pin] = at


def cue_side(cue_xy: Point | None) -> tuple[int, int]:
    """(c, cy): the signs of the cue ball's x and y (its end of the table and its side)."""
    if cue_xy is None:
        return 1, 1
    return _sign(cue_xy[0]), _sign(cue_xy[1])


def _row(layout: Layout, pins: list[str], origin: Point, direction: Point, first_step: int, rule: str) -> list[Placement]:
    """Place ``pins`` in order along ``origin + k*s*direction`` for k = first_step, …

    A candidate that is occupied or off the cloth is skipped (Rz: continue the same row
    outward); if the row runs off the cloth the rest go in the mirror row.
    """
    s = layout.table.pin_spacing / 2.0
    out: list[Placement] = []
    remaining = list(pins)
    for mirror in (1, -1):
        dx, dy = direction[0] * mirror, direction[1] * mirror
        ox, oy = origin[0] * mirror, origin[1] * mirror
        k = first_step
        shifted = mirror == -1
        while remaining:
            at = (ox + k * s * dx, oy + k * s * dy)
            if not layout.table.on_cloth(at[0], at[1]):
                break
            pin = remaining[0]
            if layout.free(pin, at):
                layout.place(pin, at)
                out.append(Placement(pin, at, "Rz" if shifted else rule))
                remaining.pop(0)
            else:
                shifted = True
            k += 1
        if not remaining:
            break
    if remaining:
        # Both rows ran off the cloth: cannot happen on a real table; place on free cloth.
        for pin in remaining:
            at = _nearest_free(layout, pin, origin)
            layout.place(pin, at)
            out.append(Placement(pin, at, "Rz"))
    return out


def _nearest_free(layout: Layout, pin: str, start: Point) -> Point:
    s = layout.table.pin_spacing / 2.0
    for ring in range(1, 400):
        for j in range(8 * ring):
            ang = 2 * math.pi * j / (8 * ring)
            at = (start[0] + ring * s * math.cos(ang), start[1] + ring * s * math.sin(ang))
            if layout.free(pin, at):
                return at
    return start


def _single(layout: Layout, pin: str, at: Point, direction: Point, rule: str) -> list[Placement]:
    """One pin at a computed place; if it is taken, continue outward along ``direction``."""
    s = layout.table.pin_spacing / 2.0
    if abs(direction[0]) + abs(direction[1]) == 0:
        direction = (1.0, 0.0)
    k0 = round((at[0] * direction[0] + at[1] * direction[1]) / s)
    origin = (at[0] - k0 * s * direction[0], at[1] - k0 * s * direction[1])
    return _row(layout, [pin], origin, direction, k0, rule)


def classify(occupied: set[str]) -> str:
    """The R case for the set of knocked pins whose own spots are occupied."""
    king = "king" in occupied
    plain = occupied - {"king"}
    longs, shorts = plain & set(LONG_PINS), plain & set(SHORT_PINS)
    n = len(plain)
    if not occupied:
        return "spot"
    if king and n == 0:
        return "Ra"
    if not king and n == 1:
        return "Rb"
    if king and n == 1:
        return "Rc"
    if not king and n == 2:
        if len(longs) == 2:
            return "Rd"
        if len(shorts) == 2:
            return "Re"
        return "Rf"
    if king and n == 2:
        if len(shorts) == 2:
            return "Rg"
        if len(longs) == 2:
            return "Rk"
        return "Rh"
    if not king and n == 3:
        return "Ri"
    return "Rz"


def _dir(pin: str) -> Point:
    dx, dy = PIN_DIRECTIONS[pin]
    return (float(dx), float(dy))


def _neg(v: Point) -> Point:
    return (-v[0], -v[1])


def respot_pins(
    table: TableSpec,
    to_place: list[str],
    balls: dict[str, Point | None],
    staying_pins: dict[str, Point],
    cue_xy: Point | None,
) -> tuple[list[Placement], list[str]]:
    """Placements for the pins in ``to_place`` and the R rule ids used.

    ``balls``: ball centres after the shot (None: off the table); ``staying_pins``:
    centres of pins that stay where they are; ``cue_xy``: the cue ball's position
    deciding its end/side (R0, Ra, Rg, Rh, Rk).
    """
    layout = Layout(table, balls, staying_pins)
    D = table.pin_spacing
    c, cy = cue_side(cue_xy)
    spots = {p: table.pin_spot(p) for p in PIN_IDS}
    order = [p for p in PLAIN_ORDER if p in to_place] + (["king"] if "king" in to_place else [])
    occupied = {p for p in order if layout.ball_on(p, spots[p]) or layout.pin_on(p, spots[p])}
    placements: list[Placement] = []
    # Free own spots first: the rows below are built next to pins standing on their spots.
    for p in order:
        if p not in occupied:
            layout.place(p, spots[p])
            placements.append(Placement(p, spots[p], "spot"))
    case = classify(occupied)
    rules: list[str] = ["spot"] if placements else []
    if case == "spot":
        return placements, rules
    plain = [p for p in PLAIN_ORDER if p in occupied]
    king = "king" in occupied
    new: list[Placement] = []
    if case == "Ra":
        # Next to the outermost long-axis pin on the cue ball's end.
        new = _row(layout, ["king"], (0.0, 0.0), (float(c), 0.0), 3, "Ra")
    elif case == "Rb":
        p = plain[0]
        # Midway between the king and the pin opposite the fallen one, on the same line.
        opposite = _neg(_dir(p))
        new = _single(layout, p, (opposite[0] * D / 2, opposite[1] * D / 2), opposite, "Rb")
    elif case == "Rc":
        p = plain[0]
        out = _neg(_dir(p))  # towards the pin standing opposite the fallen one
        new = _row(layout, [p, "king"], (0.0, 0.0), out, 3, "Rc")
    elif case in ("Rd", "Re", "Rf"):
        # Each midway between the king and a standing pin: Rd/Re use the perpendicular
        # axis (both of the line are taken), Rf the pin opposite each (Rb applied twice).
        for p in plain:
            if case == "Rd":
                target = (0.0, D / 2) if p == "head" else (0.0, -D / 2)
                direction = (0.0, 1.0) if p == "head" else (0.0, -1.0)
            elif case == "Re":
                target = (-D / 2, 0.0) if p == "left" else (D / 2, 0.0)
                direction = (-1.0, 0.0) if p == "left" else (1.0, 0.0)
            else:
                direction = _neg(_dir(p))
                target = (direction[0] * D / 2, direction[1] * D / 2)
            new += _single(layout, p, target, direction, case)
    elif case == "Rg":
        # King and both short pins next to the long-axis pin at the end opposite the cue ball.
        new = _row(layout, plain + ["king"], (0.0, 0.0), (float(-c), 0.0), 3, "Rg")
    elif case == "Rh":
        long_p = next(p for p in plain if p in LONG_PINS)
        short_p = next(p for p in plain if p in SHORT_PINS)
        standing_long, standing_short = _neg(_dir(long_p)), _neg(_dir(short_p))
        # The standing pin nearer the short cushion opposite the cue ball's end: the
        # standing long-axis pin if it is on that end, else the short-axis pin (x = 0).
        line = standing_long if standing_long[0] * c < 0 else standing_short
        new = _row(layout, plain + ["king"], (0.0, 0.0), line, 3, "Rh")
    elif case == "Ri":
        standing = next(p for p in PLAIN_ORDER if p not in occupied)
        new = _row(layout, plain, (0.0, 0.0), _dir(standing), 3, "Ri")
    elif case == "Rk":
        new = _row(layout, plain + ["king"], (0.0, 0.0), (0.0, float(cy)), 3, "Rk")
    else:  # Rz: four or five spots taken — a row on the cue ball's end, king last.
        new = _row(layout, plain + (["king"] if king else []), (0.0, 0.0), (float(c), 0.0), 3, "Rz")
    placements += new
    rules.append(case)
    if king and case in ("Ra", "Rc", "Rg", "Rh", "Rk", "Rz"):
        rules.append("R0")
    if any(pl.rule == "Rz" for pl in new):
        rules.append("Rz")
    return placements, rules


def rail_pin_placement(table: TableSpec, pin: str, at: Point, layout: Layout | None = None) -> Placement:
    """T2: a pin standing on the rail goes on the cloth next to the nearest cushion."""
    hl, hw = table.half_length, table.half_width
    r = table.pin_top_radius(pin)
    # Nearest cushion from the pin's position (it may be reported beyond the nose).
    gaps = {"head": at[0] + hl, "foot": hl - at[0], "left": hw - at[1], "right": at[1] + hw}
    cushion = min(gaps, key=lambda k: abs(gaps[k]))
    x = min(max(at[0], -hl + r), hl - r)
    y = min(max(at[1], -hw + r), hw - r)
    if cushion == "head":
        x = -hl + r
    elif cushion == "foot":
        x = hl - r
    elif cushion == "left":
        y = hw - r
    else:
        y = -hw + r
    spot = (x, y)
    if layout is not None and not layout.free(pin, spot):
        along = (0.0, 1.0) if cushion in ("head", "foot") else (1.0, 0.0)
        s = table.pin_spacing / 2.0
        for k in range(1, 200):
            for sign in (1, -1):
                cand = (x + sign * k * s * along[0], y + sign * k * s * along[1])
                if layout.free(pin, cand):
                    spot = cand
                    break
            else:
                continue
            break
    if layout is not None:
        layout.place(pin, spot)
    return Placement(pin, spot, "T2")


def respot_white(table: TableSpec, white: str, balls: dict[str, Point | None], pins: dict[str, Point]) -> Placement:
    """B2: ``white1`` to spot 1, ``white2`` to spot 3; else the other; else the nearest
    free point on the long axis."""
    own, other = (table.ball_spot(1), table.ball_spot(3)) if white == "white1" else (table.ball_spot(3), table.ball_spot(1))
    R = table.ball_radius

    def free(at: Point) -> bool:
        if not table.on_cloth(at[0], at[1], margin=R):
            return False
        for b, p in balls.items():
            if b != white and p is not None and _dist(at, p) < 2 * R:
                return False
        for pin, p in pins.items():
            if _dist(at, p) < R + table.pin_top_radius(pin):
                return False
        return True

    if free(own):
        return Placement(white, own, "B2")
    if free(other):
        return Placement(white, other, "B2")
    step = 0.5
    for k in range(1, int(table.length / step)):
        for sign in (1, -1):
            at = (own[0] + sign * k * step, 0.0)
            if free(at):
                return Placement(white, at, "B2")
    return Placement(white, own, "B2")
