"""MuJoCo C beside this engine's backends in one run: env-steps/s of MuJoCo C (the `mujoco` package's
`mujoco.rollout`, float64, on 2 threads) on the MJCF twins in bench/mjcf/, of the oracle on the CPU device and of the
WGSL kernel on WEBGPU (lavapipe on this machine), on the same scenes and batches, each figure with the scene's
physical check on its own final state, and the ratio of the faster backend to MuJoCo.

  python bench/bench_peers.py                                  # pendulum x4096, drop x256, stack10 x64, ant x256
  python bench/bench_peers.py --only drop:256 --configs mujoco oracle-CPU
  python bench/bench_peers.py --study-budget                   # this engine at bench/study_budget.py's budgets

Protocol, the same for every engine: one call of `steps` env-steps from the scene's initial state (reported as
first-call seconds: the engine's compile, MuJoCo's thread pool), then 3 timed calls of `steps` env-steps, each
continuing from the last; env-steps/s = batch x steps / median seconds. A call is one `mujoco.rollout` of `steps`
env-steps for MuJoCo and one launch of the WGSL kernel (--steps-per-call sets fewer); the oracle takes one env-step
per TinyJit call. The check runs on the final state (after
4 x steps env-steps): pendulum, the rod keeps its 1 m length within 1 mm; drop, the box rests at its half height
(within 1 mm, below 1 cm/s); stack10, no cube slides 2 mm or sinks 1 mm into the one below; ant (the ant task's
scene, engine/tasks/scenes/ant.json, zero control), the ant stands on its feet at rest (torso within 1 cm of its rigid
rest height and of its start in x, y, every body below 1 cm/s). Every env starts from the same state.
Needs `pip install mujoco` (pinned in the `bench` extra); results go to bench/results_peers.json, merged by scene and
batch (a run replaces the rows it measured and keeps the others, each row with the run it came from under "meta").
"""
from __future__ import annotations
import argparse
import importlib.metadata
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# (scene, batch, env-steps per call): issue 16's targets, MuJoCo C on 2 threads as the reference. The ant runs with
# zero control on every engine, which gives a sharp check (it stands at rest). A per-step random sequence would cost
# this engine's front door a call per step (Simulator.rollout with a sequence), and MuJoCo is at its fastest at rest
# (x256 on this machine: 289k env-steps/s, 268k with a random ctrl held per env, 167k with a new one each step)
SET = (("pendulum", 4096, 120), ("drop", 256, 240), ("stack10", 64, 60), ("ant", 256, 100))
# besides SET (--only gym_ant:256): Gymnasium's own ant.xml and half_cheetah.xml, 50 env-steps of 0.01 s a call, so
# the check reads them 2 s after their start (the oracle's 96 substeps a step take minutes a call: --configs mujoco
# wgsl-WEBGPU); humanoid.xml, 200 env-steps of 3 ms a call (29 substeps each), read 2.4 s after its start
EXTRA = (("gym_ant", 256, 50), ("gym_half_cheetah", 256, 50), ("gym_humanoid", 64, 200))
CONFIGS = {"mujoco": None, "oracle-CPU": ("oracle", "CPU"), "wgsl-WEBGPU": ("wgsl", "WEBGPU")}
THREADS = 2
# the ant's torso height [m] at rigid rest: knees on their -0.002 rad limit (the scene's pose bends them 0.502 rad, 2
# mrad above their 0.5 rad limit, feet 0.5 mm above the ground; unbending a knee 1 mrad lifts its foot 0.53 mm), feet
# on the ground: 0.349208 - 0.0004998 (gap) - 0.0010525 (2 mrad unbent), from the scene's geometry (engine/tasks/ant.py)
ANT_REST_Z = 0.347656


def scene_path(scene: str) -> Path:
  """A scene's JSON: scenes/ holds the physics scenes, engine/tasks/scenes/ the tasks' (the ant)."""
  path = ROOT / "scenes" / f"{scene}.json"
  return path if path.exists() else ROOT / "engine" / "tasks" / "scenes" / f"{scene}.json"


def gym_xml(scene: str) -> Path:
  """Gymnasium's own asset behind gym_NAME (MJCF: ant.xml, armature 1 on its eight hinges; half_cheetah.xml, a planar
  root and six armed, sprung hinges): MuJoCo runs it as is, this engine its conversion (engine/mjcf.py: 96 substeps a
  0.01 s step, the armature stage)."""
  from engine.mjcf import gym_asset
  return gym_asset(scene.removeprefix("gym_"))


def scene_spec(scene: str) -> dict:
  """The scene dict the engine runs: a scene file's JSON, or a gym_ asset's conversion."""
  if scene.startswith("gym_"):
    import warnings
    from engine.mjcf import MJCFWarning, from_mjcf
    with warnings.catch_warnings():
      warnings.simplefilter("ignore", MJCFWarning)
      return from_mjcf(gym_xml(scene))
  return json.loads(scene_path(scene).read_text())


def check(scene: str, start: np.ndarray, pos: np.ndarray, vel: np.ndarray) -> tuple[bool, float, str]:
  """The scene's physical check on body positions (B, nbody, 3) [m] and linear velocities (B, nbody, 3) [m/s] of a
  final state (start: the initial positions). Returns (ok, the measured value, what it is)."""
  if scene == "pendulum":
    err = float(np.abs(np.linalg.norm(pos[:, 0] - np.array([0.0, 0.0, 2.0]), axis=-1) - 1.0).max())
    return err < 1e-3, err, "rod length error [m]"
  if scene == "drop":
    err = float(np.abs(pos[:, 0, 2] - 0.1).max())
    return err < 1e-3 and float(np.abs(vel).max()) < 1e-2, err, "rest height error [m]"
  if scene == "gym_ant":
    # dropped from its reference pose (torso 0.75 m) onto its floor: it lands on its legs and stays there, the torso
    # between 0.3 m (lying on it would read 0.25) and 0.75, every value finite (NaN fails the bound). Where it settles
    # differs: MuJoCo's soft ankle limits hold the torso at 0.55 m after 2 s, this engine's at 0.41 (docs/mjcf.md)
    z = pos[:, 0, 2] if np.isfinite(pos).all() and np.isfinite(vel).all() else np.array([float("nan")])
    low = float(z.min())
    return bool(0.3 < low and z.max() < 0.75), low, "lowest torso height [m]"
  if scene == "gym_half_cheetah":
    # from its reference pose (torso 0.7 m, feet on the floor): it settles on its sprung legs, MuJoCo's torso at 0.568
    # m, and stays up (lying on its back would read ~0.1); every value finite, at rest below 2 cm/s
    z = pos[:, 0, 2] if np.isfinite(pos).all() and np.isfinite(vel).all() else np.array([float("nan")])
    low = float(z.min())
    return bool(0.45 < low and z.max() < 0.75 and float(np.abs(vel).max()) < 2e-2), low, "lowest torso height [m]"
  if scene == "gym_humanoid":
    # from its reference pose (torso 1.4 m, feet 2 cm above the floor) with zero control it falls over (MuJoCo's and
    # this engine's both, docs/mjcf.md) and lies on the floor by 2 s: every torso between 0.05 m and 0.3 m (standing
    # reads 1.3; MuJoCo's, lying from x0, 0.078 from 1.2 s; this engine's after a kicked fall 0.183), finite, and no
    # body's centre of mass below the floor
    z = pos[:, 0, 2] if np.isfinite(pos).all() and np.isfinite(vel).all() else np.array([float("nan")])
    low, high = float(z.min()), float(z.max())
    return bool(0.05 < low and high < 0.3 and pos[..., 2].min() > 0.0), high, "highest torso height [m]"
  if scene == "ant":
    # standing with zero control: the torso within 1 cm of its rigid rest height. The joints' and contacts' compliance
    # sag it (MuJoCo 2.6 mm at its 0.02 s step, the engine 5.9 mm: its joints' static error); an ant whose knees
    # give 20 mrad past their limit is 1 cm lower, one lying on its torso 9.8 cm. At rest (below 1 cm/s), where it
    # started in x, y (a symmetric ant with no torque has nothing to walk it off), and finite (NaN fails every bound)
    err = float(np.abs(pos[:, 0, 2] - ANT_REST_Z).max()) if np.isfinite(pos).all() else float("nan")
    drift = float(np.linalg.norm(pos[:, 0, :2] - start[:, 0, :2], axis=-1).max())
    return err < 1e-2 and drift < 1e-2 and float(np.abs(vel).max()) < 1e-2, err, "torso height off its rest [m]"
  # a resting stack stands: no cube slides or leans 2 mm, none sinks 1 mm into the one below (or the ground), as in
  # tests/test_verify_stack.py; the compression of a soft-contact column (MuJoCo: ~0.5 mm a contact, 7.8 mm at the
  # top of ten) is the contacts' own depth, each checked, not a drift
  lateral = float(np.abs(pos[..., :2] - start[..., :2]).max())
  gaps = np.diff(np.concatenate([np.zeros_like(pos[:, :1, 2]), pos[:, :, 2]], axis=1), axis=1)
  sink = float((np.diff(np.concatenate([np.zeros_like(start[:, :1, 2]), start[:, :, 2]], axis=1), axis=1) - gaps).max())
  return lateral < 2e-3 and sink < 1e-3, max(lateral, sink), "max(sideways drift, sink per contact) [m]"


def timed(advance, state, sync) -> tuple[float, float, object]:
  """(first call s, median of 3 timed calls s, final state): advance(state) -> state, sync() waits for the device."""
  t0 = time.perf_counter()
  state = advance(state)
  sync()
  first, walls = time.perf_counter() - t0, []
  for _ in range(3):
    t0 = time.perf_counter()
    state = advance(state)
    sync()
    walls.append(time.perf_counter() - t0)
  return first, statistics.median(walls), state


def study_budget(scene: str) -> tuple[int, int] | None:
  """(substeps, iterations) that bench/study_budget.py recommends for the scene (the cheapest budget that passes its
  physical check with margin), or None where the study has none (bench/results_budget.json)."""
  try: rec = json.loads((ROOT / "bench" / "results_budget.json").read_text())["scenes"][scene]["recommended"]
  except (OSError, KeyError, ValueError): return None
  return (int(rec[0]), int(rec[1])) if rec else None


def run_engine(scene: str, batch: int, steps: int, config: str, budget: tuple[int, int] | None = None,
               steps_per_call: int | None = None) -> dict:
  """One engine configuration on the scene; budget: (substeps, iterations) in place of the scene file's.
  steps_per_call: env-steps per launch of the WGSL kernel, default all of a call's `steps` in one launch, as
  MuJoCo's rollout runs them in one C call (the oracle takes one env-step per TinyJit call: a capture of many costs
  seconds of scheduling a step)."""
  from tinygrad import Device
  from engine.scene import load_scene
  from engine.simulator import Simulator
  backend, device = CONFIGS[config]
  spec = scene_spec(scene)
  if budget: spec.update(substeps=budget[0], iterations=budget[1])
  model = load_scene(spec, device=device)
  k = (steps_per_call or steps) if backend == "wgsl" else 1
  sim = Simulator(model, batch, backend=backend, steps_per_call=k, tier_up=0)   # the step tier from the first call
  start = sim.reset()
  first, wall, end = timed(lambda s: sim.rollout(s, steps), start, Device[device].synchronize)
  return {"first_call_s": first, "wall_s": wall, "steps_per_call": k,
          "result": check(scene, start.body_pos.numpy(), end.body_pos.numpy(), end.body_vel.numpy())}


def run_mujoco(scene: str, batch: int, steps: int) -> dict:
  import mujoco
  from mujoco import rollout
  m = mujoco.MjModel.from_xml_path(str(gym_xml(scene) if scene.startswith("gym_") else
                                        ROOT / "bench" / "mjcf" / f"{scene}.xml"))
  datas = [mujoco.MjData(m) for _ in range(THREADS)]
  spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
  x0 = np.empty(mujoco.mj_stateSize(m, spec))
  mujoco.mj_getState(m, datas[0], x0, spec)
  def advance(x):   # batch rollouts in C on THREADS threads; the last state of each
    return rollout.rollout(m, datas, x, nstep=steps, persistent_pool=True)[0][:, -1].copy()
  def bodies(x):    # (B, nbody, 3) positions and linear velocities of the bodies (the world body left out)
    d, pos, vel, v6 = datas[0], [], [], np.zeros(6)
    for row in x:
      mujoco.mj_setState(m, d, row, spec)
      mujoco.mj_forward(m, d)
      pos.append(d.xipos[1:].copy())   # centres of mass, the engine's body frames (and mj_objectVelocity's point)
      vel.append([(mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_BODY, b, v6, 0), v6[3:].copy())[1]
                  for b in range(1, m.nbody)])
    return np.array(pos), np.array(vel)
  start = np.tile(x0, (batch, 1))
  first, wall, end = timed(advance, start, lambda: None)
  rollout.shutdown_persistent_pool()
  (p0, _), (p, v) = bodies(start[:1]), bodies(end)
  return {"first_call_s": first, "wall_s": wall, "steps_per_call": steps, "result": check(scene, p0, p, v)}


def merged(path: Path, meta: dict, rows: list) -> dict:
  """The results file with these rows in place of those of the same scene and batch, and the others kept: every row
  carries the meta of the run that measured it (rows written before rows carried one get the file's), since ratios
  only compare within one run."""
  try: old = json.loads(path.read_text())
  except (OSError, ValueError): old = {}
  new = {(r["scene"], r["batch"]): r for r in rows}
  kept = [new.pop((r["scene"], r["batch"]), {**r, "meta": r.get("meta", old.get("meta"))})
          for r in old.get("results", [])]
  return {"meta": meta, "results": kept + list(new.values())}


def rate(x: float | None) -> str:
  return "-" if x is None else f"{x / 1e6:.2f}M" if x >= 1e6 else f"{x / 1e3:.1f}k" if x >= 1e3 else f"{x:.0f}"


def main(argv=None) -> int:
  p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  p.add_argument("--only", nargs="*", help="scene:batch items (default: pendulum:4096 drop:256 stack10:64 ant:256)")
  p.add_argument("--steps", type=int, help="env-steps per call (default: per scene)")
  p.add_argument("--steps-per-call", type=int, help="env-steps per WGSL launch (default: all of a call's)")
  p.add_argument("--configs", nargs="*", default=list(CONFIGS), choices=list(CONFIGS))
  p.add_argument("--study-budget", action="store_true", help="run this engine at the substeps and iterations "
                 "bench/study_budget.py recommends per scene (default: the scene file's); writes "
                 "bench/results_peers_budget.json unless --out is given")
  p.add_argument("--out")
  args = p.parse_args(argv)
  args.out = args.out or str(ROOT / "bench" / ("results_peers_budget.json" if args.study_budget else
                                               "results_peers.json"))
  items = SET if not args.only else [(s.split(":")[0], int(s.split(":")[1]), dict(
    (x, n) for x, _, n in SET + EXTRA).get(s.split(":")[0], 60)) for s in args.only]
  versions = {k: importlib.metadata.version(k) for k in ("tinygrad", "numpy")}
  if "mujoco" in args.configs:
    try: versions["mujoco"] = importlib.metadata.version("mujoco")
    except importlib.metadata.PackageNotFoundError:
      print("error: MuJoCo is not installed: pip install 'tinyxpbd[bench]' (or mujoco), or leave out --configs "
            "mujoco", file=sys.stderr)
      return 2
  meta = {**versions, "python": platform.python_version(), "cpu_count": os.cpu_count(), "mujoco_threads": THREADS,
          "machine": platform.processor() or platform.machine(), "time": time.strftime("%Y-%m-%d %H:%M:%S")}
  results, failed = [], False
  for scene, batch, steps in items:
    steps = args.steps or steps
    budget = study_budget(scene) if args.study_budget else None
    row = {"scene": scene, "batch": batch, "steps": steps, **({"budget": list(budget)} if budget else {})}
    for config in args.configs:
      try: r = run_mujoco(scene, batch, steps) if config == "mujoco" else run_engine(scene, batch, steps, config,
                                                                                      budget, args.steps_per_call)
      except Exception as e:  # noqa: BLE001 (one backend failing must not hide the others' figures)
        r = {"error": f"{type(e).__name__}: {str(e)[:200]}"}
      if "error" not in r:
        ok, value, what = r.pop("result")
        r.update(env_steps_per_s=batch * steps / r["wall_s"], check_ok=ok, check_value=value, check=what)
        failed |= not ok
        print(f"{scene:9s} x{batch:<5d} {config:12s} {rate(r['env_steps_per_s']):>8s} env-steps/s  first call "
              f"{r['first_call_s']:6.1f} s  {what} {value:.2e} {'ok' if ok else 'FAILED'}", flush=True)
      else: print(f"{scene:9s} x{batch:<5d} {config:12s} error: {r['error']}", flush=True)
      row[config] = r
    ours = [row[c]["env_steps_per_s"] for c in args.configs if c != "mujoco" and "env_steps_per_s" in row[c]]
    if ours and "env_steps_per_s" in row.get("mujoco", {}):
      row["best_over_mujoco"] = max(ours) / row["mujoco"]["env_steps_per_s"]
    row["meta"] = meta
    results.append(row)
    Path(args.out).write_text(json.dumps(merged(Path(args.out), meta, results), indent=1) + "\n")
  print("\n| scene x batch | " + " | ".join(args.configs) + " | best / MuJoCo |")
  print("|" + " --- |" * (len(args.configs) + 2))
  for row in results:
    cells = [rate(row[c].get("env_steps_per_s")) for c in args.configs]
    best = row.get("best_over_mujoco")
    name = f"{row['scene']} x{row['batch']}" + (" (S={}, K={})".format(*row["budget"]) if "budget" in row else "")
    print(f"| {name} | " + " | ".join(cells) + f" | {'-' if best is None else f'{best:.3f}'} |")
  print(", ".join(f"{k} {v}" for k, v in meta.items()))
  return 1 if failed else 0


if __name__ == "__main__":
  sys.exit(main())
