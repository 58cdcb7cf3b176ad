"""The one table specification shared by the adjudicator, the simulator, calibration and tracking.

Pure Python (the adjudicator needs no numpy). Millimetres in the table frame of
RULES.md E3: origin at the centre spot, ``x`` along the long axis towards the foot
cushion, ``y`` across towards the left cushion (seen from the head), ``z`` up from
the cloth. Cushion coordinates are those of the cushion *noses* (the playing area).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

BALL_IDS = ("cue", "white1", "white2")
PIN_IDS = ("king", "head", "foot", "left", "right")
PLAIN_PIN_IDS = ("head", "foot", "left", "right")
CUSHION_IDS = ("head", "foot", "left", "right")

# Unit vectors (in units of the pin spacing D) from the king to each pin spot (E2).
PIN_DIRECTIONS: dict[str, tuple[int, int]] = {
    "king": (0, 0),
    "head": (-1, 0),
    "foot": (1, 0),
    "left": (0, 1),
    "right": (0, -1),
}


@dataclass(frozen=True)
class TableSpec:
    """Sizes of the table, balls and pins (RULES.md E1–E3), all in millimetres.

    ``pin_spacing`` defaults to the E2 reading (ball diameter + plain pin base,
    centre to centre, so a ball just passes between neighbouring pins).
    """

    length: float = 2840.0  # playing area, cushion nose to cushion nose (x)
    width: float = 1420.0  # playing area (y)
    ball_diameter: float = 61.5
    ball_mass_kg: float = 0.21
    pin_height: float = 70.0
    pin_base_diameter: float = 12.0
    pin_max_diameter: float = 20.0  # widest part of a plain pin, what the camera sees from above
    king_height: float = 90.0
    king_base_diameter: float = 14.0
    king_max_diameter: float = 24.0
    pin_spacing_override: float | None = None
    cushion_width: float = 50.0  # rubber, nose to rail (seen from above)
    cushion_nose_height: float = 37.0  # above the cloth (carom: ~60 % of the ball diameter)
    rail_width: float = 120.0  # wooden rail outside the cushion, carries the diamonds
    rail_height: float = 45.0
    diamonds_long: int = 7  # diamonds per long rail (at each eighth)
    diamonds_short: int = 3  # diamonds per short rail (at each quarter)
    spot_mark_diameter: float = 10.0  # printed marks on the cloth (spots and pin places)
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    # ---- derived geometry -------------------------------------------------
    @property
    def ball_radius(self) -> float:
        return self.ball_diameter / 2.0

    @property
    def pin_spacing(self) -> float:
        """``D`` of RULES.md E2, centre to centre."""
        if self.pin_spacing_override is not None:
            return float(self.pin_spacing_override)
        return self.ball_diameter + self.pin_base_diameter

    @property
    def half_length(self) -> float:
        return self.length / 2.0

    @property
    def half_width(self) -> float:
        return self.width / 2.0

    def pin_spot(self, pin: str) -> tuple[float, float]:
        """The pin's own place in the cross (E2)."""
        dx, dy = PIN_DIRECTIONS[pin]
        d = self.pin_spacing
        return (dx * d, dy * d)

    def pin_spots(self) -> dict[str, tuple[float, float]]:
        return {p: self.pin_spot(p) for p in PIN_IDS}

    def pin_base_radius(self, pin: str) -> float:
        return (self.king_base_diameter if pin == "king" else self.pin_base_diameter) / 2.0

    def pin_top_radius(self, pin: str) -> float:
        """Radius of the pin's widest part (its silhouette from above when standing)."""
        return (self.king_max_diameter if pin == "king" else self.pin_max_diameter) / 2.0

    def pin_height_of(self, pin: str) -> float:
        return self.king_height if pin == "king" else self.pin_height

    def ball_spot(self, n: int) -> tuple[float, float]:
        """Spot 1, 2 or 3 on the long axis (E3)."""
        if n not in (1, 2, 3):
            raise ValueError(f"spot must be 1, 2 or 3, got {n!r}")
        return ((n - 2) * self.length / 4.0, 0.0)

    def cushion_line(self, cushion: str) -> tuple[str, float]:
        """(axis, coordinate) of a cushion nose: ``head`` is x = -L/2, ``left`` is y = +W/2."""
        return {
            "head": ("x", -self.half_length),
            "foot": ("x", self.half_length),
            "left": ("y", self.half_width),
            "right": ("y", -self.half_width),
        }[cushion]

    def on_cloth(self, x: float, y: float, margin: float = 0.0) -> bool:
        """True when a point lies inside the playing area shrunk by ``margin``."""
        return abs(x) <= self.half_length - margin and abs(y) <= self.half_width - margin

    def diamonds(self) -> list[tuple[float, float]]:
        """Centres of the rail diamonds (on the rail, midway across its width)."""
        off = self.cushion_width + self.rail_width / 2.0
        pts: list[tuple[float, float]] = []
        for i in range(1, self.diamonds_long + 1):
            x = -self.half_length + i * self.length / (self.diamonds_long + 1)
            pts += [(x, self.half_width + off), (x, -self.half_width - off)]
        for j in range(1, self.diamonds_short + 1):
            y = -self.half_width + j * self.width / (self.diamonds_short + 1)
            pts += [(-self.half_length - off, y), (self.half_length + off, y)]
        return pts

    # ---- serialisation -----------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        if not d["extra"]:
            d.pop("extra")
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "TableSpec":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"table spec: unknown field(s) {', '.join(unknown)}")
        return cls(**data)


DEFAULT_TABLE = TableSpec()
