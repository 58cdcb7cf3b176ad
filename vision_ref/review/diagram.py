"""Top-down diagram of one shot: the table, every ball's path, numbered contacts.

Drawn with OpenCV in table millimetres (RULES.md E3: x along the table towards the
foot cushion, y towards the left cushion) so the picture does not depend on the
camera. The head cushion is on the left of the image and the left cushion at the
top, i.e. the table seen from above with the head end on the left.

Inputs are a shot record (SHOT_RECORD.md) and the positions over the shot as
:class:`ShotPaths`, built from the tracker's :class:`~vision_ref.messages.Tracks`
(:meth:`ShotPaths.from_tracks`) or from a simulated shot (:meth:`ShotPaths.from_simulation`,
the ground truth used while developing and in the benchmark). Without paths only the
start and end positions from the record are drawn.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import cv2
import numpy as np

from vision_ref.rules.table import BALL_IDS, CUSHION_IDS, DEFAULT_TABLE, PIN_IDS, TableSpec

# BGR. The cue ball is the coloured one (the renderer's default is red); the two
# whites get different path colours so crossing paths stay readable.
BALL_COLOURS = {"cue": (40, 40, 215), "white1": (250, 250, 250), "white2": (90, 225, 255)}
BALL_FILL = {"cue": (40, 40, 215), "white1": (245, 245, 245), "white2": (215, 240, 250)}
BALL_LABELS = {"cue": "cue", "white1": "white 1", "white2": "white 2"}
CLOTH = (120, 78, 22)
CUSHION = (92, 58, 14)
RAIL = (40, 70, 110)
MARK = (200, 170, 120)
INK = (30, 30, 30)
PAPER = (250, 250, 250)
CONTACT = (0, 200, 255)
DOUBT = (0, 120, 255)
FOUL = (40, 40, 200)


@dataclass
class ShotPaths:
    """Positions of every object over one shot, in table mm.

    ``t``: (N,) seconds from the strike; ``balls`` / ``pins``: id -> (N, 2) arrays,
    NaN where the object was not seen or is off the table.
    """

    t: np.ndarray
    balls: dict[str, np.ndarray]
    pins: dict[str, np.ndarray] = field(default_factory=dict)

    @classmethod
    def from_tracks(cls, tracks, start_row: int, end_row: int, strike_t: float) -> "ShotPaths":
        """Rows ``start_row..end_row`` (inclusive) of the tracker's output; ``strike_t``
        is the strike in the tracks' clock (seconds)."""
        n = len(tracks.t)
        a, b = max(0, int(start_row)), min(n - 1, int(end_row))
        rows = slice(a, b + 1)
        t = np.asarray(tracks.t[rows], dtype=np.float64) - float(strike_t)
        balls = {}
        for bid in BALL_IDS:
            tr = tracks.balls[bid]
            xy = np.array(tr.xy[rows], dtype=np.float64)
            # Off the table / lifted by hand: not part of the path on the cloth.
            gone = np.isin(tr.state[rows], (3, 4))
            xy[gone] = np.nan
            balls[bid] = xy
        pins = {pid: np.array(tracks.pins[pid].xy[rows], dtype=np.float64) for pid in PIN_IDS}
        return cls(t, balls, pins)

    @classmethod
    def from_simulation(cls, shot, fps: float = 120.0) -> "ShotPaths":
        """The exact paths of a simulated shot (``SimulatedShot`` / any ShotSimulation),
        sampled at ``fps`` from the strike to the end of the shot."""
        t_clip = np.arange(shot.strike_time, shot.duration + 1e-9, 1.0 / float(fps))
        ws = shot.sample(t_clip)
        balls = {}
        for k, bid in enumerate(BALL_IDS):
            xy = ws.ball_xyz[:, k, :2].copy()
            off = ~ws.ball_visible[:, k] | (np.abs(ws.ball_xyz[:, k, 2] - shot.table.ball_radius) > 1.0)
            xy[off] = np.nan
            balls[bid] = xy
        pins = {}
        for k, pid in enumerate(PIN_IDS):
            xy = ws.pin_xy[:, k].copy()
            xy[~ws.pin_visible[:, k]] = np.nan
            pins[pid] = xy
        return cls(t_clip - shot.strike_time, balls, pins)

    def position(self, obj: str, t: float, *, last_seen: bool = False) -> tuple[float, float] | None:
        """Where ``obj`` (a ball or pin id) was at shot time ``t`` (linear between samples).
        With ``last_seen`` the latest finite position at or before ``t`` is used instead
        (a ball that left the table)."""
        xy = self.balls.get(obj)
        if xy is None:
            xy = self.pins.get(obj)
        if xy is None or len(self.t) == 0:
            return None
        ok = np.isfinite(xy[:, 0]) & np.isfinite(xy[:, 1])
        if not ok.any():
            return None
        tt, pts = self.t[ok], xy[ok]
        if last_seen:
            k = int(np.searchsorted(tt, t, side="right")) - 1
            k = max(k, 0)
            return float(pts[k, 0]), float(pts[k, 1])
        if t <= tt[0]:
            return float(pts[0, 0]), float(pts[0, 1])
        if t >= tt[-1]:
            return float(pts[-1, 0]), float(pts[-1, 1])
        return float(np.interp(t, tt, pts[:, 0])), float(np.interp(t, tt, pts[:, 1]))


@dataclass
class ContactMark:
    """One numbered contact in the diagram (and in the annotated video)."""

    number: int
    t: float
    kind: str
    text: str
    xy: tuple[float, float] | None
    doubt: bool = False


def _record_position(record: dict, which: str, obj: str) -> tuple[float, float] | None:
    side = record.get(which) or {}
    if obj in BALL_IDS:
        p = (side.get("balls") or {}).get(obj)
    else:
        p = ((side.get("pins") or {}).get(obj) or {}).get("at")
    return (float(p[0]), float(p[1])) if p is not None else None


def event_text(ev: dict) -> str:
    kind = ev.get("type")
    if kind == "ball_ball":
        return f"{ev['a']} - {ev['b']}"
    if kind == "cushion":
        return f"{ev['ball']} - {ev['cushion']} cushion"
    if kind == "pin_hit":
        return f"{ev['by']} - pin {ev['pin']}"
    if kind == "off_table":
        return f"{ev['ball']} off the table"
    if kind == "doubt":
        return f"pin {ev['pin']} fell: {' or '.join(ev.get('candidates', [])) or 'unknown'}? (doubt)"
    if kind == "strike":
        return f"strike {ev['ball']}"
    return str(kind)


def contact_marks(record: dict, paths: ShotPaths | None, table: TableSpec = DEFAULT_TABLE) -> list[ContactMark]:
    """Every event after the strike as a numbered mark with the table position it happened at."""
    R = table.ball_radius
    marks: list[ContactMark] = []

    def pos(obj: str, t: float, **kw):
        p = paths.position(obj, t, **kw) if paths is not None else None
        return p if p is not None else _record_position(record, "before", obj)

    for ev in record.get("events", []):
        kind = ev.get("type")
        if kind == "strike":
            continue
        t = float(ev.get("t", 0.0))
        xy = None
        if kind == "ball_ball":
            pa, pb = pos(ev["a"], t), pos(ev["b"], t)
            if pa and pb:
                xy = ((pa[0] + pb[0]) / 2, (pa[1] + pb[1]) / 2)
            else:
                xy = pa or pb
        elif kind == "cushion":
            p = pos(ev["ball"], t)
            if p is not None:
                axis, c = table.cushion_line(ev["cushion"])
                # the contact point is on the cushion nose, a radius beyond the centre
                xy = (c, p[1]) if axis == "x" else (p[0], c)
        elif kind in ("pin_hit", "doubt"):
            xy = _record_position(record, "before", ev["pin"]) or table.pin_spot(ev["pin"])
            if paths is not None and ev["pin"] in paths.pins:
                xy = paths.position(ev["pin"], t) or xy
            by = ev.get("by")
            if kind == "pin_hit" and by in BALL_IDS:
                pb = pos(by, t)
                if pb is not None:
                    d = math.hypot(pb[0] - xy[0], pb[1] - xy[1])
                    if d > 1e-6:  # the touching point: the ball's surface towards the pin
                        k = min(R, d) / d
                        xy = (pb[0] + (xy[0] - pb[0]) * k, pb[1] + (xy[1] - pb[1]) * k)
        elif kind == "off_table":
            xy = pos(ev["ball"], t, last_seen=True)
        marks.append(ContactMark(len(marks) + 1, t, kind, event_text(ev), xy, doubt=kind == "doubt"))
    return marks


class _Canvas:
    """Table mm -> image pixels (head cushion on the left, left cushion at the top)."""

    def __init__(self, table: TableSpec, px_per_mm: float, legend_rows: int, header_px: int):
        self.table = table
        self.s = float(px_per_mm)
        self.margin_mm = table.cushion_width + table.rail_width + 20.0
        self.header = int(header_px)
        self.w = int(round((table.length + 2 * self.margin_mm) * self.s))
        self.table_h = int(round((table.width + 2 * self.margin_mm) * self.s))
        self.row_h = 22
        self.legend_h = 14 + self.row_h * max(1, legend_rows)
        self.h = self.header + self.table_h + self.legend_h
        # one row broadcast down: np.full with a per-channel colour takes ~7 ms here
        row = np.empty((self.w, 3), np.uint8)
        row[:] = PAPER
        self.img = np.tile(row, (self.h, 1, 1))

    def px(self, x: float, y: float) -> tuple[int, int]:
        u = (x + self.table.half_length + self.margin_mm) * self.s
        v = self.header + (self.table.half_width + self.margin_mm - y) * self.s
        return int(round(u * 16)), int(round(v * 16))  # 4 fractional bits for cv2 shift=4

    def pxs(self, xy: np.ndarray) -> np.ndarray:
        """``px`` of many points (n, 2) at once, as cv2's (n, 1, 2) int32 polyline."""
        u = (xy[:, 0] + self.table.half_length + self.margin_mm) * self.s
        v = self.header + (self.table.half_width + self.margin_mm - xy[:, 1]) * self.s
        return np.rint(np.stack((u, v), axis=1) * 16).astype(np.int32).reshape(-1, 1, 2)

    def r(self, mm: float) -> int:
        return max(16, int(round(mm * self.s * 16)))


def _box(c: _Canvas, half_x: float, half_y: float, colour) -> None:
    p0, p1 = c.px(-half_x, half_y), c.px(half_x, -half_y)
    cv2.rectangle(c.img, p0, p1, colour, -1, cv2.LINE_AA, 4)


def _draw_table(c: _Canvas) -> None:
    t = c.table
    _box(c, t.half_length + t.cushion_width + t.rail_width, t.half_width + t.cushion_width + t.rail_width, RAIL)
    _box(c, t.half_length + t.cushion_width, t.half_width + t.cushion_width, CUSHION)
    _box(c, t.half_length, t.half_width, CLOTH)
    for x, y in t.diamonds():
        cv2.circle(c.img, c.px(x, y), c.r(9), (220, 235, 240), -1, cv2.LINE_AA, 4)
    for n in (1, 2, 3):
        cv2.circle(c.img, c.px(*t.ball_spot(n)), c.r(6), MARK, -1, cv2.LINE_AA, 4)
    for p in PIN_IDS:
        cv2.circle(c.img, c.px(*t.pin_spot(p)), c.r(5), MARK, -1, cv2.LINE_AA, 4)
    # cushion names, so a reader can match "off the left cushion" with the picture
    font = cv2.FONT_HERSHEY_SIMPLEX
    for name in CUSHION_IDS:
        axis, v = t.cushion_line(name)
        off = t.cushion_width + t.rail_width * 0.5
        # between two diamonds, so the name does not sit on one
        x, y = ((v + math.copysign(off, v), t.width / 8.0) if axis == "x"
                else (t.length / 16.0, v + math.copysign(off, v)))
        (tw, th), _ = cv2.getTextSize(name, font, 0.45, 1)
        u, w = c.px(x, y)
        cv2.putText(c.img, name, (u // 16 - tw // 2, w // 16 + th // 2), font, 0.45, (235, 235, 235), 1, cv2.LINE_AA)


def _draw_path(c: _Canvas, xy: np.ndarray, colour, thickness: int = 2) -> None:
    ok = np.isfinite(xy).all(axis=1)
    # split into runs of consecutive finite samples: a gap (unseen) is not joined up
    start = None
    for i in range(len(xy) + 1):
        good = i < len(xy) and ok[i]
        if good and start is None:
            start = i
        elif not good and start is not None:
            run = xy[start:i]
            if len(run) >= 2:
                pts = c.pxs(run)
                cv2.polylines(c.img, [pts], False, (30, 30, 30), thickness + 2, cv2.LINE_AA, 4)
                cv2.polylines(c.img, [pts], False, colour, thickness, cv2.LINE_AA, 4)
            start = None


def _draw_ball(c: _Canvas, xy, ball: str, filled: bool) -> None:
    R = c.table.ball_radius
    centre = c.px(*xy)
    if filled:
        cv2.circle(c.img, centre, c.r(R), BALL_FILL[ball], -1, cv2.LINE_AA, 4)
        cv2.circle(c.img, centre, c.r(R), INK, 1, cv2.LINE_AA, 4)
    else:
        cv2.circle(c.img, centre, c.r(R), BALL_COLOURS[ball], 2, cv2.LINE_AA, 4)
    label = {"cue": "c", "white1": "1", "white2": "2"}[ball]
    font = cv2.FONT_HERSHEY_SIMPLEX
    (tw, th), _ = cv2.getTextSize(label, font, 0.35, 1)
    u, v = centre[0] // 16, centre[1] // 16
    ink = (255, 255, 255) if (filled and ball == "cue") else INK if filled else BALL_COLOURS[ball]
    cv2.putText(c.img, label, (u - tw // 2, v + th // 2), font, 0.35, ink, 1, cv2.LINE_AA)


def _pin_is_down(state: str | None) -> bool:
    return state in ("down", "rail_down")


def _draw_pins(c: _Canvas, record: dict, decision: dict | None) -> None:
    t = c.table
    before = (record.get("before") or {}).get("pins") or {}
    after = (record.get("after") or {}).get("pins") or {}
    knocked = set((decision or {}).get("pins_down", []))
    for p in PIN_IDS:
        b = before.get(p) or {"at": t.pin_spot(p), "state": "standing"}
        a = after.get(p) or b
        r = max(t.pin_top_radius(p), 4.0 / c.s)  # at least 4 px: a pin must stay visible
        if _pin_is_down(a.get("state")) or p in knocked:
            # a ring where it stood, a cross where it lies
            cv2.circle(c.img, c.px(*b["at"]), c.r(r), (200, 200, 200), 1, cv2.LINE_AA, 4)
            x, y = a["at"]
            d = r * 1.1
            for dx, dy in ((d, d), (d, -d)):
                cv2.line(c.img, c.px(x - dx, y - dy), c.px(x + dx, y + dy), FOUL if p in knocked else (60, 60, 60),
                         2, cv2.LINE_AA, 4)
        else:
            x, y = a["at"]
            fill = (60, 60, 230) if p == "king" else (250, 250, 250)
            cv2.circle(c.img, c.px(x, y), c.r(r), fill, -1, cv2.LINE_AA, 4)
            cv2.circle(c.img, c.px(x, y), c.r(r), INK, 1, cv2.LINE_AA, 4)


MARK_R_MM = 30.0


def spread_marks(marks: list[ContactMark], min_sep_mm: float = 2.2 * MARK_R_MM) -> list[tuple[float, float] | None]:
    """Where to draw each mark so that none covers another: a mark closer than
    ``min_sep_mm`` to one already placed moves out around its true point (on rings of
    growing radius) and gets a leader line; contacts that are far apart stay put."""
    placed: list[tuple[float, float]] = []
    out: list[tuple[float, float] | None] = []
    for m in marks:
        if m.xy is None:
            out.append(None)
            continue
        x0, y0 = m.xy
        spot = (x0, y0)
        ring = 0
        while any(math.dist(spot, q) < min_sep_mm for q in placed) and ring < 6:
            ring += 1
            r = ring * min_sep_mm
            n = 6 * ring
            for k in range(n):
                a = math.pi / 2 + 2 * math.pi * k / n
                cand = (x0 + r * math.cos(a), y0 + r * math.sin(a))
                if not any(math.dist(cand, q) < min_sep_mm for q in placed):
                    spot = cand
                    break
            else:
                continue
            break
        placed.append(spot)
        out.append(spot)
    return out


def _draw_mark(c: _Canvas, m: ContactMark, at: tuple[float, float] | None = None) -> None:
    if m.xy is None:
        return
    font = cv2.FONT_HERSHEY_SIMPLEX
    text = str(m.number)
    colour = DOUBT if m.doubt else CONTACT
    at = at or m.xy
    if math.dist(at, m.xy) > 1.0:
        # leader from the label to the true contact point, which gets a small dot
        cv2.line(c.img, c.px(*m.xy), c.px(*at), INK, 1, cv2.LINE_AA, 4)
        cv2.circle(c.img, c.px(*m.xy), c.r(8), colour, -1, cv2.LINE_AA, 4)
    centre = c.px(*at)
    cv2.circle(c.img, centre, c.r(MARK_R_MM), colour, -1, cv2.LINE_AA, 4)
    cv2.circle(c.img, centre, c.r(MARK_R_MM), INK, 1, cv2.LINE_AA, 4)
    scale = 0.4 if m.number < 10 else 0.34
    (tw, th), _ = cv2.getTextSize(text, font, scale, 1)
    u, v = centre[0] // 16, centre[1] // 16
    cv2.putText(c.img, text, (u - tw // 2, v + th // 2), font, scale, INK, 1, cv2.LINE_AA)


def _ascii(s: str) -> str:
    # Hershey fonts are ASCII only
    return s.encode("ascii", "replace").decode("ascii")


def call_title(decision: dict | None) -> str:
    """``Shot 3, A: 4 points to A`` / ``... foul F5: 2 points to B`` for headings."""
    if not decision:
        return "Shot"
    head = f"Shot {decision['shot']}, {decision['shooter']}"
    if decision.get("foul"):
        head += ": foul " + ", ".join(dict.fromkeys(f["rule"] for f in decision.get("fouls", [])))
    pts = decision.get("points", 0)
    call = f"{pts} point{'s' if pts != 1 else ''} to {decision['credited_to']}" if pts else "no points"
    return f"{head} - {call}" if decision.get("foul") else f"{head}: {call}"


def draw_shot_diagram(
    record: dict,
    paths: ShotPaths | None = None,
    decision: dict | None = None,
    table: TableSpec = DEFAULT_TABLE,
    px_per_mm: float = 0.32,
) -> np.ndarray:
    """The diagram of one shot as a BGR image (table, paths, numbered contacts, legend)."""
    marks = contact_marks(record, paths, table)
    legend = [m for m in marks]
    header = 30
    c = _Canvas(table, px_per_mm, legend_rows=(len(legend) + 1) // 2 + 1, header_px=header)
    font = cv2.FONT_HERSHEY_SIMPLEX
    cv2.putText(c.img, _ascii(call_title(decision)), (10, 21), font, 0.6, INK, 1, cv2.LINE_AA)
    _draw_table(c)
    _draw_pins(c, record, decision)
    if paths is not None:
        for b in BALL_IDS:
            if b in paths.balls:
                _draw_path(c, paths.balls[b], BALL_COLOURS[b])
    for b in BALL_IDS:
        p0 = _record_position(record, "before", b)
        if p0 is not None:
            _draw_ball(c, p0, b, filled=False)
    for b in BALL_IDS:
        p1 = _record_position(record, "after", b)
        if p1 is not None:
            _draw_ball(c, p1, b, filled=True)
    struck = record.get("struck")
    if struck in BALL_IDS and paths is not None:
        # the direction of the strike: an arrow along the first 120 mm of travel
        p0 = _record_position(record, "before", struck) or paths.position(struck, 0.0)
        ahead = None
        xy = paths.balls.get(struck)
        if p0 is not None and xy is not None:
            d = np.hypot(xy[:, 0] - p0[0], xy[:, 1] - p0[1])
            far = np.nonzero(np.isfinite(d) & (d > 120.0))[0]
            if len(far):
                ahead = (float(xy[far[0], 0]), float(xy[far[0], 1]))
        if p0 is not None and ahead is not None:
            cv2.arrowedLine(c.img, c.px(*p0), c.px(*ahead), INK, 2, cv2.LINE_AA, 4, 0.35)
    for m, at in zip(marks, spread_marks(marks)):
        _draw_mark(c, m, at)
    # legend: ball key, then the contacts in two columns
    y0 = header + c.table_h + 18
    x = 10
    for b in BALL_IDS:
        cv2.line(c.img, (x, y0 - 5), (x + 26, y0 - 5), (30, 30, 30), 5, cv2.LINE_AA)
        cv2.line(c.img, (x, y0 - 5), (x + 26, y0 - 5), BALL_COLOURS[b], 3, cv2.LINE_AA)
        cv2.putText(c.img, BALL_LABELS[b], (x + 32, y0), font, 0.45, INK, 1, cv2.LINE_AA)
        x += 120
    cv2.putText(c.img, "open ring: start   filled: where it stopped   x: pin down", (x + 10, y0), font, 0.45, INK, 1,
                cv2.LINE_AA)
    col_w = c.w // 2
    for i, m in enumerate(legend):
        row, col = divmod(i, 2)
        u = 10 + col * col_w
        v = y0 + c.row_h * (row + 1)
        cv2.circle(c.img, (u + 8, v - 5), 9, DOUBT if m.doubt else CONTACT, -1, cv2.LINE_AA)
        cv2.putText(c.img, str(m.number), (u + (4 if m.number < 10 else 1), v - 1), font, 0.35, INK, 1, cv2.LINE_AA)
        cv2.putText(c.img, _ascii(f"{m.t:6.3f} s  {m.text}"), (u + 24, v), font, 0.45, INK, 1, cv2.LINE_AA)
    if not legend:
        cv2.putText(c.img, "no contact after the strike", (10, y0 + c.row_h), font, 0.45, INK, 1, cv2.LINE_AA)
    return c.img


def write_png(path, image: np.ndarray) -> None:
    """Write a PNG atomically (temp file, then rename)."""
    from pathlib import Path

    path = Path(path)
    ok, buf = cv2.imencode(".png", image)
    if not ok:
        raise ValueError(f"could not encode {path.name} as PNG")
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(buf.tobytes())
    tmp.replace(path)
