"""Resting contact (DESIGN sec. 7): a dropped box comes to rest and stays for 10 s."""
import numpy as np
from tests.helpers import record

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
