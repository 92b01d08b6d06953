"""Gradient throughput beside forward throughput, in one run (issue 17, DESIGN sec. 8): for each scene x batch,
(a) the WGSL kernel's forward alone (Simulator.rollout, every step in one launch), (b) a gradient through it
(engine.grad.rollout_grad on the WEBGPU device: the forward's trajectory in one launch, then the backward kernel
over it in one launch, each pass one TinyJit), (b') the same two kernels alone, without the front door's host work
(kernel_forward_ms, kernel_backward_ms, kernel_ratio = their sum over the forward's), (c) the backward kernel alone
at one step a launch, `steps` launches in a TinyJit, with its tape in either mode (replay each substep, or store
every substep's iterations: kernels/tape.py tape_layout), with the tape's bytes per env (scratch of one step: the
same for any horizon); backward_mode is the one rollout_grad uses (kernels/tape.py store_mode); and (d) that backward
with its adjoint loop cut out (backward_recompute_only: its forward pass from the checkpoint, tape included), which
says how the backward's time splits.

  python bench/bench_grad.py                         # pendulum x4096, chain x64, drop x64, stack10 x64 (lavapipe here)
  python bench/bench_grad.py --only chain:64 --steps 20
  python bench/bench_grad.py --only stack10:64 --steps 10 --quick   # the ratios alone
  python bench/bench_grad.py --only gym:ant:64 --steps 5 --out bench/results_grad_armature.json   # Gymnasium's ant.xml

env-steps/s = batch x steps / wall seconds after a warm-up run, median of ROUNDS (7) interleaved with the
other measurement of the same item; ratio = gradient wall / forward wall (the issue's target: at most 3),
both through the front door (Simulator.rollout, rollout_grad), and kernel_ratio the kernels' alone. Each run
checks physics and gradient in the same run: the final state's joint anchors stay within 1 mm, and the gradient is
finite and non-zero. Scenes the backward kernel does not cover yet are recorded with the reason. Results go to
bench/results_grad.json.
"""
from __future__ import annotations
import argparse
import contextlib
import importlib.metadata
import json
import platform
import re
import statistics
import sys
import time
from pathlib import Path
import numpy as np
from tinygrad import Device, Tensor

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
import engine.wgsl as wgsl  # noqa: E402
import engine.wgsl_backward as wgsl_backward  # noqa: E402
from engine.grad import rollout_grad  # noqa: E402
from engine.npquat import quat_rotate  # noqa: E402
from engine.scene import load_scene  # noqa: E402
from engine.simulator import Simulator  # noqa: E402
from engine.stepping import jit  # noqa: E402
from kernels.layout import Unsupported, state_rows  # noqa: E402
from kernels.program import check_backward  # noqa: E402
from kernels.tape import store_mode, tape_layout  # noqa: E402
from oracle.packed import pack_state  # noqa: E402

ITEMS = (("pendulum", 4096), ("chain", 64), ("drop", 64), ("stack10", 64))


def anchor_error(model, state) -> float:
  """Largest distance [m] between a joint's two anchor points in world (the joints' physical check)."""
  x, q = state.body_pos.numpy().astype(np.float64), state.body_quat.numpy().astype(np.float64)
  a_p, a_c = model.jnt_anchor_parent.numpy(), model.jnt_anchor_child.numpy()
  worst = 0.0
  for j, (p, c) in enumerate(zip(model.jnt_parent, model.jnt_child)):
    if model.jnt_type[j] not in ("ball", "hinge", "fixed"): continue
    wp = a_p[j] if p < 0 else x[:, p] + quat_rotate(q[:, p], a_p[j])
    worst = max(worst, float(np.abs(np.linalg.norm(wp - (x[:, c] + quat_rotate(q[:, c], a_c[j])), axis=-1)).max()))
  return worst


ROUNDS = 7   # timed runs of each function, interleaved (this VM's speed drifts: a median of 3 run back to back put
# chain x64's ratio anywhere from 3.6 to 5.5 on 2026-11-26)


def timed(*fns) -> list[float]:
  """The median wall of each of fns over ROUNDS rounds, each round running every fn once, after a warm-up run that
  compiles."""
  for fn in fns: fn()
  Device["WEBGPU"].synchronize()
  walls = [[] for _ in fns]
  for _ in range(ROUNDS):
    for fn, w in zip(fns, walls):
      t0 = time.perf_counter()
      fn()
      Device["WEBGPU"].synchronize()
      w.append(time.perf_counter() - t0)
  return [statistics.median(w) for w in walls]


def scene_path(name: str) -> Path:
  """scenes/<name>.json, or for gym:<name> Gymnasium's own MuJoCo asset <name>.xml (needs gymnasium and mujoco)."""
  if not name.startswith("gym:"): return ROOT / "scenes" / f"{name}.json"
  from engine.mjcf import gym_asset
  return gym_asset(name[4:])


def run(name: str, batch: int, steps: int, quick: bool = False) -> dict:
  model = load_scene(scene_path(name), device="WEBGPU")
  out = {"scene": name, "batch": batch, "steps": steps}
  try:
    check_backward(model)
  except Unsupported as e:
    return {**out, "unsupported": str(e)}
  sim = Simulator(model, batch, backend="wgsl", steps_per_call=steps, tier_up=0)
  start = sim.reset(seed=1, noise=0.3)
  box = {}
  def forward(): box["end"] = sim.rollout(start, steps)
  def gradient():
    box["grad"] = rollout_grad(model, start, steps, lambda s: s.body_pos[:, -1].sum())[1]
  fwd, grad = timed(forward, gradient)
  g = pack_state(box["grad"]).numpy()
  err = anchor_error(model, box["end"])
  # the contact scenes' check: the deepest penetration at the end (engine.stepping.Stepper.max_penetration)
  deep = float(sim.stepper.max_penetration(pack_state(box["end"]).contiguous()).max().item())
  out.update(forward_env_steps_s=batch * steps / fwd, gradient_env_steps_s=batch * steps / grad, ratio=grad / fwd,
             anchor_error_m=err, max_penetration_m=deep, gradient_finite=bool(np.isfinite(g).all()),
             gradient_nonzero=bool(np.abs(g).any()),
             check_passed=bool(err < 1e-3 and deep < 5e-3 and np.isfinite(g).all() and np.abs(g).any()))
  p = pack_state(start).contiguous().realize()
  u = Tensor.ones(batch, state_rows(model), 13, device="WEBGPU").contiguous().realize()
  damping = sim.stepper.damping
  # the kernels alone, without the front door's host work on either side (packing, unpacking, the loss's gradient,
  # copies: ~20 ms a call for pendulum x4096 on 2026-11-28): the trajectory (engine.wgsl.trajectory) and its backward
  # (engine.wgsl_backward.trajectory_vjp), one launch each in a TinyJit, as rollout_grad runs them
  tj = jit(lambda p: wgsl.trajectory(model, p, None, steps, damping).contiguous().realize())
  traj = [tj(p) for _ in range(2)][-1].clone().realize()
  vj = jit(lambda t, g: tuple(x.contiguous().realize()
                              for x in wgsl_backward.trajectory_vjp(model, t, None, g, damping)))
  kf, kb = timed(lambda: tj(p), lambda: vj(traj, u))
  out.update(kernel_forward_ms=1e3 * kf, kernel_backward_ms=1e3 * kb, kernel_ratio=(kf + kb) / kf)
  if quick: return out   # (c) and (d) compile three more programs: optimised, stack10's took over 15 min each
  out["backward_mode"] = "store" if store_mode(model, batch, damping) else "replay"
  grads = []
  for store in (False, True):
    tape = tape_layout(model, damping, store)["TAPE"]
    vjp = jit(lambda p, g, store=store: tuple(t.contiguous().realize()
                                              for t in wgsl_backward.step_vjp(model, p, None, g, damping, store)))
    (wall,) = timed(lambda: [vjp(p, u) for _ in range(steps)])
    grads.append(np.concatenate([t.numpy().reshape(batch, -1) for t in vjp(p, u)], axis=1))
    out[f"backward_{'store' if store else 'replay'}"] = {"env_steps_s": batch * steps / wall,
                                                         "tape_bytes_per_env": 4 * tape}
  # the two modes' step gradients (tests/test_grad_kernel.py test_parity_store_replay): equal but for rounding
  out["store_vs_replay_rel"] = float(np.linalg.norm(grads[1] - grads[0]) / max(np.linalg.norm(grads[0]), 1e-30))
  store = store_mode(model, batch, damping)
  for tape, key in ((True, "backward_recompute_only"), (False, "backward_recompute_only_no_tape")):
    with recompute_only(tape):
      vjp = jit(lambda p, g: tuple(t.contiguous().realize()
                                   for t in wgsl_backward.step_vjp(model, p, None, g, damping, store)))
      (wall,) = timed(lambda: [vjp(p, u) for _ in range(steps)])
    out[key] = {"env_steps_s": batch * steps / wall}
  # the forward at one step a launch, as the backward launches (the forward above runs every step in one launch)
  one = Simulator(model, batch, backend="wgsl", steps_per_call=1, tier_up=0)
  (wall,) = timed(lambda: one.rollout(start, steps).body_pos.numpy())
  out["forward_one_step_a_launch_env_steps_s"] = batch * steps / wall
  return out


def run_lanes(name: str, batch: int, steps: int, lanes: int) -> dict:
  """The backward kernel alone, one lane per env against `lanes` (engine.wgsl_backward.step_vjp(lanes=)), from a
  kicked state `steps` env-steps on, each timed over `steps` launches; the relative difference of their gradients."""
  model = load_scene(scene_path(name), device="WEBGPU")
  sim = Simulator(model, batch, backend="wgsl")
  p = pack_state(sim.rollout(sim.reset(seed=1, noise=0.3), steps)).contiguous().realize()
  u = Tensor.ones(batch, model.nbody, 13, device="WEBGPU").contiguous().realize()
  out, grads, damping = {"scene": name, "batch": batch, "steps": steps}, [], sim.stepper.damping
  for n in (1, lanes):
    vjp = jit(lambda p, g, n=n: tuple(t.contiguous().realize()
                                      for t in wgsl_backward.step_vjp(model, p, None, g, damping, lanes=n)))
    t0 = time.perf_counter()
    grads.append(np.concatenate([t.numpy().reshape(batch, -1) for t in vjp(p, u)], axis=1))
    first = time.perf_counter() - t0
    (wall,) = timed(lambda: [vjp(p, u) for _ in range(steps)])
    out[f"lanes_{n}"] = {"backward_env_steps_s": batch * steps / wall, "first_call_s": first}
  out["rel"] = float(np.linalg.norm(grads[1] - grads[0]) / max(np.linalg.norm(grads[0]), 1e-30))
  return out


HOOKS = ("tape_start", "tape_iteration", "tape_solve", "tape_slots", "tape_contact_velocity", "tape_damping",
         "tape_armature")


@contextlib.contextmanager
def recompute_only(tape: bool = True):
  """step_vjp's program without its adjoint loop (kernels/adjoint/xpbd_step.wgsl: the substeps' adjoints cut out), so
  that what is left is the backward's forward pass from the checkpoint and its tape: how much of the backward that
  is. One tape entry, at an index the compiler cannot know (from the output gradient), goes to the output, so that
  the tape's writes stay live (a private tape nothing reads would be compiled away), and so does a body's position.
  tape=False: the tape's hooks return at once, which leaves the forward pass alone. Its gradient is meaningless."""
  import kernels.program as kp
  cut, whole = "for (var s = SUBSTEPS; s > 0u; s--) { substep_adj(s - 1u, H); }", kp.backward_source
  def source(*args, **kwargs):
    text = whole(*args, **kwargs)
    assert cut in text, "kernels/adjoint/xpbd_step.wgsl's adjoint loop changed: update bench/bench_grad.py"
    text = text.replace(cut, "outp[go] = tape[tb + u32(abs(gout[base])) % TAPE] + bx[0].x;")
    for fn in () if tape else HOOKS:   # each hook must be there: a renamed one would leave its writes in silently
      text, n = re.subn(rf"(fn {fn}\([^)]*\) \{{)", r"\1 if (true) { return; }", text)
      assert n == 1, f"kernels/tape.py's hook {fn} not found: update bench/bench_grad.py HOOKS"
    return text
  source.__name__ = f"backward_source_recompute_only_{tape}"   # engine.wgsl.program_text caches by name
  kp.backward_source = source
  try:
    yield
  finally:
    kp.backward_source = whole


def main(argv=None) -> int:
  p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
  p.add_argument("--only", nargs="*", help="scene:batch items (default: pendulum:4096 chain:64 drop:64 stack10:64)")
  p.add_argument("--steps", type=int, default=50, help="env-steps per timed run")
  p.add_argument("--out", default=str(ROOT / "bench" / "results_grad.json"))
  p.add_argument("--lanes", type=int, default=0, help="instead: the backward alone on this many lanes per env "
                 "against one (results to bench/results_grad_lanes.json unless --out)")
  p.add_argument("--quick", action="store_true", help="(a), (b) and (b') only: the ratios, not the backward's split")
  args = p.parse_args(argv)
  if args.lanes and args.out == p.get_default("out"): args.out = str(ROOT / "bench" / "results_grad_lanes.json")
  items = [(s.rsplit(":", 1)[0], int(s.rsplit(":", 1)[1])) for s in args.only] if args.only else list(ITEMS)
  wgsl.require_webgpu()
  meta = {"python": platform.python_version(), "tinygrad": importlib.metadata.version("tinygrad"),
          "numpy": importlib.metadata.version("numpy"), "machine": platform.machine(), "adapter": wgsl.adapter(),
          "time": time.strftime("%Y-%m-%d %H:%M:%S")}
  results = []
  for name, batch in items:
    try:
      results.append(run_lanes(name, batch, args.steps, args.lanes) if args.lanes
                     else run(name, batch, args.steps, args.quick))
    except Exception as e:  # noqa: BLE001 (report and go on: one scene's failure must not hide the others')
      results.append({"scene": name, "batch": batch, "error": f"{type(e).__name__}: {str(e).strip()[:200]}"})
    print(json.dumps(results[-1]))
    Path(args.out).write_text(json.dumps({"meta": meta, "results": results}, indent=1))
  return 0


if __name__ == "__main__":
  sys.exit(main())
