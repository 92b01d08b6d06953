"""The ant task (engine/tasks/ant.py) through engine.make_env: it stands on its knee limits with zero action, survives
random actions, and its obs and reward are the documented functions of the packed state. One env, compiled once per
worker and shared with tests/test_gym.py's check_env (tests.helpers.env_for, the xdist group "envs")."""
import numpy as np
import pytest
import engine
from engine.tasks.ant import Z_RANGE
from tests.helpers import env_for

STAND_STEPS = 100   # 2 s of 0.02 s
RANDOM_STEPS = 50
pytestmark = pytest.mark.xdist_group("envs")


@pytest.fixture(scope="module")
def env():
  return env_for("ant")


@pytest.fixture(scope="module")
def stand(env):
  """Torso height and xy (STAND_STEPS + 1, 2, ...) and the terminated flags over 2 s of zero action."""
  obs, _ = env.reset(seed=0)
  z, xy, term = [obs.numpy()[:, 0]], [env.state.packed.numpy()[:, 0, 0:2]], []
  for _ in range(STAND_STEPS):
    obs, _, terminated, _, _ = env.step(np.zeros((env.num_envs, 8), np.float32))
    z.append(obs.numpy()[:, 0]), xy.append(env.state.packed.numpy()[:, 0, 0:2]), term.append(terminated.numpy())
  return np.array(z), np.array(xy), np.array(term), env.state.packed.numpy()


def test_verify_ant_stands_with_zero_action(stand):
  """Unpowered, the knees settle onto their lower limit, which the rest pose sits 0.002 rad inside, 0.5 mm above the
  ground: the torso drops 0.5 + 1.1 mm by construction plus the XPBD joints' static error under load (measured
  6 mm at h = 2 ms, shrinking as h^2), so it stays within 1 cm of its start and never leaves the healthy range."""
  z, xy, term, packed = stand
  assert not term.any()
  assert np.abs(z - z[0]).max() < 0.01, f"torso height moved by {np.abs(z - z[0]).max():.4f} m"
  assert z.min() > Z_RANGE[0] + 0.05
  # standing still: the reset's hip-rate noise (0.1 rad/s) barely moves the torso sideways, and it comes to rest
  assert np.abs(xy - xy[0]).max() < 0.02
  assert np.abs(packed[:, :, 7:10]).max() < 1e-2, "bodies still moving after 2 s"


def test_ant_random_actions_stay_finite(env, stand):
  """A chunk of random actions from the standing pose: no env blows up, and the reward is Ant-v5's
  v_x + 1 - 0.5 |u|^2 of the state the step ended in (healthy envs, clipped actions)."""
  rng = np.random.default_rng(0)
  for _ in range(RANDOM_STEPS):
    action = rng.uniform(-1.5, 1.5, (env.num_envs, 8)).astype(np.float32)
    obs, reward, terminated, truncated, info = env.step(action)
    assert not info["nonfinite"].numpy().any()
    assert np.isfinite(obs.numpy()).all()
    done, packed = info["done"].numpy(), env.state.packed.numpy()
    want = packed[:, 0, 7] + 1.0 - 0.5 * np.square(np.clip(action, -1, 1)).sum(-1)
    np.testing.assert_allclose(reward.numpy()[~done], want[~done], rtol=1e-5, atol=1e-5)
    o = obs.numpy()
    np.testing.assert_allclose(o[:, 0:11], np.concatenate([packed[:, 0, 2:3], packed[:, 0, 3:13]], -1), atol=1e-6)


def test_ant_health_and_reward_gradient():
  """terminated: torso below 0.26 m (lying on the ground), above 1 m, or upside down; the reward is differentiable
  in the packed state with d reward / d v_x = 1 on the torso."""
  from tinygrad import Tensor
  from engine.kinematics import forward_kinematics
  from engine.tasks import SCENES
  from engine.tasks.ant import Ant
  model = engine.load_scene(SCENES / "ant.json")
  task = Ant(model)
  base = forward_kinematics(model, Tensor.zeros(5, 8), Tensor.zeros(5, 8)).numpy()
  base[1, 0, 2], base[2, 0, 2] = 0.25, 1.05                    # on its belly, thrown up
  base[3, 0, 3:7] = [0.0, 1.0, 0.0, 0.0]                       # turned over about x
  base[4, 0, 3:7] = [np.cos(0.7), np.sin(0.7), 0.0, 0.0]       # tilted 1.4 rad: still upright enough
  packed = Tensor(base)
  assert task.terminated(model, packed, None).numpy().tolist() == [False, True, True, True, False]
  packed = Tensor(base[:1])
  ctrl = Tensor([[0.5] * 8])
  r = task.reward(model, packed, None, ctrl).sum()
  gp, gc = r.gradient(packed, ctrl)
  assert gp.numpy()[0, 0, 7] == 1.0 and np.abs(np.delete(gp.numpy().ravel(), 7)).max() == 0.0
  np.testing.assert_allclose(gc.numpy(), -0.5 * np.ones((1, 8)), rtol=1e-6)
