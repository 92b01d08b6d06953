"""Joint armature and stiffness (issue 19): after the Jacobi iterations of a substep, one Newton step of the
implicit-Euler objective over every joint coordinate of each tree that carries armature or a joint spring. The design
and its measurements:
docs/mjcf.md "Armature", bench/study_armature.py ("joint_all"), which this stage reproduces in tinygrad, batch first.

MuJoCo's armature A adds (A / 2) qdot^2 to the kinetic energy in the joint's own coordinate q; maximal coordinates
have no body to carry it. The step's objective over a substep, with x~ the poses integrate predicted:
  F(x) = 1/2 |x - x~|_M^2 + sum_j [A_j / 2 (dq_j - h qdot0_j)^2 + c_j h / 2 dq_j^2 + k_j h^2 / 2 (q_j - s_j)^2
                                   - h^2 tau_j dq_j]
(dq_j = q_j - q0_j; c_j the joint's damping, implicit Euler's force -c dq / h; k_j its stiffness, MuJoCo's spring
-k (q - s) towards springref s, implicit too; tau_j an armed joint's motor torque).
D_j, joint j's coordinate moving at unit rate, leaves every other joint's coordinate and constraint unchanged: the
child's subtree turns rigidly about the hinge's axis through its anchor (translates along a slide's), and a floating
tree also moves rigidly so that its momentum is unchanged. The Newton step along span(D) is
  (G + diag(A + c h + k h^2)) d = A (h qdot0 - dq) - c h dq - k h^2 (q - s) + h^2 tau - <D, x - x~>_M,
with G_ij = <D_i, D_j>_M (q the coordinate at the working state, as oracle/joints.py reads it),
and the bodies move by the rigid motions sum_j d_j D_j integrates to. G is the tree's joint-space mass matrix. Limited
joints enter as an active set (_limited); the contacts get a last Jacobi pass after the step (oracle/step.py).

Limits: parameters shared across the batch (armature, stiffness and springref static); trees of hinges and slides,
the root free or on a planar joint to the world, two or three hinges on one body among them (a ball joint in an armed
tree is refused). kernels/armature.wgsl is the
forward kernel's, kernels/adjoint/armature.wgsl (armature_adj) the backward kernel's.
"""
from __future__ import annotations
from dataclasses import dataclass
import numpy as np
from tinygrad import Tensor
from oracle.constraints.hinges import GROUPED, hinge_angles, limit_rows
from oracle.math3 import const as cached
from oracle.packed import ANGVEL, DISP, POS, QUAT, ROT, VEL
from oracle.solve import gather_side


@dataclass(frozen=True)
class ArmTree:
  """One tree's static structure: its bodies, its joints (hinges and slides, root first), each joint's subtree,
  whether it floats (no joint to the world, or a planar one) and the planar joint that holds its root (-1: none)."""
  bodies: tuple[int, ...]
  joints: tuple[int, ...]
  subtree: tuple[tuple[int, ...], ...]
  floats: bool
  plane: int = -1


def trees(model) -> list[ArmTree]:
  """Every tree of the model's joint graph (hinges, slides and balls; fixed and distance joints are not coordinates).
  A root on a planar joint to the world floats within the plane: the joint is the tree's plane, not one of its
  joints. Two or three hinges on one body (oracle/constraints/hinges.py) are joints of the tree, each with the body's
  subtree (listed once)."""
  par, chi = model.jnt_parent, model.jnt_child
  def sub(b): return (b,) + tuple(x for c in dict.fromkeys(chi[j] for j in range(model.njoint) if par[j] == b)
                                  for x in sub(c))
  out, seen = [], set()
  for b in range(model.nbody):
    up = [par[j] for j in range(model.njoint) if chi[j] == b]
    if up and up[0] >= 0: continue   # not a root
    if b in seen: continue
    body = sub(b)
    seen.update(body)
    plane = up_j[0] if (up_j := [j for j in range(model.njoint) if chi[j] == b]) and \
        model.jnt_type[up_j[0]] == "planar" else -1
    joints = tuple(j for j in range(model.njoint) if chi[j] in body and j != plane)
    bad = [j for j in joints if model.jnt_type[j] not in ("hinge", "slide") + GROUPED]
    armed = [j for j in joints if model.jnt_armature[j] or model.jnt_stiffness[j]]
    if bad and armed:   # only armed trees are refused: trees() also lists the others, which the stage skips
      raise ValueError(f"joint '{model.jnt_name[armed[0]]}': armature or stiffness needs a tree of hinges and "
                       f"slides; joint '{model.jnt_name[bad[0]]}' in its tree is a {model.jnt_type[bad[0]]} joint")
    out.append(ArmTree(body, joints, tuple(sub(chi[j]) for j in joints), not up or plane >= 0, plane))
  return out


def _group_axes(model, js: list[int], packed: Tensor) -> dict[int, tuple[Tensor, Tensor]]:
  """Each hinge of a group among the joints js (oracle/constraints/hinges.py), by joint: its world axis w_i, about which
  its D_i turns the child's subtree (a turn about w_i moves t_i alone: bench/study_hinges.py, claim 4), and its rate
  row n_i, row i of [w1 w2 w3]^-1 (d t_i = n_i . d phi for a turn d phi of the child: claim 5), (B or 1, 3) each
  (kernels/armature.wgsl arm_axis). One group's frame serves its hinges."""
  frames, out = {}, {}
  for j in js:
    group = model.jnt_group[j]
    if not group: continue
    if group[0] not in frames:
      _, w = hinge_angles(model, group[:1], *(gather_side(model, packed, (b,)) for b in (model.jnt_parent[j],
                                                                                         model.jnt_child[j])))
      frames[group[0]] = (w, limit_rows(w))
    w, n = frames[group[0]]
    i = group.index(j)
    out[j] = (w[i].stack()[..., 0, :], n[i].stack()[..., 0, :])
  return out


def _cross(a: Tensor, b: Tensor) -> Tensor:
  """a x b over the last axis (length 3), broadcasting."""
  a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
  b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
  return Tensor.stack(a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0, dim=-1)


def _rotate(q: Tensor, v: Tensor) -> Tensor:
  """Quaternions q (..., 4) [w, x, y, z] applied to vectors v (..., 3): v + 2 u x (u x v + w v)."""
  return v + _moved(q, v)


def _solve_batched(K: Tensor, r: Tensor) -> Tensor:
  """K d = r for (B, n, n) symmetric positive-definite K and r (B, n, m): Gaussian elimination without pivoting,
  unrolled over n (a tree's joint count, or 6), on whole rows."""
  n = K.shape[-1]
  A = Tensor.cat(K, r, dim=-1)
  rows = [A[:, i] for i in range(n)]
  for k in range(n):
    for i in range(k + 1, n): rows[i] = rows[i] - rows[k] * (rows[i][:, k:k + 1] / rows[k][:, k:k + 1])
  out = [None] * n
  for i in reversed(range(n)):
    acc = rows[i][:, n:]
    for c in range(i + 1, n): acc = acc - rows[i][:, c:c + 1] * out[c]
    out[i] = acc / rows[i][:, i:i + 1]
  return Tensor.stack(*out, dim=1)


def armature_step(model, tree: ArmTree, work: Tensor, pred: Tensor, start: Tensor, h: float,
                      armature: list[float], damping: Tensor, tau: Tensor) -> Tensor:
  """The Newton step on the working state `work` (B, nbody, 19) for one tree, its n joints by the model's bodies at
  once (masks for the subtrees). pred: the working state integrate left (its D and TH are x~'s); start: the packed
  state at the substep's start (qdot0). armature (static), damping (njoint,): per joint of the model [kg m^2 or kg],
  [N m s or N s];
  tau (B, n): the armed joints' motor loads in tree.joints order (0 for the others)."""
  B, nb = work.shape[0], model.nbody
  js = list(tree.joints)
  n = len(js)
  dev, dt = work.device, work.dtype
  def const(v):   # nested lists of floats, cached and realised once (oracle/math3.py const)
    a = np.asarray(v, dtype=float)
    return cached(a.reshape(-1).tolist(), work).reshape(a.shape)
  x, q = work[..., POS], work[..., QUAT]
  mass = (1.0 / model.body_inv_mass).reshape(1, nb, 1)
  inv_i = model.body_inv_inertia.reshape(1, nb, 3)
  in_tree = const([float(b in tree.bodies) for b in range(nb)]).reshape(1, nb, 1)
  sub = const([[float(b in s) for b in range(nb)] for s in tree.subtree]).reshape(1, n, nb, 1)
  slide = const([float(model.jnt_type[j] == "slide") for j in js]).reshape(1, n, 1)
  par = [model.jnt_parent[j] for j in js]
  world = const([float(p < 0) for p in par]).reshape(1, n, 1)
  def parent_rows(t: Tensor, fill: list[float]) -> Tensor:   # (B, n, k): each joint's parent's row, the world's fill
    rows = [t[:, max(p, 0)] for p in par]
    return Tensor.stack(*rows, dim=1) * (1.0 - world) + const(fill).reshape(1, 1, -1) * world
  qp, xp = parent_rows(q, [1.0, 0.0, 0.0, 0.0]), parent_rows(x, [0.0, 0.0, 0.0])
  ax0 = Tensor.stack(*(model.jnt_axis_parent[j] for j in js)).reshape(1, n, 3)
  an0 = Tensor.stack(*(model.jnt_anchor_parent[j] for j in js)).reshape(1, n, 3)
  a = _rotate(qp, ax0.expand(B, n, 3))                      # (B, n, 3) world axes
  # a hinge of a group turns the subtree about its own world axis w_i and reads its coordinate along n_i (a lone
  # joint's n is its axis); n at the substep's start for qdot0
  grouped, grouped0 = _group_axes(model, js, work), _group_axes(model, js, start)
  def axes(lone: Tensor, table: dict, k: int) -> Tensor:
    if not table: return lone
    return Tensor.stack(*(table[j][k].expand(B, 3) if j in table else lone[:, m] for m, j in enumerate(js)), dim=1)
  a, n_now = axes(a, grouped, 0), axes(a, grouped, 1)
  p = xp + _rotate(qp, an0.expand(B, n, 3))                 # (B, n, 3) world anchors
  ab = a.reshape(B, n, 1, 3)
  lever = _cross(ab, x.reshape(B, 1, nb, 3) - p.reshape(B, n, 1, 3))
  sl = slide.reshape(1, n, 1, 1)
  om = ab * (1.0 - sl) * sub                                # (B, n, nb, 3) D_j's angular velocity per body
  ve = (lever * (1.0 - sl) + ab * sl) * sub                 # and linear velocity
  # world inertia products: I_w w = R (I (R^T w)), with R's columns from the quaternion
  def inertia(w: Tensor) -> Tensor:   # w (B, k, nb, 3) -> I_w w
    qq = q.reshape(B, 1, nb, 4)
    loc = _rotate(Tensor.cat(qq[..., :1], -qq[..., 1:], dim=-1), w) / inv_i.reshape(1, 1, nb, 3)
    return _rotate(qq, loc)
  if tree.floats:
    xb = x.reshape(B, 1, nb, 3)
    mom = Tensor.cat((inertia(om) + _cross(xb, ve) * mass.reshape(1, 1, nb, 1)).sum(2),
                     (ve * mass.reshape(1, 1, nb, 1)).sum(2), dim=-1)                       # (B, n, 6)
    eye = const([[float(i == k) for k in range(3)] for i in range(3)]).reshape(1, 3, 1, 3).expand(B, 3, nb, 3)
    m3 = (mass * in_tree).reshape(1, 1, nb, 1)
    tl = (inertia(eye) * in_tree.reshape(1, 1, nb, 1) - _cross(xb, _cross(xb, eye)) * m3).sum(2)   # I - m [x]^2
    bl = (-_cross(xb, eye) * m3).sum(2)                     # columns of -m [x]
    tr = (_cross(xb, eye) * m3).sum(2)                      # columns of m [x]
    br = eye[:, :, 0, :] * (mass * in_tree).sum(1).reshape(1, 1, 1)
    # S6 holds the spatial inertia's columns as rows (each block above is (B, column, component))
    S6 = Tensor.cat(Tensor.cat(tl, bl, dim=-1), Tensor.cat(tr, br.expand(B, 3, 3), dim=-1), dim=1)   # rows: columns
    K6, r6 = S6.transpose(1, 2), -mom.transpose(1, 2)
    if tree.plane >= 0:   # within the plane: rotation about its normal, translation across it
      K6, r6 = _in_plane(model.jnt_axis_parent[tree.plane].cast(dt), K6, r6)
    rig = _solve_batched(K6, r6)                                                             # (B, 6, n)
    rw, rv = rig[:, :3].transpose(1, 2).reshape(B, n, 1, 3), rig[:, 3:].transpose(1, 2).reshape(B, n, 1, 3)
    tb = in_tree.reshape(1, 1, nb, 1)
    om = om + rw * tb
    ve = ve + (rv + _cross(rw, x.reshape(B, 1, nb, 3))) * tb
  Iom = inertia(om)
  mb = mass.reshape(1, 1, nb, 1)
  G = (om.reshape(B, n, 1, nb, 3) * Iom.reshape(B, 1, n, nb, 3)).sum((3, 4)) + \
      (ve.reshape(B, n, 1, nb, 3) * ve.reshape(B, 1, n, nb, 3) * mb.reshape(1, 1, 1, nb, 1)).sum((3, 4))
  def rel(t: Tensor) -> Tensor:   # (B, n, 3) child minus parent rows
    return Tensor.stack(*(t[:, model.jnt_child[j]] for j in js), dim=1) - parent_rows(t, [0.0, 0.0, 0.0])
  acc = rel(work[..., DISP]) * slide + rel(work[..., ROT]) * (1.0 - slide)
  dq = (acc * n_now).sum(-1)
  a0 = _rotate(parent_rows(start[..., QUAT], [1.0, 0.0, 0.0, 0.0]), ax0.expand(B, n, 3))
  vel = rel(start[..., VEL]) * slide + rel(start[..., ANGVEL]) * (1.0 - slide)
  qdot0 = (vel * axes(a0, grouped0, 1)).sum(-1)
  gap_w = (work[..., ROT] - pred[..., ROT]).reshape(B, 1, nb, 3)
  gap_v = (work[..., DISP] - pred[..., DISP]).reshape(B, 1, nb, 3)
  gap = (Iom * gap_w).sum((2, 3)) + (ve * gap_v * mb).sum((2, 3))
  A = const([armature[j] for j in js]).reshape(1, n)
  C = Tensor.stack(*(damping[j] for j in js)).reshape(1, n).cast(dt)
  # a joint's spring, (k h^2 / 2) (q + d - q_s)^2 in the objective (implicit Euler's force -k (q' - q_s))
  from oracle.joints import joint_coords
  coords = joint_coords(model, work)[0]
  qc = Tensor.stack(*(coords[:, j] for j in js), dim=-1)
  S = const([model.jnt_stiffness[j] for j in js]).reshape(1, n)
  qs = const([model.jnt_springref[j] for j in js]).reshape(1, n)
  rhs = A * (h * qdot0 - dq) - C * h * dq - S * h * h * (qc - qs) + h * h * tau - gap
  K = G + (const([[float(i == k) for k in range(n)] for i in range(n)]).reshape(1, n, n) *
           (A + C * h + S * h * h).reshape(1, 1, n))
  d = _limited(model, js, qc, K, rhs)
  # the bodies move by sum_j d_j D_j, applied as the rigid motions D_j integrate to (exact turns about each joint's
  # axis, leaves first so each axis is still where it was computed), not their tangents: a tangent step of d moves a
  # body at lever r off its circle by r d^2 / 2 and so breaks the joints, and the pinned limits below take d ~ 0.3 rad
  # Each motion's displacement is summed as such (_moved), not read back as the difference of the positions it
  # leaves: in float32 that difference of ~1 m coordinates carries ~1e-7 m, which recover divides by h (1e-4 s), and
  # the study's two-link arm ended 23 deg off MuJoCo after 1 s at 96 substeps (0.04 in float64)
  xn, qn, disp = x, q, work[..., DISP]
  for k in reversed(range(n)):
    ang = d[:, k].reshape(B, 1)
    r = _turn(a[:, k] * (1.0 - slide[:, k]), ang).reshape(B, 1, 4)
    shift = (a[:, k] * slide[:, k] * ang).reshape(B, 1, 3)
    step = (_moved(r, xn - p[:, k:k + 1]) + shift) * sub[:, k]
    xn, disp, qn = xn + step, disp + step, qn + sub[:, k] * (_qmul(r, qn) - qn)
  if tree.floats:   # and the tree's momentum-cancelling rigid motion, about the world origin
    Wr, Vr = (rw * d).sum(1), (rv * d).sum(1)               # (B, 1, 3)
    r = _turn(Wr.reshape(B, 3), Tensor.ones(B, 1, dtype=dt, device=dev)).reshape(B, 1, 4)
    step = (_moved(r, xn) + Vr) * in_tree
    xn, disp, qn = xn + step, disp + step, qn + in_tree * (_qmul(r, qn) - qn)
  qn = (in_tree > 0).where(qn / (qn * qn).sum(-1, keepdim=True).sqrt(), qn)   # the tree's bodies (kernels/ too)
  W = (om * d).sum(1)                                       # (B, nb, 3) the rotation, to first order as ROT keeps it
  return Tensor.cat(xn, qn, work[..., 7:13], disp, work[..., ROT] + W, dim=-1)


def _in_plane(nrm: Tensor, K6: Tensor, r6: Tensor) -> tuple[Tensor, Tensor]:
  """The floating tree's rigid-motion system K6 [rw; rv] = r6 restricted to the motions a planar root allows, for
  the plane's normal nrm (3,) (world: the joint's parent is the world): with P = diag(nrm nrm^T, I - nrm nrm^T) the
  orthogonal projector onto them, (P K6 P + I - P) x = P r6 has its solution in P's range, where it solves the
  projected system, and the motion then keeps the planar joint as it is."""
  def eye(n): return cached([float(i == k) for i in range(n) for k in range(n)], nrm).reshape(n, n)
  nn = nrm.reshape(3, 1) * nrm.reshape(1, 3)
  zero = nn * 0.0
  P = Tensor.cat(Tensor.cat(nn, zero, dim=1), Tensor.cat(zero, eye(3) - nn, dim=1), dim=0).reshape(1, 6, 6)
  return P @ K6 @ P + (eye(6).reshape(1, 6, 6) - P), P @ r6


def _moved(r: Tensor, v: Tensor) -> Tensor:
  """R(r) v - v for unit quaternions r (..., 4) and vectors v (..., 3), without the cancellation of the difference:
  2 w (u x v) + 2 u x (u x v), each term of the size of the turn."""
  u, w = r[..., 1:], r[..., :1]
  t = _cross(u, v) * 2.0
  return t * w + _cross(u, t)


def _turn(axis: Tensor, angle: Tensor) -> Tensor:
  """The unit quaternion (B, 4) turning by angle * |axis| about axis (B, 3) (angle (B, 1)), |axis| 1 or 0. The norm
  carries 1e-30 under its root, so that a zero axis (a slide's, or a still floating tree's) has a finite gradient:
  sqrt's is infinite at 0, and reverse mode through a slide of an armed tree gave NaN (measured on the study's cart)."""
  norm = (axis.square().sum(-1, keepdim=True) + 1e-30).sqrt()
  half, unit = angle * norm * 0.5, axis / norm
  return Tensor.cat(half.cos(), unit * half.sin(), dim=-1)


def _qmul(a: Tensor, b: Tensor) -> Tensor:
  """Quaternion products a b over the last axis, [w, x, y, z], broadcasting."""
  aw, av, bw, bv = a[..., :1], a[..., 1:], b[..., :1], b[..., 1:]
  return Tensor.cat(aw * bw - (av * bv).sum(-1, keepdim=True), bv * aw + av * bw + _cross(av, bv), dim=-1)


def _limited(model, js: list[int], q: Tensor, K: Tensor, rhs: Tensor, passes: int = 2) -> Tensor:
  """The Newton step d (B, n, 1, 1) of K d = rhs with the joints' limits as an active set: a limited joint whose
  coordinate the step would carry past its range (or further past, when the iterations left it outside) is pinned at
  that bound (its row of K d = rhs replaced by d_j = bound - q_j), and the others re-solved with it held, `passes`
  times (a pin stays for the substep). Without this the step, which only sees inertia, undoes the limits' projection
  (Gymnasium's ant, dropped onto the floor, blew up at the first touch)."""
  from oracle.constraints import jscalar
  from oracle.math3 import take
  B, n = rhs.shape
  d = _solve_batched(K, rhs.reshape(B, n, 1)).reshape(B, n)
  jidx = tuple(js)
  rng = take(model.jnt_range, jidx, axis=-2).reshape(1, n, 2).cast(rhs.dtype)
  # a joint already past a bound may not go further, but the step does not project it back: that is the Jacobi
  # iterations' job, and projecting here too (along D_j, whose momentum-cancelling part moves the whole tree) pumps
  # energy against contacts: measured, the ant's ankles driven below their range by the floor gained 1400 rad/s
  lo, hi = rng[..., 0].minimum(q), rng[..., 1].maximum(q)
  lim = (jscalar(model, "jnt_limited", jidx) > 0).cast(rhs.dtype).reshape(1, n)
  eye = cached([float(i == k) for i in range(n) for k in range(n)], rhs).reshape(1, n, n)
  pin = q * 0.0
  for _ in range(passes):
    # which joints are pinned is a constant mask: reverse mode differentiates the pinned solve, not the choice
    moved = (q + d).detach()
    # (the mask itself detached too: tinygrad 0.14 otherwise asks the OR for a gradient, measured)
    pin = pin.maximum(lim * ((moved < lo.detach()) | (moved > hi.detach())).detach().cast(rhs.dtype))
    held = (q + d).maximum(lo).minimum(hi) - q
    free = 1.0 - pin
    Kh = K * free.reshape(B, n, 1) * free.reshape(B, 1, n) + eye * pin.reshape(B, 1, n)
    r = free * (rhs - (K * (pin * held).reshape(B, 1, n)).sum(-1)) + pin * held
    d = _solve_batched(Kh, r.reshape(B, n, 1)).reshape(B, n)
  return d.reshape(B, n, 1, 1)


def staged(model) -> bool:
  """Whether some joint has armature or stiffness: the model's substeps then run this stage."""
  return any(model.jnt_armature) or any(model.jnt_stiffness)


def armed_trees(model) -> list[ArmTree]:
  """The trees with armature or stiffness on some joint (static): the stage's trees."""
  if not staged(model): return []
  return [t for t in trees(model) if any(model.jnt_armature[j] or model.jnt_stiffness[j] for j in t.joints)]


def armed_joints(model) -> frozenset[int]:
  """Every joint of an armed tree: the stage carries their damping, and the armed ones' motors."""
  return frozenset(j for t in armed_trees(model) for j in t.joints)


def armature(model, work: Tensor, pred: Tensor, start: Tensor, h: float, ctrl: Tensor | None) -> Tensor:
  """The Newton step for every armed tree (the substep's stage after the Jacobi iterations). The motors of armed
  joints load their coordinate here (motor_loads leaves them out)."""
  from oracle.actuators import act_ctrl
  from oracle.math3 import take
  B = work.shape[0]
  for tree in armed_trees(model):
    cols = []
    for j in tree.joints:
      motors = [a for a, (t, jj) in enumerate(zip(model.act_type, model.act_joint)) if t == "motor" and jj == j]
      load = work[:, 0, 0] * 0.0
      if ctrl is not None and motors and model.jnt_armature[j]:
        load = (act_ctrl(model, ctrl, tuple(motors)) * take(model.act_gear, tuple(motors))).sum(-1)
      cols.append(load)
    work = armature_step(model, tree, work, pred, start, h, list(model.jnt_armature), model.jnt_damping,
                         Tensor.stack(*cols, dim=-1).reshape(B, len(tree.joints)))
  return work
