"""`vision-ref review` on a small rendered clip, through every stage (render -> track -> events -> rules -> report).

The clip is the ``clip`` fixture of conftest.py (rendered once, cached under /tmp).
"""

import json
import math

import cv2
import pytest

from vision_ref.cli import main
from vision_ref.rules import Match

FPS = 30.0  # the conftest clip's frame rate and size (checked below)
SIZE = (546, 408)


@pytest.fixture(autouse=True)
def _same_clip(clip):
    assert (clip.fps, clip.size) == (FPS, SIZE)


def _review(tmp_path, video, prof, *extra):
    out = tmp_path / "out"
    rc = main(["review", str(video), "--calibration", str(prof), "--out", str(out), "--quiet",
               "--players", "Ann", "Bob", *extra])
    return rc, out


def test_review_writes_every_output_and_finds_the_shot(clip, tmp_path, capsys):
    video, truth, prof = clip
    rc, out = _review(tmp_path, video, prof)
    printed = capsys.readouterr().out
    assert rc == 0
    for name in ("match.json", "decisions.json", "report.html", "shot_001.png", "annotated.mp4"):
        assert (out / name).is_file(), name
    assert "1 shot (" in printed and "report.html" in printed
    match = json.loads((out / "match.json").read_text())
    decisions = json.loads((out / "decisions.json").read_text())
    assert match["players"] == ["Ann", "Bob"] and len(match["shots"]) == 1 == len(decisions["decisions"])
    # the match file is a valid match: replaying it gives the same decisions
    again = Match.from_match_file(match)
    assert again.final() == decisions["final"]
    assert [d["points"] for d in again.decisions] == [d["points"] for d in decisions["decisions"]]
    # the first contacts of the shot are the truth's, timed to a fraction of a frame
    rec = match["shots"][0]
    got = [e for e in rec["events"] if e["type"] in ("ball_ball", "cushion")][:2]
    want = [e for e in truth["events"] if e["type"] in ("ball_ball", "cushion")][:2]
    assert [(e["type"], e.get("a"), e.get("b"), e.get("ball"), e.get("cushion")) for e in got] == \
           [(e["type"], e.get("a"), e.get("b"), e.get("ball"), e.get("cushion")) for e in want]
    for g, w in zip(got, want):
        assert abs(g["t"] - w["t"]) < 0.5 / FPS
    # the balls stop where the truth says (within half a ball: identities kept, nothing lost)
    for b, p in truth["after"]["balls"].items():
        assert math.dist(rec["after"]["balls"][b], p) < 30.0, b
    # the report and the diagram are there and readable
    page = (out / "report.html").read_text()
    assert 'id="shot-1"' in page and "data:image/png;base64," in page
    img = cv2.imread(str(out / "shot_001.png"))
    assert img is not None and img.shape[1] > 800
    # the annotated video has every frame, at the clip's size
    from vision_ref.video import VideoReader

    r = VideoReader(out / "annotated.mp4")
    assert (r.width, r.height) == SIZE and r.count_frames() == VideoReader(video).count_frames()


def test_a_dropped_frame_in_the_sidecar_is_a_gap_not_a_frame(clip, tmp_path, capsys):
    """A recording that lost a frame (its timestamp missing from the sidecar) is reviewed
    on the sensor clock: the gap is reported and the contact times stay right."""
    from vision_ref.video import VideoReader, VideoWriter, read_timestamps

    video, truth, prof = clip
    ts = read_timestamps(video)
    lost = 3  # a still frame before the strike: the shot itself is unchanged
    cut = tmp_path / "cut.mp4"
    with VideoWriter(cut, *SIZE, FPS, crf=18) as vw:
        for f in VideoReader(video):
            if f.index != lost:
                vw.write(f.bgr, int(ts[f.index]))
    rc, out = _review(tmp_path, cut, prof, "--no-annotated")
    printed = capsys.readouterr().out
    assert rc == 0
    assert "1 frame missing from the recording" in printed
    rec = json.loads((out / "match.json").read_text())["shots"][0]
    first = next(e for e in rec["events"] if e["type"] == "ball_ball")
    want = next(e for e in truth["events"] if e["type"] == "ball_ball")
    assert abs(first["t"] - want["t"]) < 0.5 / FPS
    assert not (out / "annotated.mp4").exists()


def test_a_truncated_video_is_reviewed_as_far_as_it_goes(clip, tmp_path, capsys):
    video, truth, prof = clip
    cut = tmp_path / "truncated.mp4"
    data = video.read_bytes()
    cut.write_bytes(data[: int(len(data) * 0.6)])
    rc, out = _review(tmp_path, cut, prof, "--no-annotated")
    err = capsys.readouterr().err
    assert rc == 4 and err.startswith("error: ") and "Traceback" not in err
    # the writer puts the index first (+faststart), so the cut file opens and decodes part way
    assert "truncated video, stopped after" in err and "written to" in err
    assert (out / "match.json").is_file() and (out / "report.html").is_file()
    assert "could not be read to the end" in (out / "report.html").read_text()


def test_a_profile_of_another_camera_pose_is_refused_before_anything_is_written(clip, tmp_path, capsys):
    from vision_ref.calibrate.truth import profile_from_camera
    from vision_ref.camera import CameraModel

    video, _, _ = clip
    wrong = tmp_path / "moved.json"
    profile_from_camera(CameraModel.overhead(*SIZE, offset_mm=(250.0, 120.0), roll_deg=3.0)).save(wrong)
    rc, out = _review(tmp_path, video, wrong)
    err = capsys.readouterr().err
    assert rc == 3 and "does not fit" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_without_a_profile_the_video_calibrates_itself(clip, tmp_path, capsys):
    video, truth, _ = clip
    out = tmp_path / "auto"
    rc = main(["review", str(video), "--out", str(out), "--quiet", "--no-annotated"])
    printed = capsys.readouterr().out
    assert rc == 0 and "calibrated from the video's still frames" in printed
    rec = json.loads((out / "match.json").read_text())["shots"][0]
    first = next(e for e in rec["events"] if e["type"] == "ball_ball")
    assert (first["a"], first["b"]) == ("cue", "white1")


def test_ctrl_c_while_tracking_still_writes_what_was_decided(clip, tmp_path, capsys, monkeypatch):
    from vision_ref.track import tracker as T

    video, truth, prof = clip
    real_update = T.Tracker.update
    calls = {"n": 0}

    def update(self, frame, observe=True):
        calls["n"] += 1
        if calls["n"] > 140:  # after the shot has come to rest (the clip has 144 frames)
            raise KeyboardInterrupt
        return real_update(self, frame, observe)

    monkeypatch.setattr(T.Tracker, "update", update)
    rc, out = _review(tmp_path, video, prof)
    err = capsys.readouterr().err
    assert rc == 130 and "review stopped by Ctrl-C: the " in err and f"written to {out}" in err
    page = (out / "report.html").read_text()
    assert "interrupted after 140 frames" in page
    decided = json.loads((out / "decisions.json").read_text())["decisions"]
    assert page.count('<section class="shot') == len(decided)  # the report has what was decided
    assert not (out / "annotated.mp4").exists()  # not started after an interrupt


def test_review_tracks_with_the_exposure_the_sidecar_records_unless_told(clip, tmp_path):
    from vision_ref.review.pipeline import review_video

    video, _, prof = clip
    res = review_video(video, tmp_path / "a", calibration=prof, annotated=False, progress=False)
    assert res.tracks.exposure_s == pytest.approx(0.004)  # the renderer's, written into the sidecar
    assert "exposure 4 ms (from the timestamps sidecar)" in res.notes
    res = review_video(video, tmp_path / "b", calibration=prof, annotated=False, progress=False, exposure_s=0.002)
    assert res.tracks.exposure_s == pytest.approx(0.002) and "exposure 2 ms (given)" in res.notes
