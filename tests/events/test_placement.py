import copy

import pytest

from vision_ref.errors import ContractError
from vision_ref.events.placement import check_respot
from vision_ref.rules import Match
from vision_ref.sim.scenarios import get_scenario


@pytest.fixture(scope="module")
def knocked():
    shot = get_scenario("score_4_two_pins").simulate(0)
    record = shot.truth_record(60.0)
    decision = Match(["A", "B"], "A").play(record)
    assert {r["piece"] for r in decision["respot"]} == {"head", "right"}
    return record, decision


def _as_told(record, decision):
    nb = copy.deepcopy(record["after"])
    for item in decision["respot"]:
        nb["pins"][item["piece"]] = {"at": list(item["at"]), "state": "standing"}
    return nb


def test_placement_as_told_has_no_warning(knocked):
    record, decision = knocked
    assert check_respot(decision, _as_told(record, decision), after=record["after"]) == []


def test_pin_set_elsewhere_or_left_lying_is_named(knocked):
    record, decision = knocked
    nb = _as_told(record, decision)
    nb["pins"]["head"]["at"] = [-50.0, 10.0]
    nb["pins"]["right"]["state"] = "down"
    warnings = check_respot(decision, nb)
    assert len(warnings) == 2
    assert any("pin head" in w and "26 mm" in w for w in warnings)
    assert any("pin right" in w and "down" in w for w in warnings)


def test_piece_moved_without_instruction_is_named(knocked):
    record, decision = knocked
    nb = _as_told(record, decision)
    nb["balls"]["white2"] = [nb["balls"]["white2"][0] + 100.0, nb["balls"]["white2"][1]]
    nb["pins"]["king"] = {"at": [5.0, 40.0], "state": "standing"}
    warnings = check_respot(decision, nb, after=record["after"])
    assert any(w.startswith("white2 was moved by hand") for w in warnings)
    assert any(w.startswith("pin king was moved by hand") for w in warnings)


def test_white_not_put_back():
    decision = {"respot": [{"piece": "white2", "at": [710.0, 0.0], "rule": "B2"}]}
    nb = {"balls": {"cue": [0.0, 300.0], "white1": [-710.0, 0.0], "white2": None}}
    (w,) = check_respot(decision, nb)
    assert "white2" in w and "B2" in w and "not on the table" in w


@pytest.mark.parametrize("decision, before, field", [
    ("x", {"balls": {}}, "decision"),
    ({"respot": [{"piece": "queen", "at": [0, 0]}]}, {"balls": {}}, "decision.respot[0].piece"),
    ({"respot": [{"at": [0, 0]}]}, {"balls": {}}, "decision.respot[0]"),
    ({"respot": []}, {"pins": {}}, "next_before"),
])
def test_bad_input(decision, before, field):
    with pytest.raises(ContractError) as err:
        check_respot(decision, before)
    assert err.value.field == field
