"""Actuators against analytic dynamics (DESIGN sec. 4): a slide motor on the cart-pole and a hinge motor on a rod
against RK4 integrations of their equations of motion, position-servo equilibrium, velocity-servo step response,
and gradients to ctrl."""
import copy
import json
import math
import numpy as np
import pytest
from tinygrad import Tensor, dtypes
import engine
from engine.kinematics import forward_kinematics
from engine.tasks import SCENES
from oracle.joints import joint_coords
from oracle.packed import pack_state, unpack_state
from tests.helpers import frame_coords, packed_rows, reference

# several tests load the same scenes (cartpole, pendulum_swingup): one worker compiles each once
pytestmark = pytest.mark.xdist_group("actuators")


def inertia_about(model, body: int, axis) -> float:
  """Moment of inertia [kg m^2] of a body about its centre along a world axis, at the initial pose."""
  from engine.npquat import quat_to_mat
  R = quat_to_mat(model.body_quat0.numpy()[body].astype(np.float64))
  I = R @ np.diag(1.0 / model.body_inv_inertia.numpy()[body].astype(np.float64)) @ R.T
  a = np.asarray(axis, np.float64)
  return float(a @ I @ a)


def rk4(f, y, dt, n):
  out = [y]
  for _ in range(n):
    k1 = f(y); k2 = f(y + dt / 2 * k1); k3 = f(y + dt / 2 * k2); k4 = f(y + dt * k3)
    y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    out.append(y)
  return np.stack(out)


def run_coords(model, q0, qd0, ctrl, steps):
  """Joint coordinates (steps + 1, B, njoint) of a run from qpos/qvel with ctrl held."""
  sim = engine.Simulator(model, batch=q0.shape[0])
  packed = forward_kinematics(model, Tensor(q0, dtype=model.body_pos0.dtype), Tensor(qd0, dtype=model.body_pos0.dtype))
  state = unpack_state(packed.realize(), Tensor.zeros(q0.shape[0], dtype=model.body_pos0.dtype))
  _, rec = sim.trajectory(state, steps, ctrl=ctrl)
  return frame_coords(model, packed_rows(rec))


def test_verify_cartpole_slide_motor():
  """Cart (M) on a slide pushed by F = gear u, pole (m, I about its centre, centre l above the pivot) on a hinge:
  (M + m) x'' + m l cos(th) th'' - m l sin(th) th'^2 = F,  (I + m l^2) th'' + m l cos(th) x'' = m g l sin(th).
  XPBD is first order in the substep h: over 0.5 s the coordinates agree to a few h * |velocity|."""
  model = engine.load_scene(SCENES / "cartpole.json")
  M, m = 1.0 / model.body_inv_mass.numpy()
  I, l, g, gear = inertia_about(model, 1, (0, 1, 0)), 0.5, 9.81, 10.0
  u = np.array([0.3, -1.0, 5.0])   # the last one is clipped to 1
  def f(F):
    def rhs(y):
      x, th, xd, thd = y
      A = np.array([[M + m, m * l * math.cos(th)], [m * l * math.cos(th), I + m * l * l]])
      b = np.array([F + m * l * math.sin(th) * thd ** 2, m * g * l * math.sin(th)])
      return np.concatenate([[xd, thd], np.linalg.solve(A, b)])
    return rhs
  steps = 25
  q, qd = run_coords(model, np.array([[0.0, 0.05]] * 3), np.zeros((3, 2)), u[:, None].astype(np.float32), steps)
  h = model.dt / model.substeps
  for e, ue in enumerate(np.clip(u, -1, 1)):
    ref = rk4(f(gear * ue), np.array([0.0, 0.05, 0.0, 0.0]), model.dt / 20, steps * 20)[::20]
    vmax = np.abs(ref[:, 2:]).max()
    np.testing.assert_allclose(q[:, e], ref[:, :2], atol=4 * h * vmax * 0.5 + 1e-4, err_msg=f"env {e} u={ue}")
    np.testing.assert_allclose(qd[:, e], ref[:, 2:], atol=4 * h * vmax * 10 + 1e-3, err_msg=f"env {e} u={ue}")


def test_verify_hinge_motor_rod():
  """A rod on a hinge with torque tau: (I + m l^2) th'' = tau + m g l sin(th) (th = 0 upright)."""
  model = engine.load_scene(SCENES / "pendulum_swingup.json")
  m, I, l, g = 1.0 / float(model.body_inv_mass.numpy()[0]), inertia_about(model, 0, (0, 1, 0)), 0.5, 9.81
  taus = np.array([2.0, -1.5])   # the scene's motor: tau = 2 N m * ctrl
  steps = 10
  ctrl = (taus / float(model.act_gear.numpy()[0]))[:, None].astype(np.float32)
  q, qd = run_coords(model, np.array([[0.1], [0.1]]), np.zeros((2, 1)), ctrl, steps)
  h = model.dt / model.substeps
  for e, tau in enumerate(taus):
    rhs = lambda y: np.array([y[1], (tau + m * g * l * math.sin(y[0])) / (I + m * l * l)])  # noqa: B023
    ref = rk4(rhs, np.array([0.1, 0.0]), model.dt / 20, steps * 20)[::20]
    vmax = np.abs(ref[:, 1]).max()
    np.testing.assert_allclose(q[:, e, 0], ref[:, 0], atol=2 * h * vmax + 1e-4, err_msg=f"tau={tau}")
    np.testing.assert_allclose(qd[:, e, 0], ref[:, 1], rtol=0.02, atol=1e-3, err_msg=f"tau={tau}")


def servo_scene(kind: str, gravity: float, **act) -> dict:
  scene = json.loads((SCENES / "pendulum_swingup.json").read_text())
  scene["gravity"] = [0.0, 0.0, -gravity]
  scene["dt"], scene["substeps"] = 0.02, 4
  scene["actuators"] = [{"name": "servo", "joint": "hinge", "type": kind, "ctrlrange": [-3, 3], **act}]
  return scene


def test_verify_position_servo_equilibrium():
  """A position servo (kp, kv) holding a rod against gravity settles where kp (target - th) + m g l sin(th) = 0."""
  kp, target = 20.0, np.array([0.3, -0.5])
  model = engine.load_scene(servo_scene("position", 9.81, kp=kp, kv=2.0))
  q, qd = run_coords(model, np.zeros((2, 1)), np.zeros((2, 1)), target[:, None].astype(np.float32), 250)
  m, l, g = 1.0, 0.5, 9.81
  for e, tgt in enumerate(target):
    th = tgt
    for _ in range(50): th -= (kp * (tgt - th) + m * g * l * math.sin(th)) / (-kp + m * g * l * math.cos(th))  # Newton
    assert abs(q[-1, e, 0] - th) < 2e-3, (q[-1, e, 0], th, tgt)
    assert abs(qd[-1, e, 0]) < 1e-3


def test_verify_velocity_servo_step():
  """A velocity servo (gain kv) spins a free rod up: I_p w' = kv (target - w) -> w = target (1 - exp(-kv t / I_p)),
  I_p the rod's inertia about the pivot. The velocity pass applies the servo's impulse to the rod's spin about its
  centre (inertia I_c < I_p, as M20's joint damping does); the next substep's hinge projection hands the share that
  belongs to the centre's motion back. So a measured w carries one substep's surplus kv h |target - w| (1/I_c - 1/I_p)
  (first order in h) and the angle, which integrates w, carries h times that per substep. Measured: the w error is
  0.97 of that surplus after one step and 1.17 of it after 20 (the stronger spin-up also compounds), bound 1.3."""
  kv, target = 1.0, np.array([2.0, -1.0])
  model = engine.load_scene(servo_scene("velocity", 0.0, kv=kv))
  Ic = inertia_about(model, 0, (0, 1, 0))
  Ip = Ic + 1.0 * 0.25
  steps = 20
  q, qd = run_coords(model, np.zeros((2, 1)), np.zeros((2, 1)), target[:, None].astype(np.float32), steps)
  t = np.arange(steps + 1) * model.dt
  h = model.dt / model.substeps
  for e, tgt in enumerate(target):
    w = tgt * (1 - np.exp(-kv * t / Ip))
    angle = tgt * (t - Ip / kv * (1 - np.exp(-kv * t / Ip)))
    surplus = kv * h * np.abs(tgt - w) * (1 / Ic - 1 / Ip)
    assert np.all(np.abs(qd[:, e, 0] - w) <= surplus * 1.3 + 1e-4), (qd[:, e, 0], w, surplus)
    np.testing.assert_allclose(q[:, e, 0], angle, atol=abs(tgt) * kv * h / Ic * t[-1] + 1e-4)
    assert abs(qd[-1, e, 0] - w[-1]) < 0.03 * abs(tgt)   # and the step response is right to 3 % at t = 5 I_p / kv


def test_grad_ctrl_cartpole():
  """d(x_T + th_T)/d ctrl_t for each of 3 steps (checkpointed reverse mode, engine.grad) vs float64 central
  differences of the whole rollout, plus a sign check: a push towards +x tips the pole back (theta falls faster than
  x grows in 60 ms), and the earlier the push, the larger its effect."""
  from engine.grad import rollout_grad
  model = engine.load_scene(SCENES / "cartpole.json", dtype=dtypes.float64)
  q0 = Tensor([[0.0, 0.05]], dtype=dtypes.float64)
  s0 = unpack_state(forward_kinematics(model, q0, q0 * 0.0).realize(), Tensor.zeros(1, dtype=dtypes.float64))
  u = np.array([[[0.4]], [[-0.2]], [[0.7]]])
  def loss_fn(state): return joint_coords(model, pack_state(state))[0].sum()
  loss, _, grads = rollout_grad(model, s0, 3, loss_fn, ctrl=[Tensor(c) for c in u])
  g = grads["ctrl"].numpy()[:, 0, 0]
  eps = 1e-5
  def compute():   # the loss by Simulator rollouts and its central differences: the golden file (tests/golden.py)
    sim = engine.Simulator(model, batch=1)
    def value(uu): return loss_fn(sim.rollout(sim.rollout(sim.rollout(s0, 1, ctrl=uu[0]), 1, ctrl=uu[1]), 1,
                                              ctrl=uu[2])).item()
    fd = []
    for t in range(3):
      up, um = u.copy(), u.copy()
      up[t] += eps
      um[t] -= eps
      fd.append((value(up) - value(um)) / (2 * eps))
    return {"value": value(u), "fd": np.array(fd)}
  ref = reference("grad_ctrl_cartpole", dict(scene="cartpole", q0=[0.0, 0.05], u=u.tolist(), eps=eps), compute)
  assert abs(loss.item() - float(ref["value"])) < 1e-12
  for t, fd in enumerate(ref["fd"]):
    assert abs(g[t] - fd) <= 1e-5 * abs(fd) + 1e-10, (t, g[t], fd)
  assert g[0] < g[1] < g[2] < 0, g


def test_scene_actuator_errors():
  base = servo_scene("position", 9.81, kp=1.0)
  cases = [({"joint": "nope"}, "actuators[0].joint: unknown joint"), ({"kp": -1.0}, "actuators[0].kp: expected"),
           ({"type": "velocity"}, "actuators[0].kp: not allowed for a velocity actuator"),
           ({"ctrlrange": [1, -1]}, "actuators[0].ctrlrange"), ({"gear": 2.0}, "actuators[0].gear: not allowed")]
  for change, msg in cases:
    scene = copy.deepcopy(base)
    scene["actuators"][0].update(change)
    with pytest.raises(engine.SceneError, match=msg.replace("[", r"\[").replace("]", r"\]")):
      engine.load_scene(scene)
  scene = copy.deepcopy(base)
  scene["actuators"].append(dict(scene["actuators"][0], name="again"))
  with pytest.raises(engine.SceneError, match="already driven"):
    engine.load_scene(scene)


def test_simulator_ctrl_errors():
  model = engine.load_scene(SCENES / "cartpole.json")
  sim = engine.Simulator(model, batch=2)
  s = sim.reset()
  with pytest.raises(ValueError, match=r"ctrl: expected shape \(2, 1\)"): sim.step(s, np.zeros((2, 2), np.float32))
  with pytest.raises(ValueError, match="ctrl: expected a float"): sim.step(s, np.zeros((2, 1), np.int64))
  plain = engine.Simulator(engine.load_scene(SCENES.parent.parent.parent / "scenes" / "pendulum.json"))
  with pytest.raises(ValueError, match="no actuators"): plain.step(plain.reset(), np.zeros((1, 1), np.float32))
