"""The live referee: capture thread -> bounded buffer -> stages -> adjudicator -> log -> board.

Threads: the *capture* thread reads the source, offers each frame to the recorder
(never waiting) and puts it in the :class:`FrameBuffer` (backpressure while
anything moves); an optional *keyboard* thread turns typed lines into commands.
Everything that touches the match — stages, adjudication, the log, operator
commands — runs on the one *referee* thread (:meth:`LiveReferee.run`), so there
are no races on the match state.

Order for every shot: the record (with its gaps made doubtful, the pending operator
calls added) is decided by :class:`Match`, the decision is committed to the
:class:`MatchLog`, and only then shown. If the commit fails the decision is taken
back and the match pauses: nothing is shown that is not on disk.

Never a wrong call: while the camera is lost, frames stall, the calibration no
longer fits the picture, or the operator paused, shots are not decided — the board
says why, the log gets an incident, the recording keeps the footage for review.
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from vision_ref.errors import ContractError, SourceError
from vision_ref.live.buffer import FrameBuffer
from vision_ref.live.gaps import apply_gaps, gaps_in_window
from vision_ref.live.log import MatchLog, MatchLogError
from vision_ref.live.operator import HELP, Command, CommandError, parse_command
from vision_ref.live.scoreboard import BoardState, Scoreboard
from vision_ref.live.stages import ShotStages
from vision_ref.messages import Frame
from vision_ref.sources.base import FrameSource


@dataclass
class LiveConfig:
    buffer_s: float = 1.0  # frames the buffer holds, in seconds of the source's rate
    watchdog_s: float = 2.0  # no frame for this long: the camera is lost (pause)
    reconnect_s: float = 1.0  # between attempts to reopen a lost camera
    reconnect_attempts: int | None = None  # None: keep trying (a camera unplugged and plugged back)
    health_every_s: float = 2.0  # calibration health check while the table is still
    health_failures: int = 2  # consecutive bad checks before pausing (one bad frame is a passer-by)
    health_recoveries: int = 2  # consecutive good checks before resuming
    operator: str = "operator"
    stop_when_game_over: bool = True
    board_every_s: float = 0.5  # redraw period of a terminal board
    max_gap_s: float = 0.1  # a shot with a longer run of lost frames is not decided at all


@dataclass
class LiveResult:
    match_id: int
    decisions: list[dict] = field(default_factory=list)
    frames: int = 0
    dropped: list[int] = field(default_factory=list)
    shed: list[int] = field(default_factory=list)
    incidents: list[tuple[str, str]] = field(default_factory=list)
    ended: str = ""
    high_water: int = 0
    blocked_s: float = 0.0
    stage_s: float = 0.0  # time spent in the stages (tracking, inference)
    wall_s: float = 0.0


class LiveReferee:
    """Runs one match live. ``source``: a FrameSource (opened here if it is not yet);
    ``reopen``: makes a fresh one after a camera loss. ``stages``: the per-frame
    pipeline. ``health``: ``frame -> (ok, reason)`` calibration check, or None."""

    def __init__(self, source: FrameSource, stages: ShotStages, log: MatchLog,
                 match_id: int, match, *, scoreboard: Scoreboard | None = None, recorder=None,
                 health: Callable[[Frame], tuple[bool, str]] | None = None, config: LiveConfig | None = None,
                 reopen: Callable[[], FrameSource] | None = None):
        self._factory = reopen  # a fresh source after a camera loss (else the same one is reopened)
        self.source: FrameSource = source
        self.stages = stages
        self.log = log
        self.match_id = match_id
        self.match = match
        self.board = scoreboard or Scoreboard()
        self.recorder = recorder
        self.health = health
        self.config = config or LiveConfig()
        self.commands: queue.Queue = queue.Queue()
        self.operator = self.config.operator
        self.paused: dict[str, str] = {}
        self.warnings: list[str] = []
        self.result = LiveResult(match_id)
        self._pending: list[tuple[int, dict, str]] = log.pending_calls(match_id)
        self._last_record: dict | None = None
        self._last_decision: dict | None = None
        shots = log.active_shots(match_id)
        if shots:
            self._last_record, self._last_decision = shots[-1]["record"], shots[-1]["decision"]
        self._stop = threading.Event()
        self._last_index: int | None = None
        self._last_frame_at = time.monotonic()
        self._health_due = 0.0
        self._health_bad = 0
        self._health_good = 0
        self._in_motion = False
        self._frames_in_shot_dropped = 0
        self._board_at = 0.0
        self._fps_window: list[float] = []
        self.buffer: FrameBuffer | None = None
        self._capture: threading.Thread | None = None
        self._health_verified = health is None
        if health is not None:
            # nothing is decided before the calibration has been seen to fit the picture once
            self.paused["calibration"] = "checking the calibration against the picture"

    # ---- public ----------------------------------------------------------------------------
    def command(self, line: str) -> None:
        """Queue a typed line (thread-safe: the keyboard thread and tests call this)."""
        self.commands.put(line)

    def stop(self) -> None:
        self._stop.set()

    def read_keyboard(self, stream) -> threading.Thread:
        """Feed lines from ``stream`` (stdin, an open file, or the path of a FIFO) as
        commands, on a daemon thread. A FIFO is reopened after each writer closes it
        (``echo touch > FIFO`` from another terminal); end of a plain input is not a
        quit — a detached terminal must not stop the match."""
        import os
        import stat

        def pump():
            if isinstance(stream, (str, os.PathLike)):
                fifo = stat.S_ISFIFO(os.stat(stream).st_mode)
                while not self._stop.is_set():
                    with open(stream, "r", encoding="utf-8") as fh:  # a FIFO blocks here until a writer comes
                        for line in fh:
                            self.command(line)
                    if not fifo:
                        return
            else:
                for line in stream:
                    self.command(line)

        t = threading.Thread(target=pump, name="keyboard", daemon=True)
        t.start()
        return t

    def run(self) -> LiveResult:
        t_start = time.monotonic()
        self._start_capture(first=True)
        self._show(force=True)
        try:
            while not self._stop.is_set():
                self._drain_commands()
                if self._stop.is_set():
                    break
                item = self.buffer.get(timeout=0.05)
                if item is None:
                    self._watchdog()
                    continue
                kind, payload = item
                if kind == "frame":
                    self._on_frame(payload)
                elif kind == "lost":
                    if not self._camera_lost(payload):
                        break
                elif kind == "end":
                    self._drain_commands()
                    self._flush_stages()
                    self.result.ended = "source ended"
                    break
                if self.match.game_over and self.config.stop_when_game_over:
                    self.result.ended = "game over"
                    break
        finally:
            self._shutdown()
        self.result.wall_s = time.monotonic() - t_start
        return self.result

    # ---- capture -----------------------------------------------------------------------
    def _start_capture(self, first: bool) -> None:
        src = self.source
        if not src._opened:
            src.open()
        cap = max(2, int(round(self.config.buffer_s * src.fps)))
        self.buffer = FrameBuffer(cap, "shed_still" if src.realtime else "block")
        buf = self.buffer

        def capture():
            try:
                for frame in src.frames():
                    if self._stop.is_set() or buf.closed:
                        return
                    if self.recorder is not None:
                        self.recorder.offer(frame, block=not src.realtime)
                    if not buf.put(frame):
                        return
                buf.put_control("end")
            except SourceError as exc:
                buf.put_control("lost", str(exc))
            except Exception as exc:  # a driver bug must pause the match, not kill it silently
                buf.put_control("lost", f"{type(exc).__name__}: {exc}")

        self._capture = threading.Thread(target=capture, name="capture", daemon=True)
        self._capture.start()
        self._last_frame_at = time.monotonic()

    def _watchdog(self) -> None:
        silent = time.monotonic() - self._last_frame_at
        if silent > self.config.watchdog_s and "camera" not in self.paused:
            self._pause("camera", f"no frame from {self.source.name} for {silent:.1f} s")
            self._abandon_shot("the camera stalled")
        self._show()

    def _camera_lost(self, message: str) -> bool:
        """Pause, abandon any shot in progress, try to reopen; False when giving up."""
        self._pause("camera", f"camera lost: {message}")
        self._abandon_shot("the camera was lost")
        if self._factory is None and not self.source.realtime:
            self.result.ended = f"source failed: {message}"
            return False
        attempts = 0
        while not self._stop.is_set():
            if self.config.reconnect_attempts is not None and attempts >= self.config.reconnect_attempts:
                self.result.ended = f"camera lost: {message}"
                return False
            attempts += 1
            self._drain_commands()
            time.sleep(self.config.reconnect_s)
            try:
                self.source.close()
                if self._factory is not None:
                    self.source = self._factory()
                self.source.open()
            except SourceError as exc:
                self.warnings.append(f"reconnect {attempts} failed: {exc}")
                self._show()
                continue
            self.stages.reset()
            self._last_index = None
            self._start_capture(first=False)
            self._incident("camera", f"camera back after {attempts} attempt(s)")
            self._unpause("camera")
            return True
        return False

    # ---- frames ------------------------------------------------------------------------
    def _on_frame(self, frame: Frame) -> None:
        now = time.monotonic()
        self._last_frame_at = now
        if "camera" in self.paused:
            self._unpause("camera")
        self.result.frames += 1
        shed = set(self.buffer.take_shed())
        self.result.shed.extend(sorted(shed))
        if self._last_index is not None and frame.index > self._last_index + 1:
            for i in range(self._last_index + 1, frame.index):
                self.stages.mark_dropped(i)
                if i not in shed:
                    self.result.dropped.append(i)
                    if self._in_motion:
                        self._frames_in_shot_dropped += 1
        self._last_index = frame.index
        t0 = time.perf_counter()
        self.stages.update(frame)
        moving = bool(self.stages.table_moving)
        self.result.stage_s += time.perf_counter() - t0
        self.buffer.consumer_moving = moving
        if moving and not self._in_motion:
            self._in_motion = True
            self._frames_in_shot_dropped = 0
        elif not moving:
            self._in_motion = False
        if not moving and self.health is not None and now >= self._health_due:
            self._health_due = now + self.config.health_every_s
            self._check_health(frame)
        while True:
            t0 = time.perf_counter()
            shot = self.stages.next_shot(self.match.turn)
            self.result.stage_s += time.perf_counter() - t0
            if shot is None:
                break
            self._decide(shot)
            if self.match.game_over:
                break
        self._fps_window.append(now)
        if len(self._fps_window) > 120:
            del self._fps_window[:60]
        self._show()

    def _flush_stages(self) -> None:
        flush = getattr(self.stages, "flush", None)
        if flush is None:
            return
        flush()
        while not self.match.game_over:
            shot = self.stages.next_shot(self.match.turn)
            if shot is None:
                break
            self._decide(shot)

    def _check_health(self, frame: Frame) -> None:
        try:
            ok, reason = self.health(frame)
        except Exception as exc:  # a failing check is a failed check, not a crash
            ok, reason = False, f"health check failed: {type(exc).__name__}: {exc}"
        if ok:
            self._health_bad = 0
            self._health_good += 1
            if "calibration" in self.paused and not self._health_verified:
                self._unpause("calibration", "calibration checked: it fits the picture")
            elif "calibration" in self.paused and self._health_good >= self.config.health_recoveries:
                self._unpause("calibration")
            self._health_verified = True
        else:
            self._health_good = 0
            self._health_bad += 1
            failing = self._health_bad >= self.config.health_failures or not self._health_verified
            if failing and not self.paused.get("calibration", "").startswith("calibration no longer fits"):
                self.paused.pop("calibration", None)
                self._pause("calibration", f"calibration no longer fits the picture ({reason}): "
                                           "check the camera and the lights, or recalibrate")

    def _abandon_shot(self, why: str) -> None:
        if self._in_motion:
            self._incident("shot_lost", f"a shot was in progress when {why}: it is not decided; "
                                        "decide it by hand from the recording")
        self._in_motion = False

    # ---- deciding ------------------------------------------------------------------------
    def _decide(self, shot) -> None:
        record = dict(shot.record)
        window = dict(shot.window)
        if window.get("error"):
            self._incident("not_decided", f"the shot could not be read from the tracks: {window['error']}; "
                                          "decide it by hand from the recording", {"window": window})
            return
        if self.paused:
            why = "; ".join(self.paused.values())
            self._incident("not_decided", f"shot ended while paused ({why}): not decided", {"window": window})
            return
        fps = self.source.fps
        gaps = gaps_in_window(self.result.dropped, window, fps)
        longest = max((t1 - t0 for t0, t1, _ in gaps), default=0.0)
        if longest > self.config.max_gap_s:
            self._incident("not_decided", f"{sum(n for _, _, n in gaps)} frame(s) lost during the shot "
                                          f"({longest:.2f} s unseen, more than {self.config.max_gap_s:g} s): not decided; "
                                          "decide it by hand from the recording", {"window": window, "gaps": gaps})
            return
        record = apply_gaps(record, gaps, fps)
        calls = list(record.get("calls", []))
        used = []
        for cid, call, who in self._pending:
            calls.append(dict(call, by=who))
            used.append(cid)
        record["calls"] = calls
        record["shooter"] = self.match.turn
        try:
            decision = self.match.play(record)
        except ContractError as exc:
            self._incident("rejected", f"shot record rejected, not decided: {exc}", {"window": window})
            return
        frames = dict(window, dropped=sum(n for _, _, n in gaps), gaps=[list(g) for g in gaps])
        if self.recorder is not None:
            frames["video"] = self.recorder.segment_for(int(window.get("strike_frame", 0)))
        try:
            self.log.commit_shot(self.match_id, self.match, record, decision, frames=frames, applied_calls=used)
        except MatchLogError as exc:
            self.match.undo()
            self._pause("log", f"cannot write the match log, decision withheld: {exc}")
            return
        self._pending = []
        self._last_record, self._last_decision = record, decision
        self.result.decisions.append(decision)
        for w in record.get("warnings", []):
            self.warnings.append(f"shot {decision['shot']}: {w}")
        if gaps:
            self._incident("dropped", f"shot {decision['shot']}: {sum(n for _, _, n in gaps)} frame(s) dropped during "
                                      "the shot; knocks in the gap made doubtful (F8)", {"gaps": gaps})
        self.board.decision(self._state(), decision)

    # ---- operator ------------------------------------------------------------------------
    def _drain_commands(self) -> None:
        while True:
            try:
                line = self.commands.get_nowait()
            except queue.Empty:
                return
            try:
                cmd = parse_command(line)
                if cmd is not None:
                    self._execute(cmd)
            except (CommandError, ContractError, MatchLogError) as exc:
                self.warnings.append(f"command {line.strip()!r}: {exc}")
                self.board.event("warning", f"command {line.strip()!r}: {exc}", self._state())

    def _execute(self, cmd: Command) -> None:
        who = cmd.who or self.operator
        if cmd.action == "call":
            for call in cmd.calls:
                cid = self.log.add_call(self.match_id, call, who)
                self._pending.append((cid, call, who))
            self.board.event("call", f"{' '.join(c['type'] for c in cmd.calls)} by {who} (for the "
                                     f"{'shot in progress' if self._in_motion else 'next shot'})", self._state())
        elif cmd.action == "cancel":
            for call in cmd.calls:
                hit = next((p for p in reversed(self._pending) if p[1] == call), None)
                if hit is None:
                    raise CommandError(f"no pending {call['type']} call to cancel")
                self.log.cancel_call(hit[0], who)
                self._pending.remove(hit)
            self.board.event("call", f"cancelled by {who}", self._state())
        elif cmd.action == "amend":
            before = self.match.decisions[-1] if self.match.decisions else None
            if before is None:
                raise CommandError("no decided shot to amend")
            calls = [dict(c, by=who) for c in cmd.calls]
            decision = self.match.amend_calls(calls)
            record = self.match.to_dict()["shots"][-1]
            try:
                self.log.correct_last(self.match_id, self.match, record, decision, who, "amend", cmd.calls)
            except MatchLogError:
                self.match.replace_last(self._last_record)
                raise
            self._last_record, self._last_decision = record, decision
            self.result.decisions.append(decision)
            self.board.decision(self._state(), decision)
        elif cmd.action == "undo":
            if not self.match.decisions:
                raise CommandError("no decision to undo")
            undone = self.match.undo()
            try:
                self.log.undo_last(self.match_id, self.match, who)
            except MatchLogError:
                self.match.play(self._last_record)
                raise
            shots = self.log.active_shots(self.match_id)
            self._last_record, self._last_decision = (shots[-1]["record"], shots[-1]["decision"]) if shots else (None, None)
            self.board.event("undo", f"shot {undone['shot']} taken back by {who}; score "
                                     + " : ".join(f"{p} {s}" for p, s in self.match.score.items()), self._state())
        elif cmd.action == "pause":
            self.log.log_action(self.match_id, "pause", who)
            self._pause("operator", f"paused by {who}")
        elif cmd.action == "resume":
            self.log.log_action(self.match_id, "resume", who)
            self._unpause("operator")
        elif cmd.action == "who":
            self.log.log_action(self.match_id, "who", who, cmd.text)
            self.operator = cmd.text
            self.board.event("operator", f"{cmd.text} at the keyboard", self._state())
        elif cmd.action == "note":
            self.log.log_action(self.match_id, "note", who, cmd.text)
        elif cmd.action == "help":
            self.board.event("help", HELP)
        elif cmd.action == "status":
            self.board.event("status", " : ".join(f"{p} {s}" for p, s in self.match.score.items())
                             + f", {self.match.turn} to play")
        elif cmd.action == "quit":
            self.log.log_action(self.match_id, "quit", who)
            self.result.ended = f"quit by {who}"
            self._stop.set()

    # ---- state, board ----------------------------------------------------------------------
    def _pause(self, reason: str, message: str) -> None:
        if self.paused.get(reason) == message:
            return
        self.paused[reason] = message
        self._incident(f"pause_{reason}", message)
        self.board.event("paused", message, self._state())

    def _unpause(self, reason: str, message: str | None = None) -> None:
        if self.paused.pop(reason, None) is not None:
            message = message or f"{reason} back to normal"
            self._incident(f"resume_{reason}", message)
            self.board.event("resumed", message, self._state())

    def _incident(self, kind: str, message: str, data=None) -> None:
        self.result.incidents.append((kind, message))
        self.warnings.append(message)
        if not kind.startswith(("pause_", "resume_")):  # pauses have their own board line
            self.board.event("incident", f"{kind}: {message}", self._state())
        try:
            self.log.incident(self.match_id, kind, message, data)
        except MatchLogError:
            pass  # the board still shows it; the log failure itself pauses on the next decision

    def _state(self) -> BoardState:
        fps = 0.0
        if len(self._fps_window) > 2:
            span = self._fps_window[-1] - self._fps_window[0]
            fps = (len(self._fps_window) - 1) / span if span > 0 else 0.0
        buf = self.buffer
        return BoardState(
            players=list(self.match.players), target=self.match.target, score=self.match.score, turn=self.match.turn,
            modes=dict(self.match.modes), match_id=self.match_id, shot=len(self.match.decisions),
            last_record=self._last_record, last_decision=self._last_decision,
            pending_calls=[c for _, c, _ in self._pending], warnings=list(self.warnings), paused=dict(self.paused),
            moving=self._in_motion, winner=self.match.winner, operator=self.operator,
            stats={"fps": fps, "queue": len(buf) if buf else 0, "capacity": buf.capacity if buf else 0,
                   "dropped": len(self.result.dropped), "shed": len(self.result.shed), "frames": self.result.frames})

    def _show(self, force: bool = False) -> None:
        now = time.monotonic()
        if self.board.redraw and (force or now - self._board_at >= self.config.board_every_s):
            self._board_at = now
            self.board.show(self._state())

    def _shutdown(self) -> None:
        self._stop.set()
        if self.buffer is not None:
            self.result.high_water = self.buffer.high_water
            self.result.blocked_s = self.buffer.blocked_s
            self.buffer.close()
        if self._capture is not None:
            self._capture.join(2.0)
        try:
            self.source.close()
        except Exception:
            pass
        if self.recorder is not None:
            self.recorder.close()
        if self.match.game_over:
            self.log.set_status(self.match_id, "finished")
