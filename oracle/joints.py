"""Joint coordinates: the generalised position and velocity of hinge and slide joints (MuJoCo's qpos/qvel), for
observations and servo tests. Derived from the maximal-coordinate state. A planar joint reads its angle about the
normal, as a hinge (its two translations are the child's position); a slide2 joint its first coordinate, as a slide
(its second is the child's position along axis2); each of two or three hinges on one body (hinge2, hinge3) its own
angle, MuJoCo's qpos; other joint types read 0."""
from __future__ import annotations
from tinygrad import Tensor
from oracle.constraints.hinge import hinge_angle
from oracle.constraints.hinges import GROUPED, hinge_angles, limit_rows, members
from oracle.constraints.slide import slide_frame
from oracle.math3 import V3, take
from oracle.packed import ANGVEL, VEL
from oracle.solve import gather_side, joint_sides, solver_sides


def joint_coords(model, packed: Tensor) -> tuple[Tensor, Tensor]:
  """(qpos, qvel), each (B, njoint): hinge angle [rad] (signed, in [-pi, pi], 0 at the initial pose) and the child's
  angular velocity about the axis relative to the parent [rad/s]; slide position [m] (0 at the initial pose) and
  velocity [m/s] of the child's anchor along the axis. packed: (B, nbody, 13) (oracle/packed.py)."""
  B = packed.shape[0]
  cols: dict[int, tuple[Tensor, Tensor]] = {}
  def vec(sl, bodies): return V3(*(take(packed[..., sl][..., i], bodies) for i in range(3)))
  for kind in ("hinge", "slide", "planar", "slide2"):
    jidx, par, chi = joint_sides(model, kind)
    if not jidx: continue
    s1, s2 = gather_side(model, packed, par), gather_side(model, packed, chi)
    w1, w2 = vec(ANGVEL, par), vec(ANGVEL, chi)
    if kind not in ("slide", "slide2"):
      q, a = hinge_angle(model, jidx, s1, s2)
      qd = (w2 - w1).dot(a)
    else:
      a, r1, r2, q = slide_frame(model, jidx, s1, s2)
      qd = ((vec(VEL, chi) + w2.cross(r2)) - (vec(VEL, par) + w1.cross(r1))).dot(a)
    for k, j in enumerate(jidx): cols[j] = (q[..., k], qd[..., k])
  for kind in GROUPED:   # each hinge of a group: its angle, and its rate n_i . (w2 - w1) (hinges.limit_rows)
    jidx, par, chi = solver_sides(model, kind)
    if not jidx: continue
    t, w = hinge_angles(model, jidx, gather_side(model, packed, par), gather_side(model, packed, chi))
    rel = vec(ANGVEL, chi) - vec(ANGVEL, par)
    for i, n in enumerate(limit_rows(w)[:len(t)]):
      for k, j in enumerate(members(model, jidx, i)): cols[j] = (t[i][..., k], n.dot(rel)[..., k])
  zero = Tensor.zeros(B, dtype=packed.dtype, device=packed.device)
  if not model.njoint: return zero.reshape(B, 0), zero.reshape(B, 0)
  qpos = Tensor.stack(*(cols.get(j, (zero, zero))[0] for j in range(model.njoint)), dim=-1)
  qvel = Tensor.stack(*(cols.get(j, (zero, zero))[1] for j in range(model.njoint)), dim=-1)
  return qpos, qvel
