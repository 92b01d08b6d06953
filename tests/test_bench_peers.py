"""bench/bench_peers.py: the MJCF twins in bench/mjcf/ are the scenes they stand for, and the physical checks that
every benchmark figure carries accept a state that passes and reject one that does not."""
import sys
import numpy as np
import pytest
import engine
from engine.scene import load_scene_dict
from tests.helpers import SCENES

sys.path.insert(0, str(SCENES.parent / "bench"))
import bench_peers  # noqa: E402

TWINS = sorted({scene for scene, _, _ in bench_peers.SET})


@pytest.mark.parametrize("scene", TWINS)
def test_verify_mjcf_twin_matches_scene(scene):
  """Same bodies in the same places and orientations, same masses and principal inertias, gravity and step: MuJoCo
  computes the inertias from the MJCF geoms, the engine from the scene's, so this checks both."""
  mujoco = pytest.importorskip("mujoco")
  model = engine.load_scene(bench_peers.scene_path(scene))
  m = mujoco.MjModel.from_xml_path(str(bench_peers.ROOT / "bench" / "mjcf" / f"{scene}.xml"))
  d = mujoco.MjData(m)
  mujoco.mj_forward(m, d)
  assert m.nbody - 1 == model.nbody
  np.testing.assert_allclose(d.xipos[1:], model.body_pos0.numpy(), atol=1e-6)
  quat = model.body_quat0.numpy() * np.sign(model.body_quat0.numpy()[:, :1])
  np.testing.assert_allclose(d.xquat[1:] * np.sign(d.xquat[1:, :1]), quat, atol=1e-6)
  np.testing.assert_allclose(m.body_mass[1:], 1.0 / model.body_inv_mass.numpy(), rtol=1e-5)
  np.testing.assert_allclose(np.sort(m.body_inertia[1:], -1), np.sort(1.0 / model.body_inv_inertia.numpy(), -1),
                             rtol=1e-5)
  np.testing.assert_allclose(m.opt.gravity, model.gravity.numpy(), rtol=1e-6)
  assert abs(m.opt.timestep - model.dt) < 1e-12


@pytest.mark.parametrize("scene", TWINS)
def test_verify_mjcf_twin_joints(scene):
  """Same hinges (world anchor and axis at the initial pose, limits) in scene order, the twin's free joints aside,
  and the same motors (joint, gear, ctrl range): MJCF gives them in the child's frame, the scene in the world's."""
  mujoco = pytest.importorskip("mujoco")
  spec = load_scene_dict(bench_peers.scene_path(scene))
  m = mujoco.MjModel.from_xml_path(str(bench_peers.ROOT / "bench" / "mjcf" / f"{scene}.xml"))
  d = mujoco.MjData(m)
  mujoco.mj_forward(m, d)
  hinges = [j for j in range(m.njnt) if m.jnt_type[j] == mujoco.mjtJoint.mjJNT_HINGE]
  assert len(hinges) == len(spec["joints"]) and all(j["type"] == "hinge" for j in spec["joints"])
  for j, sj in zip(hinges, spec["joints"]):
    np.testing.assert_allclose(d.xanchor[j], sj["anchor"], atol=1e-6)
    np.testing.assert_allclose(d.xaxis[j], np.array(sj["axis"]) / np.linalg.norm(sj["axis"]), atol=1e-6)
    assert bool(m.jnt_limited[j]) == (sj.get("range") is not None)
    if sj.get("range") is not None: np.testing.assert_allclose(m.jnt_range[j], sj["range"], atol=1e-9)
  assert m.nu == len(spec["actuators"])
  for a, sa in enumerate(spec["actuators"]):
    assert sa["type"] == "motor" and m.joint(m.actuator_trnid[a, 0]).name == sa["joint"]
    assert m.actuator_gear[a, 0] == sa["gear"] and m.actuator_ctrllimited[a]
    np.testing.assert_allclose(m.actuator_ctrlrange[a], sa["ctrlrange"])


@pytest.mark.parametrize("scene", TWINS)
def test_verify_peer_checks(scene):
  """MuJoCo's run of the twin passes the scene's check (short: 4 envs, 4 x 60 env-steps), and the check fails once
  the final state is moved the way that scene's failure looks (a stretched rod, a box above the ground, a cube
  slid sideways, an ant sagging 2 cm) or is not finite."""
  pytest.importorskip("mujoco")
  assert bench_peers.run_mujoco(scene, 4, 60)["result"][0]
  start = engine.load_scene(bench_peers.scene_path(scene)).body_pos0.numpy()[None]
  bad = {"pendulum": [0.0, 0.0, -0.01], "drop": [0.0, 0.0, 0.01], "stack10": [0.005, 0.0, 0.0],
         "ant": [0.0, 0.0, -0.02]}[scene]
  rest = start.copy()
  if scene == "drop": rest[..., 2] = 0.1
  if scene == "ant": rest[:, 0, 2] = bench_peers.ANT_REST_Z
  assert bench_peers.check(scene, start, rest, np.zeros_like(rest))[0]
  assert not bench_peers.check(scene, start, rest + np.array(bad), np.zeros_like(rest))[0]
  broken = rest.copy()
  broken[:, -1] = np.nan   # one body's state gone to NaN, the others as at rest
  assert not bench_peers.check(scene, start, broken, np.zeros_like(rest))[0]
  if scene in ("drop", "ant"):   # the checks that say "at rest": 5 cm/s is not
    assert not bench_peers.check(scene, start, rest, np.full_like(rest, 0.05))[0]
