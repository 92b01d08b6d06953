"""The pile (scenes/pile.json): 36 spheres, boxes and capsules dropped together, through the spatial hash."""
import numpy as np
import engine
from helpers import SCENES
from oracle.contacts import max_penetration
from oracle.packed import pack_state


def test_verify_pile_settles_without_overflow():
  """0.75 s: the bodies land on each other and the ground; every pair fits (no overflow), the state stays finite,
  nothing sinks more than 1 mm into anything, nothing falls through the ground or is thrown (speed < 5 m/s)."""
  model = engine.load_scene(SCENES / "pile.json")
  sim = engine.Simulator(model)
  _, frames = sim.rollout(sim.reset(), 180, record_every=30)
  for f in frames:
    pos, vel = f.body_pos.numpy(), f.body_vel.numpy()
    assert np.isfinite(pos).all() and np.isfinite(vel).all()
    assert int(f.contact_overflow.numpy().max()) == 0
    assert float(max_penetration(model, pack_state(f).contiguous()).numpy().max()) < 1e-3
    assert pos[..., 2].min() > 0.04 and np.abs(vel).max() < 5.0
