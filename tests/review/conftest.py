"""Shared fixtures of the review tests: simulated shots with known truth (no rendering)."""

import json
import math
import os
import warnings
from pathlib import Path

import pytest

from vision_ref.rules import Match


def _shot(angle_offset: float, speed: float = 4000.0):
    from vision_ref.sim.physics import Layout, Strike, simulate

    angle = math.atan2(-150, 200) + angle_offset
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return simulate(Layout.standard(), Strike("cue", speed, angle, 0.1, 0.2), lead_in=0.3, tail=0.3)


@pytest.fixture(scope="session")
def foul_shot():
    """The cue ball hits white1, then white2 ... and knocks three pins itself (F5)."""
    shot = _shot(0.04)
    record = shot.truth_record(60)
    decision = Match(["A", "B"]).play(record)
    assert decision["foul"] and decision["pins_down"], "fixture shot changed: it must be an F5 foul with pins down"
    return shot, record, decision


@pytest.fixture(scope="session")
def legal_shot():
    """The cue ball hits white1, which knocks pins legally (L1)."""
    shot = _shot(-0.08)
    record = shot.truth_record(60)
    decision = Match(["A", "B"]).play(record)
    assert not decision["foul"] and decision["points"] > 0, "fixture shot changed: it must score legally"
    return shot, record, decision


CACHE = Path(os.environ.get("VISION_REF_TEST_CACHE", "/tmp/vision-ref-test-cache")) / "review"
FPS = 30.0
SIZE = (546, 408)
NAME = "e2e_v2"  # v2: the sidecar records the exposure


def _clip_shot():
    from vision_ref.sim.physics import Layout, Strike, simulate

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        # slow: the cue ball takes white1, which runs into the right cushion; short clip
        return simulate(Layout.standard(), Strike("cue", 1200, math.atan2(-150, 200) + 0.1, 0.0, 0.2),
                        lead_in=0.25, tail=0.8)


class Clip(tuple):
    """(video, truth record, profile path), with the clip's ``fps`` and ``size``."""

    fps = FPS
    size = SIZE


@pytest.fixture(scope="session")
def clip():
    """A small rendered one-shot clip (546x408, 30 fps, no cue stick; ~10 s to render,
    cached under /tmp/vision-ref-test-cache/review): (video, truth record, profile path)."""
    from vision_ref.calibrate.truth import profile_from_camera
    from vision_ref.camera import CameraModel
    from vision_ref.sim.render import RenderSettings, render_clip

    CACHE.mkdir(parents=True, exist_ok=True)
    video, truth, prof = CACHE / f"{NAME}.mp4", CACHE / f"{NAME}.truth.json", CACHE / f"{NAME}.profile.json"
    cam = CameraModel.overhead(*SIZE)
    if not (video.is_file() and truth.is_file() and prof.is_file()):
        render_clip(_clip_shot(), cam, RenderSettings(fps=FPS, player="none", draw_cue=False, preset="veryfast"), CACHE, NAME)
        profile_from_camera(cam).save(prof)
    return Clip((video, json.loads(truth.read_text())["record"], prof))


