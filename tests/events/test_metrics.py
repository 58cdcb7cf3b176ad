"""Accuracy ratchet of event inference on a seeded corpus (perfect-detector tracks).

A smaller cut of ``python benchmarks/events.py``: the scenario library and 16 seeded
random shots at 60 fps, 0.7 mm noise, exposure half a frame, a random strike phase.
The figures are kept in ``metrics.json``; the test fails when any gets worse, so
accuracy can only ratchet up. After an improvement, rewrite the file with
``VISION_REF_UPDATE_METRICS=1 python -m pytest tests/events/test_metrics.py``.
"""

import json
import os
import statistics
import warnings
from pathlib import Path

import numpy as np

from tests.events.conftest import rephase
from vision_ref.events.compare import compare, onset_truth
from vision_ref.events.infer import infer_shot
from vision_ref.events.segment import segment_shots
from vision_ref.events.synthetic import tracks_from_truth
from vision_ref.sim.random_shots import random_shot
from vision_ref.sim.scenarios import list_scenarios

METRICS = Path(__file__).with_name("metrics.json")
FPS = 60.0
# at most this much worse than the recorded figure (a float printed to 4 places)
TOLERANCE = {"order": 0.0, "attribution": 0.0, "root_attribution": 0.0, "median_dt_frames": 0.002}


def measure() -> dict:
    rng = np.random.default_rng(77)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        shots = [s.simulate(0) for s in list_scenarios()] + [random_shot(rng) for _ in range(16)]
    order, errs, confident, right, root_right = 0, [], 0, 0, 0
    for i, shot in enumerate(shots):
        rephase(shot, FPS, rng.uniform())
        truth = onset_truth(shot.truth_record(FPS), shot, FPS)
        tracks = tracks_from_truth(shot, FPS, noise_mm=0.7, seed=i, exposure_s=0.5 / FPS)
        windows = segment_shots(tracks)
        assert len(windows) == 1, f"shot {i}: {len(windows)} windows"
        c = compare(infer_shot(tracks, windows[0], shooter="A"), truth)
        order += c.order_ok
        errs += [e * FPS for e in c.time_errors]
        confident += c.pins_confident
        right += c.pins_right
        root_right += c.pins_root_right
    return {"shots": len(shots), "order": round(order / len(shots), 4),
            "median_dt_frames": round(statistics.median(errs), 4),
            "attribution": round(right / max(confident, 1), 4),
            "root_attribution": round(root_right / max(confident, 1), 4)}


def test_event_accuracy_only_ratchets_up():
    got = measure()
    if os.environ.get("VISION_REF_UPDATE_METRICS"):
        METRICS.write_text(json.dumps(got, indent=1) + "\n")
    want = json.loads(METRICS.read_text())
    assert got["shots"] == want["shots"]
    for key in ("order", "attribution", "root_attribution"):
        assert got[key] >= want[key] - TOLERANCE[key], f"{key}: {got[key]} < recorded {want[key]}"
    assert got["median_dt_frames"] <= want["median_dt_frames"] + TOLERANCE["median_dt_frames"], \
        f"median_dt_frames: {got['median_dt_frames']} > recorded {want['median_dt_frames']}"
