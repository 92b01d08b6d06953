"""Forward kinematics for task resets: body poses and velocities from hinge/slide joint coordinates (qpos, qvel).

The scene's initial pose is qpos = 0. Each body moved by a joint is placed from its parent (processed parents first):
in the parent's frame a hinge turns the child's rest offset about the anchor by qpos (a slide shifts it along the
axis), and the child's velocity is the parent's rigid motion plus the joint rate. Bodies without a hinge/slide joint
keep their initial pose. Everything is tensor math, so resets run inside the jitted env step, per env.
"""
from __future__ import annotations
import numpy as np
from tinygrad import Tensor
from oracle.math3 import V3, Quat
from oracle.packed import pack
from oracle.types import WORLD


def axis_angle(axis: V3, angle: Tensor) -> Quat:
  half = angle * 0.5
  s = half.sin()
  return Quat(half.cos(), axis.x * s, axis.y * s, axis.z * s)


_REST: dict = {}


def rest(model) -> dict[str, np.ndarray]:
  """The model's rest pose and joint frames as float64 numpy, read once per model (not inside a JIT capture, where
  tinygrad forbids reading tensor data). Keyed by the body_pos0 tensor, which randomised copies of a model share."""
  key = id(model.body_pos0)
  if key not in _REST:
    _REST[key] = {f: getattr(model, f).numpy().astype(np.float64) for f in (
      "body_pos0", "body_quat0", "body_vel0", "body_angvel0", "jnt_anchor_parent", "jnt_axis_parent")}
    _REST[key]["_tensor"] = model.body_pos0  # keeps the id valid
  return _REST[key]


def start_pose(model) -> tuple[np.ndarray, np.ndarray] | None:
  """(body_pos (nbody, 3), body_quat (nbody, 4)) float64 of the pose a Simulator resets to when the reference pose
  (qpos = 0) lies outside a limited hinge's or slide's range: that joint starts at its nearest bound (MJCF models do
  this: Gymnasium's ant's ankles). Else None, and the reference pose is the start. Without it the hard limit projects
  the joint there in the first substep, at (violation / h) speed: 5000 rad/s on the ant, whose 1 kg m^2 armature then
  carries it (oracle/armature.py)."""
  r = rest(model)
  if "_start" not in r:
    rng, limited = model.jnt_range.numpy().astype(np.float64), model.jnt_limited.numpy()
    q0 = np.array([min(max(0.0, rng[j, 0]), rng[j, 1]) if limited[j] and model.jnt_type[j] in ("hinge", "slide")
                   else 0.0 for j in range(model.njoint)]).reshape(1, model.njoint)
    r["_start"] = None
    if q0.any():
      from tinygrad import dtypes
      p = forward_kinematics(model, Tensor(q0, dtype=dtypes.float64, device="CPU"),
                             Tensor(q0 * 0.0, dtype=dtypes.float64, device="CPU")).numpy()[0]
      r["_start"] = (p[:, 0:3], p[:, 3:7])
  return r["_start"]


def forward_kinematics(model, qpos: Tensor, qvel: Tensor) -> Tensor:
  """Packed state (B, nbody, 13) from qpos, qvel (B, njoint) (entries of other joint types are ignored)."""
  B = qpos.shape[0]
  r = rest(model)
  pos0, quat0, vel0, angvel0 = r["body_pos0"], r["body_quat0"], r["body_vel0"], r["body_angvel0"]
  def rep(a): return V3(*(Tensor.full((B,), float(c), dtype=qpos.dtype, device=qpos.device) for c in a))
  x = [rep(pos0[b]) for b in range(model.nbody)]
  q = [Quat(*(Tensor.full((B,), float(c), dtype=qpos.dtype, device=qpos.device) for c in quat0[b]))
       for b in range(model.nbody)]
  v, w = [rep(vel0[b]) for b in range(model.nbody)], [rep(angvel0[b]) for b in range(model.nbody)]
  done = [False] * model.nbody
  order = [j for j in range(model.njoint) if model.jnt_type[j] in ("hinge", "slide")]
  for _ in range(len(order) + 1):  # parents first: repeat passes until every driven body is placed
    for j in order:
      p, c = model.jnt_parent[j], model.jnt_child[j]
      if done[c] or (p != WORLD and not done[p] and any(model.jnt_child[k] == p for k in order)): continue
      _place(model, j, p, c, qpos[:, j], qvel[:, j], x, q, v, w, r)
      done[c] = True
  return Tensor.stack(*(pack(x[b], q[b], v[b], w[b]) for b in range(model.nbody)), dim=1)


def _place(model, j, p, c, qj, qdj, x, q, v, w, r):
  """Set body c's pose and velocity from its parent p and joint j's coordinate qj and rate qdj (B,)."""
  from engine.npquat import quat_conj, quat_mul, quat_rotate
  pos0, quat0 = r["body_pos0"], r["body_quat0"]
  qp0 = quat0[p] if p != WORLD else np.array([1.0, 0.0, 0.0, 0.0])
  xp0 = pos0[p] if p != WORLD else np.zeros(3)
  off = quat_rotate(quat_conj(qp0), pos0[c] - xp0)          # child's rest centre in the parent frame
  rel = quat_mul(quat_conj(qp0), quat0[c])                   # child's rest orientation in the parent frame
  anchor, axis = r["jnt_anchor_parent"][j], r["jnt_axis_parent"][j]
  like = qj
  def cv(a): return V3(*(like * 0.0 + float(e) for e in a))
  a_p, off_p, rel_q = cv(axis), cv(off), Quat(*(like * 0.0 + float(e) for e in rel))
  if model.jnt_type[j] == "hinge":
    turn = axis_angle(a_p, qj)
    c_p, r = cv(anchor) + turn.rotate(off_p - cv(anchor)), turn * rel_q
  else:
    c_p, r = off_p + a_p * qj, rel_q
  if p == WORLD:
    xp, qp, vp, wp = cv(np.zeros(3)), Quat(like * 0.0 + 1.0, like * 0.0, like * 0.0, like * 0.0), cv(np.zeros(3)), \
      cv(np.zeros(3))
  else:
    xp, qp, vp, wp = x[p], q[p], v[p], w[p]
  x[c], q[c] = xp + qp.rotate(c_p), qp * r
  a_w = qp.rotate(a_p)
  if model.jnt_type[j] == "hinge":
    anchor_w = xp + qp.rotate(cv(anchor))
    w[c] = wp + a_w * qdj
    v[c] = vp + wp.cross(x[c] - xp) + (a_w * qdj).cross(x[c] - anchor_w)
  else:
    w[c] = wp
    v[c] = vp + wp.cross(x[c] - xp) + a_w * qdj


