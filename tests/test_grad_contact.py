"""Gradients through contact vs central finite differences in float64 on the CPU device (DESIGN sec. 5).

Where the contact set is the same at theta +- eps the step is smooth, so the adjoint must match finite differences;
everywhere, gradients must be finite (the field's known pain: NaN and exploding gradients through contact)."""
import numpy as np
import pytest
import engine
from tinygrad import Tensor
from engine.grad import rollout_grad
from engine.scene import load_scene_dict
from tests.helpers import EPS, F64, SCENES, reference
from oracle.contacts import penetration
from oracle.packed import pack_state

# the two penetration cases share the box-box narrowphase's kernels when they run in one worker
pytestmark = pytest.mark.xdist_group("contact_grad_f64")


def dropped(scene: str, z0: float, restitution: float, beta: float) -> dict:
  """The scene's body, flat, its centre at z0, sliding at 0.3 m/s, restitution e on its geom, softplus beta."""
  d = load_scene_dict(SCENES / f"{scene}.json")
  body = d["bodies"][0]
  body["pos"], body["quat"], body["vel"] = [0.0, 0.0, z0], [1.0, 0.0, 0.0, 0.0], [0.3, 0.0, 0.0]
  body["geoms"][0]["restitution"] = restitution
  d["contact"] = {"softplus_beta": beta}
  return d


def check_drop_height(scene: dict, steps: int, name: str | None = None) -> float:
  """d z_T / d z_0 by rollout_grad against central differences, for a body that falls 5 cm, hits the ground once
  and is in flight again at step `steps` (one contact episode, the same at z_0 +- eps). Returns the gradient.

  With exact contacts the impact substep projects the body onto the ground and restitution sets its speed from the
  speed before that substep, which only depends on the substep's index: z_T is piecewise constant in z_0 and both
  derivatives are ~0 (1e-4 here, from friction). The softplus contact (DESIGN sec. 3, "on for gradient work")
  makes it smooth and non-zero. The finite difference is the golden file tests/golden/<name>.npz (computed live
  without a name: `make golden` runs no slow test)."""
  model = engine.load_scene(scene, **F64)
  def compute():
    sim = engine.Simulator(model, batch=2)
    s = sim.reset()
    pos = s.body_pos.numpy().copy()
    pos[0, 0, 2] += EPS
    pos[1, 0, 2] -= EPS
    z = sim.rollout(s.replace(body_pos=Tensor(pos, **F64)), steps).body_pos.numpy()[:, 0, 2]
    return {"fd": (z[0] - z[1]) / (2 * EPS)}
  fd = float((compute() if name is None else reference(name, dict(scene=scene, steps=steps, eps=EPS), compute))["fd"])
  loss, adj, _ = rollout_grad(model, engine.Simulator(model).reset(), steps, lambda st: st.body_pos[0, 0, 2])
  g = adj.body_pos.numpy()[0, 0, 2]
  assert np.isfinite(adj.body_pos.numpy()).all() and np.isfinite(adj.body_quat.numpy()).all()
  assert loss.numpy() > 0.1 + 5e-3, "the body should be in flight at the end"
  assert abs(g - fd) <= 1e-3 * abs(fd) + 1e-6, (g, fd)
  return g


def test_grad_drop_height_sphere():
  """A ball (e = 0.8) dropped 5 cm lands after ~24 steps and flies at step 36. Exact contact: zero gradient, as
  finite differences say; softplus (beta = 1e4 / m): a non-zero gradient that matches them."""
  assert abs(check_drop_height(dropped("bounce", 0.15, 0.8, 0.0), 36, "grad_drop_sphere_exact")) < 1e-3   # ODE: ~0.7
  assert abs(check_drop_height(dropped("bounce", 0.15, 0.8, 1e4), 36, "grad_drop_sphere_softplus")) > 0.05


@pytest.mark.slow
def test_grad_drop_height_box():
  """The same for a box with softplus contacts (e = 1; its 8 corner contacts make the per-substep VJP ~300 kernels
  and ~6 min to compile on 2 cores, hence slow), at the drop scene's 2 x 2 budget: its corners land together and the
  restitution stage (oracle/restitution.py) restitutes them as one pair, so it is in flight again at step 30. Before
  the stage, the per-body average of the corners' impulses kept a quarter of the speed change and the box rebounded
  0.6 mm at this budget; the test then ran at 20 substeps of one iteration (13.7 mm)."""
  assert abs(check_drop_height(dropped("drop", 0.15, 1.0, 1e4), 30)) > 0.05


@pytest.mark.slow
def test_grad_stack10_finite():
  """Gradients of the top cube's final position through a 500-step stack10 rollout are finite (float32), through the
  oracle (36 min beside another test, 2026-11-30; the kernel's 500 steps, checked against the oracle at both ends:
  tests/test_grad_kernel.py)."""
  model = engine.load_scene(SCENES / "stack10.json")
  _, adj, params = rollout_grad(model, engine.Simulator(model).reset(), 500,
                                lambda st: st.body_pos[0, 9].sum(), wrt=("geom_friction",))
  for t in (adj.body_pos, adj.body_quat, adj.body_vel, adj.body_angvel, params["geom_friction"]):
    assert np.isfinite(t.numpy()).all()


def two_boxes(gap: float, beta: float) -> dict:
  """A box `gap` above the ground and a second box 0.6 `gap` above it, turned a little so corners and edges meet."""
  return {"name": "near", "contact": {"softplus_beta": beta},
          "world": {"geoms": [{"type": "plane"}]},
          "bodies": [{"name": "a", "pos": [0.0, 0.0, 0.1 + gap], "geoms": [{"type": "box", "size": [0.1, 0.1, 0.1]}]},
                     {"name": "b", "pos": [0.03, 0.01, 0.3 + 1.6 * gap], "quat": [0.995, 0.0, 0.0, 0.0998749],
                      "geoms": [{"type": "box", "size": [0.1, 0.1, 0.1]}]}]}


@pytest.mark.parametrize("beta", [0.0, 1000.0])
def test_grad_penetration_near_contact(beta):
  """Sum of penetrations of two boxes 0.3 mm apart (0.5 mm off the ground): finite gradients with respect to the
  poses; with softplus (beta = 1000/m) non-zero and equal to central differences, with the exact max(d, 0) zero."""
  model = engine.load_scene(two_boxes(5e-4, beta), **F64)
  p0 = pack_state(engine.Simulator(model, batch=1).reset()).numpy()
  p = Tensor(p0, **F64)
  (g,) = penetration(model, p).sum().gradient(p)
  g = g.numpy()
  assert np.isfinite(g).all()
  if beta == 0:
    assert np.abs(g).max() == 0.0
    return
  assert np.abs(g[0, :, 0:3]).max() > 1e-3, "softplus penetration must pull towards contact"
  entries = ((0, 2), (1, 2), (1, 0))
  def compute():   # central differences, one per entry: the golden file (tests/golden.py)
    fd = []
    for body, axis in entries:
      d = np.zeros_like(p0)
      d[0, body, axis] = EPS
      fd.append(penetration(model, Tensor(p0 + d, **F64)).numpy()[0] -
                penetration(model, Tensor(p0 - d, **F64)).numpy()[0])
    return {"fd": np.array(fd) / (2 * EPS)}
  inputs = dict(scene=two_boxes(5e-4, beta), eps=EPS, entries=entries)
  fds = reference(f"grad_penetration_beta{beta:g}", inputs, compute)["fd"]
  for (body, axis), fd in zip(entries, fds):
    assert abs(g[0, body, axis] - fd) <= 1e-3 * abs(fd) + 1e-9, (body, axis, g[0, body, axis], fd)
