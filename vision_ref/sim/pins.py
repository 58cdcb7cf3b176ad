"""Pins as rigid bodies: standing, wobbling, toppling, lying, leaning, scripted flights.

A standing pin is a body of revolution on a round base. Struck by a ball (or a pin) at
height ``h`` with horizontal impulse ``J`` it starts to tip about the base rim on the
far side with ``omega0 = J h / I_pivot``; it topples when that rotation carries its
centre of mass past the balance point (``1/2 I omega0^2 > m g dh``), otherwise it
rocks and stays standing (a touch: RULES T1). A toppling pin follows
``I th'' = m g l sin(th - beta)`` (integrated once per hit, see
``_physics_kernels.topple_profile``) and lands lying in the direction of the push;
the fall lasts ``fall_time_min`` .. ``fall_time_max`` (harder hits put the surplus
momentum into sliding). A lying pin is a free 2-D rigid body (a capsule) that slides
and rolls unevenly, so it stops quickly; it can knock standing pins (L5 chains) and
be pushed by balls (F5 through a lying pin). A toppling pin that meets a ball at rest
or a pin that does not fall stops on it: leaning (T4, T6).

Each pin's motion is a list of segments (analytic between events) for sampling.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np

from vision_ref.messages import PinState
from vision_ref.rules.table import BALL_IDS, PIN_IDS, TableSpec
from vision_ref.sim import _physics_kernels as K

N_BALLS = len(BALL_IDS)
N_PINS = len(PIN_IDS)
N_BODIES = N_BALLS + N_PINS
PROFILE_SAMPLES = 96
MOVING_MODES = ("slide", "topple", "lying", "flight")


@dataclass
class PinGeometry:
    name: str
    height: float
    r_top: float
    r_base: float
    mass: float
    hcm: float  # centre of mass height
    i_pivot: float  # moment of inertia about the base rim (kg mm^2)
    i_z: float  # lying: about the centre, vertical axis (kg mm^2)
    beta: float  # angle of the CM behind the rim when upright
    mgl: float  # m g l (l = rim to CM distance)
    omega_tip: float  # least tip rate that topples it
    omega_lo: float = 0.0  # tip rate giving the slowest allowed fall
    omega_hi: float = 0.0  # tip rate giving the fastest allowed fall


@functools.lru_cache(maxsize=64)
def pin_geometry(name: str, table: TableSpec, params) -> PinGeometry:
    """Geometry and fall limits of one pin (cached: the fall-time bisection costs ~0.15 s).

    Callers must not mutate the returned object (it is shared)."""
    H = table.pin_height_of(name)
    m = params.king_mass if name == "king" else params.pin_mass
    hcm = params.pin_cm_fraction * H
    k = params.pin_gyration_fraction * H
    rb = table.pin_base_radius(name)
    l = math.hypot(hcm, rb)
    i_pivot = m * (k * k + l * l)
    beta = math.atan2(rb, hcm)
    mgl = m * params.gravity * l
    dh = l - hcm
    omega_tip = math.sqrt(2.0 * m * params.gravity * dh / i_pivot)
    g = PinGeometry(name, H, table.pin_top_radius(name), rb, m, hcm, i_pivot, m * H * H / 12.0, beta, mgl, omega_tip)
    g.omega_lo = _omega_for_fall_time(g, params.fall_time_max)
    g.omega_hi = _omega_for_fall_time(g, params.fall_time_min)
    return g


def _fall_time(g: PinGeometry, omega: float) -> float:
    _, _, T, _ = K.topple_profile(omega, 0.0, g.i_pivot, g.mgl, g.beta, 8, 5.0)
    return T


def _omega_for_fall_time(g: PinGeometry, T: float) -> float:
    lo = g.omega_tip * 1.0000001
    hi = g.omega_tip * 2.0
    while _fall_time(g, hi) > T:
        hi *= 2.0
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        if _fall_time(g, mid) > T:
            lo = mid
        else:
            hi = mid
    return hi


@dataclass
class Segment:
    t0: float
    mode: str  # stand | slide | topple | lying | lean | flight | rail
    p: np.ndarray  # base (stand/slide/topple/lean/rail_standing) or centre (lying/rail_down)
    v: np.ndarray = field(default_factory=lambda: np.zeros(2))
    acc: np.ndarray = field(default_factory=lambda: np.zeros(2))
    phi: float = 0.0
    om: float = 0.0
    alz: float = 0.0
    t_end: float = math.inf  # absolute time the motion of this segment ends
    prof: np.ndarray | None = None
    ds: float = 1.0
    s0: float = 0.0
    tilt: float = 0.0
    wobble_amp: float = 0.0
    on: str | None = None
    z: float = 0.0
    flight_to: np.ndarray | None = None
    flight_z: float = 0.0
    flight_end_mode: str = ""

    def pos(self, t: float) -> np.ndarray:
        tau = min(max(t - self.t0, 0.0), self.t_end - self.t0) if math.isfinite(self.t_end) else max(t - self.t0, 0.0)
        if self.mode == "flight":
            f = min(tau / (self.t_end - self.t0), 1.0)
            return self.p + (self.flight_to - self.p) * f
        return self.p + self.v * tau + 0.5 * self.acc * tau * tau

    def vel(self, t: float) -> np.ndarray:
        if self.mode not in ("slide", "topple", "lying"):
            return np.zeros(2)
        tau = min(max(t - self.t0, 0.0), self.t_end - self.t0)
        return self.v + self.acc * tau

    def angle(self, t: float) -> float:
        tau = min(max(t - self.t0, 0.0), self.t_end - self.t0) if math.isfinite(self.t_end) else 0.0
        return self.phi + self.om * tau + 0.5 * self.alz * tau * tau

    def omega(self, t: float) -> float:
        if self.mode != "lying" or not math.isfinite(self.t_end):
            return 0.0
        tau = min(max(t - self.t0, 0.0), self.t_end - self.t0)
        return self.om + self.alz * tau

    def theta(self, t: float) -> float:
        if self.mode == "topple":
            return float(K.profile_value(self.prof, self.s0, self.ds, max(t - self.t0, 0.0)))
        if self.mode == "lying":
            return 0.5 * math.pi
        if self.mode == "lean":
            return self.tilt
        return 0.0

    def theta_rate(self, t: float) -> float:
        if self.mode != "topple":
            return 0.0
        h = 1e-5
        s = max(t - self.t0, 0.0)
        a = K.profile_value(self.prof, self.s0, self.ds, max(s - h, 0.0))
        b = K.profile_value(self.prof, self.s0, self.ds, s + h)
        return (b - a) / (s + h - max(s - h, 0.0))


class Pin:
    def __init__(self, index: int, geom: PinGeometry) -> None:
        self.index = index
        self.name = geom.name
        self.g = geom
        self.segments: list[Segment] = []
        self.moved = False
        self.knocked = False

    @property
    def seg(self) -> Segment:
        return self.segments[-1]

    def push(self, seg: Segment) -> None:
        if self.segments and abs(self.segments[-1].t0 - seg.t0) < 1e-15 and self.segments[-1].mode != "stand":
            self.segments.pop()
        elif self.segments and abs(self.segments[-1].t0 - seg.t0) < 1e-15:
            self.segments.pop()
        self.segments.append(seg)


class PinSystem:
    """All five pins: contact search data, event resolution and sampling."""

    def __init__(self, table: TableSpec, params, layout, ball_radius: float) -> None:
        self.table = table
        self.params = params
        self.R = ball_radius
        self.ball_mass = table.ball_mass_kg
        self.t = 0.0
        self.end_time = 0.0
        self.pins: list[Pin] = []
        for k, name in enumerate(PIN_IDS):
            pin = Pin(k, pin_geometry(name, table, params))
            place = layout.pins.get(name)
            at = np.array(table.pin_spot(name) if place is None else place.at, dtype=np.float64)
            state = "standing" if place is None else place.state
            if state == "standing":
                pin.push(Segment(0.0, "stand", at))
            elif state == "down":
                pin.push(Segment(0.0, "lying", at, phi=float(place.direction)))
            elif state == "leaning":
                pin.push(Segment(0.0, "lean", at, phi=float(place.direction), tilt=float(getattr(place, "tilt", 0.5)), on=place.on))
            elif state in ("rail_standing", "rail_down"):
                pin.push(Segment(0.0, "rail", at, phi=float(place.direction), flight_end_mode=state,
                                 z=table.rail_height))
            else:
                raise ValueError(f"pin {name}: unknown layout state {state!r}")
            self.pins.append(pin)
        self.ignore = np.zeros((N_BODIES, N_BODIES), dtype=np.bool_)
        self.desc = np.zeros((N_BODIES, K.D_COLS))
        self.prof = np.zeros((N_BODIES, PROFILE_SAMPLES))
        self.hx = table.half_length
        self.hy = table.half_width
        self.cushion_touch = np.zeros(N_PINS, dtype=np.bool_)

    # ---------------------------------------------------------------- state
    def any_moving(self) -> bool:
        return any(p.seg.mode in MOVING_MODES for p in self.pins)

    def _fill_desc(self, sim) -> None:
        d = self.desc
        d[:] = 0.0
        acc = np.zeros(2)
        alpha = np.zeros(3)
        for i in range(N_BALLS):
            s = int(sim.state[i])
            row = d[i]
            if s in (K.GONE, K.AIRBORNE):
                row[K.D_KIND] = K.KIND_ABSENT
                continue
            row[K.D_KIND] = K.KIND_CIRCLE
            K.ball_accel(sim.v[i], sim.w[i], s, sim.p, acc, alpha)
            row[K.D_MOVING] = 1.0 if s in (K.SLIDING, K.ROLLING) else 0.0
            row[K.D_PX:K.D_PX + 2] = sim.r[i]
            row[K.D_VX:K.D_VX + 2] = sim.v[i]
            row[K.D_AX:K.D_AX + 2] = acc
            row[K.D_RAD] = self.R
            row[K.D_HORIZON] = math.inf
        for k, pin in enumerate(self.pins):
            row = d[N_BALLS + k]
            seg = pin.seg
            row[K.D_IS_PIN] = 1.0
            row[K.D_RAD] = pin.g.r_top
            row[K.D_LEN] = pin.g.height
            row[K.D_DS] = 1.0
            row[K.D_HORIZON] = seg.t_end - self.t if math.isfinite(seg.t_end) else math.inf
            mode = seg.mode
            if mode in ("flight", "rail"):
                row[K.D_KIND] = K.KIND_ABSENT
                continue
            row[K.D_PX:K.D_PX + 2] = seg.pos(self.t)
            if mode in ("stand", "slide"):
                row[K.D_KIND] = K.KIND_CIRCLE
                if mode == "slide":
                    row[K.D_MOVING] = 1.0
                    row[K.D_VX:K.D_VX + 2] = seg.vel(self.t)
                    row[K.D_AX:K.D_AX + 2] = seg.acc
            elif mode in ("topple", "lean"):
                row[K.D_KIND] = K.KIND_TOPPLE
                row[K.D_PHI] = seg.phi
                if mode == "topple":
                    row[K.D_MOVING] = 1.0
                    row[K.D_VX:K.D_VX + 2] = seg.vel(self.t)
                    row[K.D_AX:K.D_AX + 2] = seg.acc if seg.v.any() else 0.0
                    self.prof[N_BALLS + k] = seg.prof
                    row[K.D_DS] = seg.ds
                    row[K.D_S0] = seg.s0 + (self.t - seg.t0)
                else:
                    self.prof[N_BALLS + k] = seg.tilt
            elif mode == "lying":
                row[K.D_KIND] = K.KIND_LYING
                row[K.D_PHI] = seg.angle(self.t)
                if math.isfinite(seg.t_end) and seg.t_end > self.t:
                    row[K.D_MOVING] = 1.0
                    row[K.D_VX:K.D_VX + 2] = seg.vel(self.t)
                    row[K.D_AX:K.D_AX + 2] = seg.acc
                    row[K.D_OM] = seg.omega(self.t)
                    row[K.D_ALZ] = seg.alz

    def next_event(self, sim, tmax: float):
        """Earliest pin event within tmax of now: (dt, event) or (inf, None)."""
        best = tmax
        ev = None
        for k, pin in enumerate(self.pins):
            seg = pin.seg
            if seg.mode in MOVING_MODES and math.isfinite(seg.t_end):
                dt = seg.t_end - self.t
                if dt <= best:
                    best = max(dt, 0.0)
                    ev = ("transition", k)
        self._fill_desc(sim)
        ij = np.zeros(2, dtype=np.int64)
        tc = K.next_body_contact(self.desc, self.prof, self.R, best, self.ignore, ij)
        if tc < best or (ev is None and tc <= best and math.isfinite(tc)):
            best = tc
            ev = ("contact", int(ij[0]), int(ij[1]))
        for k, pin in enumerate(self.pins):
            row = self.desc[N_BALLS + k]
            if row[K.D_MOVING] == 0.0 or row[K.D_KIND] < 0 or self.cushion_touch[k]:
                continue
            h = min(best, row[K.D_HORIZON])
            tcu = K.pin_cushion_time(row, self.prof[N_BALLS + k], self.hx, self.hy, h, 1e-3)
            if tcu < best:
                best = tcu
                ev = ("cushion", k)
        if ev is None:
            return math.inf, None
        return best, ev

    def advance(self, dt: float) -> None:
        self.t += dt

    # --------------------------------------------------------------- events
    def resolve(self, sim, ev, t: float) -> None:
        self.t = t
        if ev[0] == "transition":
            self._transition(self.pins[ev[1]], t)
        elif ev[0] == "contact":
            self._contact(sim, ev[1], ev[2], t)
        elif ev[0] == "cushion":
            self._cushion(self.pins[ev[1]], t)

    def _transition(self, pin: Pin, t: float) -> None:
        seg = pin.seg
        if seg.mode == "slide":
            pin.push(Segment(t, "stand", seg.pos(t), wobble_amp=seg.wobble_amp, phi=seg.phi))
            pin.segments[-1].s0 = seg.s0 + (t - seg.t0)  # wobble clock
        elif seg.mode == "topple":
            theta = seg.theta(t)
            if theta >= 0.5 * math.pi - 1e-9:
                self._land(pin, seg, t)
            else:
                # the base stopped sliding: the fall goes on
                new = Segment(t, "topple", seg.pos(t), phi=seg.phi, prof=seg.prof, ds=seg.ds,
                              s0=seg.s0 + (t - seg.t0))
                new.t_end = t + (seg.ds * (PROFILE_SAMPLES - 1) - new.s0)
                pin.push(new)
        elif seg.mode == "lying":
            pin.push(Segment(t, "lying", seg.pos(t), phi=seg.angle(t)))
        elif seg.mode == "flight":
            pin.push(Segment(t, "rail", seg.flight_to.copy(), phi=seg.phi, z=self.table.rail_height,
                             flight_end_mode=seg.flight_end_mode))

    def _land(self, pin: Pin, seg: Segment, t: float) -> None:
        g = pin.g
        d = np.array([math.cos(seg.phi), math.sin(seg.phi)])
        base = seg.pos(t)
        centre = base + 0.5 * g.height * d
        rate = seg.theta_rate(t)
        v = seg.vel(t) + d * (0.25 * rate * g.hcm)
        self._start_lying(pin, t, centre, v, 0.0, seg.phi)

    def _start_lying(self, pin: Pin, t: float, centre, v, om: float, phi: float) -> None:
        mu_g = self.params.mu_pin_lying * self.params.gravity
        sp = float(np.hypot(*v))
        T = max(sp / mu_g, abs(om) * 0.25 * pin.g.height / mu_g)
        if T <= 1e-9:
            pin.push(Segment(t, "lying", np.array(centre, dtype=float), phi=phi))
            return
        seg = Segment(t, "lying", np.array(centre, dtype=float), v=np.array(v, dtype=float),
                      acc=-np.array(v, dtype=float) / T, phi=phi, om=om, alz=-om / T, t_end=t + T)
        pin.push(seg)

    # effective response of each body at a contact point along the normal
    def _point_velocity(self, sim, b: int, c: np.ndarray) -> np.ndarray:
        if b < N_BALLS:
            return sim.v[b].copy()
        pin = self.pins[b - N_BALLS]
        seg = pin.seg
        t = self.t
        if seg.mode == "slide":
            return seg.vel(t)
        if seg.mode == "topple":
            d = np.array([math.cos(seg.phi), math.sin(seg.phi)])
            s = float(np.dot(c - seg.pos(t), d))
            th = seg.theta(t)
            arm = s / max(math.sin(th), 1e-3)
            return seg.vel(t) + d * (arm * seg.theta_rate(t) * math.cos(th))
        if seg.mode == "lying":
            om = seg.omega(t)
            rc = c - seg.pos(t)
            return seg.vel(t) + om * np.array([-rc[1], rc[0]])
        return np.zeros(2)

    def _contact_height(self, b: int, c: np.ndarray) -> float:
        """Height above the cloth at which body b touches at c."""
        if b < N_BALLS:
            return self.R
        pin = self.pins[b - N_BALLS]
        seg = pin.seg
        if seg.mode in ("lying",):
            return pin.g.r_top
        if seg.mode in ("topple", "lean"):
            d = np.array([math.cos(seg.phi), math.sin(seg.phi)])
            s = float(np.dot(c - seg.pos(self.t), d))
            th = seg.theta(self.t)
            return max(s / max(math.tan(th), 1e-3), pin.g.r_top)
        return 0.5 * pin.g.height

    def _inv_mass(self, b: int, c: np.ndarray, n: np.ndarray, h_other: float) -> float:
        if b < N_BALLS:
            return 1.0 / self.ball_mass
        pin = self.pins[b - N_BALLS]
        g = pin.g
        seg = pin.seg
        if seg.mode in ("stand", "slide", "lean"):
            h = min(max(h_other, 3.0), 0.9 * g.height)
            return h * h / g.i_pivot
        if seg.mode == "topple":
            d = np.array([math.cos(seg.phi), math.sin(seg.phi)])
            s = float(np.dot(c - seg.pos(self.t), d))
            th = seg.theta(self.t)
            arm = s / max(math.sin(th), 1e-3)
            # rotation about the rim; only the part of the normal along the fall turns it
            along = abs(float(np.dot(n, d)))
            return (arm * math.cos(th) * along) ** 2 / g.i_pivot + 0.2 / g.mass
        if seg.mode == "lying":
            rc = c - seg.pos(self.t)
            cr = rc[0] * n[1] - rc[1] * n[0]
            return 1.0 / g.mass + cr * cr / g.i_z
        return 0.0

    def _contact(self, sim, i: int, j: int, t: float) -> None:
        out = np.empty(4)
        K.closest_points(self.desc[i], self.prof[i], self.desc[j], self.prof[j], 0.0, out)
        pi_, pj = out[:2], out[2:]
        n = pj - pi_
        dn = float(np.hypot(*n))
        if dn < 1e-9:
            # centres coincide (round-off): push along the relative velocity
            n = self._point_velocity(sim, i, pi_) - self._point_velocity(sim, j, pj)
            dn = float(np.hypot(*n)) or 1.0
        n = n / dn
        c = 0.5 * (pi_ + pj)
        self.ignore[i, j] = True
        vi = self._point_velocity(sim, i, c)
        vj = self._point_velocity(sim, j, c)
        vrel = float(np.dot(vi - vj, n))  # > 0: closing
        hi = self._contact_height(i, c)
        hj = self._contact_height(j, c)
        # leaning: a falling pin meeting a ball at rest, or a pin that will not fall
        for a, b in ((i, j), (j, i)):
            if a >= N_BALLS and self.pins[a - N_BALLS].seg.mode == "topple":
                other_still = (b < N_BALLS and sim.state[b] in (K.STILL, K.SPINNING)
                               and float(np.hypot(*sim.v[b])) < 1e-6)
                if other_still:
                    self._lean(self.pins[a - N_BALLS], t, BALL_IDS[b])
                    return
        if vrel <= 0.0:
            return
        ki = self._inv_mass(i, c, n, hj)
        kj = self._inv_mass(j, c, n, hi)
        if i < N_BALLS or j < N_BALLS:
            e = self.params.e_ball_pin
        else:
            e = self.params.e_pin_pin
        J = (1.0 + e) * vrel / (ki + kj)
        # who struck whom: the body moving faster into the contact is the hitter
        speed_i = float(np.dot(vi, n))
        speed_j = -float(np.dot(vj, n))
        self._apply(sim, i, c, -n, J, hj, t, hitter=j if speed_j > speed_i else None)
        self._apply(sim, j, c, n, J, hi, t, hitter=i if speed_i >= speed_j else None)

    def _hit_event(self, sim, pin: Pin, hitter: int, t: float) -> None:
        by = BALL_IDS[hitter] if hitter < N_BALLS else PIN_IDS[hitter - N_BALLS]
        sim.events.append(_event(t, "pin_hit", {"pin": pin.name, "by": by}))

    def _apply(self, sim, b: int, c: np.ndarray, d: np.ndarray, J: float, h_other: float, t: float, hitter):
        """Give body b the impulse J along unit d at point c (hitter set: record a pin_hit)."""
        if b < N_BALLS:
            sim.v[b] += d * (J / self.ball_mass)
            sim.state[b] = K.classify(sim.v[b], sim.w[b], sim.p)
            sim._push_ball(b, t)
            return
        pin = self.pins[b - N_BALLS]
        g = pin.g
        seg = pin.seg
        if hitter is not None:
            self._hit_event(sim, pin, hitter, t)
        pin.moved = True
        if seg.mode in ("stand", "slide", "lean"):
            script = sim.script.pin_to_rail.get(pin.name)
            h = min(max(h_other, 3.0), 0.9 * g.height)
            omega0 = J * h / g.i_pivot
            base = seg.pos(t)
            if script is not None:
                self._fly_to_rail(pin, t, base, d, script)
                return
            if omega0 > g.omega_tip * 1.0001 or seg.mode == "lean":
                self._start_topple(pin, t, base, math.atan2(d[1], d[0]), max(omega0, g.omega_tip * 1.001), J, h,
                                   theta0=seg.tilt if seg.mode == "lean" else 0.0, v_prev=seg.vel(t))
            else:
                amp = 0.9 * g.beta * (omega0 / g.omega_tip) ** 2
                v = seg.vel(t) + d * (0.15 * J / g.mass)
                mu_g = self.params.mu_pin_base * self.params.gravity
                T = float(np.hypot(*v)) / mu_g
                new = Segment(t, "slide", base, v=v, acc=-v / max(T, 1e-9), t_end=t + T,
                              wobble_amp=max(amp, seg.wobble_amp * 0.5), phi=math.atan2(d[1], d[0]))
                if T < 1e-6:
                    new = Segment(t, "stand", base, wobble_amp=new.wobble_amp, phi=new.phi)
                pin.push(new)
        elif seg.mode == "topple":
            fall = np.array([math.cos(seg.phi), math.sin(seg.phi)])
            s = float(np.dot(c - seg.pos(t), fall))
            th = seg.theta(t)
            arm = s / max(math.sin(th), 1e-3)
            rate = seg.theta_rate(t) + J * float(np.dot(d, fall)) * arm * math.cos(th) / g.i_pivot
            base_v = seg.vel(t) + d * (0.2 * J / g.mass)
            self._restart_topple(pin, t, seg.pos(t), seg.phi, th, rate, base_v)
        elif seg.mode == "lying":
            centre = seg.pos(t)
            rc = c - centre
            v = seg.vel(t) + d * (J / g.mass)
            om = seg.omega(t) + (rc[0] * d[1] - rc[1] * d[0]) * J / g.i_z
            self._start_lying(pin, t, centre, v, om, seg.angle(t))

    def _start_topple(self, pin, t, base, phi, omega0, J, h, theta0=0.0, v_prev=None):
        g = pin.g
        om_eff = min(max(omega0, g.omega_lo), g.omega_hi) if theta0 == 0.0 else max(omega0, 0.0)
        surplus = max(J - g.i_pivot * om_eff / h, 0.0) if J > 0 else 0.0
        d = np.array([math.cos(phi), math.sin(phi)])
        v = (np.zeros(2) if v_prev is None else np.asarray(v_prev, dtype=float)) + d * (0.5 * surplus / g.mass)
        self._restart_topple(pin, t, base, phi, theta0, om_eff, v)

    def _restart_topple(self, pin, t, base, phi, theta, rate, base_v):
        g = pin.g
        rate = max(rate, 0.0)
        if theta <= g.beta:
            rate = max(rate, g.omega_lo)
        prof, ds, T, _ = K.topple_profile(rate, theta, g.i_pivot, g.mgl, g.beta, PROFILE_SAMPLES, 3.0)
        if not math.isfinite(T):
            prof, ds, T, _ = K.topple_profile(g.omega_lo, 0.0, g.i_pivot, g.mgl, g.beta, PROFILE_SAMPLES, 3.0)
        mu_g = self.params.mu_pin_lying * self.params.gravity
        sp = float(np.hypot(*base_v))
        t_stop = sp / mu_g
        seg = Segment(t, "topple", np.array(base, dtype=float), phi=phi, prof=prof, ds=ds, s0=0.0)
        if t_stop > 1e-9:
            seg.v = np.array(base_v, dtype=float)
            seg.acc = -seg.v / t_stop
        seg.t_end = t + min(T, t_stop) if t_stop > 1e-9 else t + T
        pin.knocked = True
        pin.push(seg)

    def _lean(self, pin: Pin, t: float, on: str) -> None:
        seg = pin.seg
        pin.push(Segment(t, "lean", seg.pos(t), phi=seg.phi, tilt=seg.theta(t), on=on))

    def _fly_to_rail(self, pin: Pin, t: float, base: np.ndarray, d: np.ndarray, end_mode: str) -> None:
        """Scripted (T2/T3): the struck pin jumps the cushion and lands on the rail."""
        tb = self.table
        ts = []
        for axis, half in ((0, tb.half_length), (1, tb.half_width)):
            if abs(d[axis]) > 1e-9:
                ts.append(((math.copysign(half, d[axis]) - base[axis]) / d[axis], axis))
        s, axis = min(ts)
        hit = base + d * s
        out = np.zeros(2)
        out[axis] = math.copysign(1.0, d[axis])
        land = hit + out * (tb.cushion_width + 0.5 * tb.rail_width)
        other = 1 - axis
        lim = (tb.half_length, tb.half_width)[other] - 60.0
        land[other] = float(np.clip(land[other], -lim, lim))
        flight = Segment(t, "flight", np.array(base, dtype=float), phi=math.atan2(d[1], d[0]),
                         t_end=t + 0.45, flight_to=land, flight_z=tb.rail_height, flight_end_mode=end_mode)
        pin.knocked = True
        pin.push(flight)

    def _cushion(self, pin: Pin, t: float) -> None:
        """A moving pin's end reaches a cushion: it bounces back off the rubber."""
        seg = pin.seg
        g = pin.g
        self.cushion_touch[pin.index] = True
        row = self.desc[N_BALLS + pin.index]
        s = np.empty(4)
        K.body_shape(row, self.prof[N_BALLS + pin.index], 0.0, s)
        best = None
        for k in range(2):
            x, y = s[2 * k], s[2 * k + 1]
            for gap, n in ((self.hx - x, (1.0, 0.0)), (x + self.hx, (-1.0, 0.0)),
                           (self.hy - y, (0.0, 1.0)), (y + self.hy, (0.0, -1.0))):
                if best is None or gap < best[0]:
                    best = (gap, np.array([x, y]), np.array(n))
        _, c, n = best
        if seg.mode == "topple":
            v = seg.vel(t)
            vn = float(np.dot(v, n))
            if vn > 0:
                v = v - (1 + self.params.e_pin_cushion) * vn * n
            self._restart_topple(pin, t, seg.pos(t), seg.phi, seg.theta(t), seg.theta_rate(t) * 0.3, v)
            return
        if seg.mode == "slide":
            v = seg.vel(t)
            v = v - (1 + self.params.e_pin_cushion) * max(float(np.dot(v, n)), 0.0) * n
            pin.push(Segment(t, "stand", seg.pos(t), wobble_amp=seg.wobble_amp, phi=seg.phi))
            return
        vc = self._point_velocity(None, N_BALLS + pin.index, c) if seg.mode == "lying" else seg.vel(t)
        vn = float(np.dot(vc, n))
        if vn <= 0:
            return
        k = self._inv_mass(N_BALLS + pin.index, c, n, 0.0)
        J = (1 + self.params.e_pin_cushion) * vn / k
        centre = seg.pos(t)
        rc = c - centre
        v = seg.vel(t) - n * (J / g.mass)
        om = seg.omega(t) - (rc[0] * n[1] - rc[1] * n[0]) * J / g.i_z
        self._start_lying(pin, t, centre, v, om, seg.angle(t))

    def after_event(self, sim, t: float) -> None:
        """Release contact pairs that have separated; leaning pins lose a support that moved."""
        self._fill_desc(sim)
        out = np.empty(4)
        for i in range(N_BODIES):
            for j in range(i + 1, N_BODIES):
                if self.ignore[i, j]:
                    if self.desc[i, K.D_KIND] < 0 or self.desc[j, K.D_KIND] < 0:
                        self.ignore[i, j] = False
                        continue
                    dist = K.contact_distance(self.desc[i], self.desc[j], self.R)
                    gap = K.body_gap(self.desc[i], self.prof[i], self.desc[j], self.prof[j], dist, 0.0, out)
                    if gap > 0.5:
                        self.ignore[i, j] = False
        for k, pin in enumerate(self.pins):
            if self.cushion_touch[k]:
                row = self.desc[N_BALLS + k]
                if row[K.D_KIND] < 0 or K.pin_cushion_gap(row, self.prof[N_BALLS + k], 0.0, self.hx, self.hy) > 0.5:
                    self.cushion_touch[k] = False
            seg = pin.seg
            if seg.mode == "lean" and seg.on in BALL_IDS:
                b = BALL_IDS.index(seg.on)
                if sim.state[b] not in (K.STILL, K.SPINNING):
                    # the support rolled away: the pin falls the rest of the way
                    self._restart_topple(pin, t, seg.pos(t), seg.phi, seg.tilt, 0.0, np.zeros(2))

    def finish(self, t: float) -> None:
        end = t
        for pin in self.pins:
            seg = pin.seg
            if seg.mode == "stand" and seg.wobble_amp > 0:
                end = max(end, seg.t0 - seg.s0 + self.params.wobble_time)
            if math.isfinite(seg.t_end) and seg.mode in MOVING_MODES:
                end = max(end, seg.t_end)
        self.end_time = end

    # ------------------------------------------------------------- sampling
    def sample(self, ts: np.ndarray) -> dict:
        f = len(ts)
        xy = np.zeros((f, N_PINS, 2))
        tilt = np.zeros((f, N_PINS))
        direc = np.zeros((f, N_PINS))
        z = np.zeros((f, N_PINS))
        state = np.full((f, N_PINS), int(PinState.STANDING), dtype=np.int64)
        vis = np.ones((f, N_PINS), dtype=bool)
        for k, pin in enumerate(self.pins):
            starts = np.array([s.t0 for s in pin.segments])
            idx = np.clip(np.searchsorted(starts, ts, side="right") - 1, 0, len(starts) - 1)
            for si in np.unique(idx):
                seg = pin.segments[si]
                m = idx == si
                tt = ts[m]
                x, ti, di, zi, st = _sample_segment(seg, tt, pin, self.params)
                xy[m, k] = x
                tilt[m, k] = ti
                direc[m, k] = di
                z[m, k] = zi
                state[m, k] = st
        return {"xy": xy, "tilt": tilt, "dir": direc, "z": z, "state": state, "visible": vis}

    def record_states(self, t: float) -> dict:
        """Pins in the shot-record form at sim time t."""
        out = {}
        for pin in self.pins:
            starts = [s.t0 for s in pin.segments]
            k = max(int(np.searchsorted(starts, t, side="right")) - 1, 0)
            seg = pin.segments[k]
            at = seg.pos(t)
            entry: dict = {}
            if seg.mode in ("stand", "slide"):
                entry = {"at": at, "state": "standing"}
            elif seg.mode == "lying":
                entry = {"at": at, "state": "down"}
            elif seg.mode == "topple":
                th = seg.theta(t)
                d = np.array([math.cos(seg.phi), math.sin(seg.phi)])
                entry = {"at": at + d * (0.5 * pin.g.height * math.sin(th)), "state": "down" if th > 1.0 else "standing"}
            elif seg.mode == "lean":
                entry = {"at": at, "state": "leaning", "on": seg.on}
            elif seg.mode == "flight":
                entry = {"at": seg.flight_to, "state": seg.flight_end_mode}
            elif seg.mode == "rail":
                entry = {"at": at, "state": seg.flight_end_mode}
            entry["at"] = [round(float(entry["at"][0]), 2), round(float(entry["at"][1]), 2)]
            out[pin.name] = entry
        return out


def _event(t, type_, data):
    from vision_ref.sim.physics import SimEvent

    return SimEvent(t, type_, data)


def _sample_segment(seg: Segment, tt: np.ndarray, pin: Pin, params):
    """Vectorised pin pose over one segment: base xy, tilt, direction, base z, state."""
    n = len(tt)
    g = pin.g
    H = g.height
    tau = np.maximum(tt - seg.t0, 0.0)
    if math.isfinite(seg.t_end):
        tau = np.minimum(tau, seg.t_end - seg.t0)
    moving = tt < seg.t_end if math.isfinite(seg.t_end) else np.zeros(n, dtype=bool)
    if seg.mode == "flight":
        T = seg.t_end - seg.t0
        f = np.clip(tau / T, 0.0, 1.0)
        xy = seg.p[None, :] + (seg.flight_to - seg.p)[None, :] * f[:, None]
        z = seg.flight_z * f + 4.0 * 160.0 * f * (1.0 - f)
        if seg.flight_end_mode == "rail_down":
            tilt = 0.5 * math.pi * np.minimum(1.0, 1.6 * f)
            d = np.array([math.cos(seg.phi), math.sin(seg.phi)])
            # the landing point is the lying pin's centre: the base trails behind it
            xy = xy - d[None, :] * (0.5 * H * np.sin(tilt))[:, None] * f[:, None]
        else:
            tilt = 1.3 * np.sin(np.pi * f)
        st = np.where(f < 1.0, int(PinState.MOVING),
                      int(PinState.RAIL_DOWN if seg.flight_end_mode == "rail_down" else PinState.RAIL_STANDING))
        return xy, tilt, np.full(n, seg.phi), z, st
    p = seg.p[None, :] + seg.v[None, :] * tau[:, None] + 0.5 * seg.acc[None, :] * (tau * tau)[:, None]
    phi = seg.phi + seg.om * tau + 0.5 * seg.alz * tau * tau
    z = np.zeros(n)
    if seg.mode in ("stand", "slide"):
        clock = seg.s0 + np.maximum(tt - seg.t0, 0.0)
        wob = np.zeros(n)
        if seg.wobble_amp > 0:
            wob = seg.wobble_amp * np.exp(-clock / 0.12) * np.abs(np.sin(np.pi * clock / 0.09))
            wob = np.where(clock < params.wobble_time, wob, 0.0)
        st = np.where((clock < params.wobble_time) & (seg.wobble_amp > 0) | moving, int(PinState.MOVING),
                      int(PinState.STANDING))
        return p, wob, np.full(n, seg.phi), z, st
    if seg.mode == "topple":
        th = np.array([K.profile_value(seg.prof, seg.s0, seg.ds, s) for s in np.maximum(tt - seg.t0, 0.0)])
        return p, th, np.full(n, seg.phi), z, np.full(n, int(PinState.MOVING))
    if seg.mode == "lying":
        d = np.stack([np.cos(phi), np.sin(phi)], axis=1)
        base = p - 0.5 * H * d
        st = np.where(moving, int(PinState.MOVING), int(PinState.DOWN))
        return base, np.full(n, 0.5 * math.pi), phi, z, st
    if seg.mode == "lean":
        return p, np.full(n, seg.tilt), np.full(n, seg.phi), z, np.full(n, int(PinState.LEANING))
    if seg.mode == "rail":
        st = int(PinState.RAIL_DOWN if seg.flight_end_mode == "rail_down" else PinState.RAIL_STANDING)
        tilt = 0.5 * math.pi if seg.flight_end_mode == "rail_down" else 0.0
        base = p
        if seg.flight_end_mode == "rail_down":
            d = np.array([math.cos(seg.phi), math.sin(seg.phi)])
            base = p - 0.5 * H * d[None, :]
        return base, np.full(n, tilt), np.full(n, seg.phi), np.full(n, seg.z), np.full(n, st)
    raise AssertionError(seg.mode)
