"""Pins named by the spot they stand on at the end (vision_ref.events.identity)."""

from dataclasses import replace

import numpy as np
import pytest

from vision_ref.events.identity import relabel_pins_by_spot
from vision_ref.events.infer import infer_shot
from vision_ref.events.segment import segment_shots
from vision_ref.events.synthetic import tracks_from_truth
from vision_ref.messages import PinState
from vision_ref.rules.table import DEFAULT_TABLE
from vision_ref.sim.scenarios import get_scenario

FPS = 60.0


@pytest.fixture(scope="module")
def one_pin():
    """score_2_one_pin: only the left pin falls; head, foot and right stand throughout."""
    shot = get_scenario("score_2_one_pin").simulate(0)
    tracks = tracks_from_truth(shot, FPS, noise_mm=0.5, seed=2, exposure_s=0.5 / FPS)
    (window,) = segment_shots(tracks)
    return tracks, window


def _crossed(tracks, a: str, b: str, cut: int, junk_rows: int = 2):
    """What the tracker does when two plain pins' labels cross at row ``cut``: from there
    each label holds the other's blob; ``b``, which takes ``a`` standing, first chases
    ``junk_rows`` rows of nothing (a ball's shadow)."""
    def swapped(own, other):
        f = {}
        for name in ("xy", "vel", "state", "conf", "angle"):
            arr = getattr(own, name).copy()
            arr[cut:] = getattr(other, name)[cut:]
            f[name] = arr
        return replace(own, **f)

    pins = dict(tracks.pins)
    pins[a], pins[b] = swapped(tracks.pins[a], tracks.pins[b]), swapped(tracks.pins[b], tracks.pins[a])
    xy, st = pins[b].xy.copy(), pins[b].state.copy()
    xy[cut:cut + junk_rows] = np.asarray(DEFAULT_TABLE.pin_spot(a)) + [-40.0, -60.0]
    st[cut:cut + junk_rows] = int(PinState.MOVING)
    pins[b] = replace(pins[b], xy=xy, state=st)
    return replace(tracks, pins=pins)


def _end_rows(window, fps=FPS):
    settle = max(2, int(round(0.1 * fps)))
    return np.arange(window.end_row - settle + 1, window.end_row + 1)


def test_clean_tracks_are_left_alone(one_pin):
    tracks, window = one_pin
    out, warnings = relabel_pins_by_spot(tracks, window.start_row, window.end_row, _end_rows(window), DEFAULT_TABLE)
    assert out is tracks and warnings == []


def test_crossed_labels_are_exchanged_back(one_pin):
    tracks, window = one_pin
    fell = np.nonzero(tracks.pins["left"].state == PinState.DOWN)[0][0]
    cut = int(fell) + 10  # the head label takes the left pin lying, the left label the head standing
    crossed = _crossed(tracks, "head", "left", cut)
    clean = infer_shot(tracks, window, shooter="A")
    got = infer_shot(crossed, window, shooter="A")
    down = lambda rec: sorted(p for p, v in rec["after"]["pins"].items() if v["state"] != "standing")  # noqa: E731
    assert down(clean) == ["left"]
    assert down(got) == ["left"]
    assert got["after"]["pins"]["head"]["state"] == "standing"
    assert [(e["type"], e.get("pin")) for e in got["events"]] == [(e["type"], e.get("pin")) for e in clean["events"]]
    assert any("exchanged labels" in w for w in got["warnings"])

    out, _ = relabel_pins_by_spot(crossed, window.start_row, window.end_row, _end_rows(window), DEFAULT_TABLE)
    head = out.pins["head"]
    # the rows in which neither label held the standing head are unseen, not moving
    assert np.all(head.state[cut:cut + 2] == PinState.UNKNOWN) and np.isnan(head.xy[cut:cut + 2]).all()
    assert np.all(head.state[cut + 2:window.end_row + 1] == PinState.STANDING)


def test_two_pins_standing_on_one_spot_are_not_guessed(one_pin):
    tracks, window = one_pin
    # the left label ends standing on head's spot while head still stands there too
    pins = dict(tracks.pins)
    left = pins["left"]
    xy, st = left.xy.copy(), left.state.copy()
    fell = int(np.nonzero(st == PinState.DOWN)[0][0])
    xy[fell:] = DEFAULT_TABLE.pin_spot("head")
    st[fell:] = int(PinState.STANDING)
    pins["left"] = replace(left, xy=xy, state=st)
    odd = replace(tracks, pins=pins)
    out, warnings = relabel_pins_by_spot(odd, window.start_row, window.end_row, _end_rows(window), DEFAULT_TABLE)
    assert out is odd and warnings == []


def test_the_king_and_a_plain_pin_crossed_are_exchanged_back(one_pin):
    """The king's label on the fallen plain pin and the plain pin's on the king standing
    on its spot: the fallen pin is the plain one (2 points, not the king's 4)."""
    tracks, window = one_pin
    fell = np.nonzero(tracks.pins["left"].state == PinState.DOWN)[0][0]
    crossed = _crossed(tracks, "king", "left", int(fell) + 10)
    down = lambda rec: sorted(p for p, v in rec["after"]["pins"].items() if v["state"] != "standing")  # noqa: E731
    assert down(infer_shot(crossed, window, shooter="A")) == ["left"]
    out, warnings = relabel_pins_by_spot(crossed, window.start_row, window.end_row, _end_rows(window), DEFAULT_TABLE)
    assert len(warnings) == 1 and "pins left and king exchanged labels" in warnings[0]
    assert out.pins["king"].state[window.end_row] == PinState.STANDING
