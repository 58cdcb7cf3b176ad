"""Frame-level event inference: the baseline the sub-frame inference is measured against.

Each contact is placed at the first frame showing it -- ball-ball at the first frame
whose centres are within 2R (plus the noise allowance), a cushion at the frame where
the ball is nearest the cushion line before moving away, a pin knock at the first
frame the pin is seen moving, attributed to the nearest moving ball or pin in that
frame. No fits, no uncertainty, no doubts. Only the ``events`` list is produced.
"""

from __future__ import annotations

import numpy as np

from vision_ref.events.segment import ShotWindow, mid_times, noise_of
from vision_ref.messages import BallState, PinState, Tracks
from vision_ref.rules.table import BALL_IDS, CUSHION_IDS, DEFAULT_TABLE, PIN_IDS, TableSpec


def frame_level_events(tracks: Tracks, window: ShotWindow, table: TableSpec = DEFAULT_TABLE) -> list[dict]:
    R = table.ball_radius
    tm = mid_times(tracks)
    t_s = tracks.t[window.strike_row]  # the strike at the first moving frame
    sig = noise_of(tracks)
    rows = range(window.strike_row, window.end_row + 1)
    ok = {b: np.isin(tracks.balls[b].state, (int(BallState.AT_REST), int(BallState.MOVING)))
          & np.all(np.isfinite(tracks.balls[b].xy), axis=1) for b in BALL_IDS}
    events = [{"t": 0.0, "type": "strike", "ball": window.struck}]
    for i, a in enumerate(BALL_IDS):
        for b in BALL_IDS[i + 1:]:
            touching = False
            for r in rows:
                if not (ok[a][r] and ok[b][r]):
                    continue
                d = float(np.hypot(*(tracks.balls[a].xy[r] - tracks.balls[b].xy[r])))
                if d <= 2 * R + 3 * sig and not touching:
                    events.append({"t": tm[r] - t_s, "type": "ball_ball", "a": a, "b": b})
                    touching = True
                elif d > 2 * R + 6 * sig + 2.0:
                    touching = False
    for b in BALL_IDS:
        xy = tracks.balls[b].xy
        for c in CUSHION_IDS:
            axis, coord = table.cushion_line(c)
            k = 0 if axis == "x" else 1
            sgn = 1.0 if coord > 0 else -1.0
            bound = abs(coord) - R
            rr = [r for r in rows if ok[b][r]]
            for j in range(1, len(rr) - 1):
                q0, q1, q2 = (sgn * xy[rr[j - 1], k], sgn * xy[rr[j], k], sgn * xy[rr[j + 1], k])
                if q1 >= q0 and q1 > q2 + 2 * sig and q1 >= bound - max(abs(q1 - q0), abs(q1 - q2)) - 3 * sig:
                    events.append({"t": tm[rr[j]] - t_s, "type": "cushion", "ball": b, "cushion": c})
        st = tracks.balls[b].state
        for r in rows:
            if st[r] == int(BallState.OFF_TABLE):
                events.append({"t": tm[r] - t_s, "type": "off_table", "ball": b})
                break
    for p in PIN_IDS:
        st = tracks.pins[p].state
        for r in rows:
            if st[r] == int(PinState.MOVING) and st[r - 1] != int(PinState.MOVING):
                pin_xy = tracks.pins[p].xy[r]
                best, dist = None, np.inf
                for b in BALL_IDS:
                    if ok[b][r] and tracks.balls[b].state[r] == int(BallState.MOVING):
                        d = float(np.hypot(*(tracks.balls[b].xy[r] - pin_xy)))
                        if d < dist:
                            best, dist = b, d
                for q in PIN_IDS:
                    if q != p and tracks.pins[q].state[r] == int(PinState.MOVING):
                        d = float(np.hypot(*(tracks.pins[q].xy[r] - pin_xy)))
                        if d < dist:
                            best, dist = q, d
                if best is not None:
                    events.append({"t": tm[r] - t_s, "type": "pin_hit", "pin": p, "by": best})
                break
    events.sort(key=lambda e: e["t"])
    return events
