"""Kill the live referee hard (SIGKILL) in the middle of a match, then resume it:
nothing that was decided (and shown) is lost, and the resumed score is right."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

from tests.live.conftest import SCENARIOS4
from vision_ref.live.log import MatchLog
from vision_ref.rules.match import adjudicate_match
from vision_ref.video import VideoReader, read_timestamps


def _cmd(db, rec, *extra):
    return [sys.executable, "-m", "vision_ref", "live", "--board", "lines", "--db", str(db), "--record", str(rec), *extra]


def test_sigkill_mid_match_loses_nothing_and_resume_scores_right(tmp_path, records4):
    db, rec = tmp_path / "m.sqlite", tmp_path / "rec"
    src = "synthetic:" + ",".join(SCENARIOS4)
    p = subprocess.Popen(_cmd(db, rec, "--source", src, "--stages", "truth", "--pace", "--players", "A", "B"),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                         cwd=tmp_path)
    shown: list[dict] = []
    two = threading.Event()

    def read():
        for line in p.stdout:
            if line.startswith("DECISION "):
                shown.append(json.loads(line[len("DECISION "):]))
                if len(shown) >= 2:
                    two.set()

    t = threading.Thread(target=read, daemon=True)
    t.start()
    try:
        assert two.wait(120), f"no two decisions shown; stderr: {p.stderr.read() if p.poll() is not None else ''}"
        os.kill(p.pid, signal.SIGKILL)  # mid-match: shot 3 is being played
    finally:
        p.wait(30)
    assert p.returncode == -signal.SIGKILL
    t.join(5)

    log = MatchLog(db)
    active = log.active_shots(1)
    stored = {s["decision"]["shot"]: s["decision"] for s in active}
    for d in shown:  # everything shown was committed first
        assert stored[d["shot"]]["score"] == d["score"] and stored[d["shot"]]["points"] == d["points"]
    assert log.get_match(1).status == "playing"
    n_before = len(active)
    assert 2 <= n_before < 4
    log.close()

    # the recording survived the kill (the encoder finishes when its input closes)
    videos = sorted(rec.glob("*.mp4"))
    assert videos
    frames = sum(1 for _ in VideoReader(videos[0], strict=False))
    assert frames > 0 and len(read_timestamps(videos[0])) >= frames

    res = subprocess.run(_cmd(db, rec, "--resume"), capture_output=True, text=True, timeout=300,
                         stdin=subprocess.DEVNULL, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "RESUMED match 1 at shot" in res.stdout
    log = MatchLog(db)
    decisions = [s["decision"] for s in log.active_shots(1)]
    expected = adjudicate_match({"format": "vision-ref.match/1", "players": ["A", "B"], "first": "A",
                                 "shots": [dict(r) for r in records4]})
    assert decisions == expected["decisions"]
    assert log.get_match(1).score == expected["final"]["score"]
    assert any(c["action"] == "resume" for c in log.operator_calls(1))


def test_resume_with_nothing_to_resume_is_one_clear_error(tmp_path):
    res = subprocess.run(_cmd(tmp_path / "m.sqlite", tmp_path / "rec", "--resume"), capture_output=True, text=True,
                         timeout=60, stdin=subprocess.DEVNULL, cwd=tmp_path)
    assert res.returncode == 2
    assert res.stderr.strip().startswith("error: ") and "no unfinished match" in res.stderr
    assert "Traceback" not in res.stderr
