"""Parity between two WebGPU implementations: tinygrad's WEBGPU device (Dawn, Tint's WGSL compiler: Chrome's WebGPU)
and wgpu-py (wgpu-native, naga's WGSL front end and validator: Firefox's), through engine/wgpu_check.py.

- Every program the engine generates, for every scene in scenes/ and engine/tasks/scenes/ (engine.wgpu_check.programs:
  the step with one lane and with many where the scene allows, the backward replaying and storing its tape), the
  pair functions alone, and the programs the other parity tests launch (their entry points behind the same sources),
  must pass naga's validation. That runs on the CPU (~10-40 ms a program); building their pipelines would compile
  each through lavapipe's LLVM as well (pendulum 0.2 s, pile 10 s, pile200 68 s on a cold Mesa cache), which only
  the end-to-end tests do.
- End to end, the step kernel on wgpu-py with the Dawn path's own buffers (parameters, tables) against the
  Simulator's backend="wgsl" from the same kicked states, several steps, and the backward kernel against
  engine.wgsl_backward.step_vjp: the same float32 program on the same lavapipe, so within TOL, and measured
  bit-identical (pendulum x16 over 10 steps, one lane and 64 lanes per env; pendulum_swingup x16 with random controls;
  its backward x2). On a GPU driver the two compiles (Tint's SPIR-V, naga's) might contract arithmetic differently; not
  measured there yet.
"""
from __future__ import annotations
import dataclasses
import numpy as np
import pytest
import engine
import engine.wgsl as wgsl
import engine.wgsl_backward as wgsl_backward
from engine.parity import BATCH, kicked_states, run
from engine.scene import build_model, load_scene_dict
from kernels.lanes import default_lanes
from oracle.joint_damping import has_damping
from tests.helpers import SCENES, cached_simulator, wgsl_checked  # noqa: F401 (autouse)

TASK_SCENES = SCENES.parent / "engine" / "tasks" / "scenes"
SCENE_PATHS = sorted(SCENES.glob("*.json")) + sorted(TASK_SCENES.glob("*.json"))
TOL = 1e-6   # the same float32 program on the same driver: only a different compile of it could differ


@pytest.fixture(scope="module")
def naga():
  """engine.wgpu_check, once wgpu-py (a dev dependency) has opened its device, and wgpu for its error type."""
  wgpu = pytest.importorskip("wgpu")
  from engine import wgpu_check
  wgpu_check.device()
  return wgpu_check, wgpu


# --- validation ---

def test_parity_wgpu_rejects_invalid(naga):
  """validate() raises on a program naga rejects: the step program with a function it calls renamed away, and a type
  error (so that the tests below pass because naga accepted the programs, not because nothing was checked)."""
  check, wgpu = naga
  model = build_model(load_scene_dict(SCENES / "pendulum.json"))
  good = check.programs(model)["step"]
  check.validate(good)
  assert "fn integrate(" in good
  with pytest.raises(wgpu.GPUValidationError, match="integrate"):
    check.validate(good.replace("fn integrate(", "fn integrate_renamed("))
  with pytest.raises(wgpu.GPUValidationError):
    check.validate("fn f() -> f32 { return 1u; }")


@pytest.mark.parametrize("path", [pytest.param(p, id=("tasks/" if p.parent == TASK_SCENES else "") + p.stem)
                                  for p in SCENE_PATHS])
def test_parity_wgpu_programs(path, naga):
  """naga validates every program variant the engine generates for the scene."""
  check, _ = naga
  from kernels.layout import Unsupported
  from kernels.program import check_backward
  model = build_model(load_scene_dict(path))
  progs = check.programs(model)
  try:
    check_backward(model)
    backward = True
  except Unsupported:
    backward = False
  assert "step" in progs and ({"backward", "backward_store"} <= set(progs)) == backward
  for name, code in progs.items():
    check.validate(code)


class Launched(Exception):
  """Raised by the stand-in for engine.wgsl.launch: the program a test was about to launch, and its entry point."""


def launched(fn, *args) -> tuple[str, str]:
  """The (source, entry) that fn(*args) hands engine.wgsl.launch, stopped before the launch."""
  def stop(src, entry, *a, **kw): raise Launched(src, entry)
  with pytest.MonkeyPatch.context() as mp:
    mp.setattr(wgsl, "launch", stop)
    with pytest.raises(Launched) as e: fn(*args)
  return e.value.args


def test_parity_wgpu_test_programs(naga):
  """naga validates the programs the other parity tests launch: the pair functions alone (kernels.program
  collide_source) with tests/test_parity_narrowphase.py's entry point, the adjoint program (adjoint_source) with
  each case's entry point of tests/test_parity_adjoint*.py, and the step program with tests/test_parity_muscle.py's."""
  check, _ = naga
  from tests import test_parity_adjoint, test_parity_adjoint_box_box, test_parity_adjoint_collide
  from tests import test_parity_narrowphase as narrow
  check.validate(narrow.wgsl_source())
  check.validate(narrow.wgsl_source() + narrow.entry_source(list(narrow.ported())))
  cases = {f"{mod.__name__}:{name}": case for mod in (test_parity_adjoint, test_parity_adjoint_collide,
                                                     test_parity_adjoint_box_box) for name, case in mod.CASES.items()}
  def zeros(case):   # the case with inputs drawn as zeros: its program is the same, and box_box's draws take seconds
    return dataclasses.replace(case, draw=lambda rng: {k: np.zeros((test_parity_adjoint.N, test_parity_adjoint.WIDTH[
      kind])) for k, kind in case.ins})
  sources = {key: launched(test_parity_adjoint.run_case, key.split(":")[1], zeros(case)) for key, case in cases.items()}
  try:
    from tests import test_parity_muscle as muscle
  except pytest.skip.Exception:   # that test needs MuJoCo
    muscle = None
  tests = [] if muscle is None else [muscle.test_parity_muscle_curves_mujoco, muscle.test_parity_muscle_dynamics_mujoco]
  sources |= {fn.__name__: launched(fn) for fn in tests}
  assert len(sources) == len(cases) + len(tests) and len(cases) > 0
  for name, (code, entry) in sources.items():
    assert f"fn {entry}(" in code, name
    check.validate(code)


# --- end to end ---

def same_driver(check) -> None:
  """TOL assumes both run on one driver (the adapter each picks: lavapipe here)."""
  dawn, ours = wgsl.adapter().split(": ")[0], check.device().adapter.info["device"]
  assert dawn == ours, f"Dawn runs on {dawn!r}, wgpu-py on {ours!r}: TOL assumes one driver"


def dawn_and_wgpu(check, scene: dict, steps: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
  """The packed states after `steps` env-steps of BATCH kicked envs: Dawn's (the Simulator, backend="wgsl", compiled
  once per worker: tests/helpers.py cached_simulator) and wgpu-py's (the same program, lanes and buffers)."""
  same_driver(check)
  sim = cached_simulator(scene, "wgsl", BATCH, device="WEBGPU")
  model = sim.model
  packed, ctrl = kicked_states(model, BATCH, seed, 0.5)
  dawn = run(scene, "wgsl", [(packed, ctrl, steps)], device="WEBGPU", simulator=cached_simulator)[0]
  lanes = wgsl.LANES or default_lanes(model, BATCH, wgsl.cpu_adapter())
  got = check.step(model, packed.astype(np.float32), np.zeros((BATCH, 1)) if ctrl is None else ctrl,
                   wgsl.params(model).numpy(), wgsl.tables(model)[0].numpy(), steps, lanes, has_damping(model))
  return dawn, got.astype(np.float64)


def compare(dawn: np.ndarray, got: np.ndarray, start: np.ndarray | None, name: str) -> None:
  """got within TOL of dawn, after checking that wgpu-py wrote every value and that the result differs from
  `start` (the input state; None: check that it is not all zeros), so that an idle launch cannot pass."""
  diff = float(np.abs(got - dawn).max())
  print(f"\n{name}: wgpu-py vs Dawn, max |difference| {diff:.3g} (bit-identical: {np.array_equal(got, dawn)})")
  assert not np.isnan(got).any(), f"{name}: wgpu-py left NaN (a launch that did not run)"
  moved = np.abs(dawn - (0.0 if start is None else start)).max()
  assert moved > 1e-2, f"{name}: the result is its starting point; the comparison would prove nothing"
  assert diff <= TOL, f"{name}: wgpu-py differs from Dawn by {diff:.3e} > {TOL:.0e}"


@pytest.mark.xdist_group("pendulum")   # shares the Dawn compiles of test_parity_wgsl and test_parity_lanes
@pytest.mark.parametrize("lanes", [None, 64])
def test_parity_wgpu_step(lanes, naga):
  """pendulum, 16 kicked envs, 10 steps: one lane per env (the default) and 64 lanes per env (env state in
  workgroup memory, barriers: test_parity_lanes forces the same on Dawn)."""
  check, _ = naga
  scene = load_scene_dict(SCENES / "pendulum.json")
  old = wgsl.LANES
  try:
    wgsl.LANES = lanes
    dawn, got = dawn_and_wgpu(check, scene, steps=10)
  finally:
    wgsl.LANES = old
  start = kicked_states(build_model(scene), BATCH, 0, 0.5)[0]
  compare(dawn, got, start, f"pendulum, lanes {lanes or 1}")


@pytest.mark.xdist_group("pendulum_swingup")
def test_parity_wgpu_step_controls(naga):
  """pendulum_swingup, 16 kicked envs with random controls (clipped by the kernel), 10 steps: the ctrl binding."""
  check, _ = naga
  scene = load_scene_dict(TASK_SCENES / "pendulum_swingup.json")
  dawn, got = dawn_and_wgpu(check, scene, steps=10)
  start, ctrl = kicked_states(build_model(scene), BATCH, 0, 0.5)
  assert ctrl is not None and np.abs(ctrl).max() > 0
  compare(dawn, got, start, "pendulum_swingup")


@pytest.mark.xdist_group("grad_pendulum_swingup")   # shares the Dawn backward compile of test_parity_grad (batch 2)
def test_parity_wgpu_backward(naga):
  """The backward kernel (engine.wgsl_backward.step_vjp) on pendulum_swingup, 2 kicked envs with random controls and
  output gradients: its 8 storage buffers within WebGPU's default limit, and the gradients of the state, the controls
  and the parameters as Dawn's."""
  check, _ = naga
  same_driver(check)
  from tinygrad import Tensor
  from kernels.tape import store_mode
  model = engine.load_scene(TASK_SCENES / "pendulum_swingup.json", device="WEBGPU")
  packed, ctrl = kicked_states(model, 2, 0, 0.5)
  gout = np.random.default_rng(1).normal(size=packed.shape)
  damping = has_damping(model)
  def t(a): return Tensor(a.astype(np.float32), device="WEBGPU")
  dawn = [g.numpy() for g in wgsl_backward.step_vjp(model, t(packed), t(ctrl), t(gout), damping)]
  got = check.step_vjp(model, packed, ctrl, gout, wgsl.params(model).numpy(), wgsl.tables(model)[0].numpy(), damping,
                       store_mode(model, 2, damping))
  for name, a, b in zip(("d/d state", "d/d ctrl", "d/d parameters"), dawn, got):
    compare(a.astype(np.float64), b.astype(np.float64), None, f"pendulum_swingup backward, {name}")
