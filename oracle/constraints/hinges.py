"""Two or three hinges on one body (MuJoCo's multi-joint body: Gymnasium's humanoid's waist, thighs and upper arms).

MuJoCo turns the child by each hinge in order: with a_i the axes at the initial pose, the child's rotation relative to
its rest pose is E = exp(t1 a1) exp(t2 a2) [exp(t3 a3)]. So a1 is fixed in the parent, the last axis in the child,
and every hinge of the group is a joint of the scene (its own range, damping, armature, motor), the group's joints
consecutive, all joining the same parent and child at one anchor (Model.jnt_group). The derivation and its checks
against MuJoCo: bench/study_hinges.py.

- hinge2 (two hinges, a Hooke joint): the ball's three positional rows and one angular row, a1 (parent) . a2 (child)
  held at its rest value (study claim 1); the third direction of turn is locked, the other two are the coordinates.
- hinge3 (three hinges with independent axes): the ball's rows; the turn is free but for the limits. The coordinates
  are Davenport angles (hinge_angles, study claim 2).
- Each coordinate's limit is an angular row along n_i, row i of [w1 w2 w3]^-1 (w_i the hinges' world axes, w3 the
  Hooke row's direction for a pair): the gradient of t_i with respect to the child's turn (study claim 5).

The group is solved as one joint, its leader's (the first hinge's) row of the Jacobi solve: the Hooke row, the limits
in order, then the anchors (as the hinge: M20 Alg. 3). The other hinges of the group have no rows of their own and do
not count in the Jacobi averages (solve.solver_joints, solve.joint_counts)."""
from __future__ import annotations
from tinygrad import Tensor
from oracle.constraints import register, jvec
from oracle.constraints.ball import attach
from oracle.math3 import V3, atan2, take
from oracle.xpbd import angular, apply, chain

GROUPED = ("hinge2", "hinge3")


def members(model, jidx: tuple[int, ...], k: int) -> tuple[int, ...]:
  """The k-th hinge of each leader's group (k = 0: the leaders themselves)."""
  return tuple(model.jnt_group[j][k] for j in jidx)


def turn(k: V3, v: V3, angle: Tensor) -> V3:
  """v turned by `angle` about the unit k (Rodrigues)."""
  c, s = angle.cos(), angle.sin()
  return v * c + k.cross(v) * s + k * (k.dot(v) * (1.0 - c))


def turn_about(axis: V3, a: V3, b: V3) -> Tensor:
  """The signed angle about the unit `axis` that takes a's component across it onto b's."""
  return atan2(axis.dot(a.cross(b)), a.dot(b) - axis.dot(a) * axis.dot(b))


def hinge_angles(model, jidx: tuple[int, ...], s1, s2) -> tuple[list[Tensor], list[V3]]:
  """Each leader's group's coordinates t_i [rad] (0 at the initial pose) and the hinges' world axes w_i (a pair's
  third axis: the locked direction w1 x w2), (B, J) each; jidx: leaders of one group size."""
  def parent(k): return s1.q.rotate(jvec(model, "jnt_axis_parent", members(model, jidx, k)))
  def child(k): return s2.q.rotate(jvec(model, "jnt_axis_child", members(model, jidx, k)))
  def rest(k): return jvec(model, "jnt_axis_parent", members(model, jidx, k))   # the parent's frame, at rest
  w1 = parent(0)
  if model.jnt_type[jidx[0]] == "hinge2":
    w2 = child(1)
    return [turn_about(w1, parent(1), w2), turn_about(w2, w1, child(0))], [w1, w2, w1.cross(w2)]
  w3 = child(2)
  a1, a2, a3 = rest(0), rest(1), rest(2)
  # t2: a1 . E a3 = a1 . exp(t2 a2) a3 = p cos t2 + q sin t2 + r (exp(t1 a1) keeps the dot with a1); the root nearer 0
  r = a1.dot(a2) * a2.dot(a3)
  p, q = a1.dot(a3) - r, a1.dot(a2.cross(a3))
  amp = (p * p + q * q).sqrt()
  c = ((w1.dot(w3) - r) / amp).maximum(-1.0).minimum(1.0)
  off = atan2((1.0 - c * c).maximum(1e-30).sqrt(), c)   # acos(c), in [0, pi]
  phase = atan2(q, p)
  def wrapped(x): return atan2(x.sin(), x.cos())
  up, down = wrapped(phase + off), wrapped(phase - off)
  t2 = (up.abs() <= down.abs()).where(up, down)
  t1 = turn_about(w1, s1.q.rotate(turn(a2, a3, t2)), w3)
  a1c, a2c = jvec(model, "jnt_axis_child", jidx), jvec(model, "jnt_axis_child", members(model, jidx, 1))
  t3 = turn_about(w3, w1, s2.q.rotate(turn(a2c, a1c, -t2)))
  w2 = s1.q.rotate(turn(a1, a2, t1))
  return [t1, t2, t3], [w1, w2, w3]


def limit_rows(w: list[V3]) -> list[V3]:
  """Row i of [w1 w2 w3]^-1 (columns w_i): d t_i = n_i . d phi for a turn d phi of the child (study claim 5)."""
  det = w[0].dot(w[1].cross(w[2]))
  return [w[1].cross(w[2]) / det, w[2].cross(w[0]) / det, w[0].cross(w[1]) / det]


def hooke_row(model, jidx, s1, s2, lam):
  """A pair's angular row: w1 . w2 back to a1 . a2 at rest, turning about w2 x w1, the gradient of w1 . w2 with
  respect to the child's turn; always rigid, as a hinge's alignment."""
  w1 = s1.q.rotate(jvec(model, "jnt_axis_parent", jidx))
  w2 = s2.q.rotate(jvec(model, "jnt_axis_child", members(model, jidx, 1)))
  rest = jvec(model, "jnt_axis_parent", jidx).dot(jvec(model, "jnt_axis_parent", members(model, jidx, 1)))
  g, n, on = w2.cross(w1).norm_dir(1e-12)
  return angular(s1, s2, n, -(w1.dot(w2) - rest) / on.where(g, 1.0), on, lam, 0.0)


def group(model, jidx, s1, s2, lam, h):
  """One group size's rows (the module's docstring); lam: the 3 positional rows', then a pair's Hooke row's and its
  2 limits', or a triple's 3 limits': 6 (no more than a hinge's, so that the kernels' multiplier rows keep their
  width)."""
  parts, out = [], list(lam)
  pair = model.jnt_type[jidx[0]] == "hinge2"
  if pair:
    c, out[3] = hooke_row(model, jidx, s1, s2, lam[3])
    s1, s2 = apply(s1, s2, c)
    parts.append(c)
  for i in range(2 if pair else 3):
    li = 4 + i if pair else 3 + i
    t, w = hinge_angles(model, jidx, s1, s2)
    n = limit_rows(w)[i]
    size, unit, _ = n.norm_dir(1e-12)
    k = members(model, jidx, i)
    rng = take(model.jnt_range, k, axis=-2)
    lo, hi = rng[..., 0], rng[..., 1]
    target = t[i].maximum(lo).minimum(hi)
    violated = (take(model.jnt_limited, k) > 0) & ((t[i] < lo) | (t[i] > hi))
    c, out[li] = angular(s1, s2, unit, (target - t[i]) / size, violated, lam[li], 0.0)
    s1, s2 = apply(s1, s2, c)
    parts.append(c)
  pos, out[0:3] = attach(model, jidx, s1, s2, lam[0:3], h)
  return chain(*parts, pos), tuple(out)


@register("hinge2", nlam=6)
def hinge2(model, jidx, s1, s2, lam, h, ctrl=None):
  return group(model, jidx, s1, s2, lam, h)


@register("hinge3", nlam=6)
def hinge3(model, jidx, s1, s2, lam, h, ctrl=None):
  return group(model, jidx, s1, s2, lam, h)
