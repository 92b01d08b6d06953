"""The pile (scenes/pile.json): 36 spheres, boxes and capsules dropped together, through the spatial hash."""
import numpy as np
from tinygrad import Tensor
import engine
from tests.helpers import SCENES, packed_rows
from oracle.contacts import max_penetration


def test_verify_pile_settles_without_overflow():
  """0.75 s: the bodies start apart (no overlap: an overlap would be pushed out in one substep, at metres per
  second), land on each other and the ground; every pair fits (no overflow), the state stays finite, nothing sinks
  more than 1 mm into anything, nothing falls through the ground or is thrown (speed < 5 m/s)."""
  model = engine.load_scene(SCENES / "pile.json")
  sim = engine.Simulator(model)
  _, run = sim.trajectory(sim.reset(), 180, every=30)
  packed = packed_rows(run)   # (T, 1, nbody, 13)
  assert np.isfinite(packed).all()
  assert int(run["overflow"].max()) == 0
  # every recorded state as one batch: one narrowphase graph instead of one per frame
  deepest = max_penetration(model, Tensor(packed[:, 0]).contiguous()).numpy()                 # (T,)
  assert deepest[0] == 0.0, f"bodies overlap at the start by {deepest[0] * 1e3:.2f} mm"
  assert deepest.max() < 1e-3, f"penetration {deepest.max() * 1e3:.2f} mm"
  assert run["pos"][..., 2].min() > 0.04 and np.abs(run["vel"]).max() < 5.0
  assert run["pos"][-1, ..., 2].max() < 0.5, "the pile did not fall"
