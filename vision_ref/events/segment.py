"""Shot segmentation: where each shot starts (the strike), ends (all at rest), which
ball the cue struck (F6) and what was placed by hand in between.

A shot is a stretch of rows in which a ball moves on the cloth, starting from a
table at rest. Rows where the only change is a ball lifted (``IN_HAND``) or a pin
being set (``ABSENT`` / moved while no ball rolls) are hand work between shots, not
shots. The struck ball is the one whose motion began first, timed below the frame
interval by extrapolating its first moving positions back to its rest position:
at 60 fps a cue ball that strikes a nearby ball moves both within one frame, and only
the sub-frame onset tells them apart.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from vision_ref.errors import ContractError
from vision_ref.messages import BallState, PinState, Tracks
from vision_ref.rules.table import BALL_IDS, PIN_IDS

_ON_CLOTH = (int(BallState.AT_REST), int(BallState.MOVING))


@dataclass
class ShotWindow:
    """Rows of one shot in a :class:`Tracks` (row indices, not frame numbers).

    ``start_row``: first row of the still table before the strike (used for
    ``before``); ``strike_row``: first row in which the struck ball is seen moving;
    ``end_row``: first row at which everything is at rest again (inclusive end);
    ``strike_t``: clip time of the strike (sub-frame estimate) and ``strike_sigma``
    its standard error; ``complete`` False when the tracks end before the table
    came to rest; ``onsets``: each moving ball's estimated onset time;
    ``hand_placements``: pieces moved by hand since the previous shot; ``notes``:
    motion since the previous shot that was not a shot (pin states changing, a ball
    reported moving in place, with every ball at rest), for the record's warnings.
    """

    start_row: int
    strike_row: int
    end_row: int
    struck: str
    strike_t: float
    strike_sigma: float
    complete: bool = True
    onsets: dict[str, float] = field(default_factory=dict)
    hand_placements: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "start_row": self.start_row, "strike_row": self.strike_row, "end_row": self.end_row,
            "struck": self.struck, "strike_t": self.strike_t, "strike_sigma": self.strike_sigma,
            "complete": self.complete, "onsets": dict(self.onsets), "hand_placements": list(self.hand_placements),
            "notes": list(self.notes),
        }


def check_tracks(tracks: Tracks) -> None:
    """Reject tracks event inference cannot use, naming the problem."""
    if not isinstance(tracks, Tracks):
        raise ContractError("tracks", f"expected vision_ref.messages.Tracks, got {type(tracks).__name__}")
    n = len(tracks.t)
    if n < 3:
        raise ContractError("tracks.t", f"needs at least 3 rows, got {n}")
    if not np.all(np.isfinite(tracks.t)):
        raise ContractError("tracks.t", "contains non-finite times")
    if np.any(np.diff(tracks.t) <= 0):
        raise ContractError("tracks.t", "times must increase strictly")
    if np.any(np.diff(tracks.frame_index) <= 0):
        raise ContractError("tracks.frame_index", "frame indices must increase strictly")
    if not (math.isfinite(tracks.fps) and tracks.fps > 0):
        raise ContractError("tracks.fps", f"must be a positive number, got {tracks.fps!r}")


def noise_of(tracks: Tracks) -> float:
    return max(float(tracks.position_noise_mm or 0.0), 0.05)


def mid_times(tracks: Tracks) -> np.ndarray:
    """Mid-exposure times of the rows: when a blurred centroid is (nearly) exact."""
    return tracks.t + 0.5 * float(tracks.exposure_s or 0.0)


def ball_motion(tracks: Tracks) -> np.ndarray:
    """(N, n_balls) bool: the ball moves on the cloth in this row."""
    n = len(tracks.t)
    sig = noise_of(tracks)
    out = np.zeros((n, len(BALL_IDS)), dtype=bool)
    for i, b in enumerate(BALL_IDS):
        tr = tracks.balls[b]
        st = tr.state
        moving = st == int(BallState.MOVING)
        # position evidence too: a tracker may lag in calling MOVING
        step = np.zeros(n)
        step[1:] = np.hypot(*(tr.xy[1:] - tr.xy[:-1]).T)
        on = np.isin(st, _ON_CLOTH)
        jumped = (np.nan_to_num(step) > 8.0 * sig + 1.0) & on & np.roll(on, 1)
        jumped[0] = False
        out[:, i] = (moving & ~_detection_starts(tr.xy, moving, 8.0 * sig + 1.0)) | jumped | _creeping(
            tr.xy, on, tracks.fps, max(CREEP_MM, 8.0 * sig + 1.0))
    return out


CREEP_MM = 10.0  # travelled in CREEP_S by a ball still rolling (40 mm/s), far beyond a resting ball's jitter
CREEP_S = 0.25


def _creeping(xy: np.ndarray, on: np.ndarray, fps: float, min_mm: float) -> np.ndarray:
    """Rows where the ball is CREEP_S of travel of at least ``min_mm`` from where it was:
    a ball rolling out very slowly, which a tracker may report at rest while its place
    moves a millimetre at a time (the shot is not over; the end of its roll must not
    read as a new strike)."""
    w = max(1, int(round(CREEP_S * fps)))
    out = np.zeros(len(xy), dtype=bool)
    if len(xy) <= w:
        return out
    ok = on & np.all(np.isfinite(xy), axis=1)
    # seen on the cloth in every row of the span (a ball lifted and put down elsewhere is
    # a hand placement, not a roll)
    unseen = np.concatenate([[0], np.cumsum(~ok)])
    whole = (unseen[w + 1:] - unseen[:-w - 1]) == 0
    d = np.hypot(*(xy[w:] - xy[:-w]).T)
    out[w:] = whole & (np.nan_to_num(d) > min_mm)
    return out


def _detection_starts(xy: np.ndarray, moving: np.ndarray, still_mm: float) -> np.ndarray:
    """MOVING rows that are only a ball being found: a run of MOVING right after rows
    without a position (the start of the tracks, or unseen) in which the ball does not
    leave the place it was first seen. A tracker's velocity has no history there, so
    its MOVING is not evidence of a strike (it made a fake shot at row 0, and the
    real one was then lost)."""
    out = np.zeros(len(moving), dtype=bool)
    seen = np.all(np.isfinite(xy), axis=1)
    for first, last in _runs(moving, 0):
        if first > 0 and seen[first - 1]:
            continue  # seen just before: a genuine start of motion (or a continuing one)
        rows = np.arange(first, min(last + 2, len(moving)))
        rows = rows[seen[rows]]
        if len(rows) == 0:
            out[first:last + 1] = True  # nothing to show motion at all
            continue
        drift = np.hypot(*(xy[rows] - xy[rows[0]]).T)
        if float(drift.max()) <= still_mm:
            out[first:last + 1] = True
    return out


def pin_motion(tracks: Tracks) -> np.ndarray:
    n = len(tracks.t)
    out = np.zeros((n, len(PIN_IDS)), dtype=bool)
    for j, p in enumerate(PIN_IDS):
        out[:, j] = tracks.pins[p].state == int(PinState.MOVING)
    return out


def _runs(mask: np.ndarray, max_gap: int) -> list[tuple[int, int]]:
    """Inclusive (first, last) row runs of True, bridging gaps of up to max_gap rows."""
    rows = np.nonzero(mask)[0]
    if len(rows) == 0:
        return []
    runs = []
    s = p = int(rows[0])
    for r in rows[1:]:
        r = int(r)
        if r - p > max_gap + 1:
            runs.append((s, p))
            s = r
        p = r
    runs.append((s, p))
    return runs


def _travelled(tracks: Tracks, ball: str, first: int, last: int, since: int,
               min_rows: int = 3) -> bool:
    """The ball left its resting place during rows first..last (what a strike or a
    knock does), not merely reported MOVING or jittering in place: at least
    ``min_rows`` rows more than ~1 cm (and well above the noise) from where it rested
    before, or it went off the table."""
    tr = tracks.balls[ball]
    threshold = max(10.0, 8.0 * noise_of(tracks) + 1.0)
    before = np.arange(max(since, first - max(3, int(round(0.25 * tracks.fps)))), first)
    if len(before):
        before = before[np.isin(tr.state[before], _ON_CLOTH)]
    r0 = rest_position(tr.xy, before) if len(before) else None
    run = np.arange(first, last + 1)
    seen = run[np.all(np.isfinite(tr.xy[run]), axis=1) & np.isin(tr.state[run], _ON_CLOTH)]
    if len(seen) == 0:
        return False
    if r0 is None:
        # no rest seen before (the start of the tracks): where it was first seen, from its
        # first three readings (a first reading pulled by a neighbour the tracker had not
        # yet told apart made a whole shot out of a ball that never moved)
        r0 = np.median(tr.xy[seen[:3]], axis=0)
    if np.any(tr.state[run] == int(BallState.OFF_TABLE)):
        return True
    away = np.hypot(*(tr.xy[seen] - r0).T) > threshold
    return int(away.sum()) >= min_rows


def rest_position(xy: np.ndarray, rows: np.ndarray) -> np.ndarray | None:
    pts = xy[rows]
    pts = pts[np.all(np.isfinite(pts), axis=1)]
    if len(pts) == 0:
        return None
    return np.median(pts, axis=0)


def motion_onset(tracks: Tracks, ball: str, first_moving_row: int, rest_rows: np.ndarray,
                 fit_rows: int = 6) -> tuple[float, float]:
    """Sub-frame time a ball left its rest position, and its standard error.

    Fits the first clean moving rows (grown until the next kink, see
    :func:`vision_ref.events.fit.grow_fit`), projects the fitted path on its
    direction of travel and solves for where it is back at the rest position; the
    answer is kept within the interval the frames allow.
    """
    from vision_ref.events.fit import grow_fit

    tr = tracks.balls[ball]
    tm = mid_times(tracks)
    exp = float(tracks.exposure_s or 0.0)
    sig = noise_of(tracks)
    lo = tracks.t[first_moving_row - 1] if first_moving_row > 0 else tracks.t[0] - 1.0 / tracks.fps
    hi = tracks.t[first_moving_row] + exp
    r0 = rest_position(tr.xy, rest_rows) if len(rest_rows) else None
    uniform = (hi - lo) / math.sqrt(12.0)
    if r0 is None:
        return 0.5 * (lo + hi), uniform
    n_rest = max(1, int(np.isfinite(tr.xy[rest_rows, 0]).sum()))
    # a tracker may report the ball "moving" a frame or two early, a few mm off its
    # rest place (its rest estimate catching up, a blurred neighbour): the motion
    # starts where the ball is clearly away from its rest place, within two frames
    clear = first_moving_row
    while (clear < min(first_moving_row + 3, len(tm) - 1)
           and not (np.all(np.isfinite(tr.xy[clear])) and float(np.hypot(*(tr.xy[clear] - r0))) > 6 * sig + 1.0)):
        clear += 1
    if clear > first_moving_row:
        lo = max(lo, float(tracks.t[max(clear - 2, 0)]))
        hi = tracks.t[clear] + exp
        first_moving_row = clear
        uniform = (hi - lo) / math.sqrt(12.0)
    ts = 0.5 * (lo + hi)
    sigma = uniform
    for _ in range(2):
        # rows whose exposure began after the onset (a straddling row is blurred across it)
        start = first_moving_row
        while start < len(tm) and tracks.t[start] < ts - 1e-12:
            start += 1
        rows = [r for r in range(start, min(start + 3 * fit_rows, len(tm)))
                if tr.state[r] == int(BallState.MOVING)]
        fit = grow_fit(tm, tr.xy, rows, sig, fit_rows)
        if fit is None or len(fit.rows) < 2:
            return float(ts), float(sigma)
        u = fit.vel(fit.t_first)
        speed = float(np.hypot(*u))
        if speed < 1e-6:
            return float(ts), float(sigma)
        u = u / speed
        # s(t) = (p(t) - r0) . u: a polynomial in (t - t0)
        c = fit.coef @ u
        c[0] -= float(r0 @ u)
        roots = np.roots(c[::-1]) if len(c) > 1 else []
        real = [float(np.real(x)) + fit.t0 for x in np.atleast_1d(roots) if abs(np.imag(x)) < 1e-9]
        window = (lo - 1.0 / tracks.fps, hi + 1.0 / tracks.fps)
        real = [x for x in real if window[0] <= x <= window[1]]
        if not real:
            return float(ts), float(sigma)
        root = min(real, key=lambda x: abs(x - fit.t_first))
        slope = abs(float(fit.vel(root) @ u))
        var = fit.var(root) + sig * sig / n_rest
        sigma = min(max(math.sqrt(var) / max(slope, 1e-6), 1e-5), uniform)
        ts = min(max(root, lo), hi)
    return float(ts), float(sigma)


def segment_shots(tracks: Tracks, *, min_rest_s: float = 0.25, lead_s: float = 0.5) -> list[ShotWindow]:
    """Split tracks into shots (see the module docstring).

    ``min_rest_s``: how long everything must be still for a shot to be over (shorter
    pauses are bridged: a ball almost at rest that is then hit by a rolling pin);
    ``lead_s``: how much still table before a strike a window includes.
    """
    check_tracks(tracks)
    n = len(tracks.t)
    fps = float(tracks.fps)
    bm = ball_motion(tracks)
    pm = pin_motion(tracks)
    any_motion = bm.any(axis=1) | pm.any(axis=1)
    in_hand = np.zeros(n, dtype=bool)
    for b in BALL_IDS:
        in_hand |= tracks.balls[b].state == int(BallState.IN_HAND)
    max_gap = max(1, int(round(min_rest_s * fps)))
    windows: list[ShotWindow] = []
    prev_end = 0
    notes: list[str] = []
    fi = tracks.frame_index
    for first, last in _runs(any_motion, max_gap):
        balls_moving = bm[first:last + 1].any(axis=0)
        struck_like = [b for i, b in enumerate(BALL_IDS) if balls_moving[i]
                       and _travelled(tracks, b, first, last, prev_end)]
        if not struck_like:
            # no ball left its place: pins set by hand, or states flickering at rest.
            # Not a shot (it would shift the turn and make calls from nothing).
            what = [p for j, p in enumerate(PIN_IDS) if pm[first:last + 1, j].any()]
            what += [b for i, b in enumerate(BALL_IDS) if balls_moving[i]]
            notes.append(f"frames {int(fi[first])}-{int(fi[last])}: {', '.join(what)} reported moving "
                         "with every ball at rest (hand placement or tracker flicker): not a shot")
            continue
        # the shot starts at the first row a ball moves on the cloth from a still table
        start_moving = int(first + np.argmax(bm[first:last + 1].any(axis=1)))
        if in_hand[first:start_moving + 2].any():
            continue  # a ball being placed, not struck
        onsets: dict[str, float] = {}
        sigmas: dict[str, float] = {}
        lead = max(prev_end, start_moving - max(2, int(round(lead_s * fps))))
        hand_rows = np.nonzero(in_hand[lead:start_moving])[0]
        if len(hand_rows):
            lead = lead + int(hand_rows.max()) + 1
        for i, b in enumerate(BALL_IDS):
            rows = np.nonzero(bm[first:last + 1, i])[0]
            if len(rows) == 0:
                continue
            fm = first + int(rows[0])
            if fm > start_moving + max(2, int(0.05 * fps)):
                onsets[b] = float(tracks.t[fm])  # clearly later: no sub-frame needed
                sigmas[b] = 1.0 / fps
                continue
            rest = np.arange(lead, fm)
            rest = rest[tracks.balls[b].state[rest] == int(BallState.AT_REST)] if len(rest) else rest
            onsets[b], sigmas[b] = motion_onset(tracks, b, fm, rest)
        struck = min(onsets, key=lambda b: onsets[b])
        end = last + 1
        complete = end < n
        end = min(end, n - 1)
        windows.append(ShotWindow(
            start_row=int(lead), strike_row=int(start_moving), end_row=int(end), struck=struck,
            strike_t=float(onsets[struck]), strike_sigma=float(sigmas[struck]), complete=complete,
            onsets=onsets, notes=notes,
        ))
        notes = []
        prev_end = end
    if notes and windows:
        windows[-1].notes = windows[-1].notes + notes  # after the last shot
    for k in range(1, len(windows)):
        windows[k].hand_placements = hand_placements(tracks, windows[k - 1], windows[k])
    return windows


def hand_placements(tracks: Tracks, prev: ShotWindow, nxt: ShotWindow, tolerance_mm: float = 10.0) -> list[dict]:
    """Balls and pins whose resting place changed between two shots (moved by hand)."""
    out = []
    settle = max(2, int(round(0.1 * tracks.fps)))
    end_rows = np.arange(max(prev.end_row - settle + 1, prev.strike_row), prev.end_row + 1)
    start_rows = np.arange(nxt.start_row, max(nxt.strike_row, nxt.start_row + 1))
    for group, kind in ((tracks.balls, "ball"), (tracks.pins, "pin")):
        for oid, tr in group.items():
            a = rest_position(tr.xy, end_rows)
            b = rest_position(tr.xy, start_rows)
            sa = int(tr.state[end_rows[-1]])
            sb = int(tr.state[start_rows[0]])
            moved = (a is None) != (b is None) or (a is not None and b is not None and np.hypot(*(a - b)) > tolerance_mm)
            if moved or (kind == "pin" and sa != sb):
                out.append({
                    "piece": oid, "kind": kind,
                    "from": None if a is None else [round(float(a[0]), 1), round(float(a[1]), 1)],
                    "to": None if b is None else [round(float(b[0]), 1), round(float(b[1]), 1)],
                    "rows": [int(prev.end_row), int(nxt.start_row)],
                })
    return out
