"""Regenerate the golden matches: `python tests/rules/golden/regenerate.py`.

Writes NAME.match.json (the input, built from small shot records) and
NAME.decisions.json (the adjudicator's answer) for each match below; also copies the
first one to sample_videos/example_match.json (the README's bundled example).
Review the diff of the decisions before committing: a change is a change of calls.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
sys.path.insert(0, str(REPO))

from vision_ref.rules import adjudicate_match  # noqa: E402
from vision_ref.rules.build import make_match, make_shot  # noqa: E402


def series_to_twenty() -> dict:
    """Series play to 20: doublets, a foul (F5), a bare carom (G3), a king (P1), respots."""
    legal = [("bb", "cue", "white1"), ("cush", "white1", "left"), ("pin", "head", "white1")]
    king_run = [("bb", "cue", "white1"), ("cush", "white1", "left"), ("pin", "king", "white1"), ("pin", "left", "king")]
    carom = [("bb", "cue", "white1"), ("bb", "cue", "white2")]
    f5 = [("cush", "cue", "foot"), ("pin", "foot", "cue")]
    shots = [
        make_shot(None, legal, down=["head"]),                      # A: 2, continues (M1)
        make_shot(None, king_run, down=["king", "left"]),           # A: 5, continues
        make_shot(None, [("bb", "cue", "white1")]),                  # A: nothing, turn passes
        make_shot(None, f5, down=["foot"]),                          # B: F5, 2 to A
        make_shot(None, carom),                                      # A: bare carom 3, turn passes (P2)
        make_shot(None, king_run, down=["king", "left"]),           # B: 5
        make_shot(None, [("bb", "cue", "white2"), ("bb", "white2", "white1"), ("pin", "right", "white1")],
                  down=["right"]),                                   # B: L4, 2
        make_shot(None, [("cush", "cue", "head")]),                  # B: F1 miss, 0 to A
        make_shot(None, king_run + [("pin", "head", "king")], down=["king", "left", "head"],
                  after_balls={"cue": [0.0, 5.0], "white1": [-400.0, 500.0], "white2": [900.0, 300.0]}),
        # A: king + 2 = 7 -> 19; the cue ball rests on the king's spot (Ra)
        make_shot(None, legal, down=["head"]),                       # A: 2 -> 21 >= 20: A wins (G2)
    ]
    return make_match(shots, target=20)


def shtoss_with_fouls() -> dict:
    """Shtoss against series (M3), white off the table (B2), cue ball off (F2/B1), F9, F10."""
    legal = [("bb", "cue", "white1"), ("cush", "white1", "left"), ("pin", "head", "white1")]
    shots = [
        make_shot(None, legal, down=["head"]),                                             # A (shtoss): 2, turn passes
        make_shot(None, legal, down=["head"]),                                             # B (series): 2, continues
        make_shot(None, [("bb", "cue", "white2"), ("off", "white2")]),                     # B: B2, turn passes
        make_shot(None, [("cush", "cue", "left"), ("off", "cue")]),                        # A: F2, B from hand
        make_shot(None, legal, down=["head"], calls=["cue_side"]),                         # B: F9: 2 + 2 to A
        make_shot(None, legal, down=["head"], calls=["self_stop"]),                        # A: F10: 32 to B
        make_shot(None, [("bb", "cue", "white1"), ("pin", "left", "white1")], down=["left"]),  # B: F4 direct
    ]
    return make_match(shots, modes={"A": "shtoss", "B": "series"}, target=100)


def repetition_draw() -> dict:
    """The same shot from the same position, three times each: a draw (G4)."""
    still = {"cue": [-900.0, 120.0], "white1": [-710.0, 0.0], "white2": [710.0, 0.0]}
    shots = [make_shot(None, [("bb", "cue", "white1")], before_balls=still, after_balls=still) for _ in range(6)]
    return make_match(shots, target=100)


MATCHES = {"series_to_twenty": series_to_twenty, "shtoss_with_fouls": shtoss_with_fouls, "repetition_draw": repetition_draw}


def main() -> None:
    for name, build in MATCHES.items():
        match = build()
        (HERE / f"{name}.match.json").write_text(json.dumps(match, indent=1) + "\n")
        result = adjudicate_match(match)
        (HERE / f"{name}.decisions.json").write_text(json.dumps(result, indent=1) + "\n")
        print(f"{name}: {len(match['shots'])} shots, final {result['final']}")
    shutil.copy(HERE / "series_to_twenty.match.json", REPO / "sample_videos" / "example_match.json")


if __name__ == "__main__":
    main()
