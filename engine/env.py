"""Vectorised envs: a functional core (EnvCore: reset(key) / step(state, action)) and a stateful batched front
(VecEnv, Gymnasium-like) with per-env auto-reset, episode statistics and NaN isolation. docs/env.md has a tour.

Everything per env is a where-mask over the batch: no Python loop over envs, and one TinyJit call per env-step.
"""
from __future__ import annotations
from dataclasses import dataclass, fields, replace
import numpy as np
from tinygrad import Tensor, dtypes
from engine import rng
from engine.env_render import GRID_ENVS, SIZE, EnvRenderer, check_size
from engine.kinematics import forward_kinematics, rest
from engine.scene import build_model, load_scene_dict
from engine.spaces import Box
from engine.buffers import copy_of, upload
from engine.stepping import DEFAULT_DEVICE, Stepper, check_ctrl, check_name, ctrl_array, jit
from engine.tasks import get_task, scene_of
from oracle.math3 import const

# domain randomisation: name -> the Model fields it scales (one factor per element, per env, drawn at reset)
RANDOMIZABLE = {"mass": ("body_inv_mass", "body_inv_inertia"), "friction": ("geom_friction",),
                "damping": ("jnt_damping",), "gear": ("act_gear",)}
# an env whose state leaves these bounds has blown up: |pos| [m], |quat|, |vel| [m/s], |angvel| [rad/s]
STATE_LIMITS = (1e4,) * 3 + (1.5,) * 4 + (1e3,) * 3 + (1e4,) * 3


@dataclass(frozen=True)
class EnvState:
  """Everything an env-step reads and writes, batch first (B = num_envs)."""
  packed: Tensor       # (B, nbody, 13) physics state (oracle/packed.py)
  task: Tensor         # (B, task_size) task data drawn at reset (e.g. the reacher's target)
  params: tuple        # domain-randomised Model fields, (B, ...) each, in EnvCore.param_names order
  key: Tensor          # (B,) uint32 per-env random stream (engine/rng.py)
  steps: Tensor        # (B,) int32 steps taken in the current episode
  ep_return: Tensor    # (B,) return of the current episode so far
  obs: Tensor          # (B, obs_size)
  reward: Tensor       # (B,) reward of the last step
  terminated: Tensor   # (B,) bool
  truncated: Tensor    # (B,) bool

  def flat(self) -> tuple[Tensor, ...]:
    return tuple(t for f in fields(self) for t in (getattr(self, f.name) if f.name == "params"
                                                   else (getattr(self, f.name),)))

  @staticmethod
  def unflat(ts, nparams: int) -> EnvState:
    ts = list(ts)
    return EnvState(ts[0], ts[1], tuple(ts[2:2 + nparams]), *ts[2 + nparams:])


class EnvCore:
  """The functional env: pure functions of EnvState, stepping physics through the front door (engine/stepping.py).

  task: a name from engine.tasks (a shipped task, or one added with engine.register_task). randomize: {"mass" |
  "friction" | "damping" | "gear": (lo, hi)} scale ranges, a factor per body / geom / joint / actuator drawn per env at
  every reset (mass scales inertia too; a damping of 0 stays 0). Gradients through whole env-steps come from the
  checkpointed per-substep VJPs of engine.grad, as engine/train/apg.py takes them (a lazy graph of a whole env-step is
  far too slow to schedule in tinygrad 0.14: > 600 s and 4.9 GB for one pendulum env-step); rewards and observations
  are plain tensor functions of the packed state, so their VJPs compose with those."""

  def __init__(self, task: str, num_envs: int, device: str | None = None, randomize: dict | None = None,
               dtype=dtypes.float32, backend: str = "oracle"):
    if not (isinstance(num_envs, int) and num_envs >= 1):
      raise ValueError(f"num_envs: expected a positive int, got {num_envs!r}")
    check_name(backend)
    cls = get_task(task)
    device = device or DEFAULT_DEVICE.get(backend)
    scene = load_scene_dict(scene_of(task))
    self.model = build_model(scene, dtype=dtype, device=device)
    self.camera = scene.get("camera")   # the scene's view for rendering (engine/env_render.py), or None
    self.stepper = Stepper(self.model, backend)
    self.task, self.task_name, self.num_envs, self.backend = cls(self.model), task, num_envs, backend
    self.device = self.model.body_inv_mass.device
    rest(self.model)  # read the rest pose now: resets run inside a JIT capture, which cannot read tensors
    self.randomize = _check_randomize(randomize)
    self.param_names = tuple(f for k in self.randomize for f in RANDOMIZABLE[k])
    lo, hi = self.model.act_ctrlrange.numpy().T if self.model.nact else (np.zeros(0), np.zeros(0))
    self.single_action_space = Box(lo.astype(np.float32), hi.astype(np.float32))
    inf = np.full(self.task.obs_size, np.inf, np.float32)
    self.single_observation_space = Box(-inf, inf)

  # --- pieces ---
  def _fresh(self, key: Tensor) -> tuple[Tensor, Tensor, tuple, Tensor]:
    """A new episode's physics state, task data and parameters for every env, and the next key."""
    u, key = rng.uniform(key, self.task.n_random + 1, self.model.body_pos0.dtype)
    q, qd, task = self.task.init(self.model, u[:, :self.task.n_random])
    B, ndrive = self.num_envs, q.shape[1] if q.ndim == 2 else -1
    if not (q.ndim == 2 and q.shape[0] == B and ndrive <= self.model.njoint):
      self._shape_error("init()'s qpos", q, f"({B}, k) with k <= njoint = {self.model.njoint}")
    self._expect("init()'s qvel", qd, tuple(q.shape))
    self._expect("init()'s task data", task, (B, self.task.task_size))
    qpos = q.pad(((0, 0), (0, self.model.njoint - ndrive))) if ndrive < self.model.njoint else q
    qvel = qd.pad(((0, 0), (0, self.model.njoint - ndrive))) if ndrive < self.model.njoint else qd
    packed = forward_kinematics(self.model, qpos, qvel)
    if task.shape[1] == 0: task = u[:, :1] * 0.0   # a (B, 1) placeholder: zero-size buffers do not go through a JIT
    params = []
    for k, (lo, hi) in self.randomize.items():
      for f in RANDOMIZABLE[k]:
        base = getattr(self.model, f)
        n = base.shape[0]
        s, key = rng.uniform(key, n, u.dtype)
        s = (s * (hi - lo) + lo).reshape(self.num_envs, n, *([1] * (base.ndim - 1)))
        params.append(base / s if f.startswith("body_inv") else base * s)
    return packed, task, tuple(params), key

  def model_for(self, state: EnvState):
    """The model with this state's randomised parameters (a batch axis on those fields)."""
    return self.model.replace(**dict(zip(self.param_names, state.params))) if state.params else self.model

  def _physics(self, state: EnvState, ctrl: Tensor) -> Tensor:
    return self.stepper.advance(state.packed, 1, ctrl, model=self.model_for(state))[0]

  def clip_action(self, action: Tensor) -> Tensor:
    """Actions are clipped to the action space (each actuator's ctrlrange): out-of-range commands saturate."""
    sp = self.single_action_space
    return action.maximum(const(sp.low.tolist(), action)).minimum(const(sp.high.tolist(), action))

  # --- the functional API ---
  def reset(self, key: int | Tensor) -> EnvState:
    """Start every env: key is a seed (int) or a (B,) uint32 key tensor."""
    key = rng.env_keys(key, self.num_envs, self.device) if isinstance(key, int) else key
    packed, task, params, key = self._fresh(key)
    zero = Tensor.zeros(self.num_envs, dtype=packed.dtype, device=self.device)
    state = EnvState(packed, task, params, key, zero.cast(dtypes.int32), zero, zero[:, None] * 0.0, zero,
                     zero != 0, zero != 0)
    model = self.model_for(state)
    obs = self.task.observe(model, packed, task)
    self._expect("observe()", obs, (self.num_envs, self.task.obs_size))
    return replace(state, obs=obs)

  def step(self, state: EnvState, action: Tensor, autoreset: bool = True) -> tuple[EnvState, dict]:
    """One env-step for every env. Returns the new state (obs, reward, terminated, truncated set) and info tensors:
    final_obs (the obs the step ended in, before any reset), episode_return / episode_length (of the episodes that
    ended here, 0 elsewhere), done, nonfinite (the state blew up: NaN, inf or beyond STATE_LIMITS, or its obs or
    reward is not finite; that env is terminated with reward 0 and final_obs 0). With autoreset, done envs start a
    new episode in the same call."""
    ctrl = self.clip_action(action)
    packed = self._physics(state, ctrl)
    model, task = self.model_for(state), self.task
    # x != x is the NaN test: tinygrad's abs(NaN) <= c gives True (measured), so the bound alone misses NaN
    nonfinite = ((packed != packed) | (packed.abs() > const(STATE_LIMITS, packed))).any(axis=(1, 2))
    obs, reward = task.observe(model, packed, state.task), task.reward(model, packed, state.task, ctrl)
    self._expect("reward()", reward, (self.num_envs,))
    ended = task.terminated(model, packed, state.task)
    self._expect("terminated()", ended, (self.num_envs,))
    if ended.dtype != dtypes.bool: raise ValueError(f"task {self.task_name!r}: terminated() must give bools")
    # a finite state can still give a non-finite observation or reward (a task's formula, or a float32 corner like
    # the atan that oracle.math3.atan2 now avoids): flag it the same way rather than hand NaN to a learner
    nonfinite = nonfinite | (obs != obs).any(axis=1) | (obs.abs() == float("inf")).any(axis=1) | (reward != reward) | \
      (reward.abs() == float("inf"))
    ok = ~nonfinite
    obs, reward = ok.reshape(-1, 1).where(obs, 0.0), ok.where(reward, 0.0)
    steps = state.steps + 1
    terminated = ended | nonfinite
    truncated = (steps >= task.max_episode_steps) & ~terminated
    done = terminated | truncated
    ep_return = state.ep_return + reward
    info = {"final_obs": obs, "episode_return": done.where(ep_return, 0.0), "done": done,
            "episode_length": done.where(steps, 0), "nonfinite": nonfinite}
    new = EnvState(ok.reshape(-1, 1, 1).where(packed, 0.0), state.task, state.params, state.key, steps, ep_return,
                   obs, reward, terminated, truncated)
    return (self._autoreset(new, done) if autoreset else new), info

  # a task's outputs must have the protocol's shapes (engine.tasks); shapes are known before anything runs, so a task
  # from user code fails here with its name rather than deep inside the JIT
  def _expect(self, what: str, t: Tensor, shape: tuple) -> None:
    if tuple(t.shape) != shape: self._shape_error(what, t, str(shape))

  def _shape_error(self, what: str, t: Tensor, want: str):
    raise ValueError(f"task {self.task_name!r}: {what} has shape {tuple(t.shape)}, expected {want}")

  def _autoreset(self, state: EnvState, done: Tensor) -> EnvState:
    """Envs where done start over (fresh state, task data and parameters); the others are untouched."""
    packed, task, params, key = self._fresh(state.key)
    d1, d2, d3 = done.reshape(-1, 1), done.reshape(-1, 1, 1), done.reshape(-1, 1, 1, 1)
    def pick(new, old): return {1: done, 2: d1, 3: d2, 4: d3}[old.ndim].where(new, old)
    packed, task = pick(packed, state.packed), pick(task, state.task) if task.shape[1] else state.task
    params = tuple(pick(n, o) for n, o in zip(params, state.params))
    fresh_obs = self.task.observe(self.model_for(replace(state, params=params)), packed, task)
    return replace(state, packed=packed, task=task, params=params, key=key, obs=pick(fresh_obs, state.obs),
                   steps=done.where(0, state.steps), ep_return=done.where(0.0, state.ep_return))


class VecEnv:
  """A batch of envs with Gymnasium-like reset/step/render/close on tinygrad Tensors (engine.gym wraps it for
  Gymnasium).

  Actions: (num_envs, act_dim) Tensor or numpy array; values outside action_space are clipped (they saturate the
  actuators), a wrong shape or a non-float dtype raises ValueError. Every env auto-resets in the step that ends its
  episode: the obs returned for it is the new episode's first, its last is info["final_obs"] (Gymnasium's SAME_STEP
  autoreset mode).

  One TinyJit call per step. The env state lives in persistent buffers the JIT updates in place (assign), and what
  step() returns is one packed copy, so returned tensors stay valid after later steps (measured on cartpole x64:
  cloning each of the 14 state tensors per step cost 8.7 ms against 4.6 ms for the step itself). That copy and a
  numpy action's upload into the JIT's input buffer are buffer copies (engine/buffers.py), not scheduled kernels:
  pendulum_swingup x256 on the WGSL kernel (lavapipe), 10.0 ms an env-step with both scheduled.

  render() draws the envs with engine/render.py (numpy ray casting on the host), render_size (width, height) [px] per
  env; metadata["render_fps"] is the env-step rate 1 / dt, so frames taken once per step play in real time."""

  render_mode = "rgb_array"   # the one kind of frame render() gives

  def __init__(self, core: EnvCore, seed: int | None = None, render_size: tuple[int, int] = SIZE):
    self.core, self.num_envs = core, core.num_envs
    self.single_observation_space, self.single_action_space = core.single_observation_space, core.single_action_space
    self.observation_space = self.single_observation_space.batched(self.num_envs)
    self.action_space = self.single_action_space.batched(self.num_envs)
    self.max_episode_steps = core.task.max_episode_steps
    self.render_size, self._renderer = check_size(render_size), None
    fps = 1.0 / core.model.dt
    self.metadata = {"render_modes": ["rgb_array"], "render_fps": round(fps) if abs(fps - round(fps)) < 1e-6 else fps}
    self._seed, self._bufs, self._final, self._action, self.closed = seed, None, None, None, False
    self._jit, self._reset_jit = jit(self._run), jit(self._reset_run)

  @property
  def state(self) -> EnvState | None:
    """The current EnvState (views of the persistent buffers: clone what you keep across steps)."""
    return None if self._bufs is None else EnvState.unflat(self._bufs, len(self.core.param_names))

  def _run(self, action: Tensor) -> Tensor:
    # the step, then the auto-reset, so that the state each env ended in is kept for render(final=True)
    state, info = self.core.step(self.state, action, autoreset=False)
    final = state.packed.contiguous()
    state = self.core._autoreset(state, info["done"])
    # realise every new value and the packed output first, then copy the new values into the state buffers (an
    # assign in the same graph as a read of the old value is a cycle for tinygrad's scheduler)
    f = state.obs.dtype
    cols = [state.obs, state.reward[:, None], state.terminated[:, None].cast(f), state.truncated[:, None].cast(f),
            info["final_obs"], info["episode_return"][:, None], info["episode_length"][:, None].cast(f),
            info["nonfinite"][:, None].cast(f)]
    new = [t.contiguous() for t in state.flat()]
    out = Tensor.cat(*cols, dim=1).contiguous()
    Tensor.realize(*new, final, out)
    Tensor.realize(*(buf.assign(t) for buf, t in zip(self._bufs, new)), self._final.assign(final))
    return out

  def reset(self, seed: int | None = None) -> tuple[Tensor, dict]:
    """Reset every env. seed: int for a reproducible stream (same seed -> same trajectories); None carries on each
    env's stream from where it is, so one seeded reset fixes every later episode (Gymnasium's rule: reset(seed=s)
    then reset() twice gives the same obs twice); the first reset takes the construction seed (or a random one)."""
    self._check_open()
    if seed is None and self._bufs is not None: key = self.state.key.clone()   # a copy: the reset overwrites it
    else:
      if seed is None: seed = self._seed if self._seed is not None else np.random.SeedSequence().entropy % (1 << 32)
      key = rng.env_keys(int(seed), self.num_envs, self.core.device)
    self._seed, key = None, key.contiguous().realize()
    if self._bufs is None:
      # the first reset makes the persistent buffers (own ones: fields of a fresh state may share one, the zeros of
      # reward and ep_return); later resets replay one JIT that fills them (an eager reset schedules every kernel
      # again: 0.5 s for cartpole, 3 s for ant)
      self._bufs = [t.clone().realize() for t in self.core.reset(key).flat()]
      self._final = self._bufs[0].clone().realize()
    else: self._reset_jit(key)
    return self.state.obs.clone().realize(), {}

  def _reset_run(self, key: Tensor) -> None:
    new = [t.contiguous() for t in self.core.reset(key).flat()]
    Tensor.realize(*new)
    Tensor.realize(*(buf.assign(t) for buf, t in zip(self._bufs, new)), self._final.assign(new[0]))

  def step(self, action) -> tuple[Tensor, Tensor, Tensor, Tensor, dict]:
    """-> obs (N, obs_dim), reward (N,), terminated (N,) bool, truncated (N,) bool, info with final_obs (N, obs_dim),
    episode_return (N,) and episode_length (N,) int32 of the episodes that ended here (0 elsewhere), done (N,) and
    nonfinite (N,) bool (the env blew up and was reset)."""
    self._check_open()
    if self._bufs is None: raise RuntimeError("step() before reset(): call env.reset() first")
    out = copy_of(self._jit(self._check_action(action)))
    o = self.single_observation_space.shape[0]
    terminated, truncated = out[:, o + 1] > 0.5, out[:, o + 2] > 0.5
    info = {"final_obs": out[:, o + 3:2 * o + 3], "episode_return": out[:, 2 * o + 3],
            "episode_length": out[:, 2 * o + 4].cast(dtypes.int32), "done": terminated | truncated,
            "nonfinite": out[:, 2 * o + 5] > 0.5}
    return out[:, :o], out[:, o], terminated, truncated, info

  def _check_action(self, action) -> Tensor:
    """The action as the step JIT's input, or a clear error: a Tensor as given (realised), a numpy array or lists
    copied into the env's own input buffer."""
    core = self.core
    if self.single_action_space.shape[0] == 0: raise ValueError("action: this task has no actuators")
    if isinstance(action, Tensor):
      return check_ctrl(core.model, self.num_envs, action, core.device, name="action").contiguous().realize()
    arr = ctrl_array(core.model, self.num_envs, action, name="action")
    if self._action is None:
      self._action = Tensor.zeros(*arr.shape, dtype=core.model.body_pos0.dtype, device=core.device).contiguous()
      self._action.realize()
    return upload(arr, self._action)

  def render(self, envs=None, final: bool = False, tiled: bool = True):
    """RGB frames (uint8 numpy) of envs' states, from the task scene's camera (engine/env_render.py).

    envs: indices (default: the first min(num_envs, 4)). tiled: one image with their views in a near-square grid
    (each render_size), else a list with one (height, width, 3) frame per env. final: the states the last step ended
    in, before any auto-reset (what info["final_obs"] observes), rather than the current ones. ~30 ms per view at
    320 x 240 on one core."""
    self._check_open()
    if self._bufs is None: raise RuntimeError("render() before reset(): call env.reset() first")
    idx = list(range(min(self.num_envs, GRID_ENVS))) if envs is None else [int(i) for i in envs]
    if not idx or not all(0 <= i < self.num_envs for i in idx):
      raise ValueError(f"render: envs must be indices in [0, {self.num_envs}), at least one, got {envs!r}")
    if self._renderer is None: self._renderer = EnvRenderer(self.core.model, self.core.camera, self.render_size)
    packed = (self._final if final else self._bufs[0]).numpy()[idx]
    pos, quat = packed[..., 0:3], packed[..., 3:7]
    return self._renderer.grid(pos, quat) if tiled else self._renderer.views(pos, quat)

  def close(self) -> None:
    """Drop the env's buffers and compiled step; reset/step/render raise afterwards. Closing twice is fine."""
    self._bufs = self._final = self._jit = self._reset_jit = self._renderer = self._action = None
    self.closed = True

  def _check_open(self) -> None:
    if self.closed: raise RuntimeError("this env is closed")


INFO_KEYS = ("final_obs", "episode_return", "episode_length", "done", "nonfinite")


def make_env(task: str, num_envs: int = 1, backend: str = "oracle", device: str | None = None,
             seed: int | None = None, randomize: dict | None = None, render_size: tuple[int, int] = SIZE,
             **task_kwargs) -> VecEnv:
  """A VecEnv of `num_envs` copies of a task (engine.tasks: cartpole, pendulum_swingup, reacher, ..., or one added
  with engine.register_task). render_size: (width, height) [px] of one env's view in render()."""
  check_name(backend)
  if task_kwargs: raise TypeError(f"make_env: unknown task options {sorted(task_kwargs)}")
  check_size(render_size)   # before the env is built
  return VecEnv(EnvCore(task, num_envs, device=device, randomize=randomize, backend=backend), seed=seed,
                render_size=render_size)


def _check_randomize(randomize) -> dict:
  if randomize is None: return {}
  if not isinstance(randomize, dict): raise ValueError(f"randomize: expected a dict, got {type(randomize).__name__}")
  out = {}
  for k, v in randomize.items():
    if k not in RANDOMIZABLE: raise ValueError(f"randomize.{k}: unknown; expected some of {list(RANDOMIZABLE)}")
    if not (isinstance(v, (tuple, list)) and len(v) == 2 and all(isinstance(x, (int, float)) for x in v)
            and 0 < v[0] <= v[1]):
      raise ValueError(f"randomize.{k}: expected a scale range (lo, hi) with 0 < lo <= hi, got {v!r}")
    out[k] = (float(v[0]), float(v[1]))
  return out
