"""Throughput benchmark of the simulator (oracle backend), with each scene's physical check in the same run.

Measured per (scene, batch): the JIT warm-up (tinygrad schedules, compiles and captures the step on the first two
calls, so that time is reported on its own), then the median of 3 timed rollouts of `steps` env-steps each;
env-steps/s = batch x steps / median seconds. The check is the largest joint anchor error [m] of the final state of
the warm-up and of every timed run: how far the two sides of each joint have come apart (for distance joints, how far
the anchors' separation is from the rest length). bench/bench_oracle.py and `python -m engine bench` run this module.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from importlib import metadata
from pathlib import Path

import numpy as np

from engine.shipped import scene_path

ROOT = Path(__file__).resolve().parent.parent
# the recorded results in a source checkout; an installed package (no pyproject.toml above it) writes to the working
# directory, not into site-packages
RESULTS = ROOT / "bench" / "results.json" if (ROOT / "pyproject.toml").is_file() else Path("bench_results.json")
ANCHOR_TOL = 1e-3  # [m] a joint that opens, or a contact that sinks, by more than a millimetre is a solver bug
# the Simulator tiers bench() can time, by the tier_up that keeps a run on them (engine/stepping.py Stepper.run)
TIERS = {"step": 0, "substep": 10**9}
# (scene, batch, steps): small batches are cheap per step, so they get more steps for a stable median
DEFAULT_SET = (("pendulum", 1, 240), ("pendulum", 256, 240), ("pendulum", 4096, 120), ("chain", 64, 120),
               ("drop", 256, 120), ("stack10", 1, 120), ("stack10", 64, 60), ("pile", 16, 60))
QUICK_SET = (("pendulum", 1, 8),)
DEFAULT_BATCHES = {"pendulum": (1, 256, 4096), "chain": (64,), "drop": (256,), "stack10": (1, 64), "pile": (16,)}


def joint_errors(model, body_pos: np.ndarray, body_quat: np.ndarray) -> np.ndarray:
  """(B, njoint) anchor error [m] of a state: distance between the joint's anchor as carried by the parent frame
  (the world frame, identity, for WORLD) and as carried by the child frame; for distance joints, how far that
  distance is from the rest length. body_pos (B, nbody, 3), body_quat (B, nbody, 4)."""
  from engine.npquat import quat_rotate
  from oracle.types import WORLD
  pos, quat = np.asarray(body_pos, np.float64), np.asarray(body_quat, np.float64)
  B = pos.shape[0]
  def per_env(t):  # parameters may carry a leading batch axis (domain randomisation)
    a = t.numpy().astype(np.float64)
    return np.broadcast_to(a, (B,) + a.shape[-2:]) if a.ndim >= 2 else np.broadcast_to(a, (B,) + a.shape[-1:])
  a_par, a_chi, length = per_env(model.jnt_anchor_parent), per_env(model.jnt_anchor_child), per_env(model.jnt_length)
  err = np.zeros((B, model.njoint))
  for j in range(model.njoint):
    p, c = model.jnt_parent[j], model.jnt_child[j]
    w_par = a_par[:, j] if p == WORLD else pos[:, p] + quat_rotate(quat[:, p], a_par[:, j])
    w_chi = pos[:, c] + quat_rotate(quat[:, c], a_chi[:, j])
    gap = np.linalg.norm(w_par - w_chi, axis=-1)
    err[:, j] = np.abs(gap - length[:, j]) if model.jnt_type[j] == "distance" else gap
  return err


def state_check(model, state) -> tuple[float, float]:
  """(largest joint anchor error, deepest contact penetration) [m] over envs; inf when the state is not finite."""
  from engine.stepping import Stepper
  from oracle.packed import pack_state
  pos, quat = state.body_pos.numpy(), state.body_quat.numpy()
  if not (np.isfinite(pos).all() and np.isfinite(quat).all()): return float("inf"), float("inf")
  joints = float(joint_errors(model, pos, quat).max()) if model.njoint else 0.0
  return joints, float(Stepper(model).max_penetration(pack_state(state).contiguous()).max().item())


def environment(device: str) -> dict:
  cpu = platform.processor() or platform.machine()
  try:
    with open("/proc/cpuinfo") as f:
      cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), cpu)
  except OSError: pass
  return {"backend": "oracle", "device": device, "tinygrad": metadata.version("tinygrad"), "numpy": np.__version__,
          "python": platform.python_version(), "cpu_count": os.cpu_count(),
          "cpu_affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
          "cpu": cpu, "platform": platform.platform()}


def bench(scene, batch: int, steps: int, steps_per_call: int = 1, device: str = "CPU", runs: int = 3,
          tier: str = "step") -> dict:
  """Benchmark one scene at one batch size on the oracle backend; returns a JSON-serialisable dict.

  tier: "step" (whole env-steps per JIT call, what long runs use) or "substep" (one substep's JIT replayed S times per
  env-step, how a Simulator starts: engine/stepping.py Stepper.run; steps_per_call does not apply).

  compile_s: the first two rollouts of steps_per_call env-steps (TinyJit runs the function once, then captures it on
  the second call; both schedule the whole step graph, which dominates). run_s: median of `runs` timed rollouts of
  `steps` env-steps. kernels_per_step: the kernels in the captured step JIT (graph batches unpacked:
  engine/cpu_graph.py) per env-step; us_per_kernel = wall time per env-step / kernels per step, which at batch 1 is
  what a kernel costs to launch and run when it does almost no work."""
  from tinygrad import Device
  from engine.cpu_graph import kernel_count
  from engine.scene import load_scene
  from engine.simulator import Simulator
  path = scene_path(scene)
  model = load_scene(path, device=device)
  # tier_up=0: the step tier from the first call, the one long runs use; a tier_up past the run: the substep tier
  if tier not in TIERS: raise ValueError(f"tier: expected one of {list(TIERS)}, got {tier!r}")
  if tier == "substep": steps_per_call = 1
  sim = Simulator(model, batch=batch, device=device, steps_per_call=steps_per_call, tier_up=TIERS[tier])
  state = sim.reset(seed=0, noise=0.05 if batch > 1 else 0.0)
  dev = Device[sim.device]
  t0 = time.perf_counter()
  for _ in range(2): state = sim.rollout(state, steps_per_call)
  dev.synchronize()
  compile_s = time.perf_counter() - t0
  state = sim.rollout(state, steps)  # warm-up at the timed length (allocations, caches)
  dev.synchronize()
  worst, deepest = state_check(model, state)
  times = []
  for _ in range(runs):
    t0 = time.perf_counter()
    state = sim.rollout(state, steps)
    dev.synchronize()
    times.append(time.perf_counter() - t0)
    w, d = state_check(model, state)  # outside the timed region
    worst, deepest = max(worst, w), max(deepest, d)
  run_s = statistics.median(times)
  if tier == "step": kps = kernel_count(sim.stepper.runner(steps_per_call)) / steps_per_call
  else:   # the substep tier's JITs (Stepper._run_substeps): the contact plan once a step, the substep S times
    jits = sim.stepper.jits()
    kps = sum(map(kernel_count, jits["plan"])) + model.substeps * kernel_count(jits["substep"][0])
  sim_seconds = float(state.time.numpy()[0])
  return {"scene": model.name, "batch": batch, "steps": steps, "steps_per_call": steps_per_call, "tier": tier,
          "compile_s": compile_s, "run_s": run_s, "runs_s": times, "env_steps_per_s": batch * steps / run_s,
          "kernels_per_step": kps, "us_per_kernel": 1e6 * run_s / steps / kps if kps else None,
          "check": "max joint anchor error and max contact penetration [m]", "max_anchor_err_m": worst,
          "max_penetration_m": deepest, "check_tol_m": ANCHOR_TOL,
          "check_ok": bool(worst <= ANCHOR_TOL and deepest <= ANCHOR_TOL), "sim_seconds": sim_seconds,
          **environment(str(sim.device))}


def _fmt_rate(x: float) -> str:
  return f"{x / 1e6:.2f}M" if x >= 1e6 else f"{x / 1e3:.1f}k" if x >= 1e3 else f"{x:.0f}"


def table(results: list[dict]) -> str:
  """Markdown table of bench() results."""
  head = ("scene", "batch", "steps", "steps/call", "tier", "compile [s]", "median run [s]", "env-steps/s",
          "kernels/step", "us/kernel", "max anchor err [m]", "max penetration [m]", "check")
  rows = ["| " + " | ".join(head) + " |", "|" + "|".join(" --- " for _ in head) + "|"]
  for r in results:
    us = f"{r['us_per_kernel']:.1f}" if r["us_per_kernel"] is not None else "-"
    rows.append(f"| {r['scene']} | {r['batch']} | {r['steps']} | {r['steps_per_call']} | {r.get('tier', 'step')} | "
                f"{r['compile_s']:.1f} | "
                f"{r['run_s']:.3f} | {_fmt_rate(r['env_steps_per_s'])} | {r['kernels_per_step']:.0f} | {us} | "
                f"{r['max_anchor_err_m']:.2e} | {r.get('max_penetration_m', 0.0):.2e} | "
                f"{'ok' if r['check_ok'] else 'FAIL'} |")
  return "\n".join(rows)


def plan(scenes=None, batches=None, steps=None, quick=False) -> list[tuple[str, int, int]]:
  """(scene, batch, steps) to run: the default (or quick) set, narrowed or widened by the options."""
  base = QUICK_SET if quick else DEFAULT_SET
  if scenes is None and batches is None:
    return [(s, b, steps or n) for s, b, n in base]
  out = []
  for s in scenes or sorted({s for s, _, _ in base}, key=[s for s, _, _ in base].index):
    for b in batches or DEFAULT_BATCHES.get(s, (1,)):
      n = steps or (8 if quick else 240 if b <= 256 else 120)
      out.append((s, b, n))
  return out


def add_arguments(p: argparse.ArgumentParser) -> None:
  p.add_argument("--scenes", nargs="+", metavar="SCENE", help="scene names (scenes/NAME.json) or paths "
                 "(default: pendulum x1, x256, x4096 and chain x64)")
  p.add_argument("--batch", nargs="+", type=int, metavar="N", help="batch sizes (default: per scene)")
  p.add_argument("--steps", type=int, metavar="N", help="env-steps per timed run (default: per batch)")
  p.add_argument("--steps-per-call", type=int, default=1, metavar="K",
                 help="env-steps fused into one JIT call (default 1; warm-up time grows ~linearly with K)")
  p.add_argument("--device", default="CPU", help="tinygrad device (default CPU)")
  p.add_argument("--tier", choices=list(TIERS), default="step", help="the Simulator's step tier (whole env-steps per "
                 "JIT call, default) or its substep tier (one substep's JIT, how a run starts)")
  p.add_argument("--quick", action="store_true", help="a tiny run (pendulum x1, 8 steps) to check that it works")
  p.add_argument("--json", metavar="PATH", help=f"where to write the results (default {RESULTS}; "
                 "--quick writes none unless given)")


def run(args) -> int:
  todo = plan(args.scenes, args.batch, args.steps, args.quick)
  from engine.scene import SceneError
  for s, _, _ in todo:   # a bad name is one line before anything compiles
    try:
      if not (path := scene_path(s)).is_file(): raise SceneError(f"scene file '{path}': not found")
    except SceneError as e:
      print(f"error: {e}", file=sys.stderr)
      return 2
  results = []
  for s, b, n in todo:
    print(f"bench: {s} x{b}, {n} steps (first calls compile)...", flush=True)
    results.append(bench(s, b, n, args.steps_per_call, args.device, tier=args.tier))
  env = {k: results[0][k] for k in ("backend", "device", "tinygrad", "numpy", "python", "cpu_count", "cpu")}
  print()
  print(table(results))
  print()
  print(", ".join(f"{k} {v}" for k, v in env.items()))
  out = args.json or (None if args.quick else RESULTS)
  if out:
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps({"results": results, "environment": env}, indent=1) + "\n")
    print(f"wrote {out}")
  return 0 if all(r["check_ok"] for r in results) else 1


def main(argv=None) -> int:
  p = argparse.ArgumentParser(prog="bench_oracle", description="Oracle-backend throughput (env-steps/s).")
  add_arguments(p)
  return run(p.parse_args(argv))
