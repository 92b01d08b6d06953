"""Resting contact (DESIGN sec. 7): a ten-cube stack stands for 10 s."""
import numpy as np
from tests.helpers import record

SECONDS = 10.0


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
