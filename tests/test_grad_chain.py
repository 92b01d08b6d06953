"""Gradients stay finite through long rollouts of the 10-link chain (float32, the default precision).

Each substep VJP of the chain runs ~240 small kernels on the CPU device (~25 ms): 100 steps take ~1.5-3 min. Both
checks here, 50 steps and 1,000 (20,000 substep VJPs: 47 min beside another test, 2026-11-30), are in `make test-slow`.
Parameter gradients are checked against finite differences on the pendulums (tests/test_grad_*.py); here the state's."""
import numpy as np
import pytest
import engine
from engine.grad import rollout_grad
from tests.helpers import SCENES


def check_finite(steps: int):
  model = engine.load_scene(SCENES / "chain.json")
  state = engine.Simulator(model).reset()
  _, adj, _ = rollout_grad(model, state, steps, lambda s: s.body_pos[0, -1, 0] + s.body_pos[0, -1, 2])
  for name in ("body_pos", "body_vel", "body_quat", "body_angvel"):
    assert np.isfinite(getattr(adj, name).numpy()).all(), name
  assert np.abs(adj.body_vel.numpy()).max() > 0, "gradient vanished"


# in `make test-slow` (79 s in the 2-worker suite, 2026-11-27): the default suite's long oracle gradients are the
# double pendulum's (tests/test_grad_double_pendulum.py, 40 steps against finite differences), and the chain's long
# horizon runs there through the kernel (tests/test_grad_kernel.py, 1,000 steps, both ends against the oracle)
@pytest.mark.slow
def test_grad_chain_50_steps_finite():
  check_finite(50)


@pytest.mark.slow
def test_grad_chain_1000_steps_finite():
  check_finite(1000)
