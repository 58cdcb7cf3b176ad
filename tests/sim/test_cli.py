"""`vision-ref scenarios` and `vision-ref render` end to end (tiny clips)."""

import json
import subprocess
import sys

import pytest


def run(*args, timeout=600):
    return subprocess.run([sys.executable, "-m", "vision_ref", *args], capture_output=True, text=True, timeout=timeout)


def test_scenarios_json_lists_the_library():
    res = run("scenarios", "--json")
    assert res.returncode == 0, res.stderr
    rows = json.loads(res.stdout)
    assert len(rows) >= 34 and {"name", "rules", "description"} <= set(rows[0])
    assert any("F8" in r["rules"] for r in rows)


def test_render_writes_video_truth_camera_and_timestamps(tmp_path):
    res = run("render", "foul_F6_wrong_ball", "--out", str(tmp_path), "--size", "160x120", "--fps", "20", "--no-cue-stick")
    assert res.returncode == 0, res.stderr
    for ext in (".mp4", ".truth.json", ".camera.json", ".timestamps.txt"):
        assert (tmp_path / f"foul_F6_wrong_ball{ext}").exists()
    truth = json.loads((tmp_path / "foul_F6_wrong_ball.truth.json").read_text())
    assert truth["record"]["struck"] == "white1"
    from vision_ref.video import probe, read_timestamps

    info = probe(tmp_path / "foul_F6_wrong_ball.mp4")
    assert (info.width, info.height) == (160, 120) and info.frame_count == truth["render_frames"]["n_frames"]
    assert len(read_timestamps(tmp_path / "foul_F6_wrong_ball.mp4")) == info.frame_count


@pytest.mark.parametrize("args,needle", [
    (("render", "no_such_scenario", "--out", "X"), "unknown scenario"),
    (("render", "--out", "X"), "either a SCENARIO"),
    (("render", "foul_F1_miss", "--out", "X", "--size", "15x7"), "size must be even"),
])
def test_bad_render_input_is_one_clear_error(args, needle, tmp_path):
    res = run(*[str(tmp_path) if a == "X" else a for a in args])
    assert res.returncode != 0 and needle in res.stderr and "Traceback" not in res.stderr
