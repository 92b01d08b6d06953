"""Jacobi solve: every constraint computes its correction from the same snapshot; each body takes the average of the
corrections that touch it, times a relaxation factor (DESIGN sec. 3). Sums run in registry order, then joint order,
the order the WGSL kernel uses too."""
from __future__ import annotations
from tinygrad import Tensor
from oracle.constraints import CONSTRAINTS, NLAM
from oracle.math3 import V3, Quat, const, take
from oracle.packed import POS, QUAT, pack_work, unpack_work
from oracle.types import WORLD
from oracle.xpbd import Side

NCORR = 12  # [dx1 | dth1 | dx2 | dth2] per constraint, then its multipliers


def gather_side(model, packed: Tensor, idx: tuple[int, ...]) -> Side:
  """Body snapshot for one side of each constraint (B, J); index -1 is the world (identity, zero inverse mass)."""
  p, qt = packed[..., POS], packed[..., QUAT]
  return Side(x=V3(*(take(p[..., i], idx) for i in range(3))),
              q=Quat(take(qt[..., 0], idx, 1.0), *(take(qt[..., i], idx) for i in range(1, 4))),
              im=take(model.body_inv_mass, idx), ii=V3.of(take(model.body_inv_inertia, idx, axis=-2)))


def joint_sides(model, kind: str) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
  jidx = model.joints_of_type(kind)
  return jidx, tuple(model.jnt_parent[j] for j in jidx), tuple(model.jnt_child[j] for j in jidx)


def joint_counts(model) -> list[int]:
  """How many joints touch each body: the Jacobi averaging denominator (static: joints are always active)."""
  counts = [0] * model.nbody
  for p, c in zip(model.jnt_parent, model.jnt_child):
    for b in (p, c):
      if b != WORLD: counts[b] += 1
  return counts


def init_lambda(model) -> dict[str, tuple]:
  """Multipliers per joint type, reset to zero at the start of every substep (M20 Alg. 2 line 10)."""
  return {kind: (0.0,) * NLAM[kind] for kind in CONSTRAINTS if model.joints_of_type(kind)}


def solve_constraints(model, packed: Tensor, lam: dict, h: float) -> tuple[list, dict]:
  """One kernel per joint type: (B, J, 12 + nlam) corrections and multipliers, realised."""
  out, lam = [], dict(lam)
  for kind, fn in CONSTRAINTS.items():
    jidx, par, chi = joint_sides(model, kind)
    if not jidx: continue
    c, new_lam = fn(model, jidx, gather_side(model, packed, par), gather_side(model, packed, chi), lam[kind], h)
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


def solve(model, packed: Tensor, lam: dict, h: float) -> tuple[Tensor, dict]:
  """One Jacobi iteration over every joint: the constraint kernels, then one kernel that averages and applies."""
  corrections, lam = solve_constraints(model, packed, lam, h)
  if not corrections: return packed, lam
  x, q, v, w, disp, rot = unpack_work(packed)
  scale = const([model.relaxation / max(n, 1) for n in joint_counts(model)], packed)
  dx, dth = body_sum(model, corrections)
  dx, dth = dx * scale, dth * scale
  return pack_work(x + dx, q.add_rotation(dth), v, w, disp + dx, rot + dth).contiguous(), lam
