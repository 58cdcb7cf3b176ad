"""One test (at least) per rule id of docs/rules.md, each from small shot records.

Test names start with ``test_<RULE ID>_`` — tests/rules/test_rules_docs.py checks that
every rule id in the reference has one.
"""

import pytest

from vision_ref.errors import ContractError
from vision_ref.rules import Match, RuleSettings, pin_points
from vision_ref.rules.build import AFTER_BALLS, BEFORE_BALLS, make_shot, play_shots
from vision_ref.rules.table import DEFAULT_TABLE, TableSpec

D = DEFAULT_TABLE.pin_spacing


def fouls(decision):
    return [f["rule"] for f in decision["fouls"]]


def legal_head(**kw):
    """A's legal doublet: cue -> white1 -> left cushion -> head pin (L1), 2 points."""
    return make_shot(kw.pop("shooter", "A"), [("bb", "cue", "white1"), ("cush", "white1", "left"), ("pin", "head", "white1")], down=["head"], **kw)


def no_score(shooter=None, **kw):
    """A shot that touches a white and nothing else: no points, the turn passes."""
    return make_shot(shooter, [("bb", "cue", "white1")], **kw)


# ---- legal ways (L1–L5) ----------------------------------------------------------
def test_L1_white_off_cushion_after_cue_strike_is_legal():
    (d,) = play_shots([legal_head()])
    assert not d["foul"] and d["points"] == 2 and d["credited_to"] == "A"
    assert "L1" in d["rules"] and d["pins_down"] == ["head"]


def test_L2_pins_knocked_after_completed_carom_are_legal():
    shot = make_shot("A", [("bb", "cue", "white1"), ("bb", "cue", "white2"), ("pin", "foot", "white2")], down=["foot"])
    (d,) = play_shots([shot])
    assert not d["foul"] and d["carom"] and "L2" in d["rules"]
    assert d["points"] == 2  # P2 reading: a carom with pins scores only the pins


def test_L2_F4_exception_only_when_carom_clearly_before_the_knock():
    # white1 goes straight at the pins and the carom comes after the knock: F4.
    late = make_shot("A", [("bb", "cue", "white1"), ("pin", "head", "white1"), ("bb", "cue", "white2")], down=["head"])
    (d,) = play_shots([late])
    assert fouls(d) == ["F4"] and d["credited_to"] == "B" and d["points"] == 2
    # Same pins, carom first: the points are the player's.
    early = make_shot("A", [("bb", "cue", "white1"), ("bb", "cue", "white2"), ("pin", "head", "white1")], down=["head"])
    (d,) = play_shots([early])
    assert not d["foul"] and d["credited_to"] == "A" and "L2" in d["rules"]


def test_L3_white_struck_by_cue_ball_off_a_cushion_is_legal():
    shot = make_shot("A", [("cush", "cue", "foot"), ("bb", "cue", "white2"), ("pin", "foot", "white2")], down=["foot"])
    (d,) = play_shots([shot])
    assert not d["foul"] and "L3" in d["rules"] and d["points"] == 2


def test_L4_white_struck_by_other_white_is_legal():
    shot = make_shot("A", [("bb", "cue", "white1"), ("bb", "white1", "white2"), ("pin", "left", "white2")], down=["left"])
    (d,) = play_shots([shot])
    assert not d["foul"] and "L4" in d["rules"]


def test_L4_white_touching_another_ball_before_the_pins_is_legal():
    shot = make_shot("A", [("bb", "cue", "white1"), ("bb", "white1", "white2"), ("pin", "left", "white1")], down=["left"])
    (d,) = play_shots([shot])
    assert not d["foul"] and "L4" in d["rules"]


def test_L5_pin_knocked_by_pin_inherits_legality_of_its_root():
    shot = make_shot(
        "A",
        [("bb", "cue", "white1"), ("cush", "white1", "left"), ("pin", "head", "white1"), ("pin", "king", "head"), ("pin", "left", "king")],
        down=["head", "king", "left"],
    )
    (d,) = play_shots([shot])
    assert not d["foul"] and d["points"] == 7 and "L5" in d["rules"]
    assert d["pins_down"] == ["head", "king", "left"]


def test_L5_pin_hit_twice_latest_hit_before_t_decides():
    # head falls legally (L1); later the cue ball pushes the lying head into the king: F5.
    events = [("bb", "cue", "white1"), ("cush", "white1", "left"), ("pin", "head", "white1"), ("pin", "head", "cue"), ("pin", "king", "head")]
    (d,) = play_shots([make_shot("A", events, down=["head", "king"])])
    assert fouls(d) == ["F5"] and "king" in d["fouls"][0]["detail"] and d["credited_to"] == "B"
    # The head knocked the king before the cue ball pushed it: all legal.
    events = [("bb", "cue", "white1"), ("cush", "white1", "left"), ("pin", "head", "white1"), ("pin", "king", "head"), ("pin", "head", "cue")]
    (d,) = play_shots([make_shot("A", events, down=["head", "king"])])
    assert not d["foul"] and d["points"] == 5


# ---- scoring (P1–P3) ------------------------------------------------------------
@pytest.mark.parametrize(
    "pins, points",
    [
        (["head"], 2),
        (["head", "foot"], 4),
        (["head", "foot", "left", "right"], 8),
        (["king"], 5),
        (["king", "left"], 5),
        (["king", "left", "right"], 7),
        (["king", "left", "right", "head"], 9),
        (["king", "left", "right", "head", "foot"], 30),
    ],
)
def test_P1_pin_combinations(pins, points):
    assert pin_points(pins) == points
    events = [("bb", "cue", "white1"), ("cush", "white1", "head")] + [("pin", p, "white1") for p in pins]
    (d,) = play_shots([make_shot("A", events, down=pins)])
    assert d["points"] == points and d["credited_to"] == "A" and "P1" in d["rules"]


def test_P2_bare_carom_scores_three_and_turn_passes():
    (d,) = play_shots([make_shot("A", [("bb", "cue", "white1"), ("bb", "cue", "white2")])])
    assert d["carom"] and d["points"] == 3 and d["credited_to"] == "A" and d["next"] == "B"
    assert "P2" in d["rules"] and not d["foul"]


def test_P3_foul_credits_every_point_of_the_shot_to_partner():
    shot = make_shot("A", [("bb", "cue", "white1"), ("pin", "king", "cue"), ("pin", "head", "king")], down=["king", "head"])
    (d,) = play_shots([shot])
    assert d["foul"] and d["points"] == 5 and d["credited_to"] == "B" and d["score"] == {"A": 0, "B": 5}
    assert "P3" in d["rules"] and d["next"] == "B"


# ---- fouls (F1–F10) -------------------------------------------------------------
def test_F1_miss_cue_ball_touches_no_ball():
    (d,) = play_shots([make_shot("A", [("cush", "cue", "foot")])])
    assert fouls(d) == ["F1"] and d["points"] == 0 and d["credited_to"] is None and d["next"] == "B"


def test_F1_foul_minimum_setting_credits_partner_for_empty_foul():
    (d,) = play_shots([make_shot("A", [])], settings=RuleSettings(foul_minimum=2))
    assert fouls(d) == ["F1"] and d["points"] == 2 and d["credited_to"] == "B"


def test_F2_cue_ball_off_table_is_foul_and_partner_has_ball_in_hand():
    (d,) = play_shots([make_shot("A", [("bb", "cue", "white1"), ("off", "cue")])])
    assert fouls(d) == ["F2"] and d["next"] == "B"
    assert d["ball_in_hand"] == {"player": "B", "zone": "either"}


def test_F3_touch_then_played_restores_position_and_penalises():
    shot = legal_head(calls=["touch"])
    (d,) = play_shots([shot])
    assert fouls(d) == ["F3"] and d["restore"] and d["credited_to"] == "B" and d["points"] == 2
    assert "B6" in d["rules"]


def test_F3_touch_without_playing_is_a_foul_without_restore():
    shot = make_shot("A", [], calls=["touch"])
    shot["events"] = []
    (d,) = play_shots([shot])
    assert "F3" in fouls(d) and not d["restore"] and d["next"] == "B"


def test_F4_direct_white_knock():
    (d,) = play_shots([make_shot("A", [("bb", "cue", "white1"), ("pin", "head", "white1")], down=["head"])])
    assert fouls(d) == ["F4"] and d["credited_to"] == "B" and d["points"] == 2
    assert "white1" in d["fouls"][0]["detail"]


def test_F5_cue_ball_knocks_pin_directly():
    (d,) = play_shots([make_shot("A", [("bb", "cue", "white1"), ("pin", "left", "cue")], down=["left"])])
    assert fouls(d) == ["F5"] and d["fouls"][0]["detail"] == "pin left knocked by the cue ball"


def test_F5_cue_ball_pushes_lying_pin_into_standing_ones():
    before_pins = {"right": {"at": [200.0, -300.0], "state": "down"}}
    events = [("bb", "cue", "white1"), ("pin", "right", "cue"), ("pin", "foot", "right")]
    after_pins = {"right": {"at": [90.0, -40.0], "state": "down"}}
    shot = make_shot("A", events, down=["foot"], before_pins=before_pins, after_pins=after_pins)
    (d,) = play_shots([shot])
    assert "F5" in fouls(d) and d["pins_down"] == ["foot"]
    assert "F7" in fouls(d)  # the right pin was not set at the strike


def test_F6_striking_a_ball_other_than_the_cue_ball():
    shot = make_shot("A", [("strike", "white1"), ("bb", "white1", "cue")], struck="white1")
    (d,) = play_shots([shot])
    assert fouls(d) == ["F6"] and d["next"] == "B"


def test_F7_pin_not_set_call():
    (d,) = play_shots([legal_head(calls=["pin_not_set"])])
    assert fouls(d) == ["F7"] and d["credited_to"] == "B"


def test_F7_pin_down_at_the_strike():
    shot = legal_head(before_pins={"king": {"at": [40.0, 40.0], "state": "down"}},
                      after_pins={"king": {"at": [40.0, 40.0], "state": "down"}})
    (d,) = play_shots([shot])
    assert "F7" in fouls(d) and "king" in d["fouls"][0]["detail"]
    assert d["pins_down"] == ["head"]  # the king was already down: not knocked in this shot
    assert {"piece": "king", "at": [0.0, 0.0], "rule": "spot"} in d["respot"]


def test_F8_doubt_event_is_a_foul():
    events = [("bb", "cue", "white1"), ("cush", "white1", "left"), ("pin", "head", "white1"), ("doubt", "left", ["white1", "cue"])]
    (d,) = play_shots([make_shot("A", events, down=["head", "left"])])
    assert fouls(d) == ["F8"] and d["points"] == 4 and d["credited_to"] == "B"
    assert "white1 or cue" in d["fouls"][0]["detail"]


def test_F8_not_called_for_a_fallen_pin_pushed_again():
    """A doubt about who pushed a pin lying where an established knock felled it is no
    doubt about who knocked it down (source text of F8: "сбил"); a lying doubt with no
    established knock before it, or any doubt on a standing pin, is still F8."""
    base = [("bb", "cue", "white1"), ("cush", "white1", "left"), ("pin", "head", "white1"), ("pin", "left", "white1")]
    shot = make_shot("A", base + [("doubt", "left", ["white1", "cue"])], down=["head", "left"])
    shot["events"][-1]["lying"] = True
    (d,) = play_shots([shot])
    assert fouls(d) == [] and d["points"] == 4 and d["credited_to"] == "A"
    assert any("already down, pushed again" in r for r in d["reasons"])
    shot["events"][-1]["lying"] = False
    (d,) = play_shots([shot])
    assert fouls(d) == ["F8"]
    alone = make_shot("A", base[:3] + [("doubt", "left", ["white1", "cue"])], down=["head", "left"])
    alone["events"][-1]["lying"] = True
    (d,) = play_shots([alone])
    assert fouls(d) == ["F8"]
    alone["events"][-1]["lying"] = "yes"
    with pytest.raises(ContractError, match="lying"):
        play_shots([alone])


def test_F9_cue_side_two_penalty_points_plus_shot_points():
    (d,) = play_shots([legal_head(calls=["cue_side"])])
    assert fouls(d) == ["F9"] and d["points"] == 4 and d["credited_to"] == "B"


def test_F10_self_stop_thirty_penalty_plus_shot_points():
    (d,) = play_shots([legal_head(calls=["self_stop"])])
    assert fouls(d) == ["F10"] and d["points"] == 32 and d["credited_to"] == "B"


# ---- balls off the table, interference (B1–B6) --------------------------------------
def test_B1_cue_ball_off_partner_plays_from_the_half_without_whites():
    after = {"cue": None, "white1": [-500.0, 300.0], "white2": [-300.0, -200.0]}
    first = make_shot("A", [("bb", "cue", "white1"), ("off", "cue")], after_balls=after)
    m = Match(["A", "B"], "A")
    d = m.play(first)
    assert d["ball_in_hand"] == {"player": "B", "zone": "foot_half"} and "B1" in d["rules"]
    wrong = no_score(before_balls={"cue": [-900.0, 300.0], "white1": after["white1"], "white2": after["white2"]})
    with pytest.raises(ContractError):
        m.play(dict(wrong, shooter="A"))  # A is not on turn
    d2 = m.play(wrong)
    assert fouls(d2) == ["B1"] and d2["credited_to"] is None and d2["next"] == "A"
    m.undo()
    right = no_score(before_balls={"cue": [900.0, 300.0], "white1": after["white1"], "white2": after["white2"]})
    d3 = m.play(right)
    assert not d3["foul"] and "B1" in d3["rules"]


def test_B1_placement_not_in_the_record_is_not_checked_and_is_said():
    after = {"cue": None, "white1": [-500.0, 300.0], "white2": [-300.0, -200.0]}
    m = Match(["A", "B"], "A")
    m.play(make_shot("A", [("bb", "cue", "white1"), ("off", "cue")], after_balls=after))
    # the cue ball not seen before the strike, a white struck (the record a tracker gave
    # once): F6 is called, the placement is not held against the player, and it is said
    unseen = make_shot(None, [("bb", "white1", "white2")], struck="white1",
                       before_balls={"cue": None, "white1": after["white1"], "white2": after["white2"]})
    d = m.play(unseen)
    assert fouls(d) == ["F6"] and "B1" in d["rules"]
    assert any("not in the record" in r for r in d["reasons"])


def test_B1_whites_in_the_foot_half_give_the_head_half():
    after = {"cue": None, "white1": [500.0, 300.0], "white2": [300.0, -200.0]}
    (d,) = play_shots([make_shot("A", [("bb", "cue", "white1"), ("off", "cue")], after_balls=after)])
    assert d["ball_in_hand"] == {"player": "B", "zone": "head_half"}


def test_B2_white_off_table_respotted_points_to_player_turn_passes():
    events = [("bb", "cue", "white1"), ("cush", "white1", "left"), ("pin", "head", "white1"), ("off", "white2")]
    (d,) = play_shots([make_shot("A", events, down=["head"])])
    assert not d["foul"] and d["points"] == 2 and d["credited_to"] == "A" and d["next"] == "B"
    assert {"piece": "white2", "at": [710.0, 0.0], "rule": "B2"} in d["respot"]


def test_B2_white_spot_taken_uses_other_spot_then_nearest_free_point():
    after = {"cue": [700.0, 20.0], "white1": [-400.0, 500.0], "white2": None}
    (d,) = play_shots([make_shot("A", [("bb", "cue", "white2"), ("off", "white2")], after_balls=after)])
    assert {"piece": "white2", "at": [-710.0, 0.0], "rule": "B2"} in d["respot"]
    after = {"cue": [710.0, 0.0], "white1": [-710.0, 0.0], "white2": None}
    (d,) = play_shots([make_shot("A", [("bb", "cue", "white2"), ("off", "white2")], after_balls=after)])
    assert {"piece": "white2", "at": [771.5, 0.0], "rule": "B2"} in d["respot"]


def test_B3_cue_ball_back_from_bystander_no_foul_turn_passes():
    shot = make_shot("A", [("bb", "cue", "white1"), ("off", "cue")], calls=["bystander"], after_balls=AFTER_BALLS)
    (d,) = play_shots([shot])
    assert not d["foul"] and d["next"] == "B" and "B3" in d["rules"] and d["ball_in_hand"] is None


def test_B4_partner_stops_cue_ball_player_places_it_and_continues_if_legal():
    (d,) = play_shots([legal_head(calls=["partner_stop_cue"])])
    assert not d["foul"] and d["next"] == "A" and d["ball_in_hand"] == {"player": "A", "zone": "anywhere"}
    assert "B4" in d["rules"]
    (d,) = play_shots([no_score("A", calls=["partner_stop_cue"])])
    assert d["next"] == "B" and d["ball_in_hand"] == {"player": "A", "zone": "anywhere"}


def test_B5_partner_stops_white_thirty_points_player_keeps_turn():
    shot = no_score("A", calls=[{"type": "partner_stop_white", "ball": "white1"}])
    (d,) = play_shots([shot])
    assert d["points"] == 30 and d["credited_to"] == "A" and d["next"] == "A" and "B5" in d["rules"]
    assert d["respot"] == [] and not d["restore"]


def test_B6_touch_restores_whites_that_left_the_table():
    shot = make_shot("A", [("bb", "cue", "white2"), ("off", "white2")], calls=["touch"])
    (d,) = play_shots([shot])
    assert d["restore"] and {"piece": "white2", "at": BEFORE_BALLS["white2"], "rule": "B6"} in d["respot"]
    assert d["ball_in_hand"] is None


# ---- end of the game (G1–G5) --------------------------------------------------------
def test_G1_target_reached_ends_game():
    (d,) = play_shots([legal_head()], target=2)
    assert d["game_over"] and d["winner"] == "A" and d["next"] is None and "G1" in d["rules"]


def test_G2_partner_foul_can_end_the_game():
    shot = make_shot("A", [("bb", "cue", "white1"), ("pin", "head", "white1")], down=["head"])
    (d,) = play_shots([shot], target=100, score={"A": 0, "B": 99})
    assert d["foul"] and d["winner"] == "B" and d["game_over"] and "G2" in d["rules"]


def test_G2_zero_point_foul_ends_game_for_partner_at_target():
    m = Match(["A", "B"], "A", target=10, score={"A": 8, "B": 0})
    d = m.play(make_shot("A", [("bb", "cue", "white1"), ("bb", "cue", "white2")]))
    assert not d["game_over"] and d["score"]["A"] == 11 and "G3" in d["rules"]
    d = m.play(make_shot("B", [("cush", "cue", "head")]))  # B misses: A is credited, at target
    assert d["foul"] and d["game_over"] and d["winner"] == "A"


def test_G3_bare_carom_does_not_end_the_game():
    (d,) = play_shots([make_shot("A", [("bb", "cue", "white1"), ("bb", "cue", "white2")])], target=3)
    assert d["score"]["A"] == 3 and not d["game_over"] and d["winner"] is None and "G3" in d["rules"]


def test_G3_pins_after_a_bare_carom_end_it():
    m = Match(["A", "B"], "A", target=3)
    m.play(make_shot("A", [("bb", "cue", "white1"), ("bb", "cue", "white2")]))
    m.play(no_score())
    d = m.play(legal_head(shooter="A"))
    assert d["game_over"] and d["winner"] == "A"


def _still(shooter=None, jitter=0.0):
    balls = {"cue": [-900.0, 120.0], "white1": [-710.0, 0.0], "white2": [710.0, 0.0]}
    after = {k: [v[0] + jitter, v[1]] for k, v in balls.items()}
    return make_shot(shooter, [("bb", "cue", "white1")], before_balls=balls, after_balls=after)


def test_G4_threefold_repetition_each_is_a_draw():
    m = Match(["A", "B"], "A")
    for i in range(5):
        d = m.play(_still())
        assert not d["game_over"], i
    d = m.play(_still())
    assert d["game_over"] and d["winner"] == "draw" and "G4" in d["rules"] and m.winner == "draw"


def test_G4_repetition_tolerance_is_configurable():
    m = Match(["A", "B"], "A", settings={"repetition_tolerance_mm": 1.0})
    for _ in range(8):
        d = m.play(_still(jitter=4.0))
    assert not d["game_over"]
    m = Match(["A", "B"], "A", settings={"repetition_tolerance_mm": 10.0})
    ds = [m.play(_still(jitter=4.0)) for _ in range(6)]
    assert ds[-1]["winner"] == "draw"


def test_G5_allowed_equipment_is_not_a_foul():
    shot = legal_head(equipment="machine")
    (d,) = play_shots([shot])
    assert not d["foul"]


# ---- modes (M1–M3) -------------------------------------------------------------------
def test_M1_series_player_continues_after_legal_pins():
    m = Match(["A", "B"], "A")
    assert m.play(legal_head())["next"] == "A"
    assert m.play(no_score())["next"] == "B"


def test_M2_shtoss_one_shot_each():
    m = Match(["A", "B"], "A", modes={"A": "shtoss", "B": "shtoss"})
    d = m.play(legal_head())
    assert d["next"] == "B" and "M2" in d["rules"]


def test_M3_mixed_series_and_shtoss():
    m = Match(["A", "B"], "A", modes={"A": "series", "B": "shtoss"})
    d = m.play(legal_head())
    assert d["next"] == "A" and "M3" in d["rules"]
    m.play(no_score())
    d = m.play(legal_head(shooter="B"))
    assert d["next"] == "A" and "M3" in d["rules"]


# ---- start (S1–S3) -------------------------------------------------------------------
def test_S1_first_player_by_lots_and_next_game_started_by_the_other():
    m = Match(["A", "B"], "B")
    with pytest.raises(ContractError, match="not on turn"):
        m.play(legal_head(shooter="A"))
    assert "S1" in m.play(legal_head(shooter="B"))["rules"]
    assert m.next_game().turn == "A"


def test_S2_opening_cue_ball_must_not_cross_the_centre_line():
    balls = {"cue": [-10.0, 300.0], "white1": [-710.0, 0.0], "white2": [710.0, 0.0]}
    (d,) = play_shots([legal_head(before_balls=balls)])
    assert fouls(d) == ["S2"] and d["credited_to"] == "B"
    (d,) = play_shots([legal_head()])
    assert "S2" in d["rules"] and not d["foul"]


def test_S3_stance_call_when_playing_from_hand():
    (d,) = play_shots([legal_head(calls=["stance"])])
    assert fouls(d) == ["S3"]


# ---- pin states (T1–T7) ---------------------------------------------------------------
def test_T1_pin_that_moved_but_stands_stays_where_it_stands():
    events = [("bb", "cue", "white1"), ("cush", "white1", "left"), ("pin", "head", "white1"), ("pin", "king", "head")]
    after_pins = {"king": {"at": [12.0, -8.0], "state": "standing"}}
    (d,) = play_shots([make_shot("A", events, down=["head"], after_pins=after_pins)])
    assert d["pins_down"] == ["head"] and "T1" in d["rules"]
    assert [r["piece"] for r in d["respot"]] == ["head"]


def test_T2_pin_standing_on_the_rail_goes_next_to_the_cushion():
    events = [("bb", "cue", "white1"), ("cush", "white1", "left"), ("pin", "head", "white1")]
    after_pins = {"head": {"at": [500.0, 760.0], "state": "rail_standing"}}
    (d,) = play_shots([make_shot("A", events, after_pins=after_pins)])
    assert d["pins_down"] == [] and d["points"] == 0 and "T2" in d["rules"]
    assert d["respot"] == [{"piece": "head", "at": [500.0, 700.0], "rule": "T2"}]


def test_T3_pin_lying_on_the_rail_is_down_and_respotted():
    events = [("bb", "cue", "white1"), ("cush", "white1", "left"), ("pin", "head", "white1")]
    after_pins = {"head": {"at": [-1450.0, 0.0], "state": "rail_down"}}
    (d,) = play_shots([make_shot("A", events, after_pins=after_pins)])
    assert d["pins_down"] == ["head"] and d["points"] == 2 and "T3" in d["rules"]
    assert d["respot"] == [{"piece": "head", "at": [-D, 0.0], "rule": "spot"}]


def test_T4_pin_leaning_on_a_ball_or_pin_is_not_down():
    events = [("bb", "cue", "white1"), ("cush", "white1", "left"), ("pin", "head", "white1")]
    after_pins = {"head": {"at": [-60.0, 10.0], "state": "leaning", "on": "king"}}
    (d,) = play_shots([make_shot("A", events, after_pins=after_pins)])
    assert d["pins_down"] == [] and d["points"] == 0 and d["respot"] == [] and "T4" in d["rules"]


def _leaning_shot():
    events = [("bb", "cue", "white1"), ("cush", "white1", "left"), ("pin", "head", "white1"), ("pin", "left", "head")]
    after_balls = {"cue": [300.0, -400.0], "white1": [-100.0, 30.0], "white2": [900.0, 300.0]}
    after_pins = {"left": {"at": [-80.0, 50.0], "state": "leaning", "on": "white1"}}
    return make_shot("A", events, down=["head"], after_balls=after_balls, after_pins=after_pins)


def test_T5_leaning_pin_falling_before_partner_shot_counts_for_causer():
    m = Match(["A", "B"], "A")
    d1 = m.play(_leaning_shot())
    assert d1["points"] == 2 and d1["next"] == "A"
    balls = {"cue": [300.0, -400.0], "white1": [-100.0, 30.0], "white2": [900.0, 300.0]}
    lean = {"left": {"at": [-80.0, 50.0], "state": "leaning", "on": "white1"}}
    # A's next shot misses and leaves the pin leaning (its record shows it so, before and after).
    d2 = m.play(no_score(before_balls=balls, before_pins=lean, after_balls=balls, after_pins=lean))
    assert "T5" not in d2["rules"] and d2["next"] == "B"
    # The left pin is still leaning when B comes to the table and falls before his shot:
    # B's record shows it respotted (standing on its spot, so omitted from `before`).
    d3 = m.play(no_score())
    assert "T5" in d3["rules"] and d3["late_pins"] == ["left"]
    assert {"player": "A", "points": 2, "rules": ["T5"], "pins": ["left"], "from_shot": 1} in d3["credits"]
    assert d3["score"] == {"A": 4, "B": 0}


def test_T5_leaning_pin_falling_by_itself_during_partner_shot_is_put_back():
    m = Match(["A", "B"], "A")
    m.play(_leaning_shot())
    lean = {"left": {"at": [-80.0, 50.0], "state": "leaning", "on": "white1"}}
    balls = {"cue": [300.0, -400.0], "white1": [-100.0, 30.0], "white2": [900.0, 300.0]}
    m.play(no_score(before_balls=balls, before_pins=lean, after_balls=balls, after_pins=lean))
    # B strikes the cue ball at white2; white1 (the support) does not move; the pin falls.
    shot = make_shot(None, [("bb", "cue", "white2")], before_balls=balls, before_pins=lean,
                     after_balls={"cue": [500.0, -300.0], "white1": [-100.0, 30.0], "white2": [1000.0, 350.0]},
                     after_pins={"left": {"at": [-90.0, 70.0], "state": "down"}})
    d = m.play(shot)
    assert d["pins_down"] == [] and d["put_back"] == ["left"] and d["points"] == 0 and "T5" in d["rules"]
    assert {"piece": "left", "at": [0.0, D], "rule": "spot"} in d["respot"]


def test_T6_pin_resting_on_the_cue_ball_points_go_to_partner():
    lean = {"king": {"at": [10.0, 20.0], "state": "leaning", "on": "cue"}}
    balls = {"cue": [20.0, 40.0], "white1": [-710.0, 0.0], "white2": [710.0, 0.0]}
    events = [("bb", "cue", "white1"), ("cush", "white1", "left"), ("pin", "head", "white1")]
    shot = make_shot("A", events, before_balls=balls, before_pins=lean, down=["head", "king"],
                     settings=None)
    shot.pop("settings")
    m = Match(["A", "B"], "A", settings={"hand_violation_is_foul": False})
    d = m.play(shot)
    # pins_down is in knock order: the king falls as soon as the cue ball leaves under it (the strike)
    assert fouls(d) == ["T6"] and d["pins_down"] == ["king", "head"] and d["points"] == 5 and d["credited_to"] == "B"


def test_T7_misplaced_standing_pin_is_not_reset():
    before_pins = {"foot": {"at": [90.0, 12.0], "state": "standing"}}
    after_pins = {"foot": {"at": [90.0, 12.0], "state": "standing"}}
    (d,) = play_shots([legal_head(before_pins=before_pins, after_pins=after_pins)])
    assert "T7" in d["rules"] and all(r["piece"] != "foot" for r in d["respot"])


# ---- equipment and coordinates (E1–E3) ---------------------------------------------------
def test_E1_three_balls_cue_and_two_whites_required():
    shot = legal_head()
    shot["before"]["balls"]["red"] = [0.0, 0.0]
    with pytest.raises(ContractError, match="before.balls.red: unknown ball id"):
        Match(["A", "B"]).play(shot)
    shot = legal_head()
    del shot["after"]["balls"]["white2"]
    with pytest.raises(ContractError, match="after.balls.white2: missing"):
        Match(["A", "B"]).play(shot)


def test_E2_pin_spacing_default_and_configurable():
    assert DEFAULT_TABLE.pin_spacing == pytest.approx(61.5 + 12.0)
    narrow = TableSpec(pin_spacing_override=61.5)
    (d,) = play_shots([legal_head(table=narrow)], table=narrow)
    assert d["respot"] == [{"piece": "head", "at": [-61.5, 0.0], "rule": "spot"}]


def test_E3_table_frame_spots_and_cushions():
    t = DEFAULT_TABLE
    assert t.ball_spot(1) == (-710.0, 0.0) and t.ball_spot(3) == (710.0, 0.0)
    assert t.cushion_line("head") == ("x", -1420.0) and t.cushion_line("left") == ("y", 710.0)
    assert t.pin_spot("left") == (0.0, D) and t.pin_spot("head") == (-D, 0.0)


def test_L5_pin_hit_again_follows_the_hits_back_in_time():
    # head (set moving by white1) knocks foot, foot pushes head again, head knocks the
    # king: the king's chain is king <- head <- foot <- head <- white1, not a cycle.
    events = [("bb", "cue", "white1"), ("cush", "white1", "left"), ("pin", "head", "white1"), ("pin", "foot", "head"),
              ("pin", "head", "foot"), ("pin", "king", "head")]
    (d,) = play_shots([make_shot("A", events, down=["head", "foot", "king"])])
    assert not d["foul"] and d["points"] == 7 and "L5" in d["rules"]


def test_preview_decides_like_play_and_commits_nothing():
    m = Match(["A", "B"], "A")
    shot = legal_head()
    seen = m.preview(shot)
    assert m.records == [] and m.turn == "A"
    assert m.play(shot) == seen
