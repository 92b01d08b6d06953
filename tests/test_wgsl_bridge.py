"""The WGSL bridge (engine/wgsl.py) and the backend switch: names mirror the oracle, the pipeline cache, several
steps per launch, the env on the kernel, and clear errors."""
from __future__ import annotations
import re
from dataclasses import replace
import numpy as np
import pytest
from tinygrad import Tensor, dtypes
import engine
from engine.scene import load_scene
from engine.simulator import Simulator
from kernels.program import SOURCES, Unsupported
from oracle.constraints import CONSTRAINTS
from oracle.step import STAGES
from tests.helpers import SCENES, wgsl_checked  # noqa: F401 (autouse)



def test_verify_wgsl_names_mirror_the_oracle():
  fns = {f for path in SOURCES for f in re.findall(r"^fn (\w+)\(", open(path).read(), flags=re.M)}
  oracle = set(STAGES) | set(CONSTRAINTS) | {"motor_loads", "substep"}
  assert oracle <= fns, oracle - fns


def test_verify_pipeline_cached_and_steps_per_call_identical():
  """k steps in one launch equal k launches of one step, bit for bit; the program's pipeline is built once."""
  model = load_scene(SCENES / "double_pendulum.json", device="WEBGPU")
  one, four = Simulator(model, 8, backend="wgsl"), Simulator(model, 8, backend="wgsl", steps_per_call=4)
  s0 = one.reset(seed=1, noise=0.5)
  a, b = one.rollout(s0, 8), four.rollout(s0, 8)
  assert np.isfinite(a.body_pos.numpy()).all()
  for f in ("body_pos", "body_quat", "body_vel", "body_angvel"):
    np.testing.assert_array_equal(getattr(a, f).numpy(), getattr(b, f).numpy())
  from tinygrad.runtime.ops_webgpu import WebGPUProgram
  assert WebGPUProgram._tinyxpbd_cached


def test_verify_env_on_wgsl_matches_oracle():
  """The cart-pole env with domain randomisation (a batched parameter buffer) on both backends, same seed."""
  kw = dict(num_envs=6, seed=3, randomize={"mass": (0.5, 2.0), "gear": (0.8, 1.2)})
  envs = [engine.make_env("cartpole", backend=b, **kw) for b in ("oracle", "wgsl")]
  rng = np.random.default_rng(0)
  obs = [e.reset(seed=3)[0] for e in envs]
  for _ in range(15):
    act = rng.uniform(-1, 1, (6, 1)).astype(np.float32)
    obs = [e.step(act)[0] for e in envs]
  o = [x.numpy() if isinstance(x, Tensor) else np.asarray(x) for x in obs]
  np.testing.assert_allclose(o[1], o[0], atol=2e-4)


def test_wgsl_errors_are_clear():
  with pytest.raises(Unsupported, match="float32 only"):
    Simulator(load_scene(SCENES / "drop.json", dtype=dtypes.float64, device="WEBGPU"), 2, backend="wgsl")
  with pytest.raises(ValueError, match="device='WEBGPU'"):
    Simulator(load_scene(SCENES / "pendulum.json"), 2, backend="wgsl")
  with pytest.raises(ValueError, match="only the oracle backend"):
    Simulator(load_scene(SCENES / "pendulum.json", device="WEBGPU"), 2, backend="wgsl", differentiable=True)
  with pytest.raises(ValueError, match="backend: expected one of"):
    engine.make_env("cartpole", backend="cuda")


def test_verify_wgsl_counts_dropped_pairs():
  """Four spheres overlapping in a cluster, 6 candidate pairs, room for 2: the kernel reports the 4 it dropped per
  step, as the oracle's broadphase does (its hash buckets are large enough to add nothing), summed over the steps of
  a call, and the simulator's overflow warning fires on either backend."""
  bodies = [{"name": f"s{k}", "pos": [0.15 * (k % 2), 0.15 * (k // 2), 1.0], "geoms": [{"type": "sphere",
            "size": [0.1]}]} for k in range(4)]
  scene = {"name": "cluster", "contact": {"pair_capacity": 2, "hash_slots": 64}, "bodies": bodies}
  far = np.tile(np.array([[2.0 * k, 0.0, 1.0] for k in range(4)], dtype=np.float32), (2, 1, 1))   # 2 envs apart
  got = {}
  for backend in ("oracle", "wgsl"):   # one simulator (one compile) per backend for both starts
    model = engine.load_scene(scene, device="WEBGPU" if backend == "wgsl" else None)
    sim = engine.Simulator(model, batch=2, backend=backend, steps_per_call=2)
    with pytest.warns(RuntimeWarning, match="dropped up to 8 contact pairs"):   # whichever backend counted the drop
      got[backend, "cluster"] = sim.rollout(sim.reset(), 2).contact_overflow.numpy().tolist()
    apart = replace(sim.reset(), body_pos=Tensor(far, device=sim.device))
    got[backend, "far"] = sim.rollout(apart, 2).contact_overflow.numpy().tolist()
  assert got["oracle", "cluster"] == got["wgsl", "cluster"] == [8, 8]   # 4 dropped in each of 2 steps
  assert got["oracle", "far"] == got["wgsl", "far"] == [0, 0]
