"""Event-based shot physics vs the fixed-step reference integrator, in the same run.

    python benchmarks/simulate.py [--quick]

Shots: seeded random shots (vision_ref.sim.random_shots) whose balls never touch a
pin (the fixed-step reference integrates balls only). For each shot:

- speed: CPU time of ``simulate()`` (events, pins included; the machine is shared) vs
  ``_physics_kernels.fixed_step_reference`` run to rest at dt = 1 ms, 0.1 ms, 10 us;
- accuracy of the reference: centre error (mm) against the exact event-based
  trajectory at 0.5 s and 1.5 s and at rest, and its first ball-ball collision time
  error (the step at which it resolves the contact vs the exact root);
- exactness of the event times: the largest |centre distance - 2R| at recorded
  ball-ball events and |coordinate - bound| at cushion events (should be ~1e-9 mm).

Last line: ``simulate: key=value ...``.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from vision_ref.rules.table import BALL_IDS, DEFAULT_TABLE
from vision_ref.sim import _physics_kernels as K
from vision_ref.sim.physics import DEFAULT_PARAMS
from vision_ref.sim.random_shots import random_layout_and_strike

T = DEFAULT_TABLE
R = T.ball_radius
P = DEFAULT_PARAMS.ball_vector(T)
BOUNDS = np.array([T.half_length - R, T.half_width - R])


def initial_state(shot):
    r = np.array([tr.R[0, :2] for tr in shot.tracks])
    v = np.zeros((3, 2))
    w = np.zeros((3, 3))
    state = np.zeros(3, dtype=np.int64)
    si = BALL_IDS.index(shot.strike.ball)
    v0, w0 = shot.strike.initial_velocity(R)
    v[si], w[si] = v0, w0
    state[si] = K.classify(v[si], w[si], P)
    return r, v, w, state


def fixed_step_run(shot, dt, t_end):
    r, v, w, s = initial_state(shot)
    t0 = time.process_time()
    steps = K.fixed_step_reference(r, v, w, s, P, BOUNDS, dt, t_end)
    return r, time.process_time() - t0, steps


def fixed_step_first_collision(shot, dt, t_max):
    """Time at which the reference resolves its first ball-ball contact (one step per call)."""
    r, v, w, s = initial_state(shot)
    n = int(t_max / dt) + 2
    for k in range(n):
        before = v.copy()
        K.fixed_step_reference(r, v, w, s, P, BOUNDS, dt, dt)
        # a ball-ball impulse changes two balls' velocities at once by more than friction can
        jump = np.linalg.norm(v - before, axis=1) > 50.0 * P[K.P_MU_S] * P[K.P_G] * dt + 1.0
        if jump.sum() >= 2:
            return (k + 1) * dt
    return math.nan


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer shots, skip the 10 us reference")
    args = ap.parse_args()
    n_shots = 6 if args.quick else 20
    dts = (1e-3, 1e-4) if args.quick else (1e-3, 1e-4, 1e-5)

    from vision_ref.sim.physics import Layout, simulate

    # warm up numba (compile / cache load) outside the timings
    rng = np.random.default_rng(0)
    balls, strike = random_layout_and_strike(rng)
    sh = simulate(Layout.standard(balls=balls), strike)
    fixed_step_run(sh, 1e-3, 0.01)

    shots, sim_times = [], []
    seed = 0
    while len(shots) < n_shots:
        seed += 1
        balls, strike = random_layout_and_strike(np.random.default_rng(seed), at_pins=0.0)
        t0 = time.process_time()
        shot = simulate(Layout.standard(balls=balls), strike)
        dt_sim = time.process_time() - t0
        if any(e.type == "pin_hit" for e in shot.events) or not any(e.type == "ball_ball" for e in shot.events):
            continue
        shots.append(shot)
        sim_times.append(dt_sim)
    ev_ms = 1e3 * float(np.median(sim_times))
    print(f"event-based: {n_shots} shots, median {ev_ms:.2f} ms per shot (pins included), "
          f"median {np.median([s.n_events for s in shots]):.0f} events, {np.median([s.end_time for s in shots]):.1f} s of play")

    # exactness of the event times
    gap_err = cush_err = 0.0
    for shot in shots:
        for e in shot.events:
            if e.type == "ball_ball":
                i, j = BALL_IDS.index(e.data["a"]), BALL_IDS.index(e.data["b"])
                pi_ = shot.tracks[i].evaluate(np.array([e.t]))[0][0, :2]
                pj = shot.tracks[j].evaluate(np.array([e.t]))[0][0, :2]
                gap_err = max(gap_err, abs(float(np.hypot(*(pi_ - pj))) - 2 * R))
            elif e.type == "cushion":
                i = BALL_IDS.index(e.data["ball"])
                axis = 0 if e.data["cushion"] in ("head", "foot") else 1
                p = shot.tracks[i].evaluate(np.array([e.t]))[0][0]
                cush_err = max(cush_err, abs(abs(float(p[axis])) - BOUNDS[axis]))
    print(f"event times exact: max |distance - 2R| at ball-ball events {gap_err:.1e} mm, "
          f"max |x - bound| at cushion events {cush_err:.1e} mm")

    summary = {"shots": n_shots, "event_ms": round(ev_ms, 3), "event_gap_err_mm": f"{gap_err:.1e}"}
    for dt in dts:
        times, errs, coll = [], {0.5: [], 1.5: [], "rest": []}, []
        for shot in shots:
            for tq in (0.5, 1.5):
                r, _, _ = fixed_step_run(shot, dt, tq)
                exact = np.array([tr.evaluate(np.array([tq]))[0][0, :2] for tr in shot.tracks])
                errs[tq].append(float(np.max(np.linalg.norm(r - exact, axis=1))))
            r, el, _ = fixed_step_run(shot, dt, 60.0)
            times.append(el)
            exact = np.array([tr.evaluate(np.array([shot.end_time + 1.0]))[0][0, :2] for tr in shot.tracks])
            errs["rest"].append(float(np.max(np.linalg.norm(r - exact, axis=1))))
            t1 = next(e.t for e in shot.events if e.type == "ball_ball")
            if dt >= 1e-4:
                coll.append(abs(fixed_step_first_collision(shot, dt, t1 + 0.05) - t1))
        ms = 1e3 * float(np.median(times))
        ratio = ms / ev_ms
        ct = f", first-collision time error median {1e3 * np.nanmedian(coll):.3f} ms" if coll else ""
        print(f"fixed step dt={dt:g} s: median {ms:.2f} ms per shot ({ratio:.1f}x the event-based time); "
              f"centre error median {np.median(errs[0.5]):.2f} mm at 0.5 s, {np.median(errs[1.5]):.2f} mm at 1.5 s, "
              f"{np.median(errs['rest']):.1f} mm at rest{ct}")
        key = f"{dt:g}".replace("-", "m").replace(".", "p")
        summary[f"ratio_dt{key}"] = round(ratio, 2)
        summary[f"rest_err_mm_dt{key}"] = round(float(np.median(errs["rest"])), 2)
    print("simulate: " + " ".join(f"{k}={v}" for k, v in summary.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
