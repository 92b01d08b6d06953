"""Command line: `python -m engine {render,info,step,bench,demo,parity,convert,leg}` (also the `tinyxpbd` console
script)."""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from collections import Counter
from pathlib import Path


from engine.shipped import SCENES, scene_path

DEMO_SCENES = ("drop", "stack10", "cradle", "chain")  # make demo renders these to out/
SCENE_HELP = "a shipped scene's name (pendulum, stack10, ...) or a scene file (.json, or MJCF .xml)"


class CLIError(Exception):
  """A user mistake (bad scene, bad option value) or a missing requirement (no WebGPU adapter): printed as one line,
  exit code 2."""


class Parser(argparse.ArgumentParser):
  """argparse's parser, whose errors are one line (CLIError) instead of the usage and a message."""
  def error(self, message):
    raise CLIError(f"{self.prog}: {message} (see {self.prog} --help)")


def _path(scene) -> Path:
  """The file of a scene argument (a shipped scene's name or a path); CLIError for an unknown name."""
  from engine.scene import SceneError
  try:
    return scene_path(scene)
  except SceneError as e:
    raise CLIError(str(e)) from None


def _load(scene):
  from engine.scene import SceneError, build_model, load_scene_dict
  try:
    d = load_scene_dict(_path(scene))
    return build_model(d), d
  except SceneError as e:
    raise CLIError(str(e)) from None


def cmd_render(args) -> int:
  from engine.render import record, render_gif
  if args.batch < 1: raise CLIError(f"--batch: expected a positive integer, got {args.batch}")
  if not (args.seconds > 0 and args.fps > 0): raise CLIError("--seconds and --fps must be positive")
  model, scene = _load(args.scene)
  out = Path(args.output or f"{_path(args.scene).stem}.gif")   # default: the working directory
  pos, quat, info = record(model, args.batch, args.seconds, args.fps, args.seed)
  try:
    out.parent.mkdir(parents=True, exist_ok=True)
    render_s = render_gif(model, pos, quat, out, args.fps, args.width, args.height, scene.get("camera"), info["act"])
  except (ValueError, OSError) as e:  # e.g. too many envs for the image size, an output folder that cannot be made
    raise CLIError(str(e)) from None
  print(f"{model.name} x{args.batch}: {info['frames']} frames, {info['sim_seconds']:.2f} s simulated, "
        f"sim {info['wall_s']:.1f} s (incl. compile), render {render_s:.1f} s -> {out}", flush=True)
  return 0


def cmd_info(args) -> int:
  model, scene = _load(args.scene)
  inv_mass = model.body_inv_mass.numpy()
  dynamic = inv_mass > 0
  kinds = Counter(model.jnt_type)
  joints = ", ".join(f"{n} {k}" for k, n in kinds.items())
  print(f"name:        {model.name}")
  print(f"nbody:       {model.nbody}")
  print(f"ngeom:       {model.ngeom} ({', '.join(f'{n} {k}' for k, n in Counter(model.geom_type).items())})")
  print(f"njoint:      {model.njoint}" + (f" ({joints})" if joints else ""))
  print(f"dt:          {model.dt:.6g} s ({1 / model.dt:.6g} Hz)")
  print(f"substeps:    {model.substeps}")
  print(f"iterations:  {model.iterations}")
  kin = f", {int((~dynamic).sum())} kinematic" if not dynamic.all() else ""
  print(f"total mass:  {float((1.0 / inv_mass[dynamic]).sum()):.6g} kg{kin}")
  print(f"bodies:      {' '.join(model.body_name)}")
  if model.ntendon: print(f"tendons:     {' '.join(model.ten_name)} ({model.nsite} sites)")
  if model.nact: print(f"actuators:   {' '.join(f'{n} ({t})' for n, t in zip(model.act_name, model.act_type))}")
  if "camera" in scene: print(f"camera:      pos {scene['camera']['pos']} target {scene['camera']['target']}")
  return 0


def cmd_step(args) -> int:
  """Advance a scene by --steps env-steps with this engine and, with --accurate, through MuJoCo from the same start
  (engine/accurate.py, each step from MuJoCo's last); print env 0's bodies and how far apart the two ended."""
  from engine.scene import SceneError
  from engine.simulator import Simulator
  if args.steps < 1 or args.batch < 1: raise CLIError("--steps and --batch: expected positive integers")
  if args.noise < 0: raise CLIError(f"--noise: expected a number >= 0, got {args.noise}")
  model, _ = _load(args.scene)
  sim = Simulator(model, batch=args.batch)
  start = sim.reset(seed=args.seed, noise=args.noise)
  ours = sim.rollout(start, args.steps).body_pos.numpy()[0]
  theirs, label = None, "MuJoCo"
  if args.accurate:
    from engine.accurate import MJXUnavailable, MuJoCoStep
    try:
      mj = MuJoCoStep(_path(args.scene), backend=args.mujoco)
    except (SceneError, MJXUnavailable) as e:
      raise CLIError(str(e)) from None
    if mj.backend == "mjx": label = "MJX"
    state = start
    for _ in range(args.steps): state = mj(state)
    theirs = state.body_pos.numpy()[0]
  t = args.steps * model.dt
  print(f"{model.name}: {args.steps} steps ({t:.4g} s), batch {args.batch}, env 0's centres of mass [m]" +
        (f" (engine | {label} | apart [mm])" if theirs is not None else ""))
  for i, name in enumerate(model.body_name):
    row = f"  {name:<16} {ours[i][0]:+.5f} {ours[i][1]:+.5f} {ours[i][2]:+.5f}"
    if theirs is not None:
      row += (f" | {theirs[i][0]:+.5f} {theirs[i][1]:+.5f} {theirs[i][2]:+.5f} | "
              f"{1e3 * float(((ours[i] - theirs[i]) ** 2).sum()) ** 0.5:.3f}")
    print(row)
  return 0


def cmd_bench(args) -> int:
  from engine.cli_bench import run
  return run(args)


def cmd_demo(args) -> int:
  from engine.cli_bench import bench, table
  from engine.render import record, render_gif
  out = Path(args.out)
  out.mkdir(parents=True, exist_ok=True)
  paths = sorted(SCENES.glob("*.json"))
  if not paths: raise CLIError(f"no scenes in {SCENES}")
  t_start = time.perf_counter()
  # the headline scenes (each new scene compiles first); `python -m engine render SCENE` draws any other
  jobs = [(p, 1, out / f"{p.stem}.gif") for p in paths if p.stem in DEMO_SCENES] or [(paths[0], 1, out / "demo.gif")]
  print(f"demo: rendering {len(jobs)} GIFs (3 s, 30 fps) to {out}/; each new scene/batch compiles first (~15 s)",
        flush=True)
  for path, batch, gif in jobs:
    model, scene = _load(path)
    pos, quat, info = record(model, batch, 3.0, 30)
    render_s = render_gif(model, pos, quat, gif, 30, 320, 240, scene.get("camera"), info["act"])
    print(f"  {model.name} x{batch}: {info['frames']} frames, sim {info['wall_s']:.1f} s, render {render_s:.1f} s "
          f"-> {gif}", flush=True)
  if (SCENES / "leg2.json").is_file():
    from engine.leg import render as render_leg
    print("  " + render_leg(SCENES / "leg2.json", out / "leg2.gif"), flush=True)
  print("demo: throughput (oracle backend, short runs; `python -m engine bench` for the full benchmark)", flush=True)
  results = []
  for name, batch, steps in (("pendulum", 256, 48), ("drop", 256, 24), ("stack10", 64, 12)):
    if not (SCENES / f"{name}.json").is_file(): continue
    results.append(bench(name, batch, steps))
    r = results[-1]
    print(f"  {name} x{batch}: {r['env_steps_per_s']:,.0f} env-steps/s (compile {r['compile_s']:.1f} s, "
          f"max anchor error {r['max_anchor_err_m']:.1e} m, max penetration {r['max_penetration_m']:.1e} m)",
          flush=True)
  if results: print(table(results))
  print(f"demo: done in {time.perf_counter() - t_start:.0f} s", flush=True)
  return 0


def parser() -> argparse.ArgumentParser:
  from engine.cli_bench import add_arguments
  p = Parser(prog="tinyxpbd", description="tinyxpbd: batched differentiable XPBD on tinygrad.")
  sub = p.add_subparsers(dest="cmd", required=True, metavar="{render,info,step,bench,demo,parity,convert,leg}")
  r = sub.add_parser("render", help="simulate a scene and render a GIF")
  r.add_argument("scene", help=SCENE_HELP)
  r.add_argument("-o", "--output", help="output GIF path (default SCENE.gif in the working directory)")
  r.add_argument("--seconds", type=float, default=3.0, help="simulated time (default 3)")
  r.add_argument("--fps", type=float, default=30.0, help="frames per simulated second (default 30)")
  r.add_argument("--batch", type=int, default=1, help="envs, tiled in the image (default 1)")
  r.add_argument("--width", type=int, default=320)
  r.add_argument("--height", type=int, default=240)
  r.add_argument("--seed", type=int, default=0, help="seed of the per-env velocity noise (batch > 1)")
  r.set_defaults(func=cmd_render)
  i = sub.add_parser("info", help="summarise a scene")
  i.add_argument("scene", help=SCENE_HELP)
  i.set_defaults(func=cmd_info)
  b = sub.add_parser("bench", help="throughput benchmark (env-steps/s)")
  add_arguments(b)
  b.set_defaults(func=cmd_bench)
  d = sub.add_parser("demo", help="render every shipped scene to out/ and print env-steps/s")
  d.add_argument("--out", default="out", help="output folder (default out/ in the working directory)")
  d.set_defaults(func=cmd_demo)
  q = sub.add_parser("parity", help="max abs difference per state field, WGSL kernel vs oracle, after 1 and 100 steps")
  q.add_argument("scenes", nargs="*", help="shipped scene names or scene files (default: every shipped scene)")
  q.add_argument("--steps", type=int, nargs="+", default=[1, 100], help="step counts to compare after")
  q.set_defaults(func=cmd_parity)
  c = sub.add_parser("convert", help="convert an MJCF model (.xml) into a scene (.json) or back; prints the index map")
  c.add_argument("input", help="MJCF file (.xml), scene (.json) or a shipped scene's name")
  c.add_argument("-o", "--output", required=True, help="scene JSON or MJCF path")
  c.add_argument("--meshes", choices=("error", "box"), default="error", help="mesh geoms: refuse (default) or box")
  c.set_defaults(func=cmd_convert)
  st = sub.add_parser("step", help="step a scene; --accurate also through MuJoCo, and compare")
  st.add_argument("scene", help=SCENE_HELP)
  st.add_argument("--accurate", action="store_true", help="also step through MuJoCo (needs tinyxpbd[mjcf])")
  st.add_argument("--mujoco", choices=("auto", "c", "mjx"), default="auto",
                  help="--accurate through MuJoCo's C library or MJX (tinyxpbd[mjx]); auto: MJX where installed and "
                       "jax has an accelerator, else C")
  st.add_argument("--steps", type=int, default=1, help="env-steps (default 1)")
  st.add_argument("--batch", type=int, default=1, help="envs (default 1)")
  st.add_argument("--noise", type=float, default=0.0, help="N(0, noise^2) on the initial velocities (default 0)")
  st.add_argument("--seed", type=int, default=0)
  st.set_defaults(func=cmd_step)
  g = sub.add_parser("leg", help="drive leg2's four muscles from the keyboard (1-4 toggle, 0 relax, q quit)")
  g.add_argument("--scene", default=str(SCENES / "leg2.json"), help="the leg scene (default scenes/leg2.json)")
  g.add_argument("--frames", type=int, default=None, help="stop after this many frames (30 per simulated second)")
  g.set_defaults(func=cmd_leg)
  return p


def cmd_convert(args) -> int:
  """MJCF -> scene JSON (engine/mjcf.py) or scene JSON -> MJCF (engine/mjcf_write.py), and the index map
  (docs/mjcf.md)."""
  import json
  from engine.scene import SceneError, load_scene_dict
  src, out = _path(args.input), Path(args.output)
  kinds = (src.suffix.lower(), out.suffix.lower())
  if kinds not in ((".xml", ".json"), (".json", ".xml")):
    raise CLIError(f"convert: MJCF (.xml) to a scene (.json) or back, got {src.name} -> {out.name}")
  try:
    if kinds[0] == ".xml":
      from engine.mjcf import from_mjcf, index_map
      scene = from_mjcf(src, args.meshes)
      load_scene_dict(scene)   # the result must be a valid scene
      text, arrow = json.dumps(scene, indent=1) + "\n", "<-"
      rows = {kind: [(i, ", ".join(map(str, mj))) for i, mj in v] for kind, v in index_map(src, scene).items()}
    else:
      from engine.mjcf_write import equality_joints, mjcf_indices, to_mjcf
      scene = load_scene_dict(src)
      text, arrow, where, eq = to_mjcf(scene), "->", mjcf_indices(scene), set(equality_joints(scene))
      rows = {kind: [(i, f"{'equality ' if kind == 'joints' and i in eq else ''}{k}") for i, k in enumerate(v)]
              for kind, v in where.items()}
  except SceneError as e:
    raise CLIError(str(e)) from None
  try:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
  except OSError as e:
    raise CLIError(f"convert: cannot write {out}: {e}") from None
  names = {"bodies": [b["name"] for b in scene["bodies"]], "joints": [j["name"] for j in scene["joints"]],
           "actuators": [a["name"] for a in scene["actuators"]]}
  print(f"{src.name} -> {out}: {len(names['bodies'])} bodies, {len(names['joints'])} joints, "
        f"{len(names['actuators'])} actuators (scene index {arrow} MuJoCo index)")
  for kind, items in rows.items():
    one = {"bodies": "body", "joints": "joint", "actuators": "actuator"}[kind]
    for i, mj in items: print(f"  {one} {i} {names[kind][i]!r} {arrow} {mj}")
  return 0


def cmd_leg(args) -> int:
  from engine.leg import run
  if args.frames is not None and args.frames < 1:
    raise CLIError(f"--frames: expected a positive integer, got {args.frames}")
  _load(args.scene)   # a bad scene is one line
  run(_path(args.scene), args.frames)
  return 0


def _open_webgpu() -> None:
  """engine.wgsl.require_webgpu, with what Dawn itself writes to stderr meanwhile (a few lines per backend it could not
  start, e.g. no Vulkan driver) held back: passed on when the device opens, dropped when it does not, for the one-line
  error says why."""
  import tempfile
  from engine import wgsl
  sys.stderr.flush()
  with tempfile.TemporaryFile() as held:
    saved = os.dup(2)
    os.dup2(held.fileno(), 2)
    try:
      wgsl.require_webgpu()
    except wgsl.WebGPUUnavailable as e:
      raise CLIError(str(e)) from None
    finally:
      sys.stderr.flush()
      os.dup2(saved, 2)
      os.close(saved)
    held.seek(0)
    sys.stderr.write(held.read().decode(errors="replace"))


def cmd_parity(args) -> int:
  from engine.parity import main as parity
  if any(n < 1 for n in args.steps): raise CLIError(f"--steps: expected positive integers, got {args.steps}")
  paths = [_path(s) for s in args.scenes] or sorted(SCENES.glob("*.json"))
  for p in paths:
    if not p.is_file(): raise CLIError(f"scene file '{p}': not found")
  _open_webgpu()   # before the oracle's compiles: the comparison needs the kernel's device
  parity([str(p) for p in paths], tuple(args.steps))
  return 0


def _one_line_warnings(message, category, filename, lineno, file=None, line=None) -> None:
  """The engine's own warnings (an MJCF approximation, a driver's known issue) as `warning: ...` on one line, without
  Python's file, line and source; any other warning as Python shows it."""
  if category.__module__.split(".")[0] == "engine":
    print("warning: " + " ".join(ln.strip() for ln in str(message).splitlines()), file=file or sys.stderr)
  else: _show_warning(message, category, filename, lineno, file, line)


_show_warning = warnings.showwarning


def main(argv=None) -> int:
  warnings.showwarning = _one_line_warnings
  try:
    args = parser().parse_args(argv)
    rc = args.func(args)
    sys.stdout.flush()   # here, not at exit, so that a closed pipe is caught below
    return rc
  except CLIError as e:
    print("error: " + " ".join(ln.strip() for ln in str(e).splitlines()), file=sys.stderr)   # one line, always
    return 2
  except BrokenPipeError:   # the reader left (`| head`): stop quietly, as other command line tools do
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())   # what is left in stdout's buffer goes nowhere
    return 1


if __name__ == "__main__":
  sys.exit(main())
