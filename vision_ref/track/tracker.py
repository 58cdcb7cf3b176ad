"""The tracker: frames + a calibration profile -> per-frame Observations and per-object Tracks.

Per frame, each ball is searched only in a small window around its predicted
position (constant-velocity Kalman filter per axis, in pixels), with a gate that
widens with speed and near other moving balls (a resting ball can be hit and leave
at several metres per second). In the window the numba kernels weight every pixel
by "foreground and of this ball's colour", pick the best disk-shaped peak near the
prediction and refine it to sub-pixel precision on the foreground weight within a
capsule that follows the motion-blur streak (the centroid of a streak is the ball
at mid-exposure). Objects already found this frame are masked out, so touching
balls do not pull each other. A coarse sparse-grid search over the whole table
(every 8th pixel of every 8th row) recovers lost or new objects.

Identity: the cue ball by colour (its own class weight); the two whites by
continuity, with a joint assignment when their windows overlap that refuses
hypotheses in which the balls would have passed through each other.

Pins: a tight window around a standing pin checks every frame that it has not
changed (blob area, centroid, extent); any change widens the window and the pin is
classified from its blob: standing (compact), down (long: where and which way, the
coloured band marks the head end), leaning (tilted and at rest against a ball or
pin), on the rail (outside the cushions), absent, or moving while it changes.

Positions are those at mid-exposure; ``Observations.t``/``Tracks.t`` stay the sensor
timestamps (start of exposure) and ``Tracks.exposure_s`` says how long it was.
"""

from __future__ import annotations

import math
from typing import Callable, Iterable

import cv2
import numpy as np

from vision_ref.calibrate.profile import CalibrationProfile
from vision_ref.errors import CalibrationError, SourceError
from vision_ref.messages import N_BALLS, N_PINS, BallState, Frame, Observations, PinState, Track, Tracks
from vision_ref.rules.table import BALL_IDS, PIN_IDS
from vision_ref.track import _kernels as K
from vision_ref.track.geometry import Geometry

CUE = 0
WHITES = (1, 2)
COARSE_STRIDE = 8
# the pin search over the whole cloth runs every PIN_COARSE_EVERY frames while a pin is absent
# and no ball rolls, every PIN_COARSE_LATE frames once it has been absent PIN_COARSE_LATE_AFTER
# frames (a pin off the table for good costs little then)
PIN_COARSE_EVERY = 3
PIN_COARSE_LATE = 10
PIN_COARSE_LATE_AFTER = 60
MAX_PIN_SITES = 12  # whole-cloth candidates looked at per search
PIN_SPARSE_AREA = 3600  # pin windows larger than this (px) are first sampled every 2nd pixel
# a standing pin's blob of a few pixels changes size by a fifth from frame to frame (video
# compression, a ball's shadow or mask beside it) and its length by most of a pixel: neither
# is a fall, which moves the blob's centre or stretches it (measured at 728x544, review corpus)
PIN_STAND_AREA_RANGE = (0.6, 1.5)
PIN_LENGTH_JITTER_PX = 0.8
# A pin read lying at full length and unchanged this long has lain: a ball that then rests
# against it cuts its blob short with its mask, which must not read as leaning (a lying pin
# does not rise to lean; pins lean only as they fall). Toppling pins change length every
# frame and never stay this long. Out of sight LAIN_FORGET_S, it may have been picked up.
LAIN_S = 0.06
LAIN_FORGET_S = 0.75
# a standing pin merged with a neighbour's blob stands while its own box holds this much of its area
PIN_OWN_FILL = 0.8
PIN_HOLD_S = 0.5  # longest a standing pin's state is held while its blob looks smaller with nothing in reach
PIN_WHOLE_AREA = 0.75  # a blob this share of a standing pin's nominal area is a pin without colour evidence
PIN_MIN_BAND = 0.25  # band colour weight (px) that makes a smaller blob a pin
# a pin's blob grown by half or more in one frame, with another pin's last place in it, has
# merged with that neighbour's: its centre moved towards the neighbour, not with the pin, so
# no motion is read from it (a toppling pin grows less per frame, and a flying pin's blur,
# which grows as fast, holds no other pin; review corpus, benchmarks/README.md)
PIN_MERGE_GROWTH = 1.5
# the fg residual where a ball's refinement weight saturates (_kernels.refine_ball): partly
# covered rim pixels weigh what they show. Chosen on the review corpus (benchmarks/README.md)
REFINE_FG_HI = 50.0
MAX_WIN = 256  # largest window side (pixels)
MAX_COMP = 256
MAX_MASKS = 64
REST_WINDOW_S = 4.0 / 60.0  # a ball is at rest once its readings over this long sit still (5 at 60 fps)
REST_REFRESH = 12  # a resting ball is fully re-measured at least every this many frames
# a rolling ball refined straight at its prediction is taken when it lands this near (px) and
# its blob has this much of the ball's colour (class fill; a ball's own is ~0.8, see _at_prediction)
FAST_TOL = 1.5
STREAK_REFIT_MIN = 0.5  # half streak (px) from which a blob's own axis is worth a refit
FAST_CLS = 0.5
# An object at rest whose window's image is unchanged since its rest was confirmed is where it
# was: its state is held without measuring it again. On identical frames (a table at rest,
# another ball rolling far away) the blob readings of a heap -- a ball against lying pins --
# still changed with the masks of one another's last readings, and cycled every few frames
# through "moving", "absent" and "standing" (review corpus: each cycle a pin knock no ball
# made). A pixel counts as changed past STILL_TOL levels of Y, U or V (sensor noise is a few;
# an edge moving a third of a pixel shifts by 40+), the footprint when STILL_PIXELS and
# STILL_SHARE of its pixels changed (an H.264 key frame re-quantises a few edge pixels of a
# still ball by up to ~40: 4 of a 728x544 ball's ~110 on the review corpus).
STILL_MAX = 96  # largest reference window side (px); an object in a larger window is measured as before
STILL_TOL = 28
STILL_PIXELS = 4
STILL_SHARE = 0.06
STILL_MARGIN = 1.5  # px round an object's own outline that belong to its footprint (its edge moving out)


def default_params() -> np.ndarray:
    p = np.zeros(K.N_PRM)
    p[K.P_FG_LO] = 10.0
    p[K.P_FG_HI] = 26.0
    p[K.P_REFINE_HI] = REFINE_FG_HI
    p[K.P_BRIGHT] = 0.6
    p[K.P_C_LO] = 16.0
    p[K.P_C_HI] = 34.0
    p[K.P_C_REL] = 0.3
    p[K.P_LUM_LO] = 0.3
    p[K.P_LUM_RANGE] = 0.2
    p[K.P_BAND_LO] = 12.0
    p[K.P_BAND_HI] = 30.0
    p[K.P_CHROMA_OX] = 0.5
    p[K.P_CHROMA_OY] = 0.5
    return p


def bgr_to_yuv_planes(bgr: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """BT.601 full-range Y, U, V float32 planes, the same formula the kernels use on BGR pixels."""
    f = bgr.astype(np.float32)
    b, g, r = f[:, :, 0], f[:, :, 1], f[:, :, 2]
    y = 0.299 * r + 0.587 * g + 0.114 * b
    return (np.ascontiguousarray(y), np.ascontiguousarray(128.0 + 0.564 * (b - y)),
            np.ascontiguousarray(128.0 + 0.713 * (r - y)))


def lab_to_yuv(lab) -> np.ndarray:
    """OpenCV 8-bit Lab mean -> (Y, U, V) reference of the kernels."""
    px = np.clip(np.round(np.asarray(lab, dtype=np.float64)), 0, 255).astype(np.uint8).reshape(1, 1, 3)
    bgr = cv2.cvtColor(px, cv2.COLOR_LAB2BGR)
    y, u, v = bgr_to_yuv_planes(bgr)
    return np.array([y[0, 0], u[0, 0], v[0, 0]], dtype=np.float64)


class _Kalman1D:
    """Constant-velocity Kalman filter on one pixel axis (state: position, velocity per second)."""

    __slots__ = ("x", "v", "pxx", "pxv", "pvv")

    def __init__(self, x: float):
        self.reset(x)

    def reset(self, x: float, v: float = 0.0, pos_var: float = 0.25, vel_var: float = 1.0):
        self.x, self.v = x, v
        self.pxx, self.pxv, self.pvv = pos_var, 0.0, vel_var

    def predict(self, dt: float, accel_sigma: float) -> None:
        self.x += self.v * dt
        q = accel_sigma * accel_sigma
        dt2 = dt * dt
        self.pxx += dt * (2.0 * self.pxv + dt * self.pvv) + 0.25 * dt2 * dt2 * q
        self.pxv += dt * self.pvv + 0.5 * dt2 * dt * q
        self.pvv += dt2 * q

    def update(self, z: float, r: float) -> None:
        s = self.pxx + r
        kx, kv = self.pxx / s, self.pxv / s
        e = z - self.x
        self.x += kx * e
        self.v += kv * e
        pxx, pxv, pvv = self.pxx, self.pxv, self.pvv
        self.pxx = (1.0 - kx) * pxx
        self.pxv = (1.0 - kx) * pxv
        self.pvv = pvv - kv * pxv


class _Ball:
    def __init__(self, index: int):
        self.index = index
        self.kx: _Kalman1D | None = None
        self.ky: _Kalman1D | None = None
        self.found = False  # found in the last processed frame
        self.known = False  # ever found (has a filter)
        self.state = BallState.UNKNOWN
        self.anchor = np.zeros(2)  # rest position (px), averaged while at rest
        self.anchor_n = 0
        self.recent: list[tuple[float, float]] = []
        self.lost_frames = 0
        self.conf = 0.0
        self.meas = np.full(2, np.nan)  # last measured centre (px)
        self.radius = 10.0
        self.streak = 0.0
        self.placed = False
        self.just_started = 0  # frames left of the wide gate after leaving rest
        self.rest_ref: np.ndarray | None = None  # rest probe (offset x, y, fill) when the anchor was measured
        self.full_age = 0  # frames since the last full measurement
        self.probe_failed = False  # the rest probe saw a change this frame
        self.still_held = False  # held at rest this frame by an unchanged image

    @property
    def pos(self) -> tuple[float, float]:
        return self.kx.x, self.ky.x

    @property
    def vel(self) -> tuple[float, float]:
        return self.kx.v, self.ky.v


class _Pin:
    def __init__(self, index: int):
        self.index = index
        self.cx = math.nan  # blob centroid (px) last frame
        self.cy = math.nan
        self.area = 0.0
        self.length_mm = 0.0
        self.stable = 0  # frames unchanged
        self.missing = 0
        self.state = PinState.UNKNOWN
        self.xy = np.full(2, np.nan)
        self.angle = math.nan
        self.conf = 0.0
        self.tight = False  # standing and unchanged: tight window
        self.half_extent = 0.0  # half the blob's bbox (px): the tight window's size
        self.ax, self.ay, self.half_len, self.half_wid = 1.0, 0.0, 0.0, 0.0  # blob as a capsule (px)
        self.vx = 0.0  # centroid motion (px per frame) while it moves
        self.vy = 0.0
        self.mask_key = None  # the blob the mask disks below were made for
        self.mask_disks = np.zeros((0, 3))
        self.own_blob = True  # last measured on a blob of its own (not one shared with a pin)
        self.xy_z = 0.0  # height (mm) of the point its image position was mapped at
        self.part_off = (0.0, 0.0)  # its part of a blob shared with other pins: offset (px) from the blob's centre
        self.stood_at = (math.nan, math.nan)  # image place (px) where it was last seen standing
        self.box = (0.0, 0.0, 0.0, 0.0)  # its blob's bounding box (px: x0, x1, y0, y1) when last measured
        self.held = 0  # frames its standing state has been held with nothing in reach (_held_standing)
        self.stood_row = -1  # the last history row that has it standing
        self.stand_area = 0.0  # its blob's area and half extent (px) when last measured standing
        self.stand_half = 0.0
        self.lies_full = False  # its last full measurement: lying, at a lying pin's length
        self.lain = False  # read lying, at full length and still, since it last stood (see LAIN_S)


class Tracker:
    """Track three balls and five pins frame by frame (see the module docstring).

    ``profile``: a :class:`CalibrationProfile` with a background. ``fps``: nominal frame
    rate (prediction when timestamps are missing). ``exposure_s``: exposure time, used
    for the blur-streak model (unknown: the streak is measured from the blob).
    """

    def __init__(self, profile: CalibrationProfile, fps: float, exposure_s: float | None = None, params=None):
        if not isinstance(profile, CalibrationProfile):
            raise CalibrationError("tracking needs a calibration profile (vision-ref calibrate SOURCE --out PROFILE.json)")
        if profile.background is None:
            raise CalibrationError("the calibration profile has no background image; recalibrate with the empty table in view")
        if not fps or fps <= 0:
            raise SourceError(f"fps must be positive, got {fps!r}")
        if exposure_s is not None and not (0.0 < exposure_s <= 1.0 / fps + 1e-9):
            raise SourceError(f"exposure must be in (0, 1/fps] s, got {exposure_s!r}")
        self.profile = profile
        self.table = profile.table
        self.fps = float(fps)
        self._lain_frames = max(3, round(LAIN_S * self.fps))
        self._lain_forget_frames = max(3, round(LAIN_FORGET_S * self.fps))
        self.exposure_s = exposure_s
        self.prm = default_params() if params is None else np.array(params, dtype=np.float64)
        self.chroma_siting = (float(self.prm[K.P_CHROMA_OX]), float(self.prm[K.P_CHROMA_OY]))
        self.W, self.H = profile.image_size
        self.geo = Geometry(profile.camera, profile.table)
        self.mm_px = self.geo.mm_per_px
        # motion thresholds: 1.2 mm to start moving, 0.8 mm spread over REST_WINDOW_S to be at rest,
        # but never below what measurement noise (~0.1 px) reaches at a coarse resolution
        self.start_mm = max(1.2, 0.5 * self.mm_px)
        self.rest_mm = max(0.8, 0.36 * self.mm_px)
        # readings a rest is confirmed from: a fixed time, not a fixed count (5 readings at
        # 120 fps took a cue ball creeping into a cushion at 65 mm/s for one at rest, then
        # held it there 10 mm behind: the touch was lost; random_2026_044 of the review corpus)
        self._rest_n = max(5, round(REST_WINDOW_S * fps) + 1)
        self.pad_narrow = 1.5
        self.n_narrow = 2  # narrow refinement passes (a third changes nothing measurable)
        self._bg_bgr = cv2.resize(profile.background, (self.W, self.H), interpolation=cv2.INTER_LINEAR)
        self._bg: dict[int, np.ndarray] = {}  # per input mode: the kernels' packed background (_kernels.BG_SCALE)
        self._bg_planes: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}
        self._refs(profile)
        # scratch (allocated once; the per-frame path reuses it)
        self._w_cls = np.zeros((MAX_WIN, MAX_WIN), np.float32)
        self._w_fg = np.zeros((MAX_WIN, MAX_WIN), np.float32)
        self._w_band = np.zeros((MAX_WIN, MAX_WIN), np.float32)
        self._w_u = np.zeros((MAX_WIN, MAX_WIN), np.float32)
        self._w_v = np.zeros((MAX_WIN, MAX_WIN), np.float32)
        self._prefix = np.zeros((MAX_WIN, MAX_WIN + 1), np.float64)
        self._scores = np.zeros((MAX_WIN, MAX_WIN), np.float32)
        self._labels = np.zeros((MAX_WIN, MAX_WIN), np.int32)
        self._stack = np.zeros(2 * MAX_WIN * MAX_WIN, np.int32)
        self._peaks = np.zeros((4, 3))
        self._refine = np.zeros(K.N_REFINE)
        self._rowbits = np.zeros(MAX_WIN, np.int64)
        self._no_ref = np.zeros(0)
        self._probe_out = np.zeros(3)
        self._blob = np.zeros(K.N_BLOB)
        self._pin_stats = np.zeros((32, K.N_BLOB))
        g = MAX_WIN // 2 + 1  # the 2-pixel grid of a wide pin window
        self._g_region = np.ones((g, g), np.uint8)
        self._g_fg = np.zeros((g, g), np.float32)
        self._g_white = np.zeros((g, g), np.float32)
        self._g_cue = np.zeros((g, g), np.float32)
        self._g_labels = np.zeros((g, g), np.int32)
        self._g_stats = np.zeros((MAX_COMP, K.N_STAT))
        self._masks = np.zeros((MAX_MASKS, 3))
        self._wmasks = np.zeros((MAX_MASKS, 3))
        self._empty3 = np.zeros((1, 1, 3), np.uint8)
        self._empty2 = np.zeros((1, 1), np.uint8)
        self._empty_uv = np.zeros((1, 1, 2), np.uint8)
        self._coarse_setup()
        self._pin_setup()
        self.balls = [_Ball(i) for i in range(N_BALLS)]
        self.pins = [_Pin(i) for i in range(N_PINS)]
        self.last_index: int | None = None
        self.last_t: float | None = None
        self.table_moving = False
        self._still_frames = 0
        self._frames_since_coarse = 10**6
        self._dropped: list[int] = []
        self._hist = _History()
        self.coarse_runs = 0
        self.fast_hits = 0  # balls found at their prediction without a window search
        self._cls_fill = 0.0
        self._frame_count = 0
        self._siting_known = False
        self._n_pin_masks = 0
        self._obs_px = np.zeros((N_BALLS, 2))
        self._bp_cache: dict[tuple[float, float], tuple[float, float]] = {}
        self._pin_mask_sig = None  # the resting pins' mask disks of the last frame: signature and rows
        self._pin_mask_rows = np.zeros((0, 3))
        # still-image references: balls 0..2, then pins (N_BALLS + k)
        self._still_ref = np.zeros((N_BALLS + N_PINS, STILL_MAX, STILL_MAX, 3), np.uint8)
        self._still_out = np.zeros(2, np.int64)
        # each held reference's box (x0, y0, w, h, cx, cy, ux, uy, hl, rad: window px) and
        # whether one is held; one array for the frame's batched check (_still_batch), which
        # answers for the boxes held when the frame came in (a box taken later is checked alone)
        self._still_boxes = np.zeros((N_BALLS + N_PINS, 10))
        self._still_active = np.zeros(N_BALLS + N_PINS, np.bool_)
        self._still_res = np.zeros((N_BALLS + N_PINS, 2), np.int64)
        self._still_fresh = [False] * (N_BALLS + N_PINS)
        self._still_masks: list[tuple] = [()] * (N_BALLS + N_PINS)  # a pin's: ball masks over it then
        self._n_ball_masks = 0
        self.still_holds = 0  # object-frames held by an unchanged image (tests read it)

    # ---- set-up -------------------------------------------------------------------------------
    def _refs(self, profile: CalibrationProfile) -> None:
        cols = profile.colours
        from vision_ref.sim import appearance as A  # nominal colours when the profile has none

        def nominal(rgb):
            bgr = np.array([[[rgb[2], rgb[1], rgb[0]]]], np.uint8)
            y, u, v = bgr_to_yuv_planes(bgr)
            return np.array([y[0, 0], u[0, 0], v[0, 0]])

        self.ref_white = lab_to_yuv(cols["white"].mean) if "white" in cols else nominal(A.OBJECT_BALL_RGB)
        self.ref_cue = lab_to_yuv(cols["cue"].mean) if "cue" in cols else nominal(A.DEFAULT_CUE_BALL_RGB)
        self.refs = [self.ref_cue, self.ref_white.copy(), self.ref_white.copy()]

    def _coarse_setup(self) -> None:
        s = COARSE_STRIDE
        t = self.table
        self.c_y0 = s // 2
        self.c_x0 = s // 2
        self.c_gh = (self.H - self.c_y0 + s - 1) // s
        self.c_gw = (self.W - self.c_x0 + s - 1) // s
        ys = self.c_y0 + s * np.arange(self.c_gh)
        xs = self.c_x0 + s * np.arange(self.c_gw)
        gx, gy = np.meshgrid(xs, ys)
        pts = self.geo.plane_at(np.column_stack([gx.ravel(), gy.ravel()]).astype(np.float64), 0.0)
        reach_x = t.half_length + t.cushion_width + t.rail_width
        reach_y = t.half_width + t.cushion_width + t.rail_width
        inside = (np.abs(pts[:, 0]) <= reach_x) & (np.abs(pts[:, 1]) <= reach_y)
        self.c_region = np.ascontiguousarray(inside.reshape(self.c_gh, self.c_gw).astype(np.uint8))
        self.c_fg = np.zeros((self.c_gh, self.c_gw), np.float32)
        self.c_white = np.zeros((self.c_gh, self.c_gw), np.float32)
        self.c_cue = np.zeros((self.c_gh, self.c_gw), np.float32)
        self.c_labels = np.zeros((self.c_gh, self.c_gw), np.int32)
        self.c_stack = np.zeros(2 * self.c_gh * self.c_gw, np.int32)
        self.c_stats = np.zeros((MAX_COMP, K.N_STAT))
        # the pin grid: the cloth only (a pin put back by hand stands on the cloth). A standing
        # pin seen from above is a disk ~2 top radii across, and a disk of diameter d always
        # holds a point of a square lattice of spacing d/sqrt(2) (with a margin: d/1.6)
        pin_d = 2.0 * min(t.pin_top_radius(p) for p in PIN_IDS) / self.mm_px
        s = self.pin_coarse_stride = int(min(max(pin_d / 1.6, 2.0), 6.0))
        self.pc_y0 = self.pc_x0 = s // 2
        self.pc_gh = (self.H - self.pc_y0 + s - 1) // s
        self.pc_gw = (self.W - self.pc_x0 + s - 1) // s
        ys = self.pc_y0 + s * np.arange(self.pc_gh)
        xs = self.pc_x0 + s * np.arange(self.pc_gw)
        gx, gy = np.meshgrid(xs, ys)
        pts = self.geo.plane_at(np.column_stack([gx.ravel(), gy.ravel()]).astype(np.float64), 0.0)
        inside = (np.abs(pts[:, 0]) <= t.half_length) & (np.abs(pts[:, 1]) <= t.half_width)
        self.pc_region = np.ascontiguousarray(inside.reshape(self.pc_gh, self.pc_gw).astype(np.uint8))
        self.pc_fg = np.zeros((self.pc_gh, self.pc_gw), np.float32)
        self.pc_white = np.zeros((self.pc_gh, self.pc_gw), np.float32)
        self.pc_cue = np.zeros((self.pc_gh, self.pc_gw), np.float32)
        self.pc_labels = np.zeros((self.pc_gh, self.pc_gw), np.int32)
        self.pc_stack = np.zeros(2 * self.pc_gh * self.pc_gw, np.int32)
        self._frames_since_pin_coarse = 10**6
        self.pin_coarse_runs = 0

    def _pin_setup(self) -> None:
        t = self.table
        spots = np.array([t.pin_spot(p) for p in PIN_IDS])
        self.pin_h = np.array([t.pin_height_of(p) for p in PIN_IDS])
        self.cam_centre = self.profile.camera.centre_world
        # a standing pin's blob from above is centred near its widest part and head
        self.pin_zeff = 0.5 * self.pin_h
        pts = np.column_stack([spots, self.pin_zeff])
        self.pin_spot_px = self.geo.point_px(pts)
        self.pin_len_px = (self.pin_h / self.mm_px).tolist()
        self.white_spot_px = self.geo.ball_px(np.array([t.ball_spot(1), t.ball_spot(3)]))
        self.pin_stand_r_px = np.array([t.pin_top_radius(p) for p in PIN_IDS]) / self.mm_px
        self._pin_r = self.pin_stand_r_px.tolist()  # (the same values as Python floats, for the per-frame path)
        # smallest blob still taken for a pin: about half of a standing pin seen from above
        # (a cloth mark blurred by compression is a quarter of that)
        self.pin_min_area = 0.55 * math.pi * self.pin_stand_r_px**2
        self.pin_area_nominal = 1.2 * math.pi * self.pin_stand_r_px**2
        # a lying pin seen from above: its length times about 0.7 of its widest diameter
        self.pin_lying_area = self.pin_h / self.mm_px * 1.4 * self.pin_stand_r_px
        # a 2-pixel sampling grid surely crosses a lying pin only when its base is 4+ px wide
        # (1456x1088: 5.4 px); coarser footage reads wide pin windows at full resolution
        self._pin_sparse_ok = t.pin_base_diameter / self.mm_px >= 4.0

    def _background(self, mode: int, frame: Frame) -> np.ndarray:
        """The background in the input's representation, packed for the kernels (built on first use of a mode)."""
        if mode in self._bg:
            return self._bg[mode]
        bgy, bgu, bgv = bgr_to_yuv_planes(self._bg_bgr)
        if mode == K.MODE_YUV:
            packed = K.pack_background(bgy, bgu, bgv)
            # a YUV source has its own range and matrix (video: limited range; the Pi: full):
            # fit gain and offset per channel robustly on a sparse grid of the first frame
            fr = np.zeros((60000, 3))
            bg = np.zeros((60000, 3))
            n = K.sample_pairs(mode, self._empty3, frame.y, frame.uv, packed, 6, self.prm, fr, bg)
            fr, bg = fr[:n], bg[:n]
            planes = [bgy, bgu, bgv]
            for c in range(3):
                a, b = _robust_line(bg[:, c], fr[:, c])
                planes[c] = np.ascontiguousarray((a * planes[c] + b).astype(np.float32))
            bgy, bgu, bgv = planes
        self._bg_planes[mode] = (bgy, bgu, bgv)
        self._bg[mode] = K.pack_background(bgy, bgu, bgv)
        return self._bg[mode]

    def _measure_chroma_siting(self, frame: Frame) -> tuple[float, float] | None:
        """Where this source puts its chroma samples, measured on the white balls.

        A white ball on the cloth is a symmetric blob in both planes: its centroid in the
        luma plane (L, full-resolution pixels) and in the chroma plane (c, chroma samples)
        give the siting directly, whatever filter the source used: L = 2c + offset.
        Sources differ (a Pi ISP, an H.264 decoder, OpenCV's I420), and half a pixel is
        a millimetre at 1456x1088.
        """
        bgy, bgu, bgv = self._bg_planes[K.MODE_YUV]
        offs = []
        for b in self.balls[1:]:
            if not b.found:
                continue
            x, y = b.meas
            r = b.radius + 4.0
            x0, x1 = int(max(x - r, 0)) & ~1, int(min(x + r, self.W - 2)) | 1
            y0, y1 = int(max(y - r, 0)) & ~1, int(min(y + r, self.H - 2)) | 1
            lum = frame.y[y0:y1 + 1, x0:x1 + 1].astype(np.float64) - bgy[y0:y1 + 1, x0:x1 + 1]
            wl = np.clip((lum - 10.0) / 30.0, 0.0, 1.0)
            if wl.sum() < 20:
                continue
            jj, ii = np.mgrid[y0:y1 + 1, x0:x1 + 1]
            lx, ly = (wl * ii).sum() / wl.sum(), (wl * jj).sum() / wl.sum()
            cy0, cx0 = y0 // 2, x0 // 2
            uv = frame.uv[cy0:(y1 + 1) // 2, cx0:(x1 + 1) // 2].astype(np.float64)
            cloth = np.median(np.concatenate([uv[0], uv[-1], uv[:, 0], uv[:, -1]]), axis=0)
            wc = np.clip((np.hypot(*(uv - cloth).transpose(2, 0, 1)) - 8.0) / 20.0, 0.0, 1.0)
            if wc.sum() < 5:
                continue
            cj, ci = np.mgrid[cy0:cy0 + uv.shape[0], cx0:cx0 + uv.shape[1]]
            cx, cy = (wc * ci).sum() / wc.sum(), (wc * cj).sum() / wc.sum()
            offs.append((lx - 2.0 * cx, ly - 2.0 * cy))
        if not offs:
            return None
        ox, oy = np.mean(offs, axis=0)
        if not (-1.5 < ox < 2.5 and -1.5 < oy < 2.5):
            return None
        return float(ox), float(oy)

    def _ball_point(self, x: float, y: float) -> tuple[float, float]:
        """geo.ball_point, remembered for the points asked again (a resting ball's place, frame after frame)."""
        key = (x, y)
        r = self._bp_cache.get(key)
        if r is None:
            if len(self._bp_cache) >= 64:
                self._bp_cache.clear()
            r = self._bp_cache[key] = self.geo.ball_point(x, y)
        return r

    # ---- per frame -----------------------------------------------------------------------------
    def mark_dropped(self, frame_index: int) -> None:
        """Record a frame the source lost (it becomes a gap in the tracks, never interpolated)."""
        self._dropped.append(int(frame_index))

    @property
    def n_rows(self) -> int:
        return self._hist.n

    def _planes(self, frame: Frame):
        if not isinstance(frame, Frame):
            raise SourceError(f"tracker.update expects a Frame, got {type(frame).__name__}")
        h, w = frame.shape
        self.profile.check_frame_size(w, h)
        if frame.y is not None:
            if frame.uv is None:
                raise SourceError(f"frame {frame.index}: a Y plane without its UV plane; the cue ball is found by colour")
            return K.MODE_YUV, self._empty3, np.ascontiguousarray(frame.y), np.ascontiguousarray(frame.uv)
        bgr = frame.bgr
        if bgr.dtype != np.uint8:
            raise SourceError(f"frame {frame.index}: expected uint8 pixels, got {bgr.dtype}")
        return K.MODE_BGR, np.ascontiguousarray(bgr), self._empty2, self._empty_uv

    def update(self, frame: Frame, observe: bool = True) -> Observations | None:
        """Track one frame: its row of the tracks, and (``observe``) this frame's
        :class:`Observations` message. A caller that reads only the tracks (review, the
        live loop) passes ``observe=False`` and gets None: the message's copies and checks
        are some 5 % of a frame's cost at 728x544."""
        mode, bgr, yp, uvp = self._planes(frame)
        if self.last_index is not None and frame.index <= self.last_index:
            raise SourceError(f"frames out of order: frame {frame.index} after frame {self.last_index}")
        t = frame.t
        if self.last_t is not None and t <= self.last_t:
            raise SourceError(f"frame {frame.index}: timestamp {t:.6f} s is not after the previous frame's {self.last_t:.6f} s")
        # the time step comes from the timestamps, so dropped frames just make a longer prediction
        dt = 1.0 / self.fps if self.last_t is None else t - self.last_t
        bg = self._background(mode, frame)
        self._ctx = (mode, bgr, yp, uvp, bg)
        self._dt = dt
        self._still_batch()
        self._frame_count += 1
        self._mask_resting_pins()
        self._track_balls(dt)
        if mode == K.MODE_YUV and not self._siting_known:
            siting = self._measure_chroma_siting(frame)
            if siting is not None:
                self._siting_known = True
                self.chroma_siting = siting
                self.prm[K.P_CHROMA_OX], self.prm[K.P_CHROMA_OY] = siting
                centred = abs(siting[0] - 0.5) < 0.15 and abs(siting[1] - 0.5) < 0.15
                self.prm[K.P_CHROMA_NEAREST] = 1.0 if centred else 0.0
                for b in self.balls:  # measured with the assumed siting: measure again
                    b.found = False
                for obj in range(N_BALLS + N_PINS):
                    self._still_drop(obj)
                self._mask_resting_pins()
                self._track_balls(0.0)
        self._track_pins()
        obs = self._observations(frame, observe)
        self.last_index = frame.index
        self.last_t = t
        return obs

    # ---- still image --------------------------------------------------------------------------
    def _still_take(self, obj: int, cx: float, cy: float, ux: float, uy: float, hl: float, rad: float) -> None:
        """Keep the image of an object just confirmed at rest (see STILL_TOL): its footprint,
        the capsule (cx, cy) +- hl (ux, uy) of radius rad (px)."""
        half = hl + rad + 1.0
        x0, y0, w, h = self._window(cx, cy, half)
        if not (0 < w <= STILL_MAX and 0 < h <= STILL_MAX):
            self._still_drop(obj)
            return
        mode, bgr, yp, uvp, bg = self._ctx
        K.still_patch_grab(mode, bgr, yp, uvp, y0, x0, h, w, self._still_ref[obj])
        self._still_boxes[obj] = (x0, y0, w, h, cx - x0, cy - y0, ux, uy, hl, rad)
        self._still_active[obj] = True
        self._still_fresh[obj] = False  # this frame's batched answer was for the old box (if any)
        self._still_masks[obj] = self._ball_masks_over(obj) if obj >= N_BALLS else ()

    def _ball_masks_over(self, obj: int) -> tuple:
        """The balls' masks (this frame's) that reach a pin's tight window: what hid part of it
        from its reading."""
        p = self.pins[obj - N_BALLS]
        half = self._pin_tight_half(p)
        out = []
        for mx, my, mr in self._masks[:self._n_ball_masks].tolist():
            if abs(mx - p.cx) <= half + mr and abs(my - p.cy) <= half + mr:
                # (to the pixel: a resting ball's averaged place drifts by hundredths)
                out.append((round(mx), round(my), round(mr)))
        return tuple(out)

    def _still_take_pin(self, p: _Pin) -> None:
        """A resting pin's footprint: its blob as a capsule (the masking one), a margin round it.

        A pin read while a ball's mask covered part of it may have been read as only that
        part (a lying pin's base end, read standing): its hold also needs those masks
        unchanged, so once the ball moves on the pin is read again, whole."""
        span = max(p.half_len - p.half_wid, 0.0)
        self._still_take(N_BALLS + p.index, p.cx, p.cy, p.ax, p.ay, span, p.half_wid + STILL_MARGIN)

    def _still_drop(self, obj: int) -> None:
        self._still_active[obj] = False
        self._still_fresh[obj] = False

    def _still_batch(self) -> None:
        """Check every held still image against this frame at once (see _still_unchanged)."""
        active = self._still_active
        if not active.any():
            return
        mode, bgr, yp, uvp, bg = self._ctx
        K.still_patches_changed(mode, bgr, yp, uvp, self._still_boxes, active, self._still_ref, STILL_TOL,
                                self._still_res)
        self._still_fresh = active.tolist()

    def _still_unchanged(self, obj: int) -> bool:
        """The image around a resting object is as it was when its rest was confirmed."""
        if not self._still_active[obj]:
            return False
        if self._still_masks[obj] and self._ball_masks_over(obj) != self._still_masks[obj]:
            self._still_drop(obj)
            return False
        if self._still_fresh[obj]:
            n_in, n_changed = self._still_res[obj].tolist()
        else:
            x0, y0, w, h, fx, fy, ux, uy, hl, rad = self._still_boxes[obj].tolist()
            mode, bgr, yp, uvp, bg = self._ctx
            out = self._still_out
            K.still_patch_changed(mode, bgr, yp, uvp, int(y0), int(x0), int(h), int(w), self._still_ref[obj],
                                  STILL_TOL, fx, fy, ux, uy, hl, rad, out)
            n_in, n_changed = out.tolist()
        if n_changed >= max(STILL_PIXELS, STILL_SHARE * n_in):
            self._still_drop(obj)  # something moved there: measure it (and keep a new one at rest)
            return False
        self.still_holds += 1
        return True

    # ---- balls --------------------------------------------------------------------------------
    def _gate(self, b: _Ball, dt: float) -> float:
        """Search radius (px) around the prediction.

        Rolling freely a ball keeps to its constant-velocity prediction (friction takes
        a few px per frame at most); only a cushion, another ball or a pin can turn it,
        so the gate opens to a full frame's travel only near those.
        """
        kx, ky = b.kx, b.ky
        speed = math.hypot(kx.v, ky.v) * dt  # px this frame
        base = 3.0 + 3.0 * math.sqrt(max(kx.pxx, ky.pxx))
        if b.state == BallState.AT_REST:
            g = base
            if b.probe_failed:  # something changed there: it may have been struck
                g = max(g, 12000.0 * dt / self.mm_px)
        elif b.just_started > 0:
            # struck: it may leave at up to ~12 m/s within the very next frame
            g = max(base + speed, 12000.0 * dt / self.mm_px)
        else:
            g = base + 0.3 * speed
            t = self.table
            bx, by = kx.x, ky.x
            mx, my = self._ball_point(bx, by)
            reach = t.ball_radius + 1.5 * speed * self.mm_px + 5.0
            if abs(mx) > t.half_length - reach or abs(my) > t.half_width - reach:
                g = base + 1.1 * speed
            else:
                for p in self.pins:
                    if not math.isnan(p.cx) and math.hypot(p.cx - bx, p.cy - by) < (
                            b.radius + self.pin_len_px[p.index] + 2.0 * speed):
                        g = max(g, base + 0.6 * speed)
                        break
        # another ball near enough to touch this one by the next frame: either can be turned
        px, py = kx.x, ky.x
        for o in self.balls:
            if o is b or not o.known:
                continue
            okx, oky = o.kx, o.ky
            ospeed = math.hypot(okx.v, oky.v) * dt
            if ospeed < 0.5 and speed < 0.5:
                continue
            if math.hypot(okx.x - px, oky.x - py) < 2.2 * b.radius + 2.0 * (ospeed + speed):
                g = max(g, 4.0 + 1.1 * max(ospeed, speed))
        return min(g, 0.5 * MAX_WIN - 40.0)

    def _window(self, cx: float, cy: float, half: float) -> tuple[int, int, int, int]:
        half = min(half, 0.5 * MAX_WIN - 1)
        x0 = max(int(math.floor(cx - half)), 0)
        y0 = max(int(math.floor(cy - half)), 0)
        x1 = min(int(math.ceil(cx + half)) + 1, self.W)
        y1 = min(int(math.ceil(cy + half)) + 1, self.H)
        return x0, y0, max(x1 - x0, 0), max(y1 - y0, 0)

    def _push_mask(self, cx: float, cy: float, r: float) -> None:
        m = self._n_masks
        self._masks[m, 0] = cx
        self._masks[m, 1] = cy
        self._masks[m, 2] = r
        self._n_masks = m + 1

    def _streak(self, b: _Ball) -> tuple[float, float, float]:
        """(ux, uy, half length px) of the blur streak expected for this ball this frame."""
        vx, vy = b.kx.v, b.ky.v
        sp = math.hypot(vx, vy)
        if sp < 1e-6 or b.state == BallState.AT_REST:
            return 1.0, 0.0, 0.0
        if self.exposure_s is not None:
            hl = 0.5 * sp * self.exposure_s
        else:
            hl = 0.5 * b.streak
        return vx / sp, vy / sp, hl

    def _window_masks(self, x0: int, y0: int, w: int, h: int) -> int:
        """Copy the masks that touch a window into the compact buffer; returns how many."""
        return K.select_masks(self._masks, self._n_masks, x0, y0, w, h, self._wmasks)

    def _search(self, b: _Ball, cx: float, cy: float, gate: float):
        """Window search around (cx, cy): up to 3 peaks (x, y, fill, None) in frame px.

        The colour-class map is sampled every 2nd pixel when the gate is wide (the disk
        of a ball still covers dozens of cells); the refinement reads full resolution.
        """
        mode, bgr, yp, uvp, bg = self._ctx
        ux, uy, hl = self._streak(b)
        r = b.radius
        x0, y0, w, h = self._window(cx, cy, gate + r + hl + 4.0)
        if w < 2 * r + 3 or h < 2 * r + 3:
            return []
        step = 3 if gate > 20.0 else 2 if gate > 4.0 else 1
        gw, gh = (w + step - 1) // step, (h + step - 1) // step
        nm = self._window_masks(x0, y0, w, h)
        K.class_grid(mode, bgr, yp, uvp, bg, y0, x0, gh, gw, step, self.refs[b.index], self.prm,
                     self._wmasks, nm, self._w_cls)
        # the disk search uses a slightly smaller disk than the ball (edges, streaks)
        n = K.disk_scores(self._w_cls, gh, gw, max((r - 1.0) / step, 1.5), (cx - x0) / step, (cy - y0) / step,
                          gate / step, 1, self._prefix, self._scores)
        if n == 0:
            return []
        k = K.top_peaks(self._scores, gh, gw, r / step, 0.22, 3, self._peaks)
        self._win = (ux, uy, hl, r)
        return [(x0 + step * self._peaks[q, 0], y0 + step * self._peaks[q, 1], float(self._peaks[q, 2]), None)
                for q in range(k)]

    def _refine_at(self, x: float, y: float, ux: float, uy: float, hl: float, r: float, n_wide: int, ref=None):
        """Refine a ball near (x, y) on the full-resolution foreground; the result in frame px or None.

        With ``ref`` (a colour reference) the colour-class fill of the refined capsule is kept
        in ``self._cls_fill``."""
        mode, bgr, yp, uvp, bg = self._ctx
        x0, y0, w, h = self._window(x, y, r + hl + 4.5)  # the wide pass reaches r + 2.5 (+ the start's error)
        if w < 3 or h < 3:
            return None
        nm = self._window_masks(x0, y0, w, h)
        self._cls_fill = K.refine_ball(mode, bgr, yp, uvp, bg, y0, x0, h, w, self.prm, self._wmasks, nm,
                                       self._rowbits, self._w_fg, x - x0, y - y0, ux, uy, hl, r, n_wide, self.n_narrow,
                                       self.pad_narrow, self._no_ref if ref is None else ref, self._refine)
        res = self._refine
        if res[K.R_SUMW] <= 0 or res[K.R_FILL] < 0.45:
            return None
        out = res.copy()
        out[K.R_CX] += x0
        out[K.R_CY] += y0
        return out

    def _at_prediction(self, b: _Ball):
        """The cheap path of a ball rolling as predicted: refine straight at the prediction.

        A freely rolling ball is found within a few tenths of a pixel of its constant-velocity
        prediction (median 0.1 px, 95 % within 0.3-1.8 px on the benchmark clips); the refinement's
        wide pass holds the whole ball from up to ~2 px off, so it lands where a search's peak
        would have led it. Taken only when it lands within FAST_TOL px of the prediction and the
        blob has this ball's colour (the cue ball is not a white); anything else -- a collision, a
        cushion, a pin, a ball arriving -- falls back to the window search."""
        ux, uy, hl = self._streak(b)
        px, py = b.pos
        res = self._refine_at(px, py, ux, uy, hl, b.radius, 1, self.refs[b.index])
        if res is None or self._cls_fill < FAST_CLS or math.hypot(res[K.R_CX] - px, res[K.R_CY] - py) > FAST_TOL:
            return None
        self._win = (ux, uy, hl, b.radius)
        return self._refit_streak((res[K.R_CX], res[K.R_CY], min(1.0, self._cls_fill), None), res)

    def _refined(self, cand):
        """Sub-pixel refinement of a peak of the last search; None when it holds no ball."""
        ux, uy, hl, r = self._win
        res = self._refine_at(cand[0], cand[1], ux, uy, hl, r, 1)
        if res is None:
            return None
        return self._refit_streak(cand, res)

    def _refit_streak(self, cand, res):
        """The refined candidate, refitted along the blob's own axis when that differs from the predicted one."""
        ux, uy, hl, r = self._win
        # the streak seen may differ from the one predicted (a collision or cushion changed the
        # direction): refit along the measured axis
        axis, length = _streak_of(res)
        if length > 6.0:  # shorter streaks give no reliable axis
            mux, muy = math.cos(axis), math.sin(axis)
            turn = abs(mux * ux + muy * uy)
            # with a known exposure the predicted length is kept (a pin pushed ahead of the ball
            # would lengthen the measured one); only the direction is taken from the blob
            new_hl = hl if (self.exposure_s is not None and hl > 0.0) else 0.5 * length
            # a capsule shorter than a pixel is a disk whichever way it points: no refit for its direction
            if (turn < 0.96 and max(hl, new_hl) >= STREAK_REFIT_MIN) or abs(new_hl - hl) > 1.5:
                res = self._refine_at(res[K.R_CX], res[K.R_CY], mux, muy, new_hl, r, 1)
                if res is None:
                    return None
        return (res[K.R_CX], res[K.R_CY], cand[2], res)

    def _accept(self, b: _Ball, cand, dt: float) -> None:
        x, y, fill, res = cand
        x, y, fill = float(x), float(y), float(fill)
        if (b.still_held and b.state == BallState.AT_REST
                and math.hypot(x - b.anchor[0], y - b.anchor[1]) * self.mm_px > self.start_mm):
            # its image is unchanged since it came to rest: a reading pulled away by a
            # neighbour's mask or a search's other peak, not a start
            self._held_at_anchor(b)
            return
        b.found = True
        b.lost_frames = 0
        meas = b.meas
        meas[0] = x
        meas[1] = y
        b.conf = float(min(1.0, max(0.0, res[K.R_FILL])) * min(1.0, fill / 0.6))
        # streak length from the covariance: a blurred disk has along-axis variance r^2/4 + L^2/12
        b.streak = _streak_of(res)[1]
        r_meas = 0.05 if b.state == BallState.AT_REST else 0.3
        if b.streak > 3.0:
            r_meas += 0.02 * b.streak
        b.kx.update(x, r_meas)
        b.ky.update(y, r_meas)
        self._motion_state(b, x, y)
        b.full_age = 0
        b.rest_ref = self._probe(b).copy() if b.state == BallState.AT_REST else None
        if b.state == BallState.AT_REST:
            self._still_take(b.index, b.anchor[0], b.anchor[1], 1.0, 0.0, 0.0, b.radius + STILL_MARGIN)
        else:
            self._still_drop(b.index)
        self._push_mask(x, y, b.radius + 0.5)

    def _motion_state(self, b: _Ball, x: float, y: float) -> None:
        mm = self.mm_px
        b.recent.append((x, y))
        if len(b.recent) > self._rest_n + 1:
            b.recent.pop(0)
        if b.state == BallState.AT_REST:
            d = math.hypot(x - b.anchor[0], y - b.anchor[1]) * mm
            if d > self.start_mm:
                b.state = BallState.MOVING
                b.just_started = 2
                b.anchor_n = 0
                n = len(b.recent)
                if n >= 2:
                    vx = (b.recent[-1][0] - b.recent[-2][0]) / self._dt
                    vy = (b.recent[-1][1] - b.recent[-2][1]) / self._dt
                    b.kx.reset(x, vx, 0.3, 4.0 * vx * vx + 100.0)
                    b.ky.reset(y, vy, 0.3, 4.0 * vy * vy + 100.0)
            else:
                n = min(b.anchor_n, 60)
                ax, ay = b.anchor.tolist()
                b.anchor = np.array([(ax * n + x) / (n + 1), (ay * n + y) / (n + 1)])
                b.anchor_n += 1
                b.kx.v = 0.0
                b.ky.v = 0.0
            return
        # moving (or unknown): at rest once the measurements of the last REST_WINDOW_S sit
        # within rest_mm of their centre and do not drift one way (a ball creeping to a stop,
        # taken for one at rest, is held at its anchor while its image changes too slowly to
        # show: 10 mm behind, its last cushion touch lost)
        rec = b.recent
        n = self._rest_n
        if len(rec) >= n and math.hypot(rec[-1][0] - rec[-2][0], rec[-1][1] - rec[-2][1]) * mm < 1.6:
            pts = rec[-n:]
            cx = sum(p[0] for p in pts) / n
            cy = sum(p[1] for p in pts) / n
            if (max(math.hypot(p[0] - cx, p[1] - cy) for p in pts) * mm < self.rest_mm
                    and _drift(pts) * mm < 0.5 * self.rest_mm):
                b.state = BallState.AT_REST
                b.anchor = np.array([cx, cy])
                b.anchor_n = 5
                b.kx.reset(cx, 0.0, 0.02, 1.0)
                b.ky.reset(cy, 0.0, 0.02, 1.0)
                self._backdate_rest(b.index, n - 1)
                return
        b.state = BallState.MOVING
        if b.just_started > 0:
            b.just_started -= 1

    def _backdate_rest(self, ball: int, n: int) -> None:
        """Rest is confirmed a few frames late: mark those rows at rest in the history too."""
        h = self._hist
        rows = h.ball_state[max(h.n - n, 0):h.n, ball]
        rows[rows == BallState.MOVING] = BallState.AT_REST

    def _start_ball(self, b: _Ball, x: float, y: float) -> None:
        b.kx = _Kalman1D(x)
        b.ky = _Kalman1D(y)
        b.kx.reset(x, 0.0, 1.0, 400.0)
        b.ky.reset(y, 0.0, 1.0, 400.0)
        b.known = True
        b.state = BallState.AT_REST  # until it moves (see _coarse)
        b.anchor = np.array([x, y], dtype=np.float64)
        b.anchor_n = 0
        b.recent.clear()
        b.radius = self.geo.ball_radius_px(x, y)

    def _track_balls(self, dt: float) -> None:
        accel = 4000.0 / self.mm_px  # px/s^2: rolling friction and cushions/collisions (via the gate)
        for b in self.balls:
            b.found = False
            b.still_held = False
            if b.known and b.state != BallState.AT_REST:  # a resting ball stays put (the probe watches it)
                b.kx.predict(dt, accel)
                b.ky.predict(dt, accel)
                b.radius = self.geo.ball_radius_px(b.kx.x, b.ky.x)
        known = [b for b in self.balls if b.known and b.state not in (BallState.OFF_TABLE, BallState.IN_HAND)]
        # balls at rest first (their measurements are the most certain), then by speed
        known.sort(key=lambda b: (b.state != BallState.AT_REST, math.hypot(b.kx.v, b.ky.v)))
        gates = {b.index: self._gate(b, dt) for b in known}
        w1, w2 = self.balls[1], self.balls[2]
        joint = (w1 in known and w2 in known and
                 math.hypot(w1.kx.x - w2.kx.x, w1.ky.x - w2.ky.x)
                 < gates[1] + gates[2] + 2.5 * max(w1.radius, w2.radius))
        done: set[int] = set()
        for b in known:
            if b.index in done:
                continue
            if self._still_at_rest(b, gates[b.index]):
                done.add(b.index)
                continue
            if b.probe_failed:
                gates[b.index] = self._gate(b, dt)
            if joint and b.index in WHITES:
                self._track_whites_jointly(w1, w2, gates, dt)
                done.update(WHITES)
                continue
            if b.state == BallState.MOVING and b.just_started == 0 and b.lost_frames == 0:
                best = self._at_prediction(b)
                if best is not None:
                    self._accept(b, best, dt)
                    done.add(b.index)
                    self.fast_hits += 1
                    continue
            cands = self._search(b, b.pos[0], b.pos[1], gates[b.index])
            best = self._pick(b, cands, gates[b.index])
            if best is not None:
                self._accept(b, best, dt)
            done.add(b.index)
        self._separate_touching()
        for b in self.balls:
            if b.found and not self._on_cloth(*b.meas.tolist()):
                b.state = BallState.OFF_TABLE  # over the cushion: in the air or on the rail
                b.found = False
        lost = [b for b in self.balls if not b.found]
        self._frames_since_coarse += 1
        if lost and (self._frames_since_coarse >= 4 or any(b.lost_frames < 3 for b in lost)):
            self._coarse(lost)
        for b in self.balls:
            if not b.found:
                self._lost(b)

    def _probe(self, b: _Ball) -> np.ndarray:
        mode, bgr, yp, uvp, bg = self._ctx
        x, y = b.anchor.tolist()
        rho = b.radius + 1.5
        nm = K.select_masks(self._masks, self._n_masks, int(x - rho), int(y - rho), int(2 * rho + 2), int(2 * rho + 2),
                            self._wmasks)
        K.rest_probe(mode, bgr, yp, uvp, bg, x, y, rho, 2, self.prm, self._wmasks, nm, self._probe_out)
        return self._probe_out

    def _still_at_rest(self, b: _Ball, gate: float) -> bool:
        """The cheap path for a resting ball: a sparse probe says nothing changed there.

        Only while nothing moving can reach it (the gate is the resting one) and a full
        measurement is at most REST_REFRESH frames old; the position stays the averaged anchor.
        """
        b.full_age += 1
        b.probe_failed = False
        b.still_held = b.state == BallState.AT_REST and self._still_unchanged(b.index)
        if b.still_held:
            # not a pixel of it changed: held without a probe; measured every REST_REFRESH
            # frames all the same, so its rest place keeps averaging (a reading more than
            # 1.2 mm off on an unchanged image is a neighbour's pull, not a start: _accept)
            return self._held_at_anchor(b) if b.full_age <= REST_REFRESH else False
        if (b.state != BallState.AT_REST or b.rest_ref is None or b.full_age > REST_REFRESH
                or gate > 3.0 + 3.0 * math.sqrt(max(b.kx.pxx, b.ky.pxx)) + 1e-6):
            return False
        p0, p1, p2 = self._probe(b).tolist()
        r0, r1, r2 = b.rest_ref.tolist()
        if p2 < 0.9 * r2 or math.hypot(p0 - r0, p1 - r1) > 0.15:
            b.probe_failed = True
            return False
        return self._held_at_anchor(b)

    def _held_at_anchor(self, b: _Ball) -> bool:
        b.found = True
        b.lost_frames = 0
        ax, ay = b.anchor.tolist()
        meas = b.meas
        meas[0] = ax
        meas[1] = ay
        self._push_mask(ax, ay, b.radius + 0.5)
        return True

    def _separate_touching(self) -> None:
        """Balls found touching: refine each again with every other ball masked at its final place.

        The first pass masks only the balls found before it, so the one processed first
        may have been pulled by a neighbour it touches."""
        found = [b for b in self.balls if b.found]
        if len(found) < 2:
            return self._push_found_masks(found)
        for b in found:
            if b.still_held and b.full_age > 0:
                continue  # held, not measured: nothing around it changed since it was
            bx, by = b.meas.tolist()
            near = False
            for o in found:
                if o is not b:
                    ox, oy = o.meas.tolist()
                    if math.hypot(ox - bx, oy - by) < b.radius + o.radius + 6.0:
                        near = True
                        break
            if not near:
                continue
            self._n_masks = self._n_pin_masks
            for o in found:
                if o is not b:
                    self._push_mask(o.meas[0], o.meas[1], o.radius + 0.5)
            ux, uy, hl = self._streak(b)
            res = self._refine_at(b.meas[0], b.meas[1], ux, uy, hl, b.radius, 0)
            if res is not None:
                nx, ny = res[K.R_CX], res[K.R_CY]
                # the filter took the first measurement; apply the correction to it and the output
                dx, dy = nx - b.meas[0], ny - b.meas[1]
                b.meas[:] = (nx, ny)
                b.kx.x += dx
                b.ky.x += dy
                if b.state == BallState.AT_REST and b.anchor_n > 0:
                    b.anchor += np.array([dx, dy]) / max(min(b.anchor_n, 61), 1)
        self._push_found_masks(found)

    def _push_found_masks(self, found) -> None:
        self._n_masks = self._n_pin_masks
        for b in found:
            x, y = b.meas.tolist()
            self._push_mask(x, y, b.radius + 0.5)

    def _mask_resting_pins(self) -> None:
        """Resting pins (last frame's blobs) are masked for the balls: a ball touching a pin is not pulled.

        Disks of the pin's half-width (+0.5 px) along its axis: they reach only half a pixel
        into a ball touching the pin. Moving pins are not masked (their last place is stale).
        """
        sig = [(p.index, p.cx, p.cy, p.ax, p.ay, p.half_len, p.half_wid) for p in self.pins
               if p.tight and not math.isnan(p.cx) and p.state != PinState.MOVING]
        if sig == self._pin_mask_sig:
            # the same pins at rest in the same places as last frame: the same disks
            m = len(self._pin_mask_rows)
            if m:
                self._masks[:m] = self._pin_mask_rows
            self._n_masks = self._n_pin_masks = m
            return
        m = 0
        cap = MAX_MASKS - 3 * N_BALLS - 2
        for p in self.pins:
            if not p.tight or math.isnan(p.cx) or p.state == PinState.MOVING:
                continue
            key = (p.cx, p.cy, p.ax, p.ay, p.half_len, p.half_wid)
            if key != p.mask_key:  # a pin at rest keeps its disks frame after frame
                hw = p.half_wid + 0.5
                span = max(p.half_len - p.half_wid, 0.0)
                n = int(math.ceil(span / max(0.8 * hw, 0.5))) + 1
                f = np.zeros(1) if n == 1 else np.linspace(-1.0, 1.0, n)
                p.mask_disks = np.column_stack([p.cx + f * span * p.ax, p.cy + f * span * p.ay, np.full(n, hw)])
                p.mask_key = key
            k = min(len(p.mask_disks), cap - m)
            if k > 0:
                self._masks[m:m + k] = p.mask_disks[:k]
                m += k
        self._pin_mask_sig = sig
        self._pin_mask_rows = self._masks[:m].copy()
        self._n_masks = self._n_pin_masks = m

    def _pick(self, b: _Ball, cands, gate: float):
        """The refined peak that best continues the track (the cheapest-looking first)."""
        px, py = b.pos
        order = sorted(cands, key=lambda c: -c[2] + 0.35 * (math.hypot(c[0] - px, c[1] - py) / max(gate, 1.0)) ** 2)
        for c in order:
            ref = self._refined(c)
            if ref is not None:
                return ref
        return None

    def _track_whites_jointly(self, w1: _Ball, w2: _Ball, gates, dt: float) -> None:
        """Both whites near each other: choose the pair of peaks that best continues both tracks."""
        cands = []
        for b in (w1, w2):
            for c in self._search(b, b.pos[0], b.pos[1], gates[b.index]):
                c = self._refined(c)
                if c is None:
                    continue
                if all(math.hypot(c[0] - o[0], c[1] - o[1]) > 0.8 * b.radius for o in cands):
                    cands.append(c)
        # where each was last measured (the previous frame): the start of the straight moves tested below
        prev = {b.index: (b.meas.copy() if not np.isnan(b.meas[0]) else np.array(b.pos)) for b in (w1, w2)}
        best, best_cost = (None, None), math.inf
        options = [None] + cands
        for a in options:
            for c in options:
                if a is not None and a is c:
                    continue
                cost = 0.0
                for b, cand in ((w1, a), (w2, c)):
                    if cand is None:
                        cost += 4.0
                        continue
                    d = math.hypot(cand[0] - b.pos[0], cand[1] - b.pos[1])
                    cost += (d / max(gates[b.index], 1.0)) ** 2 - cand[2]
                if a is not None and c is not None:
                    cost += 10.0 * _passes_through(prev[1], prev[2], np.array(a[:2]), np.array(c[:2]),
                                                   1.6 * w1.radius)
                if cost < best_cost:
                    best, best_cost = (a, c), cost
        for b, cand in ((w1, best[0]), (w2, best[1])):
            if cand is not None:
                self._accept(b, cand, dt)

    def _lost(self, b: _Ball) -> None:
        b.lost_frames += 1
        b.conf = 0.0
        self._still_drop(b.index)
        if not b.known or b.state in (BallState.OFF_TABLE, BallState.IN_HAND):
            return
        t = self.table
        xy = self._ball_point(*b.pos)
        vx, vy = b.vel
        speed_mm = math.hypot(vx, vy) * self.mm_px
        near_x = abs(xy[0]) > t.half_length - t.ball_radius - 40.0
        near_y = abs(xy[1]) > t.half_width - t.ball_radius - 40.0
        outside = abs(xy[0]) > t.half_length + 5.0 or abs(xy[1]) > t.half_width + 5.0
        if outside or (b.state == BallState.MOVING and speed_mm > 300.0 and (near_x or near_y) and b.lost_frames >= 2):
            b.state = BallState.OFF_TABLE
            return
        if b.lost_frames >= 3:
            # gone from where it was: lifted by hand if the cloth shows there again, else occluded
            if self._cloth_visible(b):
                b.state = BallState.IN_HAND
            else:
                b.state = BallState.UNKNOWN

    def _on_cloth(self, x: float, y: float) -> bool:
        """A ball's silhouette centroid (px) over the playing area (its centre inside the cushion noses)."""
        t = self.table
        mx, my = self._ball_point(x, y)
        return abs(mx) <= t.half_length + 3.0 and abs(my) <= t.half_width + 3.0

    def _cloth_visible(self, b: _Ball) -> bool:
        mode, bgr, yp, uvp, bg = self._ctx
        x, y = b.pos
        x0, y0, w, h = self._window(x, y, b.radius + 2.0)
        if w == 0 or h == 0:
            return False
        K.fg_window(mode, bgr, yp, uvp, bg, y0, x0, h, w, self.prm, self._wmasks, 0, self._w_fg)
        return float(self._w_fg[:h, :w].mean()) < 0.15

    # ---- coarse search ------------------------------------------------------------------------------
    def _coarse(self, lost: list[_Ball]) -> None:
        mode, bgr, yp, uvp, bg = self._ctx
        self._frames_since_coarse = 0
        self.coarse_runs += 1
        K.coarse_grid(mode, bgr, yp, uvp, bg, COARSE_STRIDE, self.c_y0, self.c_x0, self.c_gh, self.c_gw,
                      self.c_region, self.ref_white, self.ref_cue, self.prm, self.c_fg, self.c_white, self.c_cue)
        nc = K.label_grid(self.c_fg, self.c_white, self.c_cue, self.c_gh, self.c_gw, 0.5, self.c_labels,
                          self.c_stack, self.c_stats, MAX_COMP)
        # two rounds: a component holding two balls (a cue ball 2 px from a white merges
        # with it at this stride) gives up its first ball in round one, and what is left of
        # it, without that ball's cells, is searched for the other in round two
        found_any = False
        for _round in range(2):
            still_lost = [b for b in lost if not b.found]
            if not still_lost or not self._coarse_assign(still_lost, nc):
                break
            found_any = True
        cue = self.balls[CUE]
        if cue in lost and not cue.found and self._cue_beside_a_white(cue):
            found_any = True
        if found_any:
            # one found touching another was refined without the other masked
            self._separate_touching()

    def _cue_beside_a_white(self, cue: _Ball) -> bool:
        """Look for a lost cue ball right beside each white found (at 2 mm from a white it
        is one coarse blob with it, and too few of the blob's cells are red to tell):
        a fine search of the cue ball's colour around the white, the white masked."""
        found = [b for b in self.balls if b.found]
        self._push_found_masks(found)
        for w in found:
            if w.index not in WHITES:
                continue
            wx, wy = w.meas.tolist()
            gate = 2.0 * w.radius + 4.0
            cand = self._search_unanchored(cue, wx, wy, w.radius, gate, gate)
            if cand is not None and math.hypot(cand[0] - wx, cand[1] - wy) > 1.5 * w.radius:
                self._found_again(cue, cand)
                return True
        return False

    def _search_unanchored(self, b: _Ball, x: float, y: float, radius: float, gate: float, pick_gate: float):
        """Window search for ``b`` around (x, y) with no track history: a stand-in ball
        there (moving, b's streak) so neither the filter nor the rest state of ``b``
        bias which peak is taken."""
        probe = _Ball(b.index)
        probe.kx, probe.ky = _Kalman1D(x), _Kalman1D(y)
        probe.radius = radius
        probe.state = BallState.MOVING
        probe.streak = b.streak
        return self._pick(probe, self._search(probe, x, y, gate), pick_gate)

    def _coarse_components(self, nc: int) -> list:
        """The coarse grid's components that may hold a ball not found yet: (cx, cy, cells,
        white, cue, stats). A component that touches a found ball keeps only its cells
        beyond that ball's reach (the rest may be a second ball merged with it)."""
        s = COARSE_STRIDE
        r_nom = self.table.ball_radius / self.mm_px
        cell_area = math.pi * r_nom * r_nom / (s * s)
        found = [b for b in self.balls if b.found]
        comps = []
        for c in range(nc):
            st = self.c_stats[c].copy()
            n = st[K.S_N]
            if n < 0.3 * cell_area:
                continue
            gx0, gx1, gy0, gy1 = (int(st[K.S_X0]), int(st[K.S_X1]), int(st[K.S_Y0]), int(st[K.S_Y1]))
            inside = [b for b in found
                      if self.c_x0 + s * (gx0 - 1) <= b.meas[0] <= self.c_x0 + s * (gx1 + 1)
                      and self.c_y0 + s * (gy0 - 1) <= b.meas[1] <= self.c_y0 + s * (gy1 + 1)]
            if inside and n >= 1.5 * cell_area:
                jj, ii = np.nonzero(self.c_labels[gy0:gy1 + 1, gx0:gx1 + 1] == c + 1)
                jj, ii = jj + gy0, ii + gx0
                px, py = self.c_x0 + s * ii, self.c_y0 + s * jj
                keep = np.ones(len(ii), dtype=bool)
                for b in inside:
                    keep &= np.hypot(px - b.meas[0], py - b.meas[1]) > b.radius
                n = float(keep.sum())
                if n < 0.3 * cell_area:
                    continue
                st[K.S_N] = n
                st[K.S_SX], st[K.S_SY] = float(ii[keep].sum()), float(jj[keep].sum())
                st[K.S_SW] = float(self.c_white[jj[keep], ii[keep]].sum())
                st[K.S_SC] = float(self.c_cue[jj[keep], ii[keep]].sum())
                st[K.S_X0], st[K.S_X1] = float(ii[keep].min()), float(ii[keep].max())
                st[K.S_Y0], st[K.S_Y1] = float(jj[keep].min()), float(jj[keep].max())
            cx = self.c_x0 + s * st[K.S_SX] / n
            cy = self.c_y0 + s * st[K.S_SY] / n
            if any(math.hypot(b.meas[0] - cx, b.meas[1] - cy) < 1.2 * b.radius for b in found):
                continue
            if not self._on_cloth(cx, cy):
                continue  # on a rail or beyond: not a ball in play (one that left the table stays OFF_TABLE)
            comps.append((cx, cy, n, st[K.S_SW] / n, st[K.S_SC] / n, st))
        return comps

    def _coarse_assign(self, lost: list[_Ball], nc: int) -> bool:
        """Give lost balls the coarse components that hold them; True if any was found."""
        s = COARSE_STRIDE
        comps = self._coarse_components(nc)
        any_found = False
        # the cue ball first (colour decides), then whites (nearest to where they were); each
        # takes the best-ranked component that really holds a ball (a pin cluster does not)
        for b in sorted(lost, key=lambda b: b.index):
            ranked = []
            for comp in comps:
                cx, cy, n, white, cue = comp[:5]
                score = cue if b.index == CUE else white
                if score < 0.25:
                    continue
                if b.index != CUE and cue > white:
                    continue
                cost = -score
                if b.known:
                    cost += 0.002 * math.hypot(cx - b.pos[0], cy - b.pos[1])
                elif b.index in WHITES:  # first sight: white1 is the one nearer spot 1, white2 nearer spot 3
                    sx, sy = self.white_spot_px[b.index - 1]
                    cost += 0.002 * math.hypot(cx - sx, cy - sy)
                ranked.append((cost, id(comp), comp))
            ranked.sort()
            for _, _, comp in ranked[:4]:
                cx, cy = comp[:2]
                st = comp[5]
                ext = 0.5 * s * max(st[K.S_X1] - st[K.S_X0], st[K.S_Y1] - st[K.S_Y0]) + s
                gate = min(ext, 0.5 * MAX_WIN - 40.0)
                cand = self._search_unanchored(b, cx, cy, self.geo.ball_radius_px(cx, cy), gate, ext)
                if cand is not None:
                    comps.remove(comp)
                    self._found_again(b, cand)
                    any_found = True
                    break
        return any_found


    def _found_again(self, b: _Ball, cand) -> None:
        """A ball found by the coarse search: first sight, lost and found, or put back by hand."""
        was = b.state
        first_sight = not b.known
        if first_sight:
            self._start_ball(b, cand[0], cand[1])
        if first_sight or b.lost_frames > 0 or was in (BallState.OFF_TABLE, BallState.IN_HAND):
            b.kx.reset(cand[0], 0.0, 1.0, 400.0)
            b.ky.reset(cand[1], 0.0, 1.0, 400.0)
            b.recent.clear()
            b.placed = was in (BallState.OFF_TABLE, BallState.IN_HAND)
            # first seen or put back: taken to be at rest until it moves (from where it was
            # found); one lost in motion and found again is still moving
            at_rest = b.placed or first_sight
            b.state = BallState.AT_REST if at_rest else BallState.MOVING
            if at_rest:
                b.anchor = np.array(cand[:2], dtype=np.float64)
                b.anchor_n = 1
        self._accept(b, cand, self._dt)

    # ---- pins ---------------------------------------------------------------------------------------
    def _pin_window_weights(self, x0: int, y0: int, w: int, h: int) -> None:
        mode, bgr, yp, uvp, bg = self._ctx
        nm = self._window_masks(x0, y0, w, h)
        K.pin_weights(mode, bgr, yp, uvp, bg, y0, x0, h, w, self.prm, self._wmasks, nm,
                      self._w_fg, self._w_band, self._w_u, self._w_v)

    def _track_pins(self) -> None:
        # balls are masked for the pins with a margin, and along their blur streak (three
        # disks cover the capsule): a streak's faint tail is pin-sized and must not be taken
        self._n_masks = 0
        for b in self.balls:
            if not b.found:
                continue
            x, y = b.meas.tolist()
            ux, uy, hl = self._streak(b)
            self._push_mask(x, y, b.radius + 2.0)
            if hl > 1.0:
                self._push_mask(x + hl * ux, y + hl * uy, b.radius + 2.0)
                self._push_mask(x - hl * ux, y - hl * uy, b.radius + 2.0)
        n_ball_masks = self._n_ball_masks = self._n_masks
        loose: list[_Pin] = []
        self._reach_sources()
        for p in self.pins:
            k = p.index
            if math.isnan(p.cx):
                p.cx, p.cy = (float(v) for v in self.pin_spot_px[k])
                p.stood_at = (p.cx, p.cy)
                p.tight = False
            if not p.tight:
                loose.append(p)
                continue
            if (self._frame_count % N_PINS) == k and self._blob_mates(p) and self._back_where_it_stood(p):
                continue
            if self._still_unchanged(N_BALLS + k):
                p.stable += 1  # not a pixel around it changed: as it was
                continue
            if not self._pin_reachable(p) and (self._frame_count % N_PINS) != k:
                # nothing moving can reach it: it is as it was (checked in turn, one pin per frame)
                p.stable += 1
                continue
            # at rest and unchanged so far: a tight look around its blob confirms it
            if p.state in (PinState.STANDING, PinState.RAIL_STANDING):
                self._n_masks = n_ball_masks
            else:  # a lying pin against a standing one: the standing pin's pixels are not its own
                self._push_standing_pin_masks(n_ball_masks, p)
            x0, y0, w, h = self._window(p.cx, p.cy, self._pin_tight_half(p))
            npix = self._pin_blob_seeded(x0, y0, w, h, p.cx, p.cy, k)
            found = npix > 0 and self._pin_like(self._blob, k, x0, y0)
            if found and self._merged_standing(p, x0, y0):
                continue
            if self._held_standing(p, self._blob if found else None, x0, y0):
                continue
            if not found:
                p.tight = False
                loose.append(p)
                continue
            self._pin_measure(p, self._blob, x0, y0, (w, h))
            if not p.tight:
                loose.append(p)  # it changed: look again with a wide window
        if loose:
            self._track_loose_pins(loose, n_ball_masks)
        self._n_masks = n_ball_masks

    def _pin_blob_seeded(self, x0: int, y0: int, w: int, h: int, cx: float, cy: float, k: int) -> int:
        """Pin ``k``'s blob grown from (cx, cy) (frame px) in the window, into ``self._blob``
        (this frame's masks apply); its pixel count, 0 when there is none."""
        mode, bgr, yp, uvp, bg = self._ctx
        nm = self._window_masks(x0, y0, w, h)
        return K.pin_blob_at(mode, bgr, yp, uvp, bg, y0, x0, h, w, self.prm, self._wmasks, nm,
                             self._rowbits, self._w_fg, self._w_band, self._w_u, self._w_v, cx - x0, cy - y0,
                             0.6 * self._pin_r[k] + 2.0, 0.35, self._labels, self._stack, self._blob)

    def _blob_mates(self, p: _Pin) -> list[_Pin]:
        """The pins measured on one blob with pin ``p`` (their centres are the blob's)."""
        return [o for o in self.pins if o is not p and math.hypot(o.cx - p.cx, o.cy - p.cy) < 0.5]

    def _back_where_it_stood(self, p: _Pin) -> bool:
        """A pin on a blob shared with another pin whose own standing place holds a standing
        pin nobody claims: it never fell. A pin lying or sliding past a standing one merges
        with it for a few frames at 728x544; the standing one's identity went with the
        passer and stayed on its body once the two parted (scenario F5 of the review
        corpus: the king read as two pins, the foot standing beside it counted down). It is
        measured there again, standing, its rows since it was last read standing are
        rewritten so, and the pins it shared with are measured afresh."""
        sx, sy = p.stood_at
        if math.isnan(sx) or p.stand_area <= 0.0:
            return False
        k = p.index
        for o in self.pins:  # another pin is there (standing or lying over the place)
            if o is not p and not math.isnan(o.cx) and o.state != PinState.ABSENT:
                ox, oy = o.cx + o.part_off[0], o.cy + o.part_off[1]
                if math.hypot(ox - sx, oy - sy) < 2.0 * self._pin_r[k] + 2.0:
                    return False
        self._n_masks = self._n_ball_masks
        x0, y0, w, h = self._window(sx, sy, 2.2 * self._pin_r[k] + 3.0)
        npix = self._pin_blob_seeded(x0, y0, w, h, sx, sy, k)
        blob = self._blob
        if npix <= 0 or not self._pin_like(blob, k, x0, y0):
            return False
        for b in self.balls:  # whole, not the end of a lying pin that a ball's mask cut off
            if b.found and _box_gap(blob, x0, y0, b.meas[0], b.meas[1]) < b.radius + 3.0:
                return False
        lo, hi = PIN_STAND_AREA_RANGE
        if (not lo * p.stand_area <= blob[K.B_SUMW] <= hi * p.stand_area
                or math.hypot(blob[K.B_CX] + x0 - sx, blob[K.B_CY] + y0 - sy) > 1.5
                or max(blob[K.B_X1] - blob[K.B_X0], blob[K.B_Y1] - blob[K.B_Y0]) > 2.0 * p.stand_half + 2.0):
            return False
        for o in self._blob_mates(p):
            o.tight = False  # its blob is its own now: measured whole next frame
            o.part_off = (0.0, 0.0)
            self._still_drop(N_BALLS + o.index)
        p.cx, p.cy = sx, sy
        p.part_off = (0.0, 0.0)
        self._pin_measure(p, blob, x0, y0, None)
        p.vx = p.vy = 0.0
        h, row = self._hist, p.stood_row
        if 0 <= row < h.n:
            # it stood all along: the rows since it was last read standing say so (as a ball's
            # rest is written back), else the events stage saw a fall and a pin getting up
            h.pin_state[row + 1:h.n, k] = h.pin_state[row, k]
            h.pin_xy[row + 1:h.n, k] = h.pin_xy[row, k]
            h.pin_angle[row + 1:h.n, k] = math.nan
            np.minimum(h.pin_conf[row + 1:h.n, k], 0.5, out=h.pin_conf[row + 1:h.n, k])
            p.state = PinState(int(h.pin_state[row, k]))
            p.xy[:] = h.pin_xy[row, k]
            p.angle = math.nan
            p.stable = max(p.stable, 5)
            p.conf = 0.6
            p.tight = True
            self._still_take_pin(p)
        return True

    def _pin_tight_half(self, p: _Pin) -> float:
        """Half side (px) of the tight window a resting pin is checked in."""
        return max(p.half_extent, 2.2 * self._pin_r[p.index]) + 3.0

    def _held_standing(self, p: _Pin, blob: np.ndarray | None, x0: int, y0: int) -> bool:
        """A standing pin that nothing can be touching keeps its state while what is seen of
        it stays inside its own place: a blob that shrank or vanished for a frame or two
        with no ball or moving pin in reach is the image's doing (a passing ball's shadow or
        its compression smear, the tail of a blur streak), not a fall. Such one-frame
        "moving" pins became false knocks and F8 doubts. Held at most ``PIN_HOLD_S``, at
        lower confidence; anything in reach, or a blob grown or out of its place, and the
        pin is measured as usual."""
        if p.state not in (PinState.STANDING, PinState.RAIL_STANDING):
            p.held = 0
            return False
        if p.held >= PIN_HOLD_S / self._dt or self._touchable(p):
            p.held = 0
            return False
        if blob is not None:
            px0, px1, py0, py1 = p.box
            if (blob[K.B_X0] + x0 < px0 - 1 or blob[K.B_X1] + x0 > px1 + 1 or blob[K.B_Y0] + y0 < py0 - 1
                    or blob[K.B_Y1] + y0 > py1 + 1 or blob[K.B_SUMW] > 1.2 * p.area):
                p.held = 0
                return False
            if blob[K.B_SUMW] >= 0.8 * p.area:
                p.held = 0
                return False  # whole as before: measured as usual (it may have crept)
        p.held += 1
        p.stable += 1
        p.missing = 0
        p.conf = min(p.conf, 0.5)
        return True

    def _merged_standing(self, p: _Pin, x0: int, y0: int) -> bool:
        """A confirmed standing pin whose blob ran into a neighbour's (a pin lying against it,
        a ball beside it) stands while its own place stays filled as before and centred where
        it was: measured whole, the merged blob read as a pin on the move, then flickered
        between its parts (false knocks, F8 doubts). A pin that starts to topple empties its
        place within a frame or two: then it is measured as usual."""
        if not p.tight or p.state not in (PinState.STANDING, PinState.RAIL_STANDING):
            return False
        blob = self._blob
        px0, px1, py0, py1 = p.box
        inside = (blob[K.B_X0] + x0 >= px0 - 1 and blob[K.B_X1] + x0 <= px1 + 1 and blob[K.B_Y0] + y0 >= py0 - 1
                  and blob[K.B_Y1] + y0 <= py1 + 1)
        if inside and (blob[K.B_SUMW] <= p.area + 2.0 or (blob[K.B_SUMW] <= PIN_STAND_AREA_RANGE[1] * p.area
                                                         and not self._grown_towards_neighbour(p, blob, x0, y0, True))):
            # its own blob: measured as usual. (A falling pin's few pixels inside its box move
            # the whole blob's centre by most of a pixel at 728x544, random_2026_199: then
            # too its own place decides.)
            return False
        if not self._grown_towards_neighbour(p, blob, x0, y0):
            return False  # grown on its own: a pin tilting over (its body still crosses its place)
        i0, i1 = max(int(px0) - x0, 0), int(px1) - x0 + 1
        j0, j1 = max(int(py0) - y0, 0), int(py1) - y0 + 1
        fg = self._w_fg[j0:j1, i0:i1]
        w = np.where(self._labels[j0:j1, i0:i1] == 1, fg, 0.0)
        fill = float(w.sum())
        if fill < PIN_OWN_FILL * p.area:
            return False
        jj, ii = np.mgrid[j0:j1, i0:i1]
        cx = float((w * ii).sum()) / fill + x0
        cy = float((w * jj).sum()) / fill + y0
        if math.hypot(cx - p.cx, cy - p.cy) > 1.0:
            return False
        p.stable += 1
        p.missing = 0
        p.held = 0
        p.conf = min(p.conf, 0.8)
        return True

    def _grown_towards_neighbour(self, p: _Pin, blob: np.ndarray, x0: int, y0: int, moving: bool = False) -> bool:
        """The blob of pin ``p`` reaches a ball (its masked disk) or another pin's place, on the
        side it grew towards (``moving``: only a pin on the move, not a ball nor a pin confirmed
        in place)."""
        dx, dy = blob[K.B_CX] + x0 - p.cx, blob[K.B_CY] + y0 - p.cy
        d = math.hypot(dx, dy)
        near = [] if moving else [(b.meas[0], b.meas[1], b.radius + 3.0) for b in self.balls if b.found]
        near += [(o.cx, o.cy, max(o.half_extent, self._pin_r[o.index]) + 1.0) for o in self.pins
                 if o is not p and not math.isnan(o.cx) and o.state != PinState.ABSENT and not (moving and o.tight)]
        for nx, ny, r in near:
            if _box_gap(blob, x0, y0, nx, ny) > r:
                continue
            ex, ey = nx - p.cx, ny - p.cy
            if d < 0.5 or (ex * dx + ey * dy) > 0.5 * math.hypot(ex, ey) * d:
                return True
        return False

    def _touchable(self, p: _Pin) -> bool:
        """A ball (anywhere along this frame's blur streak) or a moving pin near enough to be
        touching pin ``p`` now."""
        k = p.index
        for b in self.balls:
            if not b.found:
                continue
            x, y = b.meas.tolist()
            ux, uy, hl = self._streak(b)
            along = max(-hl, min(hl, (p.cx - x) * ux + (p.cy - y) * uy))
            if math.hypot(p.cx - x - along * ux, p.cy - y - along * uy) < b.radius + self._pin_r[k] + 3.0:
                return True
        near = 1.2 * self.pin_len_px[k] + 3.0
        return any(o is not p and not o.tight and o.state != PinState.ABSENT and not math.isnan(o.cx)
                   and math.hypot(o.cx - p.cx, o.cy - p.cy) < near for o in self.pins)

    def _reach_sources(self) -> None:
        """This frame's moving balls (x, y, reach beyond the pin's length), for _pin_reachable."""
        movers = []
        for b in self.balls:
            if not b.known or b.state == BallState.AT_REST:
                continue
            vx, vy = b.vel
            step = math.hypot(vx, vy) * self._dt
            bx, by = b.meas.tolist() if b.found else b.pos
            movers.append((float(bx), float(by), 8.0 + b.radius + 2.0 * step + 10.0))
        self._movers = movers

    def _pin_reachable(self, p: _Pin) -> bool:
        """A moving ball near enough to touch this pin by the next frame (or the table is in motion nearby)."""
        plen = self.pin_len_px[p.index]
        cx, cy = p.cx, p.cy
        for bx, by, reach in self._movers:
            if math.hypot(bx - cx, by - cy) < plen + reach:
                return True
        near = 2.0 * plen + 15.0
        for o in self.pins:  # (the loose set changes while the pins are checked: read it live)
            if o is not p and not o.tight and not math.isnan(o.cx) and math.hypot(o.cx - cx, o.cy - cy) < near:
                return True
        return False

    def _pin_like(self, blob: np.ndarray, k: int, ox: float = 0.0, oy: float = 0.0) -> bool:
        """Big enough for a pin and showing its coloured band or crown (seen from above either way).

        A white spot mark on the cloth, blurred in the half-resolution background, leaves a
        pin-sized foreground blob where a pin stood; it has no colour. (``ox, oy``: the blob's
        window origin in the frame.)"""
        sw = blob[K.B_SUMW]
        if sw < self.pin_min_area[k]:
            return False
        # smaller than a whole standing pin: must show colour. A bare spot mark reads up to
        # 0.7 of a standing pin's area at 546x408 (0.5 at 1092x816) and no band colour at
        # all; a dim pin (the side away from the light, 728x544) reads 0.7 with a band of
        # 0.4-0.7 (rendered corpus, benchmarks/review.py)
        if blob[K.B_BAND] >= PIN_MIN_BAND:
            return True
        whole = self.pin_area_nominal[k]
        # on another pin's spot the mark is that spot's (the king's reads 0.6 of a standing
        # king, 0.9 of a head: a head knocked beside it took the bare king spot for itself)
        cx, cy = blob[K.B_CX] + ox, blob[K.B_CY] + oy
        for j in range(N_PINS):
            sx, sy = self.pin_spot_px[j]
            if abs(cx - sx) <= 2.0 and abs(cy - sy) <= 2.0:
                whole = max(whole, self.pin_area_nominal[j])
        return sw >= PIN_WHOLE_AREA * whole

    def _pin_gate(self, p: _Pin, grown: bool = True) -> float:
        """Search radius (px) for a pin not confirmed in place; it grows while the pin is missing
        (``grown=False``: the radius as if it had been seen last frame)."""
        # a toppling pin's centroid moves at most half its length; a lying one fits in +-0.5 length
        g = 0.8 * self.pin_len_px[p.index] + 10.0 + 1.5 * math.hypot(p.vx, p.vy) + (4.0 * min(p.missing, 10) if grown else 0.0)
        return min(g, 0.5 * MAX_WIN - 2.0)

    def _spot_gate(self, k: int) -> float:
        """Search radius (px) around a pin's own spot while it is absent (it is put back there, or near)."""
        return min(0.8 * self.pin_len_px[k] + 10.0, 0.5 * MAX_WIN - 2.0)

    def _collect_pin_blobs(self, blobs: list, x0: int, y0: int, w: int, h: int, k: int, anywhere: bool) -> None:
        """Pin-like blobs of one window (frame px) appended to ``blobs`` (duplicates of ones found skipped).

        A wide window (a moving or missing pin's gate) is first sampled every 2nd pixel: only the
        boxes of foreground there (merged when they come near each other, with a margin) are read
        at full resolution, so the cost follows what is on the cloth, not the gate's area."""
        if w * h <= PIN_SPARSE_AREA or not self._pin_sparse_ok:
            self._collect_pin_blobs_in(blobs, x0, y0, w, h, k, anywhere)
            return
        mode, bgr, yp, uvp, bg = self._ctx
        gh, gw = (h + 1) // 2, (w + 1) // 2
        K.coarse_grid(mode, bgr, yp, uvp, bg, 2, y0, x0, gh, gw, self._g_region, self.ref_white,
                      self.ref_cue, self.prm, self._g_fg, self._g_white, self._g_cue)
        nc = K.label_grid(self._g_fg, self._g_white, self._g_cue, gh, gw, 0.35, self._g_labels, self._stack,
                          self._g_stats, MAX_COMP)
        min_cells = 0.3 * self.pin_min_area[k] / 4.0
        boxes = []
        for c in range(nc):
            st = self._g_stats[c]
            if st[K.S_N] < min_cells:
                continue
            boxes.append([max(x0 + 2 * int(st[K.S_X0]) - 4, x0), max(y0 + 2 * int(st[K.S_Y0]) - 4, y0),
                          min(x0 + 2 * int(st[K.S_X1]) + 5, x0 + w), min(y0 + 2 * int(st[K.S_Y1]) + 5, y0 + h)])
        merged = True
        while merged:  # boxes that touch become one (a blob is never cut in two)
            merged = False
            for a in range(len(boxes)):
                for b in range(a + 1, len(boxes)):
                    p, q = boxes[a], boxes[b]
                    if p[0] <= q[2] and q[0] <= p[2] and p[1] <= q[3] and q[1] <= p[3]:
                        boxes[a] = [min(p[0], q[0]), min(p[1], q[1]), max(p[2], q[2]), max(p[3], q[3])]
                        del boxes[b]
                        merged = True
                        break
                if merged:
                    break
        for bx0, by0, bx1, by1 in boxes:
            if bx1 - bx0 >= 3 and by1 - by0 >= 3:
                self._collect_pin_blobs_in(blobs, bx0, by0, bx1 - bx0, by1 - by0, k, anywhere)

    def _collect_pin_blobs_in(self, blobs: list, x0: int, y0: int, w: int, h: int, k: int, anywhere: bool) -> None:
        stats = self._pin_stats
        for _ in range(3):
            self._pin_window_weights(x0, y0, w, h)
            nb = K.label_blobs(self._w_fg, self._w_band, self._w_u, self._w_v, h, w, 0.35,
                               self.pin_min_area[k], self._labels, self._stack, stats, len(stats))
            grown = self._window_around_cut_blobs(stats, nb, x0, y0, w, h)
            if grown is None:
                break
            x0, y0, w, h = grown  # a blob cut by the window's edge: its piece is no pin's measure
        for q in range(nb):
            st = stats[q].copy()
            for c in (K.B_CX, K.B_BX, K.B_X0, K.B_X1):
                st[c] += x0
            for c in (K.B_CY, K.B_BY, K.B_Y0, K.B_Y1):
                st[c] += y0
            if not self._pin_like(st, k):
                continue
            if anywhere:
                # not a hand, a cue or a cluster: at most a lying pin's size
                if (st[K.B_SUMW] > 6.0 * self.pin_area_nominal[k]
                        or max(st[K.B_X1] - st[K.B_X0], st[K.B_Y1] - st[K.B_Y0]) > 1.5 * self.pin_len_px[0]):
                    continue
            if all(math.hypot(st[K.B_CX] - b[0], st[K.B_CY] - b[1]) > 2.0 for b in blobs):
                blobs.append((st[K.B_CX], st[K.B_CY], st, anywhere))

    def _window_around_cut_blobs(self, stats: np.ndarray, nb: int, x0: int, y0: int, w: int, h: int):
        """The window grown by a pin's length on each side where a blob touches its edge (not
        the frame's), or None. In a heap the pieces a window cuts out of a neighbour's blob
        changed with the window every frame: a pin lying there never settled."""
        grow = int(math.ceil(max(self.pin_len_px)))
        nx0, ny0, nx1, ny1 = x0, y0, x0 + w, y0 + h
        for q in range(nb):
            st = stats[q]
            if st[K.B_X0] <= 0:
                nx0 = min(nx0, x0 - grow)
            if st[K.B_Y0] <= 0:
                ny0 = min(ny0, y0 - grow)
            if st[K.B_X1] >= w - 1:
                nx1 = max(nx1, x0 + w + grow)
            if st[K.B_Y1] >= h - 1:
                ny1 = max(ny1, y0 + h + grow)
        nx0, ny0 = max(nx0, 0), max(ny0, 0)
        nx1, ny1 = min(nx1, self.W, nx0 + MAX_WIN), min(ny1, self.H, ny0 + MAX_WIN)
        if (nx0, ny0, nx1, ny1) == (x0, y0, x0 + w, y0 + h):
            return None
        return nx0, ny0, nx1 - nx0, ny1 - ny0

    def _push_standing_pin_masks(self, n_ball_masks: int, skip: _Pin | None) -> None:
        self._n_masks = n_ball_masks
        for o in self.pins:  # confirmed standing pins keep their own pixels
            if o.tight and o is not skip and o.state in (PinState.STANDING, PinState.RAIL_STANDING):
                self._push_mask(o.cx, o.cy, 1.8 * self._pin_r[o.index])

    def _pin_sites_anywhere(self) -> list[tuple[float, float, float]]:
        """Pin-sized foreground components anywhere on the cloth (a pin put back by hand anywhere).

        A sparse grid (every 5th pixel of every 5th row at 1456x1088) over the cloth,
        labelled; components near a found ball or a confirmed pin are that object."""
        mode, bgr, yp, uvp, bg = self._ctx
        self._frames_since_pin_coarse = 0
        self.pin_coarse_runs += 1
        s = self.pin_coarse_stride
        K.coarse_grid(mode, bgr, yp, uvp, bg, s, self.pc_y0, self.pc_x0, self.pc_gh, self.pc_gw,
                      self.pc_region, self.ref_white, self.ref_cue, self.prm, self.pc_fg, self.pc_white, self.pc_cue)
        nc = K.label_grid(self.pc_fg, self.pc_white, self.pc_cue, self.pc_gh, self.pc_gw, 0.35, self.pc_labels,
                          self.pc_stack, self.c_stats, MAX_COMP)
        big = 6.0 * float(self.pin_area_nominal.max()) / (s * s)
        sites = []
        for c in range(nc):
            st = self.c_stats[c]
            n = st[K.S_N]
            if n > big:
                continue
            cx = self.pc_x0 + s * st[K.S_SX] / n
            cy = self.pc_y0 + s * st[K.S_SY] / n
            if any(b.found and math.hypot(b.meas[0] - cx, b.meas[1] - cy) < b.radius + 3.0 for b in self.balls):
                continue
            if any(o.tight and math.hypot(o.cx - cx, o.cy - cy) < 0.6 * self.pin_len_px[o.index] for o in self.pins):
                continue
            half = 0.5 * s * max(st[K.S_X1] - st[K.S_X0], st[K.S_Y1] - st[K.S_Y0]) + s + 4.0
            sites.append((-n, cx, cy, half))
        sites.sort()
        return [(cx, cy, half) for _, cx, cy, half in sites[:MAX_PIN_SITES]]

    def _track_loose_pins(self, loose: list[_Pin], n_ball_masks: int) -> None:
        """Pins that moved or are not confirmed: find every pin-sized blob near them, assign jointly.

        While no ball rolls, an absent pin is also looked for on its own spot (every frame) and
        anywhere on the cloth (every few frames): pins are put back by hand between shots,
        often far from where they were last seen lying."""
        blobs: list[tuple[float, float, np.ndarray, bool]] = []
        # no ball rolling (pins just put back count as MOVING for a few frames: not a reason to wait)
        still = not any(b.state == BallState.MOVING for b in self.balls)
        for p in loose:
            k = p.index
            sites = []
            px, py = p.cx + p.vx, p.cy + p.vy
            gate = self._pin_gate(p)
            turn = 6 if p.missing <= PIN_COARSE_LATE_AFTER else 12
            if not (p.missing > 12 and (self._frame_count + k) % turn and not self._pin_reachable(p)):
                # (the window holds its whole last blob: a heap cut by the window's edge
                # would change size every frame and never settle)
                sites.append((px, py, min(max(gate, p.half_extent + 4.0), 0.5 * MAX_WIN - 2.0)))  # long absent: looked for there in turn (rarer after a second)
            if p.missing >= 3 and still:  # pins are put back by hand while the balls are still
                sx, sy = self.pin_spot_px[k]
                if not sites or math.hypot(sx - px, sy - py) > 0.5 * gate:
                    sites.append((sx, sy, self._spot_gate(k)))
            if not sites:
                continue
            self._push_standing_pin_masks(n_ball_masks, p)
            for cx, cy, g in sites:
                x0, y0, w, h = self._window(cx, cy, g)
                if w >= 3 and h >= 3:
                    self._collect_pin_blobs(blobs, x0, y0, w, h, k, False)
        self._frames_since_pin_coarse += 1
        absent_for = max((p.missing for p in loose), default=0)
        every = PIN_COARSE_EVERY if absent_for < PIN_COARSE_LATE_AFTER else PIN_COARSE_LATE
        if absent_for >= 3 and still and self._frames_since_pin_coarse >= every:
            self._push_standing_pin_masks(n_ball_masks, None)
            k_small = int(np.argmin(self.pin_min_area))
            for cx, cy, half in self._pin_sites_anywhere():
                x0, y0, w, h = self._window(cx, cy, half)
                if w >= 3 and h >= 3:
                    self._collect_pin_blobs(blobs, x0, y0, w, h, k_small, True)
        # blobs held by pins confirmed this frame (not loose) are theirs: a lost pin must not
        # take over a neighbour's lying body (two identities on one pin, then swapped calls)
        loose_ids = {p.index for p in loose}
        held = [(o.cx, o.cy, max(0.5 * o.half_extent, 2.0 * self._pin_r[o.index]), o.index)
                for o in self.pins if o.index not in loose_ids and o.tight and not math.isnan(o.cx)]
        held_blob: dict[int, list[int]] = {}
        for q, (bx, by, _, _) in enumerate(blobs):
            holders = [o for hx, hy, hr, o in held if math.hypot(bx - hx, by - hy) <= hr]
            if holders:
                held_blob[q] = holders
        pairs = []
        for p in loose:
            k = p.index
            px, py = p.cx + p.vx, p.cy + p.vy
            gate = self._pin_gate(p)
            absent = p.missing >= 3
            sx, sy = self.pin_spot_px[k]
            sgate = self._spot_gate(k)
            for q, (bx, by, st, anywhere) in enumerate(blobs):
                d = math.hypot(bx - px, by - py)
                far = False
                if d <= gate:
                    # distance over the gate of a pin seen last frame, plus a little per frame
                    # lost: a lost pin's grown gate must not make it the cheaper claimant of a
                    # blob that a pin seen last frame moved into
                    cost = d / self._pin_gate(p, grown=False) + 0.05 * min(p.missing, 10)
                elif absent and still and math.hypot(bx - sx, by - sy) <= sgate:
                    cost, far = math.hypot(bx - sx, by - sy) / sgate, True
                elif absent and anywhere and self._pin_like(st, k):
                    cost, far = 1.5, True  # anywhere else on the cloth: after every nearer explanation
                else:
                    continue
                if st[K.B_BAND] > 2.0:
                    kingish = st[K.B_BU] < -15.0 and st[K.B_BU] < -0.5 * st[K.B_BV]
                    if kingish != (PIN_IDS[k] == "king"):
                        cost += 1.0
                pairs.append((cost, k, q, far))
        pairs.sort()
        taken_pin: set[int] = set()
        taken_blob: dict[int, int] = {}
        on_blob: dict[int, list[int]] = {q: list(ks) for q, ks in held_blob.items()}
        for share in (False, True):
            # second round: a pin left without a blob may share one big enough for two (a pin
            # lying across another, a pin against the king, a heap), also one held by a pin
            # confirmed this frame; a held blob is not taken alone (a pin landing on a
            # confirmed one changes its blob: that pin is then loose too, assigned with it)
            for cost, k, q, far in pairs:
                if k in taken_pin:
                    continue
                owner = taken_blob.get(q, held_blob[q][0] if q in held_blob else None)
                if owner is not None:
                    if not share or far or not self._holds_two(blobs[q][2], owner, self.pins[k]):
                        continue
                    if (q in held_blob and not self._was_on(self.pins[k], blobs[q])
                            and blobs[q][2][K.B_SUMW] < 1.5 * self.pin_lying_area[owner]):
                        continue  # a confirmed pin's blob, not grown to hold another
                taken_pin.add(k)
                taken_blob.setdefault(q, owner if owner is not None else k)
                on_blob.setdefault(q, []).append(k)
                pin = self.pins[k]
                if far:  # found again away from where it was lost: no jump taken for motion
                    pin.cx, pin.cy = blobs[q][0], blobs[q][1]
                pin.part_off = (0.0, 0.0)  # set again below when the blob is shared
                self._pin_measure(pin, blobs[q][2], 0, 0, None)
                pin.own_blob = taken_blob[q] == k
                if not pin.own_blob:
                    pin.conf *= 0.6
                    pin.vx = pin.vy = 0.0  # the shared blob's centre is not this pin's
        for q, ks in on_blob.items():
            if len(ks) > 1:
                self._split_along(blobs[q][2], ks)
        for p in loose:
            if p.index not in taken_pin:
                self._pin_missing(p)

    def _split_along(self, blob: np.ndarray, ks: list[int]) -> None:
        """Pins sharing one blob each placed on their own part of it: pins fallen in a chain
        or a heap merge into one long blob, whose centre is none of theirs. The blob's length
        is cut into equal parts, given in the order of where the pins last stood along it (a
        moving pin's own place is lost once the blobs merge; the blob's centre still matches
        them next frame, only the reported place moves)."""
        ang, half_len, _ = _blob_capsule(blob)
        ux, uy = math.cos(ang), math.sin(ang)
        bx, by = blob[K.B_CX], blob[K.B_CY]
        order = sorted(ks, key=lambda k: (self.pins[k].stood_at[0] - bx) * ux + (self.pins[k].stood_at[1] - by) * uy)
        n = len(order)
        for i, k in enumerate(order):
            off = half_len * ((2 * i + 1) / n - 1.0)
            p = self.pins[k]
            p.part_off = (off * ux, off * uy)
            p.xy[:] = self.geo.plane_point(bx + off * ux, by + off * uy, p.xy_z)

    def _was_on(self, p: _Pin, blob) -> bool:
        """Pin ``p`` was measured on this blob last frame (a heap that settles pin by pin): it
        may stay on it once its neighbours there are confirmed. A pin lost, even for a frame,
        does not join a confirmed pin's blob: it would take over a neighbour's lying body."""
        return p.missing == 0 and math.hypot(p.cx - blob[0], p.cy - blob[1]) <= 0.5 * p.half_extent + 2.0

    def _holds_two(self, blob: np.ndarray, owner: int, p: _Pin) -> bool:
        """Whether a blob already given to pin ``owner`` may hold pin ``p`` too (a pin lying
        across another, a pin against the king): big enough for both, and reaching the place
        where ``p`` is expected. A pin hidden beside a lying neighbour (a ball on it) must not
        take the neighbour's body: two identities on one pin, and the hidden pin's own fall
        is then never seen."""
        k = p.index
        sw = blob[K.B_SUMW]
        if sw < 1.6 * (self.pin_min_area[k] + self.pin_min_area[owner]) / 0.55:
            return False
        ang, half_len, half_wid = _blob_capsule(blob)
        if 2.0 * half_len >= 0.6 * self.pin_len_px[owner] and sw < self.pin_lying_area[owner] + self.pin_area_nominal[k]:
            return False  # as long as a lying pin and no bigger than one
        # p's expected place within the blob's capsule (plus a standing pin's top)
        dx, dy = p.cx + p.vx - blob[K.B_CX], p.cy + p.vy - blob[K.B_CY]
        along = max(abs(dx * math.cos(ang) + dy * math.sin(ang)) - half_len, 0.0)
        across = max(abs(-dx * math.sin(ang) + dy * math.cos(ang)) - half_wid, 0.0)
        return math.hypot(along, across) <= 2.0 * self._pin_r[k] + 2.0

    def _pin_missing(self, p: _Pin) -> None:
        self._still_drop(N_BALLS + p.index)
        p.missing += 1
        p.vx = p.vy = 0.0
        p.stable = 0
        p.tight = False
        if p.missing >= self._lain_forget_frames:
            p.lain = False
        if p.missing >= 3:
            p.state = PinState.ABSENT
            p.conf = min(1.0, 0.3 + 0.1 * p.missing)
            p.xy[:] = np.nan
            p.angle = math.nan
        else:
            p.state = PinState.MOVING if p.state not in (PinState.UNKNOWN, PinState.ABSENT) else p.state
            p.conf = 0.3

    def _pin_measure(self, p: _Pin, blob: np.ndarray, x0: int, y0: int, tight_window) -> None:
        k = p.index
        t = self.table
        bl = blob.tolist()  # Python floats: the same values, cheaper arithmetic
        cx, cy = bl[K.B_CX] + x0, bl[K.B_CY] + y0
        sxx, sxy, syy = bl[K.B_SXX], bl[K.B_SXY], bl[K.B_SYY]
        tr, det = sxx + syy, sxx * syy - sxy * sxy
        disc = math.sqrt(max(0.25 * tr * tr - det, 0.0))
        lam1, lam2 = 0.5 * tr + disc, max(0.5 * tr - disc, 1e-6)
        length_mm = math.sqrt(12.0 * lam1) * self.mm_px
        area = bl[K.B_SUMW]
        # touching the window edge in the tight window means it grew: look wider next frame
        at_edge = False
        if tight_window is not None:
            w, h = tight_window
            at_edge = bl[K.B_X0] <= 0 or bl[K.B_Y0] <= 0 or bl[K.B_X1] >= w - 1 or bl[K.B_Y1] >= h - 1
        # a standing pin partly under a ball's mask loses a side: its centre moves away by
        # most of a pixel with nothing touching it (a toppling pin soon moves further)
        shift_px = 1.2 if self._standing_under_mask(p) else 0.6
        changed = (math.hypot(cx - p.cx, cy - p.cy) > shift_px or self._area_changed(p, area)
                   or abs(length_mm - p.length_mm) > max(3.0, PIN_LENGTH_JITTER_PX * self.mm_px)
                   or (p.tight and at_edge))
        if p.tight and not changed and p.stable >= 5:
            # confirmed and unchanged: its place and state stand (compared with the frame before,
            # so a pin creeping by less than 0.6 px per frame is re-placed when it is re-measured)
            p.stable += 1
            p.missing = 0
            if not self._still_active[N_BALLS + k]:
                self._still_take_pin(p)
            return
        first = p.state in (PinState.UNKNOWN, PinState.ABSENT) and p.missing == 0 and p.area == 0.0
        if not first:
            # motion only between two frames that saw this pin's own blob: a jump back from a
            # gap or from a shared blob would send the next frame's search the wrong way
            seen_last = p.missing == 0 and p.own_blob and not (
                area > PIN_MERGE_GROWTH * max(p.area, 1.0) and self._holds_other_pin(p, bl, x0, y0))
            p.vx, p.vy = (cx - p.cx, cy - p.cy) if changed and seen_last else (0.0, 0.0)
        p.own_blob = True
        if changed:
            p.part_off = (0.0, 0.0)
        ox, oy = p.part_off
        p.cx, p.cy, p.area, p.length_mm = cx, cy, area, length_mm
        p.missing = 0
        p.stable = 0 if (changed and not first) else p.stable + 1
        plane_z = 0.0
        xy0 = self.geo.plane_point(cx, cy, 0.0)
        on_rail = abs(xy0[0]) > t.half_length + 0.5 * t.cushion_width or abs(xy0[1]) > t.half_width + 0.5 * t.cushion_width
        if on_rail:
            plane_z = t.rail_height
        # seen off-axis a standing pin images as long as its height's parallax: far out (on a
        # rail) that is 40+ mm, so the thresholds follow the camera's view of this place
        cam = self.cam_centre
        hk = self.pin_h[k]
        par = hk * math.hypot(xy0[0] - cam[0], xy0[1] - cam[1]) / max(cam[2] - plane_z - 0.5 * hk, 1.0)
        width = 2.0 * t.pin_top_radius(PIN_IDS[k]) * 1.6
        standing_len = math.hypot(width, par) + (8.0 if par > 15.0 else 0.0)
        lying_len = max(0.62 * hk, standing_len + 10.0)
        if par > 15.0 and length_mm <= standing_len:
            # a standing pin's parallax streak points away from the camera's foot; a lying pin
            # as long as that points anywhere
            ax = 0.5 * math.atan2(2.0 * sxy, sxx - syy)
            tip = self.geo.plane_point(cx + 5.0 * math.cos(ax), cy + 5.0 * math.sin(ax), 0.0)
            ux, uy = tip[0] - xy0[0], tip[1] - xy0[1]
            rx, ry = xy0[0] - cam[0], xy0[1] - cam[1]
            cosang = abs(ux * rx + uy * ry) / max(math.hypot(ux, uy) * math.hypot(rx, ry), 1e-9)
            if cosang < 0.85:
                standing_len = 0.0  # not along the parallax: lying (or leaning)
        if p.stable < 2:
            state = PinState.MOVING
            conf = 0.6
        elif length_mm <= standing_len:
            state = PinState.RAIL_STANDING if on_rail else PinState.STANDING
            conf = 0.6 + 0.4 * min(1.0, p.stable / 5.0)
        elif length_mm >= lying_len:
            state = PinState.RAIL_DOWN if on_rail else PinState.DOWN
            conf = 0.6 + 0.4 * min(1.0, p.stable / 5.0)
        else:
            # tilted and still: held up by something
            if on_rail:
                state = PinState.RAIL_DOWN
            else:
                # a pin that has lain cannot rise to lean: shortened now, a ball's mask cuts it
                state = PinState.LEANING if self._near_object(p) and not p.lain else PinState.DOWN
            conf = 0.5 + 0.3 * min(1.0, p.stable / 5.0)
        p.lies_full = state == PinState.DOWN and length_mm >= lying_len
        if state in (PinState.STANDING, PinState.RAIL_STANDING):
            p.xy_z = plane_z + self.pin_zeff[k]
            xy = self.geo.plane_point(cx + ox, cy + oy, p.xy_z)
            p.angle = math.nan
            p.stood_at = (cx + ox, cy + oy)
            if p.own_blob:
                p.stand_area = area
                p.stand_half = 0.5 * max(bl[K.B_X1] - bl[K.B_X0], bl[K.B_Y1] - bl[K.B_Y0])
        else:
            p.xy_z = plane_z + t.pin_top_radius(PIN_IDS[k])  # a lying pin's axis height
            xy = self.geo.plane_point(cx + ox, cy + oy, p.xy_z)
            p.angle = self._pin_direction(blob, x0, y0, cx, cy, lam1, sxx, sxy, syy, p.xy_z, xy)
        p.xy[:] = xy
        p.state = state
        p.conf = conf
        p.tight = state != PinState.MOVING and p.stable >= 2
        p.half_extent = 0.5 * max(bl[K.B_X1] - bl[K.B_X0], bl[K.B_Y1] - bl[K.B_Y0]) + 1.0
        p.box = (bl[K.B_X0] + x0, bl[K.B_X1] + x0, bl[K.B_Y0] + y0, bl[K.B_Y1] + y0)
        # the blob as a capsule for masking: axis, half length and half width (uniform-bar variances)
        ang = 0.5 * math.atan2(2.0 * sxy, sxx - syy)
        p.ax, p.ay = math.cos(ang), math.sin(ang)
        p.half_len = math.sqrt(3.0 * lam1)
        p.half_wid = max(math.sqrt(3.0 * lam2), 0.8 * self._pin_r[k])
        if p.tight:
            self._still_take_pin(p)
        else:
            self._still_drop(N_BALLS + k)

    def _holds_other_pin(self, p: _Pin, bl: list, x0: int, y0: int) -> bool:
        """Another pin's last place lies within a pixel of this blob's box: a blob that grew
        fast merged with it (a flying pin's blur grows as fast, with no pin in it)."""
        return any(o is not p and _box_gap(bl, x0, y0, o.cx, o.cy) <= 1.0 for o in self.pins)

    def _standing_under_mask(self, p: _Pin) -> bool:
        """A confirmed standing pin that one of this frame's masks (a ball's) overlaps."""
        if not p.tight or p.state not in (PinState.STANDING, PinState.RAIL_STANDING):
            return False
        r = self._pin_r[p.index] + 1.0
        cx, cy = p.cx, p.cy
        for mx, my, mr in self._masks[:self._n_masks].tolist():
            if math.hypot(mx - cx, my - cy) < mr + r:
                return True
        return False

    def _area_changed(self, p: _Pin, area: float) -> bool:
        """A pin's blob changed size beyond its jitter (wider for a confirmed standing pin,
        wider still when a mask covers part of it)."""
        ref = max(p.area, 1.0)
        if p.tight and p.state in (PinState.STANDING, PinState.RAIL_STANDING):
            lo, hi = PIN_STAND_AREA_RANGE
            if self._standing_under_mask(p):
                lo *= 0.7
            return not lo * ref <= area <= hi * ref
        return abs(area - p.area) > 0.2 * ref

    def _pin_direction(self, blob, x0, y0, cx, cy, lam1, sxx, sxy, syy, z, xy) -> float:
        """Base -> head direction of a lying pin (table frame): along the blob's axis, towards the band."""
        ax = math.atan2(2.0 * sxy, sxx - syy) * 0.5  # principal axis angle in the image
        ux, uy = math.cos(ax), math.sin(ax)
        if blob[K.B_BAND] > 1.0:
            bx, by = blob[K.B_BX] + x0, blob[K.B_BY] + y0
            if (bx - cx) * ux + (by - cy) * uy < 0:
                ux, uy = -ux, -uy
        tip = self.geo.plane_point(cx + 5.0 * ux, cy + 5.0 * uy, z)
        return math.atan2(tip[1] - xy[1], tip[0] - xy[0])

    def _near_object(self, p: _Pin) -> bool:
        reach = 0.8 * self.pin_len_px[p.index]
        for b in self.balls:
            if b.found and math.hypot(b.meas[0] - p.cx, b.meas[1] - p.cy) < b.radius + reach:
                return True
        for o in self.pins:
            if o is not p and not math.isnan(o.cx) and math.hypot(o.cx - p.cx, o.cy - p.cy) < reach:
                return True
        return False

    # ---- output -------------------------------------------------------------------------------------
    def _observations(self, frame: Frame, observe: bool = True) -> Observations | None:
        """This frame's output, written straight into the next history row (the message, when
        asked for, gets copies)."""
        h = self._hist
        row = h.next_row()
        ball_xy, ball_vel, ball_px = h.ball_xy[row], h.ball_vel[row], self._obs_px
        ball_conf, ball_state = h.ball_conf[row], h.ball_state[row]
        moving = False
        states = []
        confs = []
        for i, b in enumerate(self.balls):
            st = b.state
            states.append(st)
            if st == BallState.MOVING:
                moving = True
            if not b.found:
                ball_xy[i] = math.nan
                ball_vel[i] = math.nan
                ball_px[i] = math.nan
                confs.append(0.0)
                continue
            at_rest = st == BallState.AT_REST
            x, y = (b.anchor if at_rest else b.meas).tolist()
            mx, my = self._ball_point(x, y)
            ball_xy[i, 0] = mx
            ball_xy[i, 1] = my
            ball_px[i, 0] = x
            ball_px[i, 1] = y
            confs.append(b.conf)
            if at_rest:
                ball_vel[i] = 0.0
            else:
                vx, vy = b.kx.v, b.ky.v
                ax, ay = self._ball_point(x + vx * 0.01, y + vy * 0.01)
                ball_vel[i, 0] = (ax - mx) / 0.01
                ball_vel[i, 1] = (ay - my) / 0.01
        ball_state[:] = states
        ball_conf[:] = confs
        pins = self.pins
        pin_xy, pin_angle, pin_state, pin_conf = h.pin_xy[row], h.pin_angle[row], h.pin_state[row], h.pin_conf[row]
        pin_xy[:] = [p.xy for p in pins]
        pin_angle[:] = [p.angle for p in pins]
        pstates = [p.state for p in pins]
        pin_state[:] = pstates
        pin_conf[:] = [p.conf for p in pins]
        for p in pins:
            if p.state in (PinState.STANDING, PinState.RAIL_STANDING):
                p.stood_row = row
                p.lain = False
            elif p.lies_full and p.state == PinState.DOWN and p.stable >= self._lain_frames:
                p.lain = True
        if not moving and PinState.MOVING in pstates:
            moving = True
        self._still_frames = 0 if moving else self._still_frames + 1
        self.table_moving = moving or (self.table_moving and self._still_frames < 3)
        h.t[row] = frame.t
        h.index[row] = frame.index
        h.moving[row] = self.table_moving
        h.n = row + 1
        placed = [BALL_IDS[b.index] for b in self.balls if b.placed and b.found]
        for b in self.balls:
            b.placed = False
        if not observe:
            return None
        extra = {"ball_vel": ball_vel.copy(), "ball_px": ball_px.copy(), "table_moving": self.table_moving}
        if placed:
            extra["placed"] = placed
        return Observations(frame.index, frame.t, ball_xy.copy(), ball_conf.copy(), ball_state.copy(), pin_xy.copy(),
                            pin_angle.copy(), pin_state.copy(), pin_conf.copy(), extra)

    def tracks(self, start_row: int = 0) -> Tracks:
        """Tracks of every object over the rows from ``start_row`` (one row per processed frame)."""
        h = self._hist
        sl = slice(min(max(int(start_row), 0), h.n), h.n)
        n = sl.stop - sl.start
        t = h.t[sl].copy()
        idx = h.index[sl].copy()
        balls = {b: Track(b, t, idx, h.ball_xy[sl, i].copy(), np.nan_to_num(h.ball_vel[sl, i], nan=0.0),
                          h.ball_state[sl, i].copy(), h.ball_conf[sl, i].copy()) for i, b in enumerate(BALL_IDS)}
        pins = {p: Track(p, t, idx, h.pin_xy[sl, i].copy(), np.zeros((n, 2)), h.pin_state[sl, i].copy(),
                         h.pin_conf[sl, i].copy(), angle=h.pin_angle[sl, i].copy()) for i, p in enumerate(PIN_IDS)}
        moving = h.moving[sl].copy()
        lo = idx[0] if n else 0
        dropped = np.array(sorted(d for d in set(self._dropped) if d >= lo), np.int64)
        return Tracks(t, idx, balls, pins, moving, dropped=dropped, fps=self.fps, exposure_s=self.exposure_s,
                      position_noise_mm=0.3)


class _History:
    """Every processed frame's output, in arrays that double when full (cheap to append and slice)."""

    FIELDS = {
        "t": ((), np.float64), "index": ((), np.int64), "ball_xy": ((N_BALLS, 2), np.float64),
        "ball_state": ((N_BALLS,), np.int8), "ball_conf": ((N_BALLS,), np.float64),
        "ball_vel": ((N_BALLS, 2), np.float64), "pin_xy": ((N_PINS, 2), np.float64),
        "pin_angle": ((N_PINS,), np.float64), "pin_state": ((N_PINS,), np.int8),
        "pin_conf": ((N_PINS,), np.float64), "moving": ((), bool),
    }

    def __init__(self, capacity: int = 1024):
        self.n = 0
        self.capacity = capacity
        for name, (shape, dtype) in self.FIELDS.items():
            setattr(self, name, np.zeros((capacity,) + shape, dtype))

    def next_row(self) -> int:
        """Index of the row to fill next (the arrays double when full); the caller sets ``n`` after filling it."""
        if self.n == self.capacity:
            self.capacity *= 2
            for name in self.FIELDS:
                old = getattr(self, name)
                new = np.zeros((self.capacity,) + old.shape[1:], old.dtype)
                new[: self.n] = old[: self.n]
                setattr(self, name, new)
        return self.n


def _box_gap(blob: np.ndarray, x0: float, y0: float, x: float, y: float) -> float:
    """Distance (px) from (x, y) to the bounding box of ``blob`` (window origin x0, y0); 0 inside."""
    bx0, bx1, by0, by1 = blob[K.B_X0] + x0, blob[K.B_X1] + x0, blob[K.B_Y0] + y0, blob[K.B_Y1] + y0
    return math.hypot(max(bx0 - x, 0.0, x - bx1), max(by0 - y, 0.0, y - by1))


def _drift(pts: list) -> float:
    """How far the mean of the last third of the readings ``pts`` lies from the mean of the
    first third (px): a ball creeping to a stop drifts one way, a resting one does not."""
    m = max(len(pts) // 3, 1)
    ax = sum(p[0] for p in pts[:m]) / m
    ay = sum(p[1] for p in pts[:m]) / m
    bx = sum(p[0] for p in pts[-m:]) / m
    by = sum(p[1] for p in pts[-m:]) / m
    return math.hypot(bx - ax, by - ay)


def _blob_capsule(blob: np.ndarray) -> tuple[float, float, float]:
    """A blob as a uniform bar: principal axis angle (image), half length and half width (px)."""
    sxx, sxy, syy = blob[K.B_SXX], blob[K.B_SXY], blob[K.B_SYY]
    disc = math.sqrt(max(0.25 * (sxx - syy) ** 2 + sxy * sxy, 0.0))
    lam1, lam2 = 0.5 * (sxx + syy) + disc, max(0.5 * (sxx + syy) - disc, 0.0)
    return 0.5 * math.atan2(2.0 * sxy, sxx - syy), math.sqrt(3.0 * lam1), math.sqrt(3.0 * lam2)


def _streak_of(res: np.ndarray) -> tuple[float, float]:
    """(axis angle, length px) of a blur streak from a blob's covariance.

    A blurred ball is the disk convolved with its straight path, so variances add:
    along the path r^2/4 + L^2/12, across it r^2/4; the difference gives L.
    """
    sxx, sxy, syy = res[K.R_SXX:K.R_SYY + 1].tolist()
    tr, det = sxx + syy, sxx * syy - sxy * sxy
    disc = math.sqrt(max(0.25 * tr * tr - det, 0.0))
    return 0.5 * math.atan2(2.0 * sxy, sxx - syy), math.sqrt(max(0.0, 12.0 * 2.0 * disc))


def _robust_line(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """y ~ a x + b fitted by least squares, refitted on the inliers (objects in the frame are outliers)."""
    keep = np.ones(len(x), bool)
    a, b = 1.0, 0.0
    for _ in range(4):
        if keep.sum() < 10:
            break
        xk, yk = x[keep], y[keep]
        mx, my = xk.mean(), yk.mean()
        dx = xk - mx
        sxx = float((dx * dx).sum())
        # least squares in closed form (lstsq's SVD cost more than the rest of the set-up)
        a = float((dx * (yk - my)).sum()) / sxx if sxx > 1e-12 else 1.0
        b = float(my - a * mx)
        res = np.abs(y - (a * x + b))
        keep = res < max(3.0 * np.median(res[keep]) * 1.4826, 2.0)
    return float(a), float(b)


def _passes_through(pa: np.ndarray, pb: np.ndarray, qa: np.ndarray, qb: np.ndarray, min_dist: float) -> float:
    """1 when balls moving pa->qa and pb->qb (straight, same timing) come closer than min_dist, else 0."""
    d0 = pa - pb
    d1 = qa - qb
    dd = d1 - d0
    den = float(dd @ dd)
    s = 0.0 if den < 1e-12 else min(1.0, max(0.0, -float(d0 @ dd) / den))
    closest = d0 + s * dd
    return 1.0 if math.hypot(*closest) < min_dist else 0.0


def track_frames(frames: Iterable[Frame], profile: CalibrationProfile, fps: float, exposure_s: float | None = None,
                 progress: Callable[[int], None] | None = None) -> Tracks:
    """Run a :class:`Tracker` over frames and return the tracks (missing frame indices become ``dropped``)."""
    tr = Tracker(profile, fps, exposure_s)
    prev = None
    for i, frame in enumerate(frames):
        if prev is not None and frame.index > prev + 1:
            for d in range(prev + 1, frame.index):
                tr.mark_dropped(d)
        tr.update(frame, observe=False)
        prev = frame.index
        if progress is not None:
            progress(i)
    if tr.n_rows == 0:
        raise SourceError("no frames to track")
    return tr.tracks()
