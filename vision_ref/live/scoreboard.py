"""The terminal scoreboard: score, whose turn, the last call with its rule and reason,
where to respot, pending operator calls, warnings.

:func:`render` is a pure function of a :class:`BoardState` (tested as text).
:class:`Scoreboard` draws it: on a terminal it redraws the screen in place; to a
pipe or a log it appends one line per event instead (``DECISION ...``,
``WARNING ...``), which is also what scripts and tests read.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field

from vision_ref.rules.explain import RULE_TITLES, explain_decision


@dataclass
class BoardState:
    players: list[str]
    target: int
    score: dict
    turn: str | None
    modes: dict
    match_id: int | None = None
    shot: int = 0
    last_record: dict | None = None
    last_decision: dict | None = None
    pending_calls: list[dict] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    paused: dict = field(default_factory=dict)  # reason -> message
    moving: bool = False
    stats: dict = field(default_factory=dict)
    winner: str | None = None
    operator: str = ""


def _call_text(c: dict) -> str:
    return c["type"] + (f" {c['ball']}" if c.get("ball") else "")


def render(s: BoardState, width: int = 72) -> str:
    a, b = s.players
    bar = "=" * width
    lines = [bar, f" vision-ref  match {s.match_id if s.match_id is not None else '-'}  to {s.target}"
                  f"   operator: {s.operator or '-'}", bar]
    for p in (a, b):
        mark = ">" if p == s.turn else " "
        lines.append(f" {mark} {p:<16} {s.score.get(p, 0):>4}   ({s.modes.get(p, 'series')})")
    lines.append("-" * width)
    if s.winner:
        lines.append(" GAME OVER: " + ("a draw (G4)" if s.winner == "draw" else f"{s.winner} wins"))
    elif s.paused:
        lines.append(" PAUSED - no shot is decided until this clears:")
        for why in s.paused.values():
            lines.append(f"   ! {why}")
    else:
        state = "shot in progress" if s.moving else "waiting for the shot"
        lines.append(f" {s.turn} to play, {state}")
    if s.pending_calls:
        lines.append(" calls for this shot: " + ", ".join(_call_text(c) for c in s.pending_calls))
    d = s.last_decision
    if d:
        lines.append("-" * width)
        if d["foul"]:
            f = d["fouls"][0]
            head = f"FOUL {f['rule']} ({RULE_TITLES.get(f['rule'], '')}): {f.get('detail', '')}"
        elif d["points"]:
            head = f"{d['points']} points to {d['credited_to']}"
        else:
            head = "no points"
        lines.append(f" last: shot {d['shot']} by {d['shooter']}: {head}")
        lines.extend("  " + ln for ln in explain_decision(s.last_record, d).splitlines()[1:])
    if s.warnings:
        lines.append("-" * width)
        lines.extend(f" ! {w}" for w in s.warnings[-5:])
    if s.stats:
        st = s.stats
        lines.append("-" * width)
        lines.append(f" {st.get('fps', 0):.0f} fps  queue {st.get('queue', 0)}/{st.get('capacity', 0)}"
                     f"  dropped {st.get('dropped', 0)}  shed {st.get('shed', 0)}  frames {st.get('frames', 0)}")
    lines.append(bar)
    return "\n".join(lines)


class Scoreboard:
    """Shows the board. ``stream`` defaults to stdout; ``redraw`` to whether it is a tty."""

    def __init__(self, stream=None, redraw: bool | None = None):
        self.stream = stream or sys.stdout
        self.redraw = self.stream.isatty() if redraw is None else redraw

    def _emit(self, line: str) -> None:
        try:
            self.stream.write(line + "\n")
            self.stream.flush()
        except (BrokenPipeError, ValueError):
            pass

    def show(self, state: BoardState) -> None:
        if self.redraw:
            self._emit("\x1b[H\x1b[2J" + render(state))

    def decision(self, state: BoardState, decision: dict) -> None:
        """A decision (already committed to the log) is shown."""
        if self.redraw:
            self.show(state)
        else:
            self._emit("DECISION " + json.dumps({"shot": decision["shot"], "shooter": decision["shooter"],
                                                 "points": decision["points"], "credited_to": decision["credited_to"],
                                                 "fouls": [f["rule"] for f in decision["fouls"]],
                                                 "score": decision["score"], "next": decision["next"],
                                                 "respot": decision["respot"]}, separators=(",", ":")))

    def event(self, kind: str, message: str, state: BoardState | None = None) -> None:
        if self.redraw and state is not None:
            self.show(state)
        else:
            self._emit(f"{kind.upper()} {message}")
