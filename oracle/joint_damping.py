"""The joint half of the velocity pass (M20 sec. 3.6, eq. 36): joint damping and velocity drives."""
from __future__ import annotations
from tinygrad import Tensor
from oracle.actuators import has_drive, velocity_drive
from oracle.armature import armed_joints
from oracle.constraints import jvec, jscalar
from oracle.constraints.hinges import GROUPED, hinge_angles, limit_rows, members
from oracle.math3 import V3, const, take
from oracle.packed import ANGVEL, VEL, pack, unpack
from oracle.solve import body_sum, joint_counts, joint_sides, solver_sides, split_side


def has_damping(model) -> bool:
  """Static choice made once per trace: the damping pass costs two kernels per substep, skip it when no joint has
  damping and no servo acts in it. (Reads the parameters' values; a model built for gradients w.r.t. damping should
  set it non-zero.)"""
  return model.njoint > 0 and (bool((model.jnt_damping.numpy() > 0).any()) or has_drive(model))


def joint_damping(model, packed: Tensor, h: float, ctrl: Tensor | None = None) -> Tensor:
  """Joint damping and velocity drives as implicit impulses (M20 sec. 3.6, eq. 36 in impulse form): the relative
  velocity, angular (about the axis for hinges) or linear along a slide axis, minus its target (a velocity servo's
  clip(ctrl), else 0) loses the impulse d h |dw|, never more than the impulse that reaches the target, |dw| / w_gen.
  d is the joint's damping plus its servo's kv. Distance joints carry no damping. Averaged per body like the
  position solve."""
  out = []
  for kind in ("ball", "hinge", "fixed", "slide"):
    jidx, par, chi = joint_sides(model, kind)
    if not jidx: continue
    s1, s2 = split_side(model, packed, par), split_side(model, packed, chi)
    coef, target = jscalar(model, "jnt_damping", jidx), 0.0
    if armed := armed_joints(model):   # the armature stage carries these joints' damping (oracle/armature.py)
      coef = coef * const([float(j not in armed) for j in jidx], packed)
    if kind in ("hinge", "slide"): a = s1.q.rotate(jvec(model, "jnt_axis_parent", jidx))
    if kind == "hinge" and (drive := velocity_drive(model, jidx, ctrl)) is not None:
      coef, target = coef + drive[0], drive[1]
    if kind == "slide":
      rel = a * (_body_vec(packed, VEL, chi) - _body_vec(packed, VEL, par)).dot(a)
    else:
      rel = _body_vec(packed, ANGVEL, chi) - _body_vec(packed, ANGVEL, par)
      if kind == "hinge": rel = a * (rel.dot(a) - target)
    speed, n, active = rel.norm_dir(1e-12)
    wgen = s1.im + s2.im if kind == "slide" else s1.inv_inertia_along(n) + s2.inv_inertia_along(n)
    impulse = active.where(speed * (coef * h).minimum(1.0 / (wgen + 1e-30)), 0.0)
    p = n * impulse
    zero = p * 0.0
    if kind == "slide": lin1, ang1, lin2, ang2 = p * s1.im, zero, -(p * s2.im), zero      # a linear impulse
    else: lin1, ang1, lin2, ang2 = zero, s1.world_inv_inertia(p), zero, -s2.world_inv_inertia(p)
    cols = [t for v in (lin1, ang1, lin2, ang2) for t in (v.x, v.y, v.z)]
    out.append((Tensor.stack(*cols, dim=-1).contiguous(), par, chi))
  for kind in GROUPED:
    out += _grouped(model, packed, h, kind)
  if not out: return packed
  x, q, v, w = unpack(packed)
  scale = const([1.0 / max(n, 1) for n in joint_counts(model)], packed)
  dv, dw = body_sum(model, out)
  return pack(x, q, v + dv * scale, w + dw * scale).contiguous()


def _grouped(model, packed: Tensor, h: float, kind: str) -> list:
  """Each hinge of a group damps its own rate t_i' = n_i . (w2 - w1) (oracle/constraints/hinges.py limit_rows): the
  hinge's rule with the unit direction n_i / |n_i| and the coefficient d |n_i|^2, which is the same implicit impulse
  in t_i (d t_i' = |n_i| times the rate along the unit direction). The hinges of a group are damped one beside the
  other, as the joints of a body are."""
  jidx, par, chi = solver_sides(model, kind)
  if not jidx: return []
  s1, s2 = split_side(model, packed, par), split_side(model, packed, chi)
  t, w = hinge_angles(model, jidx, s1, s2)
  armed = armed_joints(model)
  out = []
  for i, n_i in enumerate(limit_rows(w)[:len(t)]):
    k = members(model, jidx, i)
    coef = jscalar(model, "jnt_damping", k)
    if armed: coef = coef * const([float(j not in armed) for j in k], packed)
    size, unit, _ = n_i.norm_dir(1e-12)
    rel = unit * (_body_vec(packed, ANGVEL, chi) - _body_vec(packed, ANGVEL, par)).dot(unit)
    speed, n, active = rel.norm_dir(1e-12)
    wgen = s1.inv_inertia_along(n) + s2.inv_inertia_along(n)
    p = n * active.where(speed * (coef * size * size * h).minimum(1.0 / (wgen + 1e-30)), 0.0)
    ang1, ang2 = s1.world_inv_inertia(p), -s2.world_inv_inertia(p)
    zero = p * 0.0
    cols = [t_ for v in (zero, ang1, zero, ang2) for t_ in (v.x, v.y, v.z)]
    out.append((Tensor.stack(*cols, dim=-1).contiguous(), par, chi))
  return out


def _body_vec(packed: Tensor, sl: slice, bodies: tuple[int, ...]) -> V3:
  """A 3-vector field of the packed state gathered per constraint side (B, J); the world reads zero."""
  t = packed[..., sl]
  return V3(*(take(t[..., i], bodies) for i in range(3)))
