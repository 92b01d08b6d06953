"""Restitution with several contacts on one body: the defect of the contact velocity pass and two ways out, measured
on the float64 oracle. A study: each variant replaces oracle.step's contact_velocity for this process, and runs
without the restitution stage, but for the patch, which is that stage (oracle/restitution.py, built from this study).

  python bench/study_restitution.py         # 31 s on 2 cores; the table in bench/README.md
  python bench/study_restitution.py cost    # what the stage costs, kernel and oracle (~2 min)

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
from tinygrad import dtypes
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import engine  # noqa: E402
import oracle.contact_velocity as ocv  # noqa: E402
import oracle.step as ostep  # noqa: E402
from engine.scene import load_scene_dict  # noqa: E402
from engine.simulator import Simulator  # noqa: E402
from oracle.contacts import APPROACH, NORMAL, RA, RB, side_rows  # noqa: E402
from oracle.solve import TOUCHED, contact_sides  # noqa: E402

PASS, STAGE = ocv.contact_velocity, ostep.restitution   # the engine's pass and, since this study, its restitution stage


def sweeps(count: int):
  """The pass, then `count` Jacobi sweeps of normal pushes over the touched restituting slots, each bringing its
  slot's approach speed to the target min(-e u0, 0) (M20 eq. 34), pushing apart only, averaged per body."""
  def contact_velocity(model, plan, contacts, clam, packed, h):
    packed = PASS(model, plan, contacts, clam, packed, h)
    e = ocv.bounce(model, contacts, h)
    target, on = (-e * contacts[..., APPROACH]).minimum(0.0), (clam[..., TOUCHED] > 0) & (e > 0)
    n = ocv.v3(contacts, NORMAL)
    for _ in range(count):
      rows = side_rows(plan.contact_body, packed).contiguous()
      s1, s2 = contact_sides(rows, plan.contact_side)
      oa, ob = s1.q.rotate(ocv.v3(contacts, RA)), s2.q.rotate(ocv.v3(contacts, RB))
      du = (target - ocv.point_velocity(rows, oa, ob).dot(n)).minimum(0.0)
      p = n * on.where(du / (s1.inv_mass_at(oa, n) + s2.inv_mass_at(ob, n) + 1e-30), 0.0)
      packed = ocv.apply_impulses(plan.contact_body, packed, s1, s2, oa, ob, p, on)
    return packed
  return contact_velocity


def box_drop(variant, tilt: float, steps: int = 90, stage: bool = False) -> dict:
  """drop.json's box (0.2 m, 1 kg, e = 1 on box and floor, its budget 2 x 2) from 5 cm above the floor, turned
  `tilt` rad about x (0: lands flat; 0.3: on an edge first): the rebound and the energy kept. stage: whether the
  engine's restitution stage (oracle/restitution.py, the patch variant) runs after the variant's pass."""
  ostep.contact_velocity = variant
  ostep.restitution = STAGE if stage else (lambda model, plan, contacts, clam, packed, h: packed)
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
  ostep.contact_velocity, ostep.restitution = PASS, STAGE
  return {"rebound_m": max(z[land:]) - 0.1, "energy_after_bounce": e[land + 10] / e0, "energy_end": e[-1] / e0}


def stage_cost(batches=(("wgsl", 256), ("oracle", 64)), steps: int = 60) -> list[dict]:
  """What the stage costs: env-steps/s of the box (its restitution 1, so the stage runs, against 0, so it is skipped)
  from the same kicked states, each backend in one run, best of two, after a warm-up rollout (the compile)."""
  import time
  from tests.helpers import box_bounce
  rows = []
  for backend, batch in batches:
    best = {}
    for _ in range(2):
      for e in (0.0, 1.0):
        d = box_bounce()
        d["bodies"][0]["geoms"][0]["restitution"] = d["world"]["geoms"][0]["restitution"] = e
        model = engine.load_scene({**d, "name": f"box_e{e:g}"}, device="WEBGPU" if backend == "wgsl" else None)
        sim = Simulator(model, batch=batch, backend=backend)
        start = sim.reset(seed=0, noise=0.1)
        sim.rollout(start, steps).body_pos.numpy()
        t = time.perf_counter()
        sim.rollout(start, steps).body_pos.numpy()
        best[e] = max(best.get(e, 0.0), batch * steps / (time.perf_counter() - t))
    rows.append({"backend": backend, "batch": batch, "env_steps_per_s_without": best[0.0],
                 "env_steps_per_s_with": best[1.0], "ratio": best[1.0] / best[0.0]})
    print(json.dumps(rows[-1]), flush=True)
  return rows


def main() -> int:
  if sys.argv[1:] == ["cost"]:
    stage_cost()
    return 0
  variants = {"the pass (before the stage)": PASS, **{f"sweeps {r}": sweeps(r) for r in (4, 8, 16)},
              "patch (the engine: oracle/restitution.py)": PASS}
  rows = []
  for tilt in (0.0, 0.3):
    for name, fn in variants.items():
      if tilt and name.startswith("sweeps") and name != "sweeps 16": continue
      rows.append({"variant": name, "tilt_rad": tilt, **box_drop(fn, tilt, stage=name.startswith("patch"))})
      print(json.dumps(rows[-1]), flush=True)
  (ROOT / "bench" / "results_restitution.json").write_text(json.dumps(rows, indent=1))
  return 0


if __name__ == "__main__":
  sys.exit(main())
