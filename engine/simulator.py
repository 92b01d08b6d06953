"""The simulator: batching, reset, and stepping and rollouts through the front door (engine/stepping.py)."""
from __future__ import annotations
import math
import numbers
import numpy as np
from tinygrad import Tensor
from engine.buffers import copy_of, packed_of, remember_packed
from engine.kinematics import start_pose
from engine.stepping import TIER_UP, Stepper, check_ctrl, check_ctrls, check_state, is_sequence
from oracle.packed import ANGVEL, POS, QUAT, VEL, nmuscle, pack_state, unpack_state
from oracle.types import Model, State


class Simulator:
  """Steps `batch` copies of a scene.

  model: from engine.load_scene. backend: "oracle" (pure tinygrad, any device) or "wgsl" (the WGSL step kernel on
  the WEBGPU device: load the model with device="WEBGPU"; float32, no autograd). engine/stepping.py, docs/wgsl.md.
  device: tinygrad device of the model's tensors (default: where the model lives).
  steps_per_call: env-steps fused into one TinyJit call; amortises ~1 ms of Python per call at small batch, but the
    first call's compile time grows with it (tinygrad schedules every substep), so keep it 1 unless steps are many.
  tier_up: env-steps the oracle runs on its substep tier (quick to start) before capturing whole steps (quick to run):
    engine/stepping.py, Stepper.run. 0 captures whole steps from the start (what a benchmark times).
  differentiable: when True, step() builds a lazy graph (no JIT) so Tensor.gradient flows to the input state and the
  model's parameters; use it for a few steps. For long horizons use engine.grad.rollout_grad (checkpointed reverse
  mode, one jitted vector-Jacobian product per substep).
  """

  def __init__(self, model: Model, batch: int = 1, backend: str = "oracle", device: str | None = None,
               steps_per_call: int = 1, differentiable: bool = False, tier_up: int = TIER_UP):
    if not (isinstance(batch, int) and batch >= 1): raise ValueError(f"batch: expected a positive int, got {batch!r}")
    if not (isinstance(steps_per_call, int) and steps_per_call >= 1):
      raise ValueError(f"steps_per_call: expected a positive int, got {steps_per_call!r}")
    self.model, self.batch, self.backend = model, batch, backend
    self.device = device or model.body_inv_mass.device
    if self.device != model.body_inv_mass.device:
      raise ValueError(f"device: the model lives on {model.body_inv_mass.device}, not {self.device}; "
                       f"load it with engine.load_scene(..., device={self.device!r})")
    self.steps_per_call, self.differentiable = steps_per_call, differentiable
    if not (isinstance(tier_up, int) and tier_up >= 0):
      raise ValueError(f"tier_up: expected an int >= 0, got {tier_up!r}")
    self.stepper = Stepper(model, backend, differentiable, tier_up)

  # --- state ---
  def reset(self, seed: int | None = None, noise: float = 0.0) -> State:
    """The scene's initial state for every env (its reference pose, but a limited joint whose range excludes the
    reference starts at its nearest bound: engine/kinematics.start_pose). noise > 0 adds N(0, noise^2) to every
    body's linear [m/s] and angular [rad/s] velocity, seeded, so envs differ without breaking joints (the constraints
    project positions)."""
    if not (seed is None or (isinstance(seed, numbers.Integral) and not isinstance(seed, bool) and seed >= 0)):
      raise ValueError(f"seed: expected None or an int >= 0, got {seed!r}")
    if not (isinstance(noise, numbers.Real) and not isinstance(noise, bool) and math.isfinite(noise) and noise >= 0):
      raise ValueError(f"noise: expected a finite number >= 0 (the velocity kick's standard deviation), got {noise!r}")
    m, B = self.model, self.batch
    def rep(t): return t.reshape(1, *t.shape).expand(B, *t.shape)
    vel, angvel = rep(m.body_vel0), rep(m.body_angvel0)
    if noise > 0:
      rng = np.random.default_rng(seed)
      kick = rng.normal(0.0, noise, size=(2, B, m.nbody, 3))
      vel = vel + Tensor(kick[0], dtype=vel.dtype, device=self.device)
      angvel = angvel + Tensor(kick[1], dtype=vel.dtype, device=self.device)
    n = nmuscle(m)   # muscles start relaxed (MuJoCo's act 0)
    pos0, quat0 = m.body_pos0, m.body_quat0
    if (pose := start_pose(m)) is not None:   # a joint whose range excludes its reference coordinate: at its bound
      pos0, quat0 = (Tensor(a, dtype=pos0.dtype, device=self.device) for a in pose)
    state = State(body_pos=rep(pos0), body_quat=rep(quat0), body_vel=vel, body_angvel=angvel,
                  time=Tensor.zeros(B, dtype=m.body_pos0.dtype, device=self.device),
                  act=Tensor.zeros(B, n, dtype=m.body_pos0.dtype, device=self.device) if n else None)
    return self._copy(pack_state(state, self.model), state.time)

  def _copy(self, packed: Tensor, time: Tensor, overflow: Tensor | None = None) -> State:
    # JIT outputs are reused: copy them (engine/buffers.py copy_of: a buffer copy rather than a scheduled clone)
    packed, time = copy_of(packed), copy_of(time)
    state = unpack_state(packed, time, self.model)
    if overflow is not None: state = state.replace(contact_overflow=copy_of(overflow))
    return remember_packed(state, self.model, packed, time)   # the next call takes them back (packed_of)

  def _check(self, state: State, ctrl, steps: int | None = None) -> Tensor | None:
    """Validate the state and the controls (engine/stepping.py); returns ctrl as a realised (batch, nact) Tensor of the
    model's dtype (zeros when the model has actuators and ctrl is None), or None for a model without actuators. For a
    run of `steps` env-steps ctrl may also be a sequence of `steps` controls, returned as (steps, batch, nact)
    (check_ctrls)."""
    check_state(self.model, state, self.batch, self.device)
    if steps is None: return check_ctrl(self.model, self.batch, ctrl, self.device)
    return check_ctrls(self.model, self.batch, ctrl, steps, self.device)

  # --- stepping ---
  def _advance(self, packed: Tensor, time: Tensor, n: int, ctrl: Tensor | None, horizon: int | None = None
               ) -> tuple[Tensor, Tensor, Tensor]:
    return self.stepper.run(packed, time, n, ctrl, self.steps_per_call, horizon)

  def step(self, state: State, ctrl: Tensor | np.ndarray | None = None) -> State:
    """One env-step (model.dt) for every env. Returns a new State (its own buffers, safe to keep).
    ctrl: (batch, nact) actuator controls held for the step, clipped to each actuator's ctrlrange; None = zeros.
    With differentiable=True, gradients flow to ctrl as to the state."""
    ctrl = self._check(state, ctrl)
    if self.differentiable:
      return unpack_state(self.stepper.graph(pack_state(state, self.model), ctrl), state.time + self.model.dt,
                          self.model)
    packed, time = packed_of(state, self.model)
    return self._copy(*self._advance(packed, time, 1, ctrl))

  def _chunks(self, packed: Tensor, time: Tensor, steps: int, every: int, ctrl: Tensor | list[Tensor] | None):
    """Yield (packed, time, overflow) after every `every` env-steps, and after the last step."""
    done = 0
    while done < steps:
      k = min(every, steps - done)
      held = ctrl[done:done + k] if is_sequence(ctrl) else ctrl
      packed, time, overflow = self._advance(packed, time, k, held, horizon=steps - done)
      done += k
      yield packed, time, overflow

  def trajectory(self, state: State, steps: int, every: int = 1, ctrl=None) -> tuple[State, dict[str, np.ndarray]]:
    """Advance `steps` env-steps and record the state after every `every`-th step (and the initial one) as numpy:
    t (T,) [s], pos/vel/angvel (T, B, nbody, 3), quat (T, B, nbody, 4), overflow (T, B) dropped contact pairs, and
    act (T, B, nmuscle) for a model with muscles.
    One host copy of the packed state per record and no Tensor kept per frame: the way to record long runs (tinygrad
    scans every live Tensor when it realises one, so thousands of kept frame States make each read slow).
    ctrl: (batch, nact) controls held for the whole run (None = zeros), or a sequence of `steps` of them, ctrl[t] for
    env-step t ((steps, batch, nact) or a list)."""
    ctrl = self._check(state, ctrl, steps)
    if not (isinstance(every, int) and every >= 1): raise ValueError(f"every: expected a positive int, got {every!r}")
    packed, time = packed_of(state, self.model)
    rows, times, dropped = [packed.numpy()], [time.numpy()], [np.zeros(self.batch, np.int32)]
    if self.stepper.records(steps):   # the WGSL kernel's launches keep every step: a host copy per launch
      packed, time, overflow, frames = self.stepper.record(packed, time, steps, ctrl, every)
      rows += [p for p, _ in frames]
      times += [t for _, t in frames]
      dropped += [dropped[0]] * len(frames)
    else:
      for packed, time, overflow in self._chunks(packed, time, steps, every, ctrl):
        rows.append(packed.numpy())
        times.append(time.numpy())
        dropped.append(overflow.numpy())
    p = np.stack(rows)
    m = self.model
    out = {"act": p[:, :, m.nbody:].reshape(*p.shape[:2], -1)[..., :nmuscle(m)]} if nmuscle(m) else {}
    p = p[:, :, :m.nbody]
    out |= {"t": np.stack(times)[:, 0], "pos": p[..., POS], "quat": p[..., QUAT], "vel": p[..., VEL],
           "angvel": p[..., ANGVEL], "overflow": np.stack(dropped)}
    return self._copy(packed, time, overflow if steps else None), out

  def rollout(self, state: State, steps: int, ctrl=None) -> State:
    """The State after `steps` env-steps with ctrl (batch, nact) held throughout (None = zeros), or with ctrl[t] at
    env-step t for a sequence of `steps` controls ((steps, batch, nact) or a list). To record the states along the
    way, use trajectory()."""
    ctrl = self._check(state, ctrl, steps)
    if self.differentiable:
      for t in range(steps): state = self.step(state, ctrl[t] if is_sequence(ctrl) else ctrl)
      return state
    packed, time = packed_of(state, self.model)
    return self._copy(*self._advance(packed, time, steps, ctrl))
