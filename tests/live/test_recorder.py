import os
import time

import numpy as np
import pytest

from vision_ref.errors import VideoError
from vision_ref.live.recorder import SessionRecorder
from vision_ref.messages import Frame
from vision_ref.video import VideoReader, read_timestamps


def _frames(n, start=0, drop=()):
    rng = np.random.default_rng(start)
    for i in range(start, start + n):
        if i in drop:
            continue
        y = rng.integers(0, 255, (48, 64), dtype=np.uint8)
        uv = np.full((24, 32, 2), 128, np.uint8)
        yield Frame(i, 5_000_000_000 + i * 16_666_667, y=y, uv=uv)


def test_segments_rotate_and_sidecars_hold_every_written_timestamp(tmp_path):
    rec = SessionRecorder(tmp_path, "s1", 60.0, segment_s=0.5)
    sent = list(_frames(75, drop={40, 41}))
    for f in sent:
        rec.offer(f, block=True)
    rec.close()
    segs = sorted(tmp_path.glob("s1-*.mp4"))
    assert len(segs) == 3  # 30 + 30 + 13 frames
    ts = np.concatenate([read_timestamps(s) for s in segs])
    assert list(ts) == [f.timestamp_ns for f in sent]
    n = sum(sum(1 for _ in VideoReader(s)) for s in segs)
    assert n == len(sent) == rec.written
    assert rec.segment_for(45) == str(segs[1]) and rec.segment_for(0) == str(segs[0])


def test_each_sidecar_records_the_exposure_when_the_source_knows_it(tmp_path):
    from vision_ref.video import sidecar_exposure

    rec = SessionRecorder(tmp_path, "s2", 60.0, segment_s=0.5, exposure_s=0.0025)
    for f in _frames(40):
        rec.offer(f, block=True)
    rec.close()
    segs = sorted(tmp_path.glob("s2-*.mp4"))
    assert len(segs) == 2 and all(sidecar_exposure(s, 60.0) == 0.0025 for s in segs)
    assert len(read_timestamps(segs[0])) == 30


def test_disk_budget_deletes_the_oldest_recordings_first(tmp_path):
    events = []
    for k in range(3):
        old = tmp_path / f"old{k}-0001.mp4"
        old.write_bytes(b"x" * 400_000)
        (tmp_path / f"old{k}-0001.timestamps.txt").write_text("1\n")
        os.utime(old, (time.time() - 1000 + k, time.time() - 1000 + k))
    rec = SessionRecorder(tmp_path, "new", 60.0, budget_bytes=500_000, on_incident=lambda k, m: events.append(m))
    for f in _frames(10):
        rec.offer(f, block=True)
    rec.close()
    left = sorted(p.name for p in tmp_path.glob("*.mp4"))
    assert "old0-0001.mp4" not in left and "old1-0001.mp4" not in left
    assert "old2-0001.mp4" in left and "new-0001.mp4" in left
    assert not (tmp_path / "old0-0001.timestamps.txt").exists()
    assert any("old0-0001.mp4" in m for m in events)


def test_a_live_camera_never_waits_for_the_recorder(tmp_path):
    rec = SessionRecorder(tmp_path, "s", 60.0, queue_s=0.1)  # 6 frames of slack
    t0 = time.perf_counter()
    for f in _frames(200):
        rec.offer(f)  # non-blocking, as the capture thread of a camera does
    assert time.perf_counter() - t0 < 0.5
    rec.close()
    assert rec.written + rec.lost == 200
    ts = read_timestamps(sorted(tmp_path.glob("*.mp4"))[0])
    assert len(ts) == rec.written  # lost frames are gaps in the sidecar, not made up


def test_bad_budget():
    with pytest.raises(VideoError, match="budget"):
        SessionRecorder("/tmp", "s", 60.0, budget_bytes=0)
