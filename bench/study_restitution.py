"""Restitution with several contacts on one body: the defect of the contact velocity pass and two ways out, measured
on the float64 oracle. A study, not the engine: each variant replaces oracle.step's contact_velocity for this process.

  python bench/study_restitution.py     # ~3 min on 2 cores; the table in bench/README.md

The defect (oracle/contact_velocity.py, kernels/contact_velocity.wgsl): each touched contact asks for the impulse that
sets its own approach speed to -e times the one before the solve, with its own effective mass (the body's inverse
mass plus the rotational term of its point), and the body takes the average of its contacts' impulses. A box landing
flat on four corners: each corner's effective inverse mass is 4/m (1/m + 3/m from the rotation), so each asks for
m du / 4, and the average moves the box by du / 4. With e = 1 the approach speed u goes to u / 2, still closing, and
the box does not bounce (drop.json's box from 5 cm at its budget of 2 substeps x 2 iterations: rebound 0.1 mm).

Variants, each run after the pass as it is (friction and per-contact restitution unchanged):
- sweeps R: R Jacobi sweeps over the touched contacts whose restitution is on (e > 0 past the resting threshold),
  each pushing apart only, to the same target, averaged per body. The error shrinks by a factor of the per-body
  average (3/4 for the flat box) a sweep.
- patch: one impulse per contact pair, at the centroid of its touched restituting slots (their mean world offsets
  and normal; the target the slots' mean), averaged per body over its pairs. The centroid's velocity is the mean of
  the slots' (linear in the offset), and the rotational terms that cancel over the corners are not in its
  effective mass. One pass sets a flat landing's approach exactly; a single-slot pair gets what it has today.
"""
from __future__ import annotations
import json
import sys
from pathlib import Path
import numpy as np
from tinygrad import Tensor, dtypes
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import engine  # noqa: E402
import oracle.contact_velocity as ocv  # noqa: E402
import oracle.step as ostep  # noqa: E402
from engine.scene import load_scene_dict  # noqa: E402
from engine.simulator import Simulator  # noqa: E402
from oracle.contacts import APPROACH, NORMAL, RA, RB, RESTITUTION, side_rows  # noqa: E402
from oracle.math3 import V3  # noqa: E402
from oracle.packed import ANGVEL, VEL, pack, unpack  # noqa: E402
from oracle.solve import TOUCHED, contact_sides, contact_sum  # noqa: E402

PASS = ocv.contact_velocity   # the engine's pass


def v3(t, sl): return V3(t[..., sl.start], t[..., sl.start + 1], t[..., sl.start + 2])


def targets(model, contacts, clam, h):
  """Each slot's approach-speed target min(-e u0, 0) (M20 eq. 34) and whether its restitution is on and it touched."""
  g = V3.of(model.gravity)
  u0 = contacts[..., APPROACH]
  e = (u0.abs() > 2.0 * g.dot(g).sqrt() * h).where(contacts[..., RESTITUTION], 0.0)
  return (-e * u0).minimum(0.0), (clam[..., TOUCHED] > 0) & (e > 0)


def apply(plan_body, packed, s1, s2, oa, ob, p, on):
  """Add impulse p at offsets oa/ob to both sides, averaged per body over the `on` items (the pass's rule)."""
  d1, d2 = s1.world_inv_inertia(oa.cross(p)), -s2.world_inv_inertia(ob.cross(p))
  res = Tensor.stack(*(t for v in (p * s1.im, d1, -(p * s2.im), d2) for t in (v.x, v.y, v.z)),
                     on.where(1.0, 0.0), dim=-1).contiguous()
  cs = contact_sum(plan_body, res)
  x, q, v, w = unpack(packed)
  scale = 1.0 / cs[..., 6].maximum(1.0)
  return pack(x, q, v + V3.of(cs[..., 0:3]) * scale, w + V3.of(cs[..., 3:6]) * scale).contiguous()


def normal_push(s1, s2, rows, oa, ob, n, target):
  """The impulse along n that brings the approach speed at oa/ob to target, pushing apart only."""
  ra, rb = rows[..., 0, :], rows[..., 1, :]
  vrel = (v3(ra, VEL) + v3(ra, ANGVEL).cross(oa)) - (v3(rb, VEL) + v3(rb, ANGVEL).cross(ob))
  du = (target - vrel.dot(n)).minimum(0.0)
  return n * (du / (s1.inv_mass_at(oa, n) + s2.inv_mass_at(ob, n) + 1e-30))


def sweeps(count: int):
  def contact_velocity(model, plan, contacts, clam, packed, h):
    packed = PASS(model, plan, contacts, clam, packed, h)
    target, on = targets(model, contacts, clam, h)
    for _ in range(count):
      rows = side_rows(plan.contact_body, packed).contiguous()
      s1, s2 = contact_sides(rows, plan.contact_side)
      oa, ob = s1.q.rotate(v3(contacts, RA)), s2.q.rotate(v3(contacts, RB))
      p = normal_push(s1, s2, rows, oa, ob, v3(contacts, NORMAL), target)
      packed = apply(plan.contact_body, packed, s1, s2, oa, ob, p * on.where(1.0, 0.0), on)
    return packed
  return contact_velocity


def patch(model, plan, contacts, clam, packed, h):
  packed = PASS(model, plan, contacts, clam, packed, h)
  target, on = targets(model, contacts, clam, h)
  live, B = on.where(1.0, 0.0), contacts.shape[0]
  def per_pair(t):   # (B, C) -> (B, Ptot): the sum over each pair's K slots (a block's slots are pair-major)
    out, at = [], 0
    for blk in plan.blocks:
      out.append(t[:, at:at + blk.pairs * blk.slots].reshape(B, blk.pairs, blk.slots).sum(2))
      at += blk.pairs * blk.slots
    return Tensor.cat(*out, dim=1)
  rows = side_rows(plan.contact_body, packed).contiguous()
  s1, s2 = contact_sides(rows, plan.contact_side)
  cnt = per_pair(live)
  k = 1.0 / cnt.maximum(1.0)
  def mean(v): return V3(*(per_pair(c * live) * k for c in (v.x, v.y, v.z)))
  oa, ob = mean(s1.q.rotate(v3(contacts, RA))), mean(s2.q.rotate(v3(contacts, RB)))
  n = mean(v3(contacts, NORMAL)).norm_dir(1e-12)[1]
  prow = side_rows(plan.pair_body, packed).contiguous()
  p1, p2 = contact_sides(prow, plan.pair_side)
  p = normal_push(p1, p2, prow, oa, ob, n, per_pair(target * live) * k)
  return apply(plan.pair_body, packed, p1, p2, oa, ob, p * (cnt > 0).where(1.0, 0.0), cnt > 0)


def box_drop(variant, tilt: float, steps: int = 90) -> dict:
  """drop.json's box (0.2 m, 1 kg, e = 1 on box and floor, its budget 2 x 2) from 5 cm above the floor, turned
  `tilt` rad about x (0: lands flat; 0.3: on an edge first): the rebound and the energy kept."""
  ostep.contact_velocity = variant
  d = load_scene_dict(str(ROOT / "scenes" / "drop.json"))
  body = d["bodies"][0]
  body["pos"] = [0.0, 0.0, 0.15 + 0.1 * tilt]
  body["quat"] = [float(np.cos(tilt / 2)), float(np.sin(tilt / 2)), 0.0, 0.0]
  body["geoms"][0]["restitution"] = d["world"]["geoms"][0]["restitution"] = 1.0
  model = engine.load_scene(d, dtype=dtypes.float64, device="CPU")
  sim = Simulator(model, batch=1)
  state = sim.reset()
  inertia = (0.2 ** 2 + 0.2 ** 2) / 12   # a 1 kg cube of side 0.2 m
  def energy(s):
    v, w = s.body_vel.numpy()[0, 0], s.body_angvel.numpy()[0, 0]
    return 0.5 * v @ v + 0.5 * inertia * w @ w + 9.81 * s.body_pos.numpy()[0, 0, 2]
  e0, z, e = energy(state), [], []
  for _ in range(steps):
    state = sim.step(state)
    z.append(float(state.body_pos.numpy()[0, 0, 2]))
    e.append(energy(state))
  land = int(np.argmin(z[:40]))
  ostep.contact_velocity = PASS
  return {"rebound_m": max(z[land:]) - 0.1, "energy_after_bounce": e[land + 10] / e0, "energy_end": e[-1] / e0}


def main() -> int:
  variants = {"the pass (today)": PASS, **{f"sweeps {r}": sweeps(r) for r in (4, 8, 16)}, "patch": patch}
  rows = []
  for tilt in (0.0, 0.3):
    for name, fn in variants.items():
      if tilt and name.startswith("sweeps") and name != "sweeps 16": continue
      rows.append({"variant": name, "tilt_rad": tilt, **box_drop(fn, tilt)})
      print(json.dumps(rows[-1]), flush=True)
  (ROOT / "bench" / "results_restitution.json").write_text(json.dumps(rows, indent=1))
  return 0


if __name__ == "__main__":
  sys.exit(main())
