"""The ant_v5 task (engine/tasks/ant_v5.py): Ant-v5 on Gymnasium's own ant.xml. Its observation and reward are
MuJoCo's qpos[2:], qvel and Ant-v5's reward terms of the same state (checked against MuJoCo's own data, no stepping),
its reset respects the joints' ranges, and (make test-slow) the env runs on the converted model."""
import numpy as np
import pytest
from tinygrad import Tensor, dtypes
pytest.importorskip("mujoco")
pytest.importorskip("gymnasium")
import engine   # noqa: E402
from engine.mjcf import compile_mjcf   # noqa: E402
from engine.mjcf_state import bodies_from_mujoco   # noqa: E402
from engine.scene import build_model, load_scene_dict   # noqa: E402
from engine.tasks.ant_v5 import AntV5, FRAME_SKIP, ant_xml   # noqa: E402
from tests.helpers import packed_rows   # noqa: E402



def test_verify_ant_v5_obs_and_reward_are_mujocos():
  """MuJoCo's ant at random states (torso anywhere, turned anyhow, hinges within their ranges, random velocities):
  the task's obs of the same state in maximal coordinates is Ant-v5's [qpos[2:], qvel], and its reward Ant-v5's
  healthy reward + v_x - 0.5 |u|^2, to float64 rounding (the hinge angles to their atan's polynomial)."""
  import mujoco
  scene = load_scene_dict(AntV5.scene_source())
  assert scene["dt"] == pytest.approx(FRAME_SKIP * 0.01) and scene["substeps"] == FRAME_SKIP * 96
  model = build_model(scene, dtypes.float64, "CPU")
  task = AntV5(model)
  m, d0 = compile_mjcf(ant_xml())
  d, rng = mujoco.MjData(m), np.random.default_rng(0)
  lo, hi = m.jnt_range[1:, 0], m.jnt_range[1:, 1]
  packed, want = [], []
  for k in range(6):
    q = rng.normal(size=4)
    d.qpos[:] = np.concatenate([[rng.uniform(-1, 1), rng.uniform(-1, 1), (0.1, 0.5, 0.9, 1.2, 0.3, 0.6)[k]],
                                q / np.linalg.norm(q), rng.uniform(lo, hi)])
    d.qvel[:] = rng.normal(size=m.nv)
    mujoco.mj_forward(m, d)
    b = bodies_from_mujoco(scene, m, d, d0)
    packed.append(packed_rows(b))
    want.append(np.concatenate([d.qpos[2:], d.qvel]))
  packed, want = Tensor(np.array(packed), dtype=dtypes.float64, device="CPU"), np.array(want)
  obs = task.observe(model, packed, None).numpy()
  sign = np.sign(obs[:, 1:2] * want[:, 1:2])   # q and -q are one orientation
  want[:, 1:5] *= sign
  angles = np.zeros(27, bool)
  angles[5:13] = True   # the hinge angles: joint_coords' atan is A&S 4.4.46's polynomial (oracle/math3.py, |error| <
  # 2e-8 on its asin, twice that on the half-angle's double): measured 4.1e-8 here
  np.testing.assert_allclose(obs[:, ~angles], want[:, ~angles], atol=1e-9)
  np.testing.assert_allclose(obs[:, angles], want[:, angles], atol=1e-7)
  u = rng.uniform(-1, 1, (6, model.nact))
  reward = task.reward(model, packed, None, Tensor(u, dtype=dtypes.float64, device="CPU")).numpy()
  healthy = (want[:, 0] >= 0.2) & (want[:, 0] <= 1.0)
  assert healthy.any() and not healthy.all()
  np.testing.assert_allclose(reward, want[:, 13] + healthy - 0.5 * np.square(u).sum(-1), atol=1e-9)
  assert (task.terminated(model, packed, None).numpy() == ~healthy).all()


def test_ant_v5_reset_lies_inside_the_ranges():
  """The reset's hinge angles (the task's init from extreme and random uniforms): within ant.xml's ranges, whose
  ankles' [30, 70] deg excludes the reference angle 0, and within Ant-v5's 0.1 rad noise of the reference angle
  clipped into the range; the rates within +-0.1 sqrt 3 rad/s."""
  model = build_model(load_scene_dict(AntV5.scene_source()), dtypes.float64, "CPU")
  task, m = AntV5(model), compile_mjcf(ant_xml())[0]
  u = np.concatenate([np.zeros((1, 16)), np.full((1, 16), 1 - 1e-12), np.random.default_rng(0).uniform(size=(8, 16))])
  qpos, qvel, _ = (t.numpy() for t in task.init(model, Tensor(u, dtype=dtypes.float64, device="CPU")))
  lo, hi = m.jnt_range[1:, 0], m.jnt_range[1:, 1]
  assert ((qpos >= lo) & (qpos <= hi)).all() and (np.abs(qpos - np.clip(0.0, lo, hi)) <= 0.1 + 1e-12).all()
  assert np.allclose(qpos[0], np.clip(-0.1, lo, hi)) and np.allclose(qpos[1], np.clip(0.1, lo, hi))
  assert (np.abs(qvel) <= 0.1 * np.sqrt(3) + 1e-12).all() and np.abs(qvel).max() > 0.1


ENV_STEPS = 4   # 0.2 s, 1,920 substeps


# in `make test-slow`: 70 s alone on lavapipe, most of it compiling the env's programs for this model (2026-11-27)
@pytest.mark.slow
def test_ant_v5_env_steps():
  """make_env("ant_v5") on the WGSL kernel: a few env-steps of random actions stay finite, healthy and paid as Ant-v5
  pays, from a reset inside the ranges."""
  env = engine.make_env("ant_v5", num_envs=2, backend="wgsl")
  obs, _ = env.reset(seed=0)
  m, _ = compile_mjcf(ant_xml())
  q = obs.numpy()[:, 5:13]
  assert ((q >= m.jnt_range[1:, 0] - 1e-6) & (q <= m.jnt_range[1:, 1] + 1e-6)).all()
  rng = np.random.default_rng(0)
  for _ in range(ENV_STEPS):
    action = rng.uniform(-1, 1, (2, 8)).astype(np.float32)
    obs, reward, terminated, _, info = env.step(action)
    o = obs.numpy()
    assert np.isfinite(o).all() and not info["nonfinite"].numpy().any() and not terminated.numpy().any()
    np.testing.assert_allclose(reward.numpy(), o[:, 13] + 1.0 - 0.5 * np.square(action).sum(-1), rtol=1e-5, atol=1e-5)
