"""Muscle coupling study (issue 18): is the explicit coupling (the muscle's force as an external load of each
substep, oracle/motor_loads.py) stable at realistic stiffness, F0 = 1000 N, L0 = 0.1 m (scenes/muscle_hang.json)?

The stiff part of a muscle is its force-velocity curve: at rest dF/dv = F0 a FL FV'(0) / (L0 vmax) = 2 F0 a FL /
(L0 vmax), up to 13,300 N s/m here, a damper that an explicit step resolves only while h c / m < 2 (h = dt /
substeps); the length stiffness (F0 FL' / L0 ~ 4e4 N/m) asks only h sqrt(k / m) < 2. Two cases:
- hang: muscle_hang itself, a fully excited muscle holding a weight against gravity. At rest F0 a FL = m g, so
  c / m = 2 g / (L0 vmax) = 131 / s whatever the mass: h c / m = 0.03 at the scene's h = 0.2 ms. Never stiff.
- co-contraction: the weight between two opposing, fully excited muscles at their optimal length (FL = 1), gravity
  off: c = 2 x 13,300 N s/m on a mass that nothing else loads, the stiff case (DESIGN sec. 4's h c w ~ 11). The
  mass sweeps down, and a run at 10x the substep follows.
Each run starts from the scene's pose moving at 0.2 m/s and reports, after 1 s, whether it stayed finite and came to
rest, beside h c / m.

  python bench/study_muscle_coupling.py        # writes bench/results_muscle_coupling.json
"""
from __future__ import annotations
import json
import platform
import sys
from pathlib import Path
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def run(mass: float, dt: float, substeps: int, cocontract: bool) -> dict:
  from tinygrad import dtypes
  from engine.scene import load_scene, load_scene_dict
  from engine.simulator import Simulator
  scene = load_scene_dict(ROOT / "scenes" / "muscle_hang.json")
  scene["bodies"][0]["mass"] = mass
  scene["bodies"][0]["inertia"] = [0.001 * mass] * 3
  scene["dt"], scene["substeps"] = dt, substeps
  scene["bodies"][0]["vel"] = [0.0, 0.0, 0.2]   # the kick: a 0.2 m/s start
  if cocontract:   # a second muscle below; both 0.11 m long at the start (L = 1.1, FL = 0.94)
    scene["gravity"] = [0.0, 0.0, 0.0]
    scene["sites"][0]["pos"] = [0.0, 0.0, 0.96]
    scene["sites"] += [{"name": "floor", "body": "world", "pos": [0.0, 0.0, 0.64]},
                       {"name": "bottom", "body": "weight", "pos": [0.0, 0.0, 0.75]}]
    scene["tendons"].append({"name": "antagonist", "sites": ["floor", "bottom"], "stiffness": 0.0, "damping": 0.0,
                             "length": 0.11})
    scene["actuators"].append({**scene["actuators"][0], "name": "antagonist", "tendon": "antagonist"})
  model = load_scene(scene, dtypes.float64, "CPU")
  sim = Simulator(model, batch=1, tier_up=0)
  state = sim.reset()
  state = state.replace(act=state.act + 1.0)   # fully active from the start
  steps = round(1.0 / dt)
  _, rec = sim.trajectory(state, steps, every=max(1, steps // 50), ctrl=np.ones((1, model.nact)))
  z, v = rec["pos"][:, 0, 0, 2], rec["vel"][:, 0, 0, 2]
  h = dt / substeps
  prm = model.act_gainprm.numpy()[0]
  l0 = (model.act_lengthrange.numpy()[0, 1] - model.act_lengthrange.numpy()[0, 0]) / (prm[1] - prm[0])
  c = 2 * prm[2] / (l0 * prm[6]) * (2 if cocontract else 9.81 * mass / prm[2])   # FL = 1 / at rest m g = F0 FL
  finite = bool(np.isfinite(z).all() and np.abs(z).max() < 10)
  return {"case": "co-contraction" if cocontract else "hang", "mass_kg": mass, "h_s": h, "h_c_over_m": h * c / mass,
          "finite": finite, "final_speed_m_s": float(abs(v[-1])) if finite else None,
          "stable": bool(finite and abs(v[-1]) < 1e-3)}


def main() -> None:
  rows = [run(m, 0.002, 10, False) for m in (20.0, 0.2)] + [run(20.0, 0.002, 1, False)]
  rows += [run(m, 0.002, 10, True) for m in (20.0, 5.0, 2.0, 1.0, 0.5, 0.2)]
  rows += [run(m, 0.002, 1, True) for m in (20.0, 5.0)]
  for r in rows:
    print(f"{r['case']:15s} m {r['mass_kg']:5.2f} kg h {r['h_s'] * 1e3:.2f} ms: h c / m {r['h_c_over_m']:6.2f}  "
          f"{'stable' if r['stable'] else 'UNSTABLE'} (final speed {r['final_speed_m_s']})")
  import tinygrad
  out = {"scene": "muscle_hang (F0 1000 N, L0 0.1 m, act 1)", "rows": rows, "machine": platform.machine(),
         "tinygrad": tinygrad.__version__ if hasattr(tinygrad, "__version__") else "0.14.0"}
  (ROOT / "bench" / "results_muscle_coupling.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
  main()
