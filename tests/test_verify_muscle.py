"""Hill muscles and tendons (oracle/muscle.py, oracle/tendon.py, oracle/activation.py) against MuJoCo's own muscle
model and against physics.

- curves: the oracle's gain, bias and activation rate equal mujoco.mju_muscleGain / mju_muscleBias /
  mju_muscleDynamics on a grid that hits every branch and its edges, within 1e-9 relative in float64 (measured:
  bit-equal gains and biases, rates within 3e-14 relative);
- statics: muscle_hang comes to rest where F0 (act FL + FP) equals the weight, within 1 %;
- activation: a step of the excitation reaches 63 % of its change at MuJoCo's effective time constant (the time its
  own rate law takes, integrated exactly), within 2 %;
- cross-engine: leg2 and its MJCF twin (scenes/leg2.xml) under one excitation pattern: hip and knee angles agree with
  MuJoCo within 2 degrees over 1 s (measured: 0.57 and 1.11 degrees, over swings of 130 and 200 degrees);
- tendons: a tendon spring holds a weight where k stretch = m g; a tension's loads do the work F dL/dt.
"""
from __future__ import annotations
import math
import numpy as np
import pytest
from tinygrad import Tensor, dtypes
from engine.scene import SceneError, load_scene
from engine.simulator import Simulator
from engine.leg import angles, pattern
from oracle.muscle import PRM_DEFAULT, muscle_bias, muscle_dynamics, muscle_gain
from tests.helpers import SCENES

mujoco = pytest.importorskip("mujoco")


def f64(a) -> Tensor: return Tensor(np.asarray(a, np.float64), dtype=dtypes.float64, device="CPU")


def curve_grid() -> dict[str, np.ndarray]:
  """Lengths and velocities over every branch of FL, FV and FP, their breakpoints exactly and 1e-9 either side, for
  MuJoCo's default parameters and three variants (F0 from scale / acc0, a custom curve, a custom range)."""
  prms = [PRM_DEFAULT, (0.75, 1.05, 800.0, 200.0, 0.5, 1.6, 1.5, 1.3, 1.2),
          (0.5, 1.2, -1.0, 50.0, 0.3, 1.8, 0.7, 0.5, 1.6), (0.9, 1.0, 250.0, 200.0, 0.6, 1.3, 2.0, 2.0, 1.05)]
  rows = []
  for prm in prms:
    r0, r1, _, _, lmin, lmax, vmax, _, fvmax = prm
    lr = (0.2, 0.35)
    l0 = (lr[1] - lr[0]) / (r1 - r0)
    marks = [lmin, 0.5 * (lmin + 1), 1.0, 0.5 * (1 + lmax), lmax]
    big_l = np.unique(np.concatenate([np.linspace(lmin - 0.3, lmax + 0.5, 41), marks, np.add(marks, 1e-9),
                                      np.subtract(marks, 1e-9)]))
    big_v = np.unique(np.concatenate([np.linspace(-1.5, fvmax + 0.5, 17), [-1, 0, fvmax - 1, -1 + 1e-9, 1e-9]]))
    for L in big_l:
      for V in big_v:
        rows.append((lr[0] + (L - r0) * l0, V * l0 * vmax, *lr, 7.5, *prm))
  a = np.array(rows)
  return {"len": a[:, 0], "vel": a[:, 1], "lr": a[:, 2:4], "acc0": a[:, 4], "prm": a[:, 5:]}


def test_verify_muscle_curves_mujoco():
  g = curve_grid()
  want_gain = np.array([mujoco.mju_muscleGain(*r) for r in zip(g["len"], g["vel"], g["lr"], g["acc0"], g["prm"])])
  want_bias = np.array([mujoco.mju_muscleBias(*r) for r in zip(g["len"], g["lr"], g["acc0"], g["prm"])])
  gain = muscle_gain(f64(g["len"]), f64(g["vel"]), f64(g["lr"]), f64(g["acc0"]), f64(g["prm"])).numpy()
  bias = muscle_bias(f64(g["len"]), f64(g["lr"]), f64(g["acc0"]), f64(g["prm"])).numpy()
  assert (want_gain == 0).any() and (want_gain < 0).any() and (want_bias == 0).any() and (want_bias < 0).any()
  np.testing.assert_allclose(gain, want_gain, rtol=1e-9, atol=0)
  np.testing.assert_allclose(bias, want_bias, rtol=1e-9, atol=0)


def dynamics_grid() -> dict[str, np.ndarray]:
  """Controls and activations in and outside [0, 1], equal ones (no change), hard and smooth switching."""
  vals = np.array([-0.3, 0.0, 1e-9, 0.2, 0.5, 0.77, 1.0, 1.4])
  rows = [(c, a, *dyn) for c in vals for a in vals for dyn in ((0.01, 0.04, 0.0), (0.02, 0.08, 0.0),
                                                                 (0.01, 0.04, 0.3), (0.01, 0.04, 2.0))]
  a = np.array(rows)
  return {"ctrl": a[:, 0], "act": a[:, 1], "prm": a[:, 2:]}


def test_verify_muscle_dynamics_mujoco():
  d = dynamics_grid()
  want = np.array([mujoco.mju_muscleDynamics(c, a, p) for c, a, p in zip(d["ctrl"], d["act"], d["prm"])])
  got = muscle_dynamics(f64(d["ctrl"]), f64(d["act"]), f64(d["prm"])).numpy()
  assert (want == 0).any() and (want > 0).any() and (want < 0).any()
  np.testing.assert_allclose(got, want, rtol=1e-9, atol=0)


def test_grad_muscle_curves():
  """Autograd of the curves against float64 central differences, at points 1e-3 or more from every breakpoint (each
  piece is a quadratic: the central difference is exact there but for rounding)."""
  rng = np.random.default_rng(0)
  g = curve_grid()
  l0 = (g["lr"][:, 1] - g["lr"][:, 0]) / (g["prm"][:, 1] - g["prm"][:, 0])
  L = (g["len"] - g["lr"][:, 0]) / l0 + g["prm"][:, 0]
  prm = g["prm"]
  marks = np.stack([prm[:, 4], 0.5 * (prm[:, 4] + 1), np.ones(len(L)), 0.5 * (1 + prm[:, 5]), prm[:, 5]], 1)
  far = np.abs(L[:, None] - marks).min(1) > 1e-3
  pick = rng.choice(np.flatnonzero(far), 200, replace=False)
  x = {k: v[pick] for k, v in g.items()}
  ln, vel, prm_t = f64(x["len"]), f64(x["vel"]), f64(x["prm"])
  force = muscle_gain(ln, vel, f64(x["lr"]), f64(x["acc0"]), prm_t) + muscle_bias(ln, f64(x["lr"]), f64(x["acc0"]),
                                                                                  prm_t)
  d_len, d_prm = force.sum().gradient(ln, prm_t)
  def f(length, prm_):
    return (muscle_gain(f64(length), f64(x["vel"]), f64(x["lr"]), f64(x["acc0"]), f64(prm_)) +
            muscle_bias(f64(length), f64(x["lr"]), f64(x["acc0"]), f64(prm_))).numpy()
  eps = 1e-7
  fd_len = (f(x["len"] + eps, x["prm"]) - f(x["len"] - eps, x["prm"])) / (2 * eps)
  dp = np.zeros_like(x["prm"]); dp[:, 2] = eps * np.abs(x["prm"][:, 2])
  fd_force = (f(x["len"], x["prm"] + dp) - f(x["len"], x["prm"] - dp)) / (2 * dp[:, 2])
  np.testing.assert_allclose(d_len.numpy(), fd_len, rtol=1e-6, atol=1e-6 * np.abs(fd_len).max())
  np.testing.assert_allclose(d_prm.numpy()[:, 2], fd_force, rtol=1e-6, atol=1e-9)


def settle(scene: str, ctrl: np.ndarray, steps: int, dtype=dtypes.float64):
  model = load_scene(SCENES / f"{scene}.json", dtype, "CPU")
  sim = Simulator(model, batch=len(ctrl), tier_up=0)
  return model, sim.rollout(sim.reset(), steps, ctrl=ctrl)


def test_verify_muscle_hang_statics():
  """Three excitations; after 3 s the weight is at rest, and the muscle's force at the rest length, evaluated by
  MuJoCo's functions at zero velocity, carries the weight within 1 %."""
  excitation = np.array([[0.1], [0.4], [1.0]])   # an active muscle damps through FV; a passive one would ring
  model, end = settle("muscle_hang", excitation, 1500)
  z, v = end.body_pos.numpy()[:, 0, 2], end.body_vel.numpy()[:, 0, 2]
  assert np.abs(v).max() < 1e-4, v
  np.testing.assert_allclose(end.act.numpy(), excitation, atol=1e-9)
  site = np.array([0.0, 0.0, 0.95])                     # the origin; the insertion is 5 cm above the weight's centre
  length = site[2] - (z + 0.05)
  prm, lr = model.act_gainprm.numpy()[0], model.act_lengthrange.numpy()[0]
  force = np.array([-(mujoco.mju_muscleGain(ln, 0.0, lr, 1.0, prm) * a + mujoco.mju_muscleBias(ln, lr, 1.0, prm))
                    for ln, a in zip(length, excitation[:, 0])])
  weight = 9.81 / model.body_inv_mass.numpy()[0]
  print(f"\nrest lengths {length}, muscle force {force}, weight {weight}")
  np.testing.assert_allclose(force, weight, rtol=0.01)
  assert length.max() - length.min() > 0.01   # the excitations hold it at different lengths


def effective_time(start: float, target: float, prm=(0.01, 0.04)) -> float:
  """The time MuJoCo's rate law da/dt = (e - a) / tau(a) takes from act = start to 63 % of the way to e, integrated
  exactly: tau(a) = tau_act (0.5 + 1.5 a) rising, tau_deact / (0.5 + 1.5 a) falling."""
  a63, e = start + (1 - math.exp(-1)) * (target - start), target
  if target > start:   # (0.5 + 1.5 a) / (e - a) = -1.5 + (0.5 + 1.5 e) / (e - a)
    return prm[0] * (-1.5 * (a63 - start) + (0.5 + 1.5 * e) * math.log((e - start) / (e - a63)))
  # 1 / ((0.5 + 1.5 a)(a - e)) = (1 / (a - e) - 1.5 / (0.5 + 1.5 a)) / (0.5 + 1.5 e)
  return prm[1] * (math.log((start - e) / (a63 - e)) - math.log((0.5 + 1.5 * start) / (0.5 + 1.5 * a63))) / (
    0.5 + 1.5 * e)


@pytest.mark.parametrize("start,target", [(0.0, 1.0), (1.0, 0.0), (0.2, 0.7)])
def test_verify_activation_time_constant(start, target):
  model = load_scene(SCENES / "muscle_hang.json", dtypes.float64, "CPU")
  sim = Simulator(model, batch=1, tier_up=0)
  state = sim.reset().replace(act=f64([[start]]))
  _, rec = sim.trajectory(state, 60, ctrl=np.array([[target]]))
  act = rec["act"][:, 0, 0]
  a63 = start + (1 - math.exp(-1)) * (target - start)
  k = int(np.flatnonzero((act - a63) * np.sign(target - start) >= 0)[0])
  t63 = rec["t"][k - 1] + (a63 - act[k - 1]) / (act[k] - act[k - 1]) * (rec["t"][k] - rec["t"][k - 1])
  want = effective_time(start, target)
  print(f"\n{start} -> {target}: 63 % at {t63 * 1e3:.3f} ms, MuJoCo's law {want * 1e3:.3f} ms")
  assert abs(t63 - want) <= 0.02 * want


def test_verify_leg2_mujoco():
  mm = mujoco.MjModel.from_xml_path(str(SCENES / "leg2.xml"))
  md = mujoco.MjData(mm)
  model = load_scene(SCENES / "leg2.json", dtypes.float64, "CPU")
  assert mm.opt.timestep == model.dt and mm.nu == model.nact
  np.testing.assert_array_equal(mm.actuator_lengthrange, model.act_lengthrange.numpy())
  steps = round(1.0 / model.dt)
  theirs = []
  for k in range(steps):
    md.ctrl[:] = pattern(k * model.dt)
    mujoco.mj_step(mm, md)
    theirs.append(md.qpos.copy())
  sim = Simulator(model, batch=1, tier_up=0)
  state, ours, done = sim.reset(), [], 0
  breaks = sorted({round(t / model.dt) for t in (0.2, 0.3, 0.5, 0.6, 0.8)} | {steps})
  for end in breaks:   # the pattern is constant between its breaks: one recorded run each
    state, rec = sim.trajectory(state, end - done, ctrl=np.array([pattern(done * model.dt)]))
    ours.append(angles(rec["quat"][1:, 0]))
    done = end
  ours, theirs = np.concatenate(ours), np.array(theirs)
  err = np.degrees(np.abs(ours - theirs)).max(0)
  swing = np.degrees(theirs.max(0) - theirs.min(0))
  print(f"\nleg2 vs MuJoCo over 1 s: largest difference hip {err[0]:.2f}, knee {err[1]:.2f} degrees "
        f"(swings {swing[0]:.0f}, {swing[1]:.0f})")
  assert swing.min() > 60   # the pattern moves both joints a lot
  assert err.max() < 2.0


def test_verify_tendon_spring_statics():
  """A weight on a slide rail hangs from a tendon spring (k, rest length): at rest k (L - L_rest) = m g."""
  scene = {"name": "tendon_hang", "dt": 0.002, "substeps": 10, "contact": {"enabled": False},
           "bodies": [{"name": "w", "pos": [0, 0, 0.5], "mass": 2.0, "inertia": [0.01] * 3,
                       "geoms": [{"type": "sphere", "size": [0.05]}]}],
           "joints": [{"name": "rail", "type": "slide", "parent": "world", "child": "w", "anchor": [0, 0, 0.5],
                       "axis": [0, 0, 1]}],
           "sites": [{"name": "top", "body": "world", "pos": [0, 0, 1.0]}, {"name": "via", "body": "world",
                                                                          "pos": [0, 0.2, 0.8]},
                     {"name": "hook", "body": "w", "pos": [0, 0, 0.55]}],
           "tendons": [{"name": "spring", "sites": ["top", "via", "hook"], "stiffness": 400.0, "damping": 20.0}]}
  model = load_scene(scene, dtypes.float64, "CPU")
  sim = Simulator(model, batch=1, tier_up=0)
  end = sim.rollout(sim.reset(), 3000)   # 6 s: the oscillation (zeta ~ 0.4 along the rail) has died out
  rest = model.ten_length.numpy()[0]
  hook = end.body_pos.numpy()[0, 0] + [0, 0, 0.05]
  length = np.linalg.norm([0, 0.2, -0.2]) + np.linalg.norm(hook - [0, 0.2, 0.8])
  # the rail is vertical: the spring's pull along its last segment balances the weight along z
  dz = (0.8 - hook[2]) / np.linalg.norm(hook - [0, 0.2, 0.8])
  np.testing.assert_allclose(400.0 * (length - rest) * dz, 2.0 * 9.81, rtol=1e-4)


def test_verify_tendon_power():
  """The loads of a tension F along a three-site tendon across leg2's two bodies (kicked, bent) do work at the rate
  F dL/dt: sum over bodies of f.v + tau.w, with dL/dt by central differences of the length along the motion."""
  from oracle.packed import pack_state
  from oracle.tendon import tendon_loads, tendon_state
  model = load_scene(SCENES / "leg2.json", dtypes.float64, "CPU")
  # the substep tier (the default for 20 steps): it captures one substep, not a whole step, and gives the same state
  # (tests/test_simulator.py); the power balance holds at any state
  sim = Simulator(model, batch=4)
  state = sim.rollout(sim.reset(seed=1, noise=2.0), 20)
  packed = pack_state(state, model)[:, :model.nbody].contiguous().realize()
  length, rate, geometry = tendon_state(model, packed)
  tension = f64(np.random.default_rng(0).normal(size=(4, model.ntendon)) * 100)
  force, torque = tendon_loads(model, tension, geometry)
  v, w = state.body_vel.numpy(), state.body_angvel.numpy()
  power = (force.stack().numpy() * v).sum((-1, -2)) + (torque.stack().numpy() * w).sum((-1, -2))
  np.testing.assert_allclose(power, (tension.numpy() * rate.numpy()).sum(-1), rtol=1e-10)
  # and the rate is the length's time derivative along the motion
  from oracle.math3 import Quat, V3
  def moved(dt: float):
    p = packed.numpy().copy()
    p[..., 0:3] += dt * p[..., 7:10]
    q = Quat.of(Tensor(p[..., 3:7])).add_rotation(V3.of(Tensor(p[..., 10:13] * dt)))
    p[..., 3:7] = np.stack([t.numpy() for t in (q.w, q.x, q.y, q.z)], -1)
    return tendon_state(model, f64(p))[0].numpy()
  fd = (moved(1e-6) - moved(-1e-6)) / 2e-6
  np.testing.assert_allclose(rate.numpy(), fd, rtol=1e-5, atol=1e-8)


def muscle_scene(**muscle) -> dict:
  """A minimal muscle scene with one actuator's fields overridden (None removes one)."""
  act = {"name": "m", "type": "muscle", "tendon": "t", "force": 100.0, "lengthrange": [0.1, 0.2]} | muscle
  return {"bodies": [{"name": "b", "pos": [0, 0, 0], "geoms": [{"type": "sphere", "size": [0.1]}]}],
          "sites": [{"name": "s0", "body": "world", "pos": [0, 0, 0.3]},
                    {"name": "s1", "body": "b", "pos": [0, 0, 0.1]}],
          "tendons": [{"name": "t", "sites": ["s0", "s1"]}],
          "actuators": [{k: v for k, v in act.items() if v is not None}]}


@pytest.mark.parametrize("edit,path,words", [
  (dict(tendon="nope"), "actuators[0].tendon", "unknown tendon 'nope'"),
  (dict(lmin=1.7), "actuators[0].lmax", "lmin < lmax"),
  (dict(lmin=0.9, lmax=0.8), "actuators[0].lmax", "lmin < lmax"),
  (dict(range=[1.05, 0.75]), "actuators[0].range", "increasing"),
  (dict(lengthrange=None), "actuators[0].lengthrange", "missing"),
  (dict(force=-1.0), "actuators[0].acc0", "missing"),
  (dict(timeconst=[0.01, 0.0]), "actuators[0].timeconst", "both > 0"),
  (dict(joint="x"), "actuators[0].joint", "not allowed for a muscle"),
])
def test_verify_muscle_bad_input(edit, path, words):
  with pytest.raises(SceneError) as e: load_scene(muscle_scene(**edit))
  assert str(e.value).startswith(path + ":") and words in str(e.value), str(e.value)


@pytest.mark.parametrize("edit,path,words", [
  (lambda s: s["tendons"][0].update(sites=["s0"]), "tendons[0].sites", "two or more"),
  (lambda s: s["tendons"][0].update(sites=["s0", "zz"]), "tendons[0].sites[1]", "unknown site 'zz'"),
  (lambda s: s["sites"][1].update(body="ghost"), "sites[1].body", "unknown body 'ghost'"),
  (lambda s: s["sites"].append(dict(s["sites"][0])), "sites[2].name", "duplicate site name"),
  (lambda s: s["tendons"][0].update(stiffness=-1), "tendons[0].stiffness", ">= 0"),
])
def test_verify_tendon_bad_input(edit, path, words):
  scene = muscle_scene()
  edit(scene)
  with pytest.raises(SceneError) as e: load_scene(scene)
  assert str(e.value).startswith(path + ":") and words in str(e.value), str(e.value)


def test_verify_muscle_state_checked():
  """A muscle model's state carries the activations: a missing or misshapen act is a clear error."""
  model = load_scene(SCENES / "muscle_hang.json")
  sim = Simulator(model, batch=2)
  state = sim.reset()
  assert state.act.shape == (2, 1) and state.act.numpy().max() == 0
  for bad, words in ((state.replace(act=None), "got NoneType"), (state.replace(act=Tensor.zeros(2, 3)), "(2, 1)")):
    with pytest.raises(ValueError, match=r"state\.act") as e: sim.step(bad)
    assert words in str(e.value)
