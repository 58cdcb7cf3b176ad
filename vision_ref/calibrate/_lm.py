"""A small Levenberg–Marquardt solver with numeric Jacobians and Huber reweighting.

SciPy is not a dependency, and the camera fits here have at most ~10 parameters and
a few thousand residuals, so forward differences and a dense normal-equation solve
are fast enough and easy to check.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass
class LMResult:
    x: np.ndarray
    residuals: np.ndarray  # unweighted, at x
    weights: np.ndarray  # final robust weights (1 = inlier)
    cost: float
    iterations: int
    converged: bool


def huber_weights(r: np.ndarray, k: float) -> np.ndarray:
    a = np.abs(r)
    w = np.ones_like(a)
    big = a > k
    w[big] = k / a[big]
    return w


def levenberg_marquardt(
    fun: Callable[[np.ndarray], np.ndarray],
    x0: np.ndarray,
    steps: np.ndarray,
    *,
    huber_k: np.ndarray | float | None = None,
    max_iter: int = 40,
    tol: float = 1e-10,
) -> LMResult:
    """Minimise sum(w * r(x)^2); ``steps`` are the finite-difference steps per parameter.

    ``huber_k``: residual scale(s) beyond which residuals are down-weighted (per
    residual array or scalar); weights are recomputed every iteration (IRLS).
    """
    x = np.asarray(x0, dtype=np.float64).copy()
    steps = np.asarray(steps, dtype=np.float64)
    r = fun(x)
    w = np.ones_like(r) if huber_k is None else huber_weights(r, huber_k)
    cost = float(np.sum(w * r * r))
    lam = 1e-3
    converged = False
    it = 0
    for it in range(1, max_iter + 1):
        J = np.empty((len(r), len(x)))
        for j in range(len(x)):
            xp = x.copy()
            xp[j] += steps[j]
            J[:, j] = (fun(xp) - r) / steps[j]
        Jw = J * w[:, None]
        A = J.T @ Jw
        g = Jw.T @ r
        improved = False
        for _ in range(12):
            D = np.diag(np.maximum(np.diag(A), 1e-12))
            try:
                dx = -np.linalg.solve(A + lam * D, g)
            except np.linalg.LinAlgError:
                lam *= 10
                continue
            xn = x + dx
            rn = fun(xn)
            if not np.all(np.isfinite(rn)):
                lam *= 10
                continue
            cn = float(np.sum(w * rn * rn))
            if cn < cost:
                rel = (cost - cn) / max(cost, 1e-30)
                x, r = xn, rn
                lam = max(lam / 5, 1e-9)
                improved = True
                if huber_k is not None:
                    w = huber_weights(r, huber_k)
                cost = float(np.sum(w * r * r))
                if rel < tol:
                    converged = True
                break
            lam *= 10
        if not improved or converged:
            converged = converged or not improved
            break
    return LMResult(x, r, w, cost, it, converged)
