"""Gymnasium adapter (engine/gym.py): Gymnasium's own check_env on the single view of every task (render included),
gymnasium 1.x VectorEnv contract and SAME_STEP autoreset (step by step against gymnasium's own SyncVectorEnv) on the
vector view, rendering and close, seeding, registration, and the install hint when gymnasium is missing.

A numpy point mass (FakePointMass) and a counter (FakeCounter) follow docs/env.md exactly and drive the layout tests;
the same checks run on the real tasks."""
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
from gymnasium.utils.env_checker import check_env, check_reset_seed_determinism, data_equivalence  # noqa: E402
from gymnasium.vector.utils import batch_space  # noqa: E402

REAL_TASKS = ("cartpole", "pendulum_swingup", "reacher", "ant")
TASKS = ["fake", *REAL_TASKS]
# the vector view is the same code for every task: two real tasks (one with a target, one without) keep the suite's
# compile time down; check_env runs on every task
VECTOR_TASKS = ["fake", "cartpole", "reacher"]
# the real envs are tests.helpers.env_for's, shared with tests/test_env.py and tests/test_task_ant.py in one worker:
# one env per task but cartpole (4 there, for test_env's NaN isolation; its one-env view gets its own)
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


class FakeCounter:
  """Batched counter per docs/env.md, gymnasium's own SAME_STEP test env (tests/vector/test_autoreset_mode.py) in
  the engine's contract: obs = steps taken (N, 1), reward = the action, terminated after max_count[i] steps,
  auto-reset in step. No randomness, so one batch and N single envs can be compared exactly."""

  def __init__(self, max_count):
    self.num_envs, self.max_count = len(max_count), np.asarray(max_count)
    self.single_observation_space = Box(np.zeros(1, np.float32), np.full(1, 100.0, np.float32))
    self.single_action_space = Box(-np.ones(1, np.float32), np.ones(1, np.float32))

  def reset(self, seed: int | None = None):
    self._count, self._ret = np.zeros(self.num_envs, np.int32), np.zeros(self.num_envs, np.float32)
    return Tensor(self._count[:, None].astype(np.float32)), {}

  def step(self, action):
    reward = np.asarray(action, np.float32)[:, 0]
    self._count, self._ret = self._count + 1, self._ret + reward
    done, never = self._count == self.max_count, np.zeros(self.num_envs, bool)
    info = {"final_obs": Tensor(self._count[:, None].astype(np.float32)), "done": Tensor(done),
            "episode_return": Tensor(np.where(done, self._ret, 0).astype(np.float32)),
            "episode_length": Tensor(np.where(done, self._count, 0).astype(np.int32)), "nonfinite": Tensor(never)}
    self._count, self._ret = np.where(done, 0, self._count), np.where(done, 0, self._ret)
    return Tensor(self._count[:, None].astype(np.float32)), Tensor(reward), Tensor(done), Tensor(never), info


def _single(task: str, render_mode: str | None = None, **kw):
  if task == "fake": return eg.GymnasiumEnv(FakePointMass(1, **kw))
  return eg.GymnasiumEnv(_engine(task, 1), render_mode=render_mode)


def _vector(task: str, num_envs: int, render_mode: str | None = None, **kw):
  if task == "fake": return eg.GymnasiumVectorEnv(FakePointMass(num_envs, **kw))
  return eg.GymnasiumVectorEnv(_engine(task, num_envs), render_mode=render_mode)


@functools.cache
def _engine(task: str, num_envs: int):
  # the engine envs compile once per worker (tests reset with a seed before use); views over them are cheap.
  # test_gym_vector_contract and test_gym_registered_on_import check that the factories build the same views
  if num_envs == env_batch(task): return env_for(task)
  assert (task, num_envs) == ("cartpole", 1), (task, num_envs)
  return _made_cartpole().unwrapped.engine_env   # gymnasium.make's, so that test_gym_registered_on_import steps it too


@functools.cache
def _made_cartpole():
  """gymnasium.make("tinyxpbd/Cartpole-v0") (engine.make_env("cartpole", num_envs=1) under the registered entry point),
  made once per worker: cartpole's one-env engine env for the views here and the env test_gym_registered_on_import
  steps, one compile for both (a second one-env cart-pole cost ~5 s of the suite)."""
  return gym.make("tinyxpbd/Cartpole-v0")


@pytest.mark.parametrize("task", TASKS)
def test_gym_check_env(task):
  """gymnasium's check_env, its render checks included (render_mode "rgb_array"; the fake cannot render)."""
  env = _single(task, render_mode=None if task == "fake" else "rgb_array")
  with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    check_env(env.unwrapped, skip_render_check=task == "fake")
  # the contract's observation bounds are +-inf, which check_env flags as a hint, and a view made without
  # gymnasium.make has no spec to build its other render modes from (there are none); any other warning is a finding
  unexpected = [str(w.message) for w in caught if "infinity" not in str(w.message)
                and "not having a spec" not in str(w.message)]
  assert not unexpected, unexpected
  # with a spec (as gymnasium.make gives) check_env also checks that reset(seed) then reset() repeats; the views here
  # have none, so run that check itself
  env.unwrapped.spec = gym.envs.registration.EnvSpec(f"check/{task}-v0")   # nondeterministic=False
  check_reset_seed_determinism(env)
  assert env.observation_space.dtype == np.float32 and env.action_space.dtype == np.float32
  if task == "fake":
    assert env.metadata["render_modes"] == [] and env.render_mode is None
    return
  assert env.metadata == {"render_modes": ["rgb_array"], "render_fps": round(1 / env.engine_env.core.model.dt)}
  frame = env.render()
  assert frame.shape == (240, 320, 3) and frame.dtype == np.uint8 and frame.std() > 0


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


def test_gym_vector_same_step_matches_sync_vector_env():
  """gymnasium's own definition of SAME_STEP, step by step: the vector view of a counter batch gives exactly what
  gymnasium.vector.SyncVectorEnv(autoreset_mode=SAME_STEP) gives over one single view per env (gymnasium's
  tests/vector/test_autoreset_mode.py scenario): obs, terminated, truncated and infos with their layout and dtypes;
  rewards by value (the view's are float32, SyncVectorEnv's float64)."""
  max_count = [2, 3, 3]
  ours = eg.GymnasiumVectorEnv(FakeCounter(max_count))
  def single(m): return eg.GymnasiumEnv(FakeCounter([m]))
  sync = gym.vector.SyncVectorEnv([functools.partial(single, m) for m in max_count],
                                  autoreset_mode=gym.vector.AutoresetMode.SAME_STEP)
  assert ours.metadata["autoreset_mode"] == sync.metadata["autoreset_mode"]
  assert data_equivalence(ours.reset(seed=0), sync.reset(seed=0), exact=True)
  actions = np.array([[0.5], [-0.25], [1.0]], np.float32)
  ends = 0
  for t in range(7):
    (*a, ra), (*b, rb) = [(o, te, tr, info, r) for o, r, te, tr, info in (ours.step(actions), sync.step(actions))]
    assert data_equivalence(a, b, exact=True), (t, a, b)
    assert np.array_equal(ra, rb), (t, ra, rb)
    ends += int(a[1].sum())
  assert ends == 7   # env 0 ends at steps 2, 4, 6; envs 1 and 2 at 3 and 6


def test_gym_vector_same_step_on_the_engine():
  """The engine does what the vector view declares (cartpole, a constant full push ends every episode in a few
  steps): on the step that ends an episode obs[i] is already the next episode's first obs (Gymnasium's
  U(-0.05, 0.05) start) while final_obs[i] breaks a termination limit, and the very next step counts towards the new
  episode (no NEXT_STEP-style idle step: its length is the steps since). gymnasium's RecordEpisodeStatistics, which
  branches on the declared mode, agrees with final_info."""
  n = env_batch("cartpole")
  env = gym.wrappers.vector.RecordEpisodeStatistics(_vector("cartpole", n))
  env.reset(seed=3)
  length, ends = np.zeros(n, int), 0
  for _ in range(40):
    obs, reward, terminated, truncated, infos = env.step(np.ones((n, 1), np.float32))
    length += 1
    assert np.all(reward == 1.0)   # cartpole pays 1 for every step, the one that ends an episode included
    for i in np.flatnonzero(terminated | truncated):
      final = infos["final_obs"][i]
      assert terminated[i] and (abs(final[1]) > 0.2 or abs(final[0]) > 2.4), final
      assert np.all(np.abs(obs[i]) <= 0.05 + 1e-6), obs[i]
      assert infos["final_info"]["episode_length"][i] == length[i] == infos["episode"]["l"][i]
      assert infos["final_info"]["episode_return"][i] == length[i] == infos["episode"]["r"][i]
      length[i], ends = 0, ends + 1
  assert ends >= 2 * n


def test_gym_render_single_shows_the_episode_that_ended():
  """The single view's frame shows the state its obs shows: on the step that ends an episode, the state it ended in
  (the engine already holds the next episode: tests/test_env.py checks that state), after reset() the new start."""
  env = _single("cartpole", render_mode="rgb_array")
  views = env.engine_env.render
  env.reset(seed=1)
  for _ in range(60):
    *_, terminated, truncated, _ = env.step(np.ones(1, np.float32))
    if terminated or truncated: break
    assert np.array_equal(env.render(), views(envs=[0], tiled=False)[0])
  assert terminated
  frame = env.render()
  assert np.array_equal(frame, views(envs=[0], final=True, tiled=False)[0])
  assert not np.array_equal(frame, views(envs=[0], tiled=False)[0])
  env.reset()
  assert np.array_equal(env.render(), views(envs=[0], tiled=False)[0])


def test_gym_vector_render_frames():
  """render_mode "rgb_array": a tuple with one frame per env, the layout gymnasium's vector envs give and its vector
  RecordVideo / HumanRendering tile; the engine env's own render() tiles the same views into one image. Without a
  render_mode render() warns and gives None, as gymnasium's envs do."""
  n = env_batch("cartpole")
  env = _vector("cartpole", n, render_mode="rgb_array")
  assert env.metadata["render_modes"] == ["rgb_array"] and env.metadata["render_fps"] == 50
  env.reset(seed=0)
  env.step(np.linspace(-1, 1, n, dtype=np.float32)[:, None])
  frames = env.render()
  assert isinstance(frames, tuple) and len(frames) == n
  assert all(f.shape == (240, 320, 3) and f.dtype == np.uint8 for f in frames)
  assert len({f.tobytes() for f in frames}) == n   # every env its own state
  grid = env.engine_env.render()                   # the first min(n, 4) envs, 2 x 2
  assert grid.shape == (480, 640, 3) and n == 4
  for i, f in enumerate(frames):
    r, c = divmod(i, 2)   # render_frames closes each tile with a grey line: its last row and column
    assert np.array_equal(grid[r * 240:(r + 1) * 240 - 1, c * 320:(c + 1) * 320 - 1], f[:-1, :-1]), i
  with pytest.warns(UserWarning, match="render_mode"): assert _vector("cartpole", n).render() is None
  with pytest.raises(ValueError, match="cannot render"):
    eg.GymnasiumVectorEnv(FakePointMass(2), render_mode="rgb_array")


def test_gym_make_render_mode_and_close():
  """gymnasium.make / make_vec pass render_mode (and make_env's render_size) through; "rgb_array_list" gets
  gymnasium's RenderCollection from the modes the entry point declares. close() closes the engine env and may be
  called twice. make_vec refuses an autoreset mode other than SAME_STEP. Nothing steps, so nothing compiles."""
  eid = eg.env_id("pendulum_swingup")
  env = gym.make(eid, render_mode="rgb_array")
  env.reset(seed=0)
  frame = env.render()
  assert frame.shape == (240, 320, 3) and frame.dtype == np.uint8
  env.close()
  env.close()
  with pytest.raises(RuntimeError, match="closed"): env.unwrapped.engine_env.reset(seed=0)
  env = gym.make(eid, render_mode="rgb_array_list", render_size=(64, 48))
  env.reset(seed=0)
  frames = env.render()
  assert isinstance(frames, list) and len(frames) == 1 and frames[0].shape == (48, 64, 3)
  env.close()
  venv = gym.make_vec(eid, num_envs=2, render_mode="rgb_array")
  venv.reset(seed=0)
  assert [f.shape for f in venv.render()] == [(240, 320, 3)] * 2
  venv.close()
  venv.close()
  assert venv.closed and venv.engine_env.closed
  with pytest.raises(ValueError, match="autoreset_mode"):
    gym.make_vec(eid, num_envs=2, autoreset_mode=gym.vector.AutoresetMode.NEXT_STEP)


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
  env = _made_cartpole()   # gymnasium.make's one-env view (made once: check_env[cartpole] runs on its engine env)
  obs, _ = env.reset(seed=0)
  assert obs.shape == (4,) and np.isfinite(env.step(env.action_space.sample())[0]).all()
  n = env_batch("cartpole")
  venv = gymnasium.make_vec("tinyxpbd/Cartpole-v0", num_envs=n)
  assert isinstance(venv, eg.GymnasiumVectorEnv) and isinstance(venv, gymnasium.vector.VectorEnv)
  obs, _ = venv.reset(seed=0)
  assert obs.shape == (n, 4) and venv.step(venv.action_space.sample())[1].shape == (n,)
