"""Golden matches: the adjudicator's answers to whole matches do not change unnoticed.
Regenerate with `python tests/rules/golden/regenerate.py` (see golden/README.md)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from vision_ref.rules import adjudicate_match

GOLDEN = Path(__file__).resolve().parent / "golden"
NAMES = sorted(p.name.removesuffix(".match.json") for p in GOLDEN.glob("*.match.json"))


def test_golden_matches_exist():
    assert {"series_to_twenty", "shtoss_with_fouls", "repetition_draw"} <= set(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_golden_match_decisions_unchanged(name):
    match = json.loads((GOLDEN / f"{name}.match.json").read_text())
    expected = json.loads((GOLDEN / f"{name}.decisions.json").read_text())
    assert adjudicate_match(match) == expected


def test_adjudicate_cli_prints_the_golden_answer():
    out = subprocess.run([sys.executable, "-m", "vision_ref", "adjudicate", str(GOLDEN / "series_to_twenty.match.json")],
                         capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == json.loads((GOLDEN / "series_to_twenty.decisions.json").read_text())


def test_adjudicate_cli_rejects_a_broken_file_with_one_line(tmp_path):
    match = json.loads((GOLDEN / "series_to_twenty.match.json").read_text())
    match["shots"][3]["after"]["pins"].pop("king")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(match))
    out = subprocess.run([sys.executable, "-m", "vision_ref", "adjudicate", str(bad)], capture_output=True, text=True)
    assert out.returncode == 2 and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "king" in lines[0] and "Traceback" not in out.stderr
