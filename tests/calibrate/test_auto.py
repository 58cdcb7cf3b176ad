import numpy as np
import pytest

from vision_ref.calibrate.auto import calibrate_from_frames, first_still_frames
from vision_ref.calibrate.pose import NoseEdge, edge_line_error_px
from vision_ref.errors import CalibrationError
from vision_ref.messages import Frame
from vision_ref.rules.table import DEFAULT_TABLE as T

from .conftest import CUE_XY, grid_error_mm


def test_calibration_with_a_lens_file_maps_the_cloth_to_a_fraction_of_a_millimetre(small_camera, setup_frames):
    prof = calibrate_from_frames(setup_frames, lens=small_camera, source="test")
    med, worst = grid_error_mm(small_camera, prof.camera, T)
    # 728x544 is ~4.5 mm/px: these are a tenth of a pixel
    assert med < 0.5 and worst < 1.2
    assert max(edge_line_error_px(small_camera, prof.camera, T, NoseEdge.for_table(T)).values()) < 0.3
    pos = prof.extra["setup_positions"]
    assert np.hypot(*(np.array(pos["balls"]["cue"]) - CUE_XY)) < 5.0  # ~1 px at 728x544: only used for colour masks
    assert np.hypot(*(np.array(pos["balls"]["white1"]) - T.ball_spot(1))) < 5.0
    assert set(pos["pins"]) == {"king", "head", "foot", "left", "right"}
    assert prof.background.shape == (272, 364, 3)
    assert prof.quality["marks_found"] >= 15  # the rail diamonds


def test_calibration_without_a_lens_estimates_it(small_camera, setup_frames):
    prof = calibrate_from_frames(setup_frames, source="test")
    med, worst = grid_error_mm(small_camera, prof.camera, T, z=T.ball_radius)
    assert med < 1.5 and worst < 4.0
    assert prof.camera.dist[0] == pytest.approx(-0.06, abs=0.03)


def test_manual_corners(small_camera, setup_frames):
    corners = small_camera.project(np.array([[-1420, 710, 37], [1420, 710, 37], [1420, -710, 37], [-1420, -710, 37]], float))
    prof = calibrate_from_frames(setup_frames[:1], lens=small_camera, corners=corners[[2, 0, 3, 1]].tolist())
    med, worst = grid_error_mm(small_camera, prof.camera, T)
    assert med < 2.0 and worst < 5.0
    assert prof.extra["method"] == "corners"


def test_lens_for_another_resolution_is_refused(setup_frames):
    from vision_ref.camera import CameraModel

    with pytest.raises(CalibrationError, match="1456x1088"):
        calibrate_from_frames(setup_frames, lens=CameraModel.overhead(1456, 1088))


def test_missing_balls_are_reported(small_renderer):
    from vision_ref.calibrate.colours import SetupPositions
    from vision_ref.calibrate.truth import StillScene

    pos = SetupPositions.standard()
    del pos.balls["cue"]
    frame = small_renderer.render_frame(StillScene(pos), 0)
    with pytest.raises(CalibrationError, match="three balls"):
        calibrate_from_frames([frame])


def test_first_still_frames_skips_motion():
    rng = np.random.default_rng(0)
    base = rng.integers(0, 255, (64, 96, 3), dtype=np.uint8)
    frames = [Frame(i, i * 1000, bgr=rng.integers(0, 255, (64, 96, 3), dtype=np.uint8)) for i in range(5)]
    frames += [Frame(5 + i, (5 + i) * 1000, bgr=base.copy()) for i in range(6)]
    start, still = first_still_frames(iter(frames), n=4)
    assert start == 5 and len(still) == 4


def test_calibrate_from_video_uses_the_first_still_frames(small_camera, setup_frames, tmp_path):
    from vision_ref.calibrate.auto import calibrate_from_video
    from vision_ref.calibrate.lens import LensCalibration, BoardSpec
    from vision_ref.video import write_video

    rng = np.random.default_rng(0)
    moving = [np.clip(setup_frames[0].astype(np.int16) + rng.integers(-60, 60, setup_frames[0].shape), 0, 255).astype(np.uint8)
              for _ in range(3)]
    video = write_video(tmp_path / "clip.mp4", moving + setup_frames * 3, fps=30.0, crf=12)
    lens = tmp_path / "lens.json"
    LensCalibration(small_camera, 0.1, 5, 100, BoardSpec()).save(lens)
    prof, first = calibrate_from_video(video, lens=str(lens))
    assert first >= 3
    med, worst = grid_error_mm(small_camera, prof.camera, T)
    assert med < 1.0 and worst < 2.5
    with pytest.raises(CalibrationError, match="does not exist"):
        calibrate_from_video(tmp_path / "none.mp4")


def test_a_missing_pin_is_noted_not_invented(small_camera, small_renderer, setup_positions):
    from vision_ref.calibrate.colours import SetupPositions
    from vision_ref.calibrate.truth import StillScene

    pos = SetupPositions(dict(setup_positions.balls), {k: v for k, v in setup_positions.pins.items() if k != "left"})
    frame = small_renderer.render_frame(StillScene(pos), 0)
    prof = calibrate_from_frames([frame], lens=small_camera)
    assert sorted(prof.extra["setup_positions"]["pins"]) == ["foot", "head", "king", "right"]
    assert any("left pin" in n for n in prof.extra["notes"])


def test_sides_taken_from_the_wrong_edge_are_repaired_by_the_diamonds(small_camera, setup_frames, monkeypatch):
    """Head and foot found one cushion width out (the rail's edge): their own fit cannot tell,
    the rail diamonds can; the noses are re-found near the camera the diamonds give."""
    from vision_ref.calibrate import auto
    from vision_ref.calibrate import table_detect as td

    real = td.find_cushion_edges

    def wrong_short_sides(frame, coarse, table=T, **kw):
        out = real(frame, coarse, table, **kw)
        names = auto.assign_cushions(coarse.quad)
        for i, n in enumerate(names):
            if n in ("head", "foot"):
                sign = -1.0 if n == "head" else 1.0
                out.points[i] = out.points[i] + np.array([sign * 10.0, 0.0])  # ~45 mm outwards at 728 px
        return out

    monkeypatch.setattr(auto, "find_cushion_edges", wrong_short_sides)
    fit, edges, marks, info = auto.locate_table(setup_frames[0], lens=small_camera)
    med, worst = grid_error_mm(small_camera, fit.camera, T)
    assert med < 0.8 and worst < 2.0
    assert any("diamonds" in n for n in info.get("notes", []))
