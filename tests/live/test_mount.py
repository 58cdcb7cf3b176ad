import pytest

from vision_ref.cli import main
from vision_ref.live.mount import plan
from vision_ref.rules.table import DEFAULT_TABLE as T


def test_view_holds_the_table_with_rails_and_height_scales_with_focal():
    plans = plan("imx296")
    edge = T.cushion_width + T.rail_width + 40.0
    for p in plans:
        assert p.view_mm[0] >= T.length + 2 * edge - 1e-6 and p.view_mm[1] >= T.width + 2 * edge - 1e-6
    ratios = {round(p.height_mm / p.focal_mm, 6) for p in plans}
    assert len(ratios) == 1  # pinhole: height proportional to focal length
    a = plan("imx296", 4.0)[0]
    assert a.height_mm == pytest.approx(plan("imx296", 2.0)[0].height_mm * 2)
    assert a.ball_px == pytest.approx(T.ball_diameter / a.mm_per_px)
    assert a.blur_mm == pytest.approx(10.0)  # 5 m/s for 2 ms


def test_16_9_sensor_is_bound_by_the_width():
    assert plan("imx708")[0].binding == "width"
    with pytest.raises(ValueError, match="unknown sensor"):
        plan("ov9281")


def test_mount_command(capsys):
    assert main(["mount", "--sensor", "imx708", "--ceiling", "2500"]) == 0
    out = capsys.readouterr().out
    assert "4.74 mm lens" in out and "above the ceiling" in out
    assert main(["mount", "--sensor", "nope"]) == 2
