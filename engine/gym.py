"""Gymnasium adapter: numpy views of a tinyxpbd vector env (contract: docs/env.md).

- `make_gymnasium(task, **kw)` / `GymnasiumEnv(env)`: one env (num_envs=1) as a standard `gymnasium.Env`. The engine
  auto-resets inside step; this view hides that, returning the episode's last obs on terminated/truncated and
  expecting the caller to reset(), as every Gymnasium env does.
- `make_gymnasium_vector(task, num_envs, **kw)` / `GymnasiumVectorEnv(env)`: the batch as a `gymnasium.vector.VectorEnv`
  with `AutoresetMode.SAME_STEP`, the mode the engine implements, laid out exactly as gymnasium's SyncVectorEnv does.

gymnasium is an optional extra (`pip install 'tinyxpbd[gym]'`), so it is imported on first use, never when this module
is imported: the two classes are assembled then from the plain mixins below and gymnasium's base classes, and are
reached as `engine.gym.GymnasiumEnv` / `engine.gym.GymnasiumVectorEnv` through the module `__getattr__`.

Every output is host numpy: `Tensor.numpy()` copies device -> host (tinygrad never hands out zero-copy views by
default, so on the CPU device too it is a fresh copy of a small array) and the caller owns what it gets.
"""
from __future__ import annotations
import functools
import numpy as np

_INSTALL_HINT = "engine.gym needs gymnasium: pip install 'tinyxpbd[gym]' (or pip install gymnasium==1.4.0)"
# the engine's end-of-episode info, passed on for the envs that finished this step (final_obs and done have their own
# places: the returned obs / final_obs, and terminated | truncated)
_FINAL_INFO_KEYS = ("episode_return", "episode_length", "nonfinite")


def _gymnasium():
  try:
    import gymnasium
  except ImportError as e:
    raise ImportError(_INSTALL_HINT) from e
  return gymnasium


def _box(gym, space):
  """engine.spaces.Box -> gymnasium.spaces.Box, float32 (the engine's bounds and shape)."""
  shape = tuple(space.shape)
  low = np.broadcast_to(np.asarray(space.low, np.float32), shape)
  high = np.broadcast_to(np.asarray(space.high, np.float32), shape)
  return gym.spaces.Box(low=low, high=high, shape=shape, dtype=np.float32)


def _action(action, shape: tuple[int, ...]) -> np.ndarray:
  """Any array-like -> float32 numpy of exactly `shape` (policies often hand float64; the engine wants float32)."""
  a = np.asarray(action, dtype=np.float32)
  if a.shape != shape: raise ValueError(f"action has shape {a.shape}, expected {shape}")
  return a


def _check_options(options) -> None:
  # the engine resets the whole batch from a seed and nothing else; silently dropping e.g. gymnasium's "reset_mask"
  # would be a wrong partial reset, so refuse any option
  if options: raise ValueError(f"tinyxpbd envs take no reset options, got {sorted(options)}")


class _EnvView:
  """One engine env (num_envs=1) with standard Gymnasium semantics.

  observation_space: Box (obs_dim,) float32; action_space: Box (act_dim,) float32 in [-1, 1] (the engine clips).
  reset(seed=None, options=None) -> (obs (obs_dim,) float32, {}).
  step(action (act_dim,)) -> (obs (obs_dim,) float32, reward float, terminated bool, truncated bool, info): when the
  episode ends obs is its final obs and info holds episode_return (float), episode_length (int), nonfinite (bool);
  call reset() next. The underlying engine env is `engine_env`.
  """

  def __init__(self, env, render_mode: str | None = None):
    gym = _gymnasium()
    if env.num_envs != 1: raise ValueError(f"GymnasiumEnv wraps a single env (num_envs=1), got num_envs={env.num_envs}")
    if render_mode is not None: raise ValueError(f"render_mode={render_mode!r} is not supported (only None)")
    self.engine_env = env
    self.observation_space = _box(gym, env.single_observation_space)
    self.action_space = _box(gym, env.single_action_space)
    self.metadata = {"render_modes": []}
    self.render_mode = None
    self._started, self._ended = False, False

  def reset(self, *, seed: int | None = None, options: dict | None = None):
    super().reset(seed=seed)  # seeds self.np_random, which Gymnasium tooling (check_env) expects
    _check_options(options)
    # seed=None continues the engine's own random stream, so one seeded reset fixes every episode after it
    obs, _ = self.engine_env.reset(seed=seed)
    self._started, self._ended = True, False
    return obs.numpy()[0], {}

  def step(self, action):
    gym = _gymnasium()
    if not self._started: raise gym.error.ResetNeeded("call reset() before step()")
    if self._ended:
      gym.logger.warn("step() after terminated/truncated without reset(): continuing the episode the engine began")
    obs, reward, terminated, truncated, info = self.engine_env.step(_action(action, self.action_space.shape)[None])
    term, trunc = bool(terminated.numpy()[0]), bool(truncated.numpy()[0])
    self._ended = term or trunc
    if not self._ended: return obs.numpy()[0], float(reward.numpy()[0]), term, trunc, {}
    # the engine already started a new episode in this call and returned its first obs; a Gymnasium user expects the
    # finished episode's last obs here, and gets the new episode from their own reset()
    end = {k: info[k].numpy()[0].item() for k in _FINAL_INFO_KEYS}
    return info["final_obs"].numpy()[0], float(reward.numpy()[0]), term, trunc, end

  def close(self):
    if hasattr(self.engine_env, "close"): self.engine_env.close()


class _VectorView:
  """The engine's batch as a gymnasium 1.x VectorEnv, numpy in and out, metadata["autoreset_mode"] = SAME_STEP.

  reset(seed: int | None, options=None) -> (obs (N, obs_dim) float32, {}); one int seeds the whole batch.
  step(actions (N, act_dim)) -> (obs (N, obs_dim) float32, reward (N,) float32, terminated (N,) bool,
  truncated (N,) bool, infos). A finished env is already reset in obs (its new episode's first obs); when any env
  finished, infos holds, as gymnasium's SyncVectorEnv lays it out for SAME_STEP:
    final_obs: (N,) object array, the finished episode's last obs (obs_dim,) where done, None elsewhere
    final_info: {episode_return (N,) float32, episode_length (N,) int32, nonfinite (N,) bool, each with its
                 "_<key>" mask}
    _final_obs, _final_info: (N,) bool masks = terminated | truncated
  and is {} otherwise.
  """

  def __init__(self, env):
    gym = _gymnasium()
    from gymnasium.vector.utils import batch_space
    self.engine_env = env
    self.num_envs = env.num_envs
    self.single_observation_space = _box(gym, env.single_observation_space)
    self.single_action_space = _box(gym, env.single_action_space)
    self.observation_space = batch_space(self.single_observation_space, self.num_envs)
    self.action_space = batch_space(self.single_action_space, self.num_envs)
    self.metadata = {"render_modes": [], "autoreset_mode": gym.vector.AutoresetMode.SAME_STEP}
    self.render_mode = None

  def reset(self, *, seed: int | None = None, options: dict | None = None):
    # SyncVectorEnv also takes a list of per-env seeds; the engine draws the batch from one generator, so refuse it
    if seed is not None and not isinstance(seed, (int, np.integer)):
      raise ValueError(f"seed must be one int for the whole batch (or None), got {type(seed).__name__}")
    seed = None if seed is None else int(seed)
    super().reset(seed=seed)
    _check_options(options)
    obs, _ = self.engine_env.reset(seed=seed)
    return obs.numpy(), {}

  def step(self, actions):
    obs, reward, terminated, truncated, info = self.engine_env.step(_action(actions, self.action_space.shape))
    term, trunc = terminated.numpy().astype(bool, copy=False), truncated.numpy().astype(bool, copy=False)
    done = term | trunc
    # final_obs and the episode stats cost a device -> host copy each; fetch them only on steps that need them
    infos = _final_infos(info, done) if done.any() else {}
    return obs.numpy(), reward.numpy(), term, trunc, infos

  def close_extras(self, **kwargs):
    if hasattr(self.engine_env, "close"): self.engine_env.close()


def _final_infos(info: dict, done: np.ndarray) -> dict:
  """The engine's step info -> gymnasium's SAME_STEP infos (see _VectorView), done: (N,) bool."""
  final_rows = info["final_obs"].numpy()
  # an object array with a row per finished env, as SyncVectorEnv builds it, so wrappers can replace entries one by one
  final_obs = np.full(done.shape[0], None, dtype=object)
  for i in np.flatnonzero(done): final_obs[i] = final_rows[i]
  final_info = {}
  for k in _FINAL_INFO_KEYS: final_info[k], final_info[f"_{k}"] = info[k].numpy(), done.copy()
  return {"final_obs": final_obs, "_final_obs": done.copy(), "final_info": final_info, "_final_info": done.copy()}


@functools.cache
def _classes() -> dict[str, type]:
  # the mixin comes first in the MRO, so its reset/step override gymnasium's and its super().reset reaches theirs
  gym = _gymnasium()
  return {
    "GymnasiumEnv": type("GymnasiumEnv", (_EnvView, gym.Env), {"__module__": __name__, "__doc__": _EnvView.__doc__}),
    "GymnasiumVectorEnv": type("GymnasiumVectorEnv", (_VectorView, gym.vector.VectorEnv),
                               {"__module__": __name__, "__doc__": _VectorView.__doc__}),
  }


def __getattr__(name):
  if name in ("GymnasiumEnv", "GymnasiumVectorEnv"):
    _gymnasium()  # a clear install hint even once the classes are cached
    return _classes()[name]
  raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def env_id(task: str) -> str:
  """Gymnasium's id of a task: cartpole -> tinyxpbd/Cartpole-v0, pendulum_swingup -> tinyxpbd/PendulumSwingup-v0."""
  return "tinyxpbd/" + "".join(part.capitalize() for part in task.split("_")) + "-v0"


def register_envs() -> None:
  """Register every task (engine.tasks) with Gymnasium under env_id(task): gymnasium.make gives the one-env view,
  gymnasium.make_vec(id, num_envs=N) the engine's own batched env (GymnasiumVectorEnv), not N copies. `import engine`
  calls this when gymnasium is installed. The engine's envs end their episodes themselves (each task's
  max_episode_steps), so no TimeLimit is added."""
  gym = _gymnasium()
  from engine.tasks import task_names
  for task in task_names():
    if env_id(task) in gym.registry: continue
    gym.register(env_id(task), entry_point=functools.partial(make_gymnasium, task),
                 vector_entry_point=functools.partial(make_gymnasium_vector, task))


def make_gymnasium(task: str, render_mode: str | None = None, **kw):
  """A single-env `gymnasium.Env` for `task`: engine.make_env(task, num_envs=1, **kw) wrapped in GymnasiumEnv."""
  import engine
  cls = __getattr__("GymnasiumEnv")  # before building the env: fail on a missing gymnasium without paying for it
  return cls(engine.make_env(task, num_envs=1, **kw), render_mode=render_mode)


def make_gymnasium_vector(task: str, num_envs: int, **kw):
  """A `gymnasium.vector.VectorEnv` of `num_envs` envs: engine.make_env(task, num_envs=num_envs, **kw) wrapped."""
  import engine
  cls = __getattr__("GymnasiumVectorEnv")
  return cls(engine.make_env(task, num_envs=num_envs, **kw))
