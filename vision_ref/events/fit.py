"""Local trajectory fits: low-order polynomials in time with their covariance.

Between contacts a ball's centre follows a quadratic in time (sliding or rolling with
constant deceleration), so a contact is timed by fitting the clean frames on each
side of it and intersecting the fitted paths with the contact condition. A fit is
"grown" frame by frame away from the contact and stops where a new frame is not
consistent with the fit so far (another kink: a contact, or the slide-to-roll
change), so that one fit never spans two motions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass
class PathFit:
    """x(t), y(t) = sum_k coef[k] (t - t0)^k; ``cov`` the coefficient covariance
    (shared by both axes), ``rms`` the residual rms, ``rows`` the rows used."""

    t0: float
    coef: np.ndarray  # (deg+1, 2)
    cov: np.ndarray  # (deg+1, deg+1)
    rms: float
    rows: np.ndarray
    t_first: float
    t_last: float

    @property
    def deg(self) -> int:
        return self.coef.shape[0] - 1

    def __post_init__(self) -> None:
        # plain floats for the scalar fast path (inference evaluates fits ~1e5 times a shot)
        self._cx = tuple(self.coef[:, 0].tolist())
        self._cy = tuple(self.coef[:, 1].tolist())
        self._cov = tuple(tuple(row) for row in self.cov.tolist())

    def pos(self, t) -> np.ndarray:
        if isinstance(t, (float, int, np.floating)):
            tau = float(t) - self.t0
            x = y = 0.0
            for cx, cy in zip(reversed(self._cx), reversed(self._cy)):  # Horner
                x = x * tau + cx
                y = y * tau + cy
            return np.array((x, y))
        # many times at once: the same Horner steps elementwise (the same floats as
        # the scalar path, so a sampled clearance and its bisection agree)
        tau = np.asarray(t, dtype=np.float64) - self.t0
        x = y = 0.0
        for cx, cy in zip(reversed(self._cx), reversed(self._cy)):
            x = x * tau + cx
            y = y * tau + cy
        out = np.empty(tau.shape + (2,))
        out[..., 0] = x
        out[..., 1] = y
        return out

    def vel(self, t) -> np.ndarray:
        tau = np.asarray(t, dtype=np.float64) - self.t0
        out = np.zeros(np.shape(tau) + (2,))
        for k in range(1, self.coef.shape[0]):
            out += k * self.coef[k] * (tau ** (k - 1))[..., None]
        return out

    def var(self, t: float) -> float:
        """Variance of one coordinate of the fitted position at t (per axis)."""
        tau = float(t) - self.t0
        x = [tau**k for k in range(len(self._cx))]
        return sum(xi * sum(c * xj for c, xj in zip(row, x)) for xi, row in zip(x, self._cov))

    def vel_var(self, t: float) -> float:
        tau = float(t) - self.t0
        x = np.array([0.0] + [k * tau ** (k - 1) for k in range(1, self.coef.shape[0])])
        return float(x @ self.cov @ x)


def fit_path(t: np.ndarray, xy: np.ndarray, rows: np.ndarray, sigma: float, deg: int | None = None) -> PathFit:
    """Least-squares fit of the rows (deg: 2 with >= 5 rows, 1 with >= 2, else 0)."""
    rows = np.asarray(rows, dtype=np.int64)
    n = len(rows)
    if deg is None:
        deg = 2 if n >= 5 else (1 if n >= 2 else 0)
    deg = min(deg, n - 1)
    tt = t[rows]
    t0 = float(tt.mean())
    Y = xy[rows]
    tau = tt - t0
    solved = _solve_small(tau, Y, deg) if deg <= 2 else None
    if solved is None:
        # a degenerate design (repeated times) or a higher degree: the general solver
        X = np.vander(tau, deg + 1, increasing=True)
        coef, *_ = np.linalg.lstsq(X, Y, rcond=None)
        resid = Y - X @ coef
        inv = np.linalg.pinv(X.T @ X)
    else:
        coef, resid, inv = solved
    dof = 2 * (n - deg - 1)
    rms = math.sqrt(float((resid * resid).sum()) / dof) if dof > 0 else 0.0
    s = max(sigma, rms)
    cov = s * s * inv
    if n == 1:
        cov = np.array([[sigma * sigma]])
    return PathFit(t0, coef, cov, rms, rows, float(tt.min()), float(tt.max()))


def _solve_small(tau: np.ndarray, Y: np.ndarray, deg: int):
    """Closed-form least squares of degree <= 2 on centred times: the normal equations
    of the time scaled to [-1, 1] (well conditioned), inverted by the adjugate.

    fit_path runs thousands of times a shot on a handful of rows, where numpy's
    general lstsq + pinv (an SVD each) cost ten times the arithmetic. Returns
    (coef, residuals, (X^T X)^-1 in the unscaled time) or None when the design is
    degenerate (then the caller uses the general solver)."""
    h = float(np.abs(tau).max())
    if deg == 0:
        coef = Y.mean(axis=0, keepdims=True)
        return coef, Y - coef, np.array([[1.0 / len(tau)]])
    if not h > 0.0:
        return None
    u = tau / h
    X = np.empty((len(u), deg + 1))
    X[:, 0] = 1.0
    X[:, 1] = u
    if deg == 2:
        X[:, 2] = u * u
    A = (X.T @ X).tolist()
    if deg == 1:
        (a, b), (_, d) = A
        det = a * d - b * b
        if not det > 1e-9 * a * d:
            return None
        ainv = np.array([[d, -b], [-b, a]]) / det
    else:
        (a, b, c), (_, e, f), (_, _, i) = A
        # adjugate of the symmetric [[a b c] [b e f] [c f i]]
        A11, A12, A13 = e * i - f * f, c * f - b * i, b * f - c * e
        A22, A23, A33 = a * i - c * c, b * c - a * f, a * e - b * b
        det = a * A11 + b * A12 + c * A13
        if not det > 1e-9 * a * e * i:
            return None
        ainv = np.array([[A11, A12, A13], [A12, A22, A23], [A13, A23, A33]]) / det
    coef_u = ainv @ (X.T @ Y)
    resid = Y - X @ coef_u
    scale = h ** -np.arange(deg + 1)  # coefficients of u^k -> of tau^k
    return coef_u * scale[:, None], resid, ainv * np.outer(scale, scale)


def grow_fit(t: np.ndarray, xy: np.ndarray, rows: list[int] | np.ndarray, sigma: float,
             max_rows: int, k_sigma: float = 4.5, model_mm: float = 0.3) -> PathFit | None:
    """Fit the rows in the given order (nearest the contact first), adding one row at a
    time while it agrees with the fit of the rows before it.

    ``model_mm`` allows for what a quadratic cannot follow exactly (a slow change of
    deceleration); ``k_sigma`` the tolerated deviation in standard errors.

    The rows kept are always a leading run of ``rows`` (the growth stops at the first
    row refused), so every check is the fit of a prefix against the next row: they
    are all made at once (``_prefix_checks``); ``_grow_fit_stepwise`` is the same
    growth one row at a time (the fallback for a degenerate design, and the reference).
    """
    cand = np.asarray(rows, dtype=np.int64)[:max_rows]
    finite = np.all(np.isfinite(xy[cand]), axis=1)
    m = len(cand) if finite.all() else int(np.argmin(finite))  # up to the first unseen row
    if m > 3:
        ok = _prefix_checks(t, xy, cand[:m], sigma, k_sigma, model_mm)
        if ok is None:
            return _grow_fit_stepwise(t, xy, rows, sigma, max_rows, k_sigma, model_mm)
        if not ok.all():
            m = 3 + int(np.argmin(ok))  # rows before the first refused one
    if m == 0:
        return None
    return fit_path(t, xy, np.sort(cand[:m]), sigma)


def _prefix_checks(t: np.ndarray, xy: np.ndarray, rows: np.ndarray, sigma: float, k_sigma: float,
                   model_mm: float) -> np.ndarray | None:
    """For j = 3 .. len(rows)-1: does rows[j] agree with the fit of rows[:j] (a line for
    j = 3, a quadratic beyond)? None when a quadratic's design is degenerate."""
    tt, Y = t[rows], xy[rows]
    n = len(rows)
    out = np.empty(n - 3, dtype=bool)
    f = fit_path(t, xy, rows[:3], sigma, deg=1)
    err = float(np.hypot(*(f.pos(tt[3]) - Y[3])))
    out[0] = not err > k_sigma * math.sqrt(f.var(tt[3]) + sigma * sigma) * 1.5 + model_mm
    if n == 4:
        return out
    # quadratic fits of the prefixes of j = 4 .. n-1 rows, as in fit_path (time centred
    # on the prefix's mean, scaled to [-1, 1]; normal equations, adjugate inverse)
    j = np.arange(4, n)
    mask = np.arange(n)[None, :] < j[:, None]  # (P, n): the rows of each prefix
    t0 = (tt[None, :] * mask).sum(axis=1) / j
    tau = tt[None, :] - t0[:, None]
    h = np.where(mask, np.abs(tau), 0.0).max(axis=1)
    u = tau / h[:, None]
    X = np.stack((np.ones_like(u), u, u * u), axis=2)  # (P, n, 3), every row
    Xm = X * mask[:, :, None]
    A = np.einsum("pki,pkj->pij", Xm, Xm)
    a, b, c, e, f_, i = A[:, 0, 0], A[:, 0, 1], A[:, 0, 2], A[:, 1, 1], A[:, 1, 2], A[:, 2, 2]
    A11, A12, A13 = e * i - f_ * f_, c * f_ - b * i, b * f_ - c * e
    A22, A23, A33 = a * i - c * c, b * c - a * f_, a * e - b * b
    det = a * A11 + b * A12 + c * A13
    if not np.all(det > 1e-9 * a * e * i):
        return None
    ainv = np.stack((np.stack((A11, A12, A13), 1), np.stack((A12, A22, A23), 1),
                     np.stack((A13, A23, A33), 1)), 1) / det[:, None, None]
    coef = ainv @ np.einsum("pki,kc->pic", Xm, Y)  # (P, 3, 2)
    fitted = X @ coef  # (P, n, 2)
    resid = np.where(mask[:, :, None], Y[None] - fitted, 0.0)
    rms = np.sqrt((resid * resid).sum(axis=(1, 2)) / (2 * (j - 3)))
    s2 = np.maximum(sigma, rms) ** 2
    # the next row of each prefix: rows[j]
    nxt = X[np.arange(len(j)), j]  # (P, 3)
    var = s2 * np.einsum("pi,pij,pj->p", nxt, ainv, nxt)
    d = fitted[np.arange(len(j)), j] - Y[j]
    err = np.hypot(d[:, 0], d[:, 1])
    out[1:] = ~(err > k_sigma * np.sqrt(var + sigma * sigma) * 1.5 + model_mm)
    return out


def _grow_fit_stepwise(t: np.ndarray, xy: np.ndarray, rows, sigma: float, max_rows: int, k_sigma: float,
                       model_mm: float) -> PathFit | None:
    """grow_fit one row at a time, a fit per step."""
    good: list[int] = []
    for r in rows:
        if not np.all(np.isfinite(xy[r])):
            break
        if len(good) >= 3:
            f = fit_path(t, xy, np.array(good), sigma, deg=2 if len(good) >= 4 else 1)
            pred = f.pos(t[r])
            err = float(np.hypot(*(pred - xy[r])))
            tol = k_sigma * math.sqrt(f.var(t[r]) + sigma * sigma) * 1.5 + model_mm
            if err > tol:
                break
        good.append(int(r))
        if len(good) >= max_rows:
            break
    if not good:
        return None
    return fit_path(t, xy, np.array(sorted(good)), sigma)
