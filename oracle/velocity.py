"""Velocity recovery and the velocity pass (M20 Alg. 2 lines 12-17, sec. 3.6)."""
from __future__ import annotations
from tinygrad import Tensor
from oracle.constraints import jvec, jscalar
from oracle.math3 import V3, const, take
from oracle.packed import ANGVEL, pack, unpack, unpack_work
from oracle.solve import body_sum, gather_side, joint_counts, joint_sides


def recover(work: Tensor, h: float) -> Tensor:
  """v = (x - x_prev)/h and w = 2 vec(q q_prev^-1)/h (M20 Alg. 2 lines 13-15), computed from the displacement and
  rotation accumulated over the substep (exact in float32 too, see oracle/packed.py). (B, nbody, 19) -> 13."""
  x, q, _, _, disp, rot = unpack_work(work)
  return pack(x, q, disp / h, rot / h)


def has_damping(model) -> bool:
  """Static choice made once per trace: the damping pass costs two kernels per substep, skip it when no joint has
  damping. (Reads the parameter's values; a model built for gradients w.r.t. damping should set it non-zero.)"""
  return model.njoint > 0 and bool((model.jnt_damping.numpy() > 0).any())


def joint_damping(model, packed: Tensor, h: float) -> Tensor:
  """Angular joint damping as an implicit impulse (M20 sec. 3.6, eq. 36 in impulse form): the relative angular
  velocity (about the axis for hinges) loses the impulse d h |dw|, never more than the impulse that stops it,
  |dw| / w_gen. Distance joints carry no angular damping. Averaged per body like the position solve."""
  out = []
  for kind in ("ball", "hinge", "fixed"):
    jidx, par, chi = joint_sides(model, kind)
    if not jidx: continue
    s1, s2 = gather_side(model, packed, par), gather_side(model, packed, chi)
    wv = packed[..., ANGVEL]
    w1 = V3(*(take(wv[..., i], par) for i in range(3)))
    w2 = V3(*(take(wv[..., i], chi) for i in range(3)))
    rel = w2 - w1
    if kind == "hinge":
      a = s1.q.rotate(jvec(model, "jnt_axis_parent", jidx))
      rel = a * rel.dot(a)
    speed, n, active = rel.norm_dir(1e-12)
    wgen = s1.inv_inertia_along(n) + s2.inv_inertia_along(n)
    impulse = active.where(speed * (jscalar(model, "jnt_damping", jidx) * h).minimum(1.0 / (wgen + 1e-30)), 0.0)
    p = n * impulse
    d1, d2 = s1.world_inv_inertia(p), -s2.world_inv_inertia(p)
    zero = d1.x * 0.0
    res = Tensor.stack(zero, zero, zero, d1.x, d1.y, d1.z, zero, zero, zero, d2.x, d2.y, d2.z, dim=-1).contiguous()
    out.append((res, par, chi))
  if not out: return packed
  x, q, v, w = unpack(packed)
  scale = const([1.0 / max(n, 1) for n in joint_counts(model)], packed)
  return pack(x, q, v, w + body_sum(model, out)[1] * scale).contiguous()
