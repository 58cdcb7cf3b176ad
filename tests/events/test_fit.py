import numpy as np

from vision_ref.events.fit import fit_path, grow_fit


def _path(t):
    return np.stack([100 + 2000 * t - 900 * t * t, -50 + 300 * t], axis=1)


def test_fit_recovers_a_quadratic_and_its_error_is_honest():
    rng = np.random.default_rng(1)
    t = np.arange(8) / 60.0
    truth = _path(np.array([8.5 / 60.0]))[0]
    errs, sds = [], []
    for _ in range(400):
        xy = _path(t) + rng.normal(0, 0.7, size=(8, 2))
        f = fit_path(t, xy, np.arange(8), 0.7, deg=2)
        errs.append(f.pos(8.5 / 60.0)[0] - truth[0])
        sds.append(np.sqrt(f.var(8.5 / 60.0)))
    ratio = np.std(errs) / np.mean(sds)
    assert 0.8 < ratio < 1.25  # the covariance predicts the extrapolation error
    assert abs(np.mean(errs)) < 0.3


def test_grow_fit_stops_at_a_kink():
    t = np.arange(12) / 60.0
    xy = _path(t)
    # the ball is deflected after row 5: rows 6.. follow another line
    xy[6:, 1] += 400 * (t[6:] - t[5])
    rows_from_contact_backwards = list(range(11, -1, -1))
    f = grow_fit(t, xy, rows_from_contact_backwards, 0.5, max_rows=12)
    assert set(f.rows) <= set(range(5, 12))  # row 5 lies on both lines
    f = grow_fit(t, xy, list(range(5, -1, -1)), 0.5, max_rows=12)
    assert list(f.rows) == list(range(0, 6))


def test_grow_fit_skips_nothing_on_a_clean_path():
    t = np.arange(10) / 120.0
    f = grow_fit(t, _path(t), list(range(10)), 0.5, max_rows=6)
    assert len(f.rows) == 6 and f.rms < 1e-6
