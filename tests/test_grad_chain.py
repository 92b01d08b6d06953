"""Gradients stay finite through a long rollout of the 10-link chain (float32, the default precision).

The slowest test (~10 min on 2 cores): 20,000 substep VJPs of ~240 small kernels each on the CPU device. Parameter
gradients are checked against finite differences on the pendulums (tests/test_grad_*.py); here the state's."""
import numpy as np
import engine
from engine.grad import rollout_grad
from helpers import SCENES


def test_grad_chain_1000_steps_finite():
  model = engine.load_scene(SCENES / "chain.json")
  state = engine.Simulator(model).reset()
  loss, adj, params = rollout_grad(model, state, 1000, lambda s: s.body_pos[0, -1, 0] + s.body_pos[0, -1, 2])
  for name in ("body_pos", "body_vel", "body_quat", "body_angvel"):
    g = getattr(adj, name).numpy()
    assert np.isfinite(g).all(), name
  assert np.abs(adj.body_vel.numpy()).max() > 0, "gradient vanished"
  for name, g in params.items(): assert np.isfinite(g.numpy()).all(), name
