"""What the physics hands the renderer (and the truth writer): the world sampled at times.

A simulated shot is a continuous-time object (event-based physics gives piecewise
analytic motion), so the renderer can sample it at several sub-times per exposure
for motion blur. Object order: balls BALL_IDS, pins PIN_IDS (vision_ref.rules.table).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from vision_ref.messages import N_BALLS, N_PINS


@dataclass
class WorldSamples:
    """The world at ``F`` times.

    balls: ``ball_xyz`` (F,3,3) centre in table mm (z = radius when on the cloth;
    a ball leaving the table or lifted by hand has other z or ``ball_visible`` False);
    ``ball_rot`` (F,3,3) rotation vector of each ball (for surface markings, may be 0).
    pins: ``pin_xy`` (F,5,2) base centre; ``pin_tilt`` (F,5) 0 upright .. pi/2 lying;
    ``pin_dir`` (F,5) direction (radians, table frame) the pin's head points when
    tilted; ``pin_z`` (F,5) height of the base above the cloth (rail: the rail top);
    ``pin_state`` (F,5) PinState codes; ``pin_visible`` (F,5).
    cue stick: ``cue_tip`` (F,2) mm, ``cue_angle`` (F,) direction from tip to butt,
    ``cue_visible`` (F,) bool (the arm follows the stick's butt).
    """

    t: np.ndarray
    ball_xyz: np.ndarray
    ball_rot: np.ndarray
    ball_visible: np.ndarray
    pin_xy: np.ndarray
    pin_tilt: np.ndarray
    pin_dir: np.ndarray
    pin_z: np.ndarray
    pin_state: np.ndarray
    pin_visible: np.ndarray
    cue_tip: np.ndarray
    cue_angle: np.ndarray
    cue_visible: np.ndarray

    def __post_init__(self) -> None:
        f = len(np.atleast_1d(self.t))
        shapes = {
            "ball_xyz": (f, N_BALLS, 3),
            "ball_rot": (f, N_BALLS, 3),
            "ball_visible": (f, N_BALLS),
            "pin_xy": (f, N_PINS, 2),
            "pin_tilt": (f, N_PINS),
            "pin_dir": (f, N_PINS),
            "pin_z": (f, N_PINS),
            "pin_state": (f, N_PINS),
            "pin_visible": (f, N_PINS),
            "cue_tip": (f, 2),
            "cue_angle": (f,),
            "cue_visible": (f,),
        }
        for name, shape in shapes.items():
            arr = np.asarray(getattr(self, name))
            if arr.shape != shape:
                raise ValueError(f"WorldSamples.{name}: expected shape {shape}, got {arr.shape}")
            setattr(self, name, arr)

    def __len__(self) -> int:
        return len(self.t)


class ShotSimulation(Protocol):
    """A simulated shot (or stretch of play): continuous in time, exact events."""

    duration: float  # seconds from the start of the clip to everything at rest (+ tail)
    strike_time: float  # seconds from the start of the clip to the strike

    def sample(self, times: np.ndarray) -> WorldSamples:
        """The world at the given clip times (seconds), any order, any count."""
        ...

    def truth_record(self) -> dict:
        """The exact shot record (SHOT_RECORD.md, times from the strike)."""
        ...
