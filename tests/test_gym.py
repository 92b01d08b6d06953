"""Gymnasium adapter (engine/gym.py): Gymnasium's own check_env on the single view, gymnasium 1.x VectorEnv contract and
SAME_STEP autoreset layout on the vector view, seeding, and the install hint when gymnasium is missing.

A numpy point mass (FakePointMass) follows docs/env.md exactly and drives most tests; the same checks run on the
real tasks once engine.make_env exists (skipped until then)."""
import functools
import importlib
import sys
import warnings
import numpy as np
import pytest
from tinygrad import Tensor
import engine
import engine.gym as eg
from engine.spaces import Box
from tests.helpers import env_batch, env_for

gym = pytest.importorskip("gymnasium")
from gymnasium.utils.env_checker import check_env  # noqa: E402
from gymnasium.vector.utils import batch_space  # noqa: E402

REAL_TASKS = ("cartpole", "pendulum_swingup", "reacher", "ant")
# ant's env compiles for ~50-90 s per batch size on 2 cores and tests/test_task_ant.py already builds it: its
# check_env runs with `make test-slow`
TASKS = ["fake"] + [pytest.param(t, marks=[pytest.mark.slow] if t == "ant" else []) for t in REAL_TASKS]
# the vector view is the same code for every task: two real tasks (one with a target, one without) keep the suite's
# compile time down; check_env runs on every task
VECTOR_TASKS = [t for t in TASKS if not hasattr(t, "values") or t.values[0] in ("cartpole", "reacher")]
# the real vector envs have tests/test_env.py's batch size (tests.helpers.env_batch) and run in its worker, which has
# compiled them already
pytestmark = pytest.mark.xdist_group("envs")


def vector_batch(task: str) -> int:
  return 2 if task == "fake" else env_batch(task)


class FakePointMass:
  """Batched 2-D point mass per docs/env.md: obs [x, y, vx, vy] (N, 4), action = acceleration (N, 2) clipped to
  [-1, 1] [m/s^2], dt = 0.1 s. Starts at rest with x, y ~ U(-0.5, 0.5) [m]; reward -|p|^2; terminated when
  max(|x|, |y|) > 1 m (or state non-finite), truncated after max_episode_steps; auto-resets in step.
  Different obs_dim (4) and act_dim (2) catch a swapped space."""
  dt = 0.1

  def __init__(self, num_envs: int, seed: int = 0, max_episode_steps: int = 40):
    self.num_envs, self.max_episode_steps = num_envs, max_episode_steps
    self.single_observation_space = Box(np.full(4, -np.inf, np.float32), np.full(4, np.inf, np.float32))
    self.single_action_space = Box(-np.ones(2, np.float32), np.ones(2, np.float32))
    self.observation_space = self.single_observation_space.batched(num_envs)
    self.action_space = self.single_action_space.batched(num_envs)
    self._rng = np.random.default_rng(seed)
    self.reset()

  def _draw(self) -> np.ndarray:
    p = self._rng.uniform(-0.5, 0.5, (self.num_envs, 2))
    return np.concatenate([p, np.zeros_like(p)], -1).astype(np.float32)

  def reset(self, seed: int | None = None):
    if seed is not None: self._rng = np.random.default_rng(seed)
    self._s, self._t = self._draw(), np.zeros(self.num_envs, np.int32)
    self._ret = np.zeros(self.num_envs, np.float32)
    return Tensor(self._s.copy()), {}

  def step(self, action):
    a = action.numpy() if isinstance(action, Tensor) else np.asarray(action)
    if a.shape != (self.num_envs, 2) or not np.issubdtype(a.dtype, np.floating):
      raise ValueError(f"action {a.shape} {a.dtype}, expected ({self.num_envs}, 2) float")
    v = self._s[:, 2:] + self.dt * np.clip(a, -1, 1)
    p = self._s[:, :2] + self.dt * v
    s = np.concatenate([p, v], -1).astype(np.float32)
    reward = -(p * p).sum(-1).astype(np.float32)
    self._t += 1
    self._ret += reward
    nonfinite = ~np.isfinite(s).all(-1)
    terminated = (np.abs(p).max(-1) > 1.0) | nonfinite
    truncated = (self._t >= self.max_episode_steps) & ~terminated
    done = terminated | truncated
    info = {"final_obs": Tensor(s.copy()), "episode_return": Tensor(np.where(done, self._ret, 0).astype(np.float32)),
            "episode_length": Tensor(np.where(done, self._t, 0).astype(np.int32)), "done": Tensor(done),
            "nonfinite": Tensor(nonfinite)}
    fresh = self._draw()
    self._s = np.where(done[:, None], fresh, s)
    self._t[done], self._ret[done] = 0, 0
    return Tensor(self._s.copy()), Tensor(reward), Tensor(terminated), Tensor(truncated), info


def _single(task: str, **kw):
  return eg.GymnasiumEnv(FakePointMass(1, **kw)) if task == "fake" else _real(task, 1)


def _vector(task: str, num_envs: int, **kw):
  return eg.GymnasiumVectorEnv(FakePointMass(num_envs, **kw)) if task == "fake" else _real(task, num_envs)


@functools.cache
def _real(task: str, num_envs: int):
  # built once per module (tests reset with a seed before use), so each real task compiles once; the vector view
  # wraps tests/test_env.py's env (tests.helpers.env_for: compiled once per worker), and
  # test_gym_vector_contract checks that make_gymnasium_vector builds the same view
  if num_envs == 1: return eg.make_gymnasium(task)
  assert num_envs == env_batch(task), (task, num_envs)
  return eg.GymnasiumVectorEnv(env_for(task))


@pytest.mark.parametrize("task", TASKS)
def test_gym_check_env(task):
  env = _single(task)
  with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    check_env(env.unwrapped, skip_render_check=True)
  # the contract's observation bounds are +-inf, which check_env flags as a hint; any other warning is a finding
  unexpected = [str(w.message) for w in caught if "infinity" not in str(w.message)]
  assert not unexpected, unexpected
  assert env.observation_space.dtype == np.float32 and env.action_space.dtype == np.float32
  assert env.metadata["render_modes"] == [] and env.render_mode is None


@pytest.mark.parametrize("action, ends", [(1.0, "terminated"), (0.0, "truncated")])
def test_gym_single_returns_final_obs(action, ends):
  # +1 drives the mass out of |p| <= 1 (terminated, ~17 steps); 0 keeps it at rest until the 30-step time limit
  env = _single("fake", max_episode_steps=30)
  with pytest.raises(gym.error.ResetNeeded): env.step(np.zeros(2, np.float32))
  obs, info = env.reset(seed=3)
  assert obs.shape == (4,) and obs.dtype == np.float32 and info == {}
  rewards = []
  for n in range(1, 31):
    obs, reward, terminated, truncated, info = env.step(np.full(2, action, np.float32))
    assert type(reward) is float and type(terminated) is bool and type(truncated) is bool
    rewards.append(reward)
    if terminated or truncated: break
  assert (terminated, truncated) == (ends == "terminated", ends == "truncated")
  # the episode's last obs, not the engine's fresh start (|p| <= 0.5 at rest): Gymnasium semantics, reset is ours
  if ends == "terminated": assert np.abs(obs[:2]).max() > 1.0
  else: assert n == 30 and np.array_equal(obs[2:], np.zeros(2, np.float32))
  assert info["episode_length"] == n and type(info["episode_length"]) is int and info["nonfinite"] is False
  assert info["episode_return"] == pytest.approx(sum(rewards), rel=1e-5)
  with pytest.warns(UserWarning, match="without reset"): env.step(np.zeros(2, np.float32))
  obs, _ = env.reset()
  assert np.abs(obs[:2]).max() <= 0.5


def _check_vector_step(env, out):
  obs, reward, terminated, truncated, infos = out
  n = env.num_envs
  assert obs.shape == (n, *env.single_observation_space.shape) and obs.dtype == np.float32
  assert obs in env.observation_space
  # the caller owns a writable host copy (torch.from_numpy shares it without a warning)
  assert obs.flags.writeable and reward.flags.writeable
  assert reward.shape == (n,) and reward.dtype == np.float32
  assert terminated.shape == truncated.shape == (n,) and terminated.dtype == truncated.dtype == np.bool_
  assert isinstance(infos, dict)
  done = terminated | truncated
  if not done.any():
    assert infos == {}
    return done
  # gymnasium 1.x SAME_STEP layout (SyncVectorEnv): object array of final obs + mask, final_info dict + mask
  assert set(infos) == {"final_obs", "_final_obs", "final_info", "_final_info"}
  assert np.array_equal(infos["_final_obs"], done) and np.array_equal(infos["_final_info"], done)
  assert infos["final_obs"].dtype == object and infos["final_obs"].shape == (n,)
  for i in range(n):
    fo = infos["final_obs"][i]
    if done[i]: assert fo in env.single_observation_space and fo.dtype == np.float32
    else: assert fo is None
  for k in ("episode_return", "episode_length", "nonfinite"):
    assert infos["final_info"][k].shape == (n,) and np.array_equal(infos["final_info"][f"_{k}"], done)
  assert infos["final_info"]["episode_length"][done].min() >= 1
  return done


@pytest.mark.parametrize("task", VECTOR_TASKS)
def test_gym_vector_contract(task):
  n = vector_batch(task)
  env = _vector(task, n)
  if task != "fake":   # the factory: the same view of a fresh env (not stepped here: that would compile it again)
    made = eg.make_gymnasium_vector(task, n)
    assert type(made) is type(env) and made.num_envs == n and made.engine_env.num_envs == n
    assert made.single_observation_space == env.single_observation_space
    assert made.single_action_space == env.single_action_space
  assert env.num_envs == n and env.metadata["autoreset_mode"] == gym.vector.AutoresetMode.SAME_STEP
  for single, batched in ((env.single_observation_space, env.observation_space),
                          (env.single_action_space, env.action_space)):
    assert isinstance(single, gym.spaces.Box) and single.dtype == np.float32 and len(single.shape) == 1
    assert batched == batch_space(single, n)
  assert np.all(env.single_action_space.low == -1) and np.all(env.single_action_space.high == 1)
  obs, info = env.reset(seed=0)
  assert obs.shape == (n, *env.single_observation_space.shape) and obs.dtype == np.float32 and info == {}
  env.action_space.seed(0)
  for _ in range(5): _check_vector_step(env, env.step(env.action_space.sample()))
  with pytest.raises(ValueError): env.step(np.zeros(env.single_action_space.shape, np.float32))
  with pytest.raises(ValueError): env.reset(seed=[0, 1])
  with pytest.raises(ValueError): env.reset(options={"reset_mask": np.arange(n) == 0})
  if task == "fake": env.close()  # real envs are shared across this module's tests


def test_gym_vector_same_step_final_obs():
  # env 0 pushed +x (terminates, ~17 steps from rest), env 1 -x, env 2 at rest (truncates at 40 steps)
  env = _vector("fake", 3, max_episode_steps=40)
  obs, _ = env.reset(seed=1)
  action = np.array([[1, 0], [-1, 0], [0, 0]], np.float32)
  length, ret, ended = np.zeros(3, int), np.zeros(3, np.float32), np.zeros(3, bool)
  for _ in range(41):
    prev = obs
    out = env.step(action)
    obs, reward, terminated, truncated, infos = out
    done = _check_vector_step(env, out)
    length += 1
    ret += reward
    ended |= done
    for i in np.flatnonzero(done):
      final = infos["final_obs"][i]
      # the finished episode's last obs continues the previous obs (one Euler step), while obs[i] is a fresh start
      assert np.allclose(final[:2], prev[i, :2] + FakePointMass.dt * final[2:], atol=1e-6)
      assert np.abs(obs[i, :2]).max() <= 0.5 and np.array_equal(obs[i, 2:], np.zeros(2, np.float32))
      assert infos["final_info"]["episode_length"][i] == length[i]
      assert infos["final_info"]["episode_return"][i] == pytest.approx(ret[i], rel=1e-5)
      assert terminated[i] == (i < 2) and truncated[i] == (i == 2)
      length[i], ret[i] = 0, 0
  assert ended.all()


def test_gym_vector_record_episode_statistics():
  # gymnasium's own episode bookkeeping, which branches on SAME_STEP, must agree with the engine's episode stats
  env = gym.wrappers.vector.RecordEpisodeStatistics(_vector("fake", 4, max_episode_steps=12))
  env.reset(seed=2)
  env.action_space.seed(2)
  checked = 0
  for _ in range(40):
    *_, infos = env.step(env.action_space.sample())
    if "final_info" not in infos: continue
    done = infos["_episode"]
    assert np.array_equal(done, infos["_final_info"])
    assert np.array_equal(infos["episode"]["l"][done], infos["final_info"]["episode_length"][done])
    assert np.allclose(infos["episode"]["r"][done], infos["final_info"]["episode_return"][done], rtol=1e-5)
    checked += int(done.sum())
  assert checked >= 4


@pytest.mark.parametrize("task", VECTOR_TASKS)
def test_gym_vector_seeding(task):
  def rollout(env, seed):
    obs, _ = env.reset(seed=seed)
    rng, out = np.random.default_rng(seed), [obs]
    for _ in range(15 if task == "fake" else 4):
      o, r, te, tr, infos = env.step(rng.uniform(-1, 1, env.action_space.shape).astype(np.float32))
      final = [f for f in infos.get("final_obs", []) if f is not None]
      out += [o, r, te, tr, *final]
    return out
  env = _vector(task, vector_batch(task))   # the contract test's env: compiled once
  a, b = rollout(env, 11), rollout(env, 11)
  assert len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b)), "same seed, different trajectory"
  # the contract does not promise random initial states for every task, so only the fake checks that seeds differ
  if task == "fake": assert not np.array_equal(a[0], rollout(env, 12)[0]), "different seeds gave identical resets"


def test_gym_missing_gymnasium_message(monkeypatch):
  monkeypatch.setitem(sys.modules, "gymnasium", None)  # makes `import gymnasium` raise ImportError
  with pytest.raises(ImportError, match=r"pip install 'tinyxpbd\[gym\]'"): eg.GymnasiumVectorEnv(FakePointMass(2))
  with pytest.raises(ImportError, match=r"pip install 'tinyxpbd\[gym\]'"): eg.make_gymnasium("cartpole")
  # importing the adapter itself must not need gymnasium (it is an optional extra)
  monkeypatch.setattr(engine, "gym", eg)  # the fresh import below rebinds engine.gym; put the original back after
  monkeypatch.delitem(sys.modules, "engine.gym")
  importlib.import_module("engine.gym")


def test_gym_registered_on_import():
  """`import engine` registers every task: gymnasium.make gives the one-env view, gymnasium.make_vec the engine's own
  batched env (not N copies), and both reset and step (cartpole at tests/test_env.py's batch: compiled already)."""
  import gymnasium
  assert {eg.env_id(t) for t in REAL_TASKS} <= set(gymnasium.registry)
  assert eg.env_id("pendulum_swingup") == "tinyxpbd/PendulumSwingup-v0"
  env = gymnasium.make("tinyxpbd/Cartpole-v0")
  obs, _ = env.reset(seed=0)
  assert obs.shape == (4,) and np.isfinite(env.step(env.action_space.sample())[0]).all()
  n = env_batch("cartpole")
  venv = gymnasium.make_vec("tinyxpbd/Cartpole-v0", num_envs=n)
  assert isinstance(venv, eg.GymnasiumVectorEnv) and isinstance(venv, gymnasium.vector.VectorEnv)
  obs, _ = venv.reset(seed=0)
  assert obs.shape == (n, 4) and venv.step(venv.action_space.sample())[1].shape == (n,)
