"""How many substeps the armature stage needs (issue 19): converted MJCF models with armature against MuJoCo over 1 s,
at several substep counts, on the WGSL kernel (float32, kernels/armature.wgsl), with the protocol of
tests/test_verify_mjcf.py (MuJoCo at 20 fine steps an env-step, kicked N(0, 0.5) from qpos0, small sinusoidal
controls; worst joint angle error [deg] over every hinge, each relative to its parent). engine/mjcf.py converts every
model at 96 substeps a 0.01 s step (MAX_SUBSTEP, chosen on models without armature); the question is whether the
armature stage's Newton step, which carries each tree's joint-space inertia exactly to first order, allows fewer.

  python bench/study_armature_substeps.py                       # every model, substeps 4 8 16 32 96
  python bench/study_armature_substeps.py --models ant_free --substeps 8 96

Results go to bench/results_armature_substeps.json (one row per model and substep count).
"""
from __future__ import annotations
import argparse
import json
import sys
import time
import warnings
from pathlib import Path
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
FINE = 20   # MuJoCo steps per env-step (tests/test_verify_mjcf.py)
OUT = ROOT / "bench" / "results_armature_substeps.json"


def gym(name: str) -> str:
  from engine.mjcf import gym_asset
  return gym_asset(name).read_text()


def models() -> dict:
  import study_armature as S
  return {**{k: S.MODELS[k] for k in ("pendulum", "double_arm", "cart_arm", "floating_arm", "reacher_arm",
                                       "ant_free")},
          "inverted_pendulum": lambda: gym("inverted_pendulum"),
          "inverted_double_pendulum": lambda: gym("inverted_double_pendulum")}


def errors(name: str, substeps: int, seconds: float = 1.0, backend: str = "wgsl") -> dict:
  import mujoco
  from tinygrad import Tensor
  from engine.mjcf import MJCFWarning, bodies_from_mujoco, compile_mjcf, from_mjcf
  from engine.npquat import quat_conj, quat_mul
  from engine.scene import load_scene, load_scene_dict
  from engine.simulator import Simulator
  path = Path("/tmp") / f"study_substeps_{name}.xml"
  path.write_text(models()[name]())
  m, d = compile_mjcf(path)
  with warnings.catch_warnings():
    warnings.simplefilter("ignore", MJCFWarning)
    scene = load_scene_dict(from_mjcf(path))
  scene["substeps"] = substeps
  dev = "WEBGPU" if backend == "wgsl" else "CPU"
  sim = Simulator(load_scene(scene, device=dev), 1, backend=backend)
  d0 = mujoco.MjData(m)
  mujoco.mj_kinematics(m, d0)
  d.qvel[:] = np.random.default_rng(0).normal(0.0, 0.5, m.nv)
  mujoco.mj_forward(m, d)
  ref = bodies_from_mujoco(scene, m, d, d0)
  t = {k: Tensor(v[None].astype(np.float32), device=dev) for k, v in ref.items()}
  state = sim.reset().replace(body_pos=t["pos"], body_quat=t["quat"], body_vel=t["vel"], body_angvel=t["angvel"])
  m.opt.timestep = scene["dt"] / FINE
  index = {b["name"]: i for i, b in enumerate(scene["bodies"])}
  worst, t0 = 0.0, time.perf_counter()
  for k in range(int(round(seconds / scene["dt"]))):
    ctrl = 0.02 * np.sin(3.0 * np.arange(1, m.nu + 1) * k * scene["dt"]) * m.actuator_ctrlrange[:, 1]
    d.ctrl[:] = ctrl
    for _ in range(FINE): mujoco.mj_step(m, d)
    state = sim.step(state, Tensor(ctrl[None].astype(np.float32), device=dev) if m.nu else None)
    ref = bodies_from_mujoco(scene, m, d, d0)
    quat = state.body_quat.numpy()[0].astype(np.float64)
    for j in scene["joints"]:
      if j["type"] != "hinge": continue
      c, p = index[j["child"]], index.get(j["parent"])
      ours = quat[c] if p is None else quat_mul(quat_conj(quat[p]), quat[c])
      theirs = ref["quat"][c] if p is None else quat_mul(quat_conj(ref["quat"][p]), ref["quat"][c])
      worst = max(worst, 2.0 * float(np.arcsin(min(1.0, np.linalg.norm(quat_mul(quat_conj(ours), theirs)[1:])))))
  return {"model": name, "backend": backend, "substeps": substeps, "dt": scene["dt"],
          "worst_angle_deg": float(np.degrees(worst)), "seconds": time.perf_counter() - t0}


def save(row: dict) -> None:
  """Merge one row into OUT (a run keeps the rows it did not measure), after each measurement."""
  try: old = json.loads(OUT.read_text())["results"]
  except (OSError, ValueError, KeyError): old = []
  key = (row["model"], row["backend"], row["substeps"])
  rows = [r for r in old if (r["model"], r.get("backend"), r["substeps"]) != key] + [row]
  OUT.write_text(json.dumps({"time": time.strftime("%Y-%m-%d %H:%M:%S"), "results": rows}, indent=1) + "\n")


def main(argv=None) -> int:
  p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  p.add_argument("--models", nargs="*", default=list(models()))
  p.add_argument("--substeps", nargs="*", type=int, default=[4, 8, 16, 32, 96])
  p.add_argument("--backend", default="wgsl", choices=["wgsl", "oracle"], help="oracle: float32 on the CPU device")
  args = p.parse_args(argv)
  for name in args.models:
    for s in args.substeps:
      r = errors(name, s, backend=args.backend)
      print(f"{name:26s} S={s:3d} (h {1e3 * r['dt'] / s:.3f} ms)  worst joint angle {r['worst_angle_deg']:.4f} deg",
            flush=True)
      save(r)
  return 0


if __name__ == "__main__":
  sys.exit(main())
