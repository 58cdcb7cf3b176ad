"""A recording stand-in for the picamera2 module (this machine has no camera).

It records every call the adapter makes (configuration, controls, start/stop) and
counts requests acquired and released, and plays a list of sensor timestamps so
drop detection can be tested with gaps and jitter. Buffers are YUV420 laid out as
picamera2's ``make_array`` returns them: (H*3/2, stride) with padding columns.
"""

from __future__ import annotations

import numpy as np

IMX296_MODES = [{"format": "SRGGB10_CSI2P", "bit_depth": 10, "size": (1456, 1088), "fps": 60.38,
                 "crop_limits": (0, 0, 1456, 1088), "exposure_limits": (29, 15534385, None)}]
IMX708_MODES = [
    {"format": "SRGGB10_CSI2P", "bit_depth": 10, "size": (1536, 864), "fps": 120.13},
    {"format": "SRGGB10_CSI2P", "bit_depth": 10, "size": (2304, 1296), "fps": 56.03},
    {"format": "SRGGB10_CSI2P", "bit_depth": 10, "size": (4608, 2592), "fps": 14.35},
]


class CameraVanished(RuntimeError):
    pass


class FakeRequest:
    def __init__(self, cam: "Picamera2", ts: int):
        self.cam = cam
        self.ts = ts
        self.released = False

    def get_metadata(self) -> dict:
        md = {"SensorTimestamp": self.ts, "ExposureTime": self.cam.controls.get("ExposureTime", 8000),
              "AnalogueGain": self.cam.controls.get("AnalogueGain", 2.0),
              "ColourGains": self.cam.controls.get("ColourGains", (1.8, 1.5)), "FrameDuration": 16666}
        if self.cam.omit_timestamp:
            md.pop("SensorTimestamp")
        return md

    def make_array(self, name: str) -> np.ndarray:
        if self.released:
            raise RuntimeError("make_array on a released request")
        if self.cam.fail_make_array:
            raise CameraVanished("Device or resource busy")
        sc = self.cam.stream_configuration(name)
        w, h = sc["size"]
        stride = sc["stride"]
        arr = np.zeros((h * 3 // 2, stride), np.uint8)
        k = self.cam.requests_made
        arr[:h, :w] = (k * 7) % 251  # luma encodes the frame number
        arr[:h, w:] = 255  # padding must never reach the frame
        half = h // 4
        arr[h:h + half] = 100  # U
        arr[h + half:] = 200  # V
        return arr

    def release(self) -> None:
        self.released = True
        self.cam.released += 1


class _Ctx:
    def __init__(self, cam, req):
        self.cam, self.req = cam, req

    def __enter__(self):
        return self.req

    def __exit__(self, *exc):
        self.req.release()
        return False


class Picamera2:
    instances: list["Picamera2"] = []
    model = "imx296"
    modes = IMX296_MODES
    timestamps: list[int] = []
    open_error: Exception | None = None

    def __init__(self, camera_num: int = 0):
        if Picamera2.open_error is not None:
            raise Picamera2.open_error
        self.camera_num = camera_num
        self.calls: list[tuple] = []
        self.controls: dict = {}
        self.config = None
        self.started = False
        self.closed = False
        self.requests_made = 0
        self.released = 0
        self.omit_timestamp = False
        self.fail_make_array = False
        self._ts = list(Picamera2.timestamps)
        Picamera2.instances.append(self)

    @property
    def camera_properties(self) -> dict:
        return {"Model": self.model, "PixelArraySize": self.modes[0]["size"]}

    @property
    def sensor_modes(self) -> list[dict]:
        return [dict(m) for m in self.modes]

    def create_video_configuration(self, main=None, lores=None, sensor=None, controls=None, buffer_count=6, **kw):
        self.calls.append(("create_video_configuration", dict(main=main, lores=lores, sensor=sensor,
                                                              controls=controls, buffer_count=buffer_count, **kw)))
        cfg = {"use_case": "video", "main": dict(main or {}), "lores": None if lores is None else dict(lores),
               "sensor": dict(sensor or {}), "controls": dict(controls or {}), "buffer_count": buffer_count}
        for name in ("main", "lores"):
            if cfg[name] is not None:
                w = cfg[name]["size"][0]
                cfg[name]["stride"] = ((w + 63) // 64) * 64 + (64 if w % 64 == 0 else 0)
        return cfg

    def configure(self, config) -> None:
        self.calls.append(("configure", config))
        self.config = config
        self.controls.update(config.get("controls", {}))

    def stream_configuration(self, name: str) -> dict:
        return self.config[name]

    def set_controls(self, controls: dict) -> None:
        self.calls.append(("set_controls", dict(controls)))
        self.controls.update(controls)

    def start(self) -> None:
        self.calls.append(("start",))
        self.started = True

    def stop(self) -> None:
        self.calls.append(("stop",))
        self.started = False

    def close(self) -> None:
        self.calls.append(("close",))
        self.closed = True

    def captured_request(self, wait=None, flush=None):
        if not self.started:
            raise RuntimeError("camera not started")
        if not self._ts:
            raise CameraVanished("no more frames (camera unplugged)")
        ts = self._ts.pop(0)
        self.requests_made += 1
        return _Ctx(self, FakeRequest(self, ts))


def reset(model: str = "imx296", modes=None, timestamps=None) -> None:
    Picamera2.instances = []
    Picamera2.model = model
    Picamera2.modes = modes if modes is not None else (IMX708_MODES if model.startswith("imx708") else IMX296_MODES)
    Picamera2.timestamps = list(timestamps or [])
    Picamera2.open_error = None


class _ColorSpace:
    def __init__(self, name: str):
        self.name = name

    def __eq__(self, other):
        return isinstance(other, _ColorSpace) and other.name == self.name

    def __repr__(self):
        return f"ColorSpace.{self.name}()"

    @staticmethod
    def Smpte170m():
        return _ColorSpace("Smpte170m")

    @staticmethod
    def Rec709():
        return _ColorSpace("Rec709")


class libcamera:  # stands in for the libcamera Python bindings module
    ColorSpace = _ColorSpace
