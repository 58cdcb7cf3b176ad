"""numba kernels of the tracking hot loop: plain arrays in, preallocated arrays out.

Every kernel is ``@njit(cache=True)``, never recursive, and allocates nothing: the
caller (:mod:`vision_ref.track.tracker`) owns the scratch buffers and reuses them
frame after frame. Each has a plain-Python twin in ``tests/track/test_kernels.py``.

Pixels are read straight from the frame in its own layout — ``MODE_BGR`` (H, W, 3)
or ``MODE_YUV`` (Y plane (H, W) + interleaved half-resolution UV (H/2, W/2, 2), the
Pi's YUV420/NV12) — and only inside small windows, so no full-frame conversion is
ever made. Colours are compared in BT.601 YUV (full range for BGR input; a YUV
source's own range is matched by the photometric fit of the background).

Weights (0..1 per pixel):

- ``fg``: "not the empty table here". The residual of the pixel's chroma from the
  background's chroma *scaled by the brightness ratio* is ~0 for a shadow (a darker
  copy of the cloth keeps its hue) and large for a ball, a pin, a cue or an arm;
  brightness above the background adds to it (white objects on dark cloth).
- ``cls``: "looks like this object's colour": the pixel's chroma, rescaled to the
  reference luma (so shading cancels), close to the reference chroma, and not much
  darker than the reference (dark sleeves are not a white ball).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

MODE_BGR = 0
MODE_YUV = 1

# The empty table's (Y, U, V) are one interleaved int16 array (H, W, 3) in units of 1/BG_SCALE:
# the kernels are bound by memory, not arithmetic (a window's first read of a frame region
# misses the caches), and one 6-byte pixel touches half the cache lines and a third of the
# pages of three float32 planes. 1/64 of a unit is far below anything the weights resolve.
BG_SCALE = 64.0
BG_UNIT = 1.0 / BG_SCALE

# indices into the float64 parameter vector ``prm``
P_FG_LO = 0  # fg residual at which the weight starts to rise
P_FG_HI = 1  # ... and where it saturates at 1
P_BRIGHT = 2  # gain of "brighter than the background" in the residual
P_C_LO = 3  # chroma distance (8-bit units) below which a pixel fully matches the reference
P_C_HI = 4  # ... above which it does not match at all
P_C_REL = 5  # both widened by this fraction of the reference's own chroma magnitude
P_LUM_LO = 6  # luma (fraction of the reference luma) below which a pixel is too dark
P_LUM_RANGE = 7  # ... and the ramp above it
P_BAND_LO = 8  # normalised V (red-ness) where a pin pixel starts counting as band/crown
P_BAND_HI = 9
# where chroma sample (i, j) of a YUV420 frame sits in full-resolution pixels: (2i + ox, 2j + oy);
# 0.5 for 2x2-averaged ("centre") siting, 0 for chroma co-sited with the top-left luma pixel.
# The tracker measures it per source (sources differ, and half a pixel matters at 1 mm).
P_CHROMA_OX = 10
P_CHROMA_OY = 11
P_CHROMA_NEAREST = 12  # 1: centre-sited chroma, read the sample a pixel falls in (cheaper, as exact for blobs)
# fg residual where a ball's refinement weight saturates (refine_ball; above P_FG_HI: see there)
P_REFINE_HI = 13
N_PRM = 14

# capsule refinement output layout
R_CX, R_CY, R_SUMW, R_AREA, R_SXX, R_SXY, R_SYY, R_FILL = 0, 1, 2, 3, 4, 5, 6, 7
N_REFINE = 8

# component statistics layout (coarse grid and pin blobs)
S_N, S_SX, S_SY, S_SW, S_SC, S_X0, S_X1, S_Y0, S_Y1 = 0, 1, 2, 3, 4, 5, 6, 7, 8
N_STAT = 9

# pin blob output layout
B_SUMW, B_CX, B_CY, B_SXX, B_SXY, B_SYY, B_BAND, B_BX, B_BY, B_BU, B_BV, B_NPIX, B_X0, B_X1, B_Y0, B_Y1 = range(16)
N_BLOB = 16


@njit(cache=True, inline="always")
def _clip01(v):
    if v <= 0.0:
        return 0.0
    if v >= 1.0:
        return 1.0
    return v


@njit(cache=True, inline="always")
def _row_masks(masks, n_masks, yy):
    """Bit m set when mask m reaches row yy (all bits past 62 masks): most rows of a window
    touch no mask, and their pixels then skip the per-mask test."""
    if n_masks > 62:
        return -1
    bits = 0
    for m in range(n_masks):
        dy = yy - masks[m, 1]
        if dy * dy <= masks[m, 2] * masks[m, 2]:
            bits |= 1 << m
    return bits


@njit(cache=True, inline="always")
def _is_masked(masks, n_masks, bits, xx, yy):
    for m in range(n_masks):
        if (bits >> m) & 1 == 0:
            continue
        dx = xx - masks[m, 0]
        dy = yy - masks[m, 1]
        if dx * dx + dy * dy <= masks[m, 2] * masks[m, 2]:
            return True
    return False


@njit(cache=True, inline="always")
def read_yuv(mode, bgr, yp, uvp, yy, xx, prm):
    """(Y, U, V) of one pixel as floats, from a BGR frame or a Y + half-res UV frame.

    Chroma of a YUV frame is interpolated bilinearly at the pixel's position given the
    source's chroma siting (``prm[P_CHROMA_OX/OY]``).
    """
    if mode == MODE_BGR:
        b = float(bgr[yy, xx, 0])
        g = float(bgr[yy, xx, 1])
        r = float(bgr[yy, xx, 2])
        y = 0.299 * r + 0.587 * g + 0.114 * b
        return y, 128.0 + 0.564 * (b - y), 128.0 + 0.713 * (r - y)
    if prm[P_CHROMA_NEAREST] != 0.0:
        return float(yp[yy, xx]), float(uvp[yy >> 1, xx >> 1, 0]), float(uvp[yy >> 1, xx >> 1, 1])
    ch = uvp.shape[0]
    cw = uvp.shape[1]
    fx = 0.5 * (xx - prm[P_CHROMA_OX])
    fy = 0.5 * (yy - prm[P_CHROMA_OY])
    i0 = int(math.floor(fx))
    j0 = int(math.floor(fy))
    ax = fx - i0
    ay = fy - j0
    i1 = min(max(i0 + 1, 0), cw - 1)
    j1 = min(max(j0 + 1, 0), ch - 1)
    i0 = min(max(i0, 0), cw - 1)
    j0 = min(max(j0, 0), ch - 1)
    w00 = (1.0 - ax) * (1.0 - ay)
    w01 = ax * (1.0 - ay)
    w10 = (1.0 - ax) * ay
    w11 = ax * ay
    u = w00 * uvp[j0, i0, 0] + w01 * uvp[j0, i1, 0] + w10 * uvp[j1, i0, 0] + w11 * uvp[j1, i1, 0]
    v = w00 * uvp[j0, i0, 1] + w01 * uvp[j0, i1, 1] + w10 * uvp[j1, i0, 1] + w11 * uvp[j1, i1, 1]
    return float(yp[yy, xx]), u, v


@njit(cache=True, inline="always")
def fg_weight(y, u, v, by, bu, bv, prm):
    return fg_ramp(y, u, v, by, bu, bv, prm, prm[P_FG_HI])


@njit(cache=True, inline="always")
def fg_ramp(y, u, v, by, bu, bv, prm, hi):
    """The foreground weight rising from P_FG_LO to 1 at residual ``hi``."""
    k = (y + 4.0) / (by + 4.0)
    ru = (u - 128.0) - k * (bu - 128.0)
    rv = (v - 128.0) - k * (bv - 128.0)
    bright = prm[P_BRIGHT] * (y - by) if y > by else 0.0
    lo = prm[P_FG_LO] - bright
    r2 = ru * ru + rv * rv
    if lo > 0.0 and r2 <= lo * lo:  # plain cloth (most pixels): no square root needed
        return 0.0
    res = math.sqrt(r2) + bright
    return _clip01((res - prm[P_FG_LO]) / (hi - prm[P_FG_LO]))


@njit(cache=True, inline="always")
def class_weight(y, u, v, ref, prm):
    yr = ref[0]
    cu = ref[1] - 128.0
    cv = ref[2] - 128.0
    s = yr / max(y, 12.0)
    du = (u - 128.0) * s - cu
    dv = (v - 128.0) * s - cv
    d = math.sqrt(du * du + dv * dv)
    widen = prm[P_C_REL] * math.sqrt(cu * cu + cv * cv)
    lo = prm[P_C_LO] + widen
    hi = prm[P_C_HI] + widen
    cw = _clip01((hi - d) / (hi - lo))
    lum = _clip01((y - prm[P_LUM_LO] * yr) / (prm[P_LUM_RANGE] * yr))
    return cw * lum


@njit(cache=True)
def ball_weights(mode, bgr, yp, uvp, bg, y0, x0, h, w, ref, prm, masks, n_masks, out_cls, out_fg):
    """Fill out_cls[:h, :w] (colour-class x foreground) and out_fg[:h, :w] (refinement weight) for a window.

    ``masks[:n_masks]`` rows (cx, cy, r) in frame pixels: objects already found this
    frame, zeroed so a neighbour touching this ball does not pull it.
    """
    for j in range(h):
        yy = y0 + j
        rows = _row_masks(masks, n_masks, yy)
        for i in range(w):
            xx = x0 + i
            masked = rows != 0 and _is_masked(masks, n_masks, rows, xx, yy)
            if masked:
                out_cls[j, i] = 0.0
                out_fg[j, i] = 0.0
                continue
            y, u, v = read_yuv(mode, bgr, yp, uvp, yy, xx, prm)
            by = bg[yy, xx, 0] * BG_UNIT
            f = fg_weight(y, u, v, by, bg[yy, xx, 1] * BG_UNIT, bg[yy, xx, 2] * BG_UNIT, prm)
            c = f * class_weight(y, u, v, ref, prm) if f > 0.0 else 0.0
            out_cls[j, i] = c
            out_fg[j, i] = f


@njit(cache=True)
def disk_scores(wmap, h, w, r, px, py, gate, stride, prefix, scores):
    """Mean weight over a disk of radius r centred on every candidate pixel within ``gate`` of (px, py).

    Window coordinates. ``prefix`` (>= h x w+1) receives row prefix sums; ``scores``
    (>= h x w) the fill fraction at candidates and -1 elsewhere. Returns the number of
    candidates scored.
    """
    for j in range(h):
        acc = 0.0
        prefix[j, 0] = 0.0
        for i in range(w):
            acc += wmap[j, i]
            prefix[j, i + 1] = acc
    ri = int(r)
    area = 0.0
    for dy in range(-ri, ri + 1):
        hw = int(math.sqrt(max(r * r - dy * dy, 0.0)))
        area += 2 * hw + 1
    n = 0
    g2 = gate * gate
    for j in range(h):
        for i in range(w):
            scores[j, i] = -1.0
    for j in range(0, h, stride):
        if j - ri < 0 or j + ri >= h:
            continue
        for i in range(0, w, stride):
            if i - ri < 0 or i + ri >= w:
                continue
            dx = i - px
            dy0 = j - py
            if dx * dx + dy0 * dy0 > g2:
                continue
            s = 0.0
            for dy in range(-ri, ri + 1):
                hw = int(math.sqrt(max(r * r - dy * dy, 0.0)))
                s += prefix[j + dy, i + hw + 1] - prefix[j + dy, i - hw]
            scores[j, i] = s / area
            n += 1
    return n


@njit(cache=True)
def top_peaks(scores, h, w, min_sep, min_score, k_max, out):
    """Up to k_max best candidates of ``scores`` at least ``min_sep`` apart: out rows (x, y, score)."""
    n = 0
    sep2 = min_sep * min_sep
    for _ in range(k_max):
        best = min_score
        bx = -1
        by = -1
        for j in range(h):
            for i in range(w):
                s = scores[j, i]
                if s <= best:
                    continue
                ok = True
                for q in range(n):
                    dx = i - out[q, 0]
                    dy = j - out[q, 1]
                    if dx * dx + dy * dy < sep2:
                        ok = False
                        break
                if ok:
                    best = s
                    bx = i
                    by = j
        if bx < 0:
            break
        out[n, 0] = bx
        out[n, 1] = by
        out[n, 2] = best
        n += 1
    return n


@njit(cache=True, inline="always")
def _capsule_span(j, cx, cy, ux, uy, hl, reach, i0, i1):
    """Columns [a, b] of row j that can lie within ``reach`` of the segment cx,cy +- hl*(ux,uy).

    The capsule lies inside the rectangle |along| <= hl + reach, |across| <= reach; its
    intersection with the row (two slabs) bounds the columns (with a hair of margin), so
    a pass visits ~the capsule instead of its bounding box and skips nothing inside it."""
    dy = j - cy
    lo = i0 - cx
    hi = i1 - cx
    e = reach + 1e-3
    if abs(ux) > 1e-9:  # along: |dx*ux + dy*uy| <= hl + e
        a = (-(hl + e) - dy * uy) / ux
        b = ((hl + e) - dy * uy) / ux
        if a > b:
            a, b = b, a
        lo = max(lo, a)
        hi = min(hi, b)
    elif abs(dy * uy) > hl + e:
        return 1, 0
    if abs(uy) > 1e-9:  # across: |dy*ux - dx*uy| <= e
        a = (dy * ux - e) / uy
        b = (dy * ux + e) / uy
        if a > b:
            a, b = b, a
        lo = max(lo, a)
        hi = min(hi, b)
    elif abs(dy * ux) > e:
        return 1, 0
    return max(int(math.ceil(cx + lo)), i0), min(int(math.floor(cx + hi)), i1)


@njit(cache=True, inline="always")
def _capsule_core_span(j, cx, cy, ux, uy, hl, rad):
    """Offsets [lo, hi] (from cx) of row j's points within ``rad`` of the segment (lo > hi: none).

    The capsule's row section is the hull of its two end disks' sections and its
    rectangle's (|along| <= hl, |across| <= rad): exact, as the capsule is convex."""
    dy = j - cy
    lo = 1e30
    hi = -1e30
    for sgn in (-1.0, 1.0):  # the end disks
        ex = sgn * hl * ux
        ddy = dy - sgn * hl * uy
        q = rad * rad - ddy * ddy
        if q >= 0.0:
            half = math.sqrt(q)
            lo = min(lo, ex - half)
            hi = max(hi, ex + half)
    if hl > 0.0:  # the rectangle: two slabs
        a = -1e30
        b = 1e30
        if abs(ux) > 1e-9:
            p0 = (-hl - dy * uy) / ux
            p1 = (hl - dy * uy) / ux
            a = max(a, min(p0, p1))
            b = min(b, max(p0, p1))
        elif abs(dy * uy) > hl:
            b = a - 1.0
        if abs(uy) > 1e-9:
            p0 = (dy * ux - rad) / uy
            p1 = (dy * ux + rad) / uy
            a = max(a, min(p0, p1))
            b = min(b, max(p0, p1))
        elif abs(dy * ux) > rad:
            b = a - 1.0
        if a <= b:
            lo = min(lo, a)
            hi = max(hi, b)
    return lo, hi


@njit(cache=True, inline="always")
def _capsule_box(cx, cy, rho, hl, h, w):
    """Rows j0..j1 and columns i0..i1 of an (h, w) window that a capsule of radius rho
    and half-length hl about (cx, cy) can touch (a pixel of margin for the rim)."""
    ext = rho + hl + 1.0
    j0 = max(int(math.floor(cy - ext)), 0)
    j1 = min(int(math.ceil(cy + ext)), h - 1)
    i0 = max(int(math.floor(cx - ext)), 0)
    i1 = min(int(math.ceil(cx + ext)), w - 1)
    return j0, j1, i0, i1


@njit(cache=True, inline="always")
def _centroid_step(sw, sx, sy, sxx, sxy, syy, last):
    """A pass's shift of the centre (weighted mean offset); the last pass also turns its
    second moments into the covariance about the new centre."""
    mx = sx / sw
    my = sy / sw
    if last:
        sxx = sxx / sw - mx * mx
        sxy = sxy / sw - mx * my
        syy = syy / sw - my * my
    return mx, my, sxx, sxy, syy


@njit(cache=True, inline="always")
def _store_refinement(out, cx, cy, sw, area, sxx, sxy, syy, r, hl):
    """Write a capsule refinement's result row; returns the capsule core's area."""
    out[R_CX] = cx
    out[R_CY] = cy
    out[R_SUMW] = sw
    out[R_AREA] = area
    out[R_SXX] = sxx
    out[R_SXY] = sxy
    out[R_SYY] = syy
    core = math.pi * r * r + 4.0 * r * hl
    out[R_FILL] = sw / core if core > 0 else 0.0
    return core


@njit(cache=True, inline="always")
def _segment_d2(dx, dy, ux, uy, hl):
    """Squared distance of the offset (dx, dy) from the segment of half-length hl along (ux, uy)
    centred at the origin (a capsule's axis)."""
    t = dx * ux + dy * uy
    if t > hl:
        t = hl
    elif t < -hl:
        t = -hl
    ex = dx - t * ux
    ey = dy - t * uy
    return ex * ex + ey * ey


@njit(cache=True, inline="always")
def _capsule_rim_weight(dx, dy, ux, uy, hl, rho, r_in2, r_out2):
    """Coverage (0..1) of the pixel at offset (dx, dy) by a capsule of half-length hl
    along (ux, uy) and radius rho, with a one-pixel anti-aliased rim; 0 outside."""
    d2 = _segment_d2(dx, dy, ux, uy, hl)
    if d2 >= r_out2:
        return 0.0
    return 1.0 if d2 <= r_in2 else rho + 0.5 - math.sqrt(d2)


@njit(cache=True, inline="always")
def _capsule_row(j, cx, cy, ux, uy, hl, rho, i0, i1):
    """Row j of a capsule pass of radius rho: its columns [a0, a1] (a0 > a1: none) and the
    columns [c0, c1] surely inside the core, membership 1 (a hair of margin against
    rounding; c0 = a1 + 1 when none)."""
    a0, a1 = _capsule_span(j, cx, cy, ux, uy, hl, rho + 0.5, i0, i1)
    c0 = a1 + 1
    c1 = a1
    if a0 > a1:
        return a0, a1, c0, c1
    lo, hi = _capsule_core_span(j, cx, cy, ux, uy, hl, rho - 0.5)
    if lo <= hi:
        c0 = max(int(math.ceil(cx + lo + 1e-7)), a0)
        c1 = min(int(math.floor(cx + hi - 1e-7)), a1)
        if c0 > c1:
            c0 = a1 + 1
            c1 = a1
    return a0, a1, c0, c1


@njit(cache=True, inline="always")
def _capsule_pass(wmap, h, w, cx, cy, ux, uy, hl, rho, moments):
    """One weighted-centroid pass over the anti-aliased capsule: weight, first moments, area, and
    (``moments``) second moments.

    Per row only the capsule's columns are visited, and those well inside it (membership 1:
    within rho - 0.5 of the segment, most of a ball) just accumulate; the rim pays for the
    distance and the anti-aliasing."""
    r_out2 = (rho + 0.5) * (rho + 0.5)
    r_in2 = (rho - 0.5) * (rho - 0.5)
    j0, j1, i0, i1 = _capsule_box(cx, cy, rho, hl, h, w)
    sw = 0.0
    sx = 0.0
    sy = 0.0
    area = 0.0
    sxx = 0.0
    sxy = 0.0
    syy = 0.0
    for j in range(j0, j1 + 1):
        a0, a1, c0, c1 = _capsule_row(j, cx, cy, ux, uy, hl, rho, i0, i1)
        if a0 > a1:
            continue
        dy = j - cy
        for i in range(a0, a1 + 1):
            dx = i - cx
            if c0 <= i <= c1:
                wa = wmap[j, i]
                area += 1.0
            else:
                a = _capsule_rim_weight(dx, dy, ux, uy, hl, rho, r_in2, r_out2)
                if a == 0.0:
                    continue
                area += a
                wa = wmap[j, i] * a
            sw += wa
            sx += wa * dx
            sy += wa * dy
            if moments:
                sxx += wa * dx * dx
                sxy += wa * dx * dy
                syy += wa * dy * dy
    return sw, sx, sy, area, sxx, sxy, syy


@njit(cache=True)
def refine_capsule(wmap, h, w, cx, cy, ux, uy, hl, r, n_wide, n_narrow, pad_narrow, out):
    """Sub-pixel centre of a (possibly motion-blurred) ball by iterated weighted centroids.

    The region is the capsule of radius rho around the segment cx,cy +- hl*(ux,uy)
    (hl = half the blur streak; 0 for a still ball), with anti-aliased membership so
    the estimate moves smoothly. ``n_wide`` iterations use rho = r + 2 (fast pull-in),
    then ``n_narrow`` use rho = r + pad_narrow: a margin just wide enough to hold the
    whole blob (chroma subsampling widens a coloured ball's blob by a pixel or so)
    while touching neighbours, pins and cushions stay (almost) outside. A blurred disk
    is the disk convolved with the streak, so the centroid is the centre at
    mid-exposure. Writes the centre, and from the last pass the weight sum, region
    area, weighted covariance (for the streak length) and fill fraction.
    """
    total = n_wide + n_narrow
    sw = 0.0
    area = 0.0
    sxx = 0.0
    sxy = 0.0
    syy = 0.0
    for it in range(total):
        rho = r + 2.0 if it < n_wide else r + pad_narrow
        sw, sx, sy, area, sxx, sxy, syy = _capsule_pass(wmap, h, w, cx, cy, ux, uy, hl, rho, it == total - 1)
        if sw <= 1e-9:
            break
        mx, my, sxx, sxy, syy = _centroid_step(sw, sx, sy, sxx, sxy, syy, it == total - 1)
        cx += mx
        cy += my
    _store_refinement(out, cx, cy, sw, area, sxx, sxy, syy, r, hl)


@njit(cache=True)
def refine_ball(mode, bgr, yp, uvp, bg, y0, x0, h, w, prm, masks, n_masks, rowbits, fg,
                cx, cy, ux, uy, hl, r, n_wide, n_narrow, pad_narrow, ref, out):
    """fg_window + refine_capsule in one call, computing the weights only where a pass reads it.

    The weight is the foreground ramp saturating at ``prm[P_REFINE_HI]``, above the search's
    P_FG_HI: a ball's rim pixels, partly covered, then weigh about as much of it as they show
    instead of all or nothing. With the search's ramp a rim pixel read 1 from ~30 % cover, so
    each edge snapped to a pixel boundary and the centre moved with where the edges fell on
    the pixel grid; near a cushion, where every touching ball sits at the same place on the
    grid, that was a bias (H.264's chroma loses a rim row on one side and keeps a third of it
    on the other: 0.3 px). The ball's inside still saturates (residual 60-90), so only its
    darker shaded rim weighs a little less (at 1456x1088 rest error 0.088 -> 0.116 mm). Review
    corpus at 728x544: median contact time error 0.135 -> 0.121 frame (benchmarks/README.md).

    Window (y0, x0, h, w) of the frame; (cx, cy) in window coordinates; ``fg`` (>= h x w)
    and ``rowbits`` (>= h int64) are scratch (``fg`` is left holding the weights read).
    Writes ``out`` exactly as refine_capsule on fg_window's map with that ramp would (same
    pixels, same order). With ``ref`` (a colour reference, length 3; length 0 for none)
    returns the colour-class fill of the last pass's capsule: the mean of weight x class
    weight over it (membership-weighted, every 2nd pixel of every 2nd row; how surely this
    blob is that ball's colour), else 0.
    """
    for j in range(h):
        rowbits[j] = _row_masks(masks, n_masks, y0 + j)
        for i in range(w):
            fg[j, i] = -1.0
    hi = prm[P_REFINE_HI]
    total = n_wide + n_narrow
    sw = 0.0
    area = 0.0
    sxx = 0.0
    sxy = 0.0
    syy = 0.0
    rho = r + 2.0
    px = cx
    py = cy
    for it in range(total):
        rho = r + 2.0 if it < n_wide else r + pad_narrow
        last = it == total - 1
        # _capsule_pass, with the foreground of each pixel it reads computed on first use (< 0:
        # not known yet). Written out here, not in a helper: numba's calls of helpers taking the
        # frame arrays cost ~50 ns a pixel. Same pixels, same order, same sums as the pass on
        # fg_window's map; pixels the pass gives no weight are never converted.
        r_out2 = (rho + 0.5) * (rho + 0.5)
        r_in2 = (rho - 0.5) * (rho - 0.5)
        j0, j1, i0, i1 = _capsule_box(cx, cy, rho, hl, h, w)
        sw = 0.0
        sx = 0.0
        sy = 0.0
        area = 0.0
        sxx = 0.0
        sxy = 0.0
        syy = 0.0
        for j in range(j0, j1 + 1):
            a0, a1, c0, c1 = _capsule_row(j, cx, cy, ux, uy, hl, rho, i0, i1)
            if a0 > a1:
                continue
            dy = j - cy
            bits = rowbits[j]
            yy = y0 + j
            i = a0
            while i <= a1:
                if i == c0:  # the core's columns: membership 1
                    for ic in range(c0, c1 + 1):
                        if fg[j, ic] < 0.0:
                            xx = x0 + ic
                            if bits != 0 and _is_masked(masks, n_masks, bits, xx, yy):
                                fg[j, ic] = 0.0
                            else:
                                y, u, v = read_yuv(mode, bgr, yp, uvp, yy, xx, prm)
                                fg[j, ic] = fg_ramp(y, u, v, bg[yy, xx, 0] * BG_UNIT, bg[yy, xx, 1] * BG_UNIT,
                                                    bg[yy, xx, 2] * BG_UNIT, prm, hi)
                        dx = ic - cx
                        wa = float(fg[j, ic])
                        area += 1.0
                        sw += wa
                        sx += wa * dx
                        sy += wa * dy
                        if last:
                            sxx += wa * dx * dx
                            sxy += wa * dx * dy
                            syy += wa * dy * dy
                    i = c1 + 1
                    continue
                dx = i - cx
                a = _capsule_rim_weight(dx, dy, ux, uy, hl, rho, r_in2, r_out2)
                if a != 0.0:
                    if fg[j, i] < 0.0:
                        xx = x0 + i
                        if bits != 0 and _is_masked(masks, n_masks, bits, xx, yy):
                            fg[j, i] = 0.0
                        else:
                            y, u, v = read_yuv(mode, bgr, yp, uvp, yy, xx, prm)
                            fg[j, i] = fg_ramp(y, u, v, bg[yy, xx, 0] * BG_UNIT, bg[yy, xx, 1] * BG_UNIT,
                                               bg[yy, xx, 2] * BG_UNIT, prm, hi)
                    area += a
                    wa = fg[j, i] * a
                    sw += wa
                    sx += wa * dx
                    sy += wa * dy
                    if last:
                        sxx += wa * dx * dx
                        sxy += wa * dx * dy
                        syy += wa * dy * dy
                i += 1
        if sw <= 1e-9:
            break
        mx, my, sxx, sxy, syy = _centroid_step(sw, sx, sy, sxx, sxy, syy, last)
        px = cx
        py = cy
        cx += mx
        cy += my
    core = _store_refinement(out, cx, cy, sw, area, sxx, sxy, syy, r, hl)
    if ref.shape[0] < 3 or sw <= 1e-9 or core <= 0:
        return 0.0
    # colour over the last pass's capsule (about the centre that pass started from)
    r_out2 = (rho + 0.5) * (rho + 0.5)
    r_in2 = (rho - 0.5) * (rho - 0.5)
    j0, j1, i0, i1 = _capsule_box(px, py, rho, hl, h, w)
    sc = 0.0
    sa = 0.0
    for j in range(j0 + (j0 & 1), j1 + 1, 2):  # every 2nd pixel of every 2nd row: a check, not a measurement
        a0, a1 = _capsule_span(j, px, py, ux, uy, hl, rho + 0.5, i0, i1)
        for i in range(a0 + (a0 & 1), a1 + 1, 2):
            f = fg[j, i]
            a = _capsule_rim_weight(i - px, j - py, ux, uy, hl, rho, r_in2, r_out2)
            if a == 0.0:
                continue
            sa += a
            if f > 0.0:
                y, u, v = read_yuv(mode, bgr, yp, uvp, y0 + j, x0 + i, prm)
                sc += f * class_weight(y, u, v, ref, prm) * a
    return sc / sa if sa > 0.0 else 0.0


@njit(cache=True, inline="always")
def _pin_values(y, u, v, by, bu, bv, prm):
    """pin_weights' values of one unmasked pixel: (foreground, band weight, normalised U, V)."""
    f = fg_weight(y, u, v, by, bu, bv, prm)
    if f == 0.0:
        return 0.0, 0.0, 0.0, 0.0
    s = 128.0 / max(y, 12.0)
    nu = (u - 128.0) * s
    nv = (v - 128.0) * s
    # the bands and the crown are warm (red, gold): +V; cloths (blue, green), white and
    # their mixtures at a pin's edge are not
    return f, f * _clip01((nv - prm[P_BAND_LO]) / (prm[P_BAND_HI] - prm[P_BAND_LO])), nu, nv


@njit(cache=True)
def pin_weights(mode, bgr, yp, uvp, bg, y0, x0, h, w, prm, masks, n_masks, out_fg, out_band, out_u, out_v):
    """Per pixel of a window: foreground, band/crown weight (the warm-coloured pin parts) and normalised chroma."""
    for j in range(h):
        yy = y0 + j
        rows = _row_masks(masks, n_masks, yy)
        for i in range(w):
            xx = x0 + i
            if rows != 0 and _is_masked(masks, n_masks, rows, xx, yy):
                out_fg[j, i] = 0.0
                out_band[j, i] = 0.0
                out_u[j, i] = 0.0
                out_v[j, i] = 0.0
                continue
            y, u, v = read_yuv(mode, bgr, yp, uvp, yy, xx, prm)
            f, bw, nu, nv = _pin_values(y, u, v, bg[yy, xx, 0] * BG_UNIT, bg[yy, xx, 1] * BG_UNIT, bg[yy, xx, 2] * BG_UNIT, prm)
            out_fg[j, i] = f
            out_band[j, i] = bw
            out_u[j, i] = nu
            out_v[j, i] = nv


@njit(cache=True)
def flood_blob(fg, band, nu, nv, h, w, thresh, j0, i0, labels, stack, out):
    """8-connected flood fill from (j0, i0) over fg >= thresh (labels marked 1), writing the
    blob's moments into ``out`` (a row of N_BLOB: weight, centroid, second moments, the
    coloured band's weight, centroid and chroma, pixel count, bounding box). Returns the
    pixel count. One fill serves both blob_at and label_blobs."""
    labels[j0, i0] = 1
    stack[0] = j0
    stack[1] = i0
    top = 1
    npix = 0
    sw = 0.0
    smx = 0.0
    smy = 0.0
    sxx = 0.0
    sxy = 0.0
    syy = 0.0
    sb = 0.0
    sbx = 0.0
    sby = 0.0
    sbu = 0.0
    sbv = 0.0
    x0 = i0
    x1 = i0
    y0 = j0
    y1 = j0
    while top > 0:
        top -= 1
        j = stack[2 * top]
        i = stack[2 * top + 1]
        wv = fg[j, i]
        npix += 1
        sw += wv
        smx += wv * i
        smy += wv * j
        sxx += wv * i * i
        sxy += wv * i * j
        syy += wv * j * j
        b = band[j, i]
        sb += b
        sbx += b * i
        sby += b * j
        sbu += b * nu[j, i]
        sbv += b * nv[j, i]
        if i < x0:
            x0 = i
        if i > x1:
            x1 = i
        if j < y0:
            y0 = j
        if j > y1:
            y1 = j
        for dj in range(-1, 2):
            jj = j + dj
            if jj < 0 or jj >= h:
                continue
            for di in range(-1, 2):
                ii = i + di
                if ii < 0 or ii >= w or labels[jj, ii] != 0:
                    continue
                if fg[jj, ii] >= thresh:
                    labels[jj, ii] = 1
                    stack[2 * top] = jj
                    stack[2 * top + 1] = ii
                    top += 1
    mx = smx / sw
    my = smy / sw
    out[B_SUMW] = sw
    out[B_CX] = mx
    out[B_CY] = my
    out[B_SXX] = sxx / sw - mx * mx
    out[B_SXY] = sxy / sw - mx * my
    out[B_SYY] = syy / sw - my * my
    out[B_BAND] = sb
    # no band seen: its centroid is the blob's (so the head direction stays undecided)
    out[B_BX] = sbx / sb if sb > 1e-9 else mx
    out[B_BY] = sby / sb if sb > 1e-9 else my
    out[B_BU] = sbu / sb if sb > 1e-9 else 0.0
    out[B_BV] = sbv / sb if sb > 1e-9 else 0.0
    out[B_NPIX] = npix
    out[B_X0] = x0
    out[B_X1] = x1
    out[B_Y0] = y0
    out[B_Y1] = y1
    return npix


@njit(cache=True, inline="always")
def _seed_box(sx, sy, search_r, h, w):
    """Rows j0..j1-1 and columns i0..i1-1 of an (h, w) window within search_r of (sx, sy)."""
    j0 = max(int(sy - search_r), 0)
    j1 = min(int(sy + search_r) + 1, h)
    i0 = max(int(sx - search_r), 0)
    i1 = min(int(sx + search_r) + 1, w)
    return j0, j1, i0, i1


@njit(cache=True, inline="always")
def _seed_score(f, d2, r2):
    """A seed candidate's strength, discounted with distance so the nearest of equals wins."""
    return f * (1.0 - 0.5 * d2 / (r2 + 1.0))


@njit(cache=True)
def blob_at(fg, band, nu, nv, h, w, sx, sy, search_r, thresh, labels, stack, out):
    """Moments of the 8-connected blob (fg >= thresh) holding the strongest pixel within search_r of (sx, sy).

    Window coordinates. ``labels`` (>= h x w int32) and ``stack`` (>= 2*h*w int32)
    are scratch. Writes N_BLOB values (weight sum, centroid, covariance, band weight
    and centroid, mean normalised chroma of the band, pixel count, bbox); returns the
    pixel count (0: nothing there).
    """
    for q in range(N_BLOB):
        out[q] = 0.0
    # the seed: the strongest pixel, discounted with distance so the nearest of equals wins
    best = 0.0
    bx = -1
    by = -1
    r2 = search_r * search_r
    j0, j1, i0, i1 = _seed_box(sx, sy, search_r, h, w)
    for j in range(j0, j1):
        for i in range(i0, i1):
            dx = i - sx
            dy = j - sy
            d2 = dx * dx + dy * dy
            if d2 <= r2 and fg[j, i] >= thresh:
                s = _seed_score(fg[j, i], d2, r2)
                if s > best:
                    best = s
                    bx = i
                    by = j
    if bx < 0:
        return 0
    for j in range(h):
        for i in range(w):
            labels[j, i] = 0
    return flood_blob(fg, band, nu, nv, h, w, thresh, by, bx, labels, stack, out)


@njit(cache=True)
def pin_blob_at(mode, bgr, yp, uvp, bg, y0, x0, h, w, prm, masks, n_masks, rowbits, fg, band, nu, nv,
                sx, sy, search_r, thresh, labels, stack, out):
    """pin_weights + blob_at in one call, the weights computed only where the seed search and the fill read them.

    The tight check of a pin at rest: its blob is a small part of the window around it,
    so most of the window is never converted. Same arguments and result as blob_at on
    pin_weights' maps of the window (y0, x0, h, w); ``fg``, ``band``, ``nu``, ``nv`` hold
    -1 where not computed; ``rowbits`` (>= h int64) is scratch.
    """
    for q in range(N_BLOB):
        out[q] = 0.0
    for j in range(h):
        rowbits[j] = _row_masks(masks, n_masks, y0 + j)
        for i in range(w):
            fg[j, i] = -1.0
            labels[j, i] = 0
    best = 0.0
    bx = -1
    by = -1
    r2 = search_r * search_r
    j0, j1, i0, i1 = _seed_box(sx, sy, search_r, h, w)
    for j in range(j0, j1):
        bits = rowbits[j]
        yy = y0 + j
        for i in range(i0, i1):
            dx = i - sx
            dy = j - sy
            d2 = dx * dx + dy * dy
            if d2 > r2:
                continue
            if fg[j, i] < 0.0:  # (written out, not a helper taking the frame: see refine_ball)
                xx = x0 + i
                if bits != 0 and _is_masked(masks, n_masks, bits, xx, yy):
                    fg[j, i] = 0.0
                    band[j, i] = 0.0
                    nu[j, i] = 0.0
                    nv[j, i] = 0.0
                else:
                    y, u, v = read_yuv(mode, bgr, yp, uvp, yy, xx, prm)
                    fg[j, i], band[j, i], nu[j, i], nv[j, i] = _pin_values(y, u, v, bg[yy, xx, 0] * BG_UNIT, bg[yy, xx, 1] * BG_UNIT,
                                                                           bg[yy, xx, 2] * BG_UNIT, prm)
            if fg[j, i] >= thresh:
                s = _seed_score(fg[j, i], d2, r2)
                if s > best:
                    best = s
                    bx = i
                    by = j
    if bx < 0:
        return 0
    # first fill: compute the weights of the blob and of every pixel next to it
    labels[by, bx] = 1
    stack[0] = by
    stack[1] = bx
    top = 1
    while top > 0:
        top -= 1
        j = stack[2 * top]
        i = stack[2 * top + 1]
        for dj in range(-1, 2):
            jj = j + dj
            if jj < 0 or jj >= h:
                continue
            bits = rowbits[jj]
            yy = y0 + jj
            for di in range(-1, 2):
                ii = i + di
                if ii < 0 or ii >= w or labels[jj, ii] != 0:
                    continue
                if fg[jj, ii] < 0.0:
                    xx = x0 + ii
                    if bits != 0 and _is_masked(masks, n_masks, bits, xx, yy):
                        fg[jj, ii] = 0.0
                        band[jj, ii] = 0.0
                        nu[jj, ii] = 0.0
                        nv[jj, ii] = 0.0
                    else:
                        y, u, v = read_yuv(mode, bgr, yp, uvp, yy, xx, prm)
                        fg[jj, ii], band[jj, ii], nu[jj, ii], nv[jj, ii] = _pin_values(
                            y, u, v, bg[yy, xx, 0] * BG_UNIT, bg[yy, xx, 1] * BG_UNIT, bg[yy, xx, 2] * BG_UNIT, prm)
                if fg[jj, ii] >= thresh:
                    labels[jj, ii] = 1
                    stack[2 * top] = jj
                    stack[2 * top + 1] = ii
                    top += 1
    # second fill: the moments, exactly as blob_at's (every pixel it reads is known now)
    for j in range(h):
        for i in range(w):
            labels[j, i] = 0
    return flood_blob(fg, band, nu, nv, h, w, thresh, by, bx, labels, stack, out)


@njit(cache=True)
def coarse_grid(mode, bgr, yp, uvp, bg, stride, y0, x0, gh, gw, region, ref_white, ref_cue, prm,
                out_fg, out_white, out_cue):
    """Foreground and class weights on a sparse grid (every ``stride`` pixels) over the whole table.

    Grid cell (j, i) samples pixel (y0 + j*stride, x0 + i*stride); ``region`` (gh, gw)
    uint8 marks cells worth looking at (table and rails). This touches 1/stride^2 of
    the pixels: it is how lost or new objects are found without a full-frame pass.
    """
    for j in range(gh):
        yy = y0 + j * stride
        for i in range(gw):
            if region[j, i] == 0:
                out_fg[j, i] = 0.0
                out_white[j, i] = 0.0
                out_cue[j, i] = 0.0
                continue
            xx = x0 + i * stride
            y, u, v = read_yuv(mode, bgr, yp, uvp, yy, xx, prm)
            f = fg_weight(y, u, v, bg[yy, xx, 0] * BG_UNIT, bg[yy, xx, 1] * BG_UNIT, bg[yy, xx, 2] * BG_UNIT, prm)
            out_fg[j, i] = f
            if f > 0.0:
                out_white[j, i] = f * class_weight(y, u, v, ref_white, prm)
                out_cue[j, i] = f * class_weight(y, u, v, ref_cue, prm)
            else:
                out_white[j, i] = 0.0
                out_cue[j, i] = 0.0


@njit(cache=True)
def label_grid(fg, white, cue, gh, gw, thresh, labels, stack, stats, max_comp):
    """8-connected components of fg >= thresh on the coarse grid (explicit stack, no recursion).

    ``stats[c]`` (N_STAT): cell count, sums of x and y, of white and cue weight, bbox.
    Returns the number of components (at most max_comp; the rest are dropped).
    """
    for j in range(gh):
        for i in range(gw):
            labels[j, i] = 0
    nc = 0
    for j in range(gh):
        for i in range(gw):
            if labels[j, i] != 0 or fg[j, i] < thresh:
                continue
            if nc >= max_comp:
                return nc
            nc += 1
            for q in range(N_STAT):
                stats[nc - 1, q] = 0.0
            stats[nc - 1, S_X0] = i
            stats[nc - 1, S_X1] = i
            stats[nc - 1, S_Y0] = j
            stats[nc - 1, S_Y1] = j
            labels[j, i] = nc
            stack[0] = j
            stack[1] = i
            top = 1
            while top > 0:
                top -= 1
                cj = stack[2 * top]
                ci = stack[2 * top + 1]
                st = stats[nc - 1]
                st[S_N] += 1.0
                st[S_SX] += ci
                st[S_SY] += cj
                st[S_SW] += white[cj, ci]
                st[S_SC] += cue[cj, ci]
                if ci < st[S_X0]:
                    st[S_X0] = ci
                if ci > st[S_X1]:
                    st[S_X1] = ci
                if cj < st[S_Y0]:
                    st[S_Y0] = cj
                if cj > st[S_Y1]:
                    st[S_Y1] = cj
                for dj in range(-1, 2):
                    jj = cj + dj
                    if jj < 0 or jj >= gh:
                        continue
                    for di in range(-1, 2):
                        ii = ci + di
                        if ii < 0 or ii >= gw or labels[jj, ii] != 0:
                            continue
                        if fg[jj, ii] >= thresh:
                            labels[jj, ii] = nc
                            stack[2 * top] = jj
                            stack[2 * top + 1] = ii
                            top += 1
    return nc


@njit(cache=True)
def sample_pairs(mode, bgr, yp, uvp, bg, stride, prm, out_frame, out_bg):
    """Frame and background (Y, U, V) on a sparse grid: rows for the photometric fit of the background."""
    H = bg.shape[0]
    W = bg.shape[1]
    n = 0
    for yy in range(stride // 2, H, stride):
        for xx in range(stride // 2, W, stride):
            if n >= out_frame.shape[0]:
                return n
            y, u, v = read_yuv(mode, bgr, yp, uvp, yy, xx, prm)
            out_frame[n, 0] = y
            out_frame[n, 1] = u
            out_frame[n, 2] = v
            out_bg[n, 0] = bg[yy, xx, 0] * BG_UNIT
            out_bg[n, 1] = bg[yy, xx, 1] * BG_UNIT
            out_bg[n, 2] = bg[yy, xx, 2] * BG_UNIT
            n += 1
    return n


@njit(cache=True)
def grid_point(grid, step, px, py, c0, z_frac):
    """One bilinear lookup of channels c0, c0+1 of a grid, blended towards c0+2, c0+3 by z_frac
    (the plane grid: z = 0 in channels 0-1, z = Z_REF in 2-3; the ball grid: z_frac = 0)."""
    gh = grid.shape[0]
    gw = grid.shape[1]
    fx = px / step
    fy = py / step
    i = min(max(int(math.floor(fx)), 0), gw - 2)
    j = min(max(int(math.floor(fy)), 0), gh - 2)
    ax = fx - i
    ay = fy - j
    w00 = (1 - ax) * (1 - ay)
    w01 = ax * (1 - ay)
    w10 = (1 - ax) * ay
    w11 = ax * ay
    out_x = 0.0
    out_y = 0.0
    for c in range(2):
        ch = c0 + c
        v = w00 * grid[j, i, ch] + w01 * grid[j, i + 1, ch] + w10 * grid[j + 1, i, ch] + w11 * grid[j + 1, i + 1, ch]
        if z_frac != 0.0:
            ch2 = ch + 2
            v2 = (w00 * grid[j, i, ch2] + w01 * grid[j, i + 1, ch2] + w10 * grid[j + 1, i, ch2]
                  + w11 * grid[j + 1, i + 1, ch2])
            v = v + (v2 - v) * z_frac
        if c == 0:
            out_x = v
        else:
            out_y = v
    return out_x, out_y


@njit(cache=True)
def grid_lookup(grid, step, px, py, out, n):
    """Bilinear lookup of a (gh, gw, C) grid sampled every ``step`` pixels at n points -> out (n, C)."""
    gh = grid.shape[0]
    gw = grid.shape[1]
    nch = grid.shape[2]
    for k in range(n):
        fx = px[k] / step
        fy = py[k] / step
        i = int(math.floor(fx))
        j = int(math.floor(fy))
        if i < 0:
            i = 0
        if j < 0:
            j = 0
        if i > gw - 2:
            i = gw - 2
        if j > gh - 2:
            j = gh - 2
        ax = fx - i
        ay = fy - j
        for c in range(nch):
            out[k, c] = ((1 - ax) * (1 - ay) * grid[j, i, c] + ax * (1 - ay) * grid[j, i + 1, c]
                         + (1 - ax) * ay * grid[j + 1, i, c] + ax * ay * grid[j + 1, i + 1, c])


@njit(cache=True)
def label_blobs(fg, band, nu, nv, h, w, thresh, min_sumw, labels, stack, stats, max_comp):
    """Every 8-connected blob (fg >= thresh) of a window with its moments (rows of N_BLOB, as blob_at).

    Blobs lighter than ``min_sumw`` are dropped. Returns the number kept (<= max_comp).
    """
    for j in range(h):
        for i in range(w):
            labels[j, i] = 0
    nc = 0
    for j0 in range(h):
        for i0 in range(w):
            if labels[j0, i0] != 0 or fg[j0, i0] < thresh:
                continue
            if nc >= max_comp:
                return nc
            # the row is kept only if the blob is heavy enough (else the next overwrites it)
            flood_blob(fg, band, nu, nv, h, w, thresh, j0, i0, labels, stack, stats[nc])
            if stats[nc, B_SUMW] < min_sumw:
                continue
            nc += 1
    return nc


@njit(cache=True)
def rest_probe(mode, bgr, yp, uvp, bg, cx, cy, rho, step, prm, masks, n_masks, out):
    """Is a resting ball still where it was? The foreground centroid over the disk of radius rho.

    Samples every ``step``-th pixel (a cheap check, not a measurement): out = (x offset,
    y offset of the weighted centroid from (cx, cy), mean weight over the samples).
    """
    H = bg.shape[0]
    W = bg.shape[1]
    r2 = rho * rho
    j0 = max(int(math.floor(cy - rho)), 0)
    j1 = min(int(math.ceil(cy + rho)), H - 1)
    i0 = max(int(math.floor(cx - rho)), 0)
    i1 = min(int(math.ceil(cx + rho)), W - 1)
    sw = 0.0
    sx = 0.0
    sy = 0.0
    n = 0
    for yy in range(j0, j1 + 1, step):
        dy = yy - cy
        rows = _row_masks(masks, n_masks, yy)
        for xx in range(i0, i1 + 1, step):
            dx = xx - cx
            if dx * dx + dy * dy > r2:
                continue
            n += 1
            if rows != 0 and _is_masked(masks, n_masks, rows, xx, yy):
                continue
            y, u, v = read_yuv(mode, bgr, yp, uvp, yy, xx, prm)
            f = fg_weight(y, u, v, bg[yy, xx, 0] * BG_UNIT, bg[yy, xx, 1] * BG_UNIT, bg[yy, xx, 2] * BG_UNIT, prm)
            sw += f
            sx += f * dx
            sy += f * dy
    if sw <= 1e-9 or n == 0:
        out[0] = 0.0
        out[1] = 0.0
        out[2] = 0.0
        return
    out[0] = sx / sw
    out[1] = sy / sw
    out[2] = sw / n


@njit(cache=True)
def class_grid(mode, bgr, yp, uvp, bg, y0, x0, gh, gw, step, ref, prm, masks, n_masks, out_cls):
    """Colour-class x foreground weight at every ``step``-th pixel of a window: out_cls[:gh, :gw].

    Cell (j, i) samples pixel (y0 + j*step, x0 + i*step). The ball search runs on this
    sparse map (a ball is ~27 px across at 1456x1088, 13 cells at step 2); only the
    refinement reads full resolution.
    """
    for j in range(gh):
        yy = y0 + j * step
        rows = _row_masks(masks, n_masks, yy)
        for i in range(gw):
            xx = x0 + i * step
            masked = rows != 0 and _is_masked(masks, n_masks, rows, xx, yy)
            if masked:
                out_cls[j, i] = 0.0
                continue
            y, u, v = read_yuv(mode, bgr, yp, uvp, yy, xx, prm)
            f = fg_weight(y, u, v, bg[yy, xx, 0] * BG_UNIT, bg[yy, xx, 1] * BG_UNIT, bg[yy, xx, 2] * BG_UNIT, prm)
            out_cls[j, i] = f * class_weight(y, u, v, ref, prm) if f > 0.0 else 0.0


@njit(cache=True)
def fg_window(mode, bgr, yp, uvp, bg, y0, x0, h, w, prm, masks, n_masks, out_fg):
    """Foreground weight of every pixel of a window (the refinement's input): out_fg[:h, :w]."""
    for j in range(h):
        yy = y0 + j
        rows = _row_masks(masks, n_masks, yy)
        for i in range(w):
            xx = x0 + i
            masked = rows != 0 and _is_masked(masks, n_masks, rows, xx, yy)
            if masked:
                out_fg[j, i] = 0.0
                continue
            y, u, v = read_yuv(mode, bgr, yp, uvp, yy, xx, prm)
            out_fg[j, i] = fg_weight(y, u, v, bg[yy, xx, 0] * BG_UNIT, bg[yy, xx, 1] * BG_UNIT, bg[yy, xx, 2] * BG_UNIT, prm)


def pack_background(y, u, v) -> np.ndarray:
    """Float Y, U, V planes -> the kernels' interleaved int16 background (units of 1/BG_SCALE).

    (A kernel: built twice per tracker, numpy's stack/round/clip took 20 ms at 728x544, a
    tenth of a short clip's review; the numpy formula is its twin in the tests.)"""
    y, u, v = (np.ascontiguousarray(c) for c in (y, u, v))
    out = np.empty(y.shape + (3,), np.int16)
    _pack_background(y, u, v, out)
    return out


@njit(cache=True)
def _pack_background(y, u, v, out):
    h, w = y.shape
    for j in range(h):
        for i in range(w):
            out[j, i, 0] = _bg_unit(y[j, i])
            out[j, i, 1] = _bg_unit(u[j, i])
            out[j, i, 2] = _bg_unit(v[j, i])


@njit(cache=True, inline="always")
def _bg_unit(x):
    q = np.rint(np.float64(x) * BG_SCALE)  # (half to even, as numpy's round)
    if q < 0.0:
        return np.int16(0)
    if q > 32767.0:
        return np.int16(32767)
    return np.int16(q)


@njit(cache=True)
def select_masks(masks, n_masks, x0, y0, w, h, out):
    """Copy the masks (cx, cy, r rows) that reach the window (x0, y0, w, h) into ``out``; returns how many."""
    n = 0
    for m in range(n_masks):
        mx = masks[m, 0]
        my = masks[m, 1]
        mr = masks[m, 2]
        if x0 - mr <= mx <= x0 + w + mr and y0 - mr <= my <= y0 + h + mr:
            out[n, 0] = mx
            out[n, 1] = my
            out[n, 2] = mr
            n += 1
    return n


@njit(cache=True, inline="always")
def _yuv8(mode, bgr, yp, uvp, yy, xx):
    """Integer (Y, U, V) of one pixel: the planes (chroma: the sample the pixel falls in), or
    BT.601 of a BGR pixel. A change test needs no sub-sample chroma siting."""
    if mode == MODE_BGR:
        b = np.int32(bgr[yy, xx, 0])
        g = np.int32(bgr[yy, xx, 1])
        r = np.int32(bgr[yy, xx, 2])
        y = (29 * b + 150 * g + 77 * r + 128) >> 8
        return y, 128 + ((144 * (b - y)) >> 8), 128 + ((183 * (r - y)) >> 8)
    return np.int32(yp[yy, xx]), np.int32(uvp[yy >> 1, xx >> 1, 0]), np.int32(uvp[yy >> 1, xx >> 1, 1])


@njit(cache=True)
def still_patch_grab(mode, bgr, yp, uvp, y0, x0, h, w, out):
    """Copy (Y, U, V) of the window (x0, y0, w, h) into ``out[:h, :w]`` (a still-image reference)."""
    for j in range(h):
        for i in range(w):
            y, u, v = _yuv8(mode, bgr, yp, uvp, y0 + j, x0 + i)
            out[j, i, 0] = y
            out[j, i, 1] = u
            out[j, i, 2] = v


@njit(cache=True, inline="always")
def _in_capsule(i, j, cx, cy, ux, uy, hl, rad):
    """Pixel (i, j) within ``rad`` of the segment centred (cx, cy), direction (ux, uy), half length hl."""
    return _segment_d2(i - cx, j - cy, ux, uy, hl) <= rad * rad


@njit(cache=True)
def still_patch_changed(mode, bgr, yp, uvp, y0, x0, h, w, ref, tol, cx, cy, ux, uy, hl, rad, out):
    """Compare an object's footprint -- the capsule (cx, cy) +- hl (ux, uy), radius rad, in
    window coordinates -- with ``ref[:h, :w]``: ``out[0]`` = footprint pixels, ``out[1]`` =
    those whose Y, U or V differs by more than ``tol`` (Y once the footprint's mean
    brightness is matched to the reference's: a light's flicker or an exposure step moves
    every pixel alike, an object that moved changes its edges; chroma sees the red cue ball,
    whose brightness may be the cloth's). Only the footprint counts: a ball rolling past in
    the window's corner has not moved the object."""
    s_cur = 0
    s_ref = 0
    n_in = 0
    for j in range(h):
        for i in range(w):
            if _in_capsule(i, j, cx, cy, ux, uy, hl, rad):
                y, u, v = _yuv8(mode, bgr, yp, uvp, y0 + j, x0 + i)
                s_cur += y
                s_ref += np.int32(ref[j, i, 0])
                n_in += 1
    gain = (s_cur + 1.0) / (s_ref + 1.0)
    n = 0
    for j in range(h):
        for i in range(w):
            if _in_capsule(i, j, cx, cy, ux, uy, hl, rad):
                y, u, v = _yuv8(mode, bgr, yp, uvp, y0 + j, x0 + i)
                dy = abs(y - gain * ref[j, i, 0])
                du = abs(u - np.int32(ref[j, i, 1]))
                dv = abs(v - np.int32(ref[j, i, 2]))
                if dy > tol or du > tol or dv > tol:
                    n += 1
    out[0] = n_in
    out[1] = n


@njit(cache=True)
def still_patches_changed(mode, bgr, yp, uvp, boxes, active, refs, tol, out):
    """still_patch_changed for every object whose ``active[k]`` is set, in one call (the
    tracker checks the resting objects every frame; one call instead of one each saves
    their dispatch). ``boxes[k]`` = (x0, y0, w, h, cx, cy, ux, uy, hl, rad), ``refs[k]``
    the object's reference, ``out[k]`` its (footprint pixels, changed pixels)."""
    for k in range(boxes.shape[0]):
        if active[k]:
            b = boxes[k]
            still_patch_changed(mode, bgr, yp, uvp, int(b[1]), int(b[0]), int(b[3]), int(b[2]), refs[k], tol,
                                b[4], b[5], b[6], b[7], b[8], b[9], out[k])
