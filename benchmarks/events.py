"""Event inference accuracy: sub-frame inference vs frame-level baseline, vs exact truth.

Corpus: the scenario library (vision_ref.sim.scenarios) plus seeded random shots
(vision_ref.sim.random_shots), each filmed at 60 and 120 fps by the perfect-detector
model (vision_ref.events.synthetic.tracks_from_truth) with realistic position noise
(0.7 mm), an exposure of half the frame interval, a random strike phase within the
frame, and one dropped frame during the motion in 8 % of the shots.

Measured per frame rate and overall:
- contact order exactly right (share of shots), sub-frame vs the frame-level baseline;
- contact time error (median, 90th percentile; ms and frames) for matched contacts;
- pin attribution accuracy over pins the inference attributed (not doubtful);
- F8 doubt precision / recall against the truth's doubt labels (sim.truth.doubtful_hits);
- a sweep of InferenceSettings.confidence (pins re-decided from the recorded
  candidate probabilities) to choose the default.

    python benchmarks/events.py [--quick] [--shots N] [--seed S]

The last line is the summary ``events: ...``.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time

import numpy as np

from vision_ref.errors import VisionRefError
from vision_ref.events.baseline import frame_level_events
from vision_ref.events.compare import compare, onset_truth, with_confidence
from vision_ref.events.infer import InferenceSettings, infer_shot
from vision_ref.events.segment import segment_shots
from vision_ref.events.synthetic import tracks_from_truth

SWEEP = (0.5, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999)
NOISE_MM = 0.7


def corpus(n_random: int, seed: int, quick: bool):
    shots = []
    try:
        from vision_ref.sim.scenarios import list_scenarios

        for sc in list_scenarios():
            try:
                shots.append((f"scenario:{sc.name}", sc.simulate(0)))
            except Exception as exc:  # a scenario the library cannot build is reported, not fatal
                print(f"  skipped scenario {sc.name}: {exc}", file=sys.stderr)
    except ImportError:
        print("  no scenario library", file=sys.stderr)
    from vision_ref.sim.random_shots import random_shot

    rng = np.random.default_rng(seed)
    for i in range(n_random):
        shots.append((f"random:{i}", random_shot(rng)))
    return shots


def rephase(shot, rng, fps: float):
    """Move the strike to a random phase within a frame (the sim's default lead-in
    puts it exactly on a frame start at 60 and 120 fps, an unrealistic best case)."""
    lead = 0.6 + float(rng.uniform(0.0, 1.0 / fps))
    shot.lead_in = lead
    shot.strike_time = lead
    shot.duration = lead + shot.end_time + shot.tail
    return shot


def run(args) -> int:
    t0 = time.time()
    n_random = args.shots if args.shots is not None else (40 if args.quick else 200)
    shots = corpus(n_random, args.seed, args.quick)
    print(f"corpus: {len(shots)} shots ({n_random} random) x fps {args.fps}")
    rng = np.random.default_rng(args.seed + 1)
    rows = []
    failures = []
    for name, shot in shots:
        for fps in args.fps:
            rephase(shot, rng, fps)
            truth = onset_truth(shot.truth_record(fps), shot, fps)
            n_frames = int(math.floor(shot.duration * fps)) + 1
            dropped = []
            if rng.random() < 0.08:
                a = int(shot.strike_time * fps) + 1
                b = min(n_frames - 2, int((shot.strike_time + min(shot.end_time, 1.0)) * fps))
                if b > a:
                    dropped = [int(rng.integers(a, b))]
            tracks = tracks_from_truth(shot, fps, noise_mm=NOISE_MM, seed=int(rng.integers(1 << 30)),
                                       dropped=dropped, exposure_s=0.5 / fps)
            try:
                windows = segment_shots(tracks)
                if len(windows) != 1:
                    failures.append(f"{name}@{fps}: {len(windows)} shot windows")
                    if not windows:
                        continue
                rec = infer_shot(tracks, windows[0], shooter="A",
                                 settings=InferenceSettings(confidence=0.5, reach_doubt=args.reach_doubt))
            except VisionRefError as exc:
                failures.append(f"{name}@{fps}: {exc}")
                continue
            base = {"events": frame_level_events(tracks, windows[0])}
            rows.append({"name": name, "fps": fps, "rec": rec, "truth": truth, "base": base,
                         "dropped": bool(dropped), "struck_ok": rec["struck"] == truth["struck"]})
    elapsed = time.time() - t0

    def summarise(sel, conf):
        n = len(sel)
        order = sum(compare(with_confidence(r["rec"], conf), r["truth"]).order_ok for r in sel)
        errs, right, confident, tp, fp, fn, wrong, root_right, root_wrong = [], 0, 0, 0, 0, 0, [], 0, []
        for r in sel:
            c = compare(with_confidence(r["rec"], conf), r["truth"])
            errs += [e * r["fps"] for e in c.time_errors]  # in frames
            right += c.pins_right
            root_right += c.pins_root_right
            confident += c.pins_confident
            tp, fp, fn = tp + c.doubt_tp, fp + c.doubt_fp, fn + c.doubt_fn
            wrong += [f"{r['name']}@{r['fps']} {w}" for w in c.pins_wrong]
            root_wrong.extend(f"{r['name']}@{r['fps']} {w}" for w in c.roots_wrong)
        return {
            "n": n, "order": order / max(n, 1),
            "median_frames": statistics.median(errs) if errs else float("nan"),
            "p90_frames": float(np.percentile(errs, 90)) if errs else float("nan"),
            "attribution": right / confident if confident else float("nan"), "confident": confident,
            "root_attribution": root_right / confident if confident else float("nan"),
            "doubt_precision": tp / (tp + fp) if tp + fp else float("nan"),
            "doubt_recall": tp / (tp + fn) if tp + fn else float("nan"),
            "doubts": tp + fp, "wrong": wrong, "root_wrong": root_wrong,
        }

    def summarise_base(sel):
        errs, order, right, conf = [], 0, 0, 0
        for r in sel:
            c = compare(r["base"], r["truth"])
            order += c.order_ok
            errs += [e * r["fps"] for e in c.time_errors]
            right += c.pins_right
            conf += c.pins_confident
        return {"order": order / max(len(sel), 1), "median_frames": statistics.median(errs) if errs else float("nan"),
                "attribution": right / conf if conf else float("nan")}

    default = InferenceSettings().confidence
    print(f"inferred {len(rows)} shot records in {elapsed:.1f} s; failures: {len(failures)}")
    for f in failures[:10]:
        print("  ", f)
    print("\nper frame rate (default confidence %.3g):" % default)
    print(f"{'fps':>5} {'shots':>6} {'order':>7} {'base':>7} {'med dt':>12} {'base dt':>9} {'p90 dt':>8} "
          f"{'attrib':>7} {'base':>6} {'dbt P':>6} {'dbt R':>6}")
    for fps in args.fps:
        sel = [r for r in rows if r["fps"] == fps]
        s, b = summarise(sel, default), summarise_base(sel)
        print(f"{fps:>5} {s['n']:>6} {s['order']:>7.1%} {b['order']:>7.1%} "
              f"{s['median_frames']:>6.3f} fr {1e3 * s['median_frames'] / fps:>4.2f}ms {b['median_frames']:>6.3f} fr "
              f"{s['p90_frames']:>5.2f} fr {s['attribution']:>7.1%} {b['attribution']:>6.1%} "
              f"{s['doubt_precision']:>6.2f} {s['doubt_recall']:>6.2f}")
    kinds: dict[str, list[float]] = {}
    for r in rows:
        c = compare(with_confidence(r["rec"], default), r["truth"])
        for k, v in c.time_errors_by_kind.items():
            kinds.setdefault(k, []).extend(e * r["fps"] for e in v)
    print("\ntime error by contact kind (frames): " + ", ".join(
        f"{k} median {statistics.median(v):.3f} p90 {np.percentile(v, 90):.2f} (n={len(v)})" for k, v in sorted(kinds.items())))
    struck = sum(r["struck_ok"] for r in rows) / max(len(rows), 1)
    print(f"struck ball right: {struck:.1%}")
    bad_order = [r for r in rows if not compare(with_confidence(r["rec"], default), r["truth"]).order_ok]
    for r in bad_order[: args.show]:
        c = compare(with_confidence(r["rec"], default), r["truth"])
        print(f"  order wrong {r['name']}@{r['fps']}{' (dropped frame)' if r['dropped'] else ''}: "
              f"missing {c.missing} extra {c.extra}")
    print("\nconfidence sweep (all frame rates):")
    print(f"{'conf':>6} {'attrib':>8} {'root':>8} {'wrong':>6} {'doubts':>7} {'dbt P':>6} {'dbt R':>6} {'order':>7}")
    for conf in SWEEP:
        s = summarise(rows, conf)
        print(f"{conf:>6} {s['attribution']:>8.2%} {s['root_attribution']:>8.2%} {len(s['wrong']):>6} {s['doubts']:>7} "
              f"{s['doubt_precision']:>6.2f} {s['doubt_recall']:>6.2f} {s['order']:>7.1%}")
    s = summarise(rows, default)
    b = summarise_base(rows)
    for w in s["wrong"][: args.show]:
        print("  wrong attribution:", w)
    for w in s["root_wrong"][: args.show]:
        print("  wrong root ball (a silent wrong call risk):", w)
    print(f"\nelapsed {time.time() - t0:.1f} s")
    if args.json:
        import json

        metrics = {"shots": len(rows), "order": s["order"], "baseline_order": b["order"],
                   "median_dt_frames": s["median_frames"], "baseline_median_dt_frames": b["median_frames"],
                   "attribution": s["attribution"], "root_attribution": s["root_attribution"],
                   "root_wrong": len(s["root_wrong"]), "doubts": s["doubts"], "confidence": default,
                   "per_fps": {str(f): summarise([r for r in rows if r["fps"] == f], default)["order"]
                               for f in args.fps}}
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(metrics, fh, indent=1)
    print(f"events: shots={len(rows)} order={s['order']:.3f} baseline_order={b['order']:.3f} "
          f"median_dt_frames={s['median_frames']:.3f} baseline_median_dt_frames={b['median_frames']:.3f} "
          f"ratio={b['median_frames'] / s['median_frames']:.1f} attribution={s['attribution']:.4f} "
          f"root_attribution={s['root_attribution']:.4f} root_wrong={len(s['root_wrong'])} "
          f"baseline_attribution={b['attribution']:.3f} wrong={len(s['wrong'])} "
          f"doubt_precision={s['doubt_precision']:.2f} doubt_recall={s['doubt_recall']:.2f} "
          f"confidence={default} failures={len(failures)}")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="40 random shots instead of 200")
    ap.add_argument("--shots", type=int, default=None, help="number of random shots")
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--fps", type=float, nargs="+", default=[60.0, 120.0])
    ap.add_argument("--show", type=int, default=8, help="failures to list")
    ap.add_argument("--json", default=None, help="also write the summary metrics to this file")
    ap.add_argument("--reach-doubt", action="store_true",
                    help="InferenceSettings(reach_doubt=True): doubt as the simulator truth labels it")
    return run(ap.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
