"""Gradients through contact vs central finite differences in float64 on the CPU device (DESIGN sec. 5).

Where the contact set is the same at theta +- eps the step is smooth, so the adjoint must match finite differences;
everywhere, gradients must be finite (the field's known pain: NaN and exploding gradients through contact)."""
import numpy as np
import pytest
import engine
from tinygrad import Tensor, dtypes
from engine.grad import rollout_grad
from engine.scene import load_scene_dict
from helpers import SCENES
from oracle.contacts import penetration
from oracle.packed import pack_state

F64 = dict(dtype=dtypes.float64, device="CPU")
EPS = 1e-6


def bouncing_box() -> dict:
  """A flat box (e = 0.5) 5 cm above the ground: lands after ~24 steps and is in flight again at step 40."""
  d = load_scene_dict(SCENES / "drop.json")
  body = d["bodies"][0]
  body["pos"], body["quat"] = [0.0, 0.0, 0.15], [1.0, 0.0, 0.0, 0.0]
  body["vel"] = [0.3, 0.0, 0.0]
  body["geoms"][0]["restitution"] = 0.5
  return d


def test_grad_drop_height():
  """d z_T / d z_0 of a box that falls, bounces and flies: one contact episode, the same at z_0 +- eps."""
  model, steps = engine.load_scene(bouncing_box(), **F64), 40
  sim = engine.Simulator(model, batch=2)
  s = sim.reset()
  pos = s.body_pos.numpy().copy()
  pos[0, 0, 2] += EPS
  pos[1, 0, 2] -= EPS
  z = sim.rollout(s.replace(body_pos=Tensor(pos, **F64)), steps).body_pos.numpy()[:, 0, 2]
  fd = (z[0] - z[1]) / (2 * EPS)
  loss, adj, _ = rollout_grad(model, engine.Simulator(model).reset(), steps, lambda st: st.body_pos[0, 0, 2])
  g = adj.body_pos.numpy()[0, 0, 2]
  assert np.isfinite(adj.body_pos.numpy()).all() and np.isfinite(adj.body_quat.numpy()).all()
  assert abs(loss.numpy() - 0.1) > 1e-3, "the box should be in flight at the end"
  assert abs(g - fd) <= 1e-3 * abs(fd), (g, fd)
  assert abs(fd) > 0.05, f"the final height should depend on the drop height, fd = {fd}"


def two_boxes(gap: float, beta: float) -> dict:
  """A box `gap` above the ground and a second box `gap` above it, turned a little so corners and edges meet."""
  return {"name": "near", "contact": {"softplus_beta": beta},
          "world": {"geoms": [{"type": "plane"}]},
          "bodies": [{"name": "a", "pos": [0.0, 0.0, 0.1 + gap], "geoms": [{"type": "box", "size": [0.1, 0.1, 0.1]}]},
                     {"name": "b", "pos": [0.03, 0.01, 0.3 + 2 * gap], "quat": [0.995, 0.0, 0.0, 0.0998749],
                      "geoms": [{"type": "box", "size": [0.1, 0.1, 0.1]}]}]}


@pytest.mark.parametrize("beta", [0.0, 1000.0])
def test_grad_penetration_near_contact(beta):
  """Sum of penetrations of two boxes 1 mm apart (and 1 mm off the ground): finite gradients with respect to the
  poses; with softplus (beta = 1000/m) non-zero and equal to central differences, with the exact max(d, 0) zero."""
  model = engine.load_scene(two_boxes(1e-3, beta), **F64)
  p0 = pack_state(engine.Simulator(model, batch=1).reset()).numpy()
  p = Tensor(p0, **F64)
  (g,) = penetration(model, p).sum().gradient(p)
  g = g.numpy()
  assert np.isfinite(g).all()
  if beta == 0:
    assert np.abs(g).max() == 0.0
    return
  assert np.abs(g[0, :, 0:3]).max() > 1e-3, "softplus penetration must pull towards contact"
  for body, axis in ((0, 2), (1, 2), (1, 0)):
    d = np.zeros_like(p0)
    d[0, body, axis] = EPS
    fd = (penetration(model, Tensor(p0 + d, **F64)).numpy()[0] - penetration(model, Tensor(p0 - d, **F64)).numpy()[0])
    fd /= 2 * EPS
    assert abs(g[0, body, axis] - fd) <= 1e-3 * abs(fd) + 1e-9, (body, axis, g[0, body, axis], fd)
