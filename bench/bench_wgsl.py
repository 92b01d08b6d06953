"""Backends side by side in one run (DESIGN sec. 8): env-steps/s of (a) the oracle on CPU, (b) the oracle on WEBGPU,
(c) the WGSL kernel on WEBGPU, plus the kernel's dispatch overhead per call.

  python bench/bench_wgsl.py                      # pendulum x256, x4096 and stack10 x64 (this machine: lavapipe)
  python bench/bench_wgsl.py --gpu                # pendulum x65536 and stack10 x4096 as well (a real GPU)
  python bench/bench_wgsl.py --only pendulum:256 --configs wgsl-WEBGPU
  python bench/bench_wgsl.py --lanes              # the kernel alone at LANES 1, 32, 64: stack10 x64, pendulum x256,
                                                  # and at LANES 1, 32: stack10 x1, x4

env-steps/s = batch x steps / wall seconds after a warm-up call, median of 3 runs; the first call (compile) is
reported separately, and each run's final state must pass the scene's physical check (pendulum: anchor error < 1 mm,
stack10: no box moved more than 1 mm) or the figure is marked failed. Results go to bench/results_wgsl.json (the
lanes comparison under "lanes", or "lanes_lp_num_threads_N" when lavapipe's LP_NUM_THREADS is set, the rest under
"meta" and "results"; each mode keeps the other's numbers).
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
from tinygrad import Device

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from engine.scene import load_scene  # noqa: E402
from engine.simulator import Simulator  # noqa: E402

CONFIGS = {"oracle-CPU": ("oracle", "CPU"), "oracle-WEBGPU": ("oracle", "WEBGPU"), "wgsl-WEBGPU": ("wgsl", "WEBGPU")}


def physical_check(name: str, model, start, end) -> tuple[bool, float]:
  if name == "pendulum":   # the bob stays 1 m from the hinge at (0, 0, 2)
    err = float(np.abs(np.linalg.norm(end.body_pos.numpy()[:, 0] - np.array([0.0, 0.0, 2.0]), axis=-1) - 1.0).max())
    return err < 1e-3, err
  drift = float(np.abs(end.body_pos.numpy() - start.body_pos.numpy()).max())   # a resting stack stays put
  return drift < 1e-3, drift


def run(name: str, batch: int, config: str, steps: int, per_call: int, lanes: int | None = None) -> dict:
  """lanes: invocations per env of the kernel (engine.wgsl.LANES); None: its per-scene default."""
  backend, device = CONFIGS[config]
  if lanes is not None:
    from engine import wgsl
    wgsl.LANES = lanes
  model = load_scene(ROOT / "scenes" / f"{name}.json", device=device)
  sim = Simulator(model, batch, backend=backend, steps_per_call=per_call, tier_up=0)   # the step tier (oracle)
  state = sim.reset()
  t0 = time.perf_counter()
  warm = sim.rollout(state, per_call)
  Device[device].synchronize()
  compile_s = time.perf_counter() - t0
  walls = []
  for _ in range(3):
    t0 = time.perf_counter()
    end = sim.rollout(warm, steps)
    Device[device].synchronize()
    walls.append(time.perf_counter() - t0)
  ok, err = physical_check(name, model, state, end)
  wall = statistics.median(walls)
  return {"scene": name, "batch": batch, "config": config, "steps": steps, "steps_per_call": per_call,
          **({} if lanes is None else {"lanes": lanes}), "env_steps_per_s": batch * steps / wall, "wall_s": wall,
          "compile_s": compile_s, "check_ok": ok, "check_value": err}


def dispatch_overhead(calls: int = 50) -> float:
  """Seconds per call of the WGSL step for one pendulum env, one step per call (Python + launch + sync)."""
  model = load_scene(ROOT / "scenes" / "pendulum.json", device="WEBGPU")
  sim = Simulator(model, 1, backend="wgsl")
  state = sim.rollout(sim.reset(), 1)
  t0 = time.perf_counter()
  for _ in range(calls): state = sim.step(state)
  Device["WEBGPU"].synchronize()
  return (time.perf_counter() - t0) / calls


def lanes_comparison(items: list[tuple[str, int, tuple[int, ...]]], keep) -> None:
  """The WGSL kernel alone at each LANES (invocations per env: 1 is one env per invocation, more is one env per
  workgroup) for each (scene, batch, lanes values), same run, 20 steps (10 per call) per timing. keep(record) gets
  the record so far after every timing (a run cut short by a time limit keeps what it measured)."""
  from engine import wgsl
  old, results = wgsl.LANES, []
  for name, batch, values in items:
    for lanes in values:
      r = run(name, batch, "wgsl-WEBGPU", 20, 10, lanes)
      results.append(r)
      print(f"{name:9s} x{batch:<6d} lanes {lanes:3d} {r['env_steps_per_s']:>12,.0f} env-steps/s  compile "
            f"{r['compile_s']:6.1f} s  check {'ok' if r['check_ok'] else 'FAILED'} ({r['check_value']:.1e})",
            flush=True)
      keep({"adapter": wgsl.adapter(), "cpus": os.cpu_count(), "lp_num_threads": os.environ.get("LP_NUM_THREADS"),
            "load_average": os.getloadavg(), "time": time.strftime("%Y-%m-%d %H:%M:%S"), "results": results})
  wgsl.LANES = old


def save(path: Path, **keys) -> None:
  """Write `keys` into the JSON file at path, keeping its other keys (the other mode's numbers)."""
  old = json.loads(path.read_text()) if path.exists() else {}
  path.write_text(json.dumps({**old, **keys}, indent=1))


def main(argv=None) -> int:
  p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  p.add_argument("--gpu", action="store_true", help="add the large GPU batches")
  p.add_argument("--only", nargs="*", help="scene:batch items (default: the protocol's list)")
  p.add_argument("--configs", nargs="*", default=list(CONFIGS), choices=list(CONFIGS))
  p.add_argument("--out", default=str(ROOT / "bench" / "results_wgsl.json"))
  p.add_argument("--lanes", action="store_true", help="only the LANES comparison (stack10 x1, x4, x64, pendulum "
                 "x256; with --gpu also stack10 x4096)")
  args = p.parse_args(argv)
  if args.lanes:   # lavapipe's thread count (LP_NUM_THREADS) changes the picture: its runs get their own key
    key = "lanes" + (f"_lp_num_threads_{os.environ['LP_NUM_THREADS']}" if "LP_NUM_THREADS" in os.environ else "")
    items = [("stack10", 64, (1, 32, 64)), ("pendulum", 256, (1, 32, 64)), ("stack10", 1, (1, 32)),
             ("stack10", 4, (1, 32))] + ([("stack10", 4096, (1, 32, 64))] if args.gpu else [])
    lanes_comparison(items, lambda record: save(Path(args.out), **{key: record}))
    return 0
  items = [("pendulum", 256), ("pendulum", 4096), ("stack10", 64)] + ([("pendulum", 65536), ("stack10", 4096)]
                                                                       if args.gpu else [])
  if args.only: items = [(s.split(":")[0], int(s.split(":")[1])) for s in args.only]
  try:
    from tinygrad.runtime.ops_webgpu import WebGpuDevice  # noqa: F401
    Device["WEBGPU"]
  except Exception as e:  # noqa: BLE001
    print(f"no WEBGPU device ({e}); only the CPU oracle runs", file=sys.stderr)
    args.configs = [c for c in args.configs if c == "oracle-CPU"]
  results = []
  meta = {"python": platform.python_version(), "tinygrad": importlib.metadata.version("tinygrad"),
          "numpy": np.__version__, "machine": platform.processor() or platform.machine(), "dispatch_overhead_s": None,
          "time": time.strftime("%Y-%m-%d %H:%M:%S")}
  for name, batch in items:
    for config in args.configs:
      per_call = 10 if config.startswith("wgsl") else 1
      steps = 100 if config.startswith("wgsl") else (20 if batch <= 4096 else 5)
      try:
        r = run(name, batch, config, steps, per_call)
      except Exception as e:  # noqa: BLE001 (report and go on: one config failing must not hide the others)
        r = {"scene": name, "batch": batch, "config": config, "error": f"{type(e).__name__}: {str(e)[:200]}"}
      results.append(r)
      if "error" in r: print(f"{name:9s} x{batch:<6d} {config:14s} error: {r['error']}", flush=True)
      else:
        print(f"{name:9s} x{batch:<6d} {config:14s} {r['env_steps_per_s']:>12,.0f} env-steps/s  compile "
              f"{r['compile_s']:6.1f} s  check {'ok' if r['check_ok'] else 'FAILED'} ({r['check_value']:.1e})",
              flush=True)
      save(Path(args.out), meta=meta, results=results)   # after every figure: a run cut short keeps what it measured
  overhead = dispatch_overhead() if "wgsl-WEBGPU" in args.configs else None
  if overhead is not None: print(f"wgsl dispatch overhead: {overhead * 1e3:.2f} ms per call (1 env, 1 step)")
  save(Path(args.out), meta={**meta, "dispatch_overhead_s": overhead}, results=results)
  return 0


if __name__ == "__main__":
  sys.exit(main())
