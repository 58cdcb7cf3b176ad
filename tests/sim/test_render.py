"""Renderer kernels against plain-Python twins, the culling laws, and small end-to-end renders."""

import math

import numpy as np
import pytest

from vision_ref.camera import CameraModel
from vision_ref.sim import _render_kernels as K
from vision_ref.sim.physics import Layout, Strike, simulate
from vision_ref.sim.render import Renderer, RenderSettings, pin_profile

LAMPS = np.array([[-700.0, 0.0, 1100.0, 1.0], [0.0, 0.0, 1100.0, 1.0], [700.0, 0.0, 1100.0, 1.0]])


def rng(s=0):
    return np.random.default_rng(s)


def unit(v):
    return v / np.linalg.norm(v)


# ------------------------------------------------------------------ small helpers
def test_smoothstep_srgb_lut_and_hash_twins():
    for x in np.linspace(-0.5, 1.5, 41):
        t = min(max((x - 0.1) / 0.7, 0.0), 1.0)
        assert K.smoothstep(0.1, 0.8, x) == pytest.approx(t * t * (3 - 2 * t))
    v = np.linspace(0, 1, 101)
    want = np.where(v <= 0.0031308, 12.92 * v, 1.055 * v ** (1 / 2.4) - 0.055) * 255
    np.testing.assert_allclose([K.srgb_encode(x) for x in v], want, atol=1e-9)
    np.testing.assert_allclose(K.srgb_lut(100), want, atol=1e-9)
    hs = np.array([K.hash32(i, 7, 3, 1) for i in range(4000)])
    assert hs.min() >= 0 and hs.max() < 2**32 and len(set(hs)) == 4000
    g = np.array([K.gauss_from_hash(1, 2, i, 5) for i in range(20000)])
    assert abs(g.mean()) < 0.03 and abs(g.std() - 1.0) < 0.03
    n = np.array([K.value_noise2(x, 0.37 * x, 4) for x in np.linspace(0, 50, 2001)])
    assert n.min() >= -1 and n.max() <= 1 and np.abs(np.diff(n)).max() < 0.2  # smooth


def test_lamp_irradiance_twin():
    g = rng(1)
    for _ in range(50):
        p = g.uniform(-800, 800, 3) * np.array([1, 1, 0.05])
        n = unit(g.normal(size=3) + np.array([0, 0, 1.5]))
        out = np.zeros(3)
        amb = K.lamp_irradiance(*p, *n, LAMPS, 0.3, out)
        assert amb == pytest.approx(0.3 * (0.55 + 0.45 * n[2]))
        for i, L in enumerate(LAMPS):
            d = L[:3] - p
            dl = np.linalg.norm(d)
            cos_n = d @ n / dl
            want = 0.0 if cos_n <= 0 or d[2] <= 0 else L[3] * cos_n * (d[2] / dl) * 1e6 / dl**2
            assert out[i] == pytest.approx(want)


def test_table_height_and_cast_table_twin():
    prof = np.array([50.0, 37.0, 120.0, 45.0, -760.0])
    assert K.table_height(-10.0, prof) == 0.0 and K.table_height(100.0, prof) == 45.0
    assert K.table_height(500.0, prof) == -760.0
    assert K.outward_distance(1500.0, 10.0, 1420.0, 710.0) == (80.0, 0)
    g = rng(2)
    origin = np.array([0.0, 0.0, 2400.0])
    for _ in range(40):
        tgt = np.array([g.uniform(-1580, 1580), g.uniform(-870, 870), 0.0])  # the cloth, cushions and rails
        d = unit(tgt - origin)
        t = K.cast_table(*origin, *d, 1420.0, 710.0, prof)
        # twin: fine march of the height field
        ts = np.arange(2000.0, 3400.0, 0.05)
        pts = origin[None, :] + ts[:, None] * d[None, :]
        hx = np.maximum(np.abs(pts[:, 0]) - 1420.0, np.abs(pts[:, 1]) - 710.0)
        h = np.array([K.table_height(x, prof) for x in hx])
        first = ts[np.argmax(pts[:, 2] <= h)]
        assert t == pytest.approx(first, abs=0.6)


# ------------------------------------------------------------------ ray tests
def twin_ray_sphere(o, d, c, rad):
    L = c - o
    tc = L @ d
    d2 = max(L @ L - tc * tc, 0.0)
    if tc <= 0:
        return -1.0
    return tc if d2 >= rad * rad else tc - math.sqrt(rad * rad - d2)


@pytest.mark.parametrize("seed", range(3))
def test_ray_sphere_and_misses_sphere(seed):
    g = rng(seed)
    o = np.array([0.0, 0.0, 2400.0])
    for _ in range(200):
        c = np.array([g.uniform(-300, 300), g.uniform(-300, 300), 30.75])
        d = unit(np.array([g.uniform(-300, 300), g.uniform(-300, 300), 0.0]) - o)
        t, perp = K.ray_sphere(*o, *d, *c, 30.75)
        assert t == pytest.approx(twin_ray_sphere(o, d, c, 30.75))
        assert perp == pytest.approx(np.linalg.norm(np.cross(c - o, d)))
        assert K.ray_misses_sphere(*o, *d, *c, 30.75) == (perp > 30.75)


def twin_occlusion(p, c, rad, L, lamp_r):
    """sphere_light_occlusion without its early exit."""
    v = L - p
    vl = np.linalg.norm(v)
    v = v / vl
    q = c - p
    ql = np.linalg.norm(q)
    if ql <= rad:
        return 1.0
    s = q @ v
    if s <= 0 or s >= vl:
        return 0.0
    gamma = math.acos(min(s / ql, 1.0))
    alpha = math.asin(min(1.0, rad / ql))
    beta = math.atan(lamp_r / vl)
    full = min(1.0, alpha**2 / beta**2)
    return full * K.smoothstep(alpha + beta, abs(alpha - beta), gamma)


@pytest.mark.parametrize("seed", range(3))
def test_shadow_terms_match_twins_and_cannot_shade_is_conservative(seed):
    g = rng(seed)
    shaded = 0
    for _ in range(3000):
        p = np.array([g.uniform(-400, 400), g.uniform(-400, 400), 0.0])
        c = np.array([g.uniform(-400, 400), g.uniform(-400, 400), g.uniform(5, 500)])
        rad = g.uniform(5, 80)
        occ = [K.sphere_light_occlusion(*p, *c, rad, *L[:3], K.LAMP_RADIUS_MM) for L in LAMPS]
        for L, o in zip(LAMPS, occ):
            assert o == pytest.approx(twin_occlusion(p, c, rad, L[:3], K.LAMP_RADIUS_MM), abs=1e-12)
        reach = 3 * rad + 60
        ao = K.sphere_ao(*p, 0.0, 0.0, 1.0, *c, rad, reach)
        q = c - p
        dq = np.linalg.norm(q)
        want_ao = 1.0 if dq <= rad else max(0.0, (rad / dq) ** 2 * q[2] / dq) * (1 - K.smoothstep(0.6 * reach, reach, dq))
        assert ao == pytest.approx(want_ao)
        if K.cannot_shade(*p, *c, rad, reach, LAMPS, K.LAMP_RADIUS_MM):
            assert max(occ) == 0.0 and ao == 0.0
        else:
            shaded += 1
    assert shaded > 100


def test_closest_on_segment_and_capsule_twins():
    g = rng(4)
    o = np.array([0.0, 0.0, 2400.0])
    for _ in range(100):
        a = g.uniform(-200, 200, 3) * [1, 1, 0.3] + [0, 0, 60]
        b = a + g.uniform(-300, 300, 3) * [1, 1, 0.2]
        p = g.uniform(-300, 300, 3)
        cx, cy, cz, s = K.closest_on_segment(*p, *a, *b)
        ss = np.linspace(0, 1, 20001)
        pts = a[None] + ss[:, None] * (b - a)[None]
        k = np.argmin(np.linalg.norm(pts - p, axis=1))
        assert s == pytest.approx(ss[k], abs=2e-4)
        d = unit(np.array([g.uniform(-300, 300), g.uniform(-300, 300), 0.0]) - o)
        t, edge, sq, nx, ny, nz = K.ray_capsule(*o, *d, *a, *b, 8.0, 12.0)
        # twin: the smallest distance from the ray to the axis, against the radius there
        tt = np.linspace(1500, 2600, 4001)
        rp = o[None] + tt[:, None] * d[None]
        dist = np.min(np.linalg.norm(rp[:, None, :] - pts[None, ::100, :], axis=2), axis=1)
        miss = dist.min()
        if miss < 7.0:
            assert t > 0 and edge > 0
        if miss > 12.0 + 2.5:
            assert t < 0
        if t > 0:
            assert abs(np.linalg.norm([nx, ny, nz]) - 1) < 1e-9


def test_ellipsoid_and_pin_geometry_twins():
    o = np.array([10.0, -20.0, 2400.0])
    g = rng(5)
    for _ in range(100):
        c = np.array([g.uniform(-80, 80), g.uniform(-80, 80), 40.0])
        sa, sb, sc, hd = 60.0, 40.0, 20.0, g.uniform(-3, 3)
        d = unit(np.array([g.uniform(-120, 120), g.uniform(-120, 120), 0.0]) - o)
        t, miss, nx, ny, nz = K.ray_ellipsoid(*o, *d, *c, sa, sb, sc, hd)
        rot = np.array([[math.cos(hd), math.sin(hd), 0], [-math.sin(hd), math.cos(hd), 0], [0, 0, 1]])
        lo, ld = rot @ (o - c) / [sa, sb, sc], rot @ d / [sa, sb, sc]
        A, B, C = ld @ ld, lo @ ld, lo @ lo - 1
        disc = B * B - A * C
        if disc > 0:
            assert t == pytest.approx((-B - math.sqrt(disc)) / A)
    prof = pin_profile("plain")
    for tilt in (0.0, 0.4, 1.0, math.pi / 2):
        want = max(0.0, max(70.0 * k / 96 * -math.cos(tilt) + 10.0 * prof[k] * math.sin(tilt) for k in range(97)))
        assert K.pin_lift(prof, 70.0, 10.0, tilt) == pytest.approx(want)
        f = np.array(K.pin_frame(tilt, 0.7)).reshape(3, 3)
        np.testing.assert_allclose(f @ f.T, np.eye(3), atol=1e-12)
    for u in np.linspace(-0.1, 1.1, 25):
        assert K.profile_radius(prof, 10.0, u) == pytest.approx(10.0 * np.interp(u, np.linspace(0, 1, 97), prof))
    # a ray's hit on a standing pin lies on its surface of revolution
    for x in np.linspace(-9.5, 9.5, 20):
        d = unit(np.array([x, 3.0, 0.0]) - np.array([0.0, 0.0, 2400.0]))
        t, u, nx, ny, nz = K.ray_pin(0.0, 0.0, 2400.0, *d, 0.0, 0.0, 0.0, 0.0, 0.0, prof, 70.0, 10.0)
        if t > 0:
            hit = np.array([0.0, 0.0, 2400.0]) + t * d
            assert math.hypot(hit[0], hit[1]) == pytest.approx(K.profile_radius(prof, 10.0, hit[2] / 70.0), abs=0.05)


def test_shade_surface_is_lambert_plus_highlight():
    li = np.zeros(3)
    cloth = np.array([0.05, 0.2, 0.4])
    r0, g0, b0 = K.shade_surface(0, 0, 30, 0, 0, 1, 0, 0, -1, 0.5, 0.5, 0.5, 0.0, 1.0, LAMPS, 0.3, cloth, li)
    amb = K.lamp_irradiance(0, 0, 30, 0, 0, 1, LAMPS, 0.3, li)
    assert r0 == pytest.approx(0.5 * (amb + li.sum()))
    r1, _, _ = K.shade_surface(0, 0, 30, 0, 0, 1, 0, 0, -1, 0.5, 0.5, 0.5, 1.0, 1.0, LAMPS, 0.3, cloth, li)
    assert r1 > r0  # a lamp is reflected straight up into the camera
    body, band = np.array([1.0, 1, 1]), np.array([1.0, 0, 0])
    assert K.pin_albedo(0.95, 0, body, band, band, band, band) == (1.0, 0.0, 0.0)
    assert K.pin_albedo(0.3, 0, body, band, band, band, band) == (1.0, 1.0, 1.0)


# ------------------------------------------------------------------ finishing
def test_finish_kernel_twin_and_static_pass_agree():
    r = Renderer(CameraModel.overhead(96, 72), settings=RenderSettings(noise_sigma=2.0, draw_cue=False))
    lin = r.bg_gained
    out = np.zeros((72, 96, 3), np.uint8)
    off = r._noise_offset(5)
    K.finish_kernel(lin, 0, 0, r._lut, 2.0, r._noise, off, 96, out)
    s = np.interp(np.clip(lin[:, :, ::-1], 0, None), np.linspace(0, 1, len(r._lut)), r._lut, right=r._lut[-1])
    sd = 2.0 * (0.55 + 0.45 * np.sqrt(s / 128.0))
    nz = r._noise[off:off + 4 * 96 * 72].reshape(72, 96, 4).astype(float)
    want = np.clip(np.floor(s + sd * (0.8 * nz[:, :, :1] + 0.6 * nz[:, :, 1:]) + 0.5), 0, 255)
    assert np.abs(out.astype(int) - want).max() <= 1
    out2 = np.zeros_like(out)
    K.finish_static(r._bg_srgb, r._bg_sd, r._noise, off, out2)
    assert np.abs(out.astype(int) - out2.astype(int)).max() <= 1
    # the noise changes from frame to frame, is repeatable, and has the configured size
    a, b = r._noise_offset(5), r._noise_offset(6)
    assert a != b and a == r._noise_offset(5)
    still = np.zeros_like(out)
    K.finish_static(r._bg_srgb, r._bg_sd * 0, r._noise, off, still)
    assert 1.0 < np.std(out.astype(float) - still) < 3.5


# ------------------------------------------------------------------ render_box laws
@pytest.fixture(scope="module")
def small():
    cam = CameraModel.overhead(364, 272)
    r = Renderer(cam, settings=RenderSettings(noise_sigma=0.0, draw_cue=False))
    shot = simulate(Layout.standard(balls={"cue": (-500.0, 100.0), "white1": (-200.0, 0.0)}),
                    Strike(speed=2500.0, angle=-0.3))
    return r, shot


def box(r, sim, y0, x0, h, w, i):
    st = r.settings
    t0 = r.frame_time(i)
    from vision_ref.sim.render import _jitter

    times = t0 + (np.arange(16) + 0.5) * st.exposure_s / 16
    cb, cp, cq = r._pack(sim, sim.sample(times))
    img = np.zeros((h, w, 3))
    K.render_box(y0, x0, h, w, r.rays, r.origin, r.focal, r.bg_lin, r.bg_pt, r.bg_t, r.gain, times, t0, 0.0,
                 st.exposure_s, _jitter(16), cb, r.table.ball_radius, r._ball_alb, cp, r._pin_kind, r._pin_prof,
                 r._pin_height, r._pin_rmax, r._pin_cols, cq, r._prim_alb, r.lamps, r.ambient, r.cloth_lin,
                 3.5 * r.table.ball_radius, float(st.blur_step_px), int(st.min_samples), img)
    return img


def test_render_box_tiles_do_not_change_the_image(small):
    r, shot = small
    i = int((shot.strike_time + 0.15) * r.settings.fps)
    whole = box(r, shot, 60, 40, 150, 280, i)
    # the same region rendered as a box starting 3 px further in: other tile borders, same pixels
    part = box(r, shot, 63, 43, 140, 270, i)
    np.testing.assert_allclose(part, whole[3:143, 3:273], atol=1e-12)
    assert np.abs(whole - r.bg_gained[60:210, 40:320]).max() > 0.05  # something was drawn


def test_empty_box_is_the_background(small):
    r, shot = small
    ws_far = box(r, shot, 0, 0, 24, 24, 0)  # a corner of the floor, far from everything
    np.testing.assert_allclose(ws_far, r.bg_gained[:24, :24], atol=1e-12)


def test_frames_are_deterministic_and_show_the_balls(small):
    r, shot = small
    i = int((shot.strike_time + 0.3) * r.settings.fps)
    a, b = r.render_frame(shot, i), r.render_frame(shot, i)
    assert np.array_equal(a, b)
    ws = shot.sample(np.array([r.frame_mid_time(i)]))
    for k in range(3):
        x, y = r.camera.project(ws.ball_xyz[0, k][None, :])[0]
        bg = r.background()[int(y), int(x)].astype(int)
        assert np.abs(a[int(y), int(x)].astype(int) - bg).sum() > 30  # a ball is there, not cloth


def test_every_scenario_renders():
    from vision_ref.sim.scenarios import list_scenarios

    r = Renderer(CameraModel.overhead(160, 120), settings=RenderSettings(noise_sigma=0.0, fps=30.0))
    for sc in list_scenarios():
        shot = sc.simulate(0)
        n = r.n_frames(shot)
        for i in (0, int(shot.strike_time * 30) + 3, n // 2, n - 1):
            img = r.render_frame(shot, i)
            assert img.shape == (120, 160, 3) and img.dtype == np.uint8, sc.name


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 8, 16, 48])
def test_sub_pixel_samples_are_centred_on_the_pixel(n):
    """Samples whose mean is off the pixel's centre shift the whole image (two samples of
    the rotated grid shifted it by 1/4 px: a ball's centre by 1 mm at 728 px wide)."""
    from vision_ref.sim.render import _jitter

    j = _jitter(n)
    assert j.shape == (n, 2)
    assert np.allclose(j.mean(axis=0), 0.0, atol=1e-12)
    assert np.all(np.abs(j) <= 0.5 + 1e-12)  # inside the pixel
