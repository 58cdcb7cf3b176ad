import numpy as np

from vision_ref.calibrate._lm import huber_weights, levenberg_marquardt


def test_lm_recovers_a_nonlinear_model_and_ignores_outliers():
    rng = np.random.default_rng(1)
    x = np.linspace(0, 4, 200)
    y = 3.0 * np.exp(-0.7 * x) + 0.5 + rng.normal(0, 0.01, x.size)
    y[::17] += 2.0  # gross outliers
    res = levenberg_marquardt(lambda p: p[0] * np.exp(-p[1] * x) + p[2] - y, np.array([1.0, 0.1, 0.0]),
                              np.full(3, 1e-6), huber_k=0.05, max_iter=100)
    assert np.allclose(res.x, [3.0, 0.7, 0.5], atol=0.02)
    assert res.weights[::17].max() < 0.1


def test_huber_weights():
    w = huber_weights(np.array([0.0, 0.5, -2.0, 4.0]), 1.0)
    assert np.allclose(w, [1.0, 1.0, 0.5, 0.25])
