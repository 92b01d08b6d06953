"""Fixed joint: relative orientation and anchor both restored, momentum conserved."""
import numpy as np
from engine.npquat import quat_conj, quat_mul
from tests.helpers import impulse_pair_bound, point_error, solve_once


def orientation_error(model, p) -> float:
  rel = quat_mul(quat_mul(p[0, 0, 3:7], model.jnt_relquat.numpy()[0]), quat_conj(p[0, 1, 3:7]))
  return float(2 * np.linalg.norm(rel[1:]))


def test_verify_fixed_restores_pose():
  joint, kick = {"type": "fixed", "anchor": [0.25, 0.05, 1.0]}, ([0.01, 0.02, -0.01], [0.02, -0.03, 0.04])
  gap = solve_once(joint, *kick, point_error)[0]
  for err in (point_error, orientation_error):   # sequential parts converge over iterations (see the hinge test)
    before, after, lin, ang, impulse = solve_once(joint, *kick, err, iterations=4)
    assert before > 0.01 and after < before / 50, (err.__name__, before, after)
    assert lin < 1e-12 and ang <= impulse_pair_bound(1.5 * gap, impulse), (lin, ang)
