"""The calibration profile: everything the tracker needs to turn pixels into table millimetres.

A versioned JSON file: camera (lens + pose), the table spec, colour models of the
cloth, balls and pins, and the empty-table background (a PNG, base64, at a reduced
scale to keep the file small). A profile made for another image size is refused.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from vision_ref.camera import CameraModel
from vision_ref.errors import CalibrationError
from vision_ref.rules.table import DEFAULT_TABLE, TableSpec

PROFILE_FORMAT = "vision-ref.calibration/1"


def write_json_atomic(path: str | Path, data: Any) -> None:
    """Write JSON through a temporary file and a rename: a crash never leaves half a file."""
    path = Path(path)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    tmp.replace(path)


def read_json(path: str | Path, what: str) -> Any:
    """The JSON in ``path``; a missing or unreadable file is a CalibrationError naming ``what``."""
    path = Path(path)
    if not path.exists():
        raise CalibrationError(f"{what} {path} does not exist")
    try:
        return json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CalibrationError(f"{what} {path} is not readable JSON: {exc}") from None


@dataclass
class ColourModel:
    """Mean and covariance of one class in a colour space (default: OpenCV 8-bit Lab)."""

    mean: list[float]
    cov: list[list[float]]
    space: str = "lab"

    def to_dict(self) -> dict[str, Any]:
        return {"mean": list(map(float, self.mean)), "cov": [list(map(float, r)) for r in self.cov], "space": self.space}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "ColourModel":
        return cls(mean=list(d["mean"]), cov=[list(r) for r in d["cov"]], space=d.get("space", "lab"))


@dataclass
class CalibrationProfile:
    camera: CameraModel
    table: TableSpec = field(default_factory=lambda: DEFAULT_TABLE)
    colours: dict[str, ColourModel] = field(default_factory=dict)  # cloth, white, cue, pin, king, ...
    background: np.ndarray | None = None  # BGR uint8 empty-table image at ``background_scale``
    background_scale: float = 0.5
    source: str = ""  # what it was made from (file name, camera)
    quality: dict[str, float] = field(default_factory=dict)  # residuals, line fit errors, ...
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def image_size(self) -> tuple[int, int]:
        return self.camera.width, self.camera.height

    def check_frame_size(self, width: int, height: int) -> None:
        """Refuse footage of another size: a profile is only valid for its camera mode."""
        if (width, height) != self.image_size:
            w, h = self.image_size
            raise CalibrationError(
                f"calibration profile is for {w}x{h} frames but the footage is {width}x{height}; "
                "calibrate this camera mode (vision-ref calibrate SOURCE --out PROFILE.json)"
            )

    # ---- serialisation ---------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "format": PROFILE_FORMAT,
            "camera": self.camera.to_dict(),
            "table": self.table.to_dict(),
            "colours": {k: v.to_dict() for k, v in self.colours.items()},
            "background_scale": self.background_scale,
            "source": self.source,
            "quality": self.quality,
            "extra": self.extra,
        }
        if self.background is not None:
            ok, png = cv2.imencode(".png", self.background)
            if not ok:
                raise CalibrationError("could not encode the background image")
            d["background_png"] = base64.b64encode(png.tobytes()).decode("ascii")
        return d

    def save(self, path: str | Path) -> None:
        write_json_atomic(path, self.to_dict())

    @classmethod
    def from_dict(cls, d: dict[str, Any], where: str = "profile") -> "CalibrationProfile":
        if not isinstance(d, dict):
            raise CalibrationError(f"{where}: not a calibration profile (expected a JSON object)")
        fmt = d.get("format")
        if fmt != PROFILE_FORMAT:
            raise CalibrationError(f"{where}: format is {fmt!r}, expected {PROFILE_FORMAT!r}")
        try:
            camera = CameraModel.from_dict(d["camera"])
            table = TableSpec.from_dict(d.get("table", {}))
            colours = {k: ColourModel.from_dict(v) for k, v in d.get("colours", {}).items()}
        except (KeyError, TypeError, ValueError) as exc:
            raise CalibrationError(f"{where}: {exc}") from None
        background = None
        if d.get("background_png"):
            buf = np.frombuffer(base64.b64decode(d["background_png"]), dtype=np.uint8)
            background = cv2.imdecode(buf, cv2.IMREAD_COLOR)
            if background is None:
                raise CalibrationError(f"{where}: background_png is not a readable PNG")
        return cls(
            camera=camera,
            table=table,
            colours=colours,
            background=background,
            background_scale=float(d.get("background_scale", 0.5)),
            source=str(d.get("source", "")),
            quality=dict(d.get("quality", {})),
            extra=dict(d.get("extra", {})),
        )

    @classmethod
    def load(cls, path: str | Path) -> "CalibrationProfile":
        return cls.from_dict(read_json(path, "calibration profile"), where=str(path))
