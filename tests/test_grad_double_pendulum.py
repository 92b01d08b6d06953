"""Mass gradients and the dot-product test on the double pendulum (float64, CPU)."""
import numpy as np
import pytest
import engine
from tinygrad import Tensor
from engine.grad import rollout_grad
from oracle.packed import pack_state, unpack_state
from tests.helpers import EPS, F64, SCENES, dot_product_case, fd_batch, loss_t, reference

# both tests differentiate the double pendulum's substep: in one worker, the second reuses the first's kernels
pytestmark = pytest.mark.xdist_group("double_pendulum_f64")


def test_grad_final_position_wrt_mass():
  model = engine.load_scene(SCENES / "double_pendulum.json", **F64)
  steps = 40   # 1/6 s, 800 substep VJPs (120 steps took ~4 min of the suite)
  _, _, params = rollout_grad(model, engine.Simulator(model).reset(), steps, loss_t, wrt=("body_inv_mass",))
  im = model.body_inv_mass.numpy()
  m1 = 1.0 / im[1]
  g = params["body_inv_mass"].numpy()[1] * (-1.0 / m1 ** 2)   # d/dm = d/d(1/m) * -1/m^2
  def perturb(m, s):
    inv = m.body_inv_mass.numpy()
    rows = np.stack([inv, inv])
    rows[0, 1], rows[1, 1] = 1.0 / (1.0 / inv[1] + EPS), 1.0 / (1.0 / inv[1] - EPS)
    return m.replace(body_inv_mass=Tensor(rows, **F64)), s
  fd = fd_batch("grad_double_pendulum_mass", "double_pendulum", steps, perturb)
  assert abs(g - fd) <= 1e-4 * max(abs(fd), 1e-3), (g, fd)


def test_grad_dot_product_one_step():
  """<u, J d> = <J^T u, d> for the map initial packed state -> packed state after one step, random u and d over the
  positions and velocities (J d by central differences, J^T u by reverse mode). The kicked state is strongly curved:
  the difference quotient's O(eps^2) error measured 2e-3, 2e-5, 2e-7 relative at eps = 1e-5, 1e-6, 1e-7, converging
  on the adjoint's value, hence eps = 1e-7 here."""
  model = engine.load_scene(SCENES / "double_pendulum.json", **F64)
  s0, p0, d, u, rg = dot_product_case(model)
  eps = 1e-7
  def compute():   # J d: the float64 reference (tests/golden.py)
    def run(p):
      final, _ = rg.forward(unpack_state(Tensor(p, **F64), s0.time), 1)
      return pack_state(final).numpy()
    return {"jd": (run(p0 + eps * d) - run(p0 - eps * d)) / (2 * eps)}
  jd = reference("grad_double_pendulum_jd", dict(scene="double_pendulum", reset_seed=1, noise=0.5, rng=0, eps=eps),
                 compute)["jd"]
  _, checkpoints = rg.forward(s0, 1)
  jtu, _ = rg.backward(checkpoints, Tensor(u, **F64))
  lhs, rhs = float((u * jd).sum()), float((jtu.numpy() * d).sum())
  assert abs(lhs - rhs) <= 1e-6 * max(abs(lhs), 1.0), (lhs, rhs)
