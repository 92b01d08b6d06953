"""Env throughput: `python bench/bench_env.py [--tasks ...] [--envs 1 256 4096] [--steps N] [--backend wgsl]`.

env-steps/s of engine.make_env(task, num_envs, backend) (the oracle, or the WGSL kernel on lavapipe or a GPU: one
launch per env-step), stepping random actions (numpy, uploaded every step, as a trainer would), after a warm-up that
compiles; the median of 3 timed runs of --steps steps. Also the first call (compile) time. Prints a markdown table and
writes bench/results_env.json (results_env_wgsl.json for the kernel) with the versions and device.
"""
import argparse
import json
import os
import platform
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # run as a script from anywhere

import numpy as np  # noqa: E402


def bench_task(task: str, num_envs: int, steps: int, backend: str = "oracle") -> dict:
  import engine
  t0 = time.perf_counter()
  env = engine.make_env(task, num_envs=num_envs, seed=0, backend=backend)
  env.reset()
  rng = np.random.default_rng(0)
  actions = [env.action_space.sample(rng) for _ in range(steps)]
  env.step(actions[0])
  env.step(actions[1]).__getitem__(0).numpy()
  first = time.perf_counter() - t0
  runs = []
  for _ in range(3):
    t = time.perf_counter()
    for a in actions: obs, *_ = env.step(a)
    obs.numpy()
    runs.append(time.perf_counter() - t)
  dt = float(np.median(runs))
  return {"task": task, "num_envs": num_envs, "steps": steps, "env_steps_per_s": num_envs * steps / dt,
          "ms_per_step": 1000 * dt / steps, "first_call_s": first}


def main() -> int:
  from engine.tasks import task_names
  p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  p.add_argument("--tasks", nargs="+", default=list(task_names()))
  p.add_argument("--envs", nargs="+", type=int, default=[1, 256, 4096])
  p.add_argument("--steps", type=int, default=20)
  p.add_argument("--backend", choices=("oracle", "wgsl"), default="oracle")
  p.add_argument("--out", help="default bench/results_env.json, or results_env_wgsl.json with --backend wgsl")
  args = p.parse_args()
  here = os.path.dirname(os.path.abspath(__file__))
  out = args.out or os.path.join(here, "results_env.json" if args.backend == "oracle" else "results_env_wgsl.json")
  import tinygrad
  from tinygrad import Device
  rows = []
  print("| task | envs | env-steps/s | ms/step | first call [s] |\n|---|---|---|---|---|", flush=True)
  for task in args.tasks:
    for n in args.envs:
      r = bench_task(task, n, args.steps, args.backend)
      rows.append(r)
      print(f"| {task} | {n} | {r['env_steps_per_s']:,.0f} | {r['ms_per_step']:.1f} | {r['first_call_s']:.1f} |",
            flush=True)
  from engine.stepping import DEFAULT_DEVICE
  meta = {"device": DEFAULT_DEVICE.get(args.backend, Device.DEFAULT), "cpu": platform.processor() or platform.machine(),
          "cores": os.cpu_count(),
          "tinygrad": tinygrad.__version__ if hasattr(tinygrad, "__version__") else "0.14.0",
          "numpy": np.__version__, "python": platform.python_version(), "backend": args.backend, "dtype": "float32"}
  if args.backend == "wgsl":
    from engine.wgsl import adapter
    meta["adapter"] = adapter()
  with open(out, "w") as f: json.dump({"meta": meta, "results": rows}, f, indent=1)
  return 0


if __name__ == "__main__":
  sys.exit(main())
