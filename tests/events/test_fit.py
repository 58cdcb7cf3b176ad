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


def test_closed_form_fit_matches_general_least_squares():
    # fit_path's closed form (normal equations on scaled time) against numpy's lstsq/pinv
    rng = np.random.default_rng(5)
    for _ in range(300):
        n = int(rng.integers(1, 16))
        t = 2.0 + np.arange(n) / rng.choice([60.0, 120.0])
        xy = _path(t) + rng.normal(0, 0.7, size=(n, 2))
        rows = np.arange(n)
        for deg in (None, 0, 1, 2):
            f = fit_path(t, xy, rows, 0.5, deg=deg)
            X = np.vander(t - f.t0, f.deg + 1, increasing=True)
            coef = np.linalg.lstsq(X, xy, rcond=None)[0]
            assert np.allclose(f.coef, coef, rtol=1e-9, atol=1e-9)
            if n > 1:
                s = max(0.5, f.rms)
                cov = s * s * np.linalg.pinv(X.T @ X)
                assert np.allclose(f.cov, cov, rtol=1e-9, atol=1e-12 * np.abs(cov).max())


def test_grow_fit_matches_its_stepwise_reference():
    # all prefix checks at once (grow_fit) == one fit per added row (_grow_fit_stepwise)
    from vision_ref.events.fit import _grow_fit_stepwise

    rng = np.random.default_rng(7)
    stopped_early = 0
    for _ in range(500):
        n = int(rng.integers(0, 20))
        t = 2.0 + np.arange(n) / rng.choice([60.0, 120.0])
        xy = _path(t) + rng.normal(0, rng.choice([0.2, 0.7, 2.0]), size=(n, 2))
        if n > 6 and rng.random() < 0.5:  # a kink
            k = int(rng.integers(2, n))
            xy[k:, 1] += rng.choice([30.0, 300.0, 3000.0]) * (t[k:] - t[k])
        if n > 3 and rng.random() < 0.2:  # an unseen row
            xy[int(rng.integers(n))] = np.nan
        rows = list(range(n))[::-1] if rng.random() < 0.5 else list(range(n))
        max_rows = int(rng.integers(4, 13))
        ref = _grow_fit_stepwise(t, xy, rows, 0.5, max_rows, 4.5, 0.3)
        f = grow_fit(t, xy, rows, 0.5, max_rows)
        assert (f is None) == (ref is None)
        if ref is not None:
            assert list(f.rows) == list(ref.rows)
            assert np.allclose(f.coef, ref.coef, rtol=0, atol=1e-9)
            stopped_early += len(ref.rows) < min(max_rows, n)
    assert stopped_early > 50  # the refusals were exercised
