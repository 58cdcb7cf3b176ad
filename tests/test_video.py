import os
import sys

import pytest

from vision_ref.video import _read_exact, _widen_pipe


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pipe sizes are a Linux fcntl")
def test_the_reader_pipe_is_widened_to_hold_a_frame():
    import fcntl

    r, w = os.pipe()
    try:
        with os.fdopen(r, "rb", buffering=0) as stream:
            frame_bytes = 728 * 544 * 3 // 2
            _widen_pipe(stream, frame_bytes)
            assert fcntl.fcntl(r, getattr(fcntl, "F_GETPIPE_SZ", 1032)) >= frame_bytes
            # a whole frame now fits in the pipe at once, and comes out exactly
            payload = bytes(range(256)) * (frame_bytes // 256)
            os.write(w, payload)
            os.close(w)
            w = -1
            assert _read_exact(stream, len(payload)) == payload
            assert _read_exact(stream, 10) == b""
    finally:
        if w >= 0:
            os.close(w)


def test_widening_a_pipe_that_cannot_be_widened_is_harmless(tmp_path):
    with open(tmp_path / "f", "wb+", buffering=0) as f:  # a file, not a pipe: the fcntl fails quietly
        _widen_pipe(f, 1 << 20)
        f.write(b"abc")
        f.seek(0)
        assert _read_exact(f, 3) == b"abc"


def test_the_sidecar_carries_the_exposure_time(tmp_path):
    import numpy as np

    from vision_ref.video import VideoReader, VideoWriter, read_sidecar_meta, read_timestamps

    path = tmp_path / "v.mp4"
    with VideoWriter(path, 32, 24, 60.0, timestamps_meta={"exposure_s": "0.004"}) as vw:
        for i in range(3):
            vw.write(np.full((24, 32, 3), 40 * i, np.uint8), 1000 + i * 16_666_667)
    assert read_sidecar_meta(path) == {"exposure_s": "0.004"}
    assert list(read_timestamps(path)) == [1000 + i * 16_666_667 for i in range(3)]  # the comment is not a frame
    assert VideoReader(path).exposure_s == 0.004


def test_the_json_sidecar_form_and_no_sidecar(tmp_path):
    from vision_ref.video import sidecar_exposure, write_timestamps

    write_timestamps(tmp_path / "a.mp4", [0, 8_333_333], fmt="json", meta={"exposure_s": 0.002})
    assert sidecar_exposure(tmp_path / "a.mp4", 120.0) == 0.002
    assert sidecar_exposure(tmp_path / "none.mp4", 120.0) is None
    write_timestamps(tmp_path / "b.mp4", [0, 8_333_333], meta={"fps": 120})
    assert sidecar_exposure(tmp_path / "b.mp4", 120.0) is None  # the sidecar says nothing about it


@pytest.mark.parametrize("value, fps", [("soon", 60.0), ("0", 60.0), ("0.02", 60.0)])
def test_an_exposure_the_video_cannot_have_is_named(tmp_path, value, fps):
    from vision_ref.errors import VideoError
    from vision_ref.video import sidecar_exposure, write_timestamps

    side = write_timestamps(tmp_path / "v.mp4", [0, 16_666_667], meta={"exposure_s": value})
    with pytest.raises(VideoError, match=f"{side.name}: exposure_s must be a time in seconds .* got '{value}'"):
        sidecar_exposure(tmp_path / "v.mp4", fps)


def test_a_reader_given_the_probe_of_its_file_does_not_probe_again(tmp_path, monkeypatch):
    import numpy as np

    import vision_ref.video as video

    frames = [np.full((16, 16, 3), 40 * i, np.uint8) for i in range(3)]
    video.write_video(tmp_path / "a.mp4", frames, 30.0, crf=0, preset="ultrafast")
    video.write_video(tmp_path / "b.mp4", frames[:2], 30.0, crf=0, preset="ultrafast")
    info = video.probe(tmp_path / "a.mp4")
    calls = []
    real = video.probe
    monkeypatch.setattr(video, "probe", lambda p: calls.append(p) or real(p))
    assert video.VideoReader(tmp_path / "a.mp4", info=info).info == info and calls == []
    # another file's probe is not taken for this one
    assert video.VideoReader(tmp_path / "b.mp4", info=info).info.path.endswith("b.mp4")
    assert len(calls) == 1


def _ramp_video(path, n=6):
    import numpy as np

    import vision_ref.video as video

    frames = [np.full((16, 24, 3), 30 * i, np.uint8) for i in range(n)]
    video.write_video(path, frames, 30.0, crf=0, preset="ultrafast")
    return path


def test_frames_read_into_a_ring_of_buffers_are_the_frames_read_fresh(tmp_path):
    import numpy as np

    from vision_ref.video import VideoReader

    path = _ramp_video(tmp_path / "a.mp4")
    fresh = [(f.y.copy(), f.uv.copy()) for f in VideoReader(path, mode="yuv")]
    seen = []
    ring = VideoReader(path, mode="yuv", reuse_buffers=2)
    for f in ring:
        seen.append((f, f.y.copy(), f.uv.copy()))
    assert len(seen) == len(fresh) == 6 and ring.error is None
    for (f, y, uv), (y0, uv0) in zip(seen, fresh):
        assert np.array_equal(y, y0) and np.array_equal(uv, uv0)
    # the ring is reused: a frame kept past two more frames shows a later frame's pixels
    assert np.array_equal(seen[0][0].y, fresh[4][0])


@pytest.mark.parametrize("n", [-1, 1])
def test_a_ring_of_fewer_than_two_buffers_is_refused(tmp_path, n):
    from vision_ref.errors import VideoError
    from vision_ref.video import VideoReader

    with pytest.raises(VideoError, match="reuse_buffers must be 0 .off. or at least 2"):
        VideoReader(_ramp_video(tmp_path / "a.mp4"), reuse_buffers=n)


def test_a_decoder_started_early_gives_every_frame_and_one_never_read_is_stopped(tmp_path):
    from vision_ref.video import VideoReader

    path = _ramp_video(tmp_path / "a.mp4")
    r = VideoReader(path, mode="yuv").start()
    assert sum(1 for _ in r) == 6 and r.error is None
    r2 = VideoReader(path).start()
    proc = r2._pending[0]
    r2.close()
    assert proc.poll() is not None and r2._pending is None
    assert sum(1 for _ in r2) == 6  # closed before reading: a later iteration starts afresh
