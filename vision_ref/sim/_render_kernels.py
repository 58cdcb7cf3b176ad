"""numba kernels of the overhead renderer (plain arrays in, plain arrays out).

All radiance is linear RGB where 1.0 is the brightness of a white surface under the
lamps at the table centre; the finishing kernel applies the sensor gain map
(vignetting), the sRGB curve, sensor noise and quantisation. Geometry is in table
millimetres. The public, typed wrappers live in :mod:`vision_ref.sim.render`.

Object primitives handed to :func:`render_box`:
  balls  (S, NB, 4): x, y, z, visible
  pins   (S, NP, 6): base x, y, z, tilt, direction, visible
  prims  (S, NQ, 12): kind (0 none, 1 tapered capsule, 2 ellipsoid), ax, ay, az,
         bx, by, bz, ra, rb, material, heading, 0  — capsule from a (radius ra) to
         b (radius rb); ellipsoid centre a, semi-axes b, turned by heading about z.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

# materials of prims (index into prim_albedo)
MAT_CUE_TIP, MAT_FERRULE, MAT_SHAFT, MAT_JOINT, MAT_BUTT, MAT_SLEEVE, MAT_SKIN, MAT_HAIR = range(8)

# background surface classes (bg_class map)
BG_CLOTH, BG_CUSHION, BG_GROOVE, BG_RAIL, BG_FLOOR, BG_MARK, BG_DIAMOND = range(7)

LAMP_RADIUS_MM = 160.0  # lamp shade opening: sets shadow softness and highlight size


# ---- small helpers -------------------------------------------------------------------


@njit(cache=True)
def smoothstep(e0, e1, x):
    if e0 == e1:
        return 1.0 if x >= e1 else 0.0
    t = (x - e0) / (e1 - e0)
    if t < 0.0:
        t = 0.0
    elif t > 1.0:
        t = 1.0
    return t * t * (3.0 - 2.0 * t)


@njit(cache=True)
def hash32(a, b, c, d):
    """A 32-bit integer hash of four ints (deterministic noise without state)."""
    h = (a * 0x27D4EB2F + b * 0x165667B1 + c * 0x9E3779B1 + d * 0x85EBCA77 + 0x6A09E667) & 0xFFFFFFFF
    h ^= h >> 15
    h = (h * 0x2C1B3C6D) & 0xFFFFFFFF
    h ^= h >> 12
    h = (h * 0x297A2D39) & 0xFFFFFFFF
    h ^= h >> 15
    return h


@njit(cache=True)
def gauss_from_hash(a, b, c, d):
    """Approximately standard normal (Irwin-Hall of four 16-bit uniforms from two hashes)."""
    h1 = hash32(a, b, c, d)
    h2 = hash32(d + 7919, a, b ^ 0x5BD1E995, c)
    s = (h1 & 0xFFFF) + (h1 >> 16) + (h2 & 0xFFFF) + (h2 >> 16)
    return (s / 65536.0 - 2.0) * 1.7320508075688772


@njit(cache=True)
def value_noise2(x, y, seed):
    """Smooth lattice noise in [-1, 1] at unit cell size."""
    xi = math.floor(x)
    yi = math.floor(y)
    fx = x - xi
    fy = y - yi
    ux = fx * fx * (3.0 - 2.0 * fx)
    uy = fy * fy * (3.0 - 2.0 * fy)
    ix = int(xi)
    iy = int(yi)
    a = hash32(ix, iy, seed, 11) / 2147483648.0 - 1.0
    b = hash32(ix + 1, iy, seed, 11) / 2147483648.0 - 1.0
    c = hash32(ix, iy + 1, seed, 11) / 2147483648.0 - 1.0
    d = hash32(ix + 1, iy + 1, seed, 11) / 2147483648.0 - 1.0
    return (a + (b - a) * ux) + ((c + (d - c) * ux) - (a + (b - a) * ux)) * uy


@njit(cache=True)
def srgb_encode(v):
    """Linear 0..1 -> sRGB 0..255 (float)."""
    if v <= 0.0:
        return 0.0
    if v >= 1.0:
        return 255.0
    if v <= 0.0031308:
        return 255.0 * 12.92 * v
    return 255.0 * (1.055 * v ** (1.0 / 2.4) - 0.055)


@njit(cache=True)
def lamp_irradiance(px, py, pz, nx, ny, nz, lamps, ambient, out):
    """Direct light of each lamp at a point with a normal; out[i] per lamp, returns ambient part.

    Lamps (L, 4): x, y, height, power; each shade throws light downwards with a
    cos-lobe, falling off with the square of the distance (normalised at 1 m).
    """
    for i in range(lamps.shape[0]):
        lx = lamps[i, 0] - px
        ly = lamps[i, 1] - py
        lz = lamps[i, 2] - pz
        d2 = lx * lx + ly * ly + lz * lz
        d = math.sqrt(d2)
        cos_n = (lx * nx + ly * ny + lz * nz) / d
        if cos_n <= 0.0 or lz <= 0.0:
            out[i] = 0.0
            continue
        cos_lamp = lz / d  # angle from the lamp's downward axis
        out[i] = lamps[i, 3] * cos_n * cos_lamp * 1.0e6 / d2
    return ambient * (0.55 + 0.45 * nz)


# ---- background: ray cast against the table's height field ----------------------------


@njit(cache=True)
def table_height(d, prof):
    """Surface height (mm) at outward distance ``d`` from the cushion nose line.

    prof: cushion_width, nose_height, rail_width, rail_height, floor_z.
    """
    cw = prof[0]
    nh = prof[1]
    rw = prof[2]
    rh = prof[3]
    if d < -2.0:
        return 0.0
    if d < 0.0:  # the nose face, nearly vertical (ball contact at nose height)
        return (d + 2.0) / 2.0 * (nh - 9.0)
    if d < 6.0:  # rounded nose top
        return nh - 9.0 + 9.0 * math.sqrt(max(0.0, 1.0 - ((6.0 - d) / 6.0) ** 2))
    if d < cw - 4.0:  # cushion top sloping up to the rail
        return nh + (rh - 3.0 - nh) * (d - 6.0) / (cw - 10.0)
    if d < cw:  # the joint between cushion cloth and rail wood
        return rh - 6.0
    if d < cw + rw - 6.0:
        return rh
    if d < cw + rw:  # rounded outer edge of the rail
        u = (d - (cw + rw - 6.0)) / 6.0
        return rh - 6.0 + 6.0 * math.sqrt(max(0.0, 1.0 - u * u))
    return prof[4]


@njit(cache=True)
def outward_distance(x, y, hl, hw):
    """Distance outside the playing area (negative inside) with the axis it is measured along."""
    dx = abs(x) - hl
    dy = abs(y) - hw
    if dx > dy:
        return dx, 0
    return dy, 1


@njit(cache=True)
def cast_table(ox, oy, oz, dx, dy, dz, hl, hw, prof):
    """Ray parameter of the first hit with the table surface (cloth, cushions, rails, floor)."""
    top = prof[3] + 1.0
    if dz >= 0.0:
        return -1.0
    t = (top - oz) / dz
    x = ox + t * dx
    y = oy + t * dy
    d, _ = outward_distance(x, y, hl, hw)
    if d < -45.0:  # far inside: nothing but cloth below
        return (0.0 - oz) / dz
    horiz = math.sqrt(dx * dx + dy * dy)
    step = 0.4 / max(horiz, 1e-3)  # ~0.4 mm horizontal per step
    step = min(step, 2.0 / abs(dz))
    cw_rw = prof[0] + prof[2]
    prev_t = t
    for _ in range(4000):
        x = ox + t * dx
        y = oy + t * dy
        z = oz + t * dz
        d, _ = outward_distance(x, y, hl, hw)
        if d > cw_rw and z < prof[3] - 6.0:
            return (prof[4] - oz) / dz  # past the rail: the floor
        if z <= table_height(d, prof):
            lo = prev_t
            hi = t
            for _ in range(30):
                mid = 0.5 * (lo + hi)
                xm = ox + mid * dx
                ym = oy + mid * dy
                dm, _ = outward_distance(xm, ym, hl, hw)
                if oz + mid * dz <= table_height(dm, prof):
                    hi = mid
                else:
                    lo = mid
            return hi
        prev_t = t
        t += step
    return (0.0 - oz) / dz


@njit(cache=True)
def background_kernel(
    origin, rays, hl, hw, prof, lamps, ambient, cloth, cushion, wood, wood_dark, groove, floor_rgb,
    mark_rgb, diamond_rgb, marks, diamonds, mark_radius, diamond_size, focal, seed,
    out_lin, out_pt, out_t, out_cls,
):
    """Render the static table for every pixel ray: colour (linear), hit point, depth, class."""
    H = rays.shape[0]
    W = rays.shape[1]
    nl = lamps.shape[0]
    li = np.zeros(nl)
    cw = prof[0]
    rw = prof[2]
    for r in range(H):
        for c in range(W):
            dx = rays[r, c, 0]
            dy = rays[r, c, 1]
            dz = rays[r, c, 2]
            t = cast_table(origin[0], origin[1], origin[2], dx, dy, dz, hl, hw, prof)
            x = origin[0] + t * dx
            y = origin[1] + t * dy
            z = origin[2] + t * dz
            out_pt[r, c, 0] = x
            out_pt[r, c, 1] = y
            out_pt[r, c, 2] = z
            out_t[r, c] = t
            px_mm = t / focal  # footprint of a pixel on the surface, for anti-aliasing
            d, axis = outward_distance(x, y, hl, hw)
            # normal from the height-field slope across the boundary
            eps = 0.25
            dh = (table_height(d + eps, prof) - table_height(d - eps, prof)) / (2 * eps)
            if d > cw + rw:
                dh = 0.0
            gx = 0.0
            gy = 0.0
            if axis == 0:
                gx = dh * (1.0 if x > 0 else -1.0)
            else:
                gy = dh * (1.0 if y > 0 else -1.0)
            nn = math.sqrt(gx * gx + gy * gy + 1.0)
            nx = -gx / nn
            ny = -gy / nn
            nz = 1.0 / nn
            amb = lamp_irradiance(x, y, z, nx, ny, nz, lamps, ambient, li)
            e = amb
            for i in range(nl):
                e += li[i]
            cls = BG_CLOTH
            ar = 0.0
            ag = 0.0
            ab = 0.0
            spec = 0.0
            if d < 0.0 and z < 1.0:
                # cloth: nap at a few scales, a faint large-scale unevenness of the dye
                n1 = value_noise2(x / 2.2, y / 1.4, seed)
                n2 = value_noise2(x / 9.0, y / 7.0, seed + 1)
                n3 = value_noise2(x / 340.0, y / 260.0, seed + 2)
                f = 1.0 + 0.045 * n1 + 0.025 * n2 + 0.02 * n3
                ar = cloth[0] * f
                ag = cloth[1] * f
                ab = cloth[2] * f
                # printed spot and pin marks
                cov = 0.0
                for m in range(marks.shape[0]):
                    dd = math.sqrt((x - marks[m, 0]) ** 2 + (y - marks[m, 1]) ** 2)
                    cv = min(1.0, max(0.0, 0.5 + (mark_radius - dd) / px_mm))
                    if cv > cov:
                        cov = cv
                if cov > 0.0:
                    cls = BG_MARK
                    ar = ar + (mark_rgb[0] - ar) * cov
                    ag = ag + (mark_rgb[1] - ag) * cov
                    ab = ab + (mark_rgb[2] - ab) * cov
            elif d < cw - 4.0:
                cls = BG_CUSHION
                n1 = value_noise2(x / 2.2, y / 1.4, seed)
                f = 1.0 + 0.04 * n1
                ar = cushion[0] * f
                ag = cushion[1] * f
                ab = cushion[2] * f
            elif d < cw:
                cls = BG_GROOVE
                ar = groove[0]
                ag = groove[1]
                ab = groove[2]
            elif d <= cw + rw:
                cls = BG_RAIL
                # wood grain runs along the rail
                u = y if axis == 0 else x
                v = x if axis == 0 else y
                g = value_noise2(u / 60.0, v / 1.8, seed + 5) * 0.6 + value_noise2(u / 300.0, v / 6.0, seed + 6) * 0.4
                g = 0.5 + 0.5 * math.sin(6.0 * g + v / 9.0)
                ar = wood[0] + (wood_dark[0] - wood[0]) * g
                ag = wood[1] + (wood_dark[1] - wood[1]) * g
                ab = wood[2] + (wood_dark[2] - wood[2]) * g
                # diamonds: rhombus inlays (long axis across the rail)
                cov = 0.0
                for m in range(diamonds.shape[0]):
                    ddx = x - diamonds[m, 0]
                    ddy = y - diamonds[m, 1]
                    if diamonds[m, 2] == 0:  # on a long rail: across = y
                        q = abs(ddx) / diamond_size[0] + abs(ddy) / diamond_size[1]
                    else:
                        q = abs(ddy) / diamond_size[0] + abs(ddx) / diamond_size[1]
                    cv = min(1.0, max(0.0, 0.5 + (1.0 - q) * diamond_size[0] / px_mm))
                    if cv > cov:
                        cov = cv
                if cov > 0.0:
                    cls = BG_DIAMOND
                    ar = ar + (diamond_rgb[0] - ar) * cov
                    ag = ag + (diamond_rgb[1] - ag) * cov
                    ab = ab + (diamond_rgb[2] - ab) * cov
                # varnish: a soft reflection of the lamps
                rx = dx - 2.0 * (dx * nx + dy * ny + dz * nz) * nx
                ry = dy - 2.0 * (dx * nx + dy * ny + dz * nz) * ny
                rz = dz - 2.0 * (dx * nx + dy * ny + dz * nz) * nz
                for i in range(nl):
                    lx = lamps[i, 0] - x
                    ly = lamps[i, 1] - y
                    lz = lamps[i, 2] - z
                    ld = math.sqrt(lx * lx + ly * ly + lz * lz)
                    ca = (rx * lx + ry * ly + rz * lz) / ld
                    spec += 0.10 * lamps[i, 3] * max(0.0, ca) ** 40
            else:
                cls = BG_FLOOR
                n1 = value_noise2(x / 40.0, y / 40.0, seed + 9)
                f = 1.0 + 0.08 * n1
                ar = floor_rgb[0] * f
                ag = floor_rgb[1] * f
                ab = floor_rgb[2] * f
                e = 0.35 * e  # the lamps' shades keep most light off the floor
            out_cls[r, c] = cls
            out_lin[r, c, 0] = ar * e + spec
            out_lin[r, c, 1] = ag * e + spec
            out_lin[r, c, 2] = ab * e + spec


# ---- moving objects ---------------------------------------------------------------------


@njit(cache=True)
def ray_sphere(ox, oy, oz, dx, dy, dz, cx, cy, cz, rad):
    """(t of the entry point or -1, perpendicular distance of the centre from the ray)."""
    lx = cx - ox
    ly = cy - oy
    lz = cz - oz
    tc = lx * dx + ly * dy + lz * dz
    d2 = lx * lx + ly * ly + lz * lz - tc * tc
    if d2 < 0.0:
        d2 = 0.0
    perp = math.sqrt(d2)
    if tc <= 0.0:
        return -1.0, perp
    if perp >= rad:
        return tc, perp  # a graze: t of the closest approach (caller uses the coverage)
    return tc - math.sqrt(rad * rad - d2), perp


@njit(cache=True)
def pin_lift(prof_r, height, rmax, tilt):
    """How far the base centre rises so the tilted pin rests on the cloth (not through it)."""
    n = prof_r.shape[0]
    st = math.sin(tilt)
    ct = math.cos(tilt)
    lift = 0.0
    for k in range(n):
        h = height * k / (n - 1)
        r = rmax * prof_r[k]
        v = r * st - h * ct
        if v > lift:
            lift = v
    return lift


@njit(cache=True)
def pin_frame(tilt, direction):
    """Unit axis of a pin and two unit vectors across it."""
    st = math.sin(tilt)
    ax = st * math.cos(direction)
    ay = st * math.sin(direction)
    az = math.cos(tilt)
    # u: horizontal, perpendicular to the fall direction; w = axis x u
    ux = -math.sin(direction)
    uy = math.cos(direction)
    uz = 0.0
    wx = ay * uz - az * uy
    wy = az * ux - ax * uz
    wz = ax * uy - ay * ux
    return ax, ay, az, ux, uy, uz, wx, wy, wz


@njit(cache=True)
def profile_radius(prof_r, rmax, u):
    n = prof_r.shape[0]
    if u <= 0.0:
        return rmax * prof_r[0]
    if u >= 1.0:
        return rmax * prof_r[n - 1]
    f = u * (n - 1)
    k = int(f)
    if k >= n - 1:
        k = n - 2
    a = f - k
    return rmax * (prof_r[k] * (1.0 - a) + prof_r[k + 1] * a)


@njit(cache=True)
def ray_pin(ox, oy, oz, dx, dy, dz, bx, by, bz, tilt, direction, prof_r, height, rmax):
    """Entry of a ray into a solid of revolution (a pin): (t or -1, local height u, nx, ny, nz)."""
    ax, ay, az, ux, uy, uz, wx, wy, wz = pin_frame(tilt, direction)
    bz = bz + pin_lift(prof_r, height, rmax, tilt)
    px = ox - bx
    py = oy - by
    pz = oz - bz
    # local coordinates: (u, w) across, a along the axis
    o0 = px * ux + py * uy + pz * uz
    o1 = px * wx + py * wy + pz * wz
    o2 = px * ax + py * ay + pz * az
    d0 = dx * ux + dy * uy + dz * uz
    d1 = dx * wx + dy * wy + dz * wz
    d2 = dx * ax + dy * ay + dz * az
    # clip the ray to the bounding cylinder and slab
    t0 = -1e30
    t1 = 1e30
    if abs(d2) < 1e-12:
        if o2 < 0.0 or o2 > height:
            return -1.0, 0.0, 0.0, 0.0, 0.0
    else:
        ta = (0.0 - o2) / d2
        tb = (height - o2) / d2
        if ta > tb:
            ta, tb = tb, ta
        t0 = max(t0, ta)
        t1 = min(t1, tb)
    a = d0 * d0 + d1 * d1
    b = 2.0 * (o0 * d0 + o1 * d1)
    c = o0 * o0 + o1 * o1 - rmax * rmax
    if a < 1e-12:
        if c > 0.0:
            return -1.0, 0.0, 0.0, 0.0, 0.0
    else:
        disc = b * b - 4.0 * a * c
        if disc <= 0.0:
            return -1.0, 0.0, 0.0, 0.0, 0.0
        sq = math.sqrt(disc)
        t0 = max(t0, (-b - sq) / (2.0 * a))
        t1 = min(t1, (-b + sq) / (2.0 * a))
    if t1 <= t0 or t1 <= 0.0:
        return -1.0, 0.0, 0.0, 0.0, 0.0
    t0 = max(t0, 0.0)
    nsteps = 48
    dt = (t1 - t0) / nsteps
    prev = t0
    for k in range(nsteps + 1):
        t = t0 + k * dt
        q0 = o0 + t * d0
        q1 = o1 + t * d1
        q2 = o2 + t * d2
        rr = math.sqrt(q0 * q0 + q1 * q1)
        if rr <= profile_radius(prof_r, rmax, q2 / height):
            if k > 0:
                lo = prev
                hi = t
                for _ in range(14):
                    mid = 0.5 * (lo + hi)
                    m0 = o0 + mid * d0
                    m1 = o1 + mid * d1
                    m2 = o2 + mid * d2
                    if math.sqrt(m0 * m0 + m1 * m1) <= profile_radius(prof_r, rmax, m2 / height):
                        hi = mid
                    else:
                        lo = mid
                t = hi
            q0 = o0 + t * d0
            q1 = o1 + t * d1
            q2 = o2 + t * d2
            u = q2 / height
            rr = math.sqrt(q0 * q0 + q1 * q1)
            if u <= 1e-3 and rr < profile_radius(prof_r, rmax, 0.0) - 1e-3:
                n0 = 0.0
                n1 = 0.0
                n2 = -1.0  # flat base
            else:
                du = 0.01
                slope = (profile_radius(prof_r, rmax, u + du) - profile_radius(prof_r, rmax, u - du)) / (2 * du * height)
                if rr < 1e-9:
                    n0 = 0.0
                    n1 = 0.0
                    n2 = 1.0
                else:
                    n0 = q0 / rr
                    n1 = q1 / rr
                    n2 = -slope
                nl = math.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
                n0 /= nl
                n1 /= nl
                n2 /= nl
            nx = n0 * ux + n1 * wx + n2 * ax
            ny = n0 * uy + n1 * wy + n2 * ay
            nz = n0 * uz + n1 * wz + n2 * az
            return t, u, nx, ny, nz
        prev = t
    return -1.0, 0.0, 0.0, 0.0, 0.0


@njit(cache=True)
def ray_capsule(ox, oy, oz, dx, dy, dz, ax, ay, az, bx, by, bz, ra, rb):
    """Tapered capsule seen from a ray (closest-approach model, exact for a round capsule).

    Returns (t, coverage distance = radius - miss distance, s along the axis 0..1, nx, ny, nz)
    or t = -1 when the ray passes more than a radius + 2 mm away.
    """
    ex = bx - ax
    ey = by - ay
    ez = bz - az
    ee = ex * ex + ey * ey + ez * ez
    wx = ox - ax
    wy = oy - ay
    wz = oz - az
    de = dx * ex + dy * ey + dz * ez
    dw = dx * wx + dy * wy + dz * wz
    ew = ex * wx + ey * wy + ez * wz
    den = ee - de * de
    if den > 1e-9:
        s = (ew - de * dw) / den  # axis parameter of the closest approach (0 at a, 1 at b)
    else:
        s = 0.0
    if s < 0.0:
        s = 0.0
    elif s > 1.0:
        s = 1.0
    # closest point on the ray to the axis point
    cx = ax + s * ex
    cy = ay + s * ey
    cz = az + s * ez
    t = (cx - ox) * dx + (cy - oy) * dy + (cz - oz) * dz
    if t <= 0.0:
        return -1.0, -1.0, 0.0, 0.0, 0.0, 0.0
    qx = ox + t * dx - cx
    qy = oy + t * dy - cy
    qz = oz + t * dz - cz
    miss = math.sqrt(qx * qx + qy * qy + qz * qz)
    rad = ra + (rb - ra) * s
    if miss > rad + 2.0:
        return -1.0, -1.0, 0.0, 0.0, 0.0, 0.0
    m = min(miss, rad * 0.999)
    back = math.sqrt(rad * rad - m * m)
    # normal: across the axis towards the ray, tipped back towards the camera
    if miss > 1e-9:
        nx = qx / miss * m - dx * back
        ny = qy / miss * m - dy * back
        nz = qz / miss * m - dz * back
    else:
        nx = -dx * back
        ny = -dy * back
        nz = -dz * back
    nl = math.sqrt(nx * nx + ny * ny + nz * nz)
    return t - back, rad - miss, s, nx / nl, ny / nl, nz / nl


@njit(cache=True)
def ray_ellipsoid(ox, oy, oz, dx, dy, dz, cx, cy, cz, sa, sb, sc, heading):
    """Ray against an ellipsoid turned by ``heading`` about z: (t or -1, miss_mm, nx, ny, nz)."""
    ch = math.cos(heading)
    sh = math.sin(heading)
    px = ox - cx
    py = oy - cy
    pz = oz - cz
    lo0 = (px * ch + py * sh) / sa
    lo1 = (-px * sh + py * ch) / sb
    lo2 = pz / sc
    ld0 = (dx * ch + dy * sh) / sa
    ld1 = (-dx * sh + dy * ch) / sb
    ld2 = dz / sc
    a = ld0 * ld0 + ld1 * ld1 + ld2 * ld2
    b = lo0 * ld0 + lo1 * ld1 + lo2 * ld2
    c = lo0 * lo0 + lo1 * lo1 + lo2 * lo2 - 1.0
    disc = b * b - a * c
    rmean = (sa + sb + sc) / 3.0
    if disc < 0.0:
        # miss distance (approx., in mm) for anti-aliased edges
        tc = -b / a
        q0 = lo0 + tc * ld0
        q1 = lo1 + tc * ld1
        q2 = lo2 + tc * ld2
        miss = (math.sqrt(q0 * q0 + q1 * q1 + q2 * q2) - 1.0) * rmean
        if miss > 2.0 or tc <= 0.0:
            return -1.0, miss, 0.0, 0.0, 0.0
        t = tc
    else:
        t = (-b - math.sqrt(disc)) / a
        if t <= 0.0:
            return -1.0, 1e9, 0.0, 0.0, 0.0
        miss = -math.sqrt(disc / a) * rmean
    q0 = lo0 + t * ld0
    q1 = lo1 + t * ld1
    q2 = lo2 + t * ld2
    n0 = q0 / sa
    n1 = q1 / sb
    n2 = q2 / sc
    nx = n0 * ch - n1 * sh
    ny = n0 * sh + n1 * ch
    nz = n2
    nl = math.sqrt(nx * nx + ny * ny + nz * nz)
    return t, miss, nx / nl, ny / nl, nz / nl


@njit(cache=True)
def sphere_light_occlusion(px, py, pz, cx, cy, cz, rad, lx, ly, lz, lamp_r):
    """Fraction of a disc lamp at L hidden from point P by a sphere (soft shadow)."""
    vx = lx - px
    vy = ly - py
    vz = lz - pz
    vl = math.sqrt(vx * vx + vy * vy + vz * vz)
    vx /= vl
    vy /= vl
    vz /= vl
    qx = cx - px
    qy = cy - py
    qz = cz - pz
    ql = math.sqrt(qx * qx + qy * qy + qz * qz)
    if ql <= rad:
        return 1.0
    s = qx * vx + qy * vy + qz * vz
    if s <= 0.0 or s >= vl:
        return 0.0
    # cheap exact-zero test: sin(gamma) > sin(alpha) + tan(beta) >= sin(alpha + beta)
    # means the sphere misses the lamp disc entirely (no acos/asin/atan needed)
    perp2 = ql * ql - s * s
    lim = rad + lamp_r * ql / vl
    if perp2 > lim * lim:
        return 0.0
    cosg = s / ql
    if cosg > 1.0:
        cosg = 1.0
    gamma = math.acos(cosg)
    alpha = math.asin(min(1.0, rad / ql))
    beta = math.atan(lamp_r / vl)
    full = min(1.0, (alpha * alpha) / (beta * beta))
    return full * smoothstep(alpha + beta, abs(alpha - beta), gamma)


@njit(cache=True)
def sphere_ao(px, py, pz, nx, ny, nz, cx, cy, cz, rad, reach):
    """Ambient light a sphere hides from a surface point (exact form factor, faded out at reach)."""
    qx = cx - px
    qy = cy - py
    qz = cz - pz
    d = math.sqrt(qx * qx + qy * qy + qz * qz)
    if d <= rad:
        return 1.0
    cos_t = (qx * nx + qy * ny + qz * nz) / d
    if cos_t <= 0.0:
        return 0.0
    f = (rad / d) ** 2 * cos_t
    return f * (1.0 - smoothstep(0.6 * reach, reach, d))


@njit(cache=True)
def ray_misses_sphere(ox, oy, oz, dx, dy, dz, cx, cy, cz, rad):
    """True when the ray (unit d) passes farther than ``rad`` from the centre (or it is behind)."""
    lx = cx - ox
    ly = cy - oy
    lz = cz - oz
    tc = lx * dx + ly * dy + lz * dz
    if tc <= -rad:
        return True
    d2 = lx * lx + ly * ly + lz * lz - tc * tc
    return d2 > rad * rad


@njit(cache=True)
def cannot_shade(px, py, pz, cx, cy, cz, rad, reach, lamps, lamp_r):
    """True when a bounding sphere can neither darken the ambient light at P (beyond
    ``reach``) nor hide any lamp disc from P: its shadow terms are exactly zero."""
    qx = cx - px
    qy = cy - py
    qz = cz - pz
    q2 = qx * qx + qy * qy + qz * qz
    if q2 < (reach + rad) * (reach + rad):
        return False
    ql = math.sqrt(q2)
    for i in range(lamps.shape[0]):
        vx = lamps[i, 0] - px
        vy = lamps[i, 1] - py
        vz = lamps[i, 2] - pz
        vl = math.sqrt(vx * vx + vy * vy + vz * vz)
        s = (qx * vx + qy * vy + qz * vz) / vl
        if s <= -rad or s >= vl + rad:
            continue
        lim = rad + lamp_r * (ql + rad) / vl
        if q2 - s * s <= lim * lim:
            return False
    return True


@njit(cache=True)
def closest_on_segment(px, py, pz, ax, ay, az, bx, by, bz):
    ex = bx - ax
    ey = by - ay
    ez = bz - az
    ee = ex * ex + ey * ey + ez * ez
    s = 0.0
    if ee > 1e-12:
        s = ((px - ax) * ex + (py - ay) * ey + (pz - az) * ez) / ee
        s = min(1.0, max(0.0, s))
    return ax + s * ex, ay + s * ey, az + s * ez, s


@njit(cache=True)
def shade_surface(
    px, py, pz, nx, ny, nz, vx, vy, vz, alb_r, alb_g, alb_b, ks, gloss, lamps, ambient, cloth, li,
):
    """Lambert + lamp reflections (disc lamps) + ambient with cloth bounce from below."""
    amb = lamp_irradiance(px, py, pz, nx, ny, nz, lamps, ambient, li)
    e = amb
    for i in range(lamps.shape[0]):
        e += li[i]
    # light bounced off the cloth reaches the lower half
    bounce = 0.22 * max(0.0, -nz)
    r = alb_r * (e + bounce * cloth[0])
    g = alb_g * (e + bounce * cloth[1])
    b = alb_b * (e + bounce * cloth[2])
    if ks > 0.0:
        # reflection of the view ray; the lamps are discs
        dn = vx * nx + vy * ny + vz * nz
        rx = vx - 2.0 * dn * nx
        ry = vy - 2.0 * dn * ny
        rz = vz - 2.0 * dn * nz
        spec = 0.0
        for i in range(lamps.shape[0]):
            lx = lamps[i, 0] - px
            ly = lamps[i, 1] - py
            lz = lamps[i, 2] - pz
            ld = math.sqrt(lx * lx + ly * ly + lz * lz)
            ca = (rx * lx + ry * ly + rz * lz) / ld
            beta = LAMP_RADIUS_MM / ld * gloss
            cb = math.cos(beta)
            c0 = math.cos(beta * 1.6)
            spec += lamps[i, 3] * smoothstep(c0, cb, ca) * 6.0
            spec += lamps[i, 3] * 0.25 * max(0.0, ca) ** 30
        # Fresnel rim: the cloth reflected in the lower rim, a dark room above
        cosv = abs(dn)
        fres = 0.04 + 0.5 * (1.0 - cosv) ** 5
        if rz < 0.0:
            r += fres * cloth[0] * 0.8
            g += fres * cloth[1] * 0.8
            b += fres * cloth[2] * 0.8
        r += ks * spec
        g += ks * spec
        b += ks * spec
    return r, g, b


@njit(cache=True)
def pin_albedo(u, kind, body, band, top, king_band, king_top):
    """Colour of a pin at relative height u (kind 0 plain, 1 king)."""
    if kind == 0:
        if u > 0.90:
            return band[0], band[1], band[2]
        if 0.64 < u < 0.74:
            return band[0], band[1], band[2]
        return body[0], body[1], body[2]
    if u > 0.93:
        return king_top[0], king_top[1], king_top[2]
    if u > 0.80:
        return king_band[0], king_band[1], king_band[2]
    if 0.60 < u < 0.70:
        return king_band[0], king_band[1], king_band[2]
    return body[0], body[1], body[2]


@njit(cache=True)
def render_box(
    y0, x0, bh, bw, rays, origin, focal, bg_lin, bg_pt, bg_t, gain,
    times, frame_t, row_dt, exposure, jitter,
    balls, ball_rad, ball_alb, pins, pin_kind, pin_prof, pin_height, pin_rmax, pin_cols,
    prims, prim_alb, lamps, ambient, cloth, shadow_reach, blur_step_px, min_samples, out,
):
    """Average radiance over the exposure of each pixel of a box, objects composited on the table.

    Each pixel uses as many of the samples as the objects that can reach it need:
    one per ``blur_step_px`` of their image motion over the exposure (shadows count
    twice: they move faster than low objects), at least ``min_samples`` for
    anti-aliasing, spread evenly over all the samples -- a slow arm next to a fast
    stick costs its few samples, not the stick's many.

    out (bh, bw, 3) receives gain-applied linear radiance. A sample at time
    times[s] counts for row r when it falls in the row's exposure
    [frame_t + r*row_dt, frame_t + r*row_dt + exposure] (row_dt = 0: global shutter).
    """
    H = rays.shape[0]
    W = rays.shape[1]
    S = times.shape[0]
    nb = balls.shape[1]
    npn = pins.shape[1]
    nq = prims.shape[1]
    nl = lamps.shape[0]
    li = np.zeros(nl)
    vis = np.zeros(nl)
    maxh = nb + npn + nq
    hit_t = np.zeros(maxh)
    hit_cov = np.zeros(maxh)
    hit_col = np.zeros((maxh, 3))
    ox = origin[0]
    oy = origin[1]
    oz = origin[2]
    body = pin_cols[0]
    band = pin_cols[1]
    top = pin_cols[2]
    kband = pin_cols[3]
    ktop = pin_cols[4]
    # per sample, once for the whole box: pin axes and lifts, bounding spheres of pins and prims
    pin_geo = np.zeros((S, npn, 4))  # axis x, y, z, lift
    pin_bs = np.zeros((S, npn, 4))  # bounding sphere: centre, radius
    prim_bs = np.zeros((S, nq, 4))
    for s in range(S):
        for k in range(npn):
            if pins[s, k, 5] < 0.5:
                continue
            kind = pin_kind[k]
            hgt = pin_height[kind]
            pax, pay, paz, _, _, _, _, _, _ = pin_frame(pins[s, k, 3], pins[s, k, 4])
            lift = pin_lift(pin_prof[kind], hgt, pin_rmax[kind], pins[s, k, 3])
            pin_geo[s, k, 0] = pax
            pin_geo[s, k, 1] = pay
            pin_geo[s, k, 2] = paz
            pin_geo[s, k, 3] = lift
            pin_bs[s, k, 0] = pins[s, k, 0] + pax * 0.5 * hgt
            pin_bs[s, k, 1] = pins[s, k, 1] + pay * 0.5 * hgt
            pin_bs[s, k, 2] = pins[s, k, 2] + lift + paz * 0.5 * hgt
            pin_bs[s, k, 3] = math.sqrt(0.25 * hgt * hgt + pin_rmax[kind] * pin_rmax[kind]) + 0.5
        for q in range(nq):
            kq = prims[s, q, 0]
            if kq < 0.5:
                continue
            if kq < 1.5:
                ex = prims[s, q, 4] - prims[s, q, 1]
                ey = prims[s, q, 5] - prims[s, q, 2]
                ez = prims[s, q, 6] - prims[s, q, 3]
                prim_bs[s, q, 0] = prims[s, q, 1] + 0.5 * ex
                prim_bs[s, q, 1] = prims[s, q, 2] + 0.5 * ey
                prim_bs[s, q, 2] = prims[s, q, 3] + 0.5 * ez
                prim_bs[s, q, 3] = 0.5 * math.sqrt(ex * ex + ey * ey + ez * ez) + max(prims[s, q, 7], prims[s, q, 8]) + 2.0
            else:
                prim_bs[s, q, 0] = prims[s, q, 1]
                prim_bs[s, q, 1] = prims[s, q, 2]
                prim_bs[s, q, 2] = prims[s, q, 3]
                prim_bs[s, q, 3] = max(prims[s, q, 4], max(prims[s, q, 5], prims[s, q, 6])) + 2.0
    # swept bounding spheres of every object over all the samples (centre, radius, AO reach):
    # a pixel none of them can touch -- no hit, no shadow -- is the background as it is
    nobj = nb + npn + nq
    # each object's bounding sphere in each sample, found in one place:
    # (present, centre x, y, z, radius, AO reach)
    obj = np.zeros((S, nobj, 6))
    for s in range(S):
        for o in range(nobj):
            if o < nb:
                if balls[s, o, 3] < 0.5:
                    continue
                obj[s, o, 1] = balls[s, o, 0]
                obj[s, o, 2] = balls[s, o, 1]
                obj[s, o, 3] = balls[s, o, 2]
                obj[s, o, 4] = ball_rad
                obj[s, o, 5] = shadow_reach
            elif o < nb + npn:
                k = o - nb
                if pins[s, k, 5] < 0.5:
                    continue
                obj[s, o, 1] = pin_bs[s, k, 0]
                obj[s, o, 2] = pin_bs[s, k, 1]
                obj[s, o, 3] = pin_bs[s, k, 2]
                obj[s, o, 4] = pin_bs[s, k, 3]
                obj[s, o, 5] = 4.0 * pin_rmax[pin_kind[k]] + 20.0
            else:
                q = o - nb - npn
                if prims[s, q, 0] < 0.5:
                    continue
                obj[s, o, 1] = prim_bs[s, q, 0]
                obj[s, o, 2] = prim_bs[s, q, 1]
                obj[s, o, 3] = prim_bs[s, q, 2]
                obj[s, o, 4] = prim_bs[s, q, 3] + 2.0
                if prims[s, q, 0] < 1.5:
                    obj[s, o, 5] = 3.0 * max(prims[s, q, 7], prims[s, q, 8]) + 60.0
                else:
                    obj[s, o, 5] = 3.0 * max(prims[s, q, 4], max(prims[s, q, 5], prims[s, q, 6])) + 60.0
            obj[s, o, 0] = 1.0
    sweep = np.zeros((nobj, 6))  # centre, radius, AO reach, motion over the samples (mm)
    for o in range(nobj):
        cnt = 0
        for s in range(S):
            if obj[s, o, 0] < 0.5:
                continue
            sweep[o, 0] += obj[s, o, 1]
            sweep[o, 1] += obj[s, o, 2]
            sweep[o, 2] += obj[s, o, 3]
            cnt += 1
        if cnt == 0:
            sweep[o, 3] = -1.0
            continue
        sweep[o, 0] /= cnt
        sweep[o, 1] /= cnt
        sweep[o, 2] /= cnt
        rad = 0.0
        reach = 0.0
        for s in range(S):
            if obj[s, o, 0] < 0.5:
                continue
            dd = math.sqrt((obj[s, o, 1] - sweep[o, 0]) ** 2 + (obj[s, o, 2] - sweep[o, 1]) ** 2
                           + (obj[s, o, 3] - sweep[o, 2]) ** 2) + obj[s, o, 4]
            if dd > rad:
                rad = dd
            if obj[s, o, 5] > reach:
                reach = obj[s, o, 5]
        sweep[o, 3] = rad
        sweep[o, 4] = reach
        # motion: the largest displacement of the object's key points from its first sample
        first = -1
        mv = 0.0
        for s in range(S):
            if o < nb:
                if balls[s, o, 3] < 0.5:
                    continue
                p0 = balls[s, o, 0]
                p1 = balls[s, o, 1]
                p2 = balls[s, o, 2]
                p3 = p0
                p4 = p1
                p5 = p2
            elif o < nb + npn:
                k = o - nb
                if pins[s, k, 5] < 0.5:
                    continue
                hgt = pin_height[pin_kind[k]]
                p0 = pins[s, k, 0]
                p1 = pins[s, k, 1]
                p2 = pins[s, k, 2]
                p3 = p0 + pin_geo[s, k, 0] * hgt
                p4 = p1 + pin_geo[s, k, 1] * hgt
                p5 = p2 + pin_geo[s, k, 3] + pin_geo[s, k, 2] * hgt
            else:
                q = o - nb - npn
                if prims[s, q, 0] < 0.5:
                    continue
                p0 = prims[s, q, 1]
                p1 = prims[s, q, 2]
                p2 = prims[s, q, 3]
                if prims[s, q, 0] < 1.5:
                    p3 = prims[s, q, 4]
                    p4 = prims[s, q, 5]
                    p5 = prims[s, q, 6]
                else:
                    p3 = p0
                    p4 = p1
                    p5 = p2
            if first < 0:
                first = s
                f0 = p0
                f1 = p1
                f2 = p2
                f3 = p3
                f4 = p4
                f5 = p5
                continue
            da = math.sqrt((p0 - f0) ** 2 + (p1 - f1) ** 2 + (p2 - f2) ** 2)
            db = math.sqrt((p3 - f3) ** 2 + (p4 - f4) ** 2 + (p5 - f5) ** 2)
            if da > mv:
                mv = da
            if db > mv:
                mv = db
        sweep[o, 5] = mv
    # tiles of TILE x TILE pixels: only the objects whose swept sphere (grown by the
    # tile's size) can reach a tile are tested at its pixels; empty tiles are background
    TILE = 8
    cand = np.empty(nobj, dtype=np.int64)
    for ty in range(0, bh, TILE):
        for tx in range(0, bw, TILE):
            th_ = min(TILE, bh - ty)
            tw_ = min(TILE, bw - tx)
            rc0 = y0 + ty + th_ // 2
            cc0 = x0 + tx + tw_ // 2
            cdx = rays[rc0, cc0, 0]
            cdy = rays[rc0, cc0, 1]
            cdz = rays[rc0, cc0, 2]
            cbx = bg_pt[rc0, cc0, 0]
            cby = bg_pt[rc0, cc0, 1]
            cbz = bg_pt[rc0, cc0, 2]
            # the tile's angular radius (rays) and its reach on the table (background points)
            cos_min = 1.0
            grow_bg = 0.0
            for cy_ in (y0 + ty, y0 + ty + th_ - 1):
                for cx_ in (x0 + tx, x0 + tx + tw_ - 1):
                    cosv = cdx * rays[cy_, cx_, 0] + cdy * rays[cy_, cx_, 1] + cdz * rays[cy_, cx_, 2]
                    if cosv < cos_min:
                        cos_min = cosv
                    gb = math.sqrt((bg_pt[cy_, cx_, 0] - cbx) ** 2 + (bg_pt[cy_, cx_, 1] - cby) ** 2 + (bg_pt[cy_, cx_, 2] - cbz) ** 2)
                    if gb > grow_bg:
                        grow_bg = gb
            sin_t = math.sqrt(max(0.0, 1.0 - cos_min * cos_min)) + 1e-6
            ncand = 0
            for o in range(nobj):
                if sweep[o, 3] < 0.0:
                    continue
                tc = (sweep[o, 0] - ox) * cdx + (sweep[o, 1] - oy) * cdy + (sweep[o, 2] - oz) * cdz
                dist_o = math.sqrt((sweep[o, 0] - ox) ** 2 + (sweep[o, 1] - oy) ** 2 + (sweep[o, 2] - oz) ** 2)
                grow = dist_o * sin_t + 2.0 * max(tc, 1.0) / focal + 1.0
                if not ray_misses_sphere(ox, oy, oz, cdx, cdy, cdz, sweep[o, 0], sweep[o, 1], sweep[o, 2], sweep[o, 3] + grow):
                    cand[ncand] = o
                    ncand += 1
                    continue
                g2 = grow_bg * 2.0 + 1.0
                if not cannot_shade(cbx, cby, cbz, sweep[o, 0], sweep[o, 1], sweep[o, 2], sweep[o, 3] + g2, sweep[o, 4] + g2, lamps, LAMP_RADIUS_MM):
                    cand[ncand] = o
                    ncand += 1
            if ncand == 0:
                for rr in range(ty, ty + th_):
                    r = y0 + rr
                    for cc in range(tx, tx + tw_):
                        c = x0 + cc
                        out[rr, cc, 0] = bg_lin[r, c, 0] * gain[r, c]
                        out[rr, cc, 1] = bg_lin[r, c, 1] * gain[r, c]
                        out[rr, cc, 2] = bg_lin[r, c, 2] * gain[r, c]
                continue
            for rr in range(ty, ty + th_):
                r = y0 + rr
                t_row0 = frame_t + r * row_dt
                for cc in range(tx, tx + tw_):
                    c = x0 + cc
                    # the background point and its light, for shadows
                    bx = bg_pt[r, c, 0]
                    by = bg_pt[r, c, 1]
                    bz = bg_pt[r, c, 2]
                    touched = False
                    need = 0.0  # image motion (px) of what can reach this pixel
                    rdx = rays[r, c, 0]
                    rdy = rays[r, c, 1]
                    rdz = rays[r, c, 2]
                    for oi in range(ncand):
                        o = cand[oi]
                        # two pixels of margin: sub-pixel jitter and anti-aliased edges
                        tc = (sweep[o, 0] - ox) * rdx + (sweep[o, 1] - oy) * rdy + (sweep[o, 2] - oz) * rdz
                        tcc = max(tc, 1.0)
                        margin = 2.0 * tcc / focal
                        mpx = sweep[o, 5] * focal / tcc
                        if not ray_misses_sphere(ox, oy, oz, rdx, rdy, rdz, sweep[o, 0], sweep[o, 1], sweep[o, 2], sweep[o, 3] + margin):
                            touched = True
                            if mpx > need:
                                need = mpx
                        elif not cannot_shade(bx, by, bz, sweep[o, 0], sweep[o, 1], sweep[o, 2], sweep[o, 3], sweep[o, 4], lamps, LAMP_RADIUS_MM):
                            touched = True
                            if 2.0 * mpx > need:
                                need = 2.0 * mpx
                    if not touched:
                        out[rr, cc, 0] = bg_lin[r, c, 0] * gain[r, c]
                        out[rr, cc, 1] = bg_lin[r, c, 1] * gain[r, c]
                        out[rr, cc, 2] = bg_lin[r, c, 2] * gain[r, c]
                        continue
                    amb0 = lamp_irradiance(bx, by, bz, 0.0, 0.0, 1.0, lamps, ambient, li)
                    tot0 = amb0
                    for i in range(nl):
                        tot0 += li[i]
                    acc_r = 0.0
                    acc_g = 0.0
                    acc_b = 0.0
                    nacc = 0
                    n_pix = int(math.ceil(need / blur_step_px))
                    if n_pix < min_samples:
                        n_pix = min_samples
                    if n_pix > S:
                        n_pix = S
                    for j in range(n_pix):
                        s = (j * S) // n_pix if n_pix < S else j
                        ts = times[s]
                        if ts < t_row0 - 1e-12 or ts > t_row0 + exposure + 1e-12:
                            continue
                        nacc += 1
                        # jittered ray (bilinear in the ray map)
                        fx = c + jitter[s, 0]
                        fy = r + jitter[s, 1]
                        ix = int(math.floor(fx))
                        iy = int(math.floor(fy))
                        ax_ = fx - ix
                        ay_ = fy - iy
                        if ix < 0:
                            ix = 0
                            ax_ = 0.0
                        if iy < 0:
                            iy = 0
                            ay_ = 0.0
                        if ix >= W - 1:
                            ix = W - 2
                            ax_ = 1.0
                        if iy >= H - 1:
                            iy = H - 2
                            ay_ = 1.0
                        dx = (rays[iy, ix, 0] * (1 - ax_) + rays[iy, ix + 1, 0] * ax_) * (1 - ay_) + (
                            rays[iy + 1, ix, 0] * (1 - ax_) + rays[iy + 1, ix + 1, 0] * ax_) * ay_
                        dy = (rays[iy, ix, 1] * (1 - ax_) + rays[iy, ix + 1, 1] * ax_) * (1 - ay_) + (
                            rays[iy + 1, ix, 1] * (1 - ax_) + rays[iy + 1, ix + 1, 1] * ax_) * ay_
                        dz = (rays[iy, ix, 2] * (1 - ax_) + rays[iy, ix + 1, 2] * ax_) * (1 - ay_) + (
                            rays[iy + 1, ix, 2] * (1 - ax_) + rays[iy + 1, ix + 1, 2] * ax_) * ay_
                        dl = math.sqrt(dx * dx + dy * dy + dz * dz)
                        dx /= dl
                        dy /= dl
                        dz /= dl
                        tbg = bg_t[r, c]
                        # ---- shadows on the background point
                        ao = 1.0
                        for i in range(nl):
                            vis[i] = 1.0
                        for k in range(nb):
                            if balls[s, k, 3] < 0.5:
                                continue
                            cx = balls[s, k, 0]
                            cy = balls[s, k, 1]
                            cz = balls[s, k, 2]
                            ao *= 1.0 - sphere_ao(bx, by, bz, 0.0, 0.0, 1.0, cx, cy, cz, ball_rad, shadow_reach)
                            for i in range(nl):
                                vis[i] *= 1.0 - sphere_light_occlusion(bx, by, bz, cx, cy, cz, ball_rad, lamps[i, 0], lamps[i, 1], lamps[i, 2], LAMP_RADIUS_MM)
                        for k in range(npn):
                            if pins[s, k, 5] < 0.5:
                                continue
                            kind = pin_kind[k]
                            hgt = pin_height[kind]
                            rm = pin_rmax[kind]
                            if cannot_shade(bx, by, bz, pin_bs[s, k, 0], pin_bs[s, k, 1], pin_bs[s, k, 2], pin_bs[s, k, 3],
                                            4.0 * rm + 20.0, lamps, LAMP_RADIUS_MM):
                                continue
                            pax = pin_geo[s, k, 0]
                            pay = pin_geo[s, k, 1]
                            paz = pin_geo[s, k, 2]
                            lift = pin_geo[s, k, 3]
                            # the pin as two spheres: belly and head
                            for part in range(2):
                                hh = hgt * (0.33 if part == 0 else 0.84)
                                rad = rm * (0.95 if part == 0 else 0.6)
                                cx = pins[s, k, 0] + pax * hh
                                cy = pins[s, k, 1] + pay * hh
                                cz = pins[s, k, 2] + lift + paz * hh
                                ao *= 1.0 - sphere_ao(bx, by, bz, 0.0, 0.0, 1.0, cx, cy, cz, rad, 4.0 * rad + 20.0)
                                for i in range(nl):
                                    vis[i] *= 1.0 - sphere_light_occlusion(bx, by, bz, cx, cy, cz, rad, lamps[i, 0], lamps[i, 1], lamps[i, 2], LAMP_RADIUS_MM)
                        for q in range(nq):
                            kindq = prims[s, q, 0]
                            if kindq < 0.5:
                                continue
                            # AO reach of the prim: 3 * its largest radius + 60 mm (as below)
                            if kindq < 1.5:
                                reach_q = 3.0 * max(prims[s, q, 7], prims[s, q, 8]) + 60.0
                            else:
                                reach_q = 3.0 * max(prims[s, q, 4], max(prims[s, q, 5], prims[s, q, 6])) + 60.0
                            if cannot_shade(bx, by, bz, prim_bs[s, q, 0], prim_bs[s, q, 1], prim_bs[s, q, 2], prim_bs[s, q, 3],
                                            reach_q, lamps, LAMP_RADIUS_MM):
                                continue
                            if kindq < 1.5:
                                cx, cy, cz, sq = closest_on_segment(bx, by, bz, prims[s, q, 1], prims[s, q, 2], prims[s, q, 3], prims[s, q, 4], prims[s, q, 5], prims[s, q, 6])
                                rad = prims[s, q, 7] + (prims[s, q, 8] - prims[s, q, 7]) * sq
                            else:
                                cx = prims[s, q, 1]
                                cy = prims[s, q, 2]
                                cz = prims[s, q, 3]
                                rad = (prims[s, q, 4] + prims[s, q, 5] + prims[s, q, 6]) / 3.0
                            ao *= 1.0 - sphere_ao(bx, by, bz, 0.0, 0.0, 1.0, cx, cy, cz, rad, 3.0 * rad + 60.0)
                            for i in range(nl):
                                if kindq < 1.5:
                                    # nearest point of the capsule to the ray towards the lamp
                                    mx = 0.5 * (bx + lamps[i, 0])
                                    my = 0.5 * (by + lamps[i, 1])
                                    mz = 0.5 * (bz + lamps[i, 2])
                                    cx, cy, cz, sq = closest_on_segment(mx, my, mz, prims[s, q, 1], prims[s, q, 2], prims[s, q, 3], prims[s, q, 4], prims[s, q, 5], prims[s, q, 6])
                                    # refine once towards the point-to-lamp line
                                    for _ in range(2):
                                        vx_ = lamps[i, 0] - bx
                                        vy_ = lamps[i, 1] - by
                                        vz_ = lamps[i, 2] - bz
                                        vl_ = math.sqrt(vx_ * vx_ + vy_ * vy_ + vz_ * vz_)
                                        tt = ((cx - bx) * vx_ + (cy - by) * vy_ + (cz - bz) * vz_) / vl_
                                        mx = bx + vx_ / vl_ * tt
                                        my = by + vy_ / vl_ * tt
                                        mz = bz + vz_ / vl_ * tt
                                        cx, cy, cz, sq = closest_on_segment(mx, my, mz, prims[s, q, 1], prims[s, q, 2], prims[s, q, 3], prims[s, q, 4], prims[s, q, 5], prims[s, q, 6])
                                    rad = prims[s, q, 7] + (prims[s, q, 8] - prims[s, q, 7]) * sq
                                vis[i] *= 1.0 - sphere_light_occlusion(bx, by, bz, cx, cy, cz, rad, lamps[i, 0], lamps[i, 1], lamps[i, 2], LAMP_RADIUS_MM)
                        lit = amb0 * ao
                        for i in range(nl):
                            lit += li[i] * vis[i]
                        shadow = lit / tot0
                        col_r = bg_lin[r, c, 0] * shadow
                        col_g = bg_lin[r, c, 1] * shadow
                        col_b = bg_lin[r, c, 2] * shadow
                        # ---- object hits
                        nh = 0
                        for k in range(nb):
                            if balls[s, k, 3] < 0.5:
                                continue
                            cx = balls[s, k, 0]
                            cy = balls[s, k, 1]
                            cz = balls[s, k, 2]
                            th, perp = ray_sphere(ox, oy, oz, dx, dy, dz, cx, cy, cz, ball_rad)
                            if th <= 0.0 or th >= tbg:
                                continue
                            pxmm = th / focal
                            cov = 0.5 + (ball_rad - perp) / pxmm
                            if cov <= 0.0:
                                continue
                            if cov > 1.0:
                                cov = 1.0
                            pp = min(perp, ball_rad * 0.999)
                            te = (cx - ox) * dx + (cy - oy) * dy + (cz - oz) * dz - math.sqrt(ball_rad * ball_rad - pp * pp)
                            hx = ox + te * dx
                            hy = oy + te * dy
                            hz = oz + te * dz
                            nx = (hx - cx) / ball_rad
                            ny = (hy - cy) / ball_rad
                            nz = (hz - cz) / ball_rad
                            if perp > pp:  # graze: put the point on the silhouette
                                qx = hx - cx
                                qy = hy - cy
                                qz = hz - cz
                                dn = qx * dx + qy * dy + qz * dz
                                qx -= dn * dx
                                qy -= dn * dy
                                qz -= dn * dz
                                ql = math.sqrt(qx * qx + qy * qy + qz * qz) + 1e-12
                                nx = qx / ql
                                ny = qy / ql
                                nz = qz / ql
                                hx = cx + nx * ball_rad
                                hy = cy + ny * ball_rad
                                hz = cz + nz * ball_rad
                            cr, cg, cb = shade_surface(hx, hy, hz, nx, ny, nz, dx, dy, dz, ball_alb[k, 0], ball_alb[k, 1], ball_alb[k, 2], 1.0, 1.0, lamps, ambient, cloth, li)
                            hit_t[nh] = te
                            hit_cov[nh] = cov
                            hit_col[nh, 0] = cr
                            hit_col[nh, 1] = cg
                            hit_col[nh, 2] = cb
                            nh += 1
                        for k in range(npn):
                            if pins[s, k, 5] < 0.5:
                                continue
                            if ray_misses_sphere(ox, oy, oz, dx, dy, dz, pin_bs[s, k, 0], pin_bs[s, k, 1], pin_bs[s, k, 2], pin_bs[s, k, 3]):
                                continue
                            kind = pin_kind[k]
                            th, u, nx, ny, nz = ray_pin(ox, oy, oz, dx, dy, dz, pins[s, k, 0], pins[s, k, 1], pins[s, k, 2], pins[s, k, 3], pins[s, k, 4], pin_prof[kind], pin_height[kind], pin_rmax[kind])
                            if th <= 0.0 or th >= tbg:
                                continue
                            ar_, ag_, ab_ = pin_albedo(u, kind, body, band, top, kband, ktop)
                            hx = ox + th * dx
                            hy = oy + th * dy
                            hz = oz + th * dz
                            cr, cg, cb = shade_surface(hx, hy, hz, nx, ny, nz, dx, dy, dz, ar_, ag_, ab_, 0.35, 2.0, lamps, ambient, cloth, li)
                            hit_t[nh] = th
                            hit_cov[nh] = 1.0
                            hit_col[nh, 0] = cr
                            hit_col[nh, 1] = cg
                            hit_col[nh, 2] = cb
                            nh += 1
                        for q in range(nq):
                            kindq = prims[s, q, 0]
                            if kindq < 0.5:
                                continue
                            if ray_misses_sphere(ox, oy, oz, dx, dy, dz, prim_bs[s, q, 0], prim_bs[s, q, 1], prim_bs[s, q, 2], prim_bs[s, q, 3] + 2.0):
                                continue
                            mat = int(prims[s, q, 9])
                            if kindq < 1.5:
                                th, edge, sq, nx, ny, nz = ray_capsule(ox, oy, oz, dx, dy, dz, prims[s, q, 1], prims[s, q, 2], prims[s, q, 3], prims[s, q, 4], prims[s, q, 5], prims[s, q, 6], prims[s, q, 7], prims[s, q, 8])
                                if th <= 0.0 or th >= tbg:
                                    continue
                                cov = min(1.0, 0.5 + edge / (th / focal))
                            else:
                                th, miss, nx, ny, nz = ray_ellipsoid(ox, oy, oz, dx, dy, dz, prims[s, q, 1], prims[s, q, 2], prims[s, q, 3], prims[s, q, 4], prims[s, q, 5], prims[s, q, 6], prims[s, q, 10])
                                if th <= 0.0 or th >= tbg:
                                    continue
                                cov = min(1.0, 0.5 - miss / (th / focal))
                            if cov <= 0.0:
                                continue
                            hx = ox + th * dx
                            hy = oy + th * dy
                            hz = oz + th * dz
                            ks = 0.25 if mat <= MAT_BUTT else (0.05 if mat == MAT_SKIN else 0.0)
                            cr, cg, cb = shade_surface(hx, hy, hz, nx, ny, nz, dx, dy, dz, prim_alb[mat, 0], prim_alb[mat, 1], prim_alb[mat, 2], ks, 3.0, lamps, ambient, cloth, li)
                            hit_t[nh] = th
                            hit_cov[nh] = cov
                            hit_col[nh, 0] = cr
                            hit_col[nh, 1] = cg
                            hit_col[nh, 2] = cb
                            nh += 1
                        # composite far to near
                        for _ in range(nh):
                            far = -1
                            tfar = -1.0
                            for h in range(nh):
                                if hit_cov[h] >= 0.0 and hit_t[h] > tfar:
                                    tfar = hit_t[h]
                                    far = h
                            if far < 0:
                                break
                            a = hit_cov[far]
                            col_r = col_r + (hit_col[far, 0] - col_r) * a
                            col_g = col_g + (hit_col[far, 1] - col_g) * a
                            col_b = col_b + (hit_col[far, 2] - col_b) * a
                            hit_cov[far] = -1.0
                        acc_r += col_r
                        acc_g += col_g
                        acc_b += col_b
                    if nacc == 0:
                        out[rr, cc, 0] = bg_lin[r, c, 0] * gain[r, c]
                        out[rr, cc, 1] = bg_lin[r, c, 1] * gain[r, c]
                        out[rr, cc, 2] = bg_lin[r, c, 2] * gain[r, c]
                    else:
                        g = gain[r, c] / nacc
                        out[rr, cc, 0] = acc_r * g
                        out[rr, cc, 1] = acc_g * g
                        out[rr, cc, 2] = acc_b * g


# ---- sensor: sRGB curve, noise, quantisation ------------------------------------------------


@njit(cache=True)
def finish_kernel(lin, y0, x0, lut, sigma, noise, offset, width, out):
    """Linear (h, w, 3) RGB -> BGR uint8 into ``out`` at (y0, x0), with sensor noise.

    Noise: a common (luma) part and a per-channel part, std ``sigma`` grey levels at
    mid grey, growing with the square root of the signal like photon noise. The
    unit normals come from the renderer's seeded ``noise`` pool: pixel (r, c) of a
    frame reads the four values at ``offset + 4 (r width + c)`` (the offset changes
    from frame to frame), so the noise is deterministic, independent from frame to
    frame at any pixel, and the same for a box as for the background under it.
    """
    h = lin.shape[0]
    w = lin.shape[1]
    nlut = lut.shape[0] - 1
    for rr in range(h):
        r = y0 + rr
        for cc in range(w):
            c = x0 + cc
            base = offset + 4 * (r * width + c)
            common = noise[base] if sigma > 0.0 else 0.0
            for ch in range(3):
                v = lin[rr, cc, 2 - ch]  # RGB in, BGR out
                if v < 0.0:
                    v = 0.0
                f = v * nlut
                if f >= nlut:
                    s = lut[nlut]
                else:
                    k = int(f)
                    a = f - k
                    s = lut[k] * (1.0 - a) + lut[k + 1] * a
                if sigma > 0.0:
                    sd = sigma * (0.55 + 0.45 * math.sqrt(max(s, 0.0) / 128.0))
                    s += sd * (0.8 * common + 0.6 * noise[base + 1 + ch])
                q = math.floor(s + 0.5)
                if q < 0.0:
                    q = 0.0
                elif q > 255.0:
                    q = 255.0
                out[r, c, ch] = np.uint8(q)


@njit(cache=True)
def finish_static(srgb, sd, noise, offset, out):
    """The background's finishing pass with its sRGB values and noise deviations precomputed.

    ``srgb`` and ``sd`` (H, W, 3) in BGR order are what :func:`finish_kernel` computes
    for the background image; only the noise draw and the quantisation remain.
    """
    h = srgb.shape[0]
    w = srgb.shape[1]
    for r in range(h):
        for c in range(w):
            base = offset + 4 * (r * w + c)
            common = 0.8 * noise[base]
            for ch in range(3):
                q = math.floor(srgb[r, c, ch] + sd[r, c, ch] * (common + 0.6 * noise[base + 1 + ch]) + 0.5)
                if q < 0.0:
                    q = 0.0
                elif q > 255.0:
                    q = 255.0
                out[r, c, ch] = np.uint8(q)


def srgb_lut(n: int = 4096) -> np.ndarray:
    """Table of the sRGB curve over linear 0..1 (used by finish_kernel)."""
    v = np.linspace(0.0, 1.0, n + 1)
    return np.where(v <= 0.0031308, 12.92 * v, 1.055 * np.power(v, 1.0 / 2.4) - 0.055) * 255.0
