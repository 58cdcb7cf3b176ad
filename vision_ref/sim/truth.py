"""Ground truth of a simulated shot: the exact shot record and per-frame truth arrays.

``shot_record(shot)`` is the record of ../shared/rules/SHOT_RECORD.md with every
event at its exact simulated time (seconds from the strike). With ``fps`` given, a
pin whose knock a camera at that frame rate could not attribute is reported the way
an honest referee must report it: when another ball was moving within one frame
interval of the knock and within about a ball diameter of the pin, the knock becomes
a ``doubt`` event listing the candidate balls (RULES F8); the exact knocker stays in
the extra field ``exact_by`` (readers ignore unknown fields).
"""

from __future__ import annotations

import math

import numpy as np

from vision_ref.messages import BallState
from vision_ref.rules.table import BALL_IDS, PIN_IDS
from vision_ref.sim import _physics_kernels as K

RECORD_FORMAT = "vision-ref.shot/1"

_BALL_CODE = {
    K.STILL: int(BallState.AT_REST),
    K.SPINNING: int(BallState.AT_REST),
    K.SLIDING: int(BallState.MOVING),
    K.ROLLING: int(BallState.MOVING),
    K.AIRBORNE: int(BallState.OFF_TABLE),
    K.GONE: int(BallState.OFF_TABLE),
}


def _ball_codes(codes: np.ndarray) -> np.ndarray:
    out = np.empty(len(codes), dtype=np.int64)
    for k, v in _BALL_CODE.items():
        out[codes == k] = v
    return out


def _mode_at(segments, t: float) -> str:
    """The pin's segment mode just before time t ("stand" before its first segment)."""
    before = [sg for sg in segments if sg.t0 < t - 1e-9]
    return before[-1].mode if before else "stand"


def other_ball_clearances(shot, ev, fps: float) -> dict[str, float]:
    """For a ball's knock ``ev`` of a pin: every other ball moving (sliding or rolling)
    within one frame interval of it, with the smallest gap (mm) between its surface and
    the pin's top circle at its place then."""
    table = shot.table
    dt = 1.0 / float(fps)
    pin = ev.data["pin"]
    pin_xy = np.asarray(shot.pins.pins[PIN_IDS.index(pin)].segments[0].p)
    window = np.linspace(ev.t - dt, ev.t + dt, 41)
    out = {}
    for i, b in enumerate(BALL_IDS):
        if b == ev.data["by"]:
            continue
        pos, _, codes = shot.tracks[i].evaluate(window)
        moving = (codes == K.SLIDING) | (codes == K.ROLLING)
        if np.any(moving):
            gap = np.hypot(pos[:, 0] - pin_xy[0], pos[:, 1] - pin_xy[1]) - table.ball_radius - table.pin_top_radius(pin)
            out[b] = float(np.min(gap[moving]))
    return out


def doubtful_hits(shot, fps: float, reach: float | None = None) -> list[dict]:
    """Ball knocks of pins that a camera at ``fps`` could not attribute to one ball.

    A knock of pin P by ball A at time t is doubtful when another ball B moving
    (sliding or rolling) at some time within one frame interval of t came within
    ``reach`` (default: a ball diameter) of P's surface. A knock of a pin already
    toppling from an earlier knock is no doubt: that earlier knock felled it. Returns
    ``[{"t", "pin", "candidates", "exact_by"}]``.
    """
    reach = shot.table.ball_diameter if reach is None else reach
    out = []
    for ev in shot.events:
        if ev.type != "pin_hit" or ev.data["by"] not in BALL_IDS:
            continue
        pin = ev.data["pin"]
        knocker = ev.data["by"]
        mode = _mode_at(shot.pins.pins[PIN_IDS.index(pin)].segments, ev.t)
        if mode == "topple":
            # already falling from an earlier knock: that knock felled it (F8 asks who
            # knocked the pin down), and no camera sees a falling pin struck again
            continue
        cands = [knocker] + [b for b, gap in other_ball_clearances(shot, ev, fps).items() if gap <= reach]
        if len(cands) > 1:
            d = {"t": ev.t, "pin": pin, "candidates": cands, "exact_by": knocker}
            if mode == "lying":
                d["lying"] = True  # knocked down earlier: a push, not a knock-down (F8)
            out.append(d)
    return out


def shot_record(shot, fps: float | None = None) -> dict:
    """The shot record (SHOT_RECORD.md) of a simulated shot; times from the strike."""
    events = []
    doubts = doubtful_hits(shot, fps) if fps else []
    doubt_keys = {(round(d["t"], 9), d["pin"]) for d in doubts}
    for ev in shot.events:
        rec = ev.to_record()
        if ev.type == "pin_hit" and (round(ev.t, 9), ev.data["pin"]) in doubt_keys:
            d = next(d for d in doubts if (round(d["t"], 9), d["pin"]) == (round(ev.t, 9), ev.data["pin"]))
            rec = {"t": round(ev.t, 6), "type": "doubt", "pin": d["pin"], "candidates": d["candidates"],
                   "exact_by": d["exact_by"]}
            if d.get("lying"):
                rec["lying"] = True
        events.append(rec)
    events.sort(key=lambda e: e["t"])
    before = shot.positions_at(-1e-9)
    after = shot.positions_at(shot.end_time + 1e-6)
    record = {
        "format": RECORD_FORMAT,
        "shooter": shot.shooter,
        "struck": shot.strike.ball,
        "before": before,
        "events": events,
        "after": after,
        "calls": [],
        # extras (ignored by readers that do not know them)
        "strike_time": round(shot.strike_time, 6),
        "duration": round(shot.duration, 6),
        "strike": {"ball": shot.strike.ball, "speed_mm_s": shot.strike.speed, "angle": shot.strike.angle,
                   "side": shot.strike.side, "height": shot.strike.height},
    }
    if fps:
        record["fps"] = float(fps)
    if shot.meta:
        record["sim"] = dict(shot.meta)
    return record


def frame_times(shot, fps: float) -> np.ndarray:
    """Clip times of the frames of a clip at ``fps`` (frame i at i / fps)."""
    n = int(math.floor(shot.duration * fps)) + 1
    return np.arange(n) / float(fps)


def truth_frames(shot, fps: float) -> dict:
    """Per-frame truth of every object at ``fps`` (JSON-ready lists).

    ``t`` clip seconds; balls: ``xy`` (mm), ``z``, ``state`` (BallState codes),
    ``visible``; pins: ``xy`` (base), ``tilt``, ``dir``, ``z``, ``state`` (PinState
    codes), ``visible``; ``cue``: ``tip``, ``angle``, ``visible``; ``moving`` per frame.
    """
    t = frame_times(shot, fps)
    ws = shot.sample(t)
    ts = t - shot.strike_time
    balls = {}
    moving = np.zeros(len(t), dtype=bool)
    for i, b in enumerate(BALL_IDS):
        _, _, codes = shot.tracks[i].evaluate(ts)
        st = _ball_codes(codes)
        moving |= st == int(BallState.MOVING)
        balls[b] = {
            "xy": np.round(ws.ball_xyz[:, i, :2], 3).tolist(),
            "z": np.round(ws.ball_xyz[:, i, 2], 3).tolist(),
            "state": st.tolist(),
            "visible": ws.ball_visible[:, i].astype(bool).tolist(),
        }
    pins = {}
    for k, p in enumerate(PIN_IDS):
        moving |= ws.pin_state[:, k] == 2
        pins[p] = {
            "xy": np.round(ws.pin_xy[:, k], 3).tolist(),
            "tilt": np.round(ws.pin_tilt[:, k], 5).tolist(),
            "dir": np.round(ws.pin_dir[:, k], 5).tolist(),
            "z": np.round(ws.pin_z[:, k], 3).tolist(),
            "state": ws.pin_state[:, k].astype(int).tolist(),
            "visible": ws.pin_visible[:, k].astype(bool).tolist(),
        }
    return {
        "fps": float(fps),
        "t": np.round(t, 9).tolist(),
        "strike_time": shot.strike_time,
        "balls": balls,
        "pins": pins,
        "cue": {
            "tip": np.round(ws.cue_tip, 3).tolist(),
            "angle": np.round(ws.cue_angle, 5).tolist(),
            "visible": ws.cue_visible.astype(bool).tolist(),
        },
        "moving": moving.tolist(),
    }
