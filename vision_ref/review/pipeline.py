"""`vision-ref review`: a recorded match in, the referee's account of it out.

    video --(calibrate: profile or first still frames)--> Tracker --Tracks--> segment_shots
          --> infer_shot (shooter = match.turn) --> Match.play --> decisions
          --> DIR/match.json, decisions.json, shot_NNN.png, report.html, annotated.mp4

Timing: frames carry the sensor timestamps of the ``NAME.timestamps.txt|json``
sidecar when there is one (and gaps in it are told to the tracker as dropped
frames), else ``index / fps``.

Outputs are written into a staging directory inside DIR and renamed into place
when complete, so an interrupted or failed run never leaves half a file and never
destroys the previous review's files before the new ones are whole. The annotated
video (a second decoding pass, the slowest part) is made last, after the match,
decisions and report are already in place. A truncated or corrupt video is reviewed
as far as it can be read, everything decided is written, and then the run fails
with a message saying where the video stopped.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from vision_ref.errors import CalibrationError, ContractError, VideoError, VisionRefError


class OutputError(VisionRefError):
    """The output directory cannot be created or written."""

    exit_code = 6


@dataclass
class ReviewResult:
    out_dir: Path
    match_path: Path
    decisions_path: Path
    report: Path
    annotated: Path | None
    diagrams: list[Path]
    records: list[dict]
    decisions: list[dict]
    final: dict
    notes: list[str] = field(default_factory=list)
    frames: int = 0
    video_seconds: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)
    tracks: object = None  # the tracker's output (messages.Tracks) the records were inferred from

    def summary(self) -> str:
        score = " : ".join(f"{p} {s}" for p, s in self.final["score"].items())
        w = self.final.get("winner")
        end = "draw" if w == "draw" else (f"{w} wins" if w else "game not finished")
        fouls = sum(1 for d in self.decisions if d.get("foul"))
        doubts = sum(1 for r in self.records if any(e.get("type") == "doubt" for e in r.get("events", [])))
        lines = [f"{_n(len(self.decisions), 'shot')} ({_n(fouls, 'foul')}, {doubts} with a doubt) in {self.frames} frames "
                 f"({self.video_seconds:.1f} s of video); score {score}, {end}"]
        lines += [f"note: {n}" for n in self.notes]
        lines.append(f"wrote {self.match_path}, {self.decisions_path.name}, {self.report.name}, "
                     f"{len(self.diagrams)} diagrams" + (f", {self.annotated.name}" if self.annotated else ""))
        return "\n".join(lines)


def _n(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


class Progress:
    """A one-line progress bar on stderr (a line per 10 % when stderr is not a terminal)."""

    def __init__(self, label: str, total: int, enabled: bool = True, stream=None):
        self.label = label
        self.total = max(0, int(total))
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.tty = enabled and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.t0 = time.perf_counter()
        self._last_draw = 0.0
        self._last_decile = -1
        self.n = 0

    def __call__(self, n: int) -> None:
        self.n = n
        if not self.enabled:
            return
        now = time.perf_counter()
        frac = min(1.0, n / self.total) if self.total else 0.0
        if self.tty:
            if now - self._last_draw < 0.1 and n < self.total:
                return
            self._last_draw = now
            width = 30
            bar = "#" * int(frac * width) + "-" * (width - int(frac * width))
            rate = n / max(now - self.t0, 1e-9)
            of = f"/{self.total}" if self.total else ""
            self.stream.write(f"\r{self.label:<10} [{bar}] {100 * frac:5.1f}% {n}{of} frames {rate:6.1f} fps")
            self.stream.flush()
        else:
            decile = int(frac * 10)
            if decile > self._last_decile:
                self._last_decile = decile
                self.stream.write(f"{self.label}: {n} frames ({100 * frac:.0f}%)\n")
                self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            dt = time.perf_counter() - self.t0
            if self.tty:
                self.stream.write("\n")
            self.stream.write(f"{self.label}: {self.n} frames in {dt:.1f} s\n")
            self.stream.flush()


# ---- output directory -------------------------------------------------------------


def _check_out_dir(out_dir) -> Path:
    """Refuse an output directory that cannot be made, before any work (nothing is created)."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise OutputError(f"output {out} exists and is not a directory")
    parent = out
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise OutputError(f"cannot write into output directory {out}: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"cannot write into output directory {out}: {parent} is not writable")
    return out


def _prepare_out_dir(out_dir) -> Path:
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise OutputError(f"output {out} exists and is not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / f".vision-ref-write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as exc:
        raise OutputError(f"cannot write into output directory {out}: {exc.strerror or exc}") from None
    return out


class _Staging:
    """Files are made in DIR/.staging-PID and moved into DIR by ``commit`` (same file
    system, so each move is an atomic rename)."""

    def __init__(self, out: Path):
        self.out = out
        self.dir = out / f".staging-{os.getpid()}"
        shutil.rmtree(self.dir, ignore_errors=True)
        try:
            self.dir.mkdir()
        except OSError as exc:
            raise OutputError(f"cannot write into output directory {out}: {exc.strerror or exc}") from None

    def path(self, name: str) -> Path:
        return self.dir / name

    def write_text(self, name: str, text: str) -> None:
        try:
            self.path(name).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise OutputError(f"cannot write {self.out / name}: {exc.strerror or exc}") from None

    def commit(self, names: list[str]) -> list[Path]:
        done = []
        for name in names:
            target = self.out / name
            os.replace(self.path(name), target)
            done.append(target)
        return done

    def cleanup(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)


# ---- pieces ------------------------------------------------------------------------


def _load_profile(calibration):
    from vision_ref.calibrate.profile import CalibrationProfile

    if isinstance(calibration, CalibrationProfile):
        return calibration
    return CalibrationProfile.load(calibration)


class FitCheck:
    """Is a given profile this footage's? The calibration health check on a few frames
    over the first seconds (0, 0.5, 1, 2, 3 s): one good frame is enough, so a player
    leaning over the table at the start does not refuse a right profile; when none
    fits the review stops with the last frame's reason before anything is written."""

    AT_S = (0.0, 0.5, 1.0, 2.0, 3.0)

    def __init__(self, profile, fps: float, where: str):
        self.profile = profile
        self.where = where
        self.frames = {int(round(t * fps)) for t in self.AT_S}
        self.last_frame = max(self.frames)
        self.done = False
        self.note: str | None = None
        try:
            from vision_ref.calibrate.health import health
        except ImportError:  # the calibration stage's health check is optional for review
            self.health = None
            self.done = True
            self.note = "calibration health check unavailable (vision_ref.calibrate.health missing)"
        else:
            self.health = health

    def see(self, file_frame: int, frame) -> None:
        if self.done or file_frame not in self.frames:
            return
        self.last_report = self.health(self.profile, _bgr_of(frame))
        if self.last_report.ok:
            self.done = True
        elif file_frame >= self.last_frame:
            self.finish()

    def finish(self) -> None:
        """After the last frame checked (or the end of a short video): refuse when none fitted."""
        rep = getattr(self, "last_report", None)
        if not self.done and rep is not None:
            raise CalibrationError(f"the calibration profile does not fit {self.where}: {rep.reason} "
                                   f"(health {rep.score:.2f}); calibrate this set-up or omit --calibration")


def _bgr_of(frame) -> np.ndarray:
    import cv2

    if frame.bgr is not None:
        return frame.bgr
    h, w = frame.shape
    nv12 = np.concatenate([frame.y, frame.uv.reshape(h // 2, w)], axis=0)
    return cv2.cvtColor(nv12, cv2.COLOR_YUV2BGR_NV12)


def strike_time(record: dict, tracks, window) -> float:
    """The strike on the tracks' clock: segmentation's sub-frame estimate (the window's
    ``strike_t``, else the record's), else the timestamp of the strike row."""
    for v in (getattr(window, "strike_t", None), record.get("strike_clip_t"), record.get("strike_t")):
        if isinstance(v, (int, float)) and np.isfinite(v):
            return float(v)
    return float(tracks.t[int(window.strike_row)])


def _shot_rows(window) -> tuple[int, int, int]:
    start = int(getattr(window, "start_row", window.strike_row))
    return start, int(window.strike_row), int(window.end_row)


@dataclass
class ShotOutcome:
    record: dict
    decision: dict
    window: object
    strike_t: float
    warnings: list[str] = field(default_factory=list)


def adjudicate_tracks(tracks, match, *, table, settings=None, notes: list[str] | None = None) -> list[ShotOutcome]:
    """Segment the tracks into shots, infer each record with the shooter on turn, play it.

    A record the adjudicator rejects (a ContractError: an inference bug, or a shot
    after the game ended) is reported in ``notes`` and skipped; the match is unchanged.
    """
    from vision_ref.events.infer import infer_shot
    from vision_ref.events.segment import segment_shots

    try:
        from vision_ref.events.placement import check_respot
    except ImportError:
        check_respot = None
    notes = notes if notes is not None else []
    outcomes: list[ShotOutcome] = []
    windows = segment_shots(tracks)
    for k, w in enumerate(windows):
        at = float(tracks.t[int(w.strike_row)])
        if match.game_over:
            notes.append(f"{_n(len(windows) - k, 'shot')} after the end of the game (from t={at:.1f} s) were not adjudicated")
            break
        try:
            record = infer_shot(tracks, w, shooter=match.turn, table=table, settings=settings)
        except ContractError as exc:
            # The tracks do not make a valid record (e.g. a ball was not found before the strike).
            # Reported, not guessed: the match goes on without this shot.
            notes.append(f"the shot at t={at:.2f} s could not be reviewed: {exc}; it is left out, so the turn "
                         "order after it may be wrong")
            continue
        if not getattr(w, "complete", True):
            notes.append(f"the shot at t={at:.2f} s was cut off before the table came to rest; "
                         "its record ends where the footage does")
        warnings = []
        if check_respot is not None and outcomes:
            prev = outcomes[-1]
            warnings = [f"placement before this shot: {m}"
                        for m in check_respot(prev.decision, record["before"], after=prev.record["after"], table=table)]
        warnings += [str(x) for x in record.get("warnings", []) if x]
        record.setdefault("review", []).extend(_shaky_contacts_deciding(match, record))
        try:
            decision = match.play(record)
        except ContractError as exc:
            notes.append(f"the shot at t={at:.2f} s was not adjudicated: its inferred record was rejected ({exc})")
            continue
        outcomes.append(ShotOutcome(record, decision, w, strike_time(record, tracks, w), warnings))
    return outcomes


SHAKY_CONFIDENCE = 0.25  # a contact timed this loosely (or a graze) may not have happened


def _shaky_contacts_deciding(match, record: dict) -> list[str]:
    """Review points for the loosely timed ball-ball and cushion contacts the call hangs on:
    without the contact the adjudicator would decide otherwise (a carom, L1/L3, F1).

    A contact the fitted paths barely support is only worth the referee's look when the
    call depends on it; asking about every one would bury the ones that matter."""
    from vision_ref.rules.match import call_key

    shaky = [k for k, e in enumerate(record["events"]) if e["type"] in ("ball_ball", "cushion")
             and not e.get("graze") and float(e.get("confidence", 1.0)) < SHAKY_CONFIDENCE]
    if not shaky:
        return []
    try:
        call = call_key(match.preview(record))
    except ContractError:
        return []  # rejected: play reports it
    out = []
    for k in shaky:
        e = record["events"][k]
        without = dict(record, events=record["events"][:k] + record["events"][k + 1:])
        try:
            changed = call_key(match.preview(without)) != call
        except ContractError:
            changed = True  # the record does not even stand without it: it matters
        if changed:
            what = (f"{e['a']} and {e['b']} met" if e["type"] == "ball_ball"
                    else f"{e['ball']} hit the {e['cushion']} cushion")
            out.append(f"{what} at {float(e['t']):.2f} s by the tracks, loosely timed (confidence "
                       f"{float(e['confidence']):.2f}), and the call depends on it: check that it happened")
    return out


def _write_core(stage: _Staging, match, outcomes: list[ShotOutcome], tracks, table, *, source: str,
                notes: list[str], video_file: str | None = None) -> list[str]:
    """match.json, decisions.json, shot_NNN.png and report.html into the staging dir."""
    import cv2

    from vision_ref.review.diagram import ShotPaths, draw_shot_diagram
    from vision_ref.review.report import ShotReport, build_report

    names = []
    match_doc = match.to_dict()
    stage.write_text("match.json", json.dumps(match_doc, indent=1) + "\n")
    stage.write_text("decisions.json", json.dumps({"decisions": match.decisions, "final": match.final()}, indent=1) + "\n")
    names += ["match.json", "decisions.json"]
    shots = []
    for o in outcomes:
        start, strike_row, end = _shot_rows(o.window)
        paths = ShotPaths.from_tracks(tracks, strike_row, end, o.strike_t)
        img = draw_shot_diagram(o.record, paths, o.decision, table)
        ok, png = cv2.imencode(".png", img)  # default compression: level 9 is 12 % smaller but ~5x slower
        if not ok:
            raise OutputError(f"could not encode the diagram of shot {o.decision['shot']}")
        name = f"shot_{o.decision['shot']:03d}.png"
        try:
            stage.path(name).write_bytes(png.tobytes())
        except OSError as exc:
            raise OutputError(f"cannot write {stage.out / name}: {exc.strerror or exc}") from None
        names.append(name)
        fi = tracks.frame_index
        shots.append(ShotReport(o.record, o.decision, png.tobytes(), name, float(tracks.t[start]), float(tracks.t[end]),
                                (int(fi[start]), int(fi[end])), o.warnings,
                                placements=[_placement_text(p) for p in getattr(o.window, "hand_placements", [])],
                                video_file=video_file))
    page = build_report(match_doc, shots, final=match.final(), title=f"vision-ref review: {Path(source).name}",
                        source=source, notes=notes)
    stage.write_text("report.html", page)
    names.append("report.html")
    return names


def write_outputs(out: Path, match, outcomes: list[ShotOutcome], tracks, table, *, source: str = "",
                  notes: list[str] | None = None, video_file: str | None = None) -> list[Path]:
    """Write match.json, decisions.json, shot_NNN.png and report.html into ``out``.

    All are made in a staging directory first and renamed into place only when every
    one is complete: on any failure the previous files in ``out`` are untouched.
    Returns the paths written."""
    stage = _Staging(out)
    try:
        names = _write_core(stage, match, outcomes, tracks, table, source=source, notes=list(notes or []),
                            video_file=video_file)
        committed = stage.commit(names)
    finally:
        stage.cleanup()
    _remove_stale_diagrams(out, {n for n in names if n.startswith("shot_")})
    return committed


def _placement_text(p: dict) -> str:
    def at(xy):
        return "off the table" if xy is None else f"({int(round(xy[0]))}, {int(round(xy[1]))})"  # no "-0"

    return f"{p.get('piece', '?')} from {at(p.get('from'))} to {at(p.get('to'))}"


def _remove_stale_diagrams(out: Path, keep: set[str]) -> None:
    for p in out.glob("shot_*.png"):
        if re.fullmatch(r"shot_\d{3,}\.png", p.name) and p.name not in keep:
            p.unlink(missing_ok=True)


# ---- the whole review --------------------------------------------------------------


def review_video(
    path,
    out_dir,
    *,
    calibration=None,
    players=("A", "B"),
    target: int = 100,
    modes: dict | None = None,
    annotated: bool = True,
    progress: bool = True,
    settings=None,
    first: str | None = None,
    exposure_s: float | None = None,
) -> ReviewResult:
    """Review the recorded match in ``path``; write the outputs into ``out_dir``.

    ``calibration``: a profile path or :class:`CalibrationProfile` (default: calibrate
    from the video's first still frames). ``players`` (the first breaks unless
    ``first`` says otherwise), ``target``, ``modes`` as in the match file.
    ``settings``: :class:`vision_ref.events.infer.InferenceSettings`.
    ``exposure_s``: the camera's exposure time (default: what the timestamps sidecar
    records, else unknown): a moving ball is seen where it was mid-exposure, so without
    it contact times come out up to half an exposure early.
    Raises VideoError / CalibrationError / ContractError / OutputError with one clear message.
    """
    from vision_ref.rules import Match
    from vision_ref.video import VideoReader, probe

    timings: dict[str, float] = {}
    t_all = time.perf_counter()
    players = list(players)
    # Every input is checked before anything is computed or created: the options,
    # the video, the profile, then the output directory.
    match = Match(players, first=first or players[0], target=target, modes=modes)
    # YUV420 straight from the decoder: the tracker's native input (no colour conversion)
    info = probe(path)  # a missing / empty / non-video file fails here
    reader = VideoReader(path, mode="yuv" if info.width % 2 == 0 and info.height % 2 == 0 else "bgr", strict=False,
                         info=info, reuse_buffers=3)
    profile = _load_profile(calibration) if calibration is not None else None
    notes: list[str] = []
    if profile is not None:
        profile.check_frame_size(reader.width, reader.height)
    exposure_s = _exposure_of(exposure_s, reader, notes)
    _check_out_dir(out_dir)  # created only once there is something to write

    from vision_ref.sources.base import DropDetector
    from vision_ref.track.tracker import Tracker

    t0 = time.perf_counter()
    if profile is None:
        from vision_ref.calibrate.auto import calibrate_from_video

        if progress:
            print("calibrating from the video's first still frames ...", file=sys.stderr, flush=True)
        profile, first_still = calibrate_from_video(path)
        profile.check_frame_size(reader.width, reader.height)
        notes.append(f"calibrated from the video's still frames (from frame {first_still})")
    timings["calibrate_s"] = time.perf_counter() - t0
    table = profile.table

    # ---- decode + track -------------------------------------------------------------
    t0 = time.perf_counter()
    reader.start()  # the decoder opens the file while the tracker is set up
    try:
        tracker = Tracker(profile, reader.fps, exposure_s=exposure_s)
    except BaseException:
        reader.close()
        raise
    drops = DropDetector(reader.fps) if reader.timestamps_ns is not None else None
    sensor_index: list[int] = []  # file frame number -> sensor frame index
    bar = Progress("tracking", reader.expected_frames, progress)
    n_dropped = 0
    fit = FitCheck(profile, reader.fps, str(path)) if calibration is not None else None
    if fit is not None and fit.note:
        notes.append(fit.note)
    from vision_ref.messages import Frame

    interrupted = False
    last_t = 0.0
    try:
        for frame in reader:
            if fit is not None:
                fit.see(frame.index, frame)
            idx = frame.index
            if drops is not None:
                idx, gap = drops.observe(frame.timestamp_ns)
                if gap is not None:
                    for missing in gap.indices:
                        tracker.mark_dropped(missing)
                    n_dropped += gap.count
                if idx != frame.index:
                    frame = Frame(idx, frame.timestamp_ns, y=frame.y, uv=frame.uv, bgr=frame.bgr)
            tracker.update(frame, observe=False)  # review reads the tracks at the end
            sensor_index.append(idx)
            last_t = frame.t
            bar(len(sensor_index))
    except KeyboardInterrupt:
        # Ctrl-C while tracking: what was tracked is still reviewed and written, then we stop.
        interrupted = True
    finally:
        bar.close()
    timings["track_s"] = time.perf_counter() - t0
    if fit is not None and not interrupted:
        fit.finish()
    if not sensor_index and not interrupted:
        raise VideoError(f"{path}: no frame could be decoded" + (f" ({reader.error})" if reader.error else ""))
    stopped = reader.error
    if interrupted:
        if not sensor_index:
            raise KeyboardInterrupt
        notes.append(f"the review was interrupted after {len(sensor_index)} frames (t={last_t:.1f} s); "
                     "shots after that are not reviewed")
        annotated = False
    if stopped is not None:
        notes.append(f"the video could not be read to the end: {stopped}")
    if n_dropped:
        notes.append(f"{_n(n_dropped, 'frame')} missing from the recording (timestamp gaps); treated as gaps, not interpolated")
    if reader.timestamp_note:
        notes.append(reader.timestamp_note)

    out = _prepare_out_dir(out_dir)

    # ---- shots ----------------------------------------------------------------------
    t0 = time.perf_counter()
    tracks = tracker.tracks()
    outcomes = adjudicate_tracks(tracks, match, table=table, settings=settings, notes=notes)
    timings["infer_s"] = time.perf_counter() - t0

    # ---- outputs --------------------------------------------------------------------
    t0 = time.perf_counter()
    committed = write_outputs(out, match, outcomes, tracks, table, source=str(path), notes=notes,
                              video_file="annotated.mp4" if annotated else None)
    timings["write_s"] = time.perf_counter() - t0
    annotated_path = None
    if annotated:
        t0 = time.perf_counter()
        stage = _Staging(out)
        try:
            annotated_path = _write_annotated(path, stage, match, outcomes, tracks, profile, sensor_index, progress)
        finally:
            stage.cleanup()
        timings["annotate_s"] = time.perf_counter() - t0
    timings["total_s"] = time.perf_counter() - t_all

    ts = tracks.t
    result = ReviewResult(
        out_dir=out, match_path=out / "match.json", decisions_path=out / "decisions.json", report=out / "report.html",
        annotated=annotated_path, diagrams=[p for p in committed if p.name.startswith("shot_")],
        records=match.records, decisions=match.decisions, final=match.final(), notes=notes,
        frames=len(sensor_index), video_seconds=float(ts[-1] - ts[0]) + 1.0 / reader.fps if len(ts) else 0.0,
        timings=timings, tracks=tracks,
    )
    if stopped is not None:
        raise VideoError(f"{stopped}; the {_n(len(outcomes), 'shot')} decided before that are written to {out}")
    if interrupted:
        what = "the 1 shot decided so far is" if len(outcomes) == 1 else f"the {len(outcomes)} shots decided so far are"
        print(f"review stopped by Ctrl-C: {what} written to {out}", file=sys.stderr)
        raise KeyboardInterrupt
    return result


def _exposure_of(given: float | None, reader, notes: list[str]) -> float | None:
    """The exposure time to track with: the one given, else the sidecar's; a note says
    where it came from, or that it is unknown."""
    if given is not None:
        if not (0.0 < given <= 1.0 / reader.fps + 1e-9):
            raise VideoError(f"exposure {given * 1e3:g} ms does not fit the video: at {reader.fps:g} fps a frame "
                             f"lasts {1e3 / reader.fps:.2f} ms")
        notes.append(f"exposure {given * 1e3:g} ms (given)")
        return given
    if reader.exposure_s is not None:
        notes.append(f"exposure {reader.exposure_s * 1e3:g} ms (from the timestamps sidecar)")
        return reader.exposure_s
    notes.append("exposure time unknown (no --exposure, none in a timestamps sidecar): moving balls are placed at "
                 "each frame's timestamp, so contact times may be early by up to half an exposure")
    return None


def _write_annotated(path, stage: _Staging, match, outcomes, tracks, profile, sensor_index, progress) -> Path:
    from vision_ref.review.annotate import AnnotatedShot, Annotator, write_annotated
    from vision_ref.review.diagram import ShotPaths, contact_marks

    shots = []
    for o in outcomes:
        start, strike_row, end = _shot_rows(o.window)
        paths = ShotPaths.from_tracks(tracks, strike_row, end, o.strike_t)
        shots.append(AnnotatedShot(start, strike_row, end, o.strike_t, contact_marks(o.record, paths, profile.table),
                                   o.decision))
    ann = Annotator(tracks, profile.camera, profile.table, shots, match.players, match.start_score)
    row_of_index = {int(fi): r for r, fi in enumerate(tracks.frame_index)}

    def row_of_frame(file_frame: int):
        if file_frame >= len(sensor_index):
            return None
        return row_of_index.get(sensor_index[file_frame])

    bar = Progress("annotating", len(sensor_index), progress)
    try:
        write_annotated(path, stage.path("annotated.mp4"), ann, row_of_frame, progress=bar)
    finally:
        bar.close()
    return stage.commit(["annotated.mp4"])[0]
