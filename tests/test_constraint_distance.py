"""Distance joint: a rigid rope restores its length along the line between anchors (exact for a scalar constraint
to first order) and conserves momentum; with compliance the step follows XPBD's a~ = alpha/h^2 (Macklin 2016 eq. 18)."""
import numpy as np
from engine.npquat import quat_rotate
from tests.helpers import solve_once

JOINT = {"type": "distance", "anchor_parent": [0.1, 0.0, 1.0], "anchor_child": [0.3, 0.1, 1.0], "length": 0.25}


def length_error(model, p) -> float:
  a = p[0, 0, 0:3] + quat_rotate(p[0, 0, 3:7], model.jnt_anchor_parent.numpy()[0])
  b = p[0, 1, 0:3] + quat_rotate(p[0, 1, 3:7], model.jnt_anchor_child.numpy()[0])
  return float(np.linalg.norm(a - b) - model.jnt_length.numpy()[0])


def test_verify_distance_restores_length():
  before, after, lin, ang, _ = solve_once(JOINT, [0.04, 0.02, 0.0], [0.0, 0.0, 0.0], length_error)
  assert abs(before) > 0.01 and abs(after) < abs(before) / 50, (before, after)
  assert lin < 1e-12 and ang < 1e-12   # a scalar constraint's impulse lies along the gap: exactly conserved


def test_verify_distance_compliance_scales_step():
  """One iteration with compliance alpha moves the error by w/(w + alpha/h^2) of a rigid step."""
  rigid = solve_once(JOINT, [0.04, 0.02, 0.0], [0.0, 0.0, 0.0], length_error)
  soft = solve_once(dict(JOINT, compliance=1e-6), [0.04, 0.02, 0.0], [0.0, 0.0, 0.0], length_error)
  assert abs(soft[1]) > abs(rigid[1]) * 10 and abs(soft[1]) < abs(soft[0])
