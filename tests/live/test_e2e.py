"""The live loop on rendered footage with the real tracker and event inference: a
two-shot match streamed at 60 fps gives the same decisions as `vision-ref review`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from vision_ref.cli import main
from vision_ref.live.log import MatchLog

CACHE = Path(os.environ.get("VISION_REF_TEST_CACHE", "/tmp/vision-ref-test-cache")) / "live"
NAME = "seq2_v1"


@pytest.fixture(scope="session")
def two_shot_clip():
    """A rendered two-shot sequence (546x408, 60 fps, no cue stick; ~20 s to render, cached)."""
    from vision_ref.calibrate.truth import profile_from_camera
    from vision_ref.camera import CameraModel
    from vision_ref.sim.physics import Layout
    from vision_ref.sim.render import RenderSettings, render_clip
    from vision_ref.sim.sequence import ShotSequence

    CACHE.mkdir(parents=True, exist_ok=True)
    video, prof = CACHE / f"{NAME}.mp4", CACHE / f"{NAME}.profile.json"
    if not (video.is_file() and prof.is_file()):
        seq = ShotSequence(Layout.standard(), ["legal_pins", "carom"], seed=3, fps=60.0)
        cam = CameraModel.overhead(546, 408)
        render_clip(seq, cam, RenderSettings(fps=60.0, player="none", draw_cue=False, preset="veryfast"), CACHE, NAME)
        profile_from_camera(cam).save(prof)
    return video, prof


def test_live_stream_at_60fps_decides_like_review(tmp_path, two_shot_clip, capsys):
    from vision_ref.review.pipeline import review_video

    video, prof = two_shot_clip
    rev = review_video(video, tmp_path / "rev", calibration=str(prof), annotated=False, progress=False)
    db = tmp_path / "m.sqlite"
    rc = main(["live", "--source", str(video), "--calibration", str(prof), "--pace", "--board", "lines",
               "--db", str(db), "--record", str(tmp_path / "rec"), "--commands", os.devnull])
    assert rc == 0
    out = capsys.readouterr().out
    log = MatchLog(db)
    live = [s["decision"] for s in log.active_shots(1)]
    assert len(rev.decisions) == 2
    assert live == rev.decisions
    assert out.count("DECISION ") == 2
    # the session recording replays with the same timestamps as the source
    seg = sorted((tmp_path / "rec").glob("*.mp4"))
    assert seg
    from vision_ref.video import read_timestamps

    assert list(read_timestamps(seg[0])) == list(read_timestamps(video))
    shots = log.active_shots(1)
    assert shots[0]["frames"]["video"] == str(seg[0])


def test_a_moved_camera_pauses_the_match_and_decides_nothing(tmp_path, two_shot_clip, capsys):
    """The profile of a camera 40 mm off from where the footage was taken: the health
    check refuses it before the first shot, so nothing is decided (never a wrong call)."""
    from vision_ref.calibrate.truth import profile_from_camera
    from vision_ref.camera import CameraModel

    video, _ = two_shot_clip
    moved = tmp_path / "moved.json"
    profile_from_camera(CameraModel.overhead(546, 408, offset_mm=(40.0, 0.0))).save(moved)
    db = tmp_path / "m.sqlite"
    rc = main(["live", "--source", str(video), "--calibration", str(moved), "--board", "lines",
               "--db", str(db), "--no-record", "--commands", os.devnull])
    assert rc == 0
    out = capsys.readouterr().out
    assert "DECISION " not in out
    assert "calibration no longer fits the picture" in out
    log = MatchLog(db)
    assert log.active_shots(1) == []
    kinds = [i["kind"] for i in log.incidents(1)]
    assert kinds[0] == "pause_calibration" and "resume_calibration" not in kinds
    assert "camera has moved" in log.incidents(1)[0]["message"]
