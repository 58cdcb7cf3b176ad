"""Property tests over random valid shot sequences (hypothesis).

- a decision never crashes on a valid record;
- points are never lost or created: each player's score is the sum of the credits
  made to him, and each decision's score is the previous one plus its credits;
- a record broken in any of several ways raises ContractError naming a field, and the
  match state is unchanged.
"""

import copy

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vision_ref.errors import ContractError
from vision_ref.rules import Match
from vision_ref.rules.build import make_shot
from vision_ref.rules.table import BALL_IDS, CUSHION_IDS, PIN_IDS

WHITES = ("white1", "white2")


@st.composite
def shot_specs(draw):
    """Events of one plausible shot: strike, contacts, pin hits with valid chains."""
    specs = []
    hit_pins: list[str] = []
    for _ in range(draw(st.integers(0, 7))):
        kind = draw(st.sampled_from(["bb", "cush", "pin", "pin_by_pin"]))
        if kind == "bb":
            a, b = draw(st.sampled_from([("cue", "white1"), ("cue", "white2"), ("white1", "white2")]))
            specs.append(("bb", a, b))
        elif kind == "cush":
            specs.append(("cush", draw(st.sampled_from(BALL_IDS)), draw(st.sampled_from(CUSHION_IDS))))
        elif kind == "pin":
            pin = draw(st.sampled_from(PIN_IDS))
            specs.append(("pin", pin, draw(st.sampled_from(BALL_IDS))))
            hit_pins.append(pin)
        elif hit_pins:
            by = draw(st.sampled_from(hit_pins))
            pin = draw(st.sampled_from([p for p in PIN_IDS if p != by]))
            specs.append(("pin", pin, by))
            hit_pins.append(pin)
    # pins that were hit may end down or still standing (T1)
    down = [p for p in dict.fromkeys(hit_pins) if draw(st.booleans())]
    calls = draw(st.lists(st.sampled_from(["cue_side", "self_stop", "touch", "bystander"]), max_size=1, unique=True))
    return specs, down, calls


sequences = st.lists(shot_specs(), min_size=1, max_size=12)


def play_all(seq, modes=None):
    m = Match(["A", "B"], "A", modes=modes) if modes else Match(["A", "B"], "A")
    for specs, down, calls in seq:
        if m.game_over:
            break
        m.play(make_shot(None, specs, down=down, calls=calls))
    return m


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sequences, st.sampled_from([None, {"A": "shtoss", "B": "shtoss"}, {"A": "series", "B": "shtoss"}]))
def test_points_are_never_lost_or_created(seq, modes):
    m = play_all(seq, modes)
    totals = {"A": 0, "B": 0}
    previous = {"A": 0, "B": 0}
    for d in m.decisions:
        delta = {"A": 0, "B": 0}
        for c in d["credits"]:
            delta[c["player"]] += c["points"]
        for p in totals:
            totals[p] += delta[p]
            assert d["score"][p] == previous[p] + delta[p]
        previous = dict(d["score"])
        assert d["points"] >= 0
        if d["points"]:
            assert d["credited_to"] in ("A", "B")
    assert m.score == totals


@settings(max_examples=100, deadline=None)
@given(sequences)
def test_every_decision_names_its_rules_and_a_next_player(seq):
    m = play_all(seq)
    for d in m.decisions:
        assert d["rules"], d
        assert all(f["rule"] in d["rules"] and f["detail"] for f in d["fouls"])
        assert (d["next"] is None) == d["game_over"]


def _break_unknown_ball(r):
    r["after"]["balls"]["red"] = [0.0, 0.0]


def _break_time_order(r):
    r["events"].append({"t": -1.0, "type": "ball_ball", "a": "cue", "b": "white1"})


def _break_missing_pin(r):
    del r["after"]["pins"]["king"]


def _break_format(r):
    r["format"] = "vision-ref.shot/0"


def _break_shooter(r):
    r["shooter"] = "Z"


def _break_event_type(r):
    r["events"].append({"t": 99.0, "type": "teleport", "ball": "cue"})


def _break_pin_state(r):
    r["after"]["pins"]["head"]["state"] = "sideways"


def _break_coordinates(r):
    r["before"]["balls"]["cue"] = ["x", 1.0]


BREAKERS = [_break_unknown_ball, _break_time_order, _break_missing_pin, _break_format, _break_shooter,
            _break_event_type, _break_pin_state, _break_coordinates]


@settings(max_examples=120, deadline=None)
@given(sequences, shot_specs(), st.sampled_from(BREAKERS))
def test_invalid_records_raise_and_change_nothing(seq, bad_spec, breaker):
    m = play_all(seq)
    if m.game_over:
        return
    before = copy.deepcopy(m.to_dict())
    specs, down, calls = bad_spec
    record = make_shot(m.turn, specs, down=down, calls=calls)
    breaker(record)
    try:
        m.play(record)
    except ContractError as exc:
        assert exc.field and str(exc)
    else:
        raise AssertionError(f"{breaker.__name__} was accepted")
    assert m.to_dict() == before
