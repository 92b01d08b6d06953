"""The simulator front door: batching, reset, jitted stepping and rollouts. The one place that chooses a backend."""
from __future__ import annotations
import warnings
import numpy as np
from tinygrad import Tensor, TinyJit, dtypes
from oracle.packed import ANGVEL, POS, QUAT, VEL, pack_state, unpack_state
from engine.backends import ADVANCE, check_backend, check_name
from oracle.step import step_packed
from oracle.types import Model, State
from oracle.velocity import has_damping

class Simulator:
  """Steps `batch` copies of a scene.

  model: from engine.load_scene. backend: "oracle" (pure tinygrad, any device) or "wgsl" (the WGSL step kernel on
  the WEBGPU device: load the model with device="WEBGPU"; float32, no autograd). engine/backends.py, docs/wgsl.md.
  device: tinygrad device of the model's tensors (default: where the model lives).
  steps_per_call: env-steps fused into one TinyJit call; amortises ~1 ms of Python per call at small batch, but the
    first call's compile time grows with it (tinygrad schedules every substep), so keep it 1 unless steps are many.
  differentiable: when True, step() builds a lazy graph (no JIT) so Tensor.gradient flows to the input state and the
  model's parameters; use it for a few steps. For long horizons use engine.grad.rollout_grad (checkpointed reverse
  mode, one jitted vector-Jacobian product per substep).
  """

  def __init__(self, model: Model, batch: int = 1, backend: str = "oracle", device: str | None = None,
               steps_per_call: int = 1, differentiable: bool = False):
    check_name(backend, differentiable)
    if not (isinstance(batch, int) and batch >= 1): raise ValueError(f"batch: expected a positive int, got {batch!r}")
    if not (isinstance(steps_per_call, int) and steps_per_call >= 1):
      raise ValueError(f"steps_per_call: expected a positive int, got {steps_per_call!r}")
    self.model, self.batch, self.backend = model, batch, backend
    self.device = device or model.body_inv_mass.device
    if self.device != model.body_inv_mass.device:
      raise ValueError(f"device: the model lives on {model.body_inv_mass.device}, not {self.device}; "
                       f"load it with engine.load_scene(..., device={self.device!r})")
    self.steps_per_call, self.differentiable = steps_per_call, differentiable
    check_backend(backend, model, differentiable)
    Tensor.realize(*model.tensors().values())
    self.damping = has_damping(model)
    self.hashed = bool(model.pair_capacity)   # pairs come from the broadphase, which has a capacity
    self._jit = {}

  # --- state ---
  def reset(self, seed: int | None = None, noise: float = 0.0) -> State:
    """The scene's initial state for every env. noise > 0 adds N(0, noise^2) to every body's linear [m/s] and angular
    [rad/s] velocity, seeded, so envs differ without breaking joints (the constraints project positions)."""
    m, B = self.model, self.batch
    def rep(t): return t.reshape(1, *t.shape).expand(B, *t.shape)
    vel, angvel = rep(m.body_vel0), rep(m.body_angvel0)
    if noise > 0:
      rng = np.random.default_rng(seed)
      kick = rng.normal(0.0, noise, size=(2, B, m.nbody, 3))
      vel = vel + Tensor(kick[0], dtype=vel.dtype, device=self.device)
      angvel = angvel + Tensor(kick[1], dtype=vel.dtype, device=self.device)
    state = State(body_pos=rep(m.body_pos0), body_quat=rep(m.body_quat0), body_vel=vel, body_angvel=angvel,
                  time=Tensor.zeros(B, dtype=m.body_pos0.dtype, device=self.device))
    return self._copy(pack_state(state), state.time)

  def _copy(self, packed: Tensor, time: Tensor, overflow: Tensor | None = None) -> State:
    state = unpack_state(packed.clone().realize(), time.clone().realize())  # JIT outputs are reused: copy
    return state if overflow is None else state.replace(contact_overflow=overflow.clone().realize())

  def _check(self, state: State, ctrl) -> Tensor | None:
    """Validate the state's shape and the controls; returns ctrl as a realised (batch, nact) Tensor of the model's
    dtype (zeros when the model has actuators and ctrl is None), or None for a model without actuators."""
    B, n, dtype = self.batch, self.model.nbody, self.model.body_pos0.dtype
    for name, want in (("body_pos", (B, n, 3)), ("body_quat", (B, n, 4)), ("body_vel", (B, n, 3)),
                       ("body_angvel", (B, n, 3)), ("time", (B,))):
      t = getattr(state, name)
      what = "(batch,)" if name == "time" else f"(batch, nbody, {want[-1]})"
      if not isinstance(t, Tensor): raise ValueError(f"state.{name}: expected a Tensor, got {type(t).__name__}")
      if tuple(t.shape) != want: raise ValueError(f"state.{name}: expected shape {want} {what}, got {tuple(t.shape)}")
      if t.device != self.device: raise ValueError(f"state.{name}: expected a tensor on {self.device}, got one on "
                                                   f"{t.device} (create it with device=state.body_pos.device)")
      if t.dtype != dtype: raise ValueError(f"state.{name}: expected {dtype} (the model's dtype), got {t.dtype}")
    return check_ctrl(self.model, self.batch, ctrl, self.device)

  # --- stepping ---
  def _runner(self, k: int):
    """A TinyJit that advances the packed state k env-steps. Its output buffers are reused across calls."""
    if k not in self._jit:
      model, damping, advance = self.model, self.damping, ADVANCE[self.backend]
      def run(packed: Tensor, time: Tensor, ctrl: Tensor | None = None):
        packed, overflow = advance(model, packed, k, damping, ctrl)
        return packed.realize(), (time + k * model.dt).realize(), overflow.contiguous().realize()
      jit = TinyJit(run)
      # capture on the first call: TinyJit otherwise runs the function plainly once, then captures on the second
      # call, scheduling every substep twice (~40 % of a scene's start-up). cnt is TinyJit's own call counter; the
      # pinned tinygrad 0.14.0 captures when cnt == 1 (engine/jit.py), see tests/test_simulator.py.
      jit.cnt = 1
      self._jit[k] = jit
    return self._jit[k]

  def _advance(self, packed: Tensor, time: Tensor, n: int, ctrl: Tensor | None = None
               ) -> tuple[Tensor, Tensor, Tensor]:
    """n env-steps in calls of steps_per_call, the remainder one step at a time (no new JIT per remainder), ctrl held
    throughout. Also returns the contact pairs dropped over the n steps per env, and warns when there were any."""
    k, dropped = self.steps_per_call, None
    for j in [k] * (n // k) + [1] * (n % k):
      packed, time, overflow = self._runner(j)(packed, time, *(() if ctrl is None else (ctrl,)))
      if self.hashed: dropped = overflow.clone() if dropped is None else dropped + overflow
    if dropped is None: return packed, time, Tensor.zeros(self.batch, dtype=dtypes.int32, device=self.device)
    dropped = dropped.realize()
    if (lost := int(dropped.max().item())) > 0:
      warnings.warn(f"{self.model.name}: the broadphase dropped up to {lost} contact pairs in an env (capacity "
                    f"{self.model.pair_capacity}); raise the scene's contact.pair_capacity / contact.hash_slots. "
                    "The count per env is State.contact_overflow.", RuntimeWarning, stacklevel=3)
    return packed, time, dropped

  def step(self, state: State, ctrl: Tensor | np.ndarray | None = None) -> State:
    """One env-step (model.dt) for every env. Returns a new State (its own buffers, safe to keep).
    ctrl: (batch, nact) actuator controls held for the step, clipped to each actuator's ctrlrange; None = zeros.
    With differentiable=True, gradients flow to ctrl as to the state."""
    ctrl = self._check(state, ctrl)
    if self.differentiable:
      packed = step_packed(self.model, pack_state(state), self.damping, ctrl=ctrl)
      return unpack_state(packed, state.time + self.model.dt)
    packed, time = pack_state(state).contiguous().realize(), state.time.contiguous().realize()
    return self._copy(*self._advance(packed, time, 1, ctrl))

  def _chunks(self, packed: Tensor, time: Tensor, steps: int, every: int, ctrl: Tensor | None):
    """Yield (packed, time, overflow) after every `every` env-steps, and after the last step."""
    done = 0
    while done < steps:
      k = min(every, steps - done)
      packed, time, overflow = self._advance(packed, time, k, ctrl)
      done += k
      yield packed, time, overflow

  def trajectory(self, state: State, steps: int, every: int = 1, ctrl=None) -> tuple[State, dict[str, np.ndarray]]:
    """Advance `steps` env-steps and record the state after every `every`-th step (and the initial one) as numpy:
    t (T,) [s], pos/vel/angvel (T, B, nbody, 3), quat (T, B, nbody, 4), overflow (T, B) dropped contact pairs.
    One host copy of the packed state per record and no Tensor kept per frame: the way to record long runs (tinygrad
    scans every live Tensor when it realises one, so thousands of kept frame States make each read slow).
    ctrl: (batch, nact) controls held for the whole run (None = zeros)."""
    ctrl = self._check(state, ctrl)
    if not (isinstance(every, int) and every >= 1): raise ValueError(f"every: expected a positive int, got {every!r}")
    packed, time = pack_state(state).contiguous().realize(), state.time.contiguous().realize()
    rows, times, dropped = [packed.numpy()], [time.numpy()], [np.zeros(self.batch, np.int32)]
    for packed, time, overflow in self._chunks(packed, time, steps, every, ctrl):
      rows.append(packed.numpy())
      times.append(time.numpy())
      dropped.append(overflow.numpy())
    p = np.stack(rows)
    out = {"t": np.stack(times)[:, 0], "pos": p[..., POS], "quat": p[..., QUAT], "vel": p[..., VEL],
           "angvel": p[..., ANGVEL], "overflow": np.stack(dropped)}
    return self._copy(packed, time, overflow if steps else None), out

  def rollout(self, state: State, steps: int, record_every: int = 0, ctrl=None) -> State | tuple[State, list[State]]:
    """Advance `steps` env-steps with ctrl (batch, nact) held throughout (None = zeros). With record_every=n > 0 also
    returns the states after every n-th step (copies; for long recordings use trajectory(), which keeps numpy arrays
    instead of a State per frame)."""
    ctrl = self._check(state, ctrl)
    if self.differentiable:
      for _ in range(steps): state = self.step(state, ctrl)
      return state
    packed, time = pack_state(state).contiguous().realize(), state.time.contiguous().realize()
    if record_every <= 0: return self._copy(*self._advance(packed, time, steps, ctrl))
    frames = [self._copy(*chunk) for chunk in self._chunks(packed, time, steps, record_every, ctrl)]
    return (frames[-1] if frames else self._copy(packed, time)), frames


def check_ctrl(model: Model, batch: int, ctrl, device: str, name: str = "ctrl") -> Tensor | None:
  """ctrl as a realised (batch, nact) Tensor of the model's dtype, or a clear error. None gives zeros (actuators at
  rest) for a model with actuators, and None for one without. numpy arrays and lists are accepted."""
  want = (batch, model.nact)
  if ctrl is None:
    if not model.nact: return None
    return Tensor.zeros(*want, dtype=model.body_pos0.dtype, device=device).contiguous().realize()
  if model.nact == 0:
    raise ValueError(f"{name}: {model.name} has no actuators (0 controls); pass None")
  if not isinstance(ctrl, Tensor):
    arr = np.asarray(ctrl)
    if arr.dtype.kind != "f": raise ValueError(f"{name}: expected a float array, got dtype {arr.dtype}")
    ctrl = Tensor(arr.astype(np.float32 if model.body_pos0.dtype == dtypes.float32 else np.float64), device=device)
  if tuple(ctrl.shape) != want:
    raise ValueError(f"{name}: expected shape {want} (batch, nact: {list(model.act_name)}), got {tuple(ctrl.shape)}")
  if not dtypes.is_float(ctrl.dtype): raise ValueError(f"{name}: expected a float tensor, got {ctrl.dtype}")
  if ctrl.device != device: raise ValueError(f"{name}: expected a tensor on {device}, got one on {ctrl.device}")
  return ctrl if ctrl.dtype == model.body_pos0.dtype else ctrl.cast(model.body_pos0.dtype)
