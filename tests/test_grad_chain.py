"""Gradients stay finite through long rollouts of the 10-link chain (float32, the default precision).

Each substep VJP of the chain runs ~240 small kernels on the CPU device (~25 ms): 100 steps take ~1.5-3 min; 50 run by
default; the 1,000-step check (20,000 substep VJPs, well over 10 min on 2 cores) is marked slow: `make test-slow`.
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


def test_grad_chain_50_steps_finite():
  check_finite(50)


@pytest.mark.slow
def test_grad_chain_1000_steps_finite():
  check_finite(1000)
