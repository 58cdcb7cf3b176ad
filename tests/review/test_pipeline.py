"""review_video's input checks and its all-or-nothing outputs (no tracker needed)."""

import json
import types

import numpy as np
import pytest

from vision_ref.calibrate.profile import CalibrationProfile
from vision_ref.camera import CameraModel
from vision_ref.cli import main
from vision_ref.review import pipeline
from vision_ref.review.pipeline import Progress, ShotOutcome, write_outputs
from vision_ref.rules import Match
from vision_ref.rules.table import DEFAULT_TABLE
from vision_ref.video import VideoWriter


@pytest.fixture(scope="module")
def tiny_video(tmp_path_factory):
    path = tmp_path_factory.mktemp("vid") / "tiny.mp4"
    with VideoWriter(path, 64, 48, 30.0, timestamps=False) as vw:
        for i in range(10):
            vw.write(np.full((48, 64, 3), 20 * i, np.uint8))
    return path


def _run(capsys, *argv):
    rc = main(list(argv))
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def test_missing_video_is_one_error_and_creates_nothing(tmp_path, capsys):
    out = tmp_path / "out"
    rc, _, err = _run(capsys, "review", str(tmp_path / "nope.mp4"), "--out", str(out), "--quiet")
    assert rc == 4 and err.startswith("error: ") and "no such file" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_a_text_file_is_not_a_video(tmp_path, capsys):
    bad = tmp_path / "notes.txt"
    bad.write_text("this is not a video\n" * 20)
    rc, _, err = _run(capsys, "review", str(bad), "--out", str(tmp_path / "o"), "--quiet")
    assert rc == 4 and "not a video" in err
    fake = tmp_path / "notes.mp4"  # named like a video: the mp4 reader says it cannot be read
    fake.write_text("this is not a video\n" * 20)
    rc, _, err = _run(capsys, "review", str(fake), "--out", str(tmp_path / "o"), "--quiet")
    assert rc == 4 and "unreadable mp4" in err
    assert not (tmp_path / "o").exists()


def test_missing_or_mismatched_calibration(tmp_path, capsys, tiny_video):
    rc, _, err = _run(capsys, "review", str(tiny_video), "--out", str(tmp_path / "o"),
                      "--calibration", str(tmp_path / "none.json"), "--quiet")
    assert rc == 3 and "does not exist" in err
    prof = tmp_path / "p.json"
    CalibrationProfile(camera=CameraModel.overhead(728, 544)).save(prof)
    rc, _, err = _run(capsys, "review", str(tiny_video), "--out", str(tmp_path / "o"), "--calibration", str(prof),
                      "--quiet")
    assert rc == 3 and "728x544" in err and "64x48" in err
    garbage = tmp_path / "g.json"
    garbage.write_text("{not json")
    rc, _, err = _run(capsys, "review", str(tiny_video), "--out", str(tmp_path / "o"), "--calibration", str(garbage),
                      "--quiet")
    assert rc == 3 and "not readable JSON" in err
    assert not (tmp_path / "o").exists()


def test_unwritable_output_directory(tmp_path, capsys, tiny_video):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    prof = tmp_path / "p.json"
    CalibrationProfile(camera=CameraModel.overhead(64, 48)).save(prof)
    rc, _, err = _run(capsys, "review", str(tiny_video), "--out", str(blocker / "sub"), "--calibration", str(prof),
                      "--quiet")
    assert rc == 6 and "cannot write into output directory" in err
    rc, _, err = _run(capsys, "review", str(tiny_video), "--out", str(blocker), "--calibration", str(prof), "--quiet")
    assert rc == 6 and "not a directory" in err


@pytest.mark.parametrize("args, text", [
    (["--players", "A", "A"], "two different names"),
    (["--modes", "C=series"], "not one of the players"),
    (["--target", "0"], "at least 1"),
    (["--confidence", "1.2"], "--confidence 1.2: must be in [0.5, 1)"),
])
def test_bad_match_options(tmp_path, capsys, tiny_video, args, text):
    rc, _, err = _run(capsys, "review", str(tiny_video), "--out", str(tmp_path / "o"), "--quiet", *args)
    assert rc == 2 and text in err


def _outcomes(shot, record):
    from vision_ref.events.synthetic import tracks_from_truth

    tracks = tracks_from_truth(shot, 60.0)
    m = Match(["A", "B"])
    rec = dict(record)
    d = m.play(rec)
    strike_row = int(np.searchsorted(tracks.t, shot.strike_time))
    w = types.SimpleNamespace(start_row=0, strike_row=strike_row, end_row=len(tracks.t) - 1)
    return m, tracks, [ShotOutcome(rec, d, w, shot.strike_time)]


def test_outputs_are_written_together(tmp_path, foul_shot):
    shot, record, decision = foul_shot
    m, tracks, outcomes = _outcomes(shot, record)
    (tmp_path / "shot_007.png").write_bytes(b"stale diagram of an older review")
    paths = write_outputs(tmp_path, m, outcomes, tracks, DEFAULT_TABLE, source="x.mp4")
    names = sorted(p.name for p in paths)
    assert names == ["decisions.json", "match.json", "report.html", "shot_001.png"]
    assert not (tmp_path / "shot_007.png").exists()
    dec = json.loads((tmp_path / "decisions.json").read_text())
    assert dec["decisions"][0]["points"] == decision["points"] and dec["final"] == m.final()
    again = Match.from_match_file(json.loads((tmp_path / "match.json").read_text()))
    assert again.final() == m.final()  # the match file replays to the same result
    assert not list(tmp_path.glob(".staging-*"))


def test_a_failure_while_writing_keeps_the_previous_review(tmp_path, foul_shot, monkeypatch):
    shot, record, _ = foul_shot
    m, tracks, outcomes = _outcomes(shot, record)
    (tmp_path / "match.json").write_text("previous review")
    (tmp_path / "report.html").write_text("previous report")

    def boom(*a, **k):
        raise OSError(28, "No space left on device")

    import vision_ref.review.report as report

    monkeypatch.setattr(report, "build_report", boom)
    with pytest.raises(OSError):
        write_outputs(tmp_path, m, outcomes, tracks, DEFAULT_TABLE)
    assert (tmp_path / "match.json").read_text() == "previous review"
    assert (tmp_path / "report.html").read_text() == "previous report"
    assert not list(tmp_path.glob(".staging-*")) and not (tmp_path / "decisions.json").exists()


def test_progress_bar_lines_when_not_a_terminal():
    import io

    buf = io.StringIO()
    bar = Progress("tracking", 100, True, stream=buf)
    for i in range(1, 101):
        bar(i)
    bar.close()
    lines = buf.getvalue().splitlines()
    assert len(lines) == 12  # 0%..100% by tenths, then the summary
    assert lines[-1].startswith("tracking: 100 frames in")
    quiet = io.StringIO()
    bar = Progress("tracking", 10, False, stream=quiet)
    bar(5)
    bar.close()
    assert quiet.getvalue() == ""


def test_modes_in_player_order_or_by_name():
    import argparse

    from vision_ref.review.cli import ReviewOptionError, _parse_mode_item, resolve_modes

    items = [_parse_mode_item("series"), _parse_mode_item("shtoss")]
    assert resolve_modes(items, ["Ann", "Bob"]) == {"Ann": "series", "Bob": "shtoss"}
    assert resolve_modes([_parse_mode_item("Bob=shtoss,Ann=series")], ["Ann", "Bob"]) == {"Ann": "series",
                                                                                        "Bob": "shtoss"}
    assert resolve_modes(None, ["Ann", "Bob"]) is None
    with pytest.raises(argparse.ArgumentTypeError):
        _parse_mode_item("fast")
    with pytest.raises(ReviewOptionError):
        resolve_modes([_parse_mode_item("series")] * 3, ["Ann", "Bob"])
    with pytest.raises(ReviewOptionError):
        resolve_modes([_parse_mode_item("Ann=series"), _parse_mode_item("shtoss")], ["Ann", "Bob"])


def test_progress_bar_redraws_one_line_on_a_terminal():
    import io

    class Tty(io.StringIO):
        def isatty(self):
            return True

    buf = Tty()
    bar = Progress("tracking", 50, True, stream=buf)
    for i in range(1, 51):
        bar(i)
    bar.close()
    text = buf.getvalue()
    assert text.count("\n") == 2  # the bar's line, then the summary
    last_bar = text.split("\n")[0].split("\r")[-1]
    assert "100.0%" in last_bar and "50/50 frames" in last_bar and "#" * 30 in last_bar


def test_a_loosely_timed_contact_is_a_review_point_only_when_the_call_hangs_on_it():
    from vision_ref.rules.build import make_shot

    def carom(conf_second, conf_cushion=1.0):
        rec = make_shot("A", [("bb", "cue", "white1"), ("cush", "white1", "left"), ("bb", "cue", "white2")])
        for e in rec["events"]:
            e.setdefault("confidence", 1.0)
        rec["events"][-1]["confidence"] = conf_second
        rec["events"][-2]["confidence"] = conf_cushion
        return rec

    m = Match(["A", "B"], "A")
    # the carom's second contact decides 3 points (P2) against a bare touch: ask about it
    (point,) = pipeline._shaky_contacts_deciding(m, carom(0.04))
    assert "cue and white2 met" in point and "0.04" in point
    # timed tightly: nothing to ask
    assert pipeline._shaky_contacts_deciding(m, carom(0.9)) == []
    # a loose cushion contact no rule needs here (the carom stands without it): nothing to ask
    assert pipeline._shaky_contacts_deciding(m, carom(0.9, conf_cushion=0.05)) == []
    assert m.records == []  # previews commit nothing


def test_the_exposure_comes_from_the_option_else_the_sidecar_else_a_note_says_it_is_unknown():
    from vision_ref.errors import VideoError

    reader = types.SimpleNamespace(fps=60.0, exposure_s=0.003)
    notes = []
    assert pipeline._exposure_of(0.001, reader, notes) == 0.001 and notes == ["exposure 1 ms (given)"]
    notes = []
    assert pipeline._exposure_of(None, reader, notes) == 0.003 and "from the timestamps sidecar" in notes[0]
    notes = []
    assert pipeline._exposure_of(None, types.SimpleNamespace(fps=60.0, exposure_s=None), notes) is None
    assert "exposure time unknown" in notes[0] and "early" in notes[0]
    with pytest.raises(VideoError, match="at 60 fps a frame lasts 16.67 ms"):
        pipeline._exposure_of(0.02, reader, [])


def test_a_bad_exposure_option_is_one_message(tmp_path, capsys, tiny_video):
    rc, _, err = _run(capsys, "review", str(tiny_video), "--out", str(tmp_path / "o"), "--quiet", "--exposure", "-2")
    assert rc == 2 and "--exposure must be a positive time in ms, got -2" in err
    assert not (tmp_path / "o").exists()
