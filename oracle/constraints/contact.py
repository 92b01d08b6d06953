"""Contact: non-penetration and static friction as positional constraints (M20 sec. 3.5, eqs. 26-27 there).

Dynamic friction and restitution act on velocities after the position solve (oracle/contact_velocity.py).
Each contact slot comes from the narrowphase (oracle/narrowphase.py): a world normal n from a to b and a point in each
body's frame. The multipliers are impulse magnitudes as if the contact were alone; the per-body Jacobi average
divides them among the body's constraints, and the velocity pass averages its impulses the same way, so the friction
bound mu lambda_n stays consistent between the two passes.
"""
from __future__ import annotations
from dataclasses import dataclass
from tinygrad import Tensor
from oracle.constraints import register
from oracle.math3 import V3
from oracle.xpbd import EPS, Correction, Side, chain


@dataclass(frozen=True)
class ContactIn:
  """One contact slot per lane (B, C): the narrowphase row and each side's motion since the substep began."""
  valid: Tensor    # bool
  n: V3            # unit, world, from a to b
  ra: V3           # [m] contact point in a's body frame
  rb: V3           # [m] contact point in b's body frame
  friction: Tensor
  disp_a: V3       # [m] displacement D of a's centre of mass since the substep began (oracle/packed.py)
  rot_a: V3        # [rad] rotation vector TH of a since the substep began
  disp_b: V3
  rot_b: V3
  beta: float      # softplus sharpness [1/m]; 0: exact max(depth, 0)
  depen: float | None = None  # [m] how far this substep's pushes may move the points apart beyond undoing the
                              # substep's own approach (oracle/solve.py depenetration); None: no cap


def depth(c: ContactIn, s1: Side, s2: Side) -> tuple[Tensor, V3, V3]:
  """Penetration depth d = (p_a - p_b) . n (> 0: overlapping) and the world offsets of the points from the COMs."""
  oa, ob = s1.q.rotate(c.ra), s2.q.rotate(c.rb)
  return ((s1.x + oa) - (s2.x + ob)).dot(c.n), oa, ob


def push(s1: Side, s2: Side, oa: V3, ob: V3, n: V3, err: Tensor, on: Tensor) -> tuple[Correction, Tensor]:
  """Remove err along n at the points: impulse -P n on a, +P n on b, P = err / (w_a + w_b) (M20 eqs. 2-4, a~ = 0)."""
  w = s1.inv_mass_at(oa, n) + s2.inv_mass_at(ob, n)
  mag = on.where(err / (w + 1e-30), 0.0)
  p = n * mag
  return Correction(dx1=-(p * s1.im), dth1=-s1.world_inv_inertia(oa.cross(p)),
                    dx2=p * s2.im, dth2=s2.world_inv_inertia(ob.cross(p))), mag


@register("contact", nlam=2)
def contact(model, c: ContactIn, s1: Side, s2: Side, lam: tuple, h: float) -> tuple[Correction, tuple, Tensor]:
  """Normal then static-friction correction of each contact from one Jacobi snapshot. lam = (lambda_n, lambda_t)
  accumulated over this substep's iterations. Returns the correction, the new multipliers and `touching`
  (depth > 0 at this snapshot: where restitution and dynamic friction apply later)."""
  d, oa, ob = depth(c, s1, s2)
  touching = c.valid & (d > 0)
  if c.beta > 0:  # smooth: always pushes a little (ln 2 / beta at d = 0), so d/d(pose) is never cut to zero
    err = d.maximum(0.0) + (-(d.abs() * c.beta)).exp().add(1.0).log() / c.beta
    on = c.valid
  else:
    err, on = d, touching
  # the contact points' relative motion since the substep began, first order like recover (D + TH x r): the normal
  # cap below and static friction read it from the Jacobi snapshot
  dp = (c.disp_a + c.rot_a.cross(oa)) - (c.disp_b + c.rot_b.cross(ob))
  if c.depen is not None:
    # depenetration cap (MuJoCo's soft contacts and PhysX's maxDepenetrationVelocity do the same job): the push may
    # undo what the points approached this substep, dp.n, plus `depen`, never more. A body that starts deep in
    # another (a model whose initial pose overlaps) then leaves it at depen / h, instead of being thrown out in one
    # substep at d / h; a resting contact, whose overlap each substep is its own approach, is untouched
    err = err.minimum((dp.dot(c.n) + c.depen).maximum(0.0))
  normal, pn = push(s1, s2, oa, ob, c.n, err, on)
  lam_n = lam[0] + pn
  # static friction: the contact points' relative tangential motion since the substep began, undone when the
  # multiplier it needs stays inside the friction cone (M20 sec. 3.5: lambda_t < mu_s lambda_n). The motion is read
  # from the Jacobi snapshot, without this contact's own normal correction: that correction is not what the body
  # does (the per-body average mixes it with the other contacts'), and at a box corner its rotation moves the point
  # sideways, outwards, so counting it made the cone test fail on one side of a resting box and held it on the
  # other: the box crept at ~1.4 mm/s (measured on drop.json) instead of standing still.
  dpt = dp - c.n * dp.dot(c.n)
  slip, t, moving = dpt.norm_dir(EPS)
  w = s1.inv_mass_at(oa, t) + s2.inv_mass_at(ob, t)
  pt = slip / (w + 1e-30)
  stick = on & moving & ((lam[1] + pt) < c.friction * lam_n)
  fric, pt = push(s1, s2, oa, ob, t, slip, stick)
  return chain(normal, fric), (lam_n, lam[1] + pt), touching
