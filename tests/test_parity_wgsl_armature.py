"""The WGSL armature stage (kernels/armature.wgsl) against the oracle's (oracle/armature.py), one step from the same
states, with the bounds of tests/test_parity_wgsl.py: every field within 1e-5 of the float32 oracle, or no further
from the float64 oracle than the float32 oracle is (within FLOOR_FACTOR, plus 1e-5).

Two models cover the stage's paths: a cart on a rail carrying a two-link arm (a fixed tree with a slide and two
hinges, limits narrow enough that the one-step kicks pin them, armed and unarmed motors, damping in the stage), and
Gymnasium's ant.xml standing on its floor (a floating tree of eight armed hinges, its ankles on their bounds, its
feet in contact, so the contacts-only pass after the step runs too). The ant's one step is 96 substeps: it differs
from float64 more than a joint scene does (measured on lavapipe, Mesa 25, 16 envs: angvel 2.4e-2 rad/s float32
oracle, 5.1e-2 kernel, from its reset pose in the air). Longer rollouts are not compared: the ant is chaotic enough
that the float32 oracle is 6 cm from float64 after 30 steps, and the kernel no further (bench/README.md).
The float64 references are golden files whose fingerprint names oracle/armature.py (tests/golden.py ARMED).
"""
from __future__ import annotations
import warnings
from functools import partial
from pathlib import Path
import numpy as np
import pytest
from engine.parity import BATCH, compare_cases
from tests.golden import ARMED
from tests.helpers import cached_simulator, golden_reference, wgsl_checked  # noqa: F401 (autouse)
from tests.test_parity_wgsl import check

mujoco = pytest.importorskip("mujoco")
SHARED = dict(simulator=cached_simulator, reference=partial(golden_reference, sources=ARMED))

# the study's cart and arm (bench/study_armature.py CART) with limits that one step's kicks cross
CART = """<mujoco model="cart_arm_limited">
  <option timestep="0.004"><flag contact="disable"/></option>
  <worldbody><body name="cart" pos="0 0 2">
    <joint name="rail" type="slide" axis="1 0 0" damping="0.3" range="-0.0005 0.0005" limited="true"/>
    <geom type="box" size="0.1 0.05 0.05" mass="0.2"/>
    <body name="upper">
      <joint name="shoulder" type="hinge" axis="0 1 0" armature="0.02" damping="0.05" range="-0.5 0.5"
             limited="true"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 -0.3" size="0.03"/>
      <body name="lower" pos="0.3 0 -0.3">
        <joint name="elbow" type="hinge" axis="0 1 0" armature="0.05" range="-0.05 0.05" limited="true"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.03"/>
      </body>
    </body>
  </body></worldbody>
  <actuator><motor joint="elbow" gear="2" ctrlrange="-1 1"/><motor joint="rail" gear="5" ctrlrange="-1 1"/></actuator>
</mujoco>"""


def scene_from(path: Path) -> dict:
  from engine.mjcf import MJCFWarning, from_mjcf
  from engine.scene import load_scene_dict
  with warnings.catch_warnings():
    warnings.simplefilter("ignore", MJCFWarning)
    return load_scene_dict(from_mjcf(path))


def check_cases(scene: dict, states) -> None:
  for res in compare_cases(scene, [(1, 0.5)], judge=False, states=states, **SHARED): check(res)


@pytest.mark.xdist_group("armature_cart")
def test_parity_armature_cart_with_limits(tmp_path):
  path = tmp_path / "cart.xml"
  path.write_text(CART)
  check_cases(scene_from(path), None)


def ant_on_floor(scene: dict) -> tuple[np.ndarray, np.ndarray]:
  """BATCH ant states from its reset pose (engine.kinematics.start_pose: the ankles on their bounds) lowered until
  the lowest foot is 2 mm into the floor, velocities kicked by N(0, 0.1^2), controls uniform in [-1.2, 1.2] (its
  ctrlrange widened as kicked_states widens it); rounded to 1e-6 so the golden reference's key is the same on
  every machine."""
  from engine.scene import build_model
  from engine.simulator import Simulator
  from oracle.packed import pack_state
  from tests.test_verify_mjcf import _lowest_point
  model = build_model(scene)
  p = pack_state(Simulator(model, 1).reset(), model).numpy().astype(np.float64)[0]
  p[:, 2] -= _lowest_point(model, p[:, 0:3], p[:, 3:7]) + 0.002
  rng = np.random.default_rng(0)
  p = np.broadcast_to(p, (BATCH, *p.shape)).copy()
  p[..., 7:13] += rng.normal(0.0, 0.1, p[..., 7:13].shape)
  return np.round(p, 6), np.round(rng.uniform(-1.2, 1.2, (BATCH, model.nact)), 6)


@pytest.mark.xdist_group("armature_ant")
def test_parity_armature_ant_on_its_floor():
  import gymnasium
  scene = scene_from(Path(gymnasium.__file__).parent / "envs" / "mujoco" / "assets" / "ant.xml")
  check_cases(scene, [ant_on_floor(scene)])
