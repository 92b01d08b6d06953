"""Joint armature (issue 19; PROTOTYPE on branch armature-oracle, not wired into the step): after the Jacobi
iterations of a substep, one Newton step of the implicit-Euler objective over every joint coordinate of each tree that
carries armature. The design and its measurements: docs/mjcf.md "Armature", bench/study_armature.py ("joint_all"),
which this stage reproduces in tinygrad, batch first.

MuJoCo's armature A adds (A / 2) qdot^2 to the kinetic energy in the joint's own coordinate q; maximal coordinates
have no body to carry it. The step's objective over a substep, with x~ the poses integrate predicted:
  F(x) = 1/2 |x - x~|_M^2 + sum_j [A_j / 2 (dq_j - h qdot0_j)^2 + c_j h / 2 dq_j^2 - h^2 tau_j dq_j]
(dq_j = q_j - q0_j; c_j the joint's damping, implicit Euler's force -c dq / h; tau_j an armed joint's motor torque).
D_j, joint j's coordinate moving at unit rate, leaves every other joint's coordinate and constraint unchanged: the
child's subtree turns rigidly about the hinge's axis through its anchor (translates along a slide's), and a floating
tree also moves rigidly so that its momentum is unchanged. The Newton step along span(D) is
  (G + diag(A + c h)) d = A (h qdot0 - dq) - c h dq + h^2 tau - <D, x - x~>_M,   G_ij = <D_i, D_j>_M,
and the bodies move by sum_j d_j D_j. G is the tree's joint-space mass matrix.

Prototype limits: parameters shared across the batch; trees of hinges and slides (a ball joint in an armed tree is
refused); no WGSL stage or adjoint yet, so nothing calls it from oracle/step.py.
"""
from __future__ import annotations
from dataclasses import dataclass
from tinygrad import Tensor
from oracle.math3 import V3, Quat
from oracle.packed import DISP, POS, QUAT, ROT, VEL, ANGVEL, WORK_WIDTH


@dataclass(frozen=True)
class ArmTree:
  """One tree's static structure: its bodies, its joints (hinges and slides, root first), each joint's subtree, and
  whether it floats (no joint to the world)."""
  bodies: tuple[int, ...]
  joints: tuple[int, ...]
  subtree: tuple[tuple[int, ...], ...]
  floats: bool


def trees(model) -> list[ArmTree]:
  """Every tree of the model's joint graph (hinges, slides and balls; fixed and distance joints are not coordinates)."""
  par, chi = model.jnt_parent, model.jnt_child
  def sub(b): return (b,) + tuple(x for j in range(model.njoint) if par[j] == b for x in sub(chi[j]))
  out, seen = [], set()
  for b in range(model.nbody):
    up = [par[j] for j in range(model.njoint) if chi[j] == b]
    if up and up[0] >= 0: continue   # not a root
    if b in seen: continue
    body = sub(b)
    seen.update(body)
    joints = tuple(j for j in range(model.njoint) if chi[j] in body)
    bad = [model.jnt_type[j] for j in joints if model.jnt_type[j] not in ("hinge", "slide")]
    if bad: raise ValueError(f"armature: tree of body {b} has {bad[0]} joints (hinges and slides only)")
    out.append(ArmTree(body, joints, tuple(sub(chi[j]) for j in joints), not up))
  return out


def _solve(K: list[list[Tensor]], r: list[Tensor]) -> list[Tensor]:
  """K d = r for a small symmetric positive-definite K given entry by entry (each a (B,) tensor): Gaussian
  elimination without pivoting, unrolled (n is a tree's joint count, or 6)."""
  n = len(r)
  K, r = [row[:] for row in K], r[:]
  for k in range(n):
    for i in range(k + 1, n):
      f = K[i][k] / K[k][k]
      for c in range(k, n): K[i][c] = K[i][c] - f * K[k][c]
      r[i] = r[i] - f * r[k]
  d = [None] * n
  for i in reversed(range(n)):
    s = r[i]
    for c in range(i + 1, n): s = s - K[i][c] * d[c]
    d[i] = s / K[i][i]
  return d


def armature_step(model, tree: ArmTree, work: Tensor, pred: Tensor, start: Tensor, h: float, armature: list[float],
                  damping: list[float], tau: list[Tensor | float]) -> Tensor:
  """The Newton step on the working state `work` (B, nbody, 19) for one tree. pred: the working state integrate
  left (its D and TH are x~'s); start: the packed state at the substep's start (qdot0). armature, damping: per joint
  of the model [kg m^2 or kg], [N m s or N s]; tau: per joint, the armed joint's motor load (B,) or 0."""
  x, q = V3.of(work[..., POS]), Quat.of(work[..., QUAT])
  disp, rot = V3.of(work[..., DISP]), V3.of(work[..., ROT])
  pdisp, prot = V3.of(pred[..., DISP]), V3.of(pred[..., ROT])
  v0, w0 = V3.of(start[..., VEL]), V3.of(start[..., ANGVEL])
  def body(v: V3, b: int) -> V3: return V3(v.x[..., b], v.y[..., b], v.z[..., b])
  def quat(b: int) -> Quat: return Quat(q.w[..., b], q.x[..., b], q.y[..., b], q.z[..., b])
  mass = {b: 1.0 / model.body_inv_mass[b] for b in tree.bodies}
  cols = {b: quat(b).rotation_columns() for b in tree.bodies}
  ii = {b: V3.of(1.0 / model.body_inv_inertia[b]) for b in tree.bodies}
  def inertia(b: int, w: V3) -> V3:   # the world inertia R diag(I) R^T applied to w
    c = cols[b]
    loc = V3(c[0].dot(w), c[1].dot(w), c[2].dot(w)) * ii[b]
    return c[0] * loc.x + c[1] * loc.y + c[2] * loc.z
  def inner(u: dict, v: dict) -> Tensor:
    return sum(u[b][0].dot(inertia(b, v[b][0])) + mass[b] * u[b][1].dot(v[b][1]) for b in u if b in v)

  # each joint's unit-rate motion D_j {body: (omega, v)} and its world axis
  axes, mots = [], []
  for j, sub in zip(tree.joints, tree.subtree):
    p = model.jnt_parent[j]
    axis, anchor = V3.of(model.jnt_axis_parent[j]), V3.of(model.jnt_anchor_parent[j])
    if p >= 0: axis, anchor = quat(p).rotate(axis), body(x, p) + quat(p).rotate(anchor)
    zero = axis * 0.0
    slide = model.jnt_type[j] == "slide"
    mots.append({b: (zero, axis) if slide else (axis, axis.cross(body(x, b) - anchor)) for b in sub})
    axes.append(axis)
  if tree.floats:   # add the tree's rigid motion that cancels each D_j's momentum: S r = -momentum
    S = [[None] * 6 for _ in range(6)]
    for b in tree.bodies:   # the spatial inertia [[I - m [x]^2, m [x]], [-m [x], m 1]] summed over the tree
      xb, m = body(x, b), mass[b]
      for c, e in enumerate(("x", "y", "z")):
        unit = V3(*(xb.x * 0.0 + float(k == c) for k in range(3)))
        top = inertia(b, unit) - xb.cross(xb.cross(unit)) * m   # column c of I - m [x]^2
        low = xb.cross(unit) * (-m)                             # column c of -m [x]
        for r, t in enumerate((top.x, top.y, top.z, low.x, low.y, low.z)):
          S[r][c] = t if S[r][c] is None else S[r][c] + t
        top2 = xb.cross(unit) * m                              # column c of m [x]
        for r, t in enumerate((top2.x, top2.y, top2.z)):
          S[r][3 + c] = t if S[r][3 + c] is None else S[r][3 + c] + t
        for r in range(3):
          t = xb.x * 0.0 + (m if r == c else 0.0)
          S[3 + r][3 + c] = t if S[3 + r][3 + c] is None else S[3 + r][3 + c] + t
    for mot in mots:
      ang, lin = None, None
      for b, (w, v) in mot.items():
        a = inertia(b, w) + body(x, b).cross(v) * mass[b]
        ang, lin = (a, v * mass[b]) if ang is None else (ang + a, lin + v * mass[b])
      rig = _solve(S, [-t for t in (ang.x, ang.y, ang.z, lin.x, lin.y, lin.z)])
      rw, rv = V3(*rig[:3]), V3(*rig[3:])
      for b in tree.bodies:
        w, v = mot.get(b, (rw * 0.0, rv * 0.0))
        mot[b] = (w + rw, v + rv + rw.cross(body(x, b)))

  # the Newton system
  n = len(tree.joints)
  G = [[inner(mots[i], mots[k]) for k in range(n)] for i in range(n)]
  rhs = []
  for i, j in enumerate(tree.joints):
    p, c = model.jnt_parent[j], model.jnt_child[j]
    slide = model.jnt_type[j] == "slide"
    acc, vel = (disp, v0) if slide else (rot, w0)
    dq = (body(acc, c) - (body(acc, p) if p >= 0 else body(acc, c) * 0.0)).dot(axes[i])
    axis0 = V3.of(model.jnt_axis_parent[j])   # the axis at the substep's start, for qdot0
    if p >= 0: axis0 = Quat.of(start[..., p, QUAT]).rotate(axis0)
    qdot0 = (body(vel, c) - (body(vel, p) if p >= 0 else body(vel, c) * 0.0)).dot(axis0)
    gap = inner(mots[i], {b: (body(rot, b) - body(prot, b), body(disp, b) - body(pdisp, b)) for b in mots[i]})
    rhs.append(armature[j] * (h * qdot0 - dq) - damping[j] * h * dq + h * h * tau[j] - gap)
    G[i][i] = G[i][i] + (armature[j] + damping[j] * h)
  d = _solve(G, rhs)

  # move every body of the tree by sum_j d_j D_j
  out = work
  for b in tree.bodies:
    w = sum((mot[b][0] * dk for dk, mot in zip(d, mots) if b in mot), V3(*(x.x[..., b] * 0.0 for _ in range(3))))
    v = sum((mot[b][1] * dk for dk, mot in zip(d, mots) if b in mot), V3(*(x.x[..., b] * 0.0 for _ in range(3))))
    xb, qb = body(x, b) + v, quat(b).add_rotation(w)
    db, rb = body(disp, b) + v, body(rot, b) + w
    row = Tensor.stack(xb.x, xb.y, xb.z, qb.w, qb.x, qb.y, qb.z, *(work[..., b, k] for k in range(7, 13)),
                       db.x, db.y, db.z, rb.x, rb.y, rb.z, dim=-1)
    out = Tensor.cat(out[..., :b, :], row.unsqueeze(-2), out[..., b + 1:, :], dim=-2)
  assert out.shape[-1] == WORK_WIDTH
  return out
