"""Colours, materials and lamp layouts of the rendered table (all RGB, 0..255 or linear 0..1).

Kept apart from the renderer so the tracking and calibration stages can read the
nominal colours (e.g. to seed colour models in tests) without importing numba.
"""

from __future__ import annotations

NAMED_COLOURS: dict[str, tuple[int, int, int]] = {
    # cue ball colours (Russian carom sets come with a red or a yellow striker)
    "red": (196, 30, 28),
    "yellow": (232, 182, 30),
    "orange": (226, 110, 24),
    # cloth colours seen on carom/pyramid tables
    "carom-blue": (28, 92, 150),
    "blue": (24, 76, 150),
    "green": (22, 112, 62),
    "teal": (18, 104, 110),
    "grey": (110, 116, 120),
    "white": (236, 234, 226),
}

DEFAULT_CLOTH_RGB = NAMED_COLOURS["carom-blue"]
DEFAULT_CUE_BALL_RGB = NAMED_COLOURS["red"]
OBJECT_BALL_RGB = (238, 234, 222)  # ivory-white object balls (both whites look alike)
PIN_BODY_RGB = (240, 238, 232)
PIN_BAND_RGB = (200, 30, 34)  # red band round a plain pin's neck
KING_BAND_RGB = (30, 60, 170)  # the king's crown/band in blue so it differs from the plain pins
KING_TOP_RGB = (218, 170, 40)  # gold crown point of the king
CUSHION_RGB_FACTOR = 0.78  # cushion cloth is the cloth colour, a little darker (it faces sideways)
RAIL_WOOD_RGB = (112, 62, 32)  # dark varnished wood
RAIL_WOOD_DARK_RGB = (72, 38, 18)
DIAMOND_RGB = (236, 232, 214)  # mother-of-pearl inlays
SPOT_MARK_RGB = (240, 240, 236)
FLOOR_RGB = (58, 52, 48)
CUE_STICK_RGB = (196, 150, 96)  # maple shaft
CUE_BUTT_RGB = (42, 26, 20)  # ebony butt
CUE_TIP_RGB = (60, 90, 150)  # chalked tip
SLEEVE_RGB = (44, 48, 58)  # the player's dark sleeve
SKIN_RGB = (214, 168, 138)

# Lamp layouts: lamps as (x, y, height above the cloth, relative power) in table mm.
# Real carom tables hang a row of shaded lamps ~0.9-1.1 m above the cloth along the
# long axis, which lights the centre more than the corners.
LAMP_LAYOUTS: dict[str, tuple[tuple[float, float, float, float], ...]] = {
    "three": ((-950.0, 0.0, 1000.0, 1.0), (0.0, 0.0, 1000.0, 1.0), (950.0, 0.0, 1000.0, 1.0)),
    "two": ((-700.0, 0.0, 950.0, 1.0), (700.0, 0.0, 950.0, 1.0)),
    "four": ((-1050.0, 0.0, 1000.0, 1.0), (-350.0, 0.0, 1000.0, 1.0), (350.0, 0.0, 1000.0, 1.0), (1050.0, 0.0, 1000.0, 1.0)),
    "single": ((0.0, 0.0, 1300.0, 1.0),),
    # one strong lamp off-centre plus daylight from one side: the uneven case
    "window": ((-300.0, 150.0, 1100.0, 1.0), (600.0, 2600.0, 1800.0, 1.6)),
}
DEFAULT_LAMPS = "three"


def resolve_colour(value) -> tuple[int, int, int]:
    """A colour name or an RGB triple -> RGB triple (ValueError names the bad value)."""
    if isinstance(value, str):
        key = value.lower()
        if key not in NAMED_COLOURS:
            raise ValueError(f"unknown colour {value!r}; known: {', '.join(sorted(NAMED_COLOURS))}")
        return NAMED_COLOURS[key]
    rgb = tuple(int(v) for v in value)
    if len(rgb) != 3 or not all(0 <= v <= 255 for v in rgb):
        raise ValueError(f"colour must be 3 values in 0..255, got {value!r}")
    return rgb  # type: ignore[return-value]


def resolve_lamps(value) -> tuple[tuple[float, float, float, float], ...]:
    """A layout name or explicit lamps [(x, y, h, power), ...] -> lamps tuple."""
    if isinstance(value, str):
        if value not in LAMP_LAYOUTS:
            raise ValueError(f"unknown lamp layout {value!r}; known: {', '.join(LAMP_LAYOUTS)}")
        return LAMP_LAYOUTS[value]
    lamps = tuple(tuple(float(v) for v in lamp) for lamp in value)
    if not lamps or any(len(lamp) != 4 or lamp[2] <= 0 or lamp[3] <= 0 for lamp in lamps):
        raise ValueError(f"lamps must be (x, y, height>0, power>0) tuples, got {value!r}")
    return lamps  # type: ignore[return-value]
