"""numba kernels of the event-based physics (plain arrays in, plain arrays out).

Units: millimetres, seconds, kilograms, radians. Between events every ball's centre
is a quadratic polynomial of time (sliding and rolling have constant acceleration),
so contact times are roots of low-degree polynomials, solved here on a bounded
interval by isolating the roots through the derivative's roots and bisecting —
no time step, no eigenvalue solver, no missed grazing contacts.

Ball motion states (codes shared with physics.py):
``STILL`` 0, ``SPINNING`` 1 (only z-spin left), ``SLIDING`` 2, ``ROLLING`` 3,
``AIRBORNE`` 4 (scripted flight off the table), ``GONE`` 5 (off the table, out of play).

Parameter vector ``p`` (see physics.PhysicsParams.ball_vector):
``[R, g, mu_slide, mu_roll, spin_decel, e_ball, fa, fb, fc, e_cushion, mu_cushion, nose_h]``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

STILL = 0
SPINNING = 1
SLIDING = 2
ROLLING = 3
AIRBORNE = 4
GONE = 5

P_R = 0
P_G = 1
P_MU_S = 2
P_MU_R = 3
P_SPIN = 4
P_E_BALL = 5
P_FA = 6
P_FB = 7
P_FC = 8
P_E_CUSH = 9
P_MU_CUSH = 10
P_NOSE_H = 11

_EPS_V = 1e-9  # mm/s: below this a velocity is zero


# ---------------------------------------------------------------- ball motion
@njit(cache=True)
def slip_velocity(v, w, R):
    """Velocity of the ball's contact point with the cloth (x, y)."""
    return v[0] - R * w[1], v[1] + R * w[0]


@njit(cache=True)
def ball_accel(v, w, state, p, acc, alpha):
    """Constant linear (acc, 2) and angular (alpha, 3) accelerations of the current state.

    ``alpha[2]`` is the z-spin deceleration magnitude with sign; the caller clamps
    the z-spin at zero (it does not feed back into translation, so no event is needed).
    """
    R = p[P_R]
    g = p[P_G]
    acc[0] = 0.0
    acc[1] = 0.0
    alpha[0] = 0.0
    alpha[1] = 0.0
    alpha[2] = 0.0
    if state == STILL or state == GONE:
        return
    if state == AIRBORNE:
        return
    if w[2] > 0.0:
        alpha[2] = -p[P_SPIN]
    elif w[2] < 0.0:
        alpha[2] = p[P_SPIN]
    if state == SLIDING:
        ux, uy = slip_velocity(v, w, R)
        un = math.hypot(ux, uy)
        if un > _EPS_V:
            ux /= un
            uy /= un
            f = p[P_MU_S] * g
            acc[0] = -f * ux
            acc[1] = -f * uy
            k = 2.5 * f / R
            alpha[0] = -k * uy
            alpha[1] = k * ux
    elif state == ROLLING:
        sp = math.hypot(v[0], v[1])
        if sp > _EPS_V:
            f = p[P_MU_R] * g
            acc[0] = -f * v[0] / sp
            acc[1] = -f * v[1] / sp
            # keep the rolling constraint w_xy = (ez x v) / R
            alpha[0] = -acc[1] / R
            alpha[1] = acc[0] / R


@njit(cache=True)
def transition_time(v, w, state, p):
    """Time until the ball's motion state changes by itself (inf when never)."""
    R = p[P_R]
    g = p[P_G]
    if state == SLIDING:
        ux, uy = slip_velocity(v, w, R)
        return 2.0 * math.hypot(ux, uy) / (7.0 * p[P_MU_S] * g)
    if state == ROLLING:
        return math.hypot(v[0], v[1]) / (p[P_MU_R] * g)
    if state == SPINNING:
        return abs(w[2]) / p[P_SPIN]
    return math.inf


@njit(cache=True)
def classify(v, w, p):
    """Motion state of a ball on the cloth from its velocities."""
    R = p[P_R]
    ux, uy = slip_velocity(v, w, R)
    sp = math.hypot(v[0], v[1])
    scale = max(sp, 1.0)
    if math.hypot(ux, uy) > 1e-6 * scale + 1e-7:
        return SLIDING
    if sp > 1e-7:
        return ROLLING
    if abs(w[2]) > 1e-9:
        return SPINNING
    return STILL


@njit(cache=True)
def evolve_ball(r, v, w, state, tau, p, r_out, v_out, w_out):
    """Advance one ball by ``tau`` within its current motion state (exact)."""
    acc = np.empty(2)
    alpha = np.empty(3)
    ball_accel(v, w, state, p, acc, alpha)
    for k in range(2):
        r_out[k] = r[k] + v[k] * tau + 0.5 * acc[k] * tau * tau
        v_out[k] = v[k] + acc[k] * tau
    w_out[0] = w[0] + alpha[0] * tau
    w_out[1] = w[1] + alpha[1] * tau
    wz = w[2] + alpha[2] * tau
    if w[2] * wz <= 0.0:
        wz = 0.0
    w_out[2] = wz


@njit(cache=True)
def settle(v, w, state, p):
    """Snap the velocities to the state reached at a transition (removes round-off)."""
    R = p[P_R]
    if state == SLIDING:
        # slip reached zero: from now on it rolls exactly
        w[0] = -v[1] / R
        w[1] = v[0] / R
    elif state == ROLLING:
        v[0] = 0.0
        v[1] = 0.0
        w[0] = 0.0
        w[1] = 0.0
    elif state == SPINNING:
        w[2] = 0.0
    return classify(v, w, p)


# ------------------------------------------------------------ polynomial roots
@njit(cache=True)
def _poly_eval(c, deg, t):
    """c[0] + c[1] t + ... + c[deg] t^deg."""
    acc = c[deg]
    for k in range(deg - 1, -1, -1):
        acc = acc * t + c[k]
    return acc


@njit(cache=True)
def _bisect(c, deg, a, b, fa):
    """Root of a polynomial on [a, b] where it changes sign (fa = value at a)."""
    for _ in range(200):
        m = 0.5 * (a + b)
        if m <= a or m >= b:
            break
        fm = _poly_eval(c, deg, m)
        if (fm > 0.0) == (fa > 0.0) and fm != 0.0:
            a = m
            fa = fm
        else:
            b = m
    return b


@njit(cache=True)
def _real_roots_in(c, deg, lo, hi, out):
    """Real roots of the polynomial in (lo, hi), sorted, into ``out``; returns their count.

    Roots are isolated by the roots of the derivative: between two consecutive
    critical points the polynomial is monotone, so each sign change there is exactly
    one root, found by bisection. The derivative chain is walked bottom-up in a loop,
    not by recursion: numba's on-disk cache crashes on reloading recursive functions.
    """
    while deg > 0 and c[deg] == 0.0:
        deg -= 1
    if deg == 0:
        return 0
    # chain[k] = k-th derivative's coefficients (degree deg - k)
    chain = np.zeros((deg, deg + 1))
    for m in range(deg + 1):
        chain[0, m] = c[m]
    for k in range(1, deg):
        for m in range(deg - k + 1):
            chain[k, m] = (m + 1) * chain[k - 1, m + 1]
    roots = np.empty(deg)
    nxt = np.empty(deg)
    # the (deg-1)-th derivative is linear
    lin = chain[deg - 1]
    n = 0
    t = -lin[0] / lin[1]
    if lo < t < hi:
        roots[0] = t
        n = 1
    for k in range(deg - 2, -1, -1):
        poly = chain[k]
        pdeg = deg - k
        m = 0
        a = lo
        fa = _poly_eval(poly, pdeg, a)
        for i in range(n + 1):
            b = roots[i] if i < n else hi
            fb = _poly_eval(poly, pdeg, b)
            if fa == 0.0 and a > lo:
                nxt[m] = a
                m += 1
            elif (fa > 0.0 and fb < 0.0) or (fa < 0.0 and fb > 0.0):
                nxt[m] = _bisect(poly, pdeg, a, b, fa)
                m += 1
            a = b
            fa = fb
        for i in range(m):
            roots[i] = nxt[i]
        n = m
    for i in range(n):
        out[i] = roots[i]
    return n


@njit(cache=True)
def first_contact_time(dr, dv, da, dist, tmax):
    """First time in [0, tmax] at which |dr + dv t + da t^2/2| falls to ``dist``.

    Only approaching contacts count (the gap closing). Returns inf when none.
    A pair already touching and approaching at t = 0 returns 0.
    """
    c = np.empty(5)
    c[4] = 0.25 * (da[0] * da[0] + da[1] * da[1])
    c[3] = dv[0] * da[0] + dv[1] * da[1]
    c[2] = dv[0] * dv[0] + dv[1] * dv[1] + dr[0] * da[0] + dr[1] * da[1]
    c[1] = 2.0 * (dr[0] * dv[0] + dr[1] * dv[1])
    c[0] = dr[0] * dr[0] + dr[1] * dr[1] - dist * dist
    if c[0] <= 0.0:
        # overlapping (round-off) or touching: a contact now only if approaching
        if c[1] < 0.0:
            return 0.0
        # separating now: look for a later re-approach after the gap opens
    roots = np.empty(4)
    n = _real_roots_in(c, 4, 0.0, tmax, roots)
    for i in range(n):
        t = roots[i]
        # the gap closes through the root: derivative negative (or f turns from >0 to <=0)
        h = 1e-9 * max(1.0, t)
        if _poly_eval(c, 4, t - h) > 0.0 or (t - h < 0.0 and c[0] > 0.0):
            return t
    return math.inf


@njit(cache=True)
def first_axis_crossing(x0, vx, ax, bound, direction, tmax):
    """First t in (0, tmax] with x0 + vx t + ax t^2/2 = bound moving in ``direction`` (+1/-1)."""
    c = np.empty(3)
    c[0] = (x0 - bound) * direction
    c[1] = vx * direction
    c[2] = 0.5 * ax * direction
    if c[0] >= 0.0:
        # on or past the line (round-off after a rebound): contact now only if moving outward
        if c[1] > 0.0:
            return 0.0
    roots = np.empty(2)
    n = _real_roots_in(c, 2, 0.0, tmax, roots)
    for i in range(n):
        t = roots[i]
        if c[1] + 2.0 * c[2] * t > 0.0:
            return t
    return math.inf


# ------------------------------------------------------------- collisions
@njit(cache=True)
def _cross(a, b, out):
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@njit(cache=True)
def alciatore_friction(slip_mm_s, p):
    """Ball-ball friction as a function of the relative surface speed (Alciatore's fit, m/s)."""
    return p[P_FA] + p[P_FB] * math.exp(-p[P_FC] * slip_mm_s * 1e-3)


@njit(cache=True)
def resolve_ball_ball(r1, v1, w1, r2, v2, w2, p):
    """Impulse at the contact of two equal balls: restitution along the line of centres,
    Coulomb friction (Alciatore's speed-dependent coefficient) in the tangent plane,
    capped at what stops the surfaces slipping. Velocities/spins updated in place
    (v arrays are (2,), w (3,)). Returns the normal impulse (kg mm/s) for the record.
    """
    R = p[P_R]
    m = 1.0  # impulses per unit mass; equal masses cancel out of every velocity change
    I = 0.4 * m * R * R
    n = np.zeros(3)
    dx = r2[0] - r1[0]
    dy = r2[1] - r1[1]
    dn = math.hypot(dx, dy)
    n[0] = dx / dn
    n[1] = dy / dn
    c1 = R * n
    c2 = -R * n
    V1 = np.array([v1[0], v1[1], 0.0])
    V2 = np.array([v2[0], v2[1], 0.0])
    t1 = np.empty(3)
    t2 = np.empty(3)
    _cross(w1, c1, t1)
    _cross(w2, c2, t2)
    u = (V1 + t1) - (V2 + t2)
    un = u[0] * n[0] + u[1] * n[1] + u[2] * n[2]
    if un <= 0.0:
        return 0.0
    jn = 0.5 * (1.0 + p[P_E_BALL]) * m * un
    ut = u - un * n
    utn = math.sqrt(ut[0] * ut[0] + ut[1] * ut[1] + ut[2] * ut[2])
    P = jn * n
    if utn > 1e-12:
        mu = alciatore_friction(utn, p)
        jt_stick = m / 7.0 * utn
        jt = min(jt_stick, mu * jn)
        P = P + (jt / utn) * ut
    # ball 2 receives +P, ball 1 receives -P
    v1[0] -= P[0] / m
    v1[1] -= P[1] / m
    v2[0] += P[0] / m
    v2[1] += P[1] / m
    tq = np.empty(3)
    _cross(c1, -P, tq)
    for k in range(3):
        w1[k] += tq[k] / I
    _cross(c2, P, tq)
    for k in range(3):
        w2[k] += tq[k] / I
    return jn


@njit(cache=True)
def resolve_ball_cushion(v, w, nx, ny, p):
    """Rebound off a cushion whose nose (height nose_h) touches the ball above its centre.

    (nx, ny) is the unit normal pointing from the ball into the cushion. The impulse
    acts at the contact point: restitution along the contact normal, friction in the
    contact plane capped at sticking (a rigid-body reading of Han 2005), so side spin
    changes the rebound angle and the rebound changes the spin. The vertical part of
    the impulse goes into the cloth (the ball stays on the table).
    Returns the normal impulse per unit mass (mm/s).
    """
    R = p[P_R]
    sin_t = min(max((p[P_NOSE_H] - R) / R, -0.9), 0.9)
    cos_t = math.sqrt(1.0 - sin_t * sin_t)
    chat = np.array([cos_t * nx, cos_t * ny, sin_t])  # centre -> contact, unit
    c = R * chat
    V = np.array([v[0], v[1], 0.0])
    t = np.empty(3)
    _cross(w, c, t)
    u = V + t
    un = u[0] * chat[0] + u[1] * chat[1] + u[2] * chat[2]
    if un <= 0.0:
        return 0.0
    m = 1.0
    I = 0.4 * m * R * R
    jn = (1.0 + p[P_E_CUSH]) * m * un
    P = -jn * chat
    ut = u - un * chat
    utn = math.sqrt(ut[0] * ut[0] + ut[1] * ut[1] + ut[2] * ut[2])
    if utn > 1e-12:
        jt = min(2.0 * m / 7.0 * utn, p[P_MU_CUSH] * jn)
        P = P - (jt / utn) * ut
    v[0] += P[0] / m
    v[1] += P[1] / m
    tq = np.empty(3)
    _cross(c, P, tq)
    for k in range(3):
        w[k] += tq[k] / I
    return jn


# ---------------------------------------------------------------- next event
@njit(cache=True)
def next_ball_event(r, v, w, state, p, bounds, tmax, out_ij):
    """Earliest ball event among all balls: (time, kind) with the objects in ``out_ij``.

    kind: 0 none, 1 transition of ball i, 2 ball i hits cushion j (0 head/-x,
    1 foot/+x, 2 left/+y, 3 right/-y), 3 balls i and j collide.
    r (n,2), v (n,2), w (n,3), state (n,), bounds = (xmax, ymax) of ball centres.
    """
    n = r.shape[0]
    best = tmax
    kind = 0
    out_ij[0] = -1
    out_ij[1] = -1
    acc = np.empty((n, 2))
    alpha = np.empty(3)
    for i in range(n):
        ball_accel(v[i], w[i], state[i], p, acc[i], alpha)
    for i in range(n):
        s = state[i]
        if s == STILL or s == GONE or s == AIRBORNE:
            continue
        t = transition_time(v[i], w[i], s, p)
        if t < best:
            best = t
            kind = 1
            out_ij[0] = i
            out_ij[1] = -1
        if s == SPINNING:
            continue
        hz = best
        for j in range(4):
            axis = 0 if j < 2 else 1
            direction = 1.0 if (j == 1 or j == 2) else -1.0
            bnd = bounds[axis] * direction
            t = first_axis_crossing(r[i, axis], v[i, axis], acc[i, axis], bnd, direction, hz)
            if t < best:
                best = t
                hz = t
                kind = 2
                out_ij[0] = i
                out_ij[1] = j
    D = 2.0 * p[P_R]
    dr = np.empty(2)
    dv = np.empty(2)
    da = np.empty(2)
    for i in range(n):
        for j in range(i + 1, n):
            si = state[i]
            sj = state[j]
            if si == GONE or sj == GONE or si == AIRBORNE or sj == AIRBORNE:
                continue
            mi = si == SLIDING or si == ROLLING
            mj = sj == SLIDING or sj == ROLLING
            if not (mi or mj):
                continue
            for k in range(2):
                dr[k] = r[j, k] - r[i, k]
                dv[k] = v[j, k] - v[i, k]
                da[k] = acc[j, k] - acc[i, k]
            t = first_contact_time(dr, dv, da, D, best)
            if t < best:
                best = t
                kind = 3
                out_ij[0] = i
                out_ij[1] = j
    return best, kind


@njit(cache=True)
def fixed_step_reference(r, v, w, state, p, bounds, dt, t_end):
    """Naive fixed-step integrator of the same ball physics (the benchmark baseline).

    Explicit Euler at ``dt`` with collisions detected by overlap at each step.
    Returns the number of steps taken (the final state is left in the arrays).
    """
    n = r.shape[0]
    acc = np.empty(2)
    alpha = np.empty(3)
    steps = 0
    t = 0.0
    D = 2.0 * p[P_R]
    while t < t_end:
        moving = False
        for i in range(n):
            s = state[i]
            if s == STILL or s == GONE:
                continue
            moving = True
            ball_accel(v[i], w[i], s, p, acc, alpha)
            for k in range(2):
                r[i, k] += v[i, k] * dt
                v[i, k] += acc[k] * dt
            for k in range(3):
                w[i, k] += alpha[k] * dt
            if s == SLIDING:
                ux, uy = slip_velocity(v[i], w[i], p[P_R])
                if math.hypot(ux, uy) < 3.5 * p[P_MU_S] * p[P_G] * dt:
                    state[i] = settle(v[i], w[i], s, p)
            elif s == ROLLING:
                if math.hypot(v[i, 0], v[i, 1]) < p[P_MU_R] * p[P_G] * dt:
                    state[i] = settle(v[i], w[i], s, p)
            elif s == SPINNING:
                if abs(w[i, 2]) < p[P_SPIN] * dt:
                    state[i] = settle(v[i], w[i], s, p)
            for axis in range(2):
                if r[i, axis] > bounds[axis] and v[i, axis] > 0.0:
                    if axis == 0:
                        resolve_ball_cushion(v[i], w[i], 1.0, 0.0, p)
                    else:
                        resolve_ball_cushion(v[i], w[i], 0.0, 1.0, p)
                    state[i] = classify(v[i], w[i], p)
                elif r[i, axis] < -bounds[axis] and v[i, axis] < 0.0:
                    if axis == 0:
                        resolve_ball_cushion(v[i], w[i], -1.0, 0.0, p)
                    else:
                        resolve_ball_cushion(v[i], w[i], 0.0, -1.0, p)
                    state[i] = classify(v[i], w[i], p)
        for i in range(n):
            for j in range(i + 1, n):
                if state[i] == GONE or state[j] == GONE:
                    continue
                dx = r[j, 0] - r[i, 0]
                dy = r[j, 1] - r[i, 1]
                if dx * dx + dy * dy < D * D:
                    if (v[j, 0] - v[i, 0]) * dx + (v[j, 1] - v[i, 1]) * dy < 0.0:
                        resolve_ball_ball(r[i], v[i], w[i], r[j], v[j], w[j], p)
                        state[i] = classify(v[i], w[i], p)
                        state[j] = classify(v[j], w[j], p)
        t += dt
        steps += 1
        if not moving:
            break
    return steps


# ====================================================================== pins
# Body descriptor rows (one per ball and pin) for the contact search:
D_KIND = 0  # -1 absent/out of play, 0 circle, 1 toppling pin (segment from its base), 2 lying pin (segment about its centre)
D_MOVING = 1
D_PX = 2
D_PY = 3
D_VX = 4
D_VY = 5
D_AX = 6
D_AY = 7
D_PHI = 8
D_OM = 9
D_ALZ = 10
D_LEN = 11
D_RAD = 12
D_S0 = 13
D_DS = 14
D_HORIZON = 15
D_IS_PIN = 16
D_COLS = 17

KIND_ABSENT = -1
KIND_CIRCLE = 0
KIND_TOPPLE = 1
KIND_LYING = 2


@njit(cache=True)
def profile_value(prof, s0, ds, s):
    """Tilt of a toppling pin ``s`` seconds after the profile's origin (linear interpolation)."""
    x = (s0 + s) / ds
    n = prof.shape[0]
    if x <= 0.0:
        return prof[0]
    k = int(x)
    if k >= n - 1:
        return prof[n - 1]
    f = x - k
    return prof[k] * (1.0 - f) + prof[k + 1] * f


@njit(cache=True)
def body_shape(d, prof, tau, out):
    """Segment endpoints (ax, ay, bx, by) of a body at ``tau`` after the descriptor's time."""
    px = d[D_PX] + d[D_VX] * tau + 0.5 * d[D_AX] * tau * tau
    py = d[D_PY] + d[D_VY] * tau + 0.5 * d[D_AY] * tau * tau
    kind = d[D_KIND]
    if kind == KIND_CIRCLE:
        out[0] = px
        out[1] = py
        out[2] = px
        out[3] = py
        return
    phi = d[D_PHI] + d[D_OM] * tau + 0.5 * d[D_ALZ] * tau * tau
    c = math.cos(phi)
    s = math.sin(phi)
    if kind == KIND_TOPPLE:
        th = profile_value(prof, d[D_S0], d[D_DS], tau)
        L = d[D_LEN] * math.sin(th)
        out[0] = px
        out[1] = py
        out[2] = px + L * c
        out[3] = py + L * s
    else:
        h = 0.5 * d[D_LEN]
        out[0] = px - h * c
        out[1] = py - h * s
        out[2] = px + h * c
        out[3] = py + h * s


@njit(cache=True)
def speed_bound(d, prof, tmax):
    """Upper bound of the speed of any point of the body over [0, tmax]."""
    if d[D_MOVING] == 0.0 or d[D_KIND] < 0:
        return 0.0
    vb = math.hypot(d[D_VX], d[D_VY]) + math.hypot(d[D_AX], d[D_AY]) * tmax
    kind = d[D_KIND]
    if kind == KIND_TOPPLE:
        n = prof.shape[0]
        mx = 0.0
        for k in range(1, n):
            q = abs(prof[k] - prof[k - 1]) / d[D_DS]
            if q > mx:
                mx = q
        vb += d[D_LEN] * mx
    elif kind == KIND_LYING:
        om = abs(d[D_OM]) + abs(d[D_ALZ]) * tmax
        vb += 0.5 * d[D_LEN] * om
    return vb


@njit(cache=True)
def _seg_seg(ax, ay, bx, by, cx, cy, dx, dy, out):
    """Closest points of segments AB and CD: writes (p1x, p1y, p2x, p2y), returns distance."""
    ux = bx - ax
    uy = by - ay
    vx = dx - cx
    vy = dy - cy
    wx = ax - cx
    wy = ay - cy
    a = ux * ux + uy * uy
    b = ux * vx + uy * vy
    c = vx * vx + vy * vy
    d = ux * wx + uy * wy
    e = vx * wx + vy * wy
    den = a * c - b * b
    if a < 1e-12 and c < 1e-12:
        s = 0.0
        t = 0.0
    elif a < 1e-12:
        s = 0.0
        t = min(max(e / c, 0.0), 1.0)
    elif c < 1e-12:
        t = 0.0
        s = min(max(-d / a, 0.0), 1.0)
    else:
        if den > 1e-12:
            s = min(max((b * e - c * d) / den, 0.0), 1.0)
        else:
            s = 0.0
        t = (b * s + e) / c
        if t < 0.0:
            t = 0.0
            s = min(max(-d / a, 0.0), 1.0)
        elif t > 1.0:
            t = 1.0
            s = min(max((b - d) / a, 0.0), 1.0)
    out[0] = ax + s * ux
    out[1] = ay + s * uy
    out[2] = cx + t * vx
    out[3] = cy + t * vy
    return math.hypot(out[2] - out[0], out[3] - out[1])


@njit(cache=True)
def body_gap(di, pi_, dj, pj, dist, tau, out):
    """Distance between two bodies' surfaces at tau (negative when overlapping)."""
    si = np.empty(4)
    sj = np.empty(4)
    body_shape(di, pi_, tau, si)
    body_shape(dj, pj, tau, sj)
    return _seg_seg(si[0], si[1], si[2], si[3], sj[0], sj[1], sj[2], sj[3], out) - dist


@njit(cache=True)
def ca_contact_time(di, pi_, dj, pj, dist, tmax, tol):
    """First approaching contact of two bodies in [0, tmax] by conservative advancement.

    Steps never exceed gap / (sum of speed bounds), so the bodies cannot pass through
    each other between steps; the contact is then located by bisection to ``tol`` mm.
    """
    vb = speed_bound(di, pi_, tmax) + speed_bound(dj, pj, tmax)
    if vb <= 0.0:
        return math.inf
    out = np.empty(4)
    tau = 0.0
    g = body_gap(di, pi_, dj, pj, dist, tau, out)
    it = 0
    while tau <= tmax and it < 100000:
        it += 1
        if g <= tol:
            # touching: a contact only if the gap is closing
            h = min(1e-6, max(tmax - tau, 1e-9))
            g2 = body_gap(di, pi_, dj, pj, dist, tau + h, out)
            if g2 < g - 1e-12 or g2 < 0.0 and g2 <= g:
                return tau
            tau += max(h, (tol - g + tol) / vb)
            g = body_gap(di, pi_, dj, pj, dist, tau, out)
            continue
        step = (g - 0.5 * tol) / vb
        t_new = tau + step
        if t_new > tmax:
            # last check at the interval's end
            g_end = body_gap(di, pi_, dj, pj, dist, tmax, out)
            if g_end > tol:
                return math.inf
            t_new = tmax
        g_new = body_gap(di, pi_, dj, pj, dist, t_new, out)
        if g_new < 0.0:
            # bracketed: refine between tau (gap > tol) and t_new (overlap)
            a = tau
            b = t_new
            for _ in range(60):
                m = 0.5 * (a + b)
                if body_gap(di, pi_, dj, pj, dist, m, out) > 0.0:
                    a = m
                else:
                    b = m
            return a
        tau = t_new
        g = g_new
        if tau >= tmax:
            if g <= tol:
                return tau
            return math.inf
    return math.inf


@njit(cache=True)
def contact_distance(di, dj, R):
    """Centre-line distance at which two bodies touch (2-D reading of their 3-D shapes)."""
    ib = di[D_IS_PIN] == 0.0
    jb = dj[D_IS_PIN] == 0.0
    if ib and jb:
        return 2.0 * R
    if ib or jb:
        pin = dj if ib else di
        if pin[D_KIND] == KIND_LYING:
            # the lying pin (thickness 2r) touches the ball below its equator
            return 2.0 * math.sqrt(R * pin[D_RAD])
        return R + pin[D_RAD]
    return di[D_RAD] + dj[D_RAD]


@njit(cache=True)
def next_body_contact(desc, prof, R, tmax, ignore, out_ij):
    """Earliest contact involving a pin: ball-pin and pin-pin pairs.

    ``ignore[i, j]`` skips pairs still touching after a resolved contact. Returns the
    time (inf when none); the pair is written to out_ij.
    """
    n = desc.shape[0]
    best = tmax
    found = False
    dr = np.empty(2)
    dv = np.empty(2)
    da = np.empty(2)
    for i in range(n):
        if desc[i, D_KIND] < 0:
            continue
        for j in range(i + 1, n):
            if desc[j, D_KIND] < 0:
                continue
            if desc[i, D_IS_PIN] == 0.0 and desc[j, D_IS_PIN] == 0.0:
                continue  # ball-ball pairs are exact in next_ball_event
            if desc[i, D_MOVING] == 0.0 and desc[j, D_MOVING] == 0.0:
                continue
            if ignore[i, j]:
                continue
            dist = contact_distance(desc[i], desc[j], R)
            h = min(best, desc[i, D_HORIZON], desc[j, D_HORIZON])
            if desc[i, D_KIND] == KIND_CIRCLE and desc[j, D_KIND] == KIND_CIRCLE:
                for k in range(2):
                    dr[k] = desc[j, D_PX + k] - desc[i, D_PX + k]
                    dv[k] = desc[j, D_VX + k] - desc[i, D_VX + k]
                    da[k] = desc[j, D_AX + k] - desc[i, D_AX + k]
                t = first_contact_time(dr, dv, da, dist, h)
            else:
                # cheap reject: cannot meet within h
                vb = speed_bound(desc[i], prof[i], h) + speed_bound(desc[j], prof[j], h)
                o = np.empty(4)
                g0 = body_gap(desc[i], prof[i], desc[j], prof[j], dist, 0.0, o)
                if g0 > vb * h + 1e-6:
                    continue
                t = ca_contact_time(desc[i], prof[i], desc[j], prof[j], dist, h, 1e-3)
            if t < best or (t <= best and not found and t < math.inf):
                best = t
                found = True
                out_ij[0] = i
                out_ij[1] = j
    if not found:
        return math.inf
    return best


@njit(cache=True)
def pin_cushion_gap(d, prof, tau, hx, hy):
    """Smallest distance from a pin's ends to the cushion noses (minus its radius)."""
    s = np.empty(4)
    body_shape(d, prof, tau, s)
    r = d[D_RAD]
    g = 1e18
    for k in range(2):
        x = s[2 * k]
        y = s[2 * k + 1]
        g = min(g, hx - r - x, x + hx - r, hy - r - y, y + hy - r)
    return g


@njit(cache=True)
def pin_cushion_time(d, prof, hx, hy, tmax, tol):
    """First time a moving pin's end reaches a cushion nose, by conservative advancement."""
    vb = speed_bound(d, prof, tmax)
    if vb <= 0.0:
        return math.inf
    tau = 0.0
    g = pin_cushion_gap(d, prof, tau, hx, hy)
    if g <= tol:
        # touching now: a contact only if going further in
        g2 = pin_cushion_gap(d, prof, 1e-6, hx, hy)
        if g2 < g:
            return 0.0
        tau = 1e-6
        g = g2
    it = 0
    while it < 100000:
        it += 1
        step = max((g - 0.5 * tol) / vb, 1e-7)
        t_new = tau + step
        if t_new > tmax:
            return math.inf
        g_new = pin_cushion_gap(d, prof, t_new, hx, hy)
        if g_new <= tol:
            a = tau
            b = t_new
            for _ in range(60):
                m = 0.5 * (a + b)
                if pin_cushion_gap(d, prof, m, hx, hy) > tol:
                    a = m
                else:
                    b = m
            return b
        tau = t_new
        g = g_new
    return math.inf


@njit(cache=True)
def closest_points(di, pi_, dj, pj, tau, out):
    """Closest points (p_i, p_j) of two bodies at tau into out (4,); returns distance."""
    return body_gap(di, pi_, dj, pj, 0.0, tau, out)


@njit(cache=True)
def _topple_rk4(th, om, h, k, beta):
    """One RK4 step of a toppling pin: theta'' = k sin(theta - beta)."""
    k1t = om
    k1o = k * math.sin(th - beta)
    k2t = om + 0.5 * h * k1o
    k2o = k * math.sin(th + 0.5 * h * k1t - beta)
    k3t = om + 0.5 * h * k2o
    k3o = k * math.sin(th + 0.5 * h * k2t - beta)
    k4t = om + h * k3o
    k4o = k * math.sin(th + h * k3t - beta)
    return (th + h / 6.0 * (k1t + 2 * k2t + 2 * k3t + k4t),
            om + h / 6.0 * (k1o + 2 * k2o + 2 * k3o + k4o))


@njit(cache=True)
def topple_profile(omega0, theta0, inertia, mgl, beta, n_samples, t_limit):
    """Tilt of a pin falling over its base rim: I th'' = m g l sin(th - beta), th(0)=theta0.

    Integrated with RK4 until the pin lies (th = pi/2). Returns (theta samples at
    uniform spacing, spacing ds, fall time, tilt rate at landing). A pin that does
    not pass its balance point returns fall time inf.
    """
    half_pi = 0.5 * math.pi
    k = mgl / inertia

    # pass 1: the fall time
    dt = 1e-5
    th = theta0
    om = omega0
    t = 0.0
    while th < half_pi:
        th_new, om_new = _topple_rk4(th, om, dt, k, beta)
        if th_new >= half_pi:
            f = (half_pi - th) / (th_new - th)
            t += f * dt
            om = om + f * (om_new - om)
            th = half_pi
            break
        th = th_new
        om = om_new
        t += dt
        if om <= 0.0 or t > t_limit:
            out = np.full(n_samples, theta0)
            return out, 1.0, math.inf, 0.0
    T = t
    om_end = om
    # pass 2: samples at uniform spacing
    out = np.empty(n_samples)
    ds = T / (n_samples - 1)
    sub = max(1, int(ds / 1e-5) + 1)
    h = ds / sub
    th = theta0
    om = omega0
    out[0] = th
    for i in range(1, n_samples):
        for _ in range(sub):
            th, om = _topple_rk4(th, om, h, k, beta)
        out[i] = min(th, half_pi)
    out[n_samples - 1] = half_pi
    return out, ds, T, om_end
