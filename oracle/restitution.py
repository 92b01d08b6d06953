"""Restitution per contact pair, after the contact velocity pass (M20 sec. 3.6, eq. 34, applied to a pair's contacts
as a whole): the stage that makes a box bounce (bench/study_restitution.py).

The contact velocity pass (oracle/contact_velocity.py) gives each contact the impulse that would restitute it alone,
and each body takes the average of its contacts'. A box landing flat on four corners: each corner's effective inverse
mass is 1/m + 3/m (the rotation the corner alone would cause), so each asks for a quarter of the box's momentum
change, and the average moves the box by a quarter of the speed change it needs: with e = 1 its approach speed only
halves and it does not bounce (drop.json's box from 5 cm: 0.1 mm). This stage then restitutes each contact pair at
the centroid of its restituting contacts: their mean world offsets, normal and target approach speed. The centroid's
velocity is the mean of the contacts' (linear in the offset), and the rotational terms that cancel over a face's
corners are not in its effective mass, so one impulse sets a flat landing's approach speed exactly (the box rebounds
48.0 mm of its 50; on an edge first 62.1 mm, as 16 Jacobi sweeps of per-contact pushes give). Each body takes the
average over the pairs that push it, as the solve averages.

A pair's contacts restitute where they touched in the substep's position solve and their restitution applies
(contact_velocity.bounce: e > 0 past the resting threshold). The impulse only pushes apart, towards the target
approach speed min(-e u0, 0) (u0 before the solve, from the narrowphase); a pair already separating that fast gets
none. A pair of one contact (a sphere's) was restituted by the pass, exactly where it does not slip; where it slips
the pass's one impulse along the combined change of normal and slip speed leaves the normal speed off by the
rotation the friction adds, and this push corrects that (bounce's reference gradients moved by 1.6e-5 relative). A
model without restitution (every geom's e = 0: Model.contact_restitution) skips the stage."""
from __future__ import annotations
from tinygrad import Tensor
from oracle.contact_velocity import apply_impulses, bounce, point_velocity, v3
from oracle.contacts import APPROACH, NORMAL, RA, RB, pair_sum, side_rows
from oracle.math3 import V3
from oracle.solve import TOUCHED, contact_sides


def restitution(model, plan, contacts: Tensor, clam: Tensor, packed: Tensor, h: float) -> Tensor:
  """The packed state after one restituting impulse per contact pair at its restituting contacts' centroid."""
  e = bounce(model, contacts, h)
  live = ((clam[..., TOUCHED] > 0) & (e > 0)).where(1.0, 0.0)   # (B, C) the slots that restitute
  cnt = pair_sum(plan.blocks, live)                               # (B, Ptot) how many per pair
  k = 1.0 / cnt.maximum(1.0)
  def mean(v: V3) -> V3: return V3(*(pair_sum(plan.blocks, c * live) * k for c in (v.x, v.y, v.z)))
  rows = side_rows(plan.contact_body, packed).contiguous()
  s1, s2 = contact_sides(rows, plan.contact_side)
  oa, ob = mean(s1.q.rotate(v3(contacts, RA))), mean(s2.q.rotate(v3(contacts, RB)))
  n = mean(v3(contacts, NORMAL)).norm_dir(1e-12)[1]
  target = pair_sum(plan.blocks, (-e * contacts[..., APPROACH]).minimum(0.0) * live) * k   # M20 eq. 34's
  prow = side_rows(plan.pair_body, packed).contiguous()
  p1, p2 = contact_sides(prow, plan.pair_side)
  du = (target - point_velocity(prow, oa, ob).dot(n)).minimum(0.0)   # push apart only
  pushed = cnt > 0
  p = n * pushed.where(du / (p1.inv_mass_at(oa, n) + p2.inv_mass_at(ob, n) + 1e-30), 0.0)
  return apply_impulses(plan.pair_body, packed, p1, p2, oa, ob, p, pushed)
