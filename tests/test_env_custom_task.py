"""A task from user code (engine.register_task): defined here, on scenes/pendulum.json with a motor added, it runs
through make_env, gymnasium.make and Gymnasium's check_env; bad registrations fail with clear errors and leave the
registries as they were; a task whose outputs break the protocol's shapes is named when its env resets."""
import json
import math
import warnings
import numpy as np
import pytest
from tinygrad import Tensor
import engine
from engine.tasks import Task, task_names, uniform
from oracle.joints import joint_coords
from tests.helpers import SCENES

gym = pytest.importorskip("gymnasium")
from gymnasium.utils.env_checker import check_env  # noqa: E402
import engine.gym as eg  # noqa: E402

HOLD_STEPS = 20
START = 0.3   # [rad] the hinge starts within +-START of the scene's pose, at rest


class PendulumHold(Task):
  """Hold the bob still: obs [cos q, sin q, q'] of the hinge (q from the scene's pose), reward -q'^2, 20 steps."""
  max_episode_steps, obs_size, n_random = HOLD_STEPS, 3, 1

  def init(self, model, u):
    return uniform(u, -START, START), u * 0.0, u[:, 0:0]

  def observe(self, model, packed, task):
    qpos, qvel = joint_coords(model, packed)
    return Tensor.stack(qpos[:, 0].cos(), qpos[:, 0].sin(), qvel[:, 0], dim=-1)

  def reward(self, model, packed, task, ctrl):
    return -joint_coords(model, packed)[1][:, 0].square()


class WrongObs(PendulumHold):
  obs_size = 4   # observe gives 3


def scene_with_motor(tmp_path) -> str:
  """scenes/pendulum.json plus a 1 N m motor on its hinge (it has no actuator), written next to the test."""
  scene = json.loads((SCENES / "pendulum.json").read_text())
  scene["actuators"] = [{"name": "torque", "joint": "hinge", "type": "motor", "gear": 1.0, "ctrlrange": [-1, 1]}]
  path = tmp_path / "pendulum_motor.json"
  path.write_text(json.dumps(scene))
  return str(path)


@pytest.fixture
def registered():
  """Names registered in a test, unregistered after it (the registries are per process)."""
  names = []
  yield names
  for name in names: engine.unregister_task(name)


def test_env_custom_task_runs(tmp_path, registered):
  engine.register_task("pendulum_hold", PendulumHold, scene=scene_with_motor(tmp_path))
  registered.append("pendulum_hold")
  assert "pendulum_hold" in task_names() and eg.env_id("pendulum_hold") == "tinyxpbd/PendulumHold-v0"
  env = engine.make_env("pendulum_hold", num_envs=2)   # reset only: this env never steps, so it does not compile
  obs, _ = env.reset(seed=0)
  assert obs.shape == (2, 3) and np.all(obs.numpy()[:, 0] >= math.cos(START) - 1e-6) and np.all(obs.numpy()[:, 2] == 0)
  # gymnasium.make: the one-env view (compiled once here), through Gymnasium's own checker, render and close included
  genv = gym.make("tinyxpbd/PendulumHold-v0", render_mode="rgb_array")
  with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    check_env(genv.unwrapped)
  unexpected = [str(w.message) for w in caught if "infinity" not in str(w.message)]
  assert not unexpected, unexpected
  obs, _ = genv.reset(seed=1)
  for t in range(1, HOLD_STEPS + 1):
    obs, reward, terminated, truncated, info = genv.step(np.array([0.5], np.float32))
    assert reward == pytest.approx(-float(obs[2]) ** 2, rel=1e-6, abs=1e-12)   # -q'^2 of the state obs shows
    assert not terminated and truncated == (t == HOLD_STEPS)
  assert info["episode_length"] == HOLD_STEPS and genv.render().shape == (240, 320, 3)
  genv.close()


def test_env_register_task_errors(tmp_path, registered):
  names, ids = task_names(), set(gym.registry)
  scene = scene_with_motor(tmp_path)
  class NoReward(Task):
    max_episode_steps, obs_size = 10, 3
    def init(self, model, u): return u, u, u
    def observe(self, model, packed, task): return packed[:, 0, 0:3]
  class NoSize(PendulumHold):
    obs_size = 0
  cases = [
    (("cartpole", PendulumHold, scene), ValueError, "already registered"),
    (("PendulumHold", PendulumHold, scene), ValueError, "snake case"),
    (("hold", PendulumHold(None), scene), ValueError, "expected the task's class"),
    (("hold", NoReward, scene), ValueError, "does not define reward"),
    (("hold", NoSize, scene), ValueError, r"NoSize.obs_size must be an int >= 1, got 0"),
    (("hold", PendulumHold, tmp_path / "missing.json"), FileNotFoundError, "missing.json does not exist"),
    (("hold", PendulumHold, {"bodies": "?"}), engine.SceneError, r"register_task\('hold'\): scene \(dict\): bodies"),
    (("hold", PendulumHold, SCENES / "pendulum.json"), ValueError, "no actuators"),
  ]
  for args, error, match in cases:
    with pytest.raises(error, match=match): engine.register_task(*args)
  assert task_names() == names and set(gym.registry) == ids
  # two names with one Gymnasium id (my__task and my_task -> MyTask): the second is refused before either registry
  engine.register_task("hold_it", PendulumHold, scene=scene)
  registered.append("hold_it")
  with pytest.raises(ValueError, match="Gymnasium already has an env 'tinyxpbd/HoldIt-v0'"):
    engine.register_task("hold__it", PendulumHold, scene=scene)
  assert "hold__it" not in task_names()
  with pytest.raises(ValueError, match="was not added by register_task"): engine.unregister_task("cartpole")


def test_env_custom_task_shapes_checked(tmp_path, registered):
  engine.register_task("wrong_obs", WrongObs, scene=scene_with_motor(tmp_path))
  registered.append("wrong_obs")
  env = engine.make_env("wrong_obs")
  with pytest.raises(ValueError, match=r"task 'wrong_obs': observe\(\) has shape \(1, 3\), expected \(1, 4\)"):
    env.reset(seed=0)
