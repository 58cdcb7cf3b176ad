import json

import numpy as np
import pytest

from vision_ref.calibrate.lens import BoardSpec, board_view_cameras, calibrate_lens, load_lens, render_board_view
from vision_ref.camera import CameraModel
from vision_ref.errors import CalibrationError


@pytest.fixture(scope="module")
def views():
    spec = BoardSpec()
    base = CameraModel.overhead(728, 544, dist=(-0.07, 0.015, 0, 0, 0))
    cams = board_view_cameras(base, spec, n=7, seed=2)
    return base, spec, [render_board_view(c, spec, px_per_mm=5.0, seed=i) for i, c in enumerate(cams)]


def test_charuco_calibration_recovers_the_lens(views, tmp_path):
    base, spec, ims = views
    cal = calibrate_lens(ims, spec)
    assert cal.camera.K[0, 0] == pytest.approx(base.K[0, 0], rel=0.005)
    assert cal.camera.dist[0] == pytest.approx(-0.07, abs=0.01)
    assert cal.rms_px < 0.3
    cal.save(tmp_path / "lens.json")
    back = load_lens(tmp_path / "lens.json")
    assert np.allclose(back.K, cal.camera.K) and (back.width, back.height) == (728, 544)
    assert json.loads((tmp_path / "lens.json").read_text())["format"] == "vision-ref.lens/1"


def test_no_board_in_view_says_what_to_fix():
    blank = [np.full((240, 320, 3), 128, np.uint8)] * 5
    with pytest.raises(CalibrationError, match="board was found in 0 of 5"):
        calibrate_lens(blank)


def test_board_file_in_the_repo_matches_the_default():
    from vision_ref.calibrate.lens import DEFAULT_BOARD_JSON

    assert DEFAULT_BOARD_JSON.exists()
    assert BoardSpec.load() == BoardSpec()


def test_bad_lens_file(tmp_path):
    p = tmp_path / "lens.json"
    p.write_text("{not json")
    with pytest.raises(CalibrationError, match="not readable JSON"):
        load_lens(p)
    with pytest.raises(CalibrationError, match="does not exist"):
        load_lens(tmp_path / "missing.json")
