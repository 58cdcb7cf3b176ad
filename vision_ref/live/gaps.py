"""Frames lost during a shot: say so in the record, and never guess across the gap (F8).

The loop knows which frame indices never arrived (camera drops seen as timestamp
gaps, or a stall). For a shot whose window holds such frames:

- the record gets ``dropped_frames`` (count) and ``gaps`` (record-time intervals);
- a ``pin_hit`` whose time falls in a gap (within half a frame of it) becomes a
  ``doubt`` event — RULES F8 — with the balls that may have knocked it as
  candidates (every ball already in motion by the end of the gap);
- a pin that ends down with no event explaining it, in a shot with a gap, gets a
  doubt too: the knock happened where nobody saw it;
- a ball-ball or cushion contact in a gap stays (the inference saw its effect) but is
  marked ``"in_gap": true`` and listed in ``warnings`` for the operator to check.
"""

from __future__ import annotations

import copy

from vision_ref.rules.table import BALL_IDS

DOWN = ("down", "rail_down")


def gaps_in_window(dropped: list[int], window: dict, fps: float) -> list[tuple[float, float, int]]:
    """Record-time intervals (t0, t1, frames) of runs of dropped frames inside the window.

    A run of dropped frames i..j leaves the time from the frame before (i-1) to the
    frame after (j+1) unseen; times are seconds from the strike frame.
    """
    lo, hi = int(window.get("start_frame", 0)), int(window.get("end_frame", 1 << 62))
    strike = int(window.get("strike_frame", lo))
    inside = sorted(i for i in set(dropped) if lo <= i <= hi)
    runs: list[list[int]] = []
    for i in inside:
        if runs and i == runs[-1][-1] + 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return [((r[0] - 1 - strike) / fps, (r[-1] + 1 - strike) / fps, len(r)) for r in runs]


def _in_gap(t: float, gaps, slack: float) -> bool:
    return any(t0 - slack <= t <= t1 + slack for t0, t1, _ in gaps)


def _moving_balls_by(record: dict, t: float) -> list[str]:
    """Balls known to be moving by time t: the struck ball and every ball hit before t."""
    moving = {record.get("struck", "cue")}
    for ev in record.get("events", []):
        if ev.get("t", 0.0) > t:
            break
        if ev["type"] == "ball_ball":
            moving.update((ev["a"], ev["b"]))
    return [b for b in BALL_IDS if b in moving]


def apply_gaps(record: dict, gaps: list[tuple[float, float, int]], fps: float) -> dict:
    """A copy of ``record`` with the gaps declared and knocks in them made doubtful."""
    if not gaps:
        return record
    rec = copy.deepcopy(record)
    slack = 0.5 / fps
    rec["dropped_frames"] = int(sum(n for _, _, n in gaps))
    rec["gaps"] = [{"t0": round(t0, 6), "t1": round(t1, 6), "frames": n} for t0, t1, n in gaps]
    warnings = list(rec.get("warnings", []))
    events = []
    explained = set()
    for ev in rec.get("events", []):
        t = float(ev.get("t", 0.0))
        if ev["type"] == "pin_hit" and _in_gap(t, gaps, slack):
            gap_end = max(t1 for t0, t1, _ in gaps if t0 - slack <= t <= t1 + slack)
            cands = _moving_balls_by(rec, gap_end)
            by = ev.get("by")
            if by in BALL_IDS and by not in cands:
                cands.insert(0, by)
            events.append({"t": ev["t"], "type": "doubt", "pin": ev["pin"], "candidates": cands,
                           "reason": "frames dropped", "seen_by": by})
            warnings.append(f"pin {ev['pin']} was hit during {rec['dropped_frames']} dropped frame(s): doubtful (F8)")
            explained.add(ev["pin"])
            continue
        if ev["type"] in ("ball_ball", "cushion") and _in_gap(t, gaps, slack):
            ev = dict(ev, in_gap=True)
            what = f"{ev['a']}-{ev['b']}" if ev["type"] == "ball_ball" else f"{ev['ball']} off the {ev['cushion']} cushion"
            warnings.append(f"contact {what} at t={t:.3f} s fell in dropped frames: check it")
        if ev["type"] in ("pin_hit", "doubt"):
            explained.add(ev["pin"])
        events.append(ev)
    for pin, st in (rec.get("after", {}).get("pins") or {}).items():
        before = (rec.get("before", {}).get("pins") or {}).get(pin, {"state": "standing"})
        if st.get("state") in DOWN and before.get("state", "standing") not in DOWN and pin not in explained:
            t = gaps[0][1]
            events.append({"t": round(t, 6), "type": "doubt", "pin": pin, "candidates": _moving_balls_by(rec, t),
                           "reason": "fell unseen while frames were dropped"})
            warnings.append(f"pin {pin} fell with no knock seen and frames dropped: doubtful (F8)")
    events.sort(key=lambda e: e["t"])
    rec["events"] = events
    rec["warnings"] = warnings
    return rec
