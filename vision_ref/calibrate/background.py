"""The empty-table background for the detector, kept up to date slowly while the table is still.

Starts from the profile's background (the set-up frame with the objects painted
out). ``update(frame, table_still)`` blends a still frame in at a slow rate, and
only where the frame looks like the table, not like an object: where it is close
to the current background (slow light drift) or where it is cloth-coloured (a ball
has moved away and uncovered the cloth the set-up hid). A ball resting somewhere
is neither, so it never becomes background; while anything moves nothing changes.
"""

from __future__ import annotations

import cv2
import numpy as np

from vision_ref.calibrate.colours import colour_distance2
from vision_ref.calibrate.profile import CalibrationProfile
from vision_ref.errors import CalibrationError


class BackgroundModel:
    def __init__(self, profile: CalibrationProfile, rate: float = 0.02, close_level: float = 14.0,
                 cloth_d2: float = 9.0):
        if not 0.0 < rate <= 1.0:
            raise ValueError(f"background rate must be in (0, 1], got {rate}")
        self.profile = profile
        self.scale = float(profile.background_scale)
        self.rate = rate
        self.close_level = close_level
        self.cloth_d2 = cloth_d2
        W, H = profile.image_size
        self.size = (max(1, int(round(W * self.scale))), max(1, int(round(H * self.scale))))
        bg = profile.background
        self._bg: np.ndarray | None = None
        if bg is not None:
            if (bg.shape[1], bg.shape[0]) != self.size:
                bg = cv2.resize(bg, self.size, interpolation=cv2.INTER_AREA)
            self._bg = bg.astype(np.float32)
        self.updates = 0
        self.skipped_moving = 0

    def _small(self, frame_bgr: np.ndarray) -> np.ndarray:
        h, w = frame_bgr.shape[:2]
        self.profile.check_frame_size(w, h)
        return cv2.resize(frame_bgr, self.size, interpolation=cv2.INTER_AREA).astype(np.float32)

    def update(self, frame_bgr: np.ndarray, table_still: bool) -> None:
        """Blend a frame in, only when the table is still (never while objects move)."""
        if not table_still:
            self.skipped_moving += 1
            return
        small = self._small(frame_bgr)
        if self._bg is None:
            self._bg = small
            self.updates += 1
            return
        diff = np.abs(small - self._bg).max(axis=2)
        ok = diff < self.close_level
        cloth = self.profile.colours.get("cloth")
        if cloth is not None:
            lab = cv2.cvtColor(np.clip(small, 0, 255).astype(np.uint8), cv2.COLOR_BGR2LAB)
            d2 = colour_distance2(cloth, lab.reshape(-1, 3)).reshape(diff.shape)
            ok |= d2 < self.cloth_d2
        a = (self.rate * ok.astype(np.float32))[:, :, None]
        self._bg += a * (small - self._bg)
        self.updates += 1

    def image(self, full_size: bool = False) -> np.ndarray:
        """The background (BGR uint8) at the model's scale, or resized to the frame size."""
        if self._bg is None:
            raise CalibrationError("no background yet: the profile has none and no still frame was seen")
        out = np.clip(self._bg + 0.5, 0, 255).astype(np.uint8)
        if full_size:
            out = cv2.resize(out, self.profile.image_size, interpolation=cv2.INTER_LINEAR)
        return out

    def to_profile(self) -> CalibrationProfile:
        """The profile with this background (to save the learnt background with it)."""
        self.profile.background = self.image()
        self.profile.background_scale = self.scale
        return self.profile
