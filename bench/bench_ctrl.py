"""Controls per env-step on the WGSL kernel, beside a control held for the run, in one run: env-steps/s of
`Simulator.rollout` with one (batch, nact) control held (a JIT replay per step) and with a (steps, batch, nact)
sequence (engine/stepping.py Stepper._run_sequence: the steps in one launch), and of `rollout_grad` with the
sequence (forward and backward kernels, the loss's gradient with respect to every step's controls).

  python bench/bench_ctrl.py                        # reacher x256 and x1024, 100 env-steps
  python bench/bench_ctrl.py --only reacher:64 --steps 50

Each figure is the median of 5 calls after two warm-up calls, host transfers of the result included (a rollout's
final positions, a gradient's control gradients), and carries the scene's physical check on the same run's final
state (the joints' anchors within 1 mm) and, for the gradient, that it is finite and non-zero. Results go to
bench/results_ctrl.json.
"""
from __future__ import annotations
import argparse
import json
import statistics
import sys
import time
from pathlib import Path
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import engine  # noqa: E402
from engine.cli_bench import ANCHOR_TOL, environment, state_check  # noqa: E402
from engine.grad import rollout_grad  # noqa: E402
from engine.tasks import SCENES as TASK_SCENES  # noqa: E402


def timed(fn, runs: int = 5) -> tuple[float, object]:
  for _ in range(2): out = fn()
  times = []
  for _ in range(runs):
    t0 = time.perf_counter()
    out = fn()
    times.append(time.perf_counter() - t0)
  return statistics.median(times), out


def run(name: str, batch: int, steps: int) -> dict:
  model = engine.load_scene(TASK_SCENES / f"{name}.json", device="WEBGPU")
  sim = engine.Simulator(model, batch=batch, backend="wgsl")
  start = sim.reset(seed=0, noise=0.1)
  seq = np.random.default_rng(0).uniform(-1, 1, (steps, batch, model.nact)).astype(np.float32)
  out = {"scene": name, "batch": batch, "steps": steps}
  for form, ctrl in (("held", seq[0]), ("sequence", seq)):
    def forward(ctrl=ctrl):
      state = sim.rollout(start, steps, ctrl=ctrl)
      state.body_pos.numpy()
      return state
    secs, state = timed(forward)
    out[f"{form}_env_steps_per_s"] = batch * steps / secs
    out[f"{form}_max_anchor_err_m"] = state_check(model, state)[0]
  def gradient():
    _, _, params = rollout_grad(model, start, steps, lambda s: (s.body_pos * s.body_pos).sum(), ctrl=seq)
    return params["ctrl"].numpy()
  secs, grad = timed(gradient)
  out["grad_env_steps_per_s"] = batch * steps / secs
  out["grad_ok"] = bool(np.isfinite(grad).all() and np.abs(grad).max() > 0)
  out["check_ok"] = bool(out["grad_ok"] and max(out["held_max_anchor_err_m"], out["sequence_max_anchor_err_m"])
                         <= ANCHOR_TOL)
  return out


def main(argv=None) -> int:
  p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
  p.add_argument("--only", nargs="*", default=["reacher:256", "reacher:1024"], help="task-scene:batch items")
  p.add_argument("--steps", type=int, default=100)
  p.add_argument("--out", default=str(ROOT / "bench" / "results_ctrl.json"))
  args = p.parse_args(argv)
  results = []
  for item in args.only:
    name, batch = item.split(":")
    r = run(name, int(batch), args.steps)
    print(f"{name} x{batch}, {args.steps} steps: held {r['held_env_steps_per_s']:,.0f}, sequence "
          f"{r['sequence_env_steps_per_s']:,.0f}, gradient (sequence) {r['grad_env_steps_per_s']:,.0f} env-steps/s; "
          f"check {'ok' if r['check_ok'] else 'FAILED'}")
    results.append(r)
  from engine.wgsl import adapter
  meta = {**environment("WEBGPU"), "backend": "wgsl", "adapter": adapter(), "date": time.strftime("%Y-%m-%d %H:%M")}
  Path(args.out).write_text(json.dumps({"meta": meta, "results": results}, indent=1) + "\n")
  return 0 if all(r["check_ok"] for r in results) else 1


if __name__ == "__main__":
  sys.exit(main())
