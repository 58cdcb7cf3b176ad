"""Camera height and lens for a table: the numbers behind hardware/MOUNTING.md.

Pinhole geometry of a camera looking straight down at the cloth: a lens of focal
length ``f`` on a sensor ``s`` mm wide sees ``s * h / f`` mm of table from ``h`` mm
above it. The view must hold the playing area plus cushions, rails and a margin
(the calibration finds the table from its rails), in both directions; the
binding direction fixes the height. From the height follow the resolution
(mm per pixel at the cloth), a ball's diameter in pixels, and the blur a fast ball
leaves in one exposure.
"""

from __future__ import annotations

from dataclasses import dataclass

from vision_ref.rules.table import DEFAULT_TABLE, TableSpec


@dataclass(frozen=True)
class Sensor:
    name: str
    width_px: int  # the mode the referee runs (full field of view)
    height_px: int
    pixel_um: float  # pixel pitch of that mode (binned modes: the binned pitch)
    fps: float
    lenses_mm: tuple[float, ...]  # focal lengths that fit it (fixed lens: one)


SENSORS = {
    "imx296": Sensor("Global Shutter Camera (IMX296, CS mount)", 1456, 1088, 3.45, 60.0, (2.7, 3.2, 4.0, 6.0, 8.0)),
    "imx708": Sensor("Camera Module 3 (IMX708, 2x2 binned)", 1536, 864, 2.8, 120.0, (4.74,)),
    "imx708_wide": Sensor("Camera Module 3 Wide (IMX708, 2x2 binned)", 1536, 864, 2.8, 120.0, (2.75,)),
}


@dataclass
class MountPlan:
    sensor: str
    focal_mm: float
    height_mm: float  # lens above the cloth
    view_mm: tuple[float, float]  # field of view at the cloth (along the table, across)
    mm_per_px: float
    ball_px: float
    blur_mm: float  # smear of a ball at ``speed`` during ``exposure``
    blur_px: float
    binding: str  # "length" or "width": which direction fixes the height

    def line(self) -> str:
        return (f"{self.focal_mm:5.2f} mm lens: {self.height_mm / 1000:5.2f} m above the cloth, view "
                f"{self.view_mm[0] / 1000:.2f} x {self.view_mm[1] / 1000:.2f} m, {self.mm_per_px:.2f} mm/px, "
                f"ball {self.ball_px:.0f} px, blur {self.blur_px:.1f} px ({self.binding} binds)")


def plan(sensor: str = "imx296", focal_mm: float | None = None, table: TableSpec = DEFAULT_TABLE,
         margin_mm: float = 40.0, speed_mm_s: float = 5000.0, exposure_s: float = 0.002) -> list[MountPlan]:
    """One :class:`MountPlan` per lens (or for ``focal_mm``), image long side along the table."""
    if sensor not in SENSORS:
        raise ValueError(f"unknown sensor {sensor!r}; known: {', '.join(SENSORS)}")
    s = SENSORS[sensor]
    edge = table.cushion_width + table.rail_width + margin_mm
    need_x = table.length + 2 * edge
    need_y = table.width + 2 * edge
    sw = s.width_px * s.pixel_um / 1000.0
    sh = s.height_px * s.pixel_um / 1000.0
    out = []
    for f in ([focal_mm] if focal_mm else s.lenses_mm):
        if f <= 0:
            raise ValueError(f"focal length must be positive, got {f}")
        hx, hy = need_x * f / sw, need_y * f / sh
        h = max(hx, hy)
        view = (sw * h / f, sh * h / f)
        mmpx = view[0] / s.width_px
        blur = speed_mm_s * exposure_s
        out.append(MountPlan(sensor, f, h, view, mmpx, table.ball_diameter / mmpx, blur, blur / mmpx,
                             "length" if hx >= hy else "width"))
    return out
