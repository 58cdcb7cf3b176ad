"""Naming the pins by the spots they stand on at the end of a shot.

The four plain pins (head, foot, left, right) look alike, and at a few pixels the
king is hardly easier to tell: its colour shows on a pixel or two. When pins are in
flight or merged with a ball's blob in one window, the tracker can hand one's label
to another (seen in the review corpus at 728x544: a pin lost while a ball rolled
over it took a standing neighbour's blob as its own, and the neighbour took the
lying pin; a plain pin standing on its spot was reported as the king, the king
lying elsewhere under a plain pin's name). The labels then name the wrong pin down
(a king's 4 points for a plain pin's 2), and the respot instructions put a pin on
an occupied spot.

A pin that ends the shot standing on another pin's spot, while that pin's track
left its spot during the shot and does not end standing there, is that pin: a pin
knocked off and landing upright within a few mm of another's spot, whose own pin
left it, does not happen in play. The two labels are exchanged from the row after
the other pin was last seen standing on its spot (before it both tracks held what
they held), and the pin on the spot is reported unseen until its new track stands
there (in those rows it is not known which blob was which). Only standing pins are
used as evidence: a lying pin's place says nothing about which it was.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from vision_ref.messages import PinState, Tracks
from vision_ref.rules.table import PIN_IDS, TableSpec

_STANDING = int(PinState.STANDING)


def _on_spot(xy: np.ndarray, state: np.ndarray, spot: tuple[float, float], radius: float) -> np.ndarray:
    """Rows in which the track stands within ``radius`` mm of ``spot``."""
    d = np.hypot(xy[:, 0] - spot[0], xy[:, 1] - spot[1])
    return (state == _STANDING) & np.isfinite(d) & (d <= radius)


def relabel_pins_by_spot(tracks: Tracks, start_row: int, end_row: int, end_rows: np.ndarray,
                         table: TableSpec) -> tuple[Tracks, list[str]]:
    """Tracks with pin labels exchanged where a pin ends standing on another's spot.

    ``start_row``..``end_row``: the shot's rows (labels are only exchanged inside
    them); ``end_rows``: the rows that show the pins at rest at the end. Returns the
    (possibly new) tracks and one warning per exchange; the input is not modified.
    """
    radius = 0.2 * table.pin_spacing  # a standing pin is tracked to a few mm; spots are a spacing apart
    spots = {p: table.pin_spot(p) for p in PIN_IDS}
    pins = {p: tracks.pins[p] for p in PIN_IDS}
    warnings: list[str] = []
    for _ in range(len(PIN_IDS)):  # a cycle of three labels takes two exchanges
        crossed = _crossed_pair(pins, start_row, end_row, end_rows, spots, radius)
        if crossed is None:
            break
        x, y, cut, settled = crossed
        pins[x], pins[y] = _swap_rows(pins[x], pins[y], slice(cut, end_row + 1))
        # between, the rows held neither pin standing on y's spot under y's label:
        # which pin was where is not known there, so y is reported unseen, not moving
        pins[y] = _unseen(pins[y], slice(cut, settled))
        warnings.append(f"pins {x} and {y} exchanged labels from frame {int(tracks.frame_index[cut])}: the pin "
                        f"standing on {y}'s spot at the end is {y} (the tracker's labels crossed)")
    if not warnings:
        return tracks, []
    return replace(tracks, pins=pins), warnings


def _crossed_pair(pins: dict, start_row: int, end_row: int, end_rows: np.ndarray, spots: dict,
                  radius: float) -> tuple[str, str, int, int] | None:
    """The first pair of crossed labels: (x, y, cut, settled) when the pin labelled x ends
    standing on y's spot, y having stood there until row ``cut`` - 1; x's track stands
    there from row ``settled``. None when no pair has crossed."""
    rows = np.arange(start_row, end_row + 1)
    # pins that end standing on their own spot keep their labels
    home = {p: _on_spot(pins[p].xy[end_rows], pins[p].state[end_rows], spots[p], radius).all() for p in PIN_IDS}
    for x in PIN_IDS:
        for y in PIN_IDS:
            if x == y or home[x] or home[y]:
                continue
            tx, ty = pins[x], pins[y]
            if not _on_spot(tx.xy[end_rows], tx.state[end_rows], spots[y], radius).all():
                continue
            # y's last standing on its spot within the shot: the labels part after it
            y_on = _on_spot(ty.xy[rows], ty.state[rows], spots[y], radius)
            if not y_on.any():
                continue
            cut = int(rows[np.nonzero(y_on)[0][-1]]) + 1
            if cut > int(end_rows[0]):
                continue  # y still stood there at the end: two pins on one spot, nothing to exchange
            x_on = _on_spot(tx.xy[cut:end_row + 1], tx.state[cut:end_row + 1], spots[y], radius)
            return x, y, cut, cut + int(np.argmax(x_on))
    return None


# the per-row arrays of a Track
_ROW_FIELDS = ("xy", "vel", "state", "conf", "angle")
# what a row not seen holds (the tracker reports no pin velocity)
_UNSEEN = {"xy": np.nan, "vel": 0.0, "state": int(PinState.UNKNOWN), "conf": 0.0, "angle": np.nan}


def _unseen(tr, sl: slice):
    """A copy of track ``tr`` with rows ``sl`` reported as not seen."""
    fields = {}
    for name in _ROW_FIELDS:
        arr = getattr(tr, name)
        if arr is not None:
            arr = arr.copy()
            arr[sl] = _UNSEEN[name]
        fields[name] = arr
    return replace(tr, **fields)


def _swap_rows(a, b, sl: slice):
    """Copies of tracks ``a`` and ``b`` (their object ids kept) with rows ``sl`` exchanged."""
    def part(own, other):
        fields = {}
        for name in _ROW_FIELDS:
            mine, theirs = getattr(own, name), getattr(other, name)
            if mine is not None and theirs is not None:
                mine = mine.copy()
                mine[sl] = theirs[sl]
            fields[name] = mine
        return replace(own, **fields)
    return part(a, b), part(b, a)
