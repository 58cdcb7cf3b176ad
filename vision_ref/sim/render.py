"""Overhead renderer: a simulated shot as a calibrated camera above the table sees it.

The static table (cloth, cushions, rails, diamonds, marks, lamp light, vignetting)
is ray-cast once per camera into a background image. Each frame then copies that
background with fresh sensor noise and re-renders only small boxes around the
objects (balls, pins, the cue stick and the player's arms) together with their
shadows, averaging several sub-exposure samples of the simulation where things move
(motion blur) and, with a rolling shutter, giving every row its own exposure window.

Public API (used by calibration and tracking tests and the synthetic frame source):

- ``Renderer(camera, table, settings).render_frame(sim, i) -> BGR uint8``
- ``Renderer.frames(sim)`` iterator of BGR frames; ``Renderer.frame_messages(sim)``
  of :class:`vision_ref.messages.Frame`
- ``render_clip(sim, camera, settings, out_dir, name) -> dict`` writes NAME.mp4,
  NAME.truth.json, NAME.camera.json (+ NAME.timestamps.txt).
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterator

import cv2
import numpy as np

from vision_ref.camera import CameraModel
from vision_ref.messages import Frame
from vision_ref.rules.table import BALL_IDS, DEFAULT_TABLE, PIN_IDS, TableSpec
from vision_ref.sim import _render_kernels as K
from vision_ref.sim import appearance as A
from vision_ref.sim.world import ShotSimulation, WorldSamples


def srgb_to_linear(rgb) -> np.ndarray:
    v = np.asarray(rgb, dtype=np.float64) / 255.0
    return np.where(v <= 0.04045, v / 12.92, ((v + 0.055) / 1.055) ** 2.4)


@dataclass
class RenderSettings:
    """How a clip is rendered. All fields have camera-realistic defaults.

    ``exposure_s``: exposure time (default min(4 ms, 1/fps)). ``rolling_shutter_s``:
    time from the first to the last row starting its exposure (0: global shutter).
    ``noise_sigma``: sensor noise, grey levels at mid grey. ``vignetting``: 1 is the
    natural cos^4 fall-off, 0 none. ``player``: "arms" (cue stick + arms), "full"
    (also head and shoulders), "none" (stick only). ``jpeg_quality``: when set,
    in-memory frames get JPEG artefacts (files always get the real H.264 ones).
    """

    fps: float = 60.0
    exposure_s: float | None = None
    rolling_shutter_s: float = 0.0
    seed: int = 0
    crf: int = 23
    preset: str = "medium"
    noise_sigma: float = 2.0
    cloth_rgb: tuple[int, int, int] = A.DEFAULT_CLOTH_RGB
    cue_ball_rgb: tuple[int, int, int] = A.DEFAULT_CUE_BALL_RGB
    lamps: Any = A.DEFAULT_LAMPS
    ambient: float = 0.28
    exposure_gain: float = 1.0
    vignetting: float = 0.55
    draw_cue: bool = True
    player: str = "arms"
    cue_elevation_deg: float = 6.0
    blur_step_px: float = 0.75  # one sub-exposure sample per this much image motion
    max_blur_samples: int = 48
    max_cue_samples: int = 16  # the stick and arms: big and fast, a few samples blur them well enough
    min_samples: int = 4  # sub-pixel jitter samples per pixel (anti-aliasing of pins, sticks)
    jpeg_quality: int | None = None
    t_start: float = 0.0  # clip time of frame 0's exposure start
    timestamp_origin_ns: int = 0

    def __post_init__(self) -> None:
        if self.fps <= 0:
            raise ValueError(f"fps must be positive, got {self.fps}")
        if self.exposure_s is None:
            self.exposure_s = min(0.004, 1.0 / self.fps)
        if not 0 < self.exposure_s <= 1.0 / self.fps + 1e-12:
            raise ValueError(f"exposure must be in (0, 1/fps = {1.0 / self.fps:.4f}] s, got {self.exposure_s}")
        if self.rolling_shutter_s < 0 or self.rolling_shutter_s > 1.0 / self.fps:
            raise ValueError(f"rolling shutter readout must be in [0, 1/fps] s, got {self.rolling_shutter_s}")
        if self.noise_sigma < 0:
            raise ValueError(f"noise_sigma must be >= 0, got {self.noise_sigma}")
        if self.player not in ("arms", "full", "none"):
            raise ValueError(f"player must be arms, full or none, got {self.player!r}")
        if self.jpeg_quality is not None and not 1 <= self.jpeg_quality <= 100:
            raise ValueError(f"jpeg_quality must be 1..100, got {self.jpeg_quality}")
        self.cloth_rgb = A.resolve_colour(self.cloth_rgb)
        self.cue_ball_rgb = A.resolve_colour(self.cue_ball_rgb)
        A.resolve_lamps(self.lamps)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["lamp_layout"] = [list(l) for l in A.resolve_lamps(self.lamps)]
        d["cloth_rgb"] = list(self.cloth_rgb)
        d["cue_ball_rgb"] = list(self.cue_ball_rgb)
        return d


# ---- pins: profile of the solid of revolution -------------------------------------------


def pin_profile(kind: str, n: int = 97) -> np.ndarray:
    """Radius / widest radius along the height (0 base .. 1 top) of a plain pin or the king."""
    if kind == "king":
        u_pts = [0.0, 0.04, 0.12, 0.25, 0.36, 0.48, 0.60, 0.68, 0.74]
        r_pts = [0.58, 0.64, 0.80, 0.96, 1.00, 0.93, 0.70, 0.50, 0.46]
        head_c, head_r = 0.86, 0.60
    else:
        u_pts = [0.0, 0.04, 0.12, 0.24, 0.34, 0.46, 0.58, 0.67, 0.72]
        r_pts = [0.60, 0.66, 0.82, 0.97, 1.00, 0.93, 0.68, 0.47, 0.44]
        head_c, head_r = 0.87, 0.55
    u = np.linspace(0.0, 1.0, n)
    body = np.interp(u, u_pts, r_pts)
    # round head: a circle in (height, radius) scaled so it closes at the top
    span = 1.0 - head_c
    z = np.clip((u - head_c) / span, -1.0, 1.0)
    head = head_r * np.sqrt(np.clip(1.0 - z * z, 0.0, 1.0))
    neck_end = u_pts[-1]
    out = np.where(u <= neck_end, body, np.maximum(head, np.where(u < head_c, np.interp(u, [neck_end, head_c - span], [r_pts[-1], head_r]), 0.0)))
    out[-1] = 0.0
    return out


@dataclass
class _Cluster:
    y0: int
    x0: int
    y1: int
    x1: int
    balls: list[int] = field(default_factory=list)
    pins: list[int] = field(default_factory=list)
    cue: bool = False
    disp_px: float = 0.0


class Renderer:
    """Renders frames of a :class:`ShotSimulation` for one camera, table and settings."""

    def __init__(self, camera: CameraModel, table: TableSpec = DEFAULT_TABLE, settings: RenderSettings | None = None):
        self.camera = camera
        self.table = table
        self.settings = settings or RenderSettings()
        st = self.settings
        self.H, self.W = camera.height, camera.width
        self.focal = float(0.5 * (camera.K[0, 0] + camera.K[1, 1]))
        self.origin = camera.centre_world.astype(np.float64)
        self.lamps = np.asarray(A.resolve_lamps(st.lamps), dtype=np.float64)
        # normalise the lamps so a white surface at the table centre reflects 1.0
        li = np.zeros(len(self.lamps))
        amb = K.lamp_irradiance(0.0, 0.0, 0.0, 0.0, 0.0, 1.0, self.lamps, st.ambient, li)
        scale = 1.0 / (amb + li.sum())
        self.lamps[:, 3] *= scale
        self.ambient = st.ambient * scale
        self.cloth_lin = srgb_to_linear(st.cloth_rgb)
        self._rays_and_gain()
        self._background()
        self._lut = K.srgb_lut()
        self._noise_setup()
        self._pin_prof = np.stack([pin_profile("plain"), pin_profile("king")])
        self._pin_kind = np.array([1 if p == "king" else 0 for p in PIN_IDS], dtype=np.int64)
        self._pin_height = np.array([table.pin_height, table.king_height], dtype=np.float64)
        self._pin_rmax = np.array([table.pin_max_diameter / 2.0, table.king_max_diameter / 2.0], dtype=np.float64)
        self._pin_cols = np.stack([srgb_to_linear(c) for c in (A.PIN_BODY_RGB, A.PIN_BAND_RGB, A.PIN_BAND_RGB, A.KING_BAND_RGB, A.KING_TOP_RGB)])
        alb = [st.cue_ball_rgb, A.OBJECT_BALL_RGB, A.OBJECT_BALL_RGB]
        self._ball_alb = np.stack([srgb_to_linear(c) for c in alb])
        self._prim_alb = np.stack([srgb_to_linear(c) for c in (
            A.CUE_TIP_RGB, A.PIN_BODY_RGB, A.CUE_STICK_RGB, (20, 20, 22), A.CUE_BUTT_RGB, A.SLEEVE_RGB, A.SKIN_RGB, (40, 30, 24))])
        self._cue_cache: tuple[int, Any] | None = None
        self._box_cache: dict = {}

    # ---- once per camera -------------------------------------------------------------
    def _rays_and_gain(self) -> None:
        ys, xs = np.mgrid[0:self.H, 0:self.W]
        px = np.column_stack([xs.ravel(), ys.ravel()]).astype(np.float64)
        norm = self.camera.undistort_pixels(px)
        rays_cam = np.column_stack([norm, np.ones(len(norm))])
        rays = rays_cam @ self.camera.R  # camera -> world directions
        rays /= np.linalg.norm(rays, axis=1, keepdims=True)
        self.rays = rays.reshape(self.H, self.W, 3)
        cos_axis = 1.0 / np.sqrt(1.0 + (norm**2).sum(axis=1))
        self.gain = (self.settings.exposure_gain * cos_axis ** (4.0 * self.settings.vignetting)).reshape(self.H, self.W)

    def _background(self) -> None:
        t, st = self.table, self.settings
        prof = np.array([t.cushion_width, t.cushion_nose_height, t.rail_width, t.rail_height, -760.0])
        spots = [t.ball_spot(n) for n in (1, 2, 3)] + [t.pin_spot(p) for p in PIN_IDS if p != "king"]
        marks = np.array(spots, dtype=np.float64)
        dia = []
        for x, y in t.diamonds():
            on_long = abs(abs(y) - (t.half_width + t.cushion_width + t.rail_width / 2.0)) < 1e-6
            dia.append((x, y, 0.0 if on_long else 1.0))
        diamonds = np.array(dia, dtype=np.float64)
        H, W = self.H, self.W
        self.bg_lin = np.zeros((H, W, 3))
        self.bg_pt = np.zeros((H, W, 3))
        self.bg_t = np.zeros((H, W))
        self.bg_cls = np.zeros((H, W), dtype=np.int8)
        cloth = self.cloth_lin
        cushion = cloth * A.CUSHION_RGB_FACTOR
        K.background_kernel(
            self.origin, self.rays, t.half_length, t.half_width, prof, self.lamps, self.ambient,
            cloth, cushion, srgb_to_linear(A.RAIL_WOOD_RGB), srgb_to_linear(A.RAIL_WOOD_DARK_RGB),
            cloth * 0.25, srgb_to_linear(A.FLOOR_RGB), srgb_to_linear(A.SPOT_MARK_RGB),
            srgb_to_linear(A.DIAMOND_RGB), marks, diamonds, t.spot_mark_diameter / 2.0,
            np.array([7.0, 11.0]), self.focal, int(st.seed) & 0x7FFFFFFF,
            self.bg_lin, self.bg_pt, self.bg_t, self.bg_cls,
        )
        self.bg_gained = self.bg_lin * self.gain[:, :, None]

    def _noise_setup(self) -> None:
        """A seeded pool of unit normals (frame offsets pick different stretches of it) and
        the background's sRGB values and noise deviations, so a frame's static part is one
        cheap pass (see _render_kernels.finish_static)."""
        st = self.settings
        self._noise_span = 1 << 18
        n = 4 * self.H * self.W + self._noise_span
        self._noise = np.random.default_rng([int(st.seed) & 0x7FFFFFFF, 0x5EED]).standard_normal(n, dtype=np.float32)
        lin = np.clip(self.bg_gained[:, :, ::-1], 0.0, 1.0)
        srgb = np.interp(lin, np.linspace(0.0, 1.0, len(self._lut)), self._lut)
        self._bg_srgb = np.ascontiguousarray(srgb)
        self._bg_sd = np.ascontiguousarray(float(st.noise_sigma) * (0.55 + 0.45 * np.sqrt(np.maximum(srgb, 0.0) / 128.0)))

    def _noise_offset(self, i: int) -> int:
        # a different, seeded stretch of the pool for every frame (4-aligned: channels stay apart)
        h = np.random.default_rng([int(self.settings.seed) & 0x7FFFFFFF, int(i), 7]).integers(self._noise_span // 4)
        return 4 * int(h)

    def background(self) -> np.ndarray:
        """The empty table as BGR uint8 without noise (for calibration tests)."""
        out = np.zeros((self.H, self.W, 3), np.uint8)
        K.finish_kernel(self.bg_gained, 0, 0, self._lut, 0.0, self._noise, 0, self.W, out)
        return out

    # ---- timing ------------------------------------------------------------------------
    def n_frames(self, sim: ShotSimulation) -> int:
        return max(1, int(math.floor((sim.duration - self.settings.t_start) * self.settings.fps)) + 1)

    def frame_time(self, i: int) -> float:
        """Clip time at which frame ``i``'s first row starts its exposure."""
        return self.settings.t_start + i / self.settings.fps

    def frame_mid_time(self, i: int) -> float:
        """Clip time of the middle of frame ``i``'s exposure (centre row)."""
        st = self.settings
        return self.frame_time(i) + 0.5 * st.rolling_shutter_s + 0.5 * st.exposure_s

    def timestamp_ns(self, i: int) -> int:
        return int(self.settings.timestamp_origin_ns + round(self.frame_time(i) * 1e9))

    # ---- the cue stick and the player's arms -------------------------------------------------
    def _cue_anchors(self, sim: ShotSimulation):
        """Per visible stretch of the cue: where the bridge hand rests (it stays put while the stick slides)."""
        if self._cue_cache is not None and self._cue_cache[0] == id(sim):
            return self._cue_cache[1]
        grid = np.arange(0.0, sim.duration + 1e-9, 1.0 / 240.0)
        ws = sim.sample(grid)
        vis = np.asarray(ws.cue_visible, bool)
        stretches = []
        i = 0
        while i < len(grid):
            if not vis[i]:
                i += 1
                continue
            j = i
            while j + 1 < len(grid) and vis[j + 1]:
                j += 1
            ang0 = ws.cue_angle[i]
            u0 = np.array([math.cos(ang0), math.sin(ang0)])
            fwd = (ws.cue_tip[i:j + 1] - ws.cue_tip[i]) @ u0  # most negative = furthest into the ball
            k = i + int(np.argmin(fwd))
            stretches.append((grid[i], grid[j], ws.cue_tip[k].copy(), float(ws.cue_angle[k]), float(grid[k])))
            i = j + 1
        self._cue_cache = (id(sim), stretches)
        return stretches

    def _prims(self, sim: ShotSimulation, ws: WorldSamples) -> np.ndarray:
        S = len(ws)
        st = self.settings
        n_arm = {"none": 0, "arms": 8, "full": 10}[st.player]
        segs = ((0.0, 12.0, 6.0, 6.2, K.MAT_CUE_TIP), (12.0, 30.0, 6.2, 6.3, K.MAT_FERRULE),
                (30.0, 700.0, 6.3, 9.5, K.MAT_SHAFT), (700.0, 740.0, 9.6, 9.8, K.MAT_JOINT),
                (740.0, 1440.0, 10.0, 15.0, K.MAT_BUTT))
        prims = np.zeros((S, len(segs) + n_arm, 12))
        if not st.draw_cue:
            return prims
        vis = np.asarray(ws.cue_visible, bool)
        if not vis.any():
            return prims
        anchors = self._cue_anchors(sim)
        R = self.table.ball_radius
        for s in np.nonzero(vis)[0]:
            ang = float(ws.cue_angle[s])
            ux, uy = math.cos(ang), math.sin(ang)
            t = ws.t[s]
            anc = None
            for t0, t1, atip, aang, t_ff in anchors:
                if t0 - 0.01 <= t <= t1 + 0.01:
                    anc = (atip, aang, t_ff)
            if anc is None:
                anc = (ws.cue_tip[s].copy(), ang, math.inf)
            atip, aang, t_ff = anc
            # after the follow-through the player lifts the cue and walks it back, bridge hand and all
            lift = 0.0
            if t > t_ff:
                lift = 350.0 * (t - t_ff)
                atip = ws.cue_tip[s].copy()
            tip = np.array([ws.cue_tip[s, 0], ws.cue_tip[s, 1], R + lift])
            e = self._cue_elevation(tip, ux, uy)
            axis = np.array([math.cos(e) * ux, math.cos(e) * uy, math.sin(e)])
            row = prims[s]
            for q, (a, b, ra, rb, mat) in enumerate(segs):
                pa, pb = tip + a * axis, tip + b * axis
                row[q, :10] = (1, *pa, *pb, ra, rb, mat)
            if n_arm == 0:
                continue
            au = np.array([math.cos(aang), math.sin(aang)])
            left = np.array([au[1], -au[0]])  # the player's left, looking along the stick to the ball

            def at(along, side, z, base=atip):
                p = base + along * au + side * left
                return np.array([p[0], p[1], z + lift])

            q = len(segs)
            # the bridge hand rests on whatever is under it: the cloth, or the cushion and rail
            bxy = atip + 215.0 * au + 18.0 * left
            on_rail = not self.table.on_cloth(float(bxy[0]), float(bxy[1]))
            hb = self.table.rail_height if on_rail else 0.0
            bridge = at(215.0, 18.0, 20.0 + hb)
            grip = tip + 1060.0 * axis
            agrip = np.array([atip[0], atip[1], R + lift]) + 1060.0 * np.array([math.cos(e) * au[0], math.cos(e) * au[1], math.sin(e)])
            elbow_l = at(430.0, 210.0, 210.0)
            shoulder_l = at(820.0, 190.0, 470.0)
            elbow_r = agrip + np.array([40.0 * au[0], 40.0 * au[1], 330.0])
            shoulder_r = at(840.0, -170.0, 480.0)
            row[q] = (2, *bridge, 62.0, 46.0, 21.0, 0, 0, K.MAT_SKIN, aang, 0)
            row[q + 1] = (1, *at(290.0, 35.0, 38.0 + hb), *elbow_l, 33.0, 42.0, K.MAT_SLEEVE, 0, 0)
            row[q + 2] = (1, *elbow_l, *shoulder_l, 44.0, 52.0, K.MAT_SLEEVE, 0, 0)
            row[q + 3] = (2, *grip, 48.0, 38.0, 42.0, 0, 0, K.MAT_SKIN, aang, 0)
            row[q + 4] = (1, *(grip + np.array([0, 0, 30.0])), *elbow_r, 30.0, 40.0, K.MAT_SLEEVE, 0, 0)
            row[q + 5] = (1, *elbow_r, *shoulder_r, 44.0, 52.0, K.MAT_SLEEVE, 0, 0)
            row[q + 6] = (2, *at(250.0, 58.0, 16.0 + hb), 30.0, 14.0, 12.0, 0, 0, K.MAT_SKIN, aang + 0.5, 0)  # thumb/fingers
            row[q + 7] = (2, *(grip + np.array([0, 0, -22.0])), 30.0, 22.0, 16.0, 0, 0, K.MAT_SKIN, aang, 0)
            if n_arm == 10:
                row[q + 8] = (2, *at(860.0, 10.0, 430.0), 200.0, 250.0, 120.0, 0, 0, K.MAT_SLEEVE, aang, 0)
                row[q + 9] = (2, *at(640.0, 0.0, 470.0), 105.0, 85.0, 110.0, 0, 0, K.MAT_HAIR, aang, 0)
        return prims

    def _cue_elevation(self, tip: np.ndarray, ux: float, uy: float) -> float:
        """Cue elevation (radians): the configured angle, raised so the stick clears the
        cushion and rail behind the ball (a capsule through the rail would shade it black)."""
        t = self.table
        e = math.radians(self.settings.cue_elevation_deg)
        dist = math.inf  # along the stick from the tip to the cushion nose line behind it
        for comp, pos, half in ((ux, tip[0], t.half_length), (uy, tip[1], t.half_width)):
            if abs(comp) > 1e-9:
                dist = min(dist, (math.copysign(half, comp) - pos) / comp)
        dist = max(dist, 1.0)
        need = t.rail_height + 6.3 + 3.2 * min(dist, 700.0) / 700.0 + 6.0 - tip[2]
        if need > 0.0:
            e = max(e, math.asin(min(need / dist, math.sin(math.radians(40.0)))))
        return e

    # ---- per frame ------------------------------------------------------------------------------
    def _pack(self, sim: ShotSimulation, ws: WorldSamples):
        S = len(ws)
        balls = np.zeros((S, len(BALL_IDS), 4))
        balls[:, :, :3] = ws.ball_xyz
        balls[:, :, 3] = ws.ball_visible
        pins = np.zeros((S, len(PIN_IDS), 6))
        pins[:, :, :2] = ws.pin_xy
        pins[:, :, 2] = ws.pin_z
        pins[:, :, 3] = ws.pin_tilt
        pins[:, :, 4] = ws.pin_dir
        pins[:, :, 5] = ws.pin_visible
        return balls, pins, self._prims(sim, ws)

    def _object_extents(self, balls, pins, prims):
        """Per object: (key points (N,3), radii (N,) in mm incl. the shadow reach) over all samples."""
        t = self.table
        R = t.ball_radius
        out = []
        for k in range(balls.shape[1]):
            v = balls[:, k, 3] > 0.5
            pts = balls[v, k, :3]
            out.append(("ball", k, pts, np.full(len(pts), 4.0 * R)))
        for k, pid in enumerate(PIN_IDS):
            v = pins[:, k, 5] > 0.5
            p = pins[v, k]
            h = t.pin_height_of(pid)
            st_, ct = np.sin(p[:, 3]), np.cos(p[:, 3])
            head = np.column_stack([p[:, 0] + h * st_ * np.cos(p[:, 4]), p[:, 1] + h * st_ * np.sin(p[:, 4]), p[:, 2] + h * ct])
            base = p[:, :3]
            pts = np.vstack([base, head])
            out.append(("pin", k, pts, np.full(len(pts), t.pin_top_radius(pid) + h + 30.0)))
        kind = prims[:, :, 0]
        if (kind > 0.5).any():
            pts, rad = [], []
            for s, q in zip(*np.nonzero(kind > 0.5)):
                pr = prims[s, q]
                if pr[0] < 1.5:
                    for p, r in ((pr[1:4], pr[7]), (pr[4:7], pr[8])):
                        pts.append(p)
                        rad.append(r + 60.0 + max(p[2], 0.0) * 0.9)
                else:
                    pts.append(pr[1:4])
                    rad.append(max(pr[4:7]) + 60.0 + max(pr[3], 0.0) * 0.9)
            out.append(("cue", 0, np.array(pts), np.array(rad)))
        return out

    def _boxes(self, extents):
        boxes = []
        cam = self.camera
        for kind, k, pts, rad in extents:
            if len(pts) == 0:
                continue
            pts = np.ascontiguousarray(pts)
            px = cam.project(pts)
            depth = np.maximum(cam.depth(pts), 50.0)
            rpx = rad * self.focal / depth * 1.12 + 2.0
            x0 = int(math.floor(np.min(px[:, 0] - rpx)))
            x1 = int(math.ceil(np.max(px[:, 0] + rpx))) + 1
            y0 = int(math.floor(np.min(px[:, 1] - rpx)))
            y1 = int(math.ceil(np.max(px[:, 1] + rpx))) + 1
            x0, y0 = max(x0, 0), max(y0, 0)
            x1, y1 = min(x1, self.W), min(y1, self.H)
            if x1 <= x0 or y1 <= y0:
                continue
            c = _Cluster(y0, x0, y1, x1)
            if kind == "ball":
                c.balls.append(k)
            elif kind == "pin":
                c.pins.append(k)
            else:
                c.cue = True
            boxes.append(c)
        # merge overlapping boxes so shadows and occlusions between neighbours are shared
        merged = True
        while merged:
            merged = False
            for i in range(len(boxes)):
                for j in range(i + 1, len(boxes)):
                    a, b = boxes[i], boxes[j]
                    if a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1:
                        a.x0, a.y0, a.x1, a.y1 = min(a.x0, b.x0), min(a.y0, b.y0), max(a.x1, b.x1), max(a.y1, b.y1)
                        a.balls += b.balls
                        a.pins += b.pins
                        a.cue = a.cue or b.cue
                        del boxes[j]
                        merged = True
                        break
                if merged:
                    break
        return boxes

    def _motion_px(self, balls, pins, prims, cl: _Cluster) -> float:
        """Largest image motion (px) of a cluster's objects over the probe samples."""
        pts = []
        for k in cl.balls:
            pts.append(balls[:, k, :3])
        for k in cl.pins:
            p = pins[:, k]
            h = self.table.pin_height_of(PIN_IDS[k])
            st_ = np.sin(p[:, 3])
            pts.append(p[:, :3])
            pts.append(np.column_stack([p[:, 0] + h * st_ * np.cos(p[:, 4]), p[:, 1] + h * st_ * np.sin(p[:, 4]), p[:, 2] + h * np.cos(p[:, 3])]))
        if cl.cue:
            for q in range(prims.shape[1]):
                pts.append(prims[:, q, 1:4])
                if prims[0, q, 0] < 1.5:
                    pts.append(prims[:, q, 4:7])
        best = 0.0
        S = balls.shape[0]
        for p in pts:
            px = self.camera.project(np.ascontiguousarray(p)).reshape(S, 2)
            best = max(best, float(np.sum(np.linalg.norm(np.diff(px, axis=0), axis=1))))
        return best

    def _row_span(self, y0: int, y1: int) -> tuple[float, float]:
        st = self.settings
        row_dt = st.rolling_shutter_s / self.H
        return y0 * row_dt, (y1 - 1) * row_dt + st.exposure_s

    def render_linear_boxes(self, sim: ShotSimulation, i: int):
        """(clusters, linear box images) of frame ``i`` — the moving part of a frame."""
        st = self.settings
        t0 = self.frame_time(i)
        lo, hi = self._row_span(0, self.H)
        probe_t = t0 + np.linspace(lo, hi, 5 if st.rolling_shutter_s > 0 else 3)
        balls, pins, prims = self._pack(sim, sim.sample(probe_t))
        clusters = self._boxes(self._object_extents(balls, pins, prims))
        row_dt = st.rolling_shutter_s / self.H
        out = []
        for cl in clusters:
            disp = self._motion_px(balls, pins, prims, cl)
            a, b = self._row_span(cl.y0, cl.y1)
            cap = min(st.max_blur_samples, st.max_cue_samples) if cl.cue else st.max_blur_samples
            per_exposure = int(min(cap, max(st.min_samples, math.ceil(disp / st.blur_step_px))))
            n = int(math.ceil(per_exposure * (b - a) / st.exposure_s))
            n = max(per_exposure, min(n, 8 * st.max_blur_samples))
            moving = disp > 0.05
            if moving:
                times = t0 + a + (np.arange(n) + 0.5) * (b - a) / n
                k_row_dt = row_dt
            else:  # still: one instant serves every row (global-shutter path)
                n = per_exposure
                times = np.full(n, t0 + 0.5 * st.exposure_s)
                k_row_dt = 0.0
            ws = sim.sample(times)
            cb, cp, cq = self._pack(sim, ws)
            # objects outside the cluster are not drawn in it (they are far away)
            keep_b = np.zeros(cb.shape[1], bool)
            keep_b[cl.balls] = True
            cb[:, ~keep_b, 3] = 0.0
            keep_p = np.zeros(cp.shape[1], bool)
            keep_p[cl.pins] = True
            cp[:, ~keep_p, 5] = 0.0
            if not cl.cue:
                cq[:] = 0.0
            key = None
            if not moving:  # a still box is the same image frame after frame
                key = (cl.y0, cl.x0, cl.y1, cl.x1, n, cb[0].tobytes(), cp[0].tobytes(), cq[0].tobytes())
            cached = self._box_cache.get(key) if key is not None else None
            if cached is None:
                img = np.zeros((cl.y1 - cl.y0, cl.x1 - cl.x0, 3))
                K.render_box(
                    cl.y0, cl.x0, cl.y1 - cl.y0, cl.x1 - cl.x0, self.rays, self.origin, self.focal,
                    self.bg_lin, self.bg_pt, self.bg_t, self.gain,
                    times, t0, k_row_dt, st.exposure_s, _jitter(n),
                    cb, self.table.ball_radius, self._ball_alb, cp, self._pin_kind, self._pin_prof,
                    self._pin_height, self._pin_rmax, self._pin_cols, cq, self._prim_alb,
                    self.lamps, self.ambient, self.cloth_lin, 3.5 * self.table.ball_radius,
                    float(st.blur_step_px), int(st.min_samples), img,
                )
                cached = img
            out.append((cl, cached, key))
        self._box_cache = {k: img for _, img, k in out if k is not None}
        return [(cl, img) for cl, img, _ in out]

    def render_frame(self, sim: ShotSimulation, i: int) -> np.ndarray:
        """Frame ``i`` of the clip as BGR uint8 (H, W, 3)."""
        st = self.settings
        out = np.empty((self.H, self.W, 3), np.uint8)
        off = self._noise_offset(i)
        K.finish_static(self._bg_srgb, self._bg_sd, self._noise, off, out)
        for cl, img in self.render_linear_boxes(sim, i):
            K.finish_kernel(img, cl.y0, cl.x0, self._lut, float(st.noise_sigma), self._noise, off, self.W, out)
        if st.jpeg_quality is not None:
            ok, enc = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(st.jpeg_quality)])
            out = cv2.imdecode(enc, cv2.IMREAD_COLOR)
        return out

    def frames(self, sim: ShotSimulation) -> Iterator[np.ndarray]:
        for i in range(self.n_frames(sim)):
            yield self.render_frame(sim, i)

    def frame_messages(self, sim: ShotSimulation) -> Iterator[Frame]:
        for i in range(self.n_frames(sim)):
            yield Frame(i, self.timestamp_ns(i), bgr=self.render_frame(sim, i))

    # ---- truth per frame -----------------------------------------------------------------------------
    def frame_truth(self, sim: ShotSimulation) -> dict:
        """Per-frame truth sampled at each frame's mid-exposure: every object's position and state."""
        n = self.n_frames(sim)
        idx = np.arange(n)
        t_mid = np.array([self.frame_mid_time(i) for i in idx])
        ws = sim.sample(t_mid)
        px = self.camera.project(ws.ball_xyz.reshape(-1, 3)).reshape(n, len(BALL_IDS), 2)
        frames = []
        for f in range(n):
            frames.append({
                "index": int(f),
                "timestamp_ns": self.timestamp_ns(f),
                "t": round(float(self.frame_time(f)), 6),
                "t_mid": round(float(t_mid[f]), 6),
                "balls": {b: {"xyz": [round(float(v), 3) for v in ws.ball_xyz[f, k]],
                              "px": [round(float(v), 3) for v in px[f, k]],
                              "visible": bool(ws.ball_visible[f, k])} for k, b in enumerate(BALL_IDS)},
                "pins": {p: {"xy": [round(float(v), 3) for v in ws.pin_xy[f, k]],
                             "z": round(float(ws.pin_z[f, k]), 3),
                             "tilt": round(float(ws.pin_tilt[f, k]), 5),
                             "dir": round(float(ws.pin_dir[f, k]), 5),
                             "state": int(ws.pin_state[f, k]),
                             "visible": bool(ws.pin_visible[f, k])} for k, p in enumerate(PIN_IDS)},
                "cue": {"tip": [round(float(v), 2) for v in ws.cue_tip[f]],
                        "angle": round(float(ws.cue_angle[f]), 5), "visible": bool(ws.cue_visible[f])},
            })
        return {"fps": self.settings.fps, "exposure_s": self.settings.exposure_s,
                "rolling_shutter_s": self.settings.rolling_shutter_s,
                "strike_time": float(sim.strike_time), "n_frames": n, "frames": frames}


def _jitter(n: int) -> np.ndarray:
    """Sub-pixel offsets of n samples (a rotated 2x2 grid, then the R2 sequence), centred
    on the pixel: offsets whose mean is off the centre shift the whole image by that mean
    (two samples of the grid did so by 1/4 px, a ball's centre by 1 mm at 728 px)."""
    base = np.array([[-0.125, -0.375], [0.375, -0.125], [-0.375, 0.125], [0.125, 0.375]])
    if n <= 4:
        j = base[:n]
    else:
        g = 1.32471795724474602596
        k = np.arange(n)
        j = np.column_stack([(0.5 + k / g) % 1.0 - 0.5, (0.5 + k / g**2) % 1.0 - 0.5])
    return np.ascontiguousarray(j - j.mean(axis=0))


def _json_default(o):
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def render_clip(
    sim: ShotSimulation,
    camera: CameraModel,
    settings: RenderSettings | None,
    out_dir: str | Path,
    name: str,
    table: TableSpec = DEFAULT_TABLE,
    renderer: Renderer | None = None,
) -> dict:
    """Render a whole clip to ``out_dir``: NAME.mp4, NAME.truth.json, NAME.camera.json, NAME.timestamps.txt.

    Returns {"video", "truth", "camera", "timestamps", "frames", "seconds"}.
    """
    from vision_ref.video import VideoWriter

    settings = settings or RenderSettings()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    t_start = time.perf_counter()
    r = renderer or Renderer(camera, table, settings)
    n = r.n_frames(sim)
    video = out / f"{name}.mp4"
    with VideoWriter(video, camera.width, camera.height, settings.fps, crf=settings.crf, preset=settings.preset,
                     timestamps_meta={"exposure_s": f"{settings.exposure_s:g}"}) as vw:
        for i in range(n):
            vw.write(r.render_frame(sim, i), r.timestamp_ns(i))
    record = sim.truth_record(fps=settings.fps) if _accepts_fps(sim.truth_record) else sim.truth_record()
    truth = {"record": record, "render_frames": r.frame_truth(sim)}
    if hasattr(sim, "truth_records"):  # a multi-shot sequence: every shot's record and its clip window
        truth["records"] = sim.truth_records(settings.fps)
        truth["shot_windows"] = sim.shot_windows
    if hasattr(sim, "truth_frames"):
        truth["frames"] = sim.truth_frames(settings.fps)
    truth_path = out / f"{name}.truth.json"
    truth_path.write_text(json.dumps(truth, default=_json_default, separators=(",", ":")) + "\n")
    cam_path = out / f"{name}.camera.json"
    cam_doc = {"camera": camera.to_dict(), "table": table.to_dict(), "render": settings.to_dict(), "n_frames": n,
               "frame_times": "frame i exposes row r over [t_start + i/fps + r*rolling_shutter_s/height, ... + exposure_s]"}
    cam_path.write_text(json.dumps(cam_doc, indent=1, default=_json_default) + "\n")
    from vision_ref.video import sidecar_paths

    return {"video": str(video), "truth": str(truth_path), "camera": str(cam_path),
            "timestamps": str(sidecar_paths(video)[0]), "frames": n, "seconds": time.perf_counter() - t_start}


def _accepts_fps(fn) -> bool:
    import inspect

    try:
        return "fps" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
