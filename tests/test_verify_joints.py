"""Analytic targets for the joint scenes (DESIGN sec. 7): chain drift, compliant hang, free fall, free rotation."""
import numpy as np
import pytest
import engine
from engine.npquat import quat_rotate
from engine.scene import load_scene_dict
from helpers import SCENES, anchor_errors

G = 9.81


def record(scene, seconds, every=1, batch=1, edit=None, **load):
  d = load_scene_dict(SCENES / f"{scene}.json")
  if edit: edit(d)
  model = engine.load_scene(d, **load)
  sim = engine.Simulator(model, batch=batch)
  _, run = sim.trajectory(sim.reset(), int(round(seconds / model.dt)), every=every)
  return model, *(run[k][1:] for k in ("t", "pos", "quat", "angvel"))   # the states after every `every` steps


def test_verify_chain_constraint_drift():
  """10 ball-jointed links swinging for 10 s: every joint's anchor error stays below 1 mm."""
  model, _, pos, quat, _ = record("chain", 10.0, every=4)
  errs = np.stack([anchor_errors(model, p.astype(np.float64), q.astype(np.float64)) for p, q in zip(pos, quat)])
  assert errs.max() < 1e-3, f"max joint error {errs.max():.2e} m"
  assert pos[:, 0, -1, 2].min() < 1.4, "the chain did not swing down"   # it moved: not a frozen simulation


def test_verify_compliant_hang_stretch():
  """Released at rest length, an undamped compliant hang oscillates between 0 and 2 alpha m g: its centre is the
  static stretch alpha m g (harmonic oscillator)."""
  model, _, pos, quat, _ = record("compliant_hang", 2.0)
  alpha, m = model.jnt_compliance.numpy()[0], 1.0 / model.body_inv_mass.numpy()[0]
  a_par, a_chi = model.jnt_anchor_parent.numpy()[0], model.jnt_anchor_child.numpy()[0]
  rest = model.jnt_length.numpy()[0]
  arm = np.broadcast_to(a_chi, (len(pos), 3))
  tip = pos[:, 0, 0].astype(np.float64) + quat_rotate(quat[:, 0, 0].astype(np.float64), arm)
  stretch = np.linalg.norm(tip - a_par, axis=-1) - rest
  centre = 0.5 * (stretch.max() + stretch.min())
  assert abs(centre / (alpha * m * G) - 1) < 0.02, (centre, alpha * m * G)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_verify_free_fall(dtype):
  """No joints: semi-implicit Euler with substep h gives z_N = z0 + v0 t - g t^2/2 - g h t/2 exactly (the bias term).
  float64 must match that to rounding; float32 must stay within the bias of the continuous answer (DESIGN sec. 7),
  its rounding over 4800 substeps near 1 m being ~1e-4 m."""
  from tinygrad import dtypes
  def edit(d):
    d["joints"] = []
    d["bodies"][0]["vel"] = [1.0, 0.5, 3.0]
  load = dict(dtype=dtypes.float64, device="CPU") if dtype == "float64" else {}
  model, t, pos, _, _ = record("pendulum", 1.0, every=24, edit=edit, **load)
  x0, h = model.body_pos0.numpy()[0].astype(np.float64), model.dt / model.substeps
  continuous = x0 + np.outer(t, [1.0, 0.5, 3.0]) + np.outer(-0.5 * G * t ** 2, [0, 0, 1])
  discrete = continuous + np.outer(-0.5 * G * h * t, [0, 0, 1])
  if dtype == "float64":
    assert np.abs(pos[:, 0, 0] - discrete).max() < 1e-10
  else:
    bias = 0.5 * G * h * t[:, None]            # ~1 mm after 1 s
    assert (np.abs(pos[:, 0, 0] - continuous) <= bias + 2e-4).all()


def test_verify_free_rotation_conserves_angular_momentum():
  """A torque-free asymmetric box spinning near its stable axis: world angular momentum L = R I R^T w is conserved
  (the gyroscopic term of M20 eq. 27); kinetic energy too, within the integrator's O(h) drift."""
  def edit(d):
    d["joints"], d["gravity"] = [], [0.0, 0.0, 0.0]
    d["bodies"][0]["geoms"] = [{"type": "box", "size": [0.1, 0.2, 0.3]}]
    d["bodies"][0]["angvel"] = [0.3, 0.2, 4.0]
  model, _, _, quat, angvel = record("pendulum", 2.0, every=12, edit=edit)
  inertia = 1.0 / model.body_inv_inertia.numpy()[0].astype(np.float64)
  w = angvel[:, 0, 0].astype(np.float64)
  q = quat[:, 0, 0].astype(np.float64)
  from engine.npquat import quat_conj
  wb = quat_rotate(quat_conj(q), w)
  L = quat_rotate(q, wb * inertia)
  E = 0.5 * (wb * wb * inertia).sum(-1)
  assert np.abs(L - L[0]).max() / np.linalg.norm(L[0]) < 2e-3
  assert abs(E[-1] / E[0] - 1) < 2e-3
