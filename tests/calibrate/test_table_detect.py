import numpy as np
import pytest

from vision_ref.calibrate.pose import NoseEdge, assign_cushions, cushion_coordinate
from vision_ref.calibrate.table_detect import find_cloth_region, find_cushion_edges, rising_edges
from vision_ref.errors import CalibrationError
from vision_ref.rules.table import DEFAULT_TABLE as T


def _true_offsets(cam, cushion, pts):
    """Distance (px) of edge points from the true seen-edge line (projected densely through the lens)."""
    edge = NoseEdge.for_table(T)
    axis, c = cushion_coordinate(cushion, T, edge)
    t = np.linspace(-1.05, 1.05, 800)
    if axis == 0:
        P = np.column_stack([np.full_like(t, c), t * T.half_width, np.full_like(t, edge.height_mm)])
    else:
        P = np.column_stack([t * T.half_length, np.full_like(t, c), np.full_like(t, edge.height_mm)])
    line = cam.project(P)
    return np.array([np.min(np.linalg.norm(line - p, axis=1)) for p in pts])


def test_nose_points_lie_on_the_true_cushion_lines(small_camera, setup_frame):
    coarse = find_cloth_region(setup_frame)
    edges = find_cushion_edges(setup_frame, coarse)
    names = assign_cushions(coarse.quad)
    assert sorted(names) == ["foot", "head", "left", "right"]
    for name, pts in zip(names, edges.points):
        off = _true_offsets(small_camera, name, pts)
        assert len(pts) > 40
        assert np.median(off) < 0.3, name
        assert np.percentile(off, 95) < 0.8, name


def test_a_ball_against_a_cushion_does_not_move_the_line(small_camera, small_renderer, setup_positions):
    from vision_ref.calibrate.colours import SetupPositions
    from vision_ref.calibrate.truth import StillScene

    pos = SetupPositions(dict(setup_positions.balls), dict(setup_positions.pins))
    pos.balls["white2"] = (400.0, T.half_width - T.ball_radius - 0.5)  # touching the left cushion
    frame = small_renderer.render_frame(StillScene(pos), 0)
    coarse = find_cloth_region(frame)
    edges = find_cushion_edges(frame, coarse)
    names = assign_cushions(coarse.quad)
    pts = edges.points[names.index("left")]
    off = _true_offsets(small_camera, "left", pts)
    assert np.percentile(off, 95) < 0.8
    # the profiles through the ball were rejected, not bent into the line
    ball_u = small_camera.project(np.array([[400.0, T.half_width - T.ball_radius, T.ball_radius]]))[0]
    assert np.min(np.abs(pts[:, 0] - ball_u[0])) > 3.0


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: np.full((544, 728, 3), 5, np.uint8), "too dark"),
        (lambda: np.full((544, 728, 3), 255, np.uint8), "overexposed"),
        (lambda: np.random.default_rng(0).integers(0, 255, (544, 728, 3), dtype=np.uint8), "no table"),
    ],
)
def test_unusable_frames_are_refused_with_the_reason(make, message):
    with pytest.raises(CalibrationError, match=message):
        find_cloth_region(make())


def test_a_table_cut_off_by_the_frame_is_refused():
    from vision_ref.camera import CameraModel
    from vision_ref.sim.render import Renderer, RenderSettings

    cam = CameraModel.overhead(364, 272, offset_mm=(400.0, 0.0))
    frame = Renderer(cam, settings=RenderSettings(draw_cue=False)).background()
    with pytest.raises(CalibrationError, match="cut off"):
        find_cloth_region(frame)


def test_rising_edges_finds_a_blurred_step_to_subpixel():
    s = np.arange(0, 40, 0.25)
    for true in (17.3, 20.0, 22.61):
        prof = 40 + 30 / (1 + np.exp(-(s - true) / 0.6))
        pos, strength = rising_edges(s, prof, 1.0)
        assert len(pos) == 1 and abs(pos[0] - true) < 0.03
