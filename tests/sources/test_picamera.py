"""Contract tests of the picamera2 adapter against a recording fake module."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from tests.sources import fake_picamera2 as fake
from vision_ref.errors import SourceError
from vision_ref.sources.picamera import (
    ExposureLock,
    PiCameraSource,
    choose_sensor_mode,
    lock_from_metadata,
    split_yuv420,
)


@pytest.fixture
def picam(monkeypatch):
    fake.reset()
    monkeypatch.setitem(sys.modules, "picamera2", fake)
    monkeypatch.setitem(sys.modules, "libcamera", fake.libcamera)
    return fake


def _ts(n, fps, start=10_000_000_000, drop=(), jitter_ns=0, seed=0):
    rng = np.random.default_rng(seed)
    period = 1e9 / fps
    out = []
    for i in range(n):
        if i in drop:
            continue
        out.append(int(start + i * period + (rng.uniform(-jitter_ns, jitter_ns) if jitter_ns else 0)))
    return out


def test_imx296_configuration_and_controls(picam):
    picam.reset("imx296", timestamps=_ts(40, 60))
    lock = ExposureLock(1500, 2.5, (1.9, 1.6))
    src = PiCameraSource(exposure=lock).open()
    cam = picam.Picamera2.instances[0]
    (name, kw), = [c for c in cam.calls if c[0] == "create_video_configuration"]
    assert kw["main"] == {"size": (1456, 1088), "format": "YUV420"}
    assert kw["colour_space"] == fake.libcamera.ColorSpace.Smpte170m()
    assert kw["sensor"] == {"output_size": (1456, 1088), "bit_depth": 10}
    assert kw["controls"]["FrameDurationLimits"] == (16667, 16667)
    assert kw["controls"]["AeEnable"] is False and kw["controls"]["AwbEnable"] is False
    assert kw["controls"]["ExposureTime"] == 1500
    assert kw["controls"]["ColourGains"] == (1.9, 1.6)
    assert kw["buffer_count"] >= 6
    assert [c[0] for c in cam.calls].index("configure") < [c[0] for c in cam.calls].index("start")
    assert src.fps == 60.0 and src.size == (1456, 1088) and src.exposure_s == pytest.approx(1.5e-3)
    src.close()
    assert cam.calls[-2:] == [("stop",), ("close",)]


def test_camera_module_3_runs_binned_at_120(picam):
    picam.reset("imx708", timestamps=_ts(5, 120))
    src = PiCameraSource(exposure=ExposureLock(1000, 1.0, (2.0, 1.4)), lores=(768, 432)).open()
    kw = [c for c in picam.Picamera2.instances[0].calls if c[0] == "create_video_configuration"][0][1]
    assert kw["main"]["size"] == (1536, 864)
    assert kw["lores"] == {"size": (768, 432), "format": "YUV420"}
    assert kw["controls"]["FrameDurationLimits"] == (8333, 8333)
    assert kw["buffer_count"] >= 12  # a tenth of a second at 120 fps
    assert src.fps == 120.0
    src.close()


def test_auto_exposure_settles_then_locks_with_a_short_exposure(picam):
    picam.reset("imx296", timestamps=_ts(50, 60))
    src = PiCameraSource(settle_frames=5, max_exposure_us=2000).open()
    cam = picam.Picamera2.instances[0]
    kw = [c for c in cam.calls if c[0] == "create_video_configuration"][0][1]
    assert kw["controls"]["AeEnable"] is True
    sets = [c[1] for c in cam.calls if c[0] == "set_controls"]
    assert sets, "exposure was never locked"
    final = sets[-1]
    assert final["AeEnable"] is False and final["AwbEnable"] is False
    # the fake's AE settled on 8 ms at gain 2: capped to 2 ms, gain x4 to keep the brightness
    assert final["ExposureTime"] == 2000 and final["AnalogueGain"] == pytest.approx(8.0)
    assert final["ColourGains"] == (1.8, 1.5)
    assert cam.released == cam.requests_made == 5
    src.close()


def test_frames_release_every_buffer_and_carry_sensor_timestamps(picam):
    ts = _ts(30, 60)
    picam.reset("imx296", timestamps=ts)
    src = PiCameraSource(exposure=ExposureLock(1500, 1.0, (1.0, 1.0))).open()
    cam = picam.Picamera2.instances[0]
    got = []
    with pytest.raises(SourceError, match="camera lost"):
        for f in src.frames():
            got.append(f)
    assert [f.timestamp_ns for f in got] == ts
    assert [f.index for f in got] == list(range(30))
    assert cam.released == cam.requests_made == 30
    f = got[3]
    assert f.y.shape == (1088, 1456) and f.uv.shape == (544, 728, 2)
    assert int(f.y.max()) == (4 * 7) % 251  # padding columns (255) cut off
    assert (f.uv[..., 0] == 100).all() and (f.uv[..., 1] == 200).all()
    src.close()


def test_consumer_exception_still_releases_the_buffer(picam):
    picam.reset("imx296", timestamps=_ts(10, 60))
    src = PiCameraSource(exposure=ExposureLock(1500, 1.0, (1.0, 1.0))).open()
    cam = picam.Picamera2.instances[0]
    cam.fail_make_array = True
    with pytest.raises(SourceError, match="Device or resource busy"):
        next(src.frames())
    assert cam.released == cam.requests_made == 1


def test_drops_found_from_timestamp_gaps_with_jitter(picam):
    dropped = {7, 8, 20, 41}
    ts = _ts(60, 60, drop=dropped, jitter_ns=1_500_000, seed=3)  # +-1.5 ms jitter on 16.7 ms
    picam.reset("imx296", timestamps=ts)
    src = PiCameraSource(exposure=ExposureLock(1500, 1.0, (1.0, 1.0))).open()
    idx = []
    with pytest.raises(SourceError):
        for f in src.frames():
            idx.append(f.index)
    assert sorted(set(range(60)) - set(idx)) == sorted(dropped)
    assert src.stats.dropped == 4 and len(src.stats.gaps) == 3
    assert 0 < src.stats.jitter_ns < 1_500_000


def test_missing_timestamp_is_an_error(picam):
    picam.reset("imx296", timestamps=_ts(3, 60))
    src = PiCameraSource(exposure=ExposureLock(1500, 1.0, (1.0, 1.0))).open()
    picam.Picamera2.instances[0].omit_timestamp = True
    with pytest.raises(SourceError, match="SensorTimestamp"):
        next(src.frames())


def test_no_camera_is_one_clear_error(picam):
    picam.reset()
    picam.Picamera2.open_error = IndexError("list index out of range")
    with pytest.raises(SourceError, match="cannot open Pi camera 0"):
        PiCameraSource().open()


def test_without_picamera2_the_error_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "picamera2", None)  # import fails
    with pytest.raises(SourceError, match="python3-picamera2"):
        PiCameraSource().open()


def test_exposure_longer_than_a_frame_is_refused(picam):
    picam.reset("imx708", timestamps=_ts(3, 120))
    with pytest.raises(SourceError, match="longer than a frame"):
        PiCameraSource(exposure=ExposureLock(9000, 1.0, (1.0, 1.0))).open()
    assert picam.Picamera2.instances[0].closed


@pytest.mark.parametrize(
    "model, modes, fps, size, rate, raises",
    [
        ("imx296", fake.IMX296_MODES, None, (1456, 1088), 60.0, None),
        ("imx296", fake.IMX296_MODES, 30, (1456, 1088), 30.0, None),
        ("imx296", fake.IMX296_MODES, 120, None, None, "reaches 60.4 fps"),
        ("imx708", fake.IMX708_MODES, None, (1536, 864), 120.0, None),
        ("imx708", fake.IMX708_MODES[1:], None, None, None, "does not offer mode 1536x864"),
        ("ov5647", [{"size": (640, 480), "fps": 90, "bit_depth": 10}, {"size": (1296, 972), "fps": 46, "bit_depth": 10}],
         60, (640, 480), 60.0, None),
        ("ov5647", [{"size": (1296, 972), "fps": 46, "bit_depth": 10}], 60, None, None, "no sensor mode reaching 60"),
        ("imx296", [], None, None, None, "no sensor modes"),
    ],
)
def test_choose_sensor_mode(model, modes, fps, size, rate, raises):
    if raises:
        with pytest.raises(SourceError, match=raises):
            choose_sensor_mode(model, modes, fps)
        return
    mode, got_fps = choose_sensor_mode(model, modes, fps)
    assert tuple(mode["size"]) == size and got_fps == rate


def test_lock_from_metadata_keeps_short_exposures():
    lock = lock_from_metadata({"ExposureTime": 900, "AnalogueGain": 1.5, "ColourGains": (2.0, 1.3)}, 2000)
    assert (lock.exposure_us, lock.analogue_gain, lock.colour_gains) == (900, 1.5, (2.0, 1.3))
    with pytest.raises(SourceError, match="ColourGains"):
        lock_from_metadata({"ExposureTime": 900})
    assert ExposureLock.from_dict(lock.to_dict()) == lock


def test_split_yuv420_matches_a_planar_reference():
    rng = np.random.default_rng(1)
    w, h, stride = 8, 6, 16
    y = rng.integers(0, 256, (h, w), dtype=np.uint8)
    u = rng.integers(0, 256, (h // 2, w // 2), dtype=np.uint8)
    v = rng.integers(0, 256, (h // 2, w // 2), dtype=np.uint8)
    buf = np.zeros((h * 3 // 2, stride), np.uint8)
    buf[:h, :w] = y
    uplane = np.zeros((h // 2, stride // 2), np.uint8)
    uplane[:, : w // 2] = u
    vplane = np.zeros((h // 2, stride // 2), np.uint8)
    vplane[:, : w // 2] = v
    flat = buf.reshape(-1)
    flat[h * stride: h * stride + uplane.size] = uplane.ravel()
    flat[h * stride + uplane.size:] = vplane.ravel()
    gy, guv = split_yuv420(buf, w, h, stride)
    assert (gy == y).all() and (guv[..., 0] == u).all() and (guv[..., 1] == v).all()
    with pytest.raises(SourceError, match="YUV420 buffer"):
        split_yuv420(buf[:-2], w, h, stride)


@pytest.mark.picamera
def test_real_camera_delivers_frames_at_rate():
    pytest.importorskip("picamera2")
    src = PiCameraSource(settle_frames=10)
    try:
        src.open()
    except SourceError as exc:
        pytest.skip(f"no camera: {exc}")
    with src:
        frames = []
        for f in src.frames():
            frames.append(f)
            if len(frames) >= 120:
                break
    assert src.stats.dropped <= 2
    assert abs(src.stats.measured_fps - src.fps) < 0.05 * src.fps


def test_bgr_mode_for_calibration(picam):
    picam.reset("imx296", timestamps=_ts(3, 60))
    src = PiCameraSource(exposure=ExposureLock(1500, 1.0, (1.0, 1.0)), mode="bgr").open()
    f = next(src.frames())
    assert f.bgr.shape == (1088, 1456, 3) and f.y is None
    with pytest.raises(SourceError, match="yuv or bgr"):
        PiCameraSource(mode="rgb")


def test_factory_opens_the_pi_through_the_adapter(picam):
    from vision_ref.sources.factory import open_source

    picam.reset("imx708", timestamps=_ts(3, 120))
    src = open_source("pi:1", exposure=ExposureLock(1000, 1.0, (1.0, 1.0)), mode="yuv").open()
    assert picam.Picamera2.instances[0].camera_num == 1 and src.fps == 120.0
    d = src.describe()
    assert d["model"] == "imx708" and d["exposure_lock"]["exposure_us"] == 1000 and d["sensor_mode"]["size"] == [1536, 864]


def _load_selftest():
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "hardware" / "selftest.py"
    spec = importlib.util.spec_from_file_location("vr_selftest", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_hardware_selftest_reports_and_locks_into_the_profile(picam, tmp_path, monkeypatch, capsys):
    from vision_ref.calibrate.profile import CalibrationProfile
    from vision_ref.calibrate.truth import profile_from_camera
    from vision_ref.camera import CameraModel

    prof = tmp_path / "p.json"
    profile_from_camera(CameraModel.overhead(364, 272)).save(prof)
    picam.reset("imx296", timestamps=_ts(200000, 60, drop={45}))
    selftest = _load_selftest()
    monkeypatch.setattr(sys, "argv", ["selftest", "--seconds", "0.3", "--lock-into", str(prof)])
    rc = selftest.main()
    out = capsys.readouterr().out
    assert "dropped: 1 in 1 gap(s)" in out and "-> held" in out
    assert rc == 1  # one drop is more than --max-drops 0
    assert CalibrationProfile.load(prof).extra["camera_controls"]["exposure_us"] == 2000
