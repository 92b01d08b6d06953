"""Hinge: anchor and axis both restored; a violated limit is pushed back to its bound (M20 Alg. 3)."""
import math
import numpy as np
from engine.npquat import quat_rotate
from tests.helpers import impulse_pair_bound, point_error, solve_once

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
  """The parts are projected in sequence (align, limit, attach), so the attachment re-tilts the axis to first order
  within one pass; iterations converge: both errors fall over 50x in 4 iterations."""
  gap = solve_once(JOINT, [0.01, -0.02, 0.015], [0.03, -0.02, 0.01], point_error)[0]
  for err in (point_error, axis_error):
    before, after, lin, ang, impulse = solve_once(JOINT, [0.01, -0.02, 0.015], [0.03, -0.02, 0.01], err, iterations=4)
    assert before > 0.01 and after < before / 50, (err.__name__, before, after)
    # the axis alignment is a pure torque pair; the point attachment (after it) an impulse pair across the gap
    assert lin < 1e-12 and ang <= impulse_pair_bound(1.5 * gap, impulse), (lin, ang)


def test_verify_hinge_limit():
  """Turned 0.3 rad about the axis (about body b's centre, so the anchor opens too) with range [-0.1, 0.1]: the
  limit and the attachment are projected in sequence, and within 4 iterations the angle is back at the bound."""
  before, after, *_ = solve_once(dict(JOINT, range=[-0.1, 0.1]), [0.0, 0.0, 0.0], [0.0, 0.0, 0.3], hinge_angle,
                                 iterations=4)
  assert abs(before - 0.3) < 1e-9 and abs(after - 0.1) < 5e-3, (before, after)
  _, unlimited, *_ = solve_once(JOINT, [0.0, 0.0, 0.0], [0.0, 0.0, 0.3], hinge_angle, iterations=4)
  assert unlimited > 0.2, unlimited    # without a range nothing pulls the angle back to 0.1
