"""The Raspberry Pi camera through picamera2 — the only module that imports it.

Configuration (why each piece):

- a *video* configuration with a ``YUV420`` main stream: the luma plane is what the
  detector needs, with no colour conversion on the Pi's CPU; an optional ``lores``
  stream (also YUV420) when detection runs at a reduced size;
- the sensor mode chosen for the frame rate, per camera model (:data:`SENSOR_MODES`):
  the Global Shutter camera (IMX296) at 1456x1088 ~60 fps; Camera Module 3 (IMX708)
  binned 1536x864 ~120 fps; otherwise the largest mode that reaches the rate;
- ``FrameDurationLimits`` pinned to one period so frames come at a fixed rate and a
  drop shows as a timestamp gap;
- exposure and white balance locked after calibration (``AeEnable``/``AwbEnable``
  off, a short ``ExposureTime`` to keep motion blur small, fixed ``AnalogueGain`` and
  ``ColourGains``): an automatic exposure that moves during a match changes the
  colours the calibration learnt;
- the ``Smpte170m`` colour space (BT.601 limited range), the YUV the project's video
  files decode to, so colours match between live play and review;
- ``buffer_count`` sized for bursts (a stall of the consumer is absorbed by the
  camera's own queue before frames are lost);
- every frame read with ``captured_request()`` as a context manager, so its buffer
  goes back to libcamera even when the consumer raises;
- ``SensorTimestamp`` (ns, from the sensor's start-of-exposure) on every frame; drops
  are found from gaps between them (:class:`DropDetector`).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Iterator

import numpy as np

from vision_ref.errors import SourceError
from vision_ref.messages import Frame
from vision_ref.sources.base import DropDetector, FrameSource


@dataclass(frozen=True)
class SensorMode:
    """The sensor mode the referee runs a camera model in."""

    model: str
    size: tuple[int, int]
    fps: float
    bit_depth: int
    label: str


# Known cameras: (sensor output size, frame rate) the referee uses.
SENSOR_MODES: dict[str, SensorMode] = {
    "imx296": SensorMode("imx296", (1456, 1088), 60.0, 10, "Global Shutter Camera, full sensor"),
    "imx708": SensorMode("imx708", (1536, 864), 120.0, 10, "Camera Module 3, 2x2 binned"),
    "imx708_wide": SensorMode("imx708_wide", (1536, 864), 120.0, 10, "Camera Module 3 Wide, 2x2 binned"),
    "imx477": SensorMode("imx477", (1332, 990), 120.0, 10, "HQ Camera, cropped 2x2 binned"),
}

DEFAULT_MAX_EXPOSURE_US = 2000  # 2 ms: a ball at 5 m/s smears 10 mm (a sixth of its diameter)


def _model_key(model: str) -> str:
    m = (model or "").lower()
    if m.startswith("imx708") and "wide" in m:
        return "imx708_wide"
    for key in SENSOR_MODES:
        if m.startswith(key):
            return key
    return m


def choose_sensor_mode(model: str, sensor_modes: list[dict], fps: float | None = None) -> tuple[dict, float]:
    """The sensor mode (a picamera2 ``sensor_modes`` entry) and frame rate to run at.

    A known model gets its mode from :data:`SENSOR_MODES` (its size must be offered
    by the camera); ``fps`` defaults to that mode's rate and may be lower, never
    higher than the mode can deliver. An unknown model gets the largest mode whose
    maximum rate reaches ``fps`` (default 60). Raises SourceError naming the modes
    on offer when none fits.
    """
    if not sensor_modes:
        raise SourceError(f"camera {model!r} reports no sensor modes")
    offered = ", ".join(f"{m['size'][0]}x{m['size'][1]}@{m.get('fps', 0):.0f}" for m in sensor_modes)
    known = SENSOR_MODES.get(_model_key(model))
    if known is not None:
        want = fps if fps is not None else known.fps
        for m in sensor_modes:
            if tuple(m["size"]) == known.size and m.get("bit_depth", known.bit_depth) == known.bit_depth:
                if float(m.get("fps", want)) + 0.5 < want:
                    raise SourceError(f"{model}: mode {known.size[0]}x{known.size[1]} reaches "
                                      f"{m['fps']:.1f} fps, not {want:g}")
                return m, float(want)
        raise SourceError(f"{model}: the camera does not offer mode {known.size[0]}x{known.size[1]} "
                          f"({known.label}); it offers {offered}")
    want = float(fps) if fps is not None else 60.0
    fitting = [m for m in sensor_modes if float(m.get("fps", 0)) + 0.5 >= want]
    if not fitting:
        raise SourceError(f"camera {model!r} has no sensor mode reaching {want:g} fps; it offers {offered}")
    best = max(fitting, key=lambda m: (m["size"][0] * m["size"][1], m.get("bit_depth", 0)))
    return best, want


@dataclass
class ExposureLock:
    """Fixed exposure and colour settings (from calibration: profile.extra['camera_controls'])."""

    exposure_us: int
    analogue_gain: float
    colour_gains: tuple[float, float]

    def controls(self) -> dict[str, Any]:
        return {"AeEnable": False, "AwbEnable": False, "ExposureTime": int(self.exposure_us),
                "AnalogueGain": float(self.analogue_gain),
                "ColourGains": (float(self.colour_gains[0]), float(self.colour_gains[1]))}

    def to_dict(self) -> dict[str, Any]:
        return {"exposure_us": int(self.exposure_us), "analogue_gain": float(self.analogue_gain),
                "colour_gains": [float(self.colour_gains[0]), float(self.colour_gains[1])]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "ExposureLock":
        try:
            gains = d["colour_gains"]
            return cls(int(d["exposure_us"]), float(d["analogue_gain"]), (float(gains[0]), float(gains[1])))
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise SourceError(f"camera_controls: need exposure_us, analogue_gain, colour_gains [r, b] ({exc})") from None


def lock_from_metadata(md: dict, max_exposure_us: int = DEFAULT_MAX_EXPOSURE_US) -> ExposureLock:
    """The exposure the auto algorithms settled on, capped at ``max_exposure_us`` with
    the lost light made up by analogue gain (a short exposure keeps balls round)."""
    try:
        exp = float(md["ExposureTime"])
        gain = float(md.get("AnalogueGain", 1.0))
        cg = md["ColourGains"]
    except (KeyError, TypeError) as exc:
        raise SourceError(f"camera metadata lacks {exc} needed to lock the exposure") from None
    if exp > max_exposure_us:
        gain *= exp / max_exposure_us
        exp = float(max_exposure_us)
    return ExposureLock(int(round(exp)), min(gain, 16.0), (float(cg[0]), float(cg[1])))


def split_yuv420(arr: np.ndarray, width: int, height: int, stride: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Y (H, W) and interleaved UV (H/2, W/2, 2) from picamera2's planar YUV420 buffer.

    ``make_array`` returns the buffer as (H*3/2, stride) bytes: H rows of luma of
    ``stride`` bytes, then the U plane and the V plane, each H/2 rows of stride/2
    bytes. The planes are cut from the flat bytes, so any even height works.
    """
    a = np.asarray(arr, dtype=np.uint8)
    stride = int(stride or (a.shape[1] if a.ndim == 2 else width))
    cw, ch, cs = width // 2, height // 2, stride // 2
    need = height * stride + 2 * ch * cs
    if a.ndim != 2 or a.size < need or stride < width:
        raise SourceError(f"YUV420 buffer is {a.shape}, expected ({height * 3 // 2}, {stride}) for {width}x{height}")
    flat = a.reshape(-1)
    y = flat[: height * stride].reshape(height, stride)[:, :width]
    off = height * stride
    u = flat[off: off + ch * cs].reshape(ch, cs)[:, :cw]
    v = flat[off + ch * cs: off + 2 * ch * cs].reshape(ch, cs)[:, :cw]
    return np.ascontiguousarray(y), np.dstack([u, v])


class PiCameraSource(FrameSource):
    """Frames from a Raspberry Pi camera (picamera2 / libcamera).

    ``fps``: the rate to run at (default: the model's rate). ``lores``: optional
    (w, h) of a second YUV420 stream; with ``use_lores`` the frames carry it instead
    of the main stream (the main stream is still what the recorder may take).
    ``exposure``: an :class:`ExposureLock` from calibration; without it the auto
    algorithms run for ``settle_frames`` and are then locked with the exposure capped
    at ``max_exposure_us``. ``buffer_count``: camera buffers (default: a tenth of a
    second of frames, at least 6). A camera that stops delivering blocks in
    ``captured_request``; the live loop's watchdog reports it as lost (``timeout_s``).
    """

    name = "pi"
    realtime = True

    def __init__(
        self,
        camera_num: int = 0,
        fps: float | None = None,
        lores: tuple[int, int] | None = None,
        use_lores: bool = False,
        exposure: ExposureLock | None = None,
        max_exposure_us: int = DEFAULT_MAX_EXPOSURE_US,
        settle_frames: int = 30,
        buffer_count: int | None = None,
        timeout_s: float = 2.0,
        module: Any = None,
        mode: str = "yuv",
    ):
        super().__init__()
        self.camera_num = camera_num
        self._want_fps = fps
        self.lores = lores
        self.use_lores = use_lores and lores is not None
        self.exposure_lock = exposure
        self.max_exposure_us = int(max_exposure_us)
        self.settle_frames = int(settle_frames)
        self._buffer_count = buffer_count
        self.timeout_s = float(timeout_s)
        self._module = module
        if mode not in ("yuv", "bgr"):
            raise SourceError(f"Pi camera mode must be yuv or bgr, got {mode!r}")
        self.pixel_mode = mode  # bgr: converted here (calibration wants colour images); the tracker takes yuv
        self._cam = None
        self._fps = float(fps or 60.0)
        self._size = (0, 0)
        self._stride: int | None = None
        self.model = ""
        self.mode: dict | None = None  # the sensor mode chosen
        self.config: dict | None = None
        self.detector: DropDetector | None = None
        self._exposure_us: int | None = exposure.exposure_us if exposure else None
        self.last_metadata: dict = {}

    # ---- FrameSource ------------------------------------------------------------
    @property
    def exposure_s(self) -> float | None:
        return None if self._exposure_us is None else self._exposure_us * 1e-6

    def _import(self):
        if self._module is not None:
            return self._module
        try:
            return importlib.import_module("picamera2")
        except ImportError as exc:
            raise SourceError(
                "picamera2 is not available (it is installed with Raspberry Pi OS: `sudo apt install "
                f"python3-picamera2`, and the venv must see system packages; hardware/setup-pi.sh does both): {exc}"
            ) from None

    def open(self) -> "PiCameraSource":
        mod = self._import()
        try:
            cam = mod.Picamera2(self.camera_num)
        except Exception as exc:  # libcamera raises plain RuntimeError/IndexError for no camera
            raise SourceError(f"cannot open Pi camera {self.camera_num}: {exc}") from None
        self._cam = cam
        try:
            self._configure(cam)
            cam.start()
            if self.exposure_lock is None:
                self._settle_and_lock(cam)
        except SourceError:
            self.close()
            raise
        except Exception as exc:
            self.close()
            raise SourceError(f"Pi camera {self.camera_num}: configuration failed: {exc}") from None
        self.detector = DropDetector(self._fps)
        self.stats = self.detector.stats
        self._opened = True
        return self

    def _configure(self, cam) -> None:
        props = getattr(cam, "camera_properties", {}) or {}
        self.model = str(props.get("Model", "unknown"))
        mode, fps = choose_sensor_mode(self.model, list(cam.sensor_modes), self._want_fps)
        self.mode, self._fps = mode, fps
        main_size = tuple(int(v) for v in mode["size"])
        frame_us = int(round(1e6 / fps))
        controls: dict[str, Any] = {"FrameDurationLimits": (frame_us, frame_us)}
        if self.exposure_lock is not None:
            if self.exposure_lock.exposure_us > frame_us:
                raise SourceError(f"locked exposure {self.exposure_lock.exposure_us} us is longer than a frame "
                                  f"({frame_us} us at {fps:g} fps)")
            controls.update(self.exposure_lock.controls())
        else:
            # Let AE/AWB converge first, but never to an exposure longer than the cap.
            controls.update({"AeEnable": True, "AwbEnable": True})
        buffers = self._buffer_count or max(6, int(round(fps / 10.0)))
        # SMPTE 170M = BT.601 limited range: the YUV the project's files decode to, so the
        # tracker sees the same colours live as in review (picamera2's video default is Rec709)
        try:
            colour_space = importlib.import_module("libcamera").ColorSpace.Smpte170m()
        except (ImportError, AttributeError) as exc:
            raise SourceError(f"libcamera's Python bindings are missing ({exc}); install python3-libcamera") from None
        kwargs: dict[str, Any] = {
            "colour_space": colour_space,
            "main": {"size": main_size, "format": "YUV420"},
            "sensor": {"output_size": main_size, "bit_depth": int(mode.get("bit_depth", 10))},
            "controls": controls,
            "buffer_count": buffers,
        }
        if self.lores is not None:
            lw, lh = (int(self.lores[0]), int(self.lores[1]))
            if lw % 2 or lh % 2 or lw > main_size[0] or lh > main_size[1]:
                raise SourceError(f"lores {lw}x{lh} must be even and no larger than the main {main_size[0]}x{main_size[1]}")
            kwargs["lores"] = {"size": (lw, lh), "format": "YUV420"}
        config = cam.create_video_configuration(**kwargs)
        cam.configure(config)
        self.config = config
        stream = "lores" if self.use_lores else "main"
        sc = cam.stream_configuration(stream)
        self._size = tuple(int(v) for v in sc["size"])
        self._stride = int(sc.get("stride") or self._size[0])

    def _settle_and_lock(self, cam) -> None:
        md: dict = {}
        for _ in range(max(1, self.settle_frames)):
            with cam.captured_request() as request:
                md = request.get_metadata()
        lock = lock_from_metadata(md, min(self.max_exposure_us, int(1e6 / self._fps)))
        cam.set_controls(lock.controls())
        self.exposure_lock = lock
        self._exposure_us = lock.exposure_us

    def close(self) -> None:
        cam, self._cam = self._cam, None
        if cam is not None:
            for step in ("stop", "close"):
                try:
                    getattr(cam, step)()
                except Exception:  # closing a camera that already vanished must not mask the cause
                    pass
        self._opened = False

    def frames(self) -> Iterator[Frame]:
        if self._cam is None or self.detector is None:
            raise SourceError("Pi camera is not open")
        cam, w, h = self._cam, self._size[0], self._size[1]
        stream = "lores" if self.use_lores else "main"
        while self._cam is not None:
            try:
                with cam.captured_request() as request:
                    md = request.get_metadata()
                    arr = request.make_array(stream)
            except SourceError:
                raise
            except Exception as exc:
                raise SourceError(f"Pi camera lost: {exc}") from None
            ts = md.get("SensorTimestamp")
            if ts is None:
                raise SourceError("Pi camera frame has no SensorTimestamp")
            self.last_metadata = md  # the self-test checks the lock frame by frame
            if md.get("ExposureTime"):
                self._exposure_us = int(md["ExposureTime"])
            index, _ = self.detector.observe(int(ts))
            y, uv = split_yuv420(arr, w, h, self._stride)
            if self.pixel_mode == "bgr":
                import cv2

                nv12 = np.vstack([y, uv.reshape(h // 2, w)])
                yield Frame(index, int(ts), bgr=cv2.cvtColor(nv12, cv2.COLOR_YUV2BGR_NV12))
            else:
                yield Frame(index, int(ts), y=y, uv=uv)

    def describe(self) -> dict:
        d = super().describe()
        d.update({"model": self.model, "sensor_mode": None if self.mode is None else
                  {"size": list(self.mode["size"]), "fps": self.mode.get("fps"), "bit_depth": self.mode.get("bit_depth")},
                  "exposure_lock": None if self.exposure_lock is None else self.exposure_lock.to_dict(),
                  "stream": "lores" if self.use_lores else "main"})
        return d
