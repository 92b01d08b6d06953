"""Reverse mode through the armature stage (oracle/armature.py, tinygrad autograd), by the dot-product test against
float64 central differences: the double pendulum with armature on both hinges (a two-joint tree, G off-diagonal), and
again with the elbow's range so narrow that the step ends on its bound (the limit rows and the step's pins act); and
the study's cart on a slide carrying an armed two-link arm (bench/study_armature.py CART), whose slide's zero turn
axis gave NaN gradients before oracle/armature.py _turn kept its norm's root off zero."""
import json
import pytest
import engine
from tinygrad import Tensor
from oracle.packed import pack_state, unpack_state
from tests.helpers import F64, SCENES, dot_product_case


def _scene(limited: bool) -> dict:
  scene = json.loads((SCENES / "double_pendulum.json").read_text())
  for j, a in zip(scene["joints"], (0.05, 0.02)): j["armature"] = a
  if limited: scene["joints"][1]["range"] = [-1e-4, 1e-4]   # the kick below turns the elbow by -3e-4 rad in the step
  return scene


def _cart_scene(tmp) -> dict:
  import sys
  import warnings
  from pathlib import Path
  pytest.importorskip("mujoco")
  from engine.mjcf import MJCFWarning, from_mjcf
  root = Path(__file__).resolve().parent.parent
  sys.path.insert(0, str(root / "bench"))
  import study_armature
  path = tmp / "cart_arm.xml"
  path.write_text(study_armature.CART)
  with warnings.catch_warnings():
    warnings.simplefilter("ignore", MJCFWarning)
    return {**from_mjcf(path), "substeps": 4}


# the cart in `make test-slow`: its backward (tinygrad's VJP of the armed tree with a slide, float64) compiles in
# 70-135 s, the suite's longest test (2026-11-27); and the free double pendulum (42 s): the limited case runs the same
# code (the step's three solves, the pins then not all zero), and the suite's budget is 20 minutes
@pytest.mark.parametrize("limited", [pytest.param(False, marks=pytest.mark.slow), True,
                                     pytest.param("cart", marks=pytest.mark.slow)],
                         ids=["free", "limited", "cart"])
def test_grad_armature_dot_product_one_step(limited, tmp_path):
  """<u, J d> = <J^T u, d> for the map initial packed state -> packed state after one step, random u and d over the
  positions and velocities. eps = 1e-7 as for the plain double pendulum (tests/test_grad_double_pendulum.py, where the
  quotient's O(eps^2) error measured 2e-7 relative there)."""
  model = engine.load_scene(_cart_scene(tmp_path) if limited == "cart" else _scene(limited), **F64)
  s0, p0, d, u, rg = dot_product_case(model)
  def run(p):
    final, _ = rg.forward(unpack_state(Tensor(p, **F64), s0.time), 1)
    return pack_state(final).numpy()
  eps = 1e-7
  jd = (run(p0 + eps * d) - run(p0 - eps * d)) / (2 * eps)
  _, checkpoints = rg.forward(s0, 1)
  jtu, _ = rg.backward(checkpoints, Tensor(u, **F64))
  lhs, rhs = float((u * jd).sum()), float((jtu.numpy() * d).sum())
  if limited is True:   # the limit acts: the elbow (free: -3e-4 rad after the step) ends at its bound
    from oracle.joints import joint_coords
    elbow = float(joint_coords(model, Tensor(run(p0), **F64))[0].numpy()[0, 1])
    assert abs(elbow + 1e-4) < 1e-5, elbow
  print(f"limited={limited}: <u, J d> {lhs:.10g}, <J^T u, d> {rhs:.10g}, relative {abs(lhs - rhs) / abs(lhs):.2g}")
  assert abs(lhs - rhs) <= 1e-6 * max(abs(lhs), 1.0), (lhs, rhs)
