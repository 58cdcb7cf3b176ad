"""Naming the four plain pins by the spots they stand on.

The four plain pins (head, foot, left, right) look alike; only the king has its own
colour. When two of them are in flight or merged with a ball's blob in one window,
the tracker can hand one's label to the other (seen in the review corpus at
728x544: a pin lost while a ball rolled over it took a standing neighbour's blob as
its own, and the neighbour took the lying pin). The labels then name the wrong pin
down, and the respot instructions put a pin on an occupied spot.

A plain pin that ends the shot standing on another plain pin's spot, while that
pin's track left its spot during the shot and does not end standing there, is that
pin: the two labels are exchanged from the row after the other pin was last seen
standing on its spot (before it both tracks held what they held), and the pin on
the spot is reported unseen until its new track stands there (in those rows it is
not known which blob was which). Only standing pins are used as evidence: a lying
pin's place says nothing about which it was.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from vision_ref.messages import PinState, Tracks
from vision_ref.rules.table import PIN_IDS, TableSpec

PLAIN_PINS = tuple(p for p in PIN_IDS if p != "king")
_STANDING = int(PinState.STANDING)


def _on_spot(xy: np.ndarray, state: np.ndarray, spot: tuple[float, float], radius: float) -> np.ndarray:
    """Rows in which the track stands within ``radius`` mm of ``spot``."""
    d = np.hypot(xy[:, 0] - spot[0], xy[:, 1] - spot[1])
    return (state == _STANDING) & np.isfinite(d) & (d <= radius)


def relabel_plain_pins(tracks: Tracks, start_row: int, end_row: int, end_rows: np.ndarray,
                       table: TableSpec) -> tuple[Tracks, list[str]]:
    """Tracks with plain-pin labels exchanged where a pin ends standing on another's spot.

    ``start_row``..``end_row``: the shot's rows (labels are only exchanged inside
    them); ``end_rows``: the rows that show the pins at rest at the end. Returns the
    (possibly new) tracks and one warning per exchange; the input is not modified.
    """
    radius = 0.2 * table.pin_spacing  # a standing pin is tracked to a few mm; spots are a spacing apart
    spots = {p: table.pin_spot(p) for p in PLAIN_PINS}
    pins = {p: tracks.pins[p] for p in PIN_IDS}
    warnings: list[str] = []
    rows = np.arange(start_row, end_row + 1)
    for _ in range(len(PLAIN_PINS)):  # a cycle of three labels takes two exchanges
        exchanged = False
        # pins that end standing on their own spot keep their labels
        home = {p: _on_spot(pins[p].xy[end_rows], pins[p].state[end_rows], spots[p], radius).all()
                for p in PLAIN_PINS}
        for x in PLAIN_PINS:
            for y in PLAIN_PINS:
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
                settled = cut + int(np.argmax(x_on))
                pins[x], pins[y] = _swap_rows(tx, ty, slice(cut, end_row + 1))
                # between, the rows held neither pin standing on y's spot under y's label:
                # which pin was where is not known there, so y is reported unseen, not moving
                pins[y] = _unseen(pins[y], slice(cut, settled))
                frame = int(tracks.frame_index[cut])
                warnings.append(f"pins {x} and {y} exchanged labels from frame {frame}: the pin standing on "
                                f"{y}'s spot at the end is {y} (plain pins look alike; the tracker's labels crossed)")
                exchanged = True
                break
            if exchanged:
                break
        if not exchanged:
            break
    if not warnings:
        return tracks, []
    return replace(tracks, pins=pins), warnings


def _unseen(tr, sl: slice):
    """A copy of track ``tr`` with rows ``sl`` reported as not seen."""
    xy, vel, state, conf = tr.xy.copy(), tr.vel.copy(), tr.state.copy(), tr.conf.copy()
    xy[sl] = np.nan
    vel[sl] = 0.0  # (the tracker reports no pin velocity)
    state[sl] = int(PinState.UNKNOWN)
    conf[sl] = 0.0
    angle = None
    if tr.angle is not None:
        angle = tr.angle.copy()
        angle[sl] = np.nan
    return replace(tr, xy=xy, vel=vel, state=state, conf=conf, angle=angle)


def _swap_rows(a, b, sl: slice):
    """Copies of tracks ``a`` and ``b`` (their object ids kept) with rows ``sl`` exchanged."""
    def part(own, other):
        fields = {}
        for name in ("xy", "vel", "state", "conf", "angle"):
            mine, theirs = getattr(own, name), getattr(other, name)
            if mine is None or theirs is None:
                fields[name] = mine
                continue
            arr = mine.copy()
            arr[sl] = theirs[sl]
            fields[name] = arr
        return replace(own, **fields)
    return part(a, b), part(b, a)
