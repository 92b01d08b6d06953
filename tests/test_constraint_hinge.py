"""Hinge: anchor and axis both restored; a violated limit is pushed back to its bound (M20 Alg. 3)."""
import math
import numpy as np
from engine.npquat import quat_rotate
from helpers import point_error, solve_once

JOINT = {"type": "hinge", "anchor": [0.25, 0.05, 1.0], "axis": [0.0, 0.0, 1.0]}


def axis_error(model, p) -> float:
  a1 = quat_rotate(p[0, 0, 3:7], model.jnt_axis_parent.numpy()[0])
  a2 = quat_rotate(p[0, 1, 3:7], model.jnt_axis_child.numpy()[0])
  return float(np.linalg.norm(np.cross(a1, a2)))


def hinge_angle(model, p) -> float:
  n1 = quat_rotate(p[0, 0, 3:7], model.jnt_ref_parent.numpy()[0])
  n2 = quat_rotate(p[0, 1, 3:7], model.jnt_ref_child.numpy()[0])
  a = quat_rotate(p[0, 0, 3:7], model.jnt_axis_parent.numpy()[0])
  return math.atan2(np.cross(n1, n2) @ a, n1 @ n2)


def test_verify_hinge_restores_anchor_and_axis():
  for err in (point_error, axis_error):
    before, after, lin, ang = solve_once(JOINT, [0.01, -0.02, 0.015], [0.03, -0.02, 0.01], err)
    assert before > 0.01 and after < before / 50, (err.__name__, before, after)
    assert lin < 1e-12 and ang < 1e-12


def test_verify_hinge_limit():
  """Turned 0.3 rad about the axis with range [-0.1, 0.1]: after one iteration the angle is back at 0.1."""
  before, after, _, _ = solve_once(dict(JOINT, range=[-0.1, 0.1]), [0.0, 0.0, 0.0], [0.0, 0.0, 0.3], hinge_angle)
  assert abs(before - 0.3) < 1e-9 and abs(after - 0.1) < 5e-3, (before, after)
  free, _, _, _ = solve_once(JOINT, [0.0, 0.0, 0.0], [0.0, 0.0, 0.3], hinge_angle)
  _, unlimited, _, _ = solve_once(JOINT, [0.0, 0.0, 0.0], [0.0, 0.0, 0.3], hinge_angle)
  assert abs(unlimited - free) < 5e-3   # without a range the angle is free
