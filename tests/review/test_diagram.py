import math

import numpy as np
import pytest

from vision_ref.review.diagram import (
    BALL_COLOURS,
    ShotPaths,
    _Canvas,
    contact_marks,
    draw_shot_diagram,
    write_png,
)
from vision_ref.rules.table import BALL_IDS, DEFAULT_TABLE


def _reference_position(t, xy, when):
    """Plain reference for ShotPaths.position: linear interpolation over finite samples."""
    ok = np.isfinite(xy).all(axis=1)
    tt, pts = t[ok], xy[ok]
    return float(np.interp(when, tt, pts[:, 0])), float(np.interp(when, tt, pts[:, 1]))


def test_position_interpolates_over_gaps_like_the_reference():
    rng = np.random.default_rng(3)
    t = np.sort(rng.uniform(0, 2, 50))
    xy = rng.normal(0, 300, (50, 2))
    xy[rng.choice(50, 10, replace=False)] = np.nan
    paths = ShotPaths(t, {"cue": xy})
    for when in rng.uniform(t[0], t[-1], 20):
        assert paths.position("cue", when) == pytest.approx(_reference_position(t, xy, when))


def test_last_seen_gives_the_last_finite_position_before_t():
    t = np.arange(6) * 0.1
    xy = np.array([[0, 0], [10, 0], [20, 0], [np.nan, np.nan], [np.nan, np.nan], [np.nan, np.nan]], float)
    paths = ShotPaths(t, {"white2": xy})
    assert paths.position("white2", 0.45, last_seen=True) == (20.0, 0.0)
    assert paths.position("king", 0.1) is None


def test_simulation_paths_start_at_the_record_positions(foul_shot):
    shot, record, _ = foul_shot
    paths = ShotPaths.from_simulation(shot, fps=120)
    assert paths.t[0] == pytest.approx(0.0)
    for b in BALL_IDS:
        assert paths.position(b, 0.0) == pytest.approx(tuple(record["before"]["balls"][b]), abs=0.5)
        assert paths.position(b, paths.t[-1]) == pytest.approx(tuple(record["after"]["balls"][b]), abs=0.5)


def test_contact_marks_sit_where_the_contacts_happened(foul_shot):
    shot, record, _ = foul_shot
    paths = ShotPaths.from_simulation(shot, fps=2000)  # fine enough that the kinks are sharp
    marks = contact_marks(record, paths)
    events = [e for e in record["events"] if e["type"] != "strike"]
    assert [m.number for m in marks] == list(range(1, len(events) + 1))
    R = DEFAULT_TABLE.ball_radius
    seen = set()
    for m, ev in zip(marks, events):
        seen.add(ev["type"])
        assert m.t == pytest.approx(ev["t"])
        if ev["type"] == "cushion":
            axis, c = DEFAULT_TABLE.cushion_line(ev["cushion"])
            assert (m.xy[0] if axis == "x" else m.xy[1]) == pytest.approx(c)
        elif ev["type"] == "ball_ball":
            pa = paths.position(ev["a"], ev["t"])
            pb = paths.position(ev["b"], ev["t"])
            # the contact point is midway between two touching balls, a radius from each
            assert math.dist(m.xy, pa) == pytest.approx(R, abs=3.0)
            assert math.dist(m.xy, pb) == pytest.approx(R, abs=3.0)
        elif ev["type"] == "pin_hit" and ev["by"] in BALL_IDS:
            assert math.dist(m.xy, paths.position(ev["by"], ev["t"])) <= R + 1e-6
    assert {"cushion", "ball_ball", "pin_hit"} <= seen


def test_diagram_draws_each_path_in_its_colour(foul_shot):
    shot, record, decision = foul_shot
    paths = ShotPaths.from_simulation(shot, fps=120)
    img = draw_shot_diagram(record, paths, decision)
    n_marks = len(contact_marks(record, paths))
    canvas = _Canvas(DEFAULT_TABLE, 0.32, legend_rows=(n_marks + 1) // 2 + 1, header_px=30)
    assert img.shape == (canvas.h, canvas.w, 3)
    for b in BALL_IDS:
        xy = paths.balls[b]
        moved = np.hypot(*(xy[-1] - xy[0])) > 300
        if not moved:
            continue
        # a sample well inside the path, away from balls and contact marks
        hits = 0
        for k in np.linspace(0.2, 0.8, 7):
            x, y = xy[int(k * (len(xy) - 1))]
            u, v = canvas.px(x, y)
            patch = img[v // 16 - 1: v // 16 + 2, u // 16 - 1: u // 16 + 2].reshape(-1, 3).astype(int)
            if np.min(np.abs(patch - np.array(BALL_COLOURS[b])).sum(axis=1)) < 60:
                hits += 1
        assert hits >= 4, f"{b}'s path is not drawn in its colour"


def test_diagram_without_paths_still_shows_start_and_end(foul_shot):
    _, record, decision = foul_shot
    img = draw_shot_diagram(record, None, decision)
    canvas = _Canvas(DEFAULT_TABLE, 0.32, legend_rows=1, header_px=30)
    x, y = record["after"]["balls"]["cue"]
    u, v = canvas.px(x, y)
    assert np.abs(img[v // 16, u // 16].astype(int) - np.array((40, 40, 215))).sum() < 60


def test_write_png_is_atomic_and_readable(tmp_path):
    import cv2

    img = np.zeros((20, 30, 3), np.uint8)
    img[5:10, 5:10] = 200
    write_png(tmp_path / "a.png", img)
    assert not list(tmp_path.glob("*.tmp"))
    assert np.array_equal(cv2.imread(str(tmp_path / "a.png")), img)


def test_crowded_marks_are_spread_apart_and_lone_marks_stay():
    from vision_ref.review.diagram import ContactMark, spread_marks

    rng = np.random.default_rng(5)
    crowd = [ContactMark(i + 1, 0.1 * i, "pin_hit", "x", tuple(rng.normal(0, 10, 2))) for i in range(12)]
    lone = ContactMark(13, 2.0, "cushion", "y", (1000.0, 500.0))
    spots = spread_marks(crowd + [lone], min_sep_mm=60.0)
    for i in range(len(spots)):
        for j in range(i):
            assert math.dist(spots[i], spots[j]) >= 60.0 - 1e-9
    assert spots[0] == crowd[0].xy and spots[-1] == lone.xy
    assert spread_marks([ContactMark(1, 0.0, "off_table", "z", None)]) == [None]
