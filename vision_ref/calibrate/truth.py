"""Ground-truth calibration profiles from the renderer's known camera (for tests of later stages).

``profile_from_camera`` takes the exact camera the renderer uses, renders the empty
table (the background) and a set-up frame (whites on spots 1 and 3, pins on their
places, the cue ball in the head area), and learns the colours from that frame with
the same code as the real calibration (:func:`vision_ref.calibrate.colours.learn_colours`).
So a tracker tested against it sees a profile like a real one, minus pose error.
"""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np

from vision_ref.calibrate.colours import SetupPositions, identity_check, learn_colours
from vision_ref.calibrate.profile import CalibrationProfile
from vision_ref.camera import CameraModel
from vision_ref.messages import PinState
from vision_ref.rules.table import BALL_IDS, DEFAULT_TABLE, PIN_IDS, TableSpec
from vision_ref.sim.world import WorldSamples


class StillScene:
    """A ShotSimulation where nothing moves: balls and standing pins at given places, no cue stick.

    Rendering it needs no physics, so set-up frames at arbitrary positions are cheap.
    """

    def __init__(self, positions: SetupPositions, table: TableSpec = DEFAULT_TABLE, duration: float = 1.0):
        self.positions = positions
        self.table = table
        self.duration = float(duration)
        self.strike_time = float(duration)  # never struck

    def sample(self, times: np.ndarray) -> WorldSamples:
        t = np.atleast_1d(np.asarray(times, dtype=np.float64))
        f = len(t)
        nb, npin = len(BALL_IDS), len(PIN_IDS)
        ball_xyz = np.zeros((f, nb, 3))
        ball_vis = np.zeros((f, nb), bool)
        for k, b in enumerate(BALL_IDS):
            if b in self.positions.balls:
                x, y = self.positions.balls[b]
                ball_xyz[:, k] = (x, y, self.table.ball_radius)
                ball_vis[:, k] = True
            else:
                ball_xyz[:, k] = (0.0, 0.0, -1000.0)
        pin_xy = np.zeros((f, npin, 2))
        pin_vis = np.zeros((f, npin), bool)
        pin_state = np.full((f, npin), int(PinState.ABSENT), dtype=np.int8)
        for k, p in enumerate(PIN_IDS):
            if p in self.positions.pins:
                pin_xy[:, k] = self.positions.pins[p]
                pin_vis[:, k] = True
                pin_state[:, k] = int(PinState.STANDING)
        return WorldSamples(
            t=t, ball_xyz=ball_xyz, ball_rot=np.zeros((f, nb, 3)), ball_visible=ball_vis,
            pin_xy=pin_xy, pin_tilt=np.zeros((f, npin)), pin_dir=np.zeros((f, npin)),
            pin_z=np.zeros((f, npin)), pin_state=pin_state, pin_visible=pin_vis,
            cue_tip=np.zeros((f, 2)), cue_angle=np.zeros(f), cue_visible=np.zeros(f, bool),
        )

    def truth_record(self) -> dict:
        return {"still": True, "positions": self.positions.to_dict()}


def render_setup_frame(renderer, positions: SetupPositions | None = None, frame_index: int = 0) -> np.ndarray:
    """A rendered frame of the set-up position (BGR uint8) with the renderer's camera and light."""
    positions = positions or SetupPositions.standard(renderer.table)
    return renderer.render_frame(StillScene(positions, renderer.table), frame_index)


def profile_from_camera(
    camera: CameraModel,
    table: TableSpec = DEFAULT_TABLE,
    settings=None,
    renderer=None,
    positions: SetupPositions | None = None,
    background_scale: float = 0.5,
) -> CalibrationProfile:
    """A calibration profile with the renderer's exact camera; background and colours rendered/learnt.

    ``settings`` (RenderSettings) set the cloth, cue-ball colour and lamps; pass the
    ``renderer`` you render test footage with to reuse its ray-cast background.
    """
    from vision_ref.sim.render import Renderer, RenderSettings

    if renderer is None:
        st = settings or RenderSettings()
        renderer = Renderer(camera, table, replace(st, draw_cue=False))
    elif (renderer.camera.width, renderer.camera.height) != (camera.width, camera.height):
        raise ValueError("profile_from_camera: the renderer's camera size differs from the camera given")
    positions = positions or SetupPositions.standard(table)
    frame = render_setup_frame(renderer, positions)
    colours = learn_colours(frame, camera, positions, table)
    bg = renderer.background()
    if background_scale != 1.0:
        bg = cv2.resize(bg, None, fx=background_scale, fy=background_scale, interpolation=cv2.INTER_AREA)
    st = renderer.settings
    return CalibrationProfile(
        camera=CameraModel.from_dict(camera.to_dict()),
        table=table,
        colours=colours,
        background=bg,
        background_scale=background_scale,
        source="ground truth (renderer camera)",
        quality={"pose_error_mm": 0.0, **{f"sep_{k}": round(v, 2) for k, v in identity_check(colours).items()}},
        extra={
            "method": "truth",
            "setup_positions": positions.to_dict(),
            "render": {"cloth_rgb": list(st.cloth_rgb), "cue_ball_rgb": list(st.cue_ball_rgb),
                       "lamps": st.lamps if isinstance(st.lamps, str) else [list(l) for l in st.lamps]},
        },
    )
