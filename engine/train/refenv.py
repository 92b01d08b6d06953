"""Reference continuous cart-pole vector env in numpy, with exactly the vector-env contract of docs/env.md.

It lets the trainer be developed and tested before (and independently of) the physics env: classic Barto/Gym
cart-pole equations, explicit Euler with dt = 0.02 s, force = 10 N * clip(action, -1, 1), terminated when
|theta| > 0.2 rad or |x| > 2.4 m, truncated at 500 steps, auto-reset inside step(). Observations are
[x, theta, xdot, thetadot] as in the spec (Gym orders them [x, xdot, theta, thetadot]).
"""
import numpy as np
from tinygrad import Tensor
from engine.spaces import Box

GRAVITY, MASS_CART, MASS_POLE, HALF_LENGTH, FORCE_MAG, DT = 9.8, 1.0, 0.1, 0.5, 10.0, 0.02
THETA_LIMIT, X_LIMIT, MAX_EPISODE_STEPS = 0.2, 2.4, 500


class RefCartPole:
  """Batched cart-pole: N independent envs stepped together in numpy; obs/reward/flags returned as tinygrad Tensors."""
  def __init__(self, num_envs: int = 64, seed: int = 0):
    self.num_envs, self.max_episode_steps = num_envs, MAX_EPISODE_STEPS
    self.single_observation_space = Box(np.full(4, -np.inf, np.float32), np.full(4, np.inf, np.float32))
    self.single_action_space = Box(-np.ones(1, np.float32), np.ones(1, np.float32))
    self.observation_space = self.single_observation_space.batched(num_envs)
    self.action_space = self.single_action_space.batched(num_envs)
    self._rng = np.random.default_rng(seed)
    self._state = np.zeros((num_envs, 4), np.float64)  # [x, theta, xdot, thetadot]
    self._length = np.zeros(num_envs, np.int64)
    self._return = np.zeros(num_envs, np.float64)

  def _initial_state(self, n: int) -> np.ndarray:
    # Gym's start distribution: every coordinate uniform in [-0.05, 0.05]
    return self._rng.uniform(-0.05, 0.05, size=(n, 4))

  def reset(self, seed: int | None = None):
    """-> (obs (N, 4) Tensor float32, info {})."""
    if seed is not None: self._rng = np.random.default_rng(seed)
    self._state = self._initial_state(self.num_envs)
    self._length[:], self._return[:] = 0, 0.0
    return Tensor(self._state.astype(np.float32)).realize(), {}

  def step(self, action):
    """action (N, 1) Tensor or array -> (obs (N, 4), reward (N,), terminated (N,), truncated (N,), info), see spec."""
    a = action.numpy() if isinstance(action, Tensor) else np.asarray(action)
    if a.shape != (self.num_envs, 1) or not np.issubdtype(a.dtype, np.floating):
      raise ValueError(f"action must be float with shape {(self.num_envs, 1)}, got {a.dtype} {a.shape}")
    force = FORCE_MAG * np.clip(a[:, 0].astype(np.float64), -1.0, 1.0)
    x, th, xd, thd = self._state.T
    # Barto, Sutton & Anderson (1983) / Gym CartPole-v1 dynamics
    sin, cos = np.sin(th), np.cos(th)
    total_mass, pole_ml = MASS_CART + MASS_POLE, MASS_POLE * HALF_LENGTH
    temp = (force + pole_ml * thd**2 * sin) / total_mass
    thacc = (GRAVITY * sin - cos * temp) / (HALF_LENGTH * (4.0 / 3.0 - MASS_POLE * cos**2 / total_mass))
    xacc = temp - pole_ml * thacc * cos / total_mass
    # explicit Euler, positions first with the old velocities (Gym's "euler" integrator)
    state = np.stack([x + DT * xd, th + DT * thd, xd + DT * xacc, thd + DT * thacc], axis=1)
    nonfinite = ~np.all(np.isfinite(state), axis=1)
    terminated = (np.abs(state[:, 1]) > THETA_LIMIT) | (np.abs(state[:, 0]) > X_LIMIT) | nonfinite
    # reward 1 on every step taken, the terminating one included (Gym), so episode return == episode length
    reward = np.ones(self.num_envs, np.float64)
    self._length += 1
    self._return += reward
    truncated = (self._length >= self.max_episode_steps) & ~terminated
    done = terminated | truncated
    final_obs = np.where(nonfinite[:, None], 0.0, state)
    ep_return, ep_length = np.where(done, self._return, 0.0), np.where(done, self._length, 0)
    # auto-reset: finished envs start their next episode within this same call
    state[done] = self._initial_state(int(done.sum()))
    self._length[done], self._return[done] = 0, 0.0
    self._state = state
    info = {"final_obs": Tensor(final_obs.astype(np.float32)), "episode_return": Tensor(ep_return.astype(np.float32)),
            "episode_length": Tensor(ep_length.astype(np.int32)), "done": Tensor(done), "nonfinite": Tensor(nonfinite)}
    out = (Tensor(state.astype(np.float32)), Tensor(reward.astype(np.float32)), Tensor(terminated), Tensor(truncated))
    Tensor.realize(*out, *info.values())  # realised like the real env's outputs, in one schedule
    return (*out, info)
