"""The contact half of the velocity pass (M20 Alg. 2 lines 16-17, sec. 3.6): dynamic friction and restitution."""
from __future__ import annotations
from tinygrad import Tensor
from oracle.contacts import APPROACH, FRICTION, NORMAL, RA, RB, RESTITUTION, side_rows
from oracle.math3 import V3
from oracle.packed import ANGVEL, VEL, pack, unpack
from oracle.solve import LAMBDA_N, TOUCHED, contact_sides, contact_sum
from oracle.xpbd import impulse


def v3(t: Tensor, sl: slice) -> V3: return V3(t[..., sl.start], t[..., sl.start + 1], t[..., sl.start + 2])


def point_velocity(rows: Tensor, oa: V3, ob: V3) -> V3:
  """The relative velocity, a to b, of the points at world offsets oa and ob from the centres of mass of each item's
  gathered body rows (B, N, 2, W)."""
  ra, rb = rows[..., 0, :], rows[..., 1, :]
  return (v3(ra, VEL) + v3(ra, ANGVEL).cross(oa)) - (v3(rb, VEL) + v3(rb, ANGVEL).cross(ob))


def bounce(model, contacts: Tensor, h: float) -> Tensor:
  """Each contact slot's restitution coefficient where it applies: the pair's, where the approach speed before the
  solve exceeded 2 |g| h, else 0 (a resting contact must not bounce on gravity alone)."""
  g = V3.of(model.gravity)
  return (contacts[..., APPROACH].abs() > 2.0 * g.dot(g).sqrt() * h).where(contacts[..., RESTITUTION], 0.0)


def apply_impulses(body: Tensor, packed: Tensor, s1, s2, oa: V3, ob: V3, p: V3, on: Tensor) -> Tensor:
  """Velocities after impulse p (a on b, at world offsets oa and ob) on both sides of every item (contact slot or
  pair), each body taking the average over its items where `on` (body: their (B, N, 2, nbody) one-hot rows)."""
  c = impulse(s1, s2, oa, ob, p)
  res = Tensor.stack(*(t for v in (c.dx1, c.dth1, c.dx2, c.dth2) for t in (v.x, v.y, v.z)),
                     on.where(1.0, 0.0), dim=-1).contiguous()
  cs = contact_sum(body, res)
  x, q, v, w_ = unpack(packed)
  scale = 1.0 / cs[..., 6].maximum(1.0)
  return pack(x, q, v + V3.of(cs[..., 0:3]) * scale, w_ + V3.of(cs[..., 3:6]) * scale).contiguous()


def contact_velocity(model, plan, contacts: Tensor, clam: Tensor, packed: Tensor, h: float) -> Tensor:
  """Dynamic friction and restitution of every contact that touched in the position solve (M20 sec. 3.6, eqs. 30-35
  there), one impulse per contact along the velocity change it asks for, averaged per body like the position solve.

  Friction is an impulse of at most h mu f_n against the slip, f_n = lambda_n / h^2 the normal force of the solve.
  Restitution sets the approach speed to -e times the approach speed before the solve (from the narrowphase,
  after integrate), and to zero when that was below 2 |g| h (bounce). With several contacts on a body the average
  leaves it short of that (each contact's impulse counts the body's rotation, which cancels over a flat face's
  corners): the restitution stage after this one (oracle/restitution.py) restitutes each pair as a whole."""
  rows = side_rows(plan.contact_body, packed).contiguous()
  s1, s2 = contact_sides(rows, plan.contact_side)
  c = contacts
  n = v3(c, NORMAL)
  oa, ob = s1.q.rotate(v3(c, RA)), s2.q.rotate(v3(c, RB))
  vrel = point_velocity(rows, oa, ob)
  u = vrel.dot(n)                                                    # approach speed, > 0 closing
  speed_t, t, sliding = (vrel - n * u).norm_dir(1e-9)
  # the friction impulse h mu f_n = mu lambda_n / h changes the slip speed by that times w_t, the generalised inverse
  # mass along t (M20 eq. 30 writes the speed change for unit mass); it may only stop the slip, never reverse it
  wt = s1.inv_mass_at(oa, t) + s2.inv_mass_at(ob, t)
  friction = (c[..., FRICTION] * clam[..., LAMBDA_N] * wt / h).minimum(speed_t)
  u0 = c[..., APPROACH]
  e = bounce(model, c, h)
  du = -u + (-e * u0).minimum(0.0)                                    # M20 eq. 34
  dv = n * du - t * sliding.where(friction, 0.0)
  size, d, on = dv.norm_dir(1e-12)
  touching = clam[..., TOUCHED] > 0   # in any iteration of the substep's position solve
  w = s1.inv_mass_at(oa, d) + s2.inv_mass_at(ob, d)
  p = d * (touching & on).where(size / (w + 1e-30), 0.0)
  return apply_impulses(plan.contact_body, packed, s1, s2, oa, ob, p, touching)
