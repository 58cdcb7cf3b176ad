"""Frame-by-frame ball detection without tracking: every ball-sized blob on the table.

The tracker only looks near its predictions; this detector is the coarse search on
its own (the sparse grid over the whole table, then full-resolution disk peaks and
the sub-pixel capsule centroid in each blob), for checking detection on footage no
renderer made (``benchmarks/tracking.py`` runs it on the real clips) and for
counting balls at set-up. It finds any number of balls, so it also works on pool
footage; a blob holding several touching balls yields one peak per ball.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from vision_ref.calibrate.profile import CalibrationProfile
from vision_ref.camera import CameraModel
from vision_ref.messages import Frame
from vision_ref.rules.table import TableSpec
from vision_ref.track import _kernels as K
from vision_ref.track.tracker import COARSE_STRIDE, MAX_WIN, Tracker


@dataclass
class Detection:
    x: float  # silhouette centroid, pixels
    y: float
    radius: float  # expected radius there, pixels
    fill: float  # mean weight over the ball's disk (0..1)
    white: float  # mean white-class weight over the disk (0..1): white ball vs coloured


class Detector(Tracker):
    """Ball detector sharing the tracker's calibration, kernels and scratch buffers.

    ``cloth_only`` limits the search to the playing area (footage whose background was
    estimated from the frames themselves is only trustworthy there).
    """

    def __init__(self, profile: CalibrationProfile, fps: float, exposure_s: float | None = None, cloth_only: bool = False):
        super().__init__(profile, fps, exposure_s)
        if cloth_only:
            s = COARSE_STRIDE
            ys = self.c_y0 + s * np.arange(self.c_gh)
            xs = self.c_x0 + s * np.arange(self.c_gw)
            gx, gy = np.meshgrid(xs, ys)
            pts = self.geo.plane_at(np.column_stack([gx.ravel(), gy.ravel()]).astype(np.float64), 0.0)
            t = self.table
            inside = (np.abs(pts[:, 0]) <= t.half_length - 0.3 * t.ball_radius) & (
                np.abs(pts[:, 1]) <= t.half_width - 0.3 * t.ball_radius)
            self.c_region = np.ascontiguousarray(inside.reshape(self.c_gh, self.c_gw).astype(np.uint8))

    def detect(self, frame: Frame, min_fill: float = 0.55) -> list[Detection]:
        mode, bgr, yp, uvp = self._planes(frame)
        bg = self._background(mode, frame)
        self._ctx = (mode, bgr, yp, uvp, bg)
        K.coarse_grid(mode, bgr, yp, uvp, bg, COARSE_STRIDE, self.c_y0, self.c_x0, self.c_gh, self.c_gw,
                      self.c_region, self.ref_white, self.ref_cue, self.prm, self.c_fg, self.c_white, self.c_cue)
        nc = K.label_grid(self.c_fg, self.c_white, self.c_cue, self.c_gh, self.c_gw, 0.5, self.c_labels,
                          self.c_stack, self.c_stats, len(self.c_stats))
        s = COARSE_STRIDE
        r_nom = self.table.ball_radius / self.mm_px
        ball_cells = math.pi * r_nom * r_nom / (s * s)
        found: list[Detection] = []
        for c in range(nc):
            st = self.c_stats[c]
            n = st[K.S_N]
            if n < 0.3 * ball_cells:
                continue
            x0 = self.c_x0 + s * st[K.S_X0] - s - r_nom
            x1 = self.c_x0 + s * st[K.S_X1] + s + r_nom
            y0 = self.c_y0 + s * st[K.S_Y0] - s - r_nom
            y1 = self.c_y0 + s * st[K.S_Y1] + s + r_nom
            if x1 - x0 > MAX_WIN or y1 - y0 > MAX_WIN:
                continue  # an arm, a cue, a person: not a ball
            for d in self._balls_in(x0, y0, x1, y1, int(math.ceil(n / ball_cells)) + 1, min_fill):
                # two peaks of one (blurred) ball refine to the same place: keep one
                if all(math.hypot(d.x - e.x, d.y - e.y) > 0.8 * d.radius for e in found):
                    found.append(d)
        return found

    def _balls_in(self, x0, y0, x1, y1, k_max, min_fill) -> list[Detection]:
        mode, bgr, yp, uvp, bg = self._ctx
        cx, cy = 0.5 * (x0 + x1), 0.5 * (y0 + y1)
        r = self.geo.ball_radius_px(cx, cy)
        wx0, wy0, w, h = self._window(cx, cy, 0.5 * max(x1 - x0, y1 - y0))
        if w < 2 * r + 3 or h < 2 * r + 3:
            return []
        # class-agnostic: any ball colour counts (pool sets have fifteen of them)
        K.ball_weights(mode, bgr, yp, uvp, bg, wy0, wx0, h, w, self.ref_white, self.prm,
                       self._masks, 0, self._w_cls, self._w_fg)
        white = self._w_cls.copy()
        n = K.disk_scores(self._w_fg, h, w, max(r - 1.0, 2.0), cx - wx0, cy - wy0, 1e9, 1, self._prefix, self._scores)
        if n == 0:
            return []
        peaks = np.zeros((min(k_max, 24), 3))
        k = K.top_peaks(self._scores, h, w, 1.6 * r, min_fill, len(peaks), peaks)
        out = []
        for q in range(k):
            K.refine_capsule(self._w_fg, h, w, peaks[q, 0], peaks[q, 1], 1.0, 0.0, 0.0, r, 1, 2, self.pad_narrow,
                             self._refine)
            res = self._refine
            if res[K.R_SUMW] <= 0 or res[K.R_FILL] < min_fill:
                continue
            # a ball (blurred or not) is as wide across as a disk: variance r^2/4 (+ the ramp of the
            # anti-aliased edge); a cue stick or an arm's edge is much thinner
            sxx, sxy, syy = res[K.R_SXX], res[K.R_SXY], res[K.R_SYY]
            lam_min = 0.5 * (sxx + syy) - math.sqrt(max(0.25 * (sxx - syy) ** 2 + sxy * sxy, 0.0))
            if lam_min < 0.55 * 0.25 * r * r:
                continue
            px, py = res[K.R_CX], res[K.R_CY]
            j0, j1 = max(int(py - 0.6 * r), 0), min(int(py + 0.6 * r) + 1, h)
            i0, i1 = max(int(px - 0.6 * r), 0), min(int(px + 0.6 * r) + 1, w)
            out.append(Detection(px + wx0, py + wy0, r, float(peaks[q, 2]), float(white[j0:j1, i0:i1].mean())))
        return out


def profile_from_footage(frames_bgr: list[np.ndarray], table: TableSpec, cloth_px: tuple[float, float, float, float],
                         source: str = "") -> CalibrationProfile:
    """A rough profile for footage without a calibration: the empty table as the median of frames.

    ``cloth_px`` = (x0, y0, x1, y1): the playing area's corners in the image (an
    overhead camera is assumed, no lens distortion), which sets the scale, so ball
    radii in pixels are right; table millimetres are only approximate.
    """
    h, w = frames_bgr[0].shape[:2]
    x0, y0, x1, y1 = cloth_px
    px_per_mm = 0.5 * ((x1 - x0) / table.length + (y1 - y0) / table.width)
    height = 2400.0
    want = np.array([0.5 * (x0 + x1), 0.5 * (y0 + y1)])
    offset = np.zeros(2)
    for _ in range(3):  # move the camera until the table centre images where the cloth's centre is
        cam = CameraModel.overhead(w, h, table=table, camera_height_mm=height, focal_px=px_per_mm * height,
                                   offset_mm=tuple(offset))
        err = want - cam.project(np.array([[0.0, 0.0, 0.0]]))[0]
        moved = CameraModel.overhead(w, h, table=table, camera_height_mm=height, focal_px=px_per_mm * height,
                                     offset_mm=tuple(offset + (10.0, 10.0)))
        gain = (moved.project(np.array([[0.0, 0.0, 0.0]]))[0] - (want - err)) / 10.0
        offset = offset + err / np.where(np.abs(gain) > 1e-9, gain, 1.0)
    bg = np.median(np.stack(frames_bgr), axis=0).astype(np.uint8)
    # balls that never move are in the temporal median too: on the cloth, a spatial median
    # wider than two balls replaces them with the cloth around them (a rack stays, though)
    ball_px = table.ball_diameter * px_per_mm
    k = int(2.6 * ball_px) | 1
    smooth = cv2.medianBlur(bg, k)
    ix0, iy0, ix1, iy1 = (int(round(v)) for v in cloth_px)
    inset = int(0.5 * ball_px)
    bg[iy0 + inset:iy1 - inset, ix0 + inset:ix1 - inset] = smooth[iy0 + inset:iy1 - inset, ix0 + inset:ix1 - inset]
    return CalibrationProfile(camera=cam, table=table, background=cv2.resize(bg, None, fx=0.5, fy=0.5,
                                                                               interpolation=cv2.INTER_AREA),
                              background_scale=0.5, source=source or "median of frames (uncalibrated)")
