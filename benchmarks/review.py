"""End-to-end accuracy and speed of `vision-ref review` on rendered shots with exact truth.

    python benchmarks/review.py            # scenario library + 200 random shots, 60 and 120 fps
    python benchmarks/review.py --quick    # a few scenarios + random shots at 60 fps (under five minutes)

Each shot of the corpus (the named scenarios, then a seeded random corpus) is
rendered once by the simulator's renderer at reduced cost (small frame, no cue
stick or player; cached under --cache), reviewed by the real pipeline
(``review_video`` with ``--no-annotated``: tracker -> segmentation -> inference ->
adjudicator) with the calibration profile of the renderer's camera
(``calibrate.truth.profile_from_camera``, so calibration error is not measured
here), and compared with the simulator's truth record at that frame rate:

- contact order exact: the sequence of contacts (ball-ball pairs, ball-cushion,
  pins knocked, balls off the table) equals the truth's, in order -- compared as the
  events stage's benchmark does (``vision_ref.events.compare``), against the truth
  without the pin hits no camera can see (a pin touched again while still moving);
- contact time error: |t - t_truth| of every contact of the order-exact shots,
  median in ms and in frame intervals (the naive baseline, "the frame where it
  changed", is uniform over a frame: median 0.5 frame);
- pin attribution: of the pins the pipeline attributes (a pin_hit, not a doubt),
  those with the truth's knocker;
- call agreement: the adjudicator's decision on the pipeline's record equals its
  decision on the truth record (foul and fouls, points, to whom, pins down, next
  player, ball in hand); a disagreement is *silent* when the pipeline's record has
  no doubt event (F8) and no point for the referee to check (``record["review"]``: a
  graze, a pin hidden at the end, pins tracked to one place ...); the disagreements
  with no doubt event are counted too (``wrong_without_doubt``);
- speed: review wall time / the time to only decode the same video (YUV420, the
  pipeline's own decoding), both measured in this run; and seconds of processing
  per second of video.

Then the bundled sample videos (``sample_videos/``, full size, when present) are
reviewed with their calibration profile and their calls compared shot by shot with
the truth (for ``demo_match`` a whole match). The last line is the summary: ``review: shots=... order_exact=...% ...``.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

def compare_shot(pred: dict | None, truth: dict, shot) -> dict:
    """Scores of one shot: the pipeline's record against the truth record.

    Contacts, times and attribution use the events stage's own comparison
    (``events.compare``: keys, k-th occurrence matching) against the truth without
    the pin hits no camera can see (a pin touched again while still moving,
    ``onset_truth``); the call is compared with the decision on the full truth record.
    """
    from vision_ref.events.compare import call_of, compare, decide, onset_truth

    visible = onset_truth(truth, shot)
    out = {"order_exact": False, "dt": [], "pins": 0, "pins_attributed": 0, "pins_right": 0, "pins_root_right": 0,
           "pins_doubted": 0,
           "agree": False, "silent": False, "doubt": False, "found": pred is not None}
    truth_call = call_of(decide(truth))
    out["pins"] = sum(1 for e in visible["events"] if e["type"] in ("pin_hit", "doubt"))
    if pred is None:
        # a missed shot is a wrong call nobody was warned about
        out["silent"] = out["wrong_without_doubt"] = True
        return out
    c = compare(pred, visible)
    out["doubt"] = any(ev["type"] == "doubt" for ev in pred["events"])
    out["order_exact"] = c.order_ok
    if c.order_ok:
        out["dt"] = list(c.time_errors)
        out["dt_signed"] = {k: list(v) for k, v in c.time_bias_by_kind.items()}
    out["pins_attributed"] = c.pins_confident
    out["pins_right"] = c.pins_right
    out["pins_root_right"] = c.pins_root_right
    out["pins_doubted"] = c.doubt_tp + c.doubt_fp
    out["missing"] = [list(k) for k in c.missing]
    out["extra"] = [list(k) for k in c.extra]
    try:
        out["agree"] = call_of(decide(pred)) == truth_call
    except Exception as exc:  # a record the adjudicator rejects is a disagreement, reported
        out["error"] = f"{type(exc).__name__}: {exc}"
        out["agree"] = False
    out["review"] = list(pred.get("review") or [])
    out["wrong_without_doubt"] = not out["agree"] and not out["doubt"]
    out["silent"] = out["wrong_without_doubt"] and not out["review"]
    return out


QUICK_MAX_S = 4.5  # quick mode keeps shots whose clip is at most this long (render time)


def corpus(quick: bool, n_random: int, seed: int) -> list[tuple[str, object]]:
    """The named scenarios, then ``n_random`` seeded random shots. Quick: the three
    shortest scenarios of distinct leading rules and the first random shots whose clips
    are short (simulating is milliseconds; rendering is the cost)."""
    from vision_ref.sim import random_shots, scenarios

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        scen = [(s, s.simulate(0)) for s in scenarios.list_scenarios()]
        if quick:
            seen, picked = set(), []
            for s, shot in sorted(scen, key=lambda p: p[1].duration):
                key = s.rules[0] if s.rules else s.name
                if key not in seen:
                    seen.add(key)
                    picked.append((s, shot))
            scen = picked[:4]
        shots = [(f"scenario_{s.name}", shot) for s, shot in scen]
        rng = np.random.default_rng(seed)
        kept, drawn = 0, 0
        while kept < n_random:
            shot = random_shots.random_shot(rng)
            drawn += 1
            if quick and shot.duration > QUICK_MAX_S and drawn < 50 * max(n_random, 1):
                continue
            shots.append((f"random_{seed}_{drawn - 1:03d}", shot))
            kept += 1
    return shots


# Reduced-cost rendering (about 3x cheaper per moving frame than the defaults): no cue
# stick or player, 2 anti-aliasing samples, motion blur sampled every 1.5 px (at most 16).
# CRF 18, not x264's default 23: on the flat synthetic cloth CRF 23 spends ~50 kb/s and
# leaves ghosts of fast pins for seconds (score_8_four_pins@60: a 4x8 px copy of the
# toppling king, frames 58-249), which the tracker rightly reads as a pin. Such an
# artefact tests the encoder, not the referee; the tracking benchmark and the samples
# encode at CRF 16 for the same reason.
CHEAP_RENDER = dict(player="none", draw_cue=False, min_samples=2, blur_step_px=1.5, max_blur_samples=16,
                    preset="veryfast", crf=18)
# part of the cache file names: change it when CHEAP_RENDER or the renderer changes
RENDER_TAG = "c3"  # c2: sub-pixel samples centred; c3: CRF 18


def _same_truth(cached: dict, fresh: dict) -> bool:
    """A cached clip's truth record still what the simulator says (``sim`` is only
    provenance)."""
    fresh = json.loads(json.dumps(fresh))
    return {k: v for k, v in cached.items() if k != "sim"} == {k: v for k, v in fresh.items() if k != "sim"}


def render_cached(name: str, shot, fps: float, size: tuple[int, int], cache: Path) -> tuple[Path, dict, float]:
    """The rendered clip (cached), its truth record and how long the render took (0 if cached)."""
    from vision_ref.camera import CameraModel
    from vision_ref.sim.render import RenderSettings, render_clip

    stem = f"{name}_{fps:g}fps_{size[0]}x{size[1]}_{RENDER_TAG}"
    video, truth = cache / f"{stem}.mp4", cache / f"{stem}.truth.json"
    if video.is_file() and truth.is_file():
        cached = json.loads(truth.read_text())["record"]
        if _same_truth(cached, shot.truth_record(fps)):
            _add_exposure_to_sidecar(video)
            return video, cached, 0.0
        # the shot or its truth labelling changed since this clip was cached
    cam = CameraModel.overhead(*size)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        render_clip(shot, cam, RenderSettings(fps=fps, seed=7, **CHEAP_RENDER), cache, stem)
    return video, json.loads(truth.read_text())["record"], time.perf_counter() - t0


def _add_exposure_to_sidecar(video: Path) -> None:
    """Clips cached before the renderer wrote its exposure into the timestamps sidecar
    get it from their camera.json (what a new render would write): review reads it."""
    from vision_ref.video import read_sidecar_meta, sidecar_paths

    txt = sidecar_paths(video)[0]
    cam = video.with_suffix("").with_suffix(".camera.json")
    if not txt.is_file() or not cam.is_file() or "exposure_s" in read_sidecar_meta(video):
        return
    exposure = json.loads(cam.read_text())["render"]["exposure_s"]
    txt.write_text(f"# exposure_s: {exposure:g}\n" + txt.read_text())


def ideal_records(shot, fps: float) -> list[dict]:
    """Records the review's shot stage (segment -> infer -> adjudicate) makes from the
    tracks a perfect detector would report (``events.synthetic.tracks_from_truth``)."""
    from vision_ref.events.synthetic import tracks_from_truth
    from vision_ref.review.pipeline import adjudicate_tracks
    from vision_ref.rules import Match

    tracks = tracks_from_truth(shot, fps, noise_mm=0.5, seed=1, exposure_s=min(0.004, 1.0 / fps))
    m = Match(["A", "B"])
    adjudicate_tracks(tracks, m, table=shot.table, notes=[])
    return m.records


@functools.lru_cache(maxsize=1)
def _tracker_digest() -> str:
    """A digest of the tracker's code: tracks kept by an older tracker are not scored."""
    import hashlib

    h = hashlib.sha256()
    for f in sorted((REPO / "vision_ref" / "track").glob("*.py")):
        h.update(f.name.encode() + f.read_bytes())
    return h.hexdigest()[:16]


def _save_tracks(directory: Path, name: str, fps: float, tracks, notes: list[str], err: str | None,
                 n_frames: int) -> None:
    import pickle

    directory.mkdir(parents=True, exist_ok=True)
    blob = {"tracker": _tracker_digest(), "tracks": tracks, "notes": notes, "error": err, "frames": n_frames}
    (directory / f"{name}@{fps:g}.pkl").write_bytes(pickle.dumps(blob))


class _Inferred:
    """What the scoring reads of a review result, from kept tracks."""

    def __init__(self, records, notes):
        self.records, self.notes, self.timings = records, notes, {}


def _from_tracks(directory: Path, name: str, fps: float, shot):
    """(result, error, decode s, review s, frames) of one clip from its kept tracks (times are nan)."""
    import pickle

    from vision_ref.review.pipeline import adjudicate_tracks
    from vision_ref.rules import Match

    path = directory / f"{name}@{fps:g}.pkl"
    if not path.is_file():
        raise SystemExit(f"--from-tracks: {path} is missing (keep them with --save-tracks {directory})")
    blob = pickle.loads(path.read_bytes())
    if blob.get("tracker") != _tracker_digest():
        raise SystemExit(f"--from-tracks: {path} was kept by another version of vision_ref/track "
                         f"(keep them again with --save-tracks {directory})")
    notes = list(blob["notes"])
    if blob["tracks"] is None:
        return None, blob["error"], math.nan, math.nan, blob["frames"]
    m = Match(["A", "B"])
    adjudicate_tracks(blob["tracks"], m, table=shot.table, notes=notes)
    return _Inferred(m.records, notes), None, math.nan, math.nan, blob["frames"]


def decode_seconds(video: Path) -> tuple[float, int]:
    from vision_ref.video import VideoReader

    t0 = time.perf_counter()
    n = sum(1 for _ in VideoReader(video, mode="yuv"))
    return time.perf_counter() - t0, n


def review_samples() -> list[str]:
    """The bundled sample videos (sample_videos/NAME.mp4 with NAME.truth.json), at their
    full size with the samples' calibration profile: shots found and the calls, shot by
    shot, against the truth (a shot record, or for demo_match a whole match file)."""
    from vision_ref.events.compare import call_of, truth_calls
    from vision_ref.review.demo import find_profile
    from vision_ref.review.pipeline import review_video

    lines = []
    for video in sorted((REPO / "sample_videos").glob("*.mp4")):
        truth_path = video.with_suffix("").with_suffix(".truth.json")
        if not truth_path.is_file():
            continue
        want = truth_calls(json.loads(truth_path.read_text())["record"])
        profile = find_profile(video)
        with tempfile.TemporaryDirectory() as tmp:
            try:
                dec_s, n_frames = decode_seconds(video)
                t0 = time.perf_counter()
                res = review_video(video, tmp, calibration=profile, annotated=False, progress=False)
                rev_s = time.perf_counter() - t0
            except Exception as exc:  # reported (e.g. a sample being regenerated), the others still run
                lines.append(f"sample {video.stem}: review failed: {type(exc).__name__}: {exc}")
                continue
        got = [call_of(d) for d in res.decisions]
        agree = sum(a == b for a, b in zip(got, want))
        doubts = sum(any(e["type"] == "doubt" for e in r["events"]) for r in res.records)
        lines.append(f"sample {video.stem} ({n_frames} frames): {len(got)}/{len(want)} shots, calls agree in order "
                     f"{agree}/{len(want)}, {doubts} with a doubt; review {rev_s:.1f} s vs decode {dec_s:.1f} s "
                     f"(ratio {rev_s / max(dec_s, 1e-9):.2f})")
    return lines


def _parse_only(spec: str, names: set[str]) -> set[tuple[str, float | None]]:
    """--only's NAME[@FPS] list as (name, fps or None); an unknown name or fps stops the run."""
    out = set()
    for item in (x.strip() for x in spec.split(",") if x.strip()):
        name, _, fps = item.partition("@")
        if name not in names:
            raise SystemExit(f"--only: no shot {name!r} in the corpus (names as printed per clip, e.g. random_2026_003)")
        try:
            out.add((name, float(fps) if fps else None))
        except ValueError:
            raise SystemExit(f"--only: {item!r}: the frame rate after @ must be a number") from None
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="4 short scenarios + 4 short random shots at 60 fps")
    ap.add_argument("--random", type=int, default=None, help="random shots (default 200, quick 4)")
    ap.add_argument("--fps", default=None, help="comma-separated frame rates (default 60,120; quick 60)")
    ap.add_argument("--size", default="728x544", help="render size WxH (default 728x544)")
    ap.add_argument("--seed", type=int, default=2026, help="seed of the random corpus")
    ap.add_argument("--cache", default=str(Path(tempfile.gettempdir()) / "vision-ref-bench-review"),
                    help="where rendered clips are kept between runs")
    ap.add_argument("--json", default=None, help="also write the per-shot results here")
    ap.add_argument("--no-sample", action="store_true", help="skip the bundled sample videos")
    ap.add_argument("--save-tracks", default=None, metavar="DIR",
                    help="also keep each clip's tracks here (for --from-tracks)")
    ap.add_argument("--from-tracks", default=None, metavar="DIR",
                    help="score event inference alone on tracks kept by --save-tracks (no decoding or "
                         "tracking, ~1 min for the full corpus; no speed figures); refused when the tracker's "
                         "code changed since they were kept")
    ap.add_argument("--only", default=None, metavar="NAME[@FPS],...",
                    help="score only these corpus shots (e.g. random_2026_003@120,scenario_foul_F5_cue_knocks_pin): "
                         "to look again at the shots a change moved; the figures then cover only them")
    args = ap.parse_args(argv)

    from vision_ref.calibrate.truth import profile_from_camera
    from vision_ref.camera import CameraModel
    from vision_ref.errors import VisionRefError
    from vision_ref.review.pipeline import review_video

    n_random = args.random if args.random is not None else (4 if args.quick else 200)
    fps_list = [float(f) for f in (args.fps or ("60" if args.quick else "60,120")).split(",")]
    w, h = (int(v) for v in args.size.lower().split("x"))
    cache = Path(args.cache)
    cache.mkdir(parents=True, exist_ok=True)
    t_start = time.perf_counter()
    shots = corpus(args.quick, n_random, args.seed)
    only = _parse_only(args.only, {name for name, _ in shots}) if args.only else None
    profile = profile_from_camera(CameraModel.overhead(w, h))
    print(f"corpus: {len(shots)} shots x {len(fps_list)} frame rates at {w}x{h}", file=sys.stderr)

    rows = []
    render_s = 0.0
    warmed = False
    with tempfile.TemporaryDirectory() as tmp:
        for fps in fps_list:
            for name, shot in shots:
                if only is not None and not ({(name, None), (name, fps)} & only):
                    continue
                video, truth, dt_render = render_cached(name, shot, fps, (w, h), cache)
                render_s += dt_render
                if args.from_tracks:
                    res, err, dec_s, rev_s, n_frames = _from_tracks(Path(args.from_tracks), name, fps, shot)
                    records = res.records if res is not None else []
                else:
                    if not warmed:  # numba's cached kernels load on the first call: not part of the timing
                        review_video(video, Path(tmp) / "warm", calibration=profile, annotated=False, progress=False)
                        warmed = True
                    dec_s, n_frames = decode_seconds(video)
                    t0 = time.perf_counter()
                    err = None
                    try:
                        res = review_video(video, Path(tmp) / name, calibration=profile, annotated=False,
                                           progress=False)
                        records = res.records
                    except VisionRefError as exc:
                        res, records, err = None, [], str(exc)
                    rev_s = time.perf_counter() - t0
                    if args.save_tracks:
                        _save_tracks(Path(args.save_tracks), name, fps, res.tracks if res is not None else None,
                                     list(res.notes) if res is not None else [], err, n_frames)
                pred = records[0] if len(records) == 1 else None
                row = compare_shot(pred, truth, shot)
                if pred is None and (err or any("could not be reviewed" in n for n in (res.notes if res else []))):
                    # the pipeline said it could not review the shot: flagged, not silent
                    row["silent"] = row["wrong_without_doubt"] = False
                    row["flagged_unreviewed"] = True
                row.update(name=name, fps=fps, frames=n_frames, video_s=n_frames / fps, decode_s=dec_s,
                           review_s=rev_s, shots_found=len(records), pipeline_error=err,
                           notes=list(res.notes) if res is not None else [],
                           timings=dict(res.timings) if res is not None else {})
                # the same shot from perfect tracks: separates tracking losses from inference losses
                ideal = ideal_records(shot, fps)
                row["ideal"] = compare_shot(ideal[0] if len(ideal) == 1 else None, truth, shot)
                rows.append(row)
                mark = "ok " if row["agree"] else ("DBT" if row["doubt"] else "BAD")
                print(f"{mark} {name} @{fps:g}: order {'exact' if row['order_exact'] else 'WRONG'}, "
                      f"{len(records)} shot(s), review {rev_s:.2f} s / decode {dec_s:.2f} s"
                      + (f" [{err}]" if err else ""), file=sys.stderr)

    n = len(rows)
    order = sum(r["order_exact"] for r in rows)
    dts = [d for r in rows for d in r["dt"]]
    dt_frames = [d * r["fps"] for r in rows for d in r["dt"]]
    pins = sum(r["pins"] for r in rows)
    pins_att = sum(r["pins_attributed"] for r in rows)
    pins_right = sum(r["pins_right"] for r in rows)
    pins_root = sum(r.get("pins_root_right", 0) for r in rows)
    pins_doubted = sum(r["pins_doubted"] for r in rows)
    agree = sum(r["agree"] for r in rows)
    silent = sum(r["silent"] for r in rows)
    no_doubt = sum(r["wrong_without_doubt"] for r in rows)
    checked = sum(bool(r.get("review")) for r in rows)
    rev = sum(r["review_s"] for r in rows)
    dec = sum(r["decode_s"] for r in rows)
    vid = sum(r["video_s"] for r in rows)
    med_ms = 1e3 * statistics.median(dts) if dts else math.nan
    med_fr = statistics.median(dt_frames) if dt_frames else math.nan
    unreviewed = sum(bool(r.get("flagged_unreviewed")) for r in rows)
    print(f"shots {n} ({unreviewed} reported as not reviewable); contact order exact {order}/{n}; contacts timed {len(dts)}; median error "
          f"{med_ms:.2f} ms = {med_fr:.3f} frame (frame-quantised baseline 0.5 frame); pins knocked {pins}: "
          f"attributed {pins_att}, right {pins_right} (root ball right {pins_root}), doubted {pins_doubted}; calls agree {agree}/{n}, silent wrong {silent} "
          f"(wrong without a doubt event {no_doubt}; shots with a point to check {checked})")
    # where the time error comes from: the median error and the median bias (inferred -
    # truth) of each kind of contact at each frame rate, in frames
    parts = []
    for fps_k in sorted({r["fps"] for r in rows}):
        by_kind: dict[str, list[float]] = {}
        for r in rows:
            if r["fps"] == fps_k:
                for kind, v in (r.get("dt_signed") or {}).items():
                    by_kind.setdefault(kind, []).extend(x * fps_k for x in v)
        parts += [f"{kind}@{fps_k:g} {statistics.median(abs(x) for x in v):.3f} ({statistics.median(v):+.3f}, n={len(v)})"
                  for kind, v in sorted(by_kind.items())]
    if parts:
        print("contact time error by kind, median |error| (median bias) in frames: " + "; ".join(parts))
    ideal = [r["ideal"] for r in rows]
    i_order = sum(r["order_exact"] for r in ideal)
    i_agree = sum(r["agree"] for r in ideal)
    i_silent = sum(r["silent"] for r in ideal)
    i_dt = [d * r["fps"] for r in rows for d in r["ideal"]["dt"]]
    print(f"from perfect tracks (same shots, no tracker): contact order exact {i_order}/{n}, median error "
          f"{statistics.median(i_dt) if i_dt else math.nan:.3f} frame, calls agree {i_agree}/{n}, silent wrong {i_silent}")
    stage = {k: sum(r["timings"].get(k, 0.0) for r in rows) for k in ("track_s", "infer_s", "write_s")}
    print(f"speed: review {rev:.1f} s (decode+track {stage['track_s']:.1f}, segment+infer+adjudicate "
          f"{stage['infer_s']:.1f}, outputs {stage['write_s']:.1f}), decode only {dec:.1f} s (ratio {rev / max(dec, 1e-9):.2f}), "
          f"{rev / max(vid, 1e-9):.3f} s per s of video (decode {dec / max(vid, 1e-9):.3f}); rendering {render_s:.0f} s; "
          f"wall {time.perf_counter() - t_start:.0f} s")
    if not args.no_sample:
        for line in review_samples() or ["samples: none in sample_videos/ (its README.md regenerates them)"]:
            print(line)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1, default=str) + "\n")
    pct = lambda a, b: 100.0 * a / b if b else math.nan  # noqa: E731
    print(f"review: shots={n} order_exact={pct(order, n):.1f}% ideal_order_exact={pct(i_order, n):.1f}% median_dt_frames={med_fr:.3f} "
          f"pin_attribution={pct(pins_right, pins_att):.1f}% root_attribution={pct(pins_root, pins_att):.1f}% calls_agree={pct(agree, n):.1f}% ideal_calls_agree={pct(i_agree, n):.1f}% silent_wrong={silent} "
          f"wrong_without_doubt={no_doubt} "
          f"speed_vs_decode={rev / max(dec, 1e-9):.2f} s_per_video_s={rev / max(vid, 1e-9):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
