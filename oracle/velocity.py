"""Velocity recovery and the velocity pass (M20 Alg. 2 lines 12-17, sec. 3.6)."""
from __future__ import annotations
from tinygrad import Tensor
from oracle.actuators import has_drive, velocity_drive
from oracle.constraints import jvec, jscalar
from oracle.math3 import V3, const, take
from oracle.contacts import APPROACH, FRICTION, NORMAL, RA, RB, RESTITUTION, side_rows
from oracle.packed import ANGVEL, VEL, pack, unpack, unpack_work
from oracle.solve import NCORR, body_sum, contact_sides, contact_sum, joint_counts, joint_sides, split_side


def recover(work: Tensor, h: float) -> Tensor:
  """v = (x - x_prev)/h and w = 2 vec(q q_prev^-1)/h (M20 Alg. 2 lines 13-15), computed from the displacement and
  rotation accumulated over the substep (exact in float32 too, see oracle/packed.py). (B, nbody, 19) -> 13."""
  x, q, _, _, disp, rot = unpack_work(work)
  return pack(x, q, disp / h, rot / h)


def contact_velocity(model, plan, contacts: Tensor, clam: Tensor, packed: Tensor, h: float) -> Tensor:
  """Dynamic friction and restitution of every contact that touched in the position solve (M20 sec. 3.6, eqs. 30-35
  there), one impulse per contact along the velocity change it asks for, averaged per body like the position solve.

  Friction is an impulse of at most h mu f_n against the slip, f_n = lambda_n / h^2 the normal force of the solve.
  Restitution sets the approach speed to -e times the approach speed before the solve (from the narrowphase,
  after integrate), and to zero when that was below 2 |g| h (a resting contact must not bounce on gravity alone)."""
  rows = side_rows(plan.contact_body, packed).contiguous()
  s1, s2 = contact_sides(rows, plan.contact_side)
  c = contacts
  def v3(t, sl): return V3(t[..., sl.start], t[..., sl.start + 1], t[..., sl.start + 2])
  n = v3(c, NORMAL)
  oa, ob = s1.q.rotate(v3(c, RA)), s2.q.rotate(v3(c, RB))
  ra, rb = rows[..., 0, :], rows[..., 1, :]
  vrel = (v3(ra, VEL) + v3(ra, ANGVEL).cross(oa)) - (v3(rb, VEL) + v3(rb, ANGVEL).cross(ob))
  u = vrel.dot(n)                                                    # approach speed, > 0 closing
  speed_t, t, sliding = (vrel - n * u).norm_dir(1e-9)
  # the friction impulse h mu f_n = mu lambda_n / h changes the slip speed by that times w_t, the generalised inverse
  # mass along t (M20 eq. 30 writes the speed change for unit mass); it may only stop the slip, never reverse it
  wt = s1.inv_mass_at(oa, t) + s2.inv_mass_at(ob, t)
  friction = (c[..., FRICTION] * clam[..., NCORR] * wt / h).minimum(speed_t)
  g = V3.of(model.gravity)
  u0 = c[..., APPROACH]
  e = (u0.abs() > 2.0 * g.dot(g).sqrt() * h).where(c[..., RESTITUTION], 0.0)
  du = -u + (-e * u0).minimum(0.0)                                    # M20 eq. 34
  dv = n * du - t * sliding.where(friction, 0.0)
  size, d, on = dv.norm_dir(1e-12)
  touching = clam[..., -1] > 0
  w = s1.inv_mass_at(oa, d) + s2.inv_mass_at(ob, d)
  p = d * (touching & on).where(size / (w + 1e-30), 0.0)
  d1, d2 = s1.world_inv_inertia(oa.cross(p)), -s2.world_inv_inertia(ob.cross(p))
  res = Tensor.stack(*(t for v in (p * s1.im, d1, -(p * s2.im), d2) for t in (v.x, v.y, v.z)),
                     touching.where(1.0, 0.0), dim=-1).contiguous()
  cs = contact_sum(plan.contact_body, res)
  x, q, v, w_ = unpack(packed)
  scale = 1.0 / cs[..., 6].maximum(1.0)
  return pack(x, q, v + V3.of(cs[..., 0:3]) * scale, w_ + V3.of(cs[..., 3:6]) * scale).contiguous()


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
  if not out: return packed
  x, q, v, w = unpack(packed)
  scale = const([1.0 / max(n, 1) for n in joint_counts(model)], packed)
  dv, dw = body_sum(model, out)
  return pack(x, q, v + dv * scale, w + dw * scale).contiguous()


def _body_vec(packed: Tensor, sl: slice, bodies: tuple[int, ...]) -> V3:
  """A 3-vector field of the packed state gathered per constraint side (B, J); the world reads zero."""
  t = packed[..., sl]
  return V3(*(take(t[..., i], bodies) for i in range(3)))
