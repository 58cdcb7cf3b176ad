"""Every tracking kernel against a slow, plain-Python twin on seeded random inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vision_ref.track import _kernels as K
from vision_ref.track.tracker import default_params

PRM = default_params()


# ---- plain-Python twins -------------------------------------------------------------------------
def py_read_yuv(mode, bgr, yp, uvp, yy, xx, prm=None):
    if mode == K.MODE_BGR:
        b, g, r = (float(v) for v in bgr[yy, xx])
        y = 0.299 * r + 0.587 * g + 0.114 * b
        return y, 128.0 + 0.564 * (b - y), 128.0 + 0.713 * (r - y)
    if prm[K.P_CHROMA_NEAREST]:
        return float(yp[yy, xx]), float(uvp[yy // 2, xx // 2, 0]), float(uvp[yy // 2, xx // 2, 1])
    # chroma: bilinear at the pixel's position in the half-resolution plane
    fx = (xx - prm[K.P_CHROMA_OX]) / 2
    fy = (yy - prm[K.P_CHROMA_OY]) / 2
    i, j = math.floor(fx), math.floor(fy)
    out = []
    for c in range(2):
        val = 0.0
        for jj, wy in ((j, 1 - (fy - j)), (j + 1, fy - j)):
            for ii, wx in ((i, 1 - (fx - i)), (i + 1, fx - i)):
                jc = min(max(jj, 0), uvp.shape[0] - 1)
                ic = min(max(ii, 0), uvp.shape[1] - 1)
                val += wy * wx * float(uvp[jc, ic, c])
        out.append(val)
    return float(yp[yy, xx]), out[0], out[1]


def clip01(v):
    return min(max(v, 0.0), 1.0)


def py_fg(y, u, v, by, bu, bv, prm, hi=None):
    """fg_weight; with ``hi`` the ramp saturating there (fg_ramp: refine_ball's weight)."""
    hi = prm[K.P_FG_HI] if hi is None else hi
    k = (y + 4.0) / (by + 4.0)
    res = math.hypot((u - 128) - k * (bu - 128), (v - 128) - k * (bv - 128))
    if y > by:
        res += prm[K.P_BRIGHT] * (y - by)
    return clip01((res - prm[K.P_FG_LO]) / (hi - prm[K.P_FG_LO]))


def py_class(y, u, v, ref, prm):
    yr, cu, cv = ref[0], ref[1] - 128, ref[2] - 128
    s = yr / max(y, 12.0)
    d = math.hypot((u - 128) * s - cu, (v - 128) * s - cv)
    widen = prm[K.P_C_REL] * math.hypot(cu, cv)
    lo, hi = prm[K.P_C_LO] + widen, prm[K.P_C_HI] + widen
    return clip01((hi - d) / (hi - lo)) * clip01((y - prm[K.P_LUM_LO] * yr) / (prm[K.P_LUM_RANGE] * yr))


def in_masks(xx, yy, masks, n):
    return any((xx - masks[m, 0]) ** 2 + (yy - masks[m, 1]) ** 2 <= masks[m, 2] ** 2 for m in range(n))


def py_ball_weights(mode, bgr, yp, uvp, bgy, bgu, bgv, y0, x0, h, w, ref, prm, masks, n_masks):
    cls = np.zeros((h, w))
    fg = np.zeros((h, w))
    for j in range(h):
        for i in range(w):
            yy, xx = y0 + j, x0 + i
            if in_masks(xx, yy, masks, n_masks):
                continue
            y, u, v = py_read_yuv(mode, bgr, yp, uvp, yy, xx, prm)
            f = py_fg(y, u, v, bgy[yy, xx], bgu[yy, xx], bgv[yy, xx], prm)
            fg[j, i] = f
            cls[j, i] = f * py_class(y, u, v, ref, prm)
    return cls, fg


def py_disk_scores(wmap, h, w, r, px, py, gate, stride):
    ri = int(r)
    offsets = [(dy, dx) for dy in range(-ri, ri + 1)
               for dx in range(-int(math.sqrt(max(r * r - dy * dy, 0))), int(math.sqrt(max(r * r - dy * dy, 0))) + 1)]
    scores = np.full((h, w), -1.0)
    n = 0
    for j in range(0, h, stride):
        for i in range(0, w, stride):
            if j - ri < 0 or j + ri >= h or i - ri < 0 or i + ri >= w:
                continue
            if (i - px) ** 2 + (j - py) ** 2 > gate * gate:
                continue
            scores[j, i] = sum(wmap[j + dy, i + dx] for dy, dx in offsets) / len(offsets)
            n += 1
    return n, scores


def py_top_peaks(scores, min_sep, min_score, k_max):
    out = []
    for _ in range(k_max):
        best = None
        for j in range(scores.shape[0]):
            for i in range(scores.shape[1]):
                s = scores[j, i]
                if s <= (min_score if best is None else best[2]):
                    continue
                if all((i - x) ** 2 + (j - y) ** 2 >= min_sep**2 for x, y, _ in out):
                    best = (i, j, s)
        if best is None:
            break
        out.append(best)
    return out


def capsule_membership(i, j, cx, cy, ux, uy, hl, rho):
    dx, dy = i - cx, j - cy
    t = min(max(dx * ux + dy * uy, -hl), hl)
    return clip01(rho + 0.5 - math.hypot(dx - t * ux, dy - t * uy))


def py_refine(wmap, cx, cy, ux, uy, hl, r, n_wide, n_narrow, pad):
    h, w = wmap.shape
    total = n_wide + n_narrow
    for it in range(total):
        rho = r + 2.0 if it < n_wide else r + pad
        acc = []
        for j in range(h):
            for i in range(w):
                a = capsule_membership(i, j, cx, cy, ux, uy, hl, rho)
                if a > 0:
                    acc.append((a, wmap[j, i] * a, i - cx, j - cy))
        area = sum(x[0] for x in acc)
        sw = sum(x[1] for x in acc)
        mx = sum(x[1] * x[2] for x in acc) / sw
        my = sum(x[1] * x[3] for x in acc) / sw
        if it == total - 1:
            sxx = sum(x[1] * x[2] ** 2 for x in acc) / sw - mx * mx
            sxy = sum(x[1] * x[2] * x[3] for x in acc) / sw - mx * my
            syy = sum(x[1] * x[3] ** 2 for x in acc) / sw - my * my
        cx, cy = cx + mx, cy + my
    fill = sw / (math.pi * r * r + 4 * r * hl)
    return np.array([cx, cy, sw, area, sxx, sxy, syy, fill])


def py_components(mask):
    """8-connected components as lists of (j, i), in raster order of their first pixel."""
    h, w = mask.shape
    seen = np.zeros_like(mask, bool)
    comps = []
    for j0 in range(h):
        for i0 in range(w):
            if seen[j0, i0] or not mask[j0, i0]:
                continue
            todo, comp = [(j0, i0)], []
            seen[j0, i0] = True
            while todo:
                j, i = todo.pop()
                comp.append((j, i))
                for dj in (-1, 0, 1):
                    for di in (-1, 0, 1):
                        jj, ii = j + dj, i + di
                        if 0 <= jj < h and 0 <= ii < w and not seen[jj, ii] and mask[jj, ii]:
                            seen[jj, ii] = True
                            todo.append((jj, ii))
            comps.append(comp)
    return comps


def py_blob_moments(comp, fg, band, nu, nv):
    wv = np.array([fg[p] for p in comp])
    xs = np.array([p[1] for p in comp], float)
    ys = np.array([p[0] for p in comp], float)
    b = np.array([band[p] for p in comp])
    sw = wv.sum()
    mx, my = (wv * xs).sum() / sw, (wv * ys).sum() / sw
    out = np.zeros(K.N_BLOB)
    out[K.B_SUMW] = sw
    out[K.B_CX], out[K.B_CY] = mx, my
    out[K.B_SXX] = (wv * xs * xs).sum() / sw - mx * mx
    out[K.B_SXY] = (wv * xs * ys).sum() / sw - mx * my
    out[K.B_SYY] = (wv * ys * ys).sum() / sw - my * my
    out[K.B_BAND] = b.sum()
    out[K.B_BX], out[K.B_BY] = mx, my
    if b.sum() > 1e-9:
        out[K.B_BX] = (b * xs).sum() / b.sum()
        out[K.B_BY] = (b * ys).sum() / b.sum()
        out[K.B_BU] = (b * np.array([nu[p] for p in comp])).sum() / b.sum()
        out[K.B_BV] = (b * np.array([nv[p] for p in comp])).sum() / b.sum()
    out[K.B_NPIX] = len(comp)
    out[K.B_X0], out[K.B_X1] = xs.min(), xs.max()
    out[K.B_Y0], out[K.B_Y1] = ys.min(), ys.max()
    return out


# ---- fixtures --------------------------------------------------------------------------------------
def scene(seed, H=48, W=64):
    """A cloth-coloured background with noise and a few bright / red / dark discs in the frame."""
    rng = np.random.default_rng(seed)
    bg = np.empty((H, W, 3), np.uint8)
    bg[:] = (150, 92, 28)
    bg = np.clip(bg + rng.normal(0, 2, bg.shape), 0, 255).astype(np.uint8)
    fr = np.clip(bg.astype(float) + rng.normal(0, 3, bg.shape), 0, 255)
    yy, xx = np.mgrid[0:H, 0:W]
    for colour in ((222, 234, 238), (28, 30, 196), (40, 50, 60)):
        cx, cy, r = rng.uniform(8, W - 8), rng.uniform(8, H - 8), rng.uniform(3, 7)
        fr[(xx - cx) ** 2 + (yy - cy) ** 2 <= r * r] = colour
    fr = fr.astype(np.uint8)
    return (fr, *bg_planes(bg), rng)


def bg_planes(bg):
    """(Y, U, V) float32 planes of a BGR background, on the kernels' background grid
    (1/BG_SCALE units) so the twins read the same values."""
    f = bg.astype(np.float32)
    by = 0.299 * f[..., 2] + 0.587 * f[..., 1] + 0.114 * f[..., 0]
    bu = 128 + 0.564 * (f[..., 0] - by)
    bv = 128 + 0.713 * (f[..., 2] - by)
    return tuple(np.ascontiguousarray(np.round(c * K.BG_SCALE) / K.BG_SCALE).astype(np.float32) for c in (by, bu, bv))


def packed(by, bu, bv):
    """The kernels' interleaved int16 background from float planes (exact on the scene's grid)."""
    bg = K.pack_background(by, bu, bv)
    np.testing.assert_array_equal(bg[..., 0] / K.BG_SCALE, by)
    return bg


def to_nv12(bgr):
    f = bgr.astype(float)
    y = 0.299 * f[..., 2] + 0.587 * f[..., 1] + 0.114 * f[..., 0]
    u = 128 + 0.564 * (f[..., 0] - y)
    v = 128 + 0.713 * (f[..., 2] - y)
    uv = np.stack([u, v], -1).reshape(bgr.shape[0] // 2, 2, bgr.shape[1] // 2, 2, 2).mean(axis=(1, 3))
    return np.clip(y, 0, 255).astype(np.uint8), np.clip(uv, 0, 255).astype(np.uint8)


EMPTY3 = np.zeros((1, 1, 3), np.uint8)
EMPTY2 = np.zeros((1, 1), np.uint8)
EMPTY_UV = np.zeros((1, 1, 2), np.uint8)


def frame_args(fr, mode):
    """The kernels' (bgr, y plane, uv plane) arguments for a BGR scene in ``mode``."""
    if mode == K.MODE_BGR:
        return fr, EMPTY2, EMPTY_UV
    yp, uvp = to_nv12(fr)
    return EMPTY3, yp, uvp


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("mode", [K.MODE_BGR, K.MODE_YUV])
def test_ball_weights_matches_twin(seed, mode):
    fr, by, bu, bv, rng = scene(seed)
    prm = PRM.copy()
    prm[K.P_CHROMA_OX], prm[K.P_CHROMA_OY] = (0.5, 0.5) if seed == 0 else rng.uniform(-0.5, 1.0, 2)
    prm[K.P_CHROMA_NEAREST] = 1.0 if seed == 2 else 0.0
    args = frame_args(fr, mode)
    ref = np.array([200.0, 126.0, 130.0]) if seed % 2 == 0 else np.array([79.0, 100.0, 211.0])
    masks = np.array([[20.0, 20.0, 4.0], [0.0, 0.0, 0.0]])
    y0, x0, h, w = 3, 5, 40, 50
    cls = np.zeros((64, 64), np.float32)
    fg = np.zeros((64, 64), np.float32)
    K.ball_weights(mode, *args, packed(by, bu, bv), y0, x0, h, w, ref, prm, masks, 1, cls, fg)
    pc, pf = py_ball_weights(mode, *args, by, bu, bv, y0, x0, h, w, ref, prm, masks, 1)
    np.testing.assert_allclose(cls[:h, :w], pc, atol=2e-5)
    np.testing.assert_allclose(fg[:h, :w], pf, atol=2e-5)
    assert pf.max() == 1.0 and pf.min() == 0.0  # the scene has both objects and cloth


def test_fg_ignores_shadows_and_sees_objects():
    # a darker copy of the cloth (a shadow) keeps its hue: not foreground; a white ball is
    by, bu, bv = 80.0, 150.0, 105.0
    k = 0.5
    assert K.fg_weight(by * k, 128 + (bu - 128) * k, 128 + (bv - 128) * k, by, bu, bv, PRM) == 0.0
    assert K.fg_weight(220.0, 126.0, 130.0, by, bu, bv, PRM) == 1.0


@pytest.mark.parametrize("seed", [3, 4])
def test_disk_scores_and_peaks_match_twin(seed):
    rng = np.random.default_rng(seed)
    h, w = 30, 36
    wmap = rng.random((h, w)).astype(np.float32) ** 3
    prefix = np.zeros((64, 65))
    scores = np.zeros((64, 64), np.float32)
    for stride in (1, 2):
        n = K.disk_scores(wmap, h, w, 4.5, 17.0, 14.0, 9.0, stride, prefix, scores)
        pn, ps = py_disk_scores(wmap, h, w, 4.5, 17.0, 14.0, 9.0, stride)
        assert n == pn > 0
        np.testing.assert_allclose(scores[:h, :w], ps, atol=1e-5)
    out = np.zeros((4, 3))
    k = K.top_peaks(scores, h, w, 4.0, 0.0, 3, out)
    twin = py_top_peaks(scores[:h, :w].astype(np.float64), 4.0, 0.0, 3)
    assert k == len(twin) == 3
    np.testing.assert_allclose(out[:k], np.array(twin), atol=1e-6)


def disc_image(h, w, cx, cy, r, hl=0.0, ux=1.0, uy=0.0, ss=8):
    """A disc (optionally smeared along a streak) rendered with ss x ss supersampling."""
    img = np.zeros((h, w))
    o = (np.arange(ss) + 0.5) / ss - 0.5
    for j in range(h):
        for i in range(w):
            sy, sx = np.meshgrid(j + o, i + o, indexing="ij")
            dx, dy = sx - cx, sy - cy
            t = np.clip(dx * ux + dy * uy, -hl, hl)
            img[j, i] = np.mean(np.hypot(dx - t * ux, dy - t * uy) <= r)
    return img.astype(np.float32)


@pytest.mark.parametrize("seed", [5, 6, 7])
def test_refine_capsule_matches_twin_and_finds_centres(seed):
    rng = np.random.default_rng(seed)
    h, w = 40, 44
    cx, cy = rng.uniform(17, 25), rng.uniform(16, 22)
    r = rng.uniform(5.0, 8.0)
    ang = rng.uniform(0, math.pi)
    hl = [0.0, 3.0, 6.0][seed % 3]
    ux, uy = math.cos(ang), math.sin(ang)
    img = disc_image(h, w, cx, cy, r, hl, ux, uy)
    img = np.clip(img * 1.6, 0, 1).astype(np.float32)  # a saturating weight, as the kernels make
    out = np.zeros(K.N_REFINE)
    start = (cx + rng.uniform(-2, 2), cy + rng.uniform(-2, 2))
    K.refine_capsule(img, h, w, start[0], start[1], ux, uy, hl, r, 2, 3, 1.5, out)
    twin = py_refine(img.astype(np.float64), start[0], start[1], ux, uy, hl, r, 2, 3, 1.5)
    np.testing.assert_allclose(out, twin, rtol=1e-6, atol=1e-6)
    assert math.hypot(out[K.R_CX] - cx, out[K.R_CY] - cy) < 0.05
    assert out[K.R_FILL] > 0.9


def test_refine_is_not_pulled_by_a_touching_neighbour():
    h, w = 40, 60
    a = disc_image(h, w, 20.3, 20.0, 7.0)
    b = disc_image(h, w, 34.3, 20.0, 7.0)  # touching on the right
    img = np.clip(a + b, 0, 1).astype(np.float32)
    out = np.zeros(K.N_REFINE)
    K.refine_capsule(img, h, w, 21.0, 20.5, 1.0, 0.0, 0.0, 7.0, 2, 3, 0.5, out)
    assert abs(out[K.R_CX] - 20.3) < 0.35 and abs(out[K.R_CY] - 20.0) < 0.05


@pytest.mark.parametrize("seed", [8, 9])
def test_pin_weights_and_blobs_match_twin(seed):
    fr, by, bu, bv, rng = scene(seed)
    h, w = 40, 56
    y0, x0 = 4, 4
    fg = np.zeros((64, 64), np.float32)
    band = np.zeros((64, 64), np.float32)
    nu = np.zeros((64, 64), np.float32)
    nv = np.zeros((64, 64), np.float32)
    masks = np.zeros((1, 3))
    K.pin_weights(K.MODE_BGR, fr, EMPTY2, EMPTY_UV, packed(by, bu, bv), y0, x0, h, w, PRM, masks, 0, fg, band, nu, nv)
    for j in range(h):
        for i in range(w):
            y, u, v = py_read_yuv(K.MODE_BGR, fr, None, None, y0 + j, x0 + i)
            f = py_fg(y, u, v, by[y0 + j, x0 + i], bu[y0 + j, x0 + i], bv[y0 + j, x0 + i], PRM)
            s = 128.0 / max(y, 12.0)
            nv_ = (v - 128) * s
            assert fg[j, i] == pytest.approx(f, abs=2e-5)
            assert band[j, i] == pytest.approx(f * clip01((nv_ - PRM[K.P_BAND_LO]) / (PRM[K.P_BAND_HI] - PRM[K.P_BAND_LO])), abs=2e-5)
            assert nu[j, i] == pytest.approx((u - 128) * s if f > 0 else 0.0, abs=1e-3)  # only where fg
    fgv, bandv, nuv, nvv = (a[:h, :w].astype(np.float64) for a in (fg, band, nu, nv))
    comps = [c for c in py_components(fgv >= 0.35)]
    twins = [py_blob_moments(c, fgv, bandv, nuv, nvv) for c in comps]
    twins = [t for t in twins if t[K.B_SUMW] >= 3.0]
    labels = np.zeros((64, 64), np.int32)
    stack = np.zeros(2 * 64 * 64, np.int32)
    stats = np.zeros((16, K.N_BLOB))
    nb = K.label_blobs(fg, band, nu, nv, h, w, 0.35, 3.0, labels, stack, stats, 16)
    assert nb == len(twins) >= 2
    np.testing.assert_allclose(stats[:nb], np.array(twins), rtol=1e-5, atol=1e-4)
    # blob_at: the blob holding the strongest pixel near a seed (nearest of equals)
    t0 = twins[0]
    out = np.zeros(K.N_BLOB)
    n = K.blob_at(fg, band, nu, nv, h, w, t0[K.B_CX], t0[K.B_CY], 3.0, 0.35, labels, stack, out)
    assert n == t0[K.B_NPIX]
    np.testing.assert_allclose(out, t0, rtol=1e-5, atol=1e-4)
    assert K.blob_at(fg, band, nu, nv, h, w, -50.0, -50.0, 3.0, 0.35, labels, stack, out) == 0
    # flood_blob (the fill both use): from any pixel of each component, that component's moments
    for comp in comps:
        labels[:] = 0
        j, i = comp[len(comp) // 2]
        out = np.zeros(K.N_BLOB)
        assert K.flood_blob(fg, band, nu, nv, h, w, 0.35, j, i, labels, stack, out) == len(comp)
        np.testing.assert_allclose(out, py_blob_moments(comp, fgv, bandv, nuv, nvv), rtol=1e-5, atol=1e-4)
        assert labels[:h, :w].sum() == len(comp)


@pytest.mark.parametrize("seed", [10, 11])
def test_coarse_grid_and_labels_match_twin(seed):
    fr, by, bu, bv, rng = scene(seed, 64, 80)
    stride, y0, x0 = 3, 1, 1
    gh, gw = (64 - y0 + stride - 1) // stride, (80 - x0 + stride - 1) // stride
    region = (rng.random((gh, gw)) > 0.1).astype(np.uint8)
    ref_w = np.array([200.0, 126.0, 130.0])
    ref_c = np.array([79.0, 100.0, 211.0])
    fg = np.zeros((gh, gw), np.float32)
    wh = np.zeros((gh, gw), np.float32)
    cu = np.zeros((gh, gw), np.float32)
    K.coarse_grid(K.MODE_BGR, fr, EMPTY2, EMPTY_UV, packed(by, bu, bv), stride, y0, x0, gh, gw, region, ref_w, ref_c, PRM,
                  fg, wh, cu)
    for j in range(gh):
        for i in range(gw):
            yy, xx = y0 + j * stride, x0 + i * stride
            if not region[j, i]:
                assert fg[j, i] == wh[j, i] == cu[j, i] == 0.0
                continue
            y, u, v = py_read_yuv(K.MODE_BGR, fr, None, None, yy, xx)
            f = py_fg(y, u, v, by[yy, xx], bu[yy, xx], bv[yy, xx], PRM)
            assert fg[j, i] == pytest.approx(f, abs=2e-5)
            assert wh[j, i] == pytest.approx(f * py_class(y, u, v, ref_w, PRM), abs=2e-5)
            assert cu[j, i] == pytest.approx(f * py_class(y, u, v, ref_c, PRM), abs=2e-5)
    labels = np.zeros((gh, gw), np.int32)
    stack = np.zeros(2 * gh * gw, np.int32)
    stats = np.zeros((32, K.N_STAT))
    nc = K.label_grid(fg, wh, cu, gh, gw, 0.5, labels, stack, stats, 32)
    comps = py_components(fg >= 0.5)
    assert nc == len(comps) >= 1
    for c, st in zip(comps, stats[:nc]):
        assert st[K.S_N] == len(c)
        assert st[K.S_SX] == sum(p[1] for p in c) and st[K.S_SY] == sum(p[0] for p in c)
        assert st[K.S_SW] == pytest.approx(sum(float(wh[p]) for p in c), rel=1e-5)
        assert st[K.S_SC] == pytest.approx(sum(float(cu[p]) for p in c), rel=1e-5)
        assert (st[K.S_X0], st[K.S_X1]) == (min(p[1] for p in c), max(p[1] for p in c))


def test_sample_pairs_and_grid_lookups_match_twin():
    fr, by, bu, bv, rng = scene(12)
    out_f = np.zeros((500, 3))
    out_b = np.zeros((500, 3))
    n = K.sample_pairs(K.MODE_BGR, fr, EMPTY2, EMPTY_UV, packed(by, bu, bv), 5, PRM, out_f, out_b)
    rows = [(yy, xx) for yy in range(2, 48, 5) for xx in range(2, 64, 5)]
    assert n == len(rows)
    for k, (yy, xx) in enumerate(rows):
        np.testing.assert_allclose(out_f[k], py_read_yuv(K.MODE_BGR, fr, None, None, yy, xx), atol=1e-9)
        np.testing.assert_allclose(out_b[k], (by[yy, xx], bu[yy, xx], bv[yy, xx]), atol=1e-5)
    grid = rng.normal(size=(7, 9, 4))
    step = 8.0
    px = rng.uniform(0, 64, 20)
    py = rng.uniform(0, 48, 20)
    out = np.zeros((20, 4))
    K.grid_lookup(grid, step, px, py, out, 20)
    for k in range(20):
        i, j = min(int(px[k] // step), 7), min(int(py[k] // step), 5)
        ax, ay = px[k] / step - i, py[k] / step - j
        want = ((1 - ax) * (1 - ay) * grid[j, i] + ax * (1 - ay) * grid[j, i + 1]
                + (1 - ax) * ay * grid[j + 1, i] + ax * ay * grid[j + 1, i + 1])
        np.testing.assert_allclose(out[k], want, atol=1e-12)
        z = rng.uniform(0, 1)
        x, y = K.grid_point(grid, step, px[k], py[k], 0, z)
        assert x == pytest.approx(want[0] + (want[2] - want[0]) * z, abs=1e-12)
        assert y == pytest.approx(want[1] + (want[3] - want[1]) * z, abs=1e-12)


@pytest.mark.parametrize("seed", [13, 14])
@pytest.mark.parametrize("mode", [K.MODE_BGR, K.MODE_YUV])
def test_class_grid_fg_window_and_rest_probe_match_twin(seed, mode):
    fr, by, bu, bv, rng = scene(seed)
    args = frame_args(fr, mode)
    prm = PRM.copy()
    prm[K.P_CHROMA_OX], prm[K.P_CHROMA_OY] = rng.uniform(-0.5, 1.0, 2)
    ref = np.array([200.0, 126.0, 130.0])
    masks = np.array([[30.0, 22.0, 5.0], [0.0, 0.0, 0.0]])
    y0, x0, step = 2, 3, 2
    gh, gw = 20, 26
    cls = np.zeros((64, 64), np.float32)
    K.class_grid(mode, *args, packed(by, bu, bv), y0, x0, gh, gw, step, ref, prm, masks, 1, cls)
    fg = np.zeros((64, 64), np.float32)
    K.fg_window(mode, *args, packed(by, bu, bv), y0, x0, 40, 52, prm, masks, 1, fg)
    for j in range(40):
        for i in range(52):
            yy, xx = y0 + j, x0 + i
            masked = in_masks(xx, yy, masks, 1)
            y, u, v = py_read_yuv(mode, *args, yy, xx, prm)
            f = 0.0 if masked else py_fg(y, u, v, by[yy, xx], bu[yy, xx], bv[yy, xx], prm)
            assert fg[j, i] == pytest.approx(f, abs=2e-5)
            if j % step == 0 and i % step == 0 and j // step < gh and i // step < gw:
                want = 0.0 if masked else f * py_class(y, u, v, ref, prm)
                assert cls[j // step, i // step] == pytest.approx(want, abs=2e-5)
    # the rest probe: weighted centroid offset and mean weight over every 2nd pixel of a disk
    out = np.zeros(3)
    cx, cy, rho = rng.uniform(15, 45), rng.uniform(12, 34), 9.5
    K.rest_probe(mode, *args, packed(by, bu, bv), cx, cy, rho, 2, prm, masks, 1, out)
    acc, n = [], 0
    for yy in range(max(math.floor(cy - rho), 0), min(math.ceil(cy + rho), 47) + 1, 2):
        for xx in range(max(math.floor(cx - rho), 0), min(math.ceil(cx + rho), 63) + 1, 2):
            if (xx - cx) ** 2 + (yy - cy) ** 2 > rho * rho:
                continue
            n += 1
            if in_masks(xx, yy, masks, 1):
                continue
            y, u, v = py_read_yuv(mode, *args, yy, xx, prm)
            acc.append((py_fg(y, u, v, by[yy, xx], bu[yy, xx], bv[yy, xx], prm), xx - cx, yy - cy))
    sw = sum(a[0] for a in acc)
    if sw > 0:
        np.testing.assert_allclose(out, [sum(a[0] * a[1] for a in acc) / sw, sum(a[0] * a[2] for a in acc) / sw, sw / n],
                                   atol=1e-5)
    else:
        np.testing.assert_allclose(out, 0.0)


@pytest.mark.parametrize("seed", [15, 16, 17])
@pytest.mark.parametrize("mode", [K.MODE_BGR, K.MODE_YUV])
def test_refine_ball_matches_fg_window_then_refine_twin(seed, mode):
    # the fused kernel computes its weight only where a pass reads it: the same result as the
    # twins of fg_window (per-pixel weights with the refinement's ramp, masks) and
    # refine_capsule on the window
    fr, by, bu, bv, rng = scene(seed)
    args = frame_args(fr, mode)
    prm = PRM.copy()
    prm[K.P_CHROMA_OX], prm[K.P_CHROMA_OY] = rng.uniform(-0.5, 1.0, 2)
    ref = np.array([200.0, 126.0, 130.0])
    masks = np.array([[rng.uniform(10, 50), rng.uniform(10, 38), 4.0], [0.0, 0.0, 0.0]])
    y0, x0, h, w = 2, 3, 40, 52
    fgw = np.zeros((h, w))
    for j in range(h):
        for i in range(w):
            yy, xx = y0 + j, x0 + i
            if not in_masks(xx, yy, masks, 1):
                y, u, v = py_read_yuv(mode, *args, yy, xx, prm)
                fgw[j, i] = py_fg(y, u, v, by[yy, xx], bu[yy, xx], bv[yy, xx], prm, prm[K.P_REFINE_HI])
    fgw = fgw.astype(np.float32).astype(np.float64)  # the kernels store weights as float32
    ang = rng.uniform(0, math.pi)
    ux, uy, hl = math.cos(ang), math.sin(ang), [0.0, 2.5, 5.0][seed % 3]
    r = rng.uniform(4.0, 7.0)
    big = max(py_components(fgw >= 0.5), key=len)  # start near one of the scene's discs
    cx = float(np.mean([p[1] for p in big])) + rng.uniform(-2, 2)
    cy = float(np.mean([p[0] for p in big])) + rng.uniform(-2, 2)
    buf = np.zeros((64, 64), np.float32)
    rowbits = np.zeros(64, np.int64)
    out = np.zeros(K.N_REFINE)
    cls = K.refine_ball(mode, *args, packed(by, bu, bv), y0, x0, h, w, prm, masks, 1, rowbits, buf, cx, cy, ux, uy, hl, r,
                        1, 2, 1.5, ref, out)
    twin = py_refine(fgw, cx, cy, ux, uy, hl, r, 1, 2, 1.5)
    np.testing.assert_allclose(out, twin, rtol=1e-6, atol=1e-6)
    # pixels never read stay unknown (-1); those read hold the foreground weight
    seen = buf[:h, :w] >= 0
    assert 0 < seen.sum() < h * w
    np.testing.assert_allclose(buf[:h, :w][seen], fgw[seen], atol=2e-6)
    # the colour fill over the last pass's capsule (about where that pass started)
    start = py_refine(fgw, cx, cy, ux, uy, hl, r, 1, 1, 1.5)[:2]  # where the last pass started
    want, area = 0.0, 0.0
    for j in range(0, h, 2):
        for i in range(0, w, 2):
            a = capsule_membership(i, j, start[0], start[1], ux, uy, hl, r + 1.5)
            area += a
            if a > 0 and fgw[j, i] > 0:
                y, u, v = py_read_yuv(mode, *args, y0 + j, x0 + i, prm)
                want += buf[j, i] * py_class(y, u, v, ref, prm) * a
    assert cls == pytest.approx(want / area, abs=1e-5)
    assert K.refine_ball(mode, *args, packed(by, bu, bv), y0, x0, h, w, prm, masks, 1, rowbits, buf, cx, cy, ux, uy, hl, r,
                         1, 2, 1.5, np.zeros(0), out) == 0.0


@pytest.mark.parametrize("seed", [18, 19])
@pytest.mark.parametrize("mode", [K.MODE_BGR, K.MODE_YUV])
def test_pin_blob_at_matches_pin_weights_then_blob_at(seed, mode):
    fr, by, bu, bv, rng = scene(seed)
    args = frame_args(fr, mode)
    prm = PRM.copy()
    h, w, y0, x0 = 40, 56, 4, 4
    masks = np.array([[rng.uniform(10, 50), rng.uniform(10, 38), 3.0], [0.0, 0.0, 0.0]])
    full = [np.zeros((64, 64), np.float32) for _ in range(4)]
    K.pin_weights(mode, *args, packed(by, bu, bv), y0, x0, h, w, prm, masks, 1, *full)
    lazy = [np.zeros((64, 64), np.float32) for _ in range(4)]
    labels = np.zeros((64, 64), np.int32)
    stack = np.zeros(2 * 64 * 64, np.int32)
    rowbits = np.zeros(64, np.int64)
    fgv = full[0][:h, :w].astype(np.float64)
    comps = py_components(fgv >= 0.35)
    assert comps
    for comp in comps + [[(0, 0)]]:
        j, i = comp[len(comp) // 2]
        want = np.zeros(K.N_BLOB)
        n_want = K.blob_at(*full, h, w, i + 0.3, j - 0.2, 3.0, 0.35, labels, stack, want)
        got = np.zeros(K.N_BLOB)
        n = K.pin_blob_at(mode, *args, packed(by, bu, bv), y0, x0, h, w, prm, masks, 1, rowbits, *lazy, i + 0.3, j - 0.2, 3.0,
                          0.35, labels, stack, got)
        assert n == n_want
        np.testing.assert_array_equal(got, want)
        if n:  # the pixels it computed agree with pin_weights; most of the window is never read
            seen = lazy[0][:h, :w] >= 0
            assert seen.sum() < h * w
            for a, b in zip(lazy, full):
                np.testing.assert_array_equal(a[:h, :w][seen], b[:h, :w][seen])


def py_yuv8(mode, bgr, yp, uvp, yy, xx):
    if mode == K.MODE_BGR:
        b, g, r = (int(v) for v in bgr[yy, xx])
        y = (29 * b + 150 * g + 77 * r + 128) // 256
        return y, 128 + (144 * (b - y)) // 256, 128 + (183 * (r - y)) // 256
    return int(yp[yy, xx]), int(uvp[yy // 2, xx // 2, 0]), int(uvp[yy // 2, xx // 2, 1])


def py_patch_changed(mode, bgr, yp, uvp, y0, x0, h, w, ref, tol, cx, cy, ux, uy, hl, rad):
    cur = np.array([[py_yuv8(mode, bgr, yp, uvp, y0 + j, x0 + i) for i in range(w)] for j in range(h)], np.float64)
    jj, ii = np.mgrid[0:h, 0:w]
    a = np.clip((ii - cx) * ux + (jj - cy) * uy, -hl, hl)
    inside = (ii - cx - a * ux) ** 2 + (jj - cy - a * uy) ** 2 <= rad * rad
    r = ref[:h, :w].astype(np.float64)
    gain = (cur[..., 0][inside].sum() + 1.0) / (r[..., 0][inside].sum() + 1.0)
    d = np.abs(cur - r)
    d[..., 0] = np.abs(cur[..., 0] - gain * r[..., 0])
    return int(inside.sum()), int(np.sum((d.max(axis=2) > tol)[inside]))


def changed(mode, args, y0, x0, h, w, ref, cap):
    out = np.zeros(2, np.int64)
    K.still_patch_changed(mode, *args, y0, x0, h, w, ref, 24.0, *cap, out)
    assert tuple(out) == py_patch_changed(mode, *args, y0, x0, h, w, ref, 24.0, *cap)
    return int(out[1])


@pytest.mark.parametrize("seed", [20, 21, 22])
@pytest.mark.parametrize("mode", [K.MODE_BGR, K.MODE_YUV])
def test_still_patch_kernels_match_twin(seed, mode):
    fr, _, _, _, rng = scene(seed)
    h, w, y0, x0 = 30, 40, 6, 10
    ref = np.zeros((64, 64, 3), np.uint8)
    args = frame_args(fr, mode)
    K.still_patch_grab(mode, *args, y0, x0, h, w, ref)
    want = np.array([[py_yuv8(mode, *args, y0 + j, x0 + i) for i in range(w)] for j in range(h)])
    np.testing.assert_array_equal(ref[:h, :w], want)
    # the same frame: nothing changed; brighter as a whole (a light's flicker): still nothing
    bright = np.clip(fr.astype(np.float64) * 1.08, 0, 255).astype(np.uint8)
    # everything moved by two pixels: the edges in the footprint changed
    moved = fr.copy()
    moved[:, 2:] = fr[:, :-2]
    whole = (w / 2, h / 2, 1.0, 0.0, 0.0, 60.0)  # a footprint over the whole window
    for frame_now, expect_change in ((fr, False), (bright, False), (moved, True)):
        n = changed(mode, frame_args(frame_now, mode), y0, x0, h, w, ref, whole)
        assert (n >= 3) == expect_change, (n, expect_change)
    # random capsules: the counts are the twin's
    args = frame_args(moved, mode)
    for _ in range(5):
        ang = rng.uniform(0, math.pi)
        changed(mode, args, y0, x0, h, w, ref, (rng.uniform(5, w - 5), rng.uniform(5, h - 5), math.cos(ang),
                                                 math.sin(ang), rng.uniform(0, 8), rng.uniform(2, 6)))
    # a change outside the footprint is not seen; a red disk on the cloth's grey is (chroma)
    cap = (6.0, 6.0, 1.0, 0.0, 0.0, 3.0)
    painted = fr.copy()
    painted[y0 + 20:y0 + 28, x0 + 25:x0 + 38] = (255, 255, 255)  # far from the capsule at (6, 6)
    assert changed(mode, frame_args(painted, mode), y0, x0, h, w, ref, cap) == 0
    grey = np.full_like(fr, 80)
    ref_grey = np.zeros_like(ref)
    K.still_patch_grab(mode, *frame_args(grey, mode), y0, x0, h, w, ref_grey)
    red = grey.copy()
    red[y0:y0 + 12, x0:x0 + 12] = (40, 40, 200)  # BGR: Y ~ 80, the grey's brightness
    assert changed(mode, frame_args(red, mode), y0, x0, h, w, ref_grey, cap) >= 20


@pytest.mark.parametrize("seed", [23, 24])
@pytest.mark.parametrize("mode", [K.MODE_BGR, K.MODE_YUV])
def test_batched_still_check_matches_the_twin_per_object(seed, mode):
    """still_patches_changed answers, for each active object, what the twin says for it
    alone; inactive rows are left as they were."""
    fr, _, _, _, rng = scene(seed)
    n_obj = 6
    refs = np.zeros((n_obj, 64, 64, 3), np.uint8)
    boxes = np.zeros((n_obj, 10))
    active = np.zeros(n_obj, np.bool_)
    for k in range(n_obj):
        h, w = int(rng.integers(8, 30)), int(rng.integers(8, 30))
        y0, x0 = int(rng.integers(0, fr.shape[0] - h)), int(rng.integers(0, fr.shape[1] - w))
        K.still_patch_grab(mode, *frame_args(fr, mode), y0, x0, h, w, refs[k])
        ang = rng.uniform(0, math.pi)
        boxes[k] = (x0, y0, w, h, rng.uniform(2, w - 2), rng.uniform(2, h - 2), math.cos(ang), math.sin(ang),
                    rng.uniform(0, 5), rng.uniform(2, 6))
        active[k] = k != 2
    moved = fr.copy()
    moved[:, 3:] = fr[:, :-3]
    args = frame_args(moved, mode)
    out = np.full((n_obj, 2), -7, np.int64)
    K.still_patches_changed(mode, *args, boxes, active, refs, 24.0, out)
    for k in range(n_obj):
        if not active[k]:
            assert tuple(out[k]) == (-7, -7)
            continue
        x0, y0, w, h = (int(v) for v in boxes[k, :4])
        assert tuple(out[k]) == py_patch_changed(mode, *args, y0, x0, h, w, refs[k], 24.0, *boxes[k, 4:])


def py_pack_background(y, u, v):
    """The twin of pack_background: numpy's stack, round (half to even), clip."""
    stacked = np.stack([np.asarray(y, np.float64), np.asarray(u, np.float64), np.asarray(v, np.float64)], axis=-1)
    return np.clip(np.round(stacked * K.BG_SCALE), 0, 32767).astype(np.int16)


@pytest.mark.parametrize("seed", [0, 1])
def test_pack_background_matches_twin(seed):
    rng = np.random.default_rng(seed)
    planes = [rng.uniform(-3.0, 260.0, (37, 53)).astype(np.float32) for _ in range(3)]
    planes[0][0, :4] = np.array([0.5, 1.5, 2.5, -0.5], np.float32) / K.BG_SCALE  # exact halves round to even
    planes[1][1, :2] = (600.0, -10.0)  # clipped both ways
    got = K.pack_background(*planes)
    assert got.dtype == np.int16 and got.flags.c_contiguous
    np.testing.assert_array_equal(got, py_pack_background(*planes))
    f64 = [p.astype(np.float64) + 1e-3 for p in planes]
    np.testing.assert_array_equal(K.pack_background(*f64), py_pack_background(*f64))


def _rendered_ball_refinements(prm, colour, r=7.1, phases=np.linspace(0.0, 1.9, 20)):
    """refine_ball's x error on an anti-aliased disc of ``colour`` (BGR) on cloth, at phases
    over the 2-pixel period of half-resolution chroma, from the frame as YUV420."""
    h, w = 32, 32
    cloth = np.array([150.0, 92.0, 28.0])
    bgf = np.broadcast_to(cloth, (h, w, 3)).astype(np.uint8)
    by, bu, bv = bg_planes(bgf)
    errs = []
    for ph in phases:
        cx, cy = 15.0 + ph, 15.3
        cov = disc_image(h, w, cx, cy, r).astype(float)[..., None]
        fr = np.round(cov * np.array(colour, float) + (1 - cov) * cloth).astype(np.uint8)
        out = np.zeros(K.N_REFINE)
        K.refine_ball(K.MODE_YUV, *frame_args(fr, K.MODE_YUV), packed(by, bu, bv), 0, 0, h, w, prm, np.zeros((1, 3)), 0,
                      np.zeros(64, np.int64), np.zeros((64, 64), np.float32), cx + 0.4, cy - 0.4, 1.0, 0.0, 0.0, r,
                      1, 2, 1.5, np.zeros(0), out)
        errs.append(out[K.R_CX] - cx)
    return np.abs(errs)


@pytest.mark.parametrize("colour", [(222, 234, 238), (28, 30, 196)])
def test_refine_ball_centre_does_not_follow_the_pixel_grid(colour):
    # with the search's ramp a rim pixel reads 1 from ~30 % cover, so the edges snap to the
    # pixel grid and the centre moves with the ball's sub-pixel phase; the refinement's later
    # saturation weighs rim pixels by about what they show. (A clean render moves little
    # either way: 0.03 -> 0.02 px on average; the H.264 review corpus far more, see the kernel.)
    errs = _rendered_ball_refinements(PRM, colour)
    snapped = PRM.copy()
    snapped[K.P_REFINE_HI] = snapped[K.P_FG_HI]
    errs_snapped = _rendered_ball_refinements(snapped, colour)
    assert errs.max() < 0.05
    assert errs.mean() < 0.8 * errs_snapped.mean()
