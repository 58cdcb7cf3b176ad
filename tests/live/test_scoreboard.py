import io

from vision_ref.live.scoreboard import BoardState, Scoreboard, render


def _decision():
    return {"shot": 3, "shooter": "A", "foul": True, "fouls": [{"rule": "F5", "detail": "pin head knocked by the cue ball"}],
            "carom": False, "pins_down": ["head"], "points": 2, "credited_to": "B", "next": "B", "ball_in_hand": None,
            "restore": False, "respot": [{"piece": "head", "at": [-73.5, 0.0], "rule": "spot"}],
            "score": {"A": 10, "B": 12}, "game_over": False, "winner": None, "rules": ["P1", "F5"]}


def test_render_shows_score_turn_call_rule_and_respot():
    s = BoardState(players=["A", "B"], target=100, score={"A": 10, "B": 12}, turn="B", modes={"A": "series", "B": "shtoss"},
                   match_id=7, last_decision=_decision(), pending_calls=[{"type": "touch"}], operator="olga")
    text = render(s)
    assert "> B" in text and "12" in text and "shtoss" in text
    assert "FOUL F5 (cue ball knocked a pin)" in text
    assert "Put head at (-73.5, 0.0) mm (spot)" in text
    assert "calls for this shot: touch" in text and "olga" in text


def test_render_paused_says_why():
    s = BoardState(players=["A", "B"], target=100, score={"A": 0, "B": 0}, turn="A", modes={},
                   paused={"camera": "camera lost: unplugged"})
    text = render(s)
    assert "PAUSED" in text and "camera lost: unplugged" in text


def test_lines_mode_prints_one_decision_line():
    out = io.StringIO()
    b = Scoreboard(out, redraw=False)
    b.decision(None, _decision())
    line = out.getvalue().strip()
    assert line.startswith("DECISION ") and '"fouls":["F5"]' in line


def test_screen_mode_redraws_in_place():
    out = io.StringIO()
    b = Scoreboard(out, redraw=True)
    s = BoardState(players=["A", "B"], target=100, score={"A": 3, "B": 0}, turn="A", modes={})
    b.decision(s, _decision())
    b.event("warning", "ignored in screen mode", s)
    text = out.getvalue()
    assert text.count("\x1b[H\x1b[2J") == 2 and "DECISION" not in text and "> A" in text
