"""Event-based physics of a five-pin carom shot: three balls and five pins.

Between events every object moves along an analytic trajectory (balls: quadratic
centre paths while sliding or rolling, linear spin decay; pins: toppling profiles and
decelerating lying pins), so the simulator jumps from event to event: it finds the
earliest of all state transitions, collisions and cushion contacts, advances every
object exactly to that time, resolves the event and repeats until everything rests.
The result is a continuous-time :class:`SimulatedShot` (the ``ShotSimulation``
protocol of :mod:`vision_ref.sim.world`) that the renderer samples at any times and
that writes its own exact shot record.

Units: millimetres, seconds, kilograms. Simulation time 0 is the strike; clip time
adds the still lead-in (``strike_time``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from vision_ref.messages import BallState, PinState
from vision_ref.rules.table import BALL_IDS, DEFAULT_TABLE, PIN_IDS, TableSpec
from vision_ref.sim import _physics_kernels as K
from vision_ref.sim import pins as P
from vision_ref.sim.world import WorldSamples

N_BALLS = len(BALL_IDS)
N_PINS = len(PIN_IDS)


@dataclass(frozen=True)
class PhysicsParams:
    """Physical constants (defaults: a carom table with wooden/plastic pins).

    Ball-cloth values are the usual measured ranges (Alciatore, Marlow): sliding
    friction 0.2, rolling resistance ~0.01, spin deceleration ~10 rad/s^2; ball-ball
    friction follows Alciatore's fit mu = a + b exp(-c v) (v in m/s).
    """

    gravity: float = 9810.0  # mm/s^2
    mu_slide: float = 0.2
    mu_roll: float = 0.014
    spin_decel: float = 10.0  # rad/s^2, z-spin
    e_ball: float = 0.94
    friction_a: float = 9.951e-3
    friction_b: float = 0.108
    friction_c: float = 1.088
    e_cushion: float = 0.9  # along the contact normal; horizontal rebound ~0.82
    mu_cushion: float = 0.2
    # pins
    pin_mass: float = 0.040  # kg, plain pin
    king_mass: float = 0.055
    pin_cm_fraction: float = 0.38  # centre of mass height / pin height
    pin_gyration_fraction: float = 0.28  # radius of gyration about the CM / height
    e_ball_pin: float = 0.6
    e_pin_pin: float = 0.45
    e_pin_cushion: float = 0.4
    mu_pin_lying: float = 0.35  # lying pins slide and roll unevenly: they stop fast
    mu_pin_base: float = 0.4  # a standing pin's base sliding on the cloth
    fall_time_min: float = 0.08  # s: toppling time range of a struck pin
    fall_time_max: float = 0.30
    wobble_time: float = 0.6  # s a glancing touch keeps a standing pin rocking

    def ball_vector(self, table: TableSpec) -> np.ndarray:
        return np.array(
            [
                table.ball_radius, self.gravity, self.mu_slide, self.mu_roll, self.spin_decel,
                self.e_ball, self.friction_a, self.friction_b, self.friction_c,
                self.e_cushion, self.mu_cushion, table.cushion_nose_height,
            ],
            dtype=np.float64,
        )


DEFAULT_PARAMS = PhysicsParams()


@dataclass(frozen=True)
class Strike:
    """The cue's hit: which ball, the ball's launch speed and direction, and the tip offset.

    ``side`` and ``height`` are the tip's offset from the ball's centre in ball radii
    (side > 0 right of centre seen from behind the cue: counter-clockwise spin seen
    from above; height > 0 above centre: follow; 0.4 is natural roll).
    """

    ball: str = "cue"
    speed: float = 2000.0  # mm/s
    angle: float = 0.0  # radians, table frame, direction of travel
    side: float = 0.0
    height: float = 0.0

    def __post_init__(self) -> None:
        if self.ball not in BALL_IDS:
            raise ValueError(f"strike ball must be one of {BALL_IDS}, got {self.ball!r}")
        if not (0.0 < self.speed <= 12000.0):
            raise ValueError(f"strike speed must be in (0, 12000] mm/s, got {self.speed}")
        if self.side * self.side + self.height * self.height > 0.5**2 + 1e-9:
            raise ValueError("tip offset beyond half a radius (a miscue)")

    def initial_velocity(self, R: float) -> tuple[np.ndarray, np.ndarray]:
        d = np.array([math.cos(self.angle), math.sin(self.angle)])
        v = self.speed * d
        # impulse through the tip point c = side*R*(d x ez) + height*R*ez:
        # w = (5 V / (2 R^2)) (c x d)
        ez_x_d = np.array([-d[1], d[0]])
        k = 2.5 * self.speed / R
        w = np.array([k * self.height * ez_x_d[0], k * self.height * ez_x_d[1], k * self.side])
        return v, w


@dataclass
class PinPlacement:
    at: tuple[float, float]
    state: str = "standing"  # standing | down (lying) | leaning | rail_standing | rail_down
    direction: float = 0.0  # lying pins: base -> head direction
    on: str | None = None
    tilt: float = 0.5  # leaning pins: tilt from upright (radians)


@dataclass
class Layout:
    """Where everything is before the strike. ``None`` for a ball not on the table."""

    balls: dict[str, tuple[float, float] | None]
    pins: dict[str, PinPlacement] = field(default_factory=dict)

    @classmethod
    def standard(cls, table: TableSpec = DEFAULT_TABLE, balls: dict | None = None) -> "Layout":
        b = {"cue": (-table.length / 4.0 - 200.0, 150.0), "white1": table.ball_spot(1), "white2": table.ball_spot(3)}
        if balls:
            b.update(balls)
        return cls(balls={k: (None if v is None else (float(v[0]), float(v[1]))) for k, v in b.items()},
                   pins={p: PinPlacement(table.pin_spot(p)) for p in PIN_IDS})

    def copy(self) -> "Layout":
        return Layout(dict(self.balls), {k: replace(v) for k, v in self.pins.items()})


@dataclass
class Script:
    """Outcomes the 2-D physics cannot produce, attached to a physical trigger.

    ``off_table``: ball -> n: that ball jumps the table at its n-th cushion contact
    (F2/B2). ``pin_to_rail``: pin -> "rail_standing" | "rail_down": when first struck
    the pin flies onto the rail behind the nearest cushion in its direction (T2/T3).
    """

    off_table: dict[str, int] = field(default_factory=dict)
    pin_to_rail: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"off_table": dict(self.off_table), "pin_to_rail": dict(self.pin_to_rail)}


# ------------------------------------------------------------------ trajectories
@dataclass
class BallTrack:
    """Piecewise-polynomial trajectory of one ball: row k holds from t0[k] to t0[k+1]."""

    t0: list = field(default_factory=list)
    r: list = field(default_factory=list)  # (3,) centre incl. z
    v: list = field(default_factory=list)  # (3,)
    a: list = field(default_factory=list)  # (3,)
    w: list = field(default_factory=list)  # (3,)
    alpha: list = field(default_factory=list)  # (3,)
    state: list = field(default_factory=list)  # ball motion code

    def push(self, t, r, v, a, w, alpha, state):
        if self.t0 and abs(self.t0[-1] - t) < 1e-15:
            for lst in (self.t0, self.r, self.v, self.a, self.w, self.alpha, self.state):
                lst.pop()
        self.t0.append(float(t))
        self.r.append(np.array(r, dtype=np.float64))
        self.v.append(np.array(v, dtype=np.float64))
        self.a.append(np.array(a, dtype=np.float64))
        self.w.append(np.array(w, dtype=np.float64))
        self.alpha.append(np.array(alpha, dtype=np.float64))
        self.state.append(int(state))

    def finish(self):
        self.T0 = np.array(self.t0)
        self.R = np.array(self.r)
        self.V = np.array(self.v)
        self.A = np.array(self.a)
        self.W = np.array(self.w)
        self.AL = np.array(self.alpha)
        self.S = np.array(self.state)

    def evaluate(self, t: np.ndarray):
        """Centres (F,3), angular velocities (F,3), motion codes (F,) at sim times t."""
        t = np.asarray(t, dtype=np.float64)
        k = np.clip(np.searchsorted(self.T0, t, side="right") - 1, 0, len(self.T0) - 1)
        tau = np.maximum(t - self.T0[k], 0.0)[:, None]
        pos = self.R[k] + self.V[k] * tau + 0.5 * self.A[k] * tau * tau
        w = self.W[k] + self.AL[k] * tau
        wz0 = self.W[k, 2]
        wz = w[:, 2]
        w[:, 2] = np.where(wz0 * wz <= 0.0, 0.0, wz)
        before = t < self.T0[0]
        if np.any(before):
            pos[before] = self.R[0]
            w[before] = 0.0
        return pos, w, self.S[k]

    def velocity(self, t: np.ndarray) -> np.ndarray:
        t = np.asarray(t, dtype=np.float64)
        k = np.clip(np.searchsorted(self.T0, t, side="right") - 1, 0, len(self.T0) - 1)
        tau = np.maximum(t - self.T0[k], 0.0)[:, None]
        return self.V[k] + self.A[k] * tau


@dataclass
class SimEvent:
    t: float
    type: str
    data: dict

    def to_record(self) -> dict:
        d = {"t": round(self.t, 6), "type": self.type}
        d.update(self.data)
        return d


# ------------------------------------------------------------------ simulator
class Simulator:
    """Runs one shot from a layout and a strike to rest (or ``max_time``)."""

    def __init__(
        self,
        layout: Layout,
        strike: Strike,
        table: TableSpec = DEFAULT_TABLE,
        params: PhysicsParams = DEFAULT_PARAMS,
        script: Script | None = None,
        max_time: float = 40.0,
    ) -> None:
        self.table = table
        self.params = params
        self.layout = layout
        self.strike = strike
        self.script = script or Script()
        self.max_time = max_time
        self.p = params.ball_vector(table)
        self.R = table.ball_radius
        self.bounds = np.array([table.half_length - self.R, table.half_width - self.R])
        self.events: list[SimEvent] = []
        self.cushion_count = dict.fromkeys(BALL_IDS, 0)
        self.n_events = 0

    # ---- setup
    def _init_balls(self):
        n = N_BALLS
        self.r = np.zeros((n, 2))
        self.v = np.zeros((n, 2))
        self.w = np.zeros((n, 3))
        self.z = np.full(n, self.R)
        self.vz = np.zeros(n)
        self.state = np.zeros(n, dtype=np.int64)
        for i, b in enumerate(BALL_IDS):
            pos = self.layout.balls.get(b)
            if pos is None:
                self.state[i] = K.GONE
                self.r[i] = (0.0, 0.0)
                self.z[i] = -1000.0
            else:
                x, y = float(pos[0]), float(pos[1])
                if not self.table.on_cloth(x, y, self.R - 1e-6):
                    raise ValueError(f"ball {b} at ({x:.1f}, {y:.1f}) is not inside the cushions")
                self.r[i] = (x, y)
        for i in range(n):
            for j in range(i + 1, n):
                if self.state[i] != K.GONE and self.state[j] != K.GONE:
                    if np.hypot(*(self.r[i] - self.r[j])) < 2 * self.R - 1e-6:
                        raise ValueError(f"balls {BALL_IDS[i]} and {BALL_IDS[j]} overlap")
        self.tracks = [BallTrack() for _ in range(n)]

    def _push_ball(self, i: int, t: float):
        acc = np.zeros(2)
        alpha = np.zeros(3)
        s = int(self.state[i])
        if s == K.AIRBORNE:
            self.tracks[i].push(t, (*self.r[i], self.z[i]), (*self.v[i], self.vz[i]),
                                (0.0, 0.0, -self.params.gravity), self.w[i], (0, 0, 0), s)
            return
        K.ball_accel(self.v[i], self.w[i], s, self.p, acc, alpha)
        self.tracks[i].push(t, (*self.r[i], self.z[i]), (*self.v[i], 0.0), (*acc, 0.0), self.w[i], alpha, s)

    def _advance_balls(self, dt: float):
        r2 = np.empty(2)
        v2 = np.empty(2)
        w2 = np.empty(3)
        for i in range(N_BALLS):
            s = int(self.state[i])
            if s == K.GONE:
                continue
            if s == K.AIRBORNE:
                self.r[i] += self.v[i] * dt
                self.z[i] += self.vz[i] * dt - 0.5 * self.params.gravity * dt * dt
                self.vz[i] -= self.params.gravity * dt
                continue
            K.evolve_ball(self.r[i], self.v[i], self.w[i], s, dt, self.p, r2, v2, w2)
            self.r[i] = r2
            self.v[i] = v2
            self.w[i] = w2

    # ---- run
    def run(self) -> "SimulatedShot":
        self._init_balls()
        self.pins = P.PinSystem(self.table, self.params, self.layout, self.R)
        t = 0.0
        si = BALL_IDS.index(self.strike.ball)
        for i in range(N_BALLS):
            self._push_ball(i, t)
        if self.state[si] == K.GONE:
            raise ValueError(f"struck ball {self.strike.ball} is not on the table")
        v0, w0 = self.strike.initial_velocity(self.R)
        self.v[si] = v0
        self.w[si] = w0
        self.state[si] = K.classify(self.v[si], self.w[si], self.p)
        self._push_ball(si, t)
        self.events.append(SimEvent(0.0, "strike", {"ball": self.strike.ball}))
        ij = np.zeros(2, dtype=np.int64)
        guard = 0
        while True:
            guard += 1
            if guard > 20000:
                raise RuntimeError("physics: too many events (a Zeno cycle?)")
            horizon = self.max_time - t
            if horizon <= 0:
                break
            if all(s in (K.STILL, K.SPINNING, K.GONE) for s in self.state) and not self.pins.any_moving():
                # nothing translates any more (a ball may still spin in place)
                break
            tb, kind, = K.next_ball_event(self.r, self.v, self.w, self.state, self.p, self.bounds, horizon, ij)
            bi, bj = int(ij[0]), int(ij[1])
            # airborne balls: landing on the floor ends their flight
            for i in range(N_BALLS):
                if self.state[i] == K.AIRBORNE:
                    ta = self._airborne_end(i)
                    if ta < tb:
                        tb, kind, bi, bj = ta, 9, i, -1
            tp, pev = self.pins.next_event(self, min(tb, horizon))
            if pev is not None and tp <= tb:
                dt = tp
                kind = 10
            else:
                dt = tb
            if kind == 0 or not math.isfinite(dt):
                break
            dt = max(dt, 0.0)
            self._advance_balls(dt)
            self.pins.advance(dt)
            t += dt
            self.n_events += 1
            if kind == 1:
                self.state[bi] = K.settle(self.v[bi], self.w[bi], int(self.state[bi]), self.p)
                self._push_ball(bi, t)
            elif kind == 2:
                self._cushion(bi, bj, t)
            elif kind == 3:
                K.resolve_ball_ball(self.r[bi], self.v[bi], self.w[bi], self.r[bj], self.v[bj], self.w[bj], self.p)
                for b in (bi, bj):
                    self.state[b] = K.classify(self.v[b], self.w[b], self.p)
                    self._push_ball(b, t)
                self.events.append(SimEvent(t, "ball_ball", {"a": BALL_IDS[bi], "b": BALL_IDS[bj]}))
            elif kind == 9:
                self.state[bi] = K.GONE
                self.v[bi] = 0.0
                self.vz[bi] = 0.0
                self.w[bi] = 0.0
                self._push_ball(bi, t)
            elif kind == 10:
                self.pins.resolve(self, pev, t)
            self.pins.after_event(self, t)
        self.end_time = t
        for tr in self.tracks:
            tr.finish()
        self.pins.finish(t)
        return SimulatedShot(self)

    def _airborne_end(self, i: int) -> float:
        # time until the ball reaches the floor, 760 mm below the cloth
        g = self.params.gravity
        z0, vz = self.z[i], self.vz[i]
        floor = -760.0 + self.R
        disc = vz * vz + 2 * g * (z0 - floor)
        return (vz + math.sqrt(max(disc, 0.0))) / g

    def _cushion(self, i: int, j: int, t: float):
        name = BALL_IDS[i]
        cushion = ("head", "foot", "left", "right")[j]
        self.cushion_count[name] += 1
        nx, ny = ((-1.0, 0.0), (1.0, 0.0), (0.0, 1.0), (0.0, -1.0))[j]
        self.events.append(SimEvent(t, "cushion", {"ball": name, "cushion": cushion}))
        n_off = self.script.off_table.get(name)
        if n_off is not None and self.cushion_count[name] == n_off:
            # scripted jump: the ball rides up the cushion and flies off over the rail
            sp = math.hypot(*self.v[i])
            self.vz[i] = max(0.35 * sp, 900.0)
            self.v[i] *= 0.75
            self.state[i] = K.AIRBORNE
            self._push_ball(i, t)
            self.events.append(SimEvent(t + 1e-6, "off_table", {"ball": name}))
            return
        K.resolve_ball_cushion(self.v[i], self.w[i], nx, ny, self.p)
        # snap exactly onto the rebound line (round-off must not leave it outside)
        axis = 0 if j < 2 else 1
        self.r[i, axis] = np.clip(self.r[i, axis], -self.bounds[axis], self.bounds[axis])
        self.state[i] = K.classify(self.v[i], self.w[i], self.p)
        self._push_ball(i, t)


# ------------------------------------------------------------------ the shot
class SimulatedShot:
    """A simulated shot as a continuous-time object (implements ShotSimulation).

    Clip time: ``lead_in`` seconds of stillness with the cue approaching, the strike
    at ``strike_time``, the motion, then ``tail`` seconds of stillness.
    """

    def __init__(self, sim: Simulator, lead_in: float = 0.6, tail: float = 0.6) -> None:
        self.table = sim.table
        self.params = sim.params
        self.layout = sim.layout
        self.strike = sim.strike
        self.script = sim.script
        self.tracks = sim.tracks
        self.pins = sim.pins
        self.events = sorted(sim.events, key=lambda e: e.t)
        self.end_time = max(sim.end_time, self.pins.end_time)
        self.n_events = sim.n_events
        self.lead_in = float(lead_in)
        self.tail = float(tail)
        self.strike_time = self.lead_in
        self.duration = self.lead_in + self.end_time + self.tail
        self.shooter = "A"
        self.meta: dict[str, Any] = {}

    # ---- sampling
    def sample(self, times: np.ndarray) -> WorldSamples:
        t_clip = np.atleast_1d(np.asarray(times, dtype=np.float64))
        ts = t_clip - self.strike_time
        f = len(ts)
        ball_xyz = np.zeros((f, N_BALLS, 3))
        ball_rot = np.zeros((f, N_BALLS, 3))
        ball_vis = np.ones((f, N_BALLS), dtype=bool)
        outer_x = self.table.half_length + self.table.cushion_width + self.table.rail_width
        outer_y = self.table.half_width + self.table.cushion_width + self.table.rail_width
        for i, tr in enumerate(self.tracks):
            pos, _, codes = tr.evaluate(ts)
            ball_xyz[:, i] = pos
            ball_rot[:, i] = self._rotation(i, ts)
            gone = codes == K.GONE
            beyond = ((np.abs(pos[:, 0]) > outer_x + 100.0) | (np.abs(pos[:, 1]) > outer_y + 100.0)) & (pos[:, 2] < 0)
            ball_vis[:, i] = ~(gone | beyond)
        pins = self.pins.sample(ts)
        cue_tip, cue_angle, cue_vis = self._cue(ts)
        return WorldSamples(
            t=t_clip, ball_xyz=ball_xyz, ball_rot=ball_rot, ball_visible=ball_vis,
            pin_xy=pins["xy"], pin_tilt=pins["tilt"], pin_dir=pins["dir"], pin_z=pins["z"],
            pin_state=pins["state"], pin_visible=pins["visible"],
            cue_tip=cue_tip, cue_angle=cue_angle, cue_visible=cue_vis,
        )

    def _rotation(self, i: int, ts: np.ndarray) -> np.ndarray:
        """Rotation vector of ball i: the integral of its angular velocity.

        Exact per axis, not a composition of rotations (the renderer only needs the
        surface markings to turn consistently with the rolling).
        """
        tr = self.tracks[i]
        if not hasattr(tr, "_rot0"):
            rot0 = np.zeros((len(tr.T0), 3))
            for k in range(1, len(tr.T0)):
                d = tr.T0[k] - tr.T0[k - 1]
                rot0[k] = rot0[k - 1] + self._w_integral(tr, k - 1, d)
            tr._rot0 = rot0
        k = np.clip(np.searchsorted(tr.T0, ts, side="right") - 1, 0, len(tr.T0) - 1)
        tau = np.maximum(ts - tr.T0[k], 0.0)
        out = tr._rot0[k].copy()
        out[:, :2] += tr.W[k, :2] * tau[:, None] + 0.5 * tr.AL[k, :2] * (tau * tau)[:, None]
        wz0 = tr.W[k, 2]
        al = tr.AL[k, 2]
        tz = np.where(al != 0.0, np.minimum(tau, np.abs(wz0 / np.where(al != 0, al, 1.0))), tau)
        out[:, 2] += wz0 * tz + 0.5 * al * tz * tz
        return out

    @staticmethod
    def _w_integral(tr: BallTrack, k: int, d: float) -> np.ndarray:
        w, al = tr.W[k], tr.AL[k]
        out = w * d + 0.5 * al * d * d
        if al[2] != 0.0:
            tz = min(d, abs(w[2] / al[2]))
            out[2] = w[2] * tz + 0.5 * al[2] * tz * tz
        return out

    def _cue(self, ts: np.ndarray):
        """The cue stick: drawn back, pushed through the ball at the strike, withdrawn."""
        si = BALL_IDS.index(self.strike.ball)
        r0 = self.tracks[si].R[0, :2]
        ang = self.strike.angle
        d = np.array([math.cos(ang), math.sin(ang)])
        R = self.table.ball_radius
        gap = np.empty_like(ts)
        # lead-in: rests 120 mm back, two practice strokes, then the stroke
        lead = self.lead_in
        pre = ts < 0
        tp = ts[pre] + lead  # 0 .. lead
        back = 120.0 + 60.0 * np.sin(np.clip(tp / max(lead, 1e-6), 0, 1) * 2.5 * np.pi) ** 2
        # last 0.12 s: accelerate into the ball
        final = np.clip((ts[pre] + 0.12) / 0.12, 0.0, 1.0)
        gap[pre] = back * (1.0 - final**2)
        post = ~pre
        tq = ts[post]
        # follow-through 25 mm within 0.05 s, then drawn back and away
        # clamp before the power: np.where evaluates both branches (negative ** 1.5 is NaN)
        gap[post] = np.where(tq < 0.05, -25.0 * tq / 0.05, -25.0 + 6000.0 * np.maximum(tq - 0.05, 0.0) ** 1.5)
        tip = r0[None, :] - d[None, :] * (R + gap)[:, None]
        angle = np.full(len(ts), (ang + math.pi) % (2 * math.pi))
        # the player pulls the cue back and away; by 1.2 s it is far outside the view
        visible = ts < 1.2
        return tip, angle, visible

    # ---- truth
    def positions_at(self, ts: float) -> dict:
        """Balls and pins (shot-record form) at sim time ts."""
        balls = {}
        for i, b in enumerate(BALL_IDS):
            pos, _, codes = self.tracks[i].evaluate(np.array([ts]))
            if codes[0] in (K.GONE, K.AIRBORNE):
                balls[b] = None
            else:
                balls[b] = [round(float(pos[0, 0]), 2), round(float(pos[0, 1]), 2)]
        return {"balls": balls, "pins": self.pins.record_states(ts)}

    def truth_record(self, fps: float | None = None) -> dict:
        from vision_ref.sim import truth

        return truth.shot_record(self, fps=fps)

    def truth_frames(self, fps: float) -> dict:
        from vision_ref.sim import truth

        return truth.truth_frames(self, fps)


def simulate(
    layout: Layout,
    strike: Strike,
    table: TableSpec = DEFAULT_TABLE,
    params: PhysicsParams = DEFAULT_PARAMS,
    script: Script | None = None,
    lead_in: float = 0.6,
    tail: float = 0.6,
) -> SimulatedShot:
    """Simulate one shot to rest; returns the continuous-time shot."""
    shot = Simulator(layout, strike, table, params, script).run()
    shot.lead_in = lead_in
    shot.strike_time = lead_in
    shot.tail = tail
    shot.duration = lead_in + shot.end_time + tail
    return shot
