"""How well the current frame still matches the calibration: camera bumped? light changed?

Two checks, both cheap enough for every few seconds of a live loop:

- **Geometry**: the static structure (cushions, rails, diamonds) must sit where the
  profile's background has it. The shift between the frame's and the background's
  gradient images over a band round the cushions (phase correlation; balls and
  players hardly enter the band) is the camera's movement in pixels.
- **Light**: the median colour of the open cloth against the learnt cloth model
  (Lab distance): lamps switched, daylight, auto-exposure drift.

``score`` multiplies the two (1 = as calibrated); ``ok`` is score >= 0.5; ``reason``
names the worse problem and what to do.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from vision_ref.calibrate import colours as C
from vision_ref.calibrate.profile import CalibrationProfile

SHIFT_SCALE_PX = 1.5  # a shift of this many pixels costs ~63 % of the score
LIGHT_SCALE_LAB = 12.0


@dataclass
class HealthReport:
    score: float
    ok: bool
    reason: str
    shift_px: float = 0.0
    light_delta: float = 0.0
    structure_corr: float = 1.0


def _band_mask(profile: CalibrationProfile, scale: float) -> np.ndarray:
    cam, t = profile.camera, profile.table
    W, H = profile.image_size
    m = np.zeros((H, W), np.uint8)
    outer = C.cloth_polygon_px(cam, t, -(t.cushion_width + t.rail_width))
    inner = C.cloth_polygon_px(cam, t, 60.0)
    cv2.fillPoly(m, [np.round(outer).astype(np.int32)], 1)
    cv2.fillPoly(m, [np.round(inner).astype(np.int32)], 0)
    return cv2.resize(m, (int(round(W * scale)), int(round(H * scale))), interpolation=cv2.INTER_NEAREST) > 0


def _grad(img: np.ndarray) -> np.ndarray:
    g = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY).astype(np.float32)
    gx = cv2.Sobel(g, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(g, cv2.CV_32F, 0, 1, ksize=3)
    return cv2.magnitude(gx, gy)


def health(profile: CalibrationProfile, frame_bgr: np.ndarray) -> HealthReport:
    h, w = frame_bgr.shape[:2]
    profile.check_frame_size(w, h)
    scale = profile.background_scale
    small = cv2.resize(frame_bgr, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    shift_px, corr = 0.0, 1.0
    if profile.background is not None:
        bg = profile.background
        if bg.shape[:2] != small.shape[:2]:
            bg = cv2.resize(bg, (small.shape[1], small.shape[0]), interpolation=cv2.INTER_AREA)
        band = _band_mask(profile, scale).astype(np.float32)
        ga, gb = _grad(small) * band, _grad(bg) * band
        win = cv2.createHanningWindow((ga.shape[1], ga.shape[0]), cv2.CV_32F)
        (dx, dy), _ = cv2.phaseCorrelate(gb, ga, win)
        (bx, by), _ = cv2.phaseCorrelate(gb, gb, win)  # OpenCV's own offset for some image sizes (0.5 px)
        dx, dy = dx - bx, dy - by
        shift_px = float(np.hypot(dx, dy)) / scale
        a, b = ga[band > 0], gb[band > 0]
        if a.std() > 1e-6 and b.std() > 1e-6:
            corr = float(np.corrcoef(a, b)[0, 1])
    light = 0.0
    cloth = profile.colours.get("cloth")
    if cloth is not None:
        empty = C.SetupPositions(balls={}, pins={})
        mask = C.cloth_mask(frame_bgr.shape, profile.camera, profile.table, empty, inset_mm=80.0)
        # every 2nd pixel of every 2nd row: the median of tens of thousands of cloth pixels is
        # the same, at a third of the cost (review runs this on each clip it is given a profile for)
        lab = C.to_lab(np.ascontiguousarray(frame_bgr[::2, ::2]))[mask[::2, ::2]]
        if len(lab):
            med = np.median(lab.reshape(-1, 3), axis=0)
            light = float(np.linalg.norm(med - np.asarray(cloth.mean)))
    s_geo = float(np.exp(-(shift_px / SHIFT_SCALE_PX) ** 2)) * float(np.clip((corr + 0.2) / 0.8, 0.0, 1.0) if corr < 0.6 else 1.0)
    s_light = float(np.exp(-(light / LIGHT_SCALE_LAB) ** 2))
    score = s_geo * s_light
    if score >= 0.5:
        reason = "calibration matches the frame"
    elif s_geo <= s_light:
        reason = (f"the camera has moved (table structure shifted {shift_px:.1f} px, match {corr:.2f}): "
                  "re-run vision-ref calibrate")
    else:
        reason = (f"the light has changed (cloth colour off by {light:.0f} Lab units): "
                  "check the lamps / exposure, then re-run vision-ref calibrate")
    return HealthReport(round(score, 4), score >= 0.5, reason, round(shift_px, 3), round(light, 2), round(corr, 4))
