"""The WGSL kernel's two layouts (kernels/xpbd_step.wgsl LANES): one env per workgroup of LANES invocations against
one invocation per env, and against the oracle, one step from the same kicked states (engine/parity.py).

The lanes split each stage's items (bodies, joints, motors' bodies, pairs, contact slots) and keep the oracle's
summation order per body, so on lavapipe (Mesa 25.0.7) the layouts agree bit for bit on every scene and the random
scenes, after 1 and 50 steps. The bound is float32 noise all the same, since a GPU compiler may fuse the two kernels'
arithmetic differently: NOISE (8 ulps of a pose of order 1), and that over the substep h for velocities (v = D / h).
The forced lane counts run the strided loops both ways: 2 lanes over 3 bodies and joints, 8 over stack10's 10 bodies,
55 pairs and 260 slots, 64 over one body. The oracle runs once here, on its cheapest scene to compile (~10 s; stack10's
takes ~100 s on 2 cores): the one-lane kernel meets it on every scene in tests/test_parity_wgsl.py, and measured with
32 lanes every scene meets the same bounds (docs/wgsl.md, Parity).
"""
from __future__ import annotations
import numpy as np
import pytest
import engine.wgsl as wgsl
from engine.parity import BATCH, FIELDS, compare, kicked_states, run
from engine.scene import build_model, load_scene_dict
from tests.helpers import SCENES, cached_simulator, wgsl_checked  # noqa: F401 (autouse)
from tests.test_parity_wgsl import SHARED, check, random_scene, skip_if_miscompiled

NOISE = 1e-6


@pytest.fixture
def lanes_forced():
  """Set engine.wgsl.LANES for the test; restored after it."""
  old = wgsl.LANES
  yield lambda n: setattr(wgsl, "LANES", n)
  wgsl.LANES = old


def scene_of(name: str) -> dict:
  return load_scene_dict(random_scene(int(name[6:])) if name.startswith("random") else SCENES / f"{name}.json")


def assert_close(a: np.ndarray, b: np.ndarray, name: str, scene: str, tol: float) -> None:
  err = float(np.abs(a - b).max())
  assert err <= tol, f"{scene}: {name} differs by {err:.3e} > {tol:.3e}"


@pytest.mark.parametrize("name,lanes", [pytest.param(n, k, marks=pytest.mark.xdist_group(n))
                                        for n, k in (("pendulum", 64), ("random0", 2), ("stack10", 8))])
def test_parity_lanes_vs_one_lane(name, lanes, lanes_forced):
  """BATCH envs, as in tests/test_parity_wgsl.py: the one-lane kernel is the one that test compiled."""
  skip_if_miscompiled(name)
  scene = scene_of(name)
  model = build_model(scene)
  packed, ctrl = kicked_states(model, BATCH, 0, 0.5)
  out = {}
  for n in (1, lanes):
    lanes_forced(n)
    out[n] = run(scene, "wgsl", [(packed, ctrl, 1)], device="WEBGPU", simulator=cached_simulator)[0]
  h = model.dt / model.substeps
  for field, sl in FIELDS.items():
    tol = NOISE if field in ("body_pos", "body_quat") else NOISE / h
    assert_close(out[lanes][..., sl], out[1][..., sl], f"{field} ({lanes} lanes vs 1)", name, tol)


@pytest.mark.xdist_group("compliant_hang")
def test_parity_lanes_vs_oracle(lanes_forced):
  """The bounds of tests/test_parity_wgsl.py, on 4 lanes (the oracle's compile is that test's)."""
  lanes_forced(4)
  check(compare(SCENES / "compliant_hang.json", steps=1, judge=False, **SHARED))


def test_parity_lanes_options():
  """The default rule and its limits (kernels/lanes.py default_lanes, check_lanes)."""
  from kernels.lanes import WORKGROUP_BYTES, check_lanes, default_lanes
  from kernels.layout import state_bytes
  pendulum, stack = (build_model(scene_of(n)) for n in ("pendulum", "stack10"))
  assert default_lanes(pendulum, 256, cpu=False) == 1                           # no contacts: one env per invocation
  assert default_lanes(stack, 64, cpu=False) == 32 and default_lanes(stack, 64, cpu=True) == 1
  assert default_lanes(stack, 1, cpu=True) == 32                                # one env: its lanes fill the SIMD
  assert default_lanes(stack, 70000, cpu=False) == 1                            # past the workgroups of one dispatch
  assert state_bytes(stack) < WORKGROUP_BYTES
  with pytest.raises(ValueError, match="lanes=0"): check_lanes(stack, 0)
