"""Respotting (RULES.md R0–Rz): coordinates of every case, from occupied spots.

Spots are occupied by putting a ball on them; expected places are written from the
rule text with D the pin spacing and s = D/2, so a wrong row, side or order fails.
"""

import math

import pytest

from vision_ref.rules.build import make_shot, play_shots
from vision_ref.rules.respot import classify, respot_pins
from vision_ref.rules.table import DEFAULT_TABLE, PIN_IDS

T = DEFAULT_TABLE
D = T.pin_spacing
s = D / 2.0
FAR = {"white1": (-1200.0, 600.0), "white2": (1200.0, -600.0)}


def place(knocked, occupy, cue=(500.0, 200.0), cue_offset=(0.0, 0.0), staying=None):
    """Respot ``knocked`` with balls sitting on the spots of ``occupy``.

    The whites are used first; a third occupied spot takes the cue ball, put at the
    spot plus ``cue_offset`` (still overlapping the pin base) so its side is defined.
    """
    balls = {"cue": cue, **FAR}
    for pin, ball in zip(occupy, ["white1", "white2", "cue"]):
        x, y = T.pin_spot(pin)
        balls[ball] = (x + cue_offset[0], y + cue_offset[1]) if ball == "cue" else (x, y)
    if staying is None:
        staying = {p: T.pin_spot(p) for p in PIN_IDS if p not in knocked}
    placements, rules = respot_pins(T, list(knocked), balls, staying, balls["cue"])
    got = {pl.piece: (pytest.approx(pl.at[0], abs=1e-6), pytest.approx(pl.at[1], abs=1e-6), pl.rule) for pl in placements}
    return got, rules, placements


def test_spot_free_spots_are_used():
    got, rules, _ = place(["head", "king"], [])
    assert got == {"head": (-D, 0.0, "spot"), "king": (0.0, 0.0, "spot")} and rules == ["spot"]


def test_Ra_king_spot_occupied_goes_beyond_long_pin_on_cue_ball_end():
    got, rules, _ = place(["king"], ["king"], cue=(-400.0, 100.0))  # cue ball in the head half: c = -1
    assert got == {"king": (-(D + s), 0.0, "Ra")} and "Ra" in rules and "R0" in rules
    got, _, _ = place(["king"], ["king"], cue=(400.0, 100.0))
    assert got["king"][:2] == (D + s, 0.0)


def test_Rb_plain_pin_spot_occupied_goes_midway_towards_opposite_pin():
    got, rules, _ = place(["head"], ["head"])
    assert got == {"head": (D / 2, 0.0, "Rb")} and rules == ["Rb"]
    got, _, _ = place(["left"], ["left"])
    assert got["left"][:2] == (0.0, -D / 2)


def test_Rc_king_and_plain_pin_next_to_pin_on_their_line_pin_then_king():
    got, rules, _ = place(["head", "king"], ["head", "king"])
    # the line through head and king holds foot at (+D, 0): head next to it, then the king
    assert got == {"head": (D + s, 0.0, "Rc"), "king": (D + 2 * s, 0.0, "Rc")}
    assert "Rc" in rules and "R0" in rules


def test_Rd_both_long_axis_pins_midway_to_short_pins():
    got, rules, _ = place(["head", "foot"], ["head", "foot"])
    assert {p: v[:2] for p, v in got.items()} == {"head": (0.0, s), "foot": (0.0, -s)} and rules == ["Rd"]


def test_Re_both_short_axis_pins_midway_on_long_axis():
    got, rules, _ = place(["left", "right"], ["left", "right"])
    assert {p: v[:2] for p, v in got.items()} == {"left": (-s, 0.0), "right": (s, 0.0)} and rules == ["Re"]


def test_Rf_diagonal_pins_each_midway_to_its_opposite():
    got, rules, _ = place(["head", "left"], ["head", "left"])
    assert {p: v[:2] for p, v in got.items()} == {"head": (s, 0.0), "left": (0.0, -s)} and rules == ["Rf"]


def test_Rg_king_and_short_pins_beyond_long_pin_opposite_cue_ball_end():
    # cue ball in the head half (c = -1): the row goes past the foot pin (+x), king last
    got, rules, _ = place(["left", "right", "king"], ["left", "right", "king"], cue_offset=(-20.0, 0.0))
    assert got == {"left": (D + s, 0.0, "Rg"), "right": (D + 2 * s, 0.0, "Rg"), "king": (D + 3 * s, 0.0, "Rg")}
    assert "R0" in rules


def test_Rh_king_and_diagonal_pins_next_to_standing_pin_opposite_cue_end():
    # head, left, king occupied, cue ball at the foot end (c = +1): standing pins foot (+x)
    # and right (x = 0); the one nearer the head cushion is right: row along -y.
    got, rules, _ = place(["head", "left", "king"], ["head", "left", "king"], cue_offset=(20.0, 0.0))
    assert got == {"head": (0.0, -(D + s), "Rh"), "left": (0.0, -(D + 2 * s), "Rh"), "king": (0.0, -(D + 3 * s), "Rh")}
    assert "Rh" in rules


def test_Ri_three_plain_pins_in_a_row_beyond_the_standing_one():
    got, rules, balls = place(["head", "foot", "left"], ["head", "foot", "left"], cue=None)
    assert got == {"head": (0.0, -(D + s), "Ri"), "foot": (0.0, -(D + 2 * s), "Ri"), "left": (0.0, -(D + 3 * s), "Ri")}
    assert rules == ["Ri"]


def test_Rk_king_and_long_pins_beside_short_pin_on_cue_ball_side():
    got, rules, _ = place(["head", "foot", "king"], ["head", "foot", "king"], cue_offset=(0.0, -20.0))  # cue y < 0
    assert got == {"head": (0.0, -(D + s), "Rk"), "foot": (0.0, -(D + 2 * s), "Rk"), "king": (0.0, -(D + 3 * s), "Rk")}
    got, _, _ = place(["head", "foot", "king"], ["head", "foot", "king"], cue_offset=(0.0, 20.0))
    assert got["king"][:2] == (0.0, D + 3 * s)


def test_R0_king_goes_last_in_its_row_and_on_the_cue_ball_side():
    _, rules, placements = place(["left", "right", "king"], ["left", "right", "king"], cue_offset=(20.0, 0.0))
    xs = {pl.piece: pl.at[0] for pl in placements}
    assert xs["king"] < xs["right"] < xs["left"] < 0  # c = +1: row past the head pin, king outermost
    assert "R0" in rules


def test_Rz_computed_place_occupied_continues_outward():
    # Ra's place (D + s, 0) holds white1 as well: the king moves on along the row.
    balls = {"cue": (0.0, 0.0), "white1": (D + s, 0.0), "white2": (1200.0, -600.0)}
    staying = {p: T.pin_spot(p) for p in PIN_IDS if p != "king"}
    placements, rules = respot_pins(T, ["king"], balls, staying, (400.0, 0.0))
    (pl,) = placements
    reach = T.ball_radius + T.pin_base_radius("king")
    assert pl.rule == "Rz" and "Rz" in rules and pl.at[1] == 0.0 and pl.at[0] > D + s
    assert math.hypot(pl.at[0] - (D + s), 0.0) >= reach
    # on the row's grid, and the first free step of it (the step before is still taken)
    k = (pl.at[0] - (D + s)) / s
    assert k == pytest.approx(round(k)) and round(k) >= 1
    assert math.hypot(pl.at[0] - s - (D + s), 0.0) < reach


def test_Rz_row_off_the_cloth_uses_mirror_row():
    # Balls fill the whole +x row out to the cushion: the king goes to the mirror (-x) row.
    balls = {"cue": (0.0, 0.0)}
    blockers = [(x, 0.0) for x in (D + s, D + 3 * s)]
    balls.update({"white1": blockers[0], "white2": blockers[1]})
    staying = {p: T.pin_spot(p) for p in PIN_IDS if p != "king"}
    placements, _ = respot_pins(T, ["king"], balls, staying, (400.0, 0.0))
    (pl,) = placements
    assert T.on_cloth(*pl.at) and all(math.hypot(pl.at[0] - b[0], pl.at[1] - b[1]) >= T.ball_radius for b in balls.values())


@pytest.mark.parametrize(
    "occupied,case",
    [(set(), "spot"), ({"king"}, "Ra"), ({"head"}, "Rb"), ({"king", "left"}, "Rc"), ({"head", "foot"}, "Rd"),
     ({"left", "right"}, "Re"), ({"foot", "right"}, "Rf"), ({"king", "left", "right"}, "Rg"),
     ({"king", "foot", "left"}, "Rh"), ({"head", "foot", "right"}, "Ri"), ({"king", "head", "foot"}, "Rk"),
     ({"head", "foot", "left", "right"}, "Rz")],
)
def test_R_cases_classified_from_occupied_spots(occupied, case):
    assert classify(occupied) == case


def test_Ra_through_the_adjudicator_decision_coordinates():
    # A legal king knock; the cue ball stops on the king's spot.
    after = {"cue": [0.0, 10.0], "white1": [-300.0, 400.0], "white2": [710.0, 0.0]}
    shot = make_shot("A", [("bb", "cue", "white1"), ("cush", "white1", "left"), ("pin", "king", "white1")],
                     down=["king"], after_balls=after)
    (d,) = play_shots([shot])
    assert {"piece": "king", "at": [D + s, 0.0], "rule": "Ra"} in d["respot"] and "Ra" in d["rules"]
