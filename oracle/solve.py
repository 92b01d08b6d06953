"""Jacobi solve: every constraint computes its correction from the same snapshot; each body takes the average of the
corrections that touch it, times a relaxation factor (DESIGN sec. 3). Sums run in registry order, then joint order,
the order the WGSL kernel uses too."""
from __future__ import annotations
from tinygrad import Tensor
from oracle.constraints import CONSTRAINTS, NLAM
from oracle.constraints.contact import ContactIn
from oracle.contacts import FRICTION, IM, II, NORMAL, RA, RB, VALID, ContactPlan, side_pose, side_rows
from oracle.math3 import V3, Quat, const, take
from oracle.packed import DISP, POS, QUAT, ROT, pack_work, unpack_work
from oracle.types import WORLD
from oracle.xpbd import Side

# a constraint's result row: its correction [dx1 | dth1 | dx2 | dth2] (world frame; side 1 the parent or contact
# side a), then its multipliers; a contact's (solve_contacts) are lambda_n, lambda_t, whether it touched in any
# iteration of this substep so far (the velocity pass's contacts), then whether it touches at this iteration's
# snapshot (the Jacobi average's count: contact_sum reads the last column). The WGSL kernel's contact slots take this
# layout from here (kernels/program.py slot_layout)
DX1, DTH1, DX2, DTH2 = slice(0, 3), slice(3, 6), slice(6, 9), slice(9, 12)
NCORR = 12
LAMBDA_N, LAMBDA_T, TOUCHED, TOUCHING = NCORR, NCORR + 1, NCORR + 2, NCORR + 3
CONTACT_W = NCORR + 4


def gather_side(model, packed: Tensor, idx: tuple[int, ...]) -> Side:
  """Body snapshot for one side of each constraint (B, J); index -1 is the world (identity, zero inverse mass)."""
  p, qt = packed[..., POS], packed[..., QUAT]
  return Side(x=V3(*(take(p[..., i], idx) for i in range(3))),
              q=Quat(take(qt[..., 0], idx, 1.0), *(take(qt[..., i], idx) for i in range(1, 4))),
              im=take(model.body_inv_mass, idx), ii=V3.of(take(model.body_inv_inertia, idx, axis=-2)))


def split_side(model, packed: Tensor, idx: tuple[int, ...]) -> Side:
  """gather_side with mass splitting (Tonge et al. 2012): a body touched by n joints shows each of them 1/n of its
  mass (n times its inverse mass and inertia). The Jacobi average then divides the summed corrections by n again,
  so every joint's impulse reaches the body in full and momentum is conserved. Without it a joint's recoil on a body
  that another joint also touches was halved: a cart-pole's cart (slide + hinge) moved 49 % too little as the pole
  fell (tests/test_verify_actuators.py), whatever the iteration count."""
  side = gather_side(model, packed, idx)
  counts = joint_counts(model)
  n = const([float(max(counts[b], 1)) if b != WORLD else 1.0 for b in idx], packed)
  return Side(x=side.x, q=side.q, im=side.im * n, ii=side.ii * n)


def joint_sides(model, kind: str) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
  jidx = model.joints_of_type(kind)
  return jidx, tuple(model.jnt_parent[j] for j in jidx), tuple(model.jnt_child[j] for j in jidx)


def solver_joints(model, kind: str) -> tuple[int, ...]:
  """The joints of a type that have rows in the solve: all of them, but of two or three hinges on one body only the
  first, whose rows hold the group (oracle/constraints/hinges.py)."""
  return tuple(j for j in model.joints_of_type(kind) if not model.jnt_group[j] or model.jnt_group[j][0] == j)


def solver_sides(model, kind: str) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
  jidx = solver_joints(model, kind)
  return jidx, tuple(model.jnt_parent[j] for j in jidx), tuple(model.jnt_child[j] for j in jidx)


def joint_counts(model) -> list[int]:
  """How many joints touch each body: the Jacobi averaging denominator (static: joints are always active). A group of
  hinges on one body counts once, as the one joint the solve sees."""
  counts = [0] * model.nbody
  for j, (p, c) in enumerate(zip(model.jnt_parent, model.jnt_child)):
    if model.jnt_group[j] and model.jnt_group[j][0] != j: continue
    for b in (p, c):
      if b != WORLD: counts[b] += 1
  return counts


def init_lambda(model) -> dict[str, tuple]:
  """Multipliers per joint type, reset to zero at the start of every substep (M20 Alg. 2 line 10)."""
  return {kind: (0.0,) * NLAM[kind] for kind in CONSTRAINTS if model.joints_of_type(kind)}


def solve_constraints(model, packed: Tensor, lam: dict, h: float, ctrl: Tensor | None = None) -> tuple[list, dict]:
  """One kernel per joint type: (B, J, 12 + nlam) corrections and multipliers, realised."""
  out, lam = [], dict(lam)
  for kind, fn in CONSTRAINTS.items():
    jidx, par, chi = solver_sides(model, kind)
    if not jidx: continue
    c, new_lam = fn(model, jidx, split_side(model, packed, par), split_side(model, packed, chi), lam[kind], h,
                    ctrl)
    lam_t = [l if isinstance(l, Tensor) else c.dx1.x * 0.0 for l in new_lam]
    cols = [t for v in (c.dx1, c.dth1, c.dx2, c.dth2) for t in (v.x, v.y, v.z)]
    res = Tensor.stack(*cols, *lam_t, dim=-1).contiguous()
    out.append((res, par, chi))
    lam[kind] = tuple(res[..., NCORR + i] for i in range(NLAM[kind]))
  return out, lam


def body_sum(model, corrections: list) -> tuple[V3, V3]:
  """Per body, the sum of the position and rotation corrections [dx | dth] of every constraint side touching it:
  (B, nbody) components each. A product with a constant one-hot (nbody, 2 J) matrix, summed in joint order (registry
  order, then joint index; parent sides, then child sides). Tried to cut the backward's kernel count, but measured
  no gain (237 vs 238 kernels per chain substep VJP; those come from component slices) and it adds a forward kernel
  (83 -> 103 per step, ~17 % slower): the per-element sliced sum it replaced is the better candidate to restore."""
  par = tuple(b for _, p, _ in corrections for b in p)
  chi = tuple(b for _, _, c in corrections for b in c)
  rows = Tensor.cat(*(r[..., 0:6] for r, _, _ in corrections), *(r[..., 6:12] for r, _, _ in corrections), dim=1)
  onehot = const([float(b == i) for b in range(model.nbody) for i in par + chi], rows).reshape(model.nbody, -1)
  s = onehot @ rows                                                  # (B, nbody, 6)
  return V3(s[..., 0], s[..., 1], s[..., 2]), V3(s[..., 3], s[..., 4], s[..., 5])


def contact_sides(rows: Tensor, side: Tensor) -> tuple[Side, Side]:
  """Both sides of every contact slot from gathered body rows (B, C, 2, W) and per-side parameters (B, C, 2, SIDE)."""
  out = []
  for s in (0, 1):
    x, q = side_pose(rows, side, s)
    p = side[..., s, :]
    out.append(Side(x=x, q=q, im=p[..., IM], ii=V3(p[..., II.start], p[..., II.start + 1], p[..., II.start + 2])))
  return out[0], out[1]


def depenetration(model, h: float, push: bool) -> float | None:
  """The contacts' depenetration allowance for one pass [m] (ContactIn.depen): the scene's max_depenetration [m/s]
  times h, or 0 where the pass may only undo the substep's approach (push=False), None without a cap. With the
  armature stage the Jacobi passes get 0 and the contacts' last pass the allowance (oracle/step.py): pushing in both
  pumped momentum into the armed trees (the converted humanoidstandup's pelvis rose at ~50 m/s^2)."""
  if not model.contact_depen: return None
  return model.contact_depen * h if push else 0.0


def solve_contacts(model, plan: ContactPlan, contacts: Tensor, packed: Tensor, lam: Tensor | None,
                   h: float, depen: bool = True) -> Tensor:
  """One kernel over every contact slot: (B, C, CONTACT_W) = [dx_a | dth_a | dx_b | dth_b | lambda_n | lambda_t |
  touched | touching]. touched: touching at this iteration or an earlier one of the substep. Restitution and dynamic
  friction act on the contacts that touched (M20 sec. 3.6): with K > 1 iterations the first can push a contact
  apart, and the last snapshot alone then missed it (a bouncing ball landed and stayed, bench/study_budget.py)."""
  rows = side_rows(plan.contact_body, packed).contiguous()
  s1, s2 = contact_sides(rows, plan.contact_side)
  c = contacts
  def v3(t, sl): return V3(t[..., sl.start], t[..., sl.start + 1], t[..., sl.start + 2])
  cin = ContactIn(valid=c[..., VALID] > 0, n=v3(c, NORMAL), ra=v3(c, RA), rb=v3(c, RB), friction=c[..., FRICTION],
                  disp_a=v3(rows[..., 0, :], DISP), rot_a=v3(rows[..., 0, :], ROT), disp_b=v3(rows[..., 1, :], DISP),
                  rot_b=v3(rows[..., 1, :], ROT), beta=model.contact_beta, depen=depenetration(model, h, depen))
  zero = c[..., VALID] * 0.0
  prev = (zero, zero) if lam is None else (lam[..., LAMBDA_N], lam[..., LAMBDA_T])
  corr, (ln, lt), touching = CONSTRAINTS["contact"](model, cin, s1, s2, prev, h)
  touched = touching if lam is None else touching | (lam[..., TOUCHED] > 0)
  cols = [t for v in (corr.dx1, corr.dth1, corr.dx2, corr.dth2) for t in (v.x, v.y, v.z)]
  return Tensor.stack(*cols, ln, lt, touched.where(1.0, 0.0), touching.where(1.0, 0.0), dim=-1).contiguous()


def contact_sum(body: Tensor, res: Tensor) -> Tensor:
  """Per body, the sum of its contact sides' [dx | dth] (or [dv | dw]) and how many touch it: (B, nbody, 7). A product
  with the one-hot (B, C, 2, nbody), summed in contact-slot order, a side then b side."""
  B, C = res.shape[0], res.shape[1]
  vals = res[..., 0:NCORR].reshape(B, C, 2, 6).cat(res[..., -1:].reshape(B, C, 1, 1).expand(B, C, 2, 1), dim=-1)
  return body.reshape(B, C * 2, -1).transpose(1, 2) @ vals.reshape(B, C * 2, 7)


def solve(model, packed: Tensor, lam: dict, h: float, plan: ContactPlan | None = None,
          contacts: Tensor | None = None, clam: Tensor | None = None, ctrl: Tensor | None = None,
          joints: bool = True, depen: bool = True) -> tuple[Tensor, dict, Tensor | None]:
  """One Jacobi iteration over every joint and contact: the constraint kernels, then one kernel that averages and
  applies. clam: the previous iteration's contact result (its multipliers), None on the first. Returns the new
  working state, joint multipliers and contact result. ctrl (B, nact): the position servos' targets. joints=False:
  the contacts alone (the armature stage's last word, oracle/step.py). depen: whether the contacts may push out beyond
  the substep's approach (depenetration)."""
  corrections, lam = solve_constraints(model, packed, lam, h, ctrl) if joints else ([], lam)
  if not corrections and plan is None: return packed, lam, None
  x, q, v, w, disp, rot = unpack_work(packed)
  counts = const([float(n) for n in joint_counts(model)], packed)
  dx, dth = body_sum(model, corrections) if corrections else (V3(*(x.x * 0.0,) * 3), V3(*(x.x * 0.0,) * 3))
  if plan is not None:
    clam = solve_contacts(model, plan, contacts, packed, clam, h, depen)
    cs = contact_sum(plan.contact_body, clam)
    dx, dth, counts = dx + V3.of(cs[..., 0:3]), dth + V3.of(cs[..., 3:6]), counts + cs[..., 6]
  scale = model.relaxation / counts.maximum(1.0)
  dx, dth = dx * scale, dth * scale
  return pack_work(x + dx, q.add_rotation(dth), v, w, disp + dx, rot + dth).contiguous(), lam, clam
