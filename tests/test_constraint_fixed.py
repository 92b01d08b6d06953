"""Fixed joint: relative orientation and anchor both restored, momentum conserved."""
import numpy as np
from engine.npquat import quat_conj, quat_mul
from helpers import point_error, solve_once


def orientation_error(model, p) -> float:
  rel = quat_mul(quat_mul(p[0, 0, 3:7], model.jnt_relquat.numpy()[0]), quat_conj(p[0, 1, 3:7]))
  return float(2 * np.linalg.norm(rel[1:]))


def test_verify_fixed_restores_pose():
  for err in (point_error, orientation_error):
    before, after, lin, ang = solve_once({"type": "fixed", "anchor": [0.25, 0.05, 1.0]}, [0.01, 0.02, -0.01],
                                         [0.02, -0.03, 0.04], err)
    assert before > 0.01 and after < before / 20, (err.__name__, before, after)
    assert lin < 1e-12 and ang < 1e-12
