"""Gymnasium adapter: numpy views of a tinyxpbd vector env (contract: docs/env.md).

- `make_gymnasium(task, **kw)` / `GymnasiumEnv(env)`: one env (num_envs=1) as a standard `gymnasium.Env`. The engine
  auto-resets inside step; this view hides that, returning the episode's last obs on terminated/truncated and
  expecting the caller to reset(), as every Gymnasium env does.
- `make_gymnasium_vector(task, num_envs, **kw)` / `GymnasiumVectorEnv(env)`: the batch as a `gymnasium.vector.VectorEnv`
  with `AutoresetMode.SAME_STEP`, the mode the engine implements, laid out exactly as gymnasium's SyncVectorEnv does.
- render_mode None or "rgb_array" (the engine's renderer, engine/env_render.py): the single view's render() is its env's
  frame, the vector view's a tuple of one frame per env, as gymnasium's vector envs and wrappers expect (the engine
  env's own render() tiles several envs into one image).

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


def _render_mode(env, render_mode) -> tuple[str | None, dict]:
  """The view's render_mode and its metadata's render entries (from the engine env's metadata)."""
  if render_mode not in (None, "rgb_array"):
    raise ValueError(f"render_mode: expected None or 'rgb_array', got {render_mode!r}")
  meta = getattr(env, "metadata", {})
  if "rgb_array" not in meta.get("render_modes", ()):
    if render_mode is not None: raise ValueError(f"render_mode={render_mode!r}: this env cannot render")
    return None, {"render_modes": []}
  return render_mode, {"render_modes": ["rgb_array"], "render_fps": meta["render_fps"]}


def _no_render_mode(gym) -> None:
  # what gymnasium's own envs do when render() is called on an env made without a render_mode
  gym.logger.warn("render() without a render_mode: make the env with render_mode='rgb_array'")


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
  call reset() next. render() with render_mode "rgb_array": (height, width, 3) uint8, the state the last obs shows
  (at an episode's end its final state, not the engine's next episode). The underlying engine env is `engine_env`.
  """

  def __init__(self, env, render_mode: str | None = None):
    gym = _gymnasium()
    if env.num_envs != 1: raise ValueError(f"GymnasiumEnv wraps a single env (num_envs=1), got num_envs={env.num_envs}")
    self.engine_env = env
    self.observation_space = _box(gym, env.single_observation_space)
    self.action_space = _box(gym, env.single_action_space)
    self.render_mode, self.metadata = _render_mode(env, render_mode)
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

  def render(self):
    if self.render_mode is None: return _no_render_mode(_gymnasium())
    # after terminated / truncated the engine holds its next episode already; the frame shows the one that ended
    return self.engine_env.render(envs=[0], final=self._ended, tiled=False)[0]

  def close(self):
    if hasattr(self.engine_env, "close"): self.engine_env.close()


class _VectorView:
  """The engine's batch as a gymnasium 1.x VectorEnv, numpy in and out, metadata["autoreset_mode"] = SAME_STEP.

  reset(seed: int | None, options=None) -> (obs (N, obs_dim) float32, {}); one int seeds the whole batch.
  step(actions (N, act_dim)) -> (obs (N, obs_dim) float32, reward (N,) float32, terminated (N,) bool,
  truncated (N,) bool, infos). A finished env is already reset in obs (its new episode's first obs); when any env
  finished, infos holds, as gymnasium's SyncVectorEnv lays it out for SAME_STEP:
    final_obs: (N,) object array, the finished episode's last obs (obs_dim,) where done, None elsewhere
    final_info: {episode_return (N,) float64, episode_length (N,) int64, nonfinite (N,) bool, each with its
                 "_<key>" mask; 0 / False where not done}
    _final_obs, _final_info: (N,) bool masks = terminated | truncated
  and is {} otherwise. render() with render_mode "rgb_array": a tuple of N (height, width, 3) uint8 frames of the
  current states (a finished env shows its next episode's start, as under SyncVectorEnv's SAME_STEP), the layout
  gymnasium.wrappers.vector.RecordVideo / HumanRendering tile; ~30 ms per env at 320 x 240.
  """

  def __init__(self, env, render_mode: str | None = None):
    gym = _gymnasium()
    from gymnasium.vector.utils import batch_space
    self.engine_env = env
    self.num_envs = env.num_envs
    self.single_observation_space = _box(gym, env.single_observation_space)
    self.single_action_space = _box(gym, env.single_action_space)
    self.observation_space = batch_space(self.single_observation_space, self.num_envs)
    self.action_space = batch_space(self.single_action_space, self.num_envs)
    self.render_mode, self.metadata = _render_mode(env, render_mode)
    self.metadata["autoreset_mode"] = gym.vector.AutoresetMode.SAME_STEP

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

  def render(self):
    if self.render_mode is None: return _no_render_mode(_gymnasium())
    return tuple(self.engine_env.render(envs=range(self.num_envs), tiled=False))

  def close_extras(self, **kwargs):
    if hasattr(self.engine_env, "close"): self.engine_env.close()


def _final_infos(info: dict, done: np.ndarray) -> dict:
  """The engine's step info -> gymnasium's SAME_STEP infos (see _VectorView), done: (N,) bool."""
  final_rows = info["final_obs"].numpy()
  # an object array with a row per finished env, as SyncVectorEnv builds it, so wrappers can replace entries one by one
  final_obs = np.full(done.shape[0], None, dtype=object)
  for i in np.flatnonzero(done): final_obs[i] = final_rows[i]
  # SyncVectorEnv batches the single view's Python float / int / bool into float64 / int64 / bool arrays
  final_info = {}
  for k, dtype in zip(_FINAL_INFO_KEYS, (np.float64, np.int64, np.bool_)):
    final_info[k], final_info[f"_{k}"] = info[k].numpy().astype(dtype), done.copy()
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
  """Register every task (engine.tasks) with Gymnasium under env_id(task) that is not registered yet. `import engine`
  calls this when gymnasium is installed."""
  gym = _gymnasium()
  from engine.tasks import task_names
  for task in task_names():
    if env_id(task) not in gym.registry: register_env(task)


def register_env(task: str) -> str:
  """Register one task with Gymnasium as env_id(task) and return the id: gymnasium.make gives the one-env view,
  gymnasium.make_vec(id, num_envs=N) the engine's own batched env (GymnasiumVectorEnv), not N copies; both take
  render_mode and make_env's keywords. The engine's envs end their episodes themselves (each task's
  max_episode_steps), so no TimeLimit is added. ValueError if the id is taken."""
  gym = _gymnasium()
  eid = env_id(task)
  if eid in gym.registry: raise ValueError(f"Gymnasium already has an env {eid!r}")
  single = functools.partial(make_gymnasium, task)
  # gymnasium.make reads the entry point's render modes to add its HumanRendering / RenderCollection wrappers for
  # render_mode "human" / "rgb_array_list"
  single.metadata = {"render_modes": ["rgb_array"]}
  gym.register(eid, entry_point=single, vector_entry_point=functools.partial(make_gymnasium_vector, task))
  return eid


def unregister_env(task: str) -> None:
  """Remove env_id(task) from Gymnasium's registry (engine.unregister_task)."""
  _gymnasium().registry.pop(env_id(task), None)


def make_gymnasium(task: str, render_mode: str | None = None, **kw):
  """A single-env `gymnasium.Env` for `task`: engine.make_env(task, num_envs=1, **kw) wrapped in GymnasiumEnv."""
  import engine
  cls = __getattr__("GymnasiumEnv")  # before building the env: fail on a missing gymnasium without paying for it
  return cls(engine.make_env(task, num_envs=1, **kw), render_mode=render_mode)


def make_gymnasium_vector(task: str, num_envs: int, render_mode: str | None = None, autoreset_mode=None, **kw):
  """A `gymnasium.vector.VectorEnv` of `num_envs` envs: engine.make_env(task, num_envs=num_envs, **kw) wrapped.
  autoreset_mode: None or SAME_STEP (the engine resets a finished env within the step; the others are refused)."""
  import engine
  cls = __getattr__("GymnasiumVectorEnv")
  same = _gymnasium().vector.AutoresetMode.SAME_STEP
  if autoreset_mode not in (None, same, same.value):
    raise ValueError(f"autoreset_mode: tinyxpbd envs reset a finished env within its step ({same}), got "
                     f"{autoreset_mode!r}")
  return cls(engine.make_env(task, num_envs=num_envs, **kw), render_mode=render_mode)
