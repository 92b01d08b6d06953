"""XPBD positional and angular corrections between two bodies (Mueller et al. 2020, sec. 3.3).

Conventions used by every constraint: a correction is a unit direction n and a signed error c; body 1 moves along -n
and body 2 along +n, so for a positional constraint n points from the desired to the current position of body 1's
attachment point (n ∝ p1 - p2). World attachments are a side with zero inverse mass and inertia.
"""
from __future__ import annotations
from dataclasses import dataclass
from tinygrad import Tensor
from oracle.math3 import V3, Quat

EPS = 1e-9  # [m] or [rad]: below this a correction is skipped (exactly satisfied in float32 terms)


@dataclass(frozen=True)
class Side:
  """One side of a constraint, gathered per constraint: shapes (B, J) or broadcastable to it."""
  x: V3          # [m] centre of mass
  q: Quat        # inertial frame orientation
  im: Tensor     # [1/kg] inverse mass (0 for the world)
  ii: V3         # [1/(kg m^2)] principal inverse inertia (0 for the world)

  def apply(self, dx: V3, dth: V3) -> Side:
    return Side(self.x + dx, self.q.add_rotation(dth), self.im, self.ii)

  def inv_mass_at(self, r: V3, n: V3) -> Tensor:
    """Generalised inverse mass w = 1/m + (r x n)^T I^-1 (r x n), in the body frame where I is diagonal (M20 eq. 2)."""
    rn = self.q.inv_rotate(r.cross(n))
    return self.im + rn.dot(rn * self.ii)

  def inv_inertia_along(self, n: V3) -> Tensor:
    """w = n^T I^-1 n for a pure rotation (M20 eq. 3)."""
    nb = self.q.inv_rotate(n)
    return nb.dot(nb * self.ii)

  def world_inv_inertia(self, v: V3) -> V3:
    """I^-1 v with I^-1 diagonal in the body frame."""
    return self.q.rotate(self.q.inv_rotate(v) * self.ii)


@dataclass(frozen=True)
class Correction:
  """Net pose change of both sides of a constraint (world frame), and its updated multiplier."""
  dx1: V3
  dth1: V3
  dx2: V3
  dth2: V3


def positional(s1: Side, s2: Side, r1: V3, r2: V3, n: V3, c: Tensor, active: Tensor, lam: Tensor,
               alpha_tilde) -> tuple[Correction, Tensor]:
  """Positional correction at world offsets r1, r2 from the centres of mass (M20 eqs. 2-6, 9)."""
  w = s1.inv_mass_at(r1, n) + s2.inv_mass_at(r2, n)
  dlam = active.where((-c - alpha_tilde * lam) / (w + alpha_tilde + 1e-30), 0.0)   # M20 eq. 4
  p = n * dlam                                                                       # M20 eq. 6
  return impulse(s1, s2, r1, r2, p), lam + dlam


def impulse(s1: Side, s2: Side, r1: V3, r2: V3, p: V3) -> Correction:
  """The sides' pose (or velocity) changes from impulse p, side 1 on side 2, at world offsets r1, r2 from the centres
  of mass (M20 eqs. 7-8)."""
  return Correction(dx1=p * s1.im, dth1=s1.world_inv_inertia(r1.cross(p)),
                    dx2=-(p * s2.im), dth2=-s2.world_inv_inertia(r2.cross(p)))


def angular(s1: Side, s2: Side, n: V3, theta: Tensor, active: Tensor, lam: Tensor,
            alpha_tilde) -> tuple[Correction, Tensor]:
  """Angular correction by angle theta about unit axis n: body 1 turns about -n, body 2 about +n (M20 eqs. 11-14)."""
  w = s1.inv_inertia_along(n) + s2.inv_inertia_along(n)
  dlam = active.where((-theta - alpha_tilde * lam) / (w + alpha_tilde + 1e-30), 0.0)
  p = n * dlam
  zero = p * 0.0
  corr = Correction(dx1=zero, dth1=s1.world_inv_inertia(p), dx2=zero, dth2=-s2.world_inv_inertia(p))
  return corr, lam + dlam


def inv_inertia_pair(s1: Side, s2: Side, e: V3) -> V3:
  """K e = (I1^-1 + I2^-1) e, world frame: how far a unit angular impulse e turns body 2 relative to body 1."""
  return s1.world_inv_inertia(e) + s2.world_inv_inertia(e)


def unit_basis(like: Tensor) -> tuple[V3, V3, V3]:
  """The world axes e_x, e_y, e_z as V3s shaped like `like`: the columns of a 3x3 operator are its images of them."""
  one, zero = like * 0.0 + 1.0, like * 0.0
  return V3(one, zero, zero), V3(zero, one, zero), V3(zero, zero, one)


def neg_solve3(a: V3, b: V3, c: V3, rhs: V3, active: Tensor) -> V3:
  """-K^-1 rhs for the symmetric 3x3 K with columns a, b, c, by the adjugate (K symmetric: its rows are the cross
  products b x c, c x a, a x b over det K); zero where not active or K is singular (|det| <= 1e-30 after scaling).

  K is first divided by its largest |entry| s: det K grows as s^3, and for a ~1 mm body (I^-1 ~ 1e13 /(kg m^2))
  that overflows float32 to inf, which zeroed the correction: a 0.6 mm box welded to the world kept its 0.6 rad/s
  kick (measured). -K^-1 rhs = -(K/s)^-1 rhs / s."""
  s = a.x.abs().maximum(a.y.abs()).maximum(a.z.abs()).maximum(b.y.abs()).maximum(b.z.abs()).maximum(c.z.abs())
  s = (s > 0).where(s, 1.0)
  a, b, c = a / s, b / s, c / s
  bc, ca, ab = b.cross(c), c.cross(a), a.cross(b)
  det = a.dot(bc)
  active = active & (det.abs() > 1e-30)
  inv_det = active.where(-1.0 / active.where(det * s, 1.0), 0.0)
  return V3(bc.dot(rhs), ca.dot(rhs), ab.dot(rhs)) * inv_det


def angular_lock(s1: Side, s2: Side, n: V3, theta: Tensor, active: Tensor, lam: Tensor) -> tuple[Correction, Tensor]:
  """Rigid full orientation lock (fixed and slide joints): body 2 turns by theta n relative to body 1, solved as one
  3-vector constraint: angular impulse p = -K^-1 (theta n), K = I1^-1 + I2^-1 (world frame), dth1 = I1^-1 p,
  dth2 = -I2^-1 p, so dth2 - dth1 = theta n exactly to first order. lam: the multiplier slot of the scalar form;
  it accumulates p . n, the impulse along the error (the scalar form's dlam).

  Why not M20's scalar form (angular(), eqs. 11-14): p = n dlam turns body 2 by I2^-1 n dlam, which is along n only
  when n is a principal axis. Otherwise it removes the error along n and leaves a residual across it: with inverse
  inertias in ratio r between two axes, an error at 45 degrees between them comes back turned by 90 degrees and
  shrunk only by (r - 1) / (r + 1); one near the slow axis comes back up to (r - 1) / (2 sqrt(r)) times larger, then
  smaller near the fast one. For a thin rod (I^-1 ~ [12, 12, 5000], r = 416) that is 0.995 per substep at 45 degrees,
  and the velocity recovered from the alternating corrections persists: a pole kicked about a non-principal axis kept
  ~5.8 rad/s about axes its hinge forbids (measured, pendulum_swingup). The exact solve has no cross-coupling
  (Macklin et al. 2016 eq. 18 with a 3-vector C, as point() does for positions). Skipped (zero) below EPS or where K
  is singular, e.g. both sides the world."""
  a, b, c = (inv_inertia_pair(s1, s2, e) for e in unit_basis(theta))
  p = neg_solve3(a, b, c, n * theta, active)
  zero3 = p * 0.0
  corr = Correction(dx1=zero3, dth1=s1.world_inv_inertia(p), dx2=zero3, dth2=-s2.world_inv_inertia(p))
  return corr, lam + p.dot(n)


def angular_align(s1: Side, s2: Side, a: V3, n: V3, theta: Tensor, active: Tensor,
                  lam: Tensor) -> tuple[Correction, Tensor]:
  """Rigid 2-dof axis alignment (hinge): body 2 turns by theta n relative to body 1 (n ⟂ a, unit), while rotation
  about the hinge axis a (unit, world) stays free. The impulse p = pu u + pv v lies in the plane ⟂ a, basis u = n,
  v = a x n, and the relative rotation -K p (K = I1^-1 + I2^-1) projects onto that plane as exactly theta n:
    [u.Ku  u.Kv] [pu]   [-theta]
    [v.Ku  v.Kv] [pv] = [  0   ]
  Its component along a, (K p) . a, is left as it comes: it is the physical coupling of a body whose principal axes
  are not aligned with the hinge, and a turn about a is what the joint allows. lam: the scalar form's slot; it
  accumulates pu, the impulse along n.

  Why not angular() (M20 eq. 20 with eqs. 11-14): see angular_lock. For a thin pole on a hinge ⟂ to it, n lies in
  the plane of the pole's fast (I^-1 = 5000) and slow (12) axes; the scalar form's turn I^-1 n leans towards the
  pole, so each substep it moved the error from n to a x n instead of removing it: a pole kicked about an off-hinge
  axis kept spinning about it at ~5.8 rad/s, and random motor torques took some envs to 1e3 rad/s and NaN in 8 steps
  (measured, pendulum_swingup)."""
  u, v = n, a.cross(n)
  ku, kv = inv_inertia_pair(s1, s2, u), inv_inertia_pair(s1, s2, v)
  kuu, kuv, kvv = u.dot(ku), v.dot(ku), v.dot(kv)
  det = kuu * kvv - kuv * kuv
  active = active & (det.abs() > 1e-30)
  scale = active.where(theta / active.where(det, 1.0), 0.0)
  pu, pv = -(kvv * scale), kuv * scale                        # Cramer's rule on the 2x2 above
  p = u * pu + v * pv
  zero3 = p * 0.0
  corr = Correction(dx1=zero3, dth1=s1.world_inv_inertia(p), dx2=zero3, dth2=-s2.world_inv_inertia(p))
  return corr, lam + pu


def chain(*parts: Correction) -> Correction:
  """Total of corrections applied one after another within one constraint (first-order sum of rotation vectors)."""
  tot = parts[0]
  for p in parts[1:]:
    tot = Correction(tot.dx1 + p.dx1, tot.dth1 + p.dth1, tot.dx2 + p.dx2, tot.dth2 + p.dth2)
  return tot


def apply(s1: Side, s2: Side, c: Correction) -> tuple[Side, Side]:
  return s1.apply(c.dx1, c.dth1), s2.apply(c.dx2, c.dth2)


def k_apply(s: Side, r: V3, e: V3) -> V3:
  """K_s e = e/m + (I^-1 (r x e)) x r: how far a unit impulse e at offset r moves that point of body s (for point)."""
  return e * s.im + s.world_inv_inertia(r.cross(e)).cross(r)


def point(s1: Side, s2: Side, r1: V3, r2: V3, d: V3, lam: tuple, alpha_tilde) -> tuple[Correction, tuple]:
  """Point attachment p1 = p2 as one vector constraint: impulse P = -(K + a~ 1)^-1 (d + a~ lam), d = p1 - p2, with the
  3x3 effective inverse mass K = K1 + K2, K_i P = P/m_i + (I_i^-1 (r_i x P)) x r_i.

  Why not M20's scalar form along n = d/|d|: it removes the error along n only, and when a body's inertia is small
  against m r^2 (a bob on a 1 m arm: ratio ~1000) the rotation that does so moves the anchor ~30x further across n,
  so the body's spin flips sign every substep and the error grows (measured: a 5.5 % short pendulum period). Solving
  the linearised 3-vector constraint exactly has no such cross-coupling; it is the vector-valued XPBD update
  (Macklin et al. 2016 eq. 18 with a 3-vector C)."""
  lam_v = V3(*(l if isinstance(l, Tensor) else d.x * 0.0 + l for l in lam))
  a, b, c = (k_apply(s1, r1, e) + k_apply(s2, r2, e) + e * alpha_tilde for e in unit_basis(d.x))
  P = neg_solve3(a, b, c, d + lam_v * alpha_tilde, d.norm_dir(EPS)[2])
  new = lam_v + P
  return impulse(s1, s2, r1, r2, P), (new.x, new.y, new.z)
