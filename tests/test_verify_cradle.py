"""Newton's cradle (scenes/cradle.json): with 1 mm gaps the collisions are pairwise and the momentum of the first
ball travels down the row, so the last ball leaves with nearly the first ball's speed."""
import numpy as np
from tests.helpers import record


def test_verify_cradle_transfers_momentum():
  run = record("cradle", int(0.6 * 240))
  vx = run["vel"][:, 0, :, 0]                              # (T, 5)
  hit = int(np.argmax(vx[:, 1] > 1e-3))                     # first step ball 1 moves: ball 0 has struck
  assert hit > 0, "ball 0 never struck ball 1"
  v_in = vx[:hit, 0].max()                                  # ball 0's speed just before impact
  v_out = vx[hit:, 4].max()                                 # ball 4's speed as it leaves
  assert v_out > 0.9 * v_in, f"last ball leaves at {v_out:.3f} m/s, first arrived at {v_in:.3f} m/s"
  assert np.abs(vx[hit + 12:, 0]).max() < 0.1 * v_in, "the first ball should stop"
