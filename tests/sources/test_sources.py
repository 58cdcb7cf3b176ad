import numpy as np
import pytest

from vision_ref.errors import SourceError
from vision_ref.sources.base import DropDetector
from vision_ref.sources.factory import open_source, synthetic_clip
from vision_ref.sources.opencv import FileSource, OpenCVCameraSource, bgr_to_yuv420, device_number
from vision_ref.sources.synthetic import MemorySource


def _reference_drops(ts, period):
    """Slow, obvious twin: missing frames between consecutive timestamps."""
    out = []
    idx = 0
    for a, b in zip(ts, ts[1:]):
        k = round((b - a) / period)
        idx += max(1, k)
        out.append(idx)
    return [0] + out


@pytest.mark.parametrize("fps, true_fps, jitter_frac, seed", [(60, 60, 0.05, 0), (60, 60.38, 0.1, 1), (120, 119.9, 0.2, 2)])
def test_drop_detector_matches_a_reference_on_seeded_streams(fps, true_fps, jitter_frac, seed):
    rng = np.random.default_rng(seed)
    period = 1e9 / true_fps
    n = 3000  # 50 s at 60 fps: a nominal period would drift by 19 frames at 60.38
    keep = rng.random(n) > 0.03
    keep[:10] = True
    t = np.arange(n) * period + rng.uniform(-jitter_frac, jitter_frac, n) * period
    ts = [int(v) for v in t[keep]]
    det = DropDetector(fps)
    idx = [det.observe(v)[0] for v in ts]
    assert idx == list(np.nonzero(keep)[0])
    assert idx == _reference_drops(ts, period)
    last = int(np.nonzero(keep)[0][-1])
    assert det.stats.dropped == last + 1 - keep.sum()  # drops after the last frame cannot be seen
    assert abs(det.stats.measured_fps - true_fps) < 0.05


def test_drop_detector_refuses_time_going_backwards():
    det = DropDetector(60)
    det.observe(1_000_000_000)
    with pytest.raises(SourceError, match="went backwards"):
        det.observe(999_000_000)
    with pytest.raises(SourceError, match="positive"):
        DropDetector(0)


def _write_clip(path, n=30, fps=30.0, drop=()):
    from vision_ref.video import write_video

    rng = np.random.default_rng(0)
    frames = [rng.integers(0, 255, (48, 64, 3), dtype=np.uint8) for i in range(n) if i not in drop]
    ts = [int(round(i * 1e9 / fps)) for i in range(n) if i not in drop]
    write_video(path, frames, fps, timestamps_ns=ts, preset="ultrafast")
    return ts


def test_file_source_turns_sidecar_gaps_into_index_jumps(tmp_path):
    ts = _write_clip(tmp_path / "c.mp4", drop={7, 8, 20})
    with FileSource(tmp_path / "c.mp4", mode="yuv") as src:
        frames = list(src.frames())
    assert [f.index for f in frames] == [i for i in range(30) if i not in {7, 8, 20}]
    assert [f.timestamp_ns for f in frames] == ts
    assert src.stats.dropped == 3 and src.has_sidecar
    assert frames[0].y.shape == (48, 64) and frames[0].uv.shape == (24, 32, 2)


def test_file_source_errors_are_source_errors(tmp_path):
    with pytest.raises(SourceError, match="no such file"):
        FileSource(tmp_path / "none.mp4").open()
    (tmp_path / "x.mp4").write_bytes(b"not a video")
    with pytest.raises(SourceError):
        FileSource(tmp_path / "x.mp4").open()


def test_memory_source_stamps_repeats_and_drops():
    imgs = [np.full((8, 8, 3), i, np.uint8) for i in range(3)]
    src = MemorySource(imgs, 120.0, repeat=2, drop={4})
    got = list(src.frames())
    assert [f.index for f in got] == [0, 1, 2, 3, 5]
    assert got[3].timestamp_ns == round(3 * 1e9 / 120)
    assert int(got[4].bgr[0, 0, 0]) == 2
    assert src.stats.dropped == 1


def test_bgr_to_yuv420_matches_what_the_video_reader_decodes(tmp_path):
    """Synthetic YUV frames must look like decoded files (and the Pi's SMPTE 170M frames)."""
    import cv2

    from vision_ref.video import VideoReader, write_video

    rng = np.random.default_rng(2)
    bgr = cv2.GaussianBlur(rng.integers(0, 255, (32, 48, 3), dtype=np.uint8), (7, 7), 3)
    bgr[4:12, 4:12] = (28, 30, 196)  # the cue ball's red
    write_video(tmp_path / "l.mp4", [bgr], 30.0, crf=0, preset="ultrafast")  # crf 0: lossless YUV
    dec = next(iter(VideoReader(tmp_path / "l.mp4", mode="yuv")))
    y, uv = bgr_to_yuv420(bgr)
    assert np.abs(y.astype(int) - dec.y.astype(int)).max() <= 1
    assert np.abs(uv.astype(int) - dec.uv.astype(int)).mean() < 1.0


def test_synthetic_source_renders_a_scenario_with_drops():
    from vision_ref.camera import CameraModel
    from vision_ref.sim.render import RenderSettings
    from vision_ref.sources.synthetic import SyntheticSource

    sim = synthetic_clip("synthetic:carom_P2")
    cam = CameraModel.overhead(160, 120)
    src = SyntheticSource(sim, cam, RenderSettings(fps=30.0, player="none", draw_cue=False), mode="yuv", drop={3})
    got = []
    for f in src.frames():
        got.append(f)
        if len(got) == 6:
            break
    assert [f.index for f in got] == [0, 1, 2, 4, 5, 6]
    assert got[0].y.shape == (120, 160) and got[0].uv.shape == (60, 80, 2)
    assert got[2].timestamp_ns == round(2 * 1e9 / 30)
    assert src.fps == 30.0 and src.size == (160, 120)


@pytest.mark.parametrize("spec, message", [
    ("synthetic:", "needs a name"),
    ("synthetic:no_such_scenario", "unknown scenario"),
    ("synthetic:random:x", "whole number"),
    ("synthetic:random:0", "at least one"),
    ("synthetic:carom_P2,foul_F1_miss", "cannot be rendered as one clip"),
    ("/no/such/file.mp4", "not pi, /dev/videoN"),
    ("pi:zero", "camera number"),
])
def test_source_specs_errors(spec, message):
    with pytest.raises(SourceError, match=message):
        open_source(spec)


def test_device_spec():
    assert device_number("/dev/video3") == 3 and device_number("2") == 2
    with pytest.raises(SourceError, match="no such camera device"):
        OpenCVCameraSource("/dev/video97").open()
