from vision_ref.live.gaps import apply_gaps, gaps_in_window


def test_gaps_in_window_runs_and_times():
    w = {"start_frame": 100, "strike_frame": 130, "end_frame": 300}
    gaps = gaps_in_window([50, 140, 141, 142, 200, 400], w, 60.0)
    assert gaps == [((139 - 130) / 60.0, (143 - 130) / 60.0, 3), ((199 - 130) / 60.0, (201 - 130) / 60.0, 1)]
    assert gaps_in_window([], w, 60.0) == []


def _rec():
    return {
        "format": "vision-ref.shot/1", "struck": "cue",
        "before": {"balls": {"cue": [0, 0], "white1": [1, 1], "white2": [2, 2]}, "pins": {}},
        "events": [{"t": 0.0, "type": "strike", "ball": "cue"},
                   {"t": 0.2, "type": "ball_ball", "a": "cue", "b": "white1"},
                   {"t": 0.5, "type": "pin_hit", "pin": "head", "by": "white1"},
                   {"t": 0.9, "type": "cushion", "ball": "cue", "cushion": "left"}],
        "after": {"balls": {"cue": [0, 0], "white1": [1, 1], "white2": [2, 2]},
                  "pins": {p: {"at": [0, 0], "state": "standing"} for p in ("king", "foot", "left", "right")}
                  | {"head": {"at": [0, 0], "state": "down"}}},
        "calls": [],
    }


def test_pin_hit_in_gap_becomes_doubt():
    out = apply_gaps(_rec(), [(0.45, 0.55, 5)], 60.0)
    kinds = [(e["type"], e.get("pin")) for e in out["events"]]
    assert ("doubt", "head") in kinds and ("pin_hit", "head") not in kinds
    doubt = next(e for e in out["events"] if e["type"] == "doubt")
    assert doubt["candidates"] == ["cue", "white1"]
    assert out["dropped_frames"] == 5 and out["gaps"][0]["frames"] == 5
    assert any("doubtful" in w for w in out["warnings"])


def test_gap_elsewhere_keeps_the_knock_but_marks_contacts():
    out = apply_gaps(_rec(), [(0.15, 0.25, 5)], 60.0)
    assert [e["type"] for e in out["events"]].count("pin_hit") == 1
    bb = next(e for e in out["events"] if e["type"] == "ball_ball")
    assert bb["in_gap"] is True
    assert any("cue-white1" in w for w in out["warnings"])


def test_unexplained_fall_with_a_gap_is_doubtful():
    rec = _rec()
    rec["events"] = [e for e in rec["events"] if e["type"] != "pin_hit"]
    out = apply_gaps(rec, [(0.6, 0.7, 5)], 60.0)
    d = [e for e in out["events"] if e["type"] == "doubt"]
    assert len(d) == 1 and d[0]["pin"] == "head"


def test_no_gaps_no_change():
    rec = _rec()
    assert apply_gaps(rec, [], 60.0) is rec
