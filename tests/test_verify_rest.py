"""Resting contact (DESIGN sec. 7): a dropped box comes to rest and stays; a ten-cube stack stands for 10 s."""
import numpy as np
from helpers import record

SECONDS = 10.0


def test_verify_drop_box_rests():
  """The box lands (tilted 15 deg), settles within 2 s, then for the remaining 8 s drifts < 2 mm and never sinks
  more than 1 mm into the ground (its centre stays above half its height minus 1 mm)."""
  run = record("drop", int(SECONDS * 240))
  pos, t = run["pos"][:, 0, 0], run["t"]
  settled = t >= 2.0
  drift = np.abs(pos[settled] - pos[settled][0]).max()
  assert drift < 2e-3, f"drifted {drift * 1e3:.2f} mm while resting"
  assert pos[:, 2].min() > 0.1 - 1e-3, f"sank to {pos[:, 2].min():.5f} m (resting height 0.1 m)"
  assert abs(pos[-1, 2] - 0.1) < 1e-3 and np.abs(run["vel"][-1]).max() < 1e-3


def test_verify_stack10_stands():
  """Ten 0.2 m cubes stacked exactly: after 10 s the top cube has moved < 2 mm and no cube has sunk > 1 mm into the
  one below (or the ground)."""
  run = record("stack10", int(SECONDS * 240))
  pos = run["pos"][:, 0]                                   # (T, 10, 3)
  top = np.abs(pos[:, 9] - pos[0, 9]).max()
  assert top < 2e-3, f"the top cube moved {top * 1e3:.2f} mm"
  gaps = np.diff(np.concatenate([np.zeros_like(pos[:, :1, 2]), pos[:, :, 2]], axis=1), axis=1)  # (T, 10)
  want = np.array([0.1] + [0.2] * 9)
  sink = (want - gaps).max()
  assert sink < 1e-3, f"a cube sank {sink * 1e3:.3f} mm into the one below"
  assert np.abs(pos[:, :, :2]).max() < 2e-3, "the stack leans"
