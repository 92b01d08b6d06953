"""The one way into stepping. Simulator, the envs (engine/env.py), the gradient API (engine/grad.py), the trainers
(engine/train/) and the parity tool advance physics through a `Stepper` and nothing below it: this module alone calls
the oracle's step (oracle/step.py) and the WGSL kernel (engine/wgsl.py), chooses a backend, validates states and
controls, and sums the broadphase's overflow.

Backends, one computation:
- oracle: the pure tinygrad stages (oracle/step.py), any device, differentiable by autograd;
- wgsl: the monolithic WGSL kernel (kernels/xpbd_step.wgsl via engine/wgsl.py) on the WEBGPU device, float32,
  differentiated by the hand-written backward kernel (kernels/adjoint/; kernels.program.check_backward names what
  it does not cover).

Three ways to step, one Stepper:
- `advance` / `run`: the forward, realised per substep (jitted by `run`, or inside a caller's JIT, e.g. VecEnv);
- `graph`: one lazy env-step for Tensor.gradient (short horizons: the graph grows with substeps x steps);
- `pairs` + `substep`: the checkpointed reverse mode of engine/grad.py and engine/train/apg.py, one lazy substep at a
  time from a checkpointed state and the step's pair table.
"""
from __future__ import annotations
import dataclasses
import warnings
import numpy as np
from tinygrad import Tensor, TinyJit, dtypes
from engine import cpu_graph
from oracle import step as oracle_step
from oracle.packed import nmuscle
from oracle.types import Model, State

BACKENDS = ("oracle", "wgsl")
DEFAULT_DEVICE = {"wgsl": "WEBGPU"}   # where a backend's model lives when the caller names no device
STATE_FIELDS = ("body_pos", "body_quat", "body_vel", "body_angvel")
# the contact plan's tensors (all its fields but the static blocks): what the substep tier's plan JIT returns
PLAN_FIELDS = tuple(f.name for f in dataclasses.fields(oracle_step.ContactPlan) if f.name != "blocks")
# env-steps a Stepper runs on the substep tier before run() captures whole steps (Stepper.run). Where the two meet, on
# this 2-core machine with cold caches and the CPU graph (engine/cpu_graph.py): drop x1 after ~1000 steps (6 s of
# capture saved, 6 ms per step more), pile x2 after ~2400 (22 s saved, 9 ms per step more)
TIER_UP = 1000


def jit(fn) -> TinyJit:
  """TinyJit that captures on its first call. TinyJit otherwise runs the function plainly once and captures on the
  second call, scheduling every substep twice (~40 % of a scene's start-up). cnt is TinyJit's own call counter; the
  pinned tinygrad 0.14.0 captures when cnt == 1 (tinygrad/engine/jit.py), see tests/test_simulator.py. On the CPU
  device its kernels replay through one compiled driver per batch (engine/cpu_graph.py)."""
  cpu_graph.install()
  j = TinyJit(fn)
  j.cnt = 1
  return j


def check_name(backend: str) -> None:
  """A clear error for an unknown backend name."""
  if backend not in BACKENDS: raise ValueError(f"backend: expected one of {list(BACKENDS)}, got {backend!r}")


def _ctrl_shape(model: Model, batch: int, ctrl_shape: tuple, name: str, steps: int | None) -> None:
  """A clear error unless a control has shape (batch, nact), or (steps, batch, nact) for a sequence."""
  want = (batch, model.nact) if steps is None else (steps, batch, model.nact)
  if tuple(ctrl_shape) != want:
    dims = "batch, nact" if steps is None else "steps, batch, nact"
    raise ValueError(f"{name}: expected shape {want} ({dims}: {list(model.act_name)}), got {tuple(ctrl_shape)}")


def _need_actuators(model: Model, name: str) -> None:
  """The error for a control given to a model without actuators."""
  if model.nact == 0: raise ValueError(f"{name}: {model.name} has no actuators (0 controls); pass None")


def is_sequence(ctrl: Tensor | None) -> bool:
  """Whether a checked control (check_ctrl's or check_ctrls's output) is a (steps, batch, nact) sequence rather than
  one (batch, nact) control held for every step."""
  return ctrl is not None and ctrl.ndim == 3


def ctrl_array(model: Model, batch: int, ctrl, name: str = "ctrl", steps: int | None = None) -> np.ndarray:
  """A control given as a numpy array or lists, checked as check_ctrl checks it, as a contiguous array of the model's
  dtype (for engine.buffers.upload)."""
  _need_actuators(model, name)
  arr = np.asarray(ctrl)
  if arr.dtype.kind != "f": raise ValueError(f"{name}: expected a float array, got dtype {arr.dtype}")
  _ctrl_shape(model, batch, arr.shape, name, steps)
  return np.ascontiguousarray(arr, dtype=np.float32 if model.body_pos0.dtype == dtypes.float32 else np.float64)


def check_ctrl(model: Model, batch: int, ctrl, device: str, name: str = "ctrl", steps: int | None = None
               ) -> Tensor | None:
  """ctrl as a realised (batch, nact) Tensor of the model's dtype, or a clear error. None gives zeros (actuators at
  rest) for a model with actuators, and None for one without. numpy arrays and lists are accepted. steps: ctrl is a
  sequence of that many, (steps, batch, nact) (not None)."""
  want, dtype = (batch, model.nact) if steps is None else (steps, batch, model.nact), model.body_pos0.dtype
  if ctrl is None:
    if not model.nact: return None
    return Tensor.zeros(*want, dtype=dtype, device=device).contiguous().realize()
  if not isinstance(ctrl, Tensor): return Tensor(ctrl_array(model, batch, ctrl, name, steps), device=device)
  _need_actuators(model, name)
  _ctrl_shape(model, batch, ctrl.shape, name, steps)
  if not dtypes.is_float(ctrl.dtype): raise ValueError(f"{name}: expected a float tensor, got {ctrl.dtype}")
  if ctrl.device != device: raise ValueError(f"{name}: expected a tensor on {device}, got one on {ctrl.device}")
  return ctrl if ctrl.dtype == dtype else ctrl.cast(dtype)


def _steps_in(ctrl) -> int | None:
  """How many per-step controls ctrl holds when it is a sequence (a (steps, batch, nact) Tensor or array, or a list of
  (batch, nact) ones), else None (one control, or None)."""
  if ctrl is None: return None
  if isinstance(ctrl, Tensor): return ctrl.shape[0] if ctrl.ndim == 3 else None
  if isinstance(ctrl, (list, tuple)):   # a list of per-step controls, or one control as nested lists
    return len(ctrl) if ctrl and (isinstance(ctrl[0], Tensor) or np.ndim(ctrl[0]) == 2) else None
  return len(ctrl) if np.ndim(ctrl) == 3 else None


def check_ctrls(model: Model, batch: int, ctrl, steps: int, device: str, name: str = "ctrl"):
  """Controls for a run of `steps` env-steps, or a clear error: None or one (batch, nact) control held throughout,
  returned as check_ctrl returns it; or a sequence of `steps` of them (a (steps, batch, nact) Tensor or array, or a
  list), returned as one realised (steps, batch, nact) Tensor in its own buffer: a list's steps are checked one by
  one, so that a wrong one is named, and a whole array is copied to the device at once (a copy and a kernel per step
  cost ~2.4 ms each, reacher x1024 on lavapipe: 0.24 s of a 100-step rollout's 0.32 s, 2026-11-30)."""
  n = _steps_in(ctrl)
  if n is None: return check_ctrl(model, batch, ctrl, device, name)
  _need_actuators(model, name)
  if n != steps: raise ValueError(f"{name}: expected {steps} per-step controls (one per env-step), got {n}")
  if isinstance(ctrl, (list, tuple)):
    return Tensor.stack(*(check_ctrl(model, batch, c, device, f"{name}[{t}]") for t, c in enumerate(ctrl))).realize()
  return check_ctrl(model, batch, ctrl, device, name, steps).clone().realize()


def check_state(model: Model, state: State, batch: int, device: str) -> None:
  """A clear error unless every field of `state` is a Tensor of the right shape, device and the model's dtype."""
  n, dtype = model.nbody, model.body_pos0.dtype
  for name in (*STATE_FIELDS, "time"):
    t = getattr(state, name, None)
    want = (batch,) if name == "time" else (batch, n, 4 if name == "body_quat" else 3)
    what = "(batch,)" if name == "time" else f"(batch, nbody, {want[-1]})"
    if not isinstance(t, Tensor): raise ValueError(f"state.{name}: expected a Tensor, got {type(t).__name__}")
    if tuple(t.shape) != want: raise ValueError(f"state.{name}: expected shape {want} {what}, got {tuple(t.shape)}")
    if t.device != device: raise ValueError(f"state.{name}: expected a tensor on {device}, got one on {t.device} "
                                            "(create it with device=state.body_pos.device)")
    if t.dtype != dtype: raise ValueError(f"state.{name}: expected {dtype} (the model's dtype), got {t.dtype}")
  want = (batch, nmuscle(model))
  if want[1] and (not isinstance(state.act, Tensor) or tuple(state.act.shape) != want):
    got = tuple(state.act.shape) if isinstance(state.act, Tensor) else type(state.act).__name__
    raise ValueError(f"state.act: expected the muscles' activations, a Tensor of shape {want} (batch, nmuscle), "
                     f"got {got}")
  if not want[1] and state.act is not None: raise ValueError(f"state.act: {model.name} has no muscles; expected None")


# [bytes] the most states one launch that keeps every step's keeps on the WGSL kernel (Stepper._launches)
SEQUENCE_BYTES = 1 << 26
# the fewest env-steps of a control sequence that the WGSL kernel runs in launches of many steps (record()): that
# launch is scheduled afresh each call (~20 ms of host work), a step's JIT replay and its control's copy ~2.5 ms.
# Rollouts of reacher with a sequence on lavapipe (2026-11-30), a replay per step against one launch: x16 4 steps
# 22.1 / 22.7 ms, 8 steps 30.1 / 22.0, 64 steps 193 / 22.5; x1024 4 steps 21.7 / 27.8, 8 steps 30.7 / 32.1, 16 steps
# 65.4 / 41.3, 64 steps 167 / 63.7
SEQUENCE_STEPS = 8


class Stepper:
  """Steps one model on one backend; every caller in engine/ steps physics through one of these.

  differentiable=True asks for a backend with autograd (the oracle): a clear error otherwise. Creating a Stepper
  realises the model's tensors and reads the static choices a trace needs (damping pass, contacts), so none of its
  methods reads a tensor's value and all of them may run under a TinyJit capture."""

  def __init__(self, model: Model, backend: str = "oracle", differentiable: bool = False, tier_up: int = TIER_UP):
    check_name(backend)
    if backend == "wgsl":
      from engine import wgsl  # the WebGPU runtime loads only when this backend is used
      wgsl.require_webgpu()
      wgsl.check_model(model)
      if differentiable:   # a clear error now for what the backward kernel does not cover yet
        from kernels.program import check_backward
        check_backward(model)
    Tensor.realize(*model.tensors().values())
    if not model.contact_restitution and model.contact_enabled and (model.geom_restitution.numpy() > 0).any():
      raise ValueError(f"{model.name}: geom_restitution is non-zero but the model was built without any "
                       "(contact_restitution is False, so its substeps skip the restitution stage): use "
                       "model.replace(contact_restitution=True)")
    if backend == "wgsl": wgsl.prepare(model)   # outside any JIT capture, which would rebuild them at every replay
    self.model, self.backend, self.device = model, backend, model.body_inv_mass.device
    self.damping = oracle_step.has_damping(model)
    self.contacts = oracle_step.has_contacts(model)
    self.hashed = bool(model.pair_capacity)   # pairs come from the broadphase, which has a capacity
    self.h = model.dt / model.substeps
    self._jit: dict[tuple[int, int], TinyJit] = {}   # run()'s step tier, by (steps per call, twin)
    self._twin = 1                 # the twin run() used last
    self._pairs = None
    self._tier = None          # the substep tier's JITs (run(), built on first use)
    self.steps_run, self.tier_up = 0, tier_up   # env-steps run() has taken; the step tier takes over at tier_up

  # --- the forward ---
  def advance(self, packed: Tensor, k: int = 1, ctrl: Tensor | None = None, model: Model | None = None
              ) -> tuple[Tensor, Tensor]:
    """k env-steps of the packed (B, nbody, 13) state (oracle/packed.py) with ctrl (B, nact) or None held, realised
    per substep. model: this Stepper's model with per-env parameters (domain randomisation: a batch axis on some
    fields, the same topology), default its own. Returns (packed, overflow (B,) int32: the contact pairs the
    broadphase dropped over the k steps, 0 where there is no broadphase)."""
    model = self.model if model is None else model
    if self.backend == "wgsl":
      from engine import wgsl
      return wgsl.step_overflow(model, packed, ctrl, k, self.damping)
    overflow = Tensor.zeros(packed.shape[0], dtype=dtypes.int32, device=packed.device)
    for _ in range(k):
      packed, plan = oracle_step.step_packed(model, packed, self.damping, eager=True, ctrl=ctrl)
      if plan is not None: overflow = overflow + plan.overflow
    return packed, overflow

  def runner(self, k: int, twin: int = 0) -> TinyJit:
    """A TinyJit of (packed, time, dropped, ctrl?) -> (packed, time, dropped + overflow) after k env-steps; without a
    broadphase (nothing to drop) of (packed, time, ctrl?) -> (packed, time), one kernel fewer a call. Output buffers
    are reused. twin 1: a second capture of the same calls with its own output buffers (run() alternates the two on
    the WGSL kernel, see there)."""
    if (k, twin) not in self._jit:
      def run(packed: Tensor, time: Tensor, *rest: Tensor):
        dropped, ctrl = (rest[0], rest[1:]) if self.hashed else (None, rest)
        packed, overflow = self.advance(packed, k, *ctrl)
        # one realize for all three: the kernel writes the state and the overflow count in one launch, and realising
        # them one at a time ran it twice (the second realize did not know that the first one's launch wrote both)
        out = (packed, time + k * self.model.dt, *(() if dropped is None else (dropped + overflow,)))
        Tensor.realize(*out)
        return out
      self._jit[k, twin] = jit(run)
    return self._jit[k, twin]

  def run(self, packed: Tensor, time: Tensor, n: int, ctrl: Tensor | None = None, steps_per_call: int = 1,
          horizon: int | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """n env-steps with ctrl (B, nact) held throughout, or with ctrl[t] at step t when ctrl is a sequence (n, B, nact)
    (each step then its own call; on the WGSL kernel, many steps a launch: record). Returns (packed, time,
    dropped): dropped (B,) int32 sums the broadphase's overflow over the n steps, and a RuntimeWarning says so when any
    env dropped a pair. Outputs are JIT buffers: copy to keep them.

    Two tiers, one computation (the same substep graph, bit-identical results: tests/test_simulator.py):
    - the substep tier (the oracle's first tier_up env-steps): one TinyJit of a substep, replayed S times per step.
      It builds and schedules one substep's graph where the step tier does S, so a scene starts sooner (cold caches:
      pile x2 15 s against 37 s; drop x1 2.5 s against 8.7 s), at ~0.2-0.4 ms of Python per substep call (drop x1:
      2.1 against 0.64 ms per env-step, 2026-11-30; pile x2: 61 against 51 ms, earlier). Half of it is the TinyJit
      copying its input, the state it wrote itself on the last call;
    - the step tier: jitted calls of steps_per_call whole env-steps (the remainder one step at a time, no new JIT per
      remainder); capturing builds and schedules every substep of a call, which pays off over long runs.
    A run that would take this Stepper past tier_up env-steps uses the step tier (tier_up=0: always). horizon: the
    env-steps left in the caller's whole run when it comes in several calls (a recorded trajectory), this one's
    included, so that one run does not change tier half-way."""
    seq = ctrl if is_sequence(ctrl) else None
    if seq is not None and seq.shape[0] != n:
      raise ValueError(f"ctrl: expected {n} per-step controls, got {seq.shape[0]}")
    k = 1 if seq is not None else steps_per_call
    dropped = Tensor.zeros(packed.shape[0], dtype=dtypes.int32, device=packed.device)
    substep_tier = self.backend == "oracle" and self.steps_run + max(n, horizon or 0) < self.tier_up
    self.steps_run += n
    if self.backend == "wgsl" and ctrl is None:   # the idle control buffer for this batch, outside the capture
      from engine import wgsl
      wgsl.idle_ctrl(packed.shape[0])
    dropped = dropped.contiguous().realize()
    launched = seq is not None and self.backend == "wgsl" and n >= SEQUENCE_STEPS   # few launches: record()
    if launched: packed, time, dropped, _ = self.record(packed, time, n, seq)
    for i, j in enumerate([] if launched else [k] * (n // k) + [1] * (n % k)):
      if seq is not None: ctrl = seq[i].clone().realize()   # its own buffer: a JIT takes no view
      if substep_tier:
        args = (packed, time, *(() if ctrl is None else (ctrl,)))
        packed, time, overflow = self._run_substeps(j, *args)
        if self.hashed: dropped = (dropped + overflow).realize()   # now: the next call rewrites overflow's buffer
      else:   # the sum is in the JIT; a JIT output is rewritten by the next replay, and the next call reads it first
        # A TinyJit copies every input that it writes itself (the last replay's outputs): three copies a call. The
        # WGSL kernel's calls alternate between two captures instead, each reading the other's outputs (one more
        # capture, milliseconds for the kernel; the oracle's capture of whole steps costs seconds, so it keeps one)
        twin = self._twin = (1 - self._twin) if self.backend == "wgsl" else 0
        args = (*((dropped,) if self.hashed else ()), *(() if ctrl is None else (ctrl,)))
        packed, time, *out = self.runner(j, twin)(packed, time, *args)
        if self.hashed: dropped = out[0]
    dropped = dropped.contiguous().realize()
    if self.hashed and (lost := int(dropped.max().item())) > 0:
      warnings.warn(f"{self.model.name}: the broadphase dropped up to {lost} contact pairs in an env (capacity "
                    f"{self.model.pair_capacity}); raise the scene's contact.pair_capacity / contact.hash_slots. "
                    "The count per env is State.contact_overflow.", RuntimeWarning, stacklevel=3)
    return packed, time, dropped

  def _launches(self, packed: Tensor, n: int, seq: Tensor | None):
    """n env-steps on the WGSL kernel, ctrl seq[t] at step t (seq (n, B, nact); None for a model without actuators),
    in launches that keep every step's state (engine.wgsl.trajectory_overflow), each of as many steps as
    SEQUENCE_BYTES of states allow. Yields per launch (its first step, its (k + 1, B, NROWS, 13) states, its (B,) int32
    dropped pairs), realised."""
    from engine import wgsl
    per = max(1, SEQUENCE_BYTES // (4 * packed.numel()) - 1)
    for i in range(0, n, per):
      k = min(per, n - i)
      traj, overflow = wgsl.trajectory_overflow(self.model, packed, None if seq is None else seq[i:i + k].clone(), k,
                                                self.damping)
      Tensor.realize(traj, overflow)
      yield i, traj, overflow
      packed = traj[-1]

  def records(self, n: int) -> bool:
    """Whether record() serves a recording of n env-steps: on the WGSL kernel, of at least SEQUENCE_STEPS, and without
    a broadphase, whose dropped pairs a launch counts only in sum (Simulator.trajectory records them per frame)."""
    return self.backend == "wgsl" and not self.hashed and n >= SEQUENCE_STEPS

  def record(self, packed: Tensor, time: Tensor, n: int, ctrl: Tensor | None, every: int = 0
             ) -> tuple[Tensor, Tensor, Tensor, list[tuple[np.ndarray, np.ndarray]]]:
    """n env-steps on the WGSL kernel in few launches that keep every step (_launches), not a JIT replay per step (the
    same states bit for bit, tests/test_simulator.py); ctrl (B, nact) held, a sequence (n, B, nact), or None.
    Returns (packed, time, dropped pairs summed over the steps) at the end and, for every > 0, as numpy, (packed, time)
    after every `every`-th step and the last: one or two host copies per launch rather than three per frame. The
    clock adds dt once per step in float32, as the step tier's calls do."""
    seq = ctrl if ctrl is None or is_sequence(ctrl) else ctrl.reshape(1, *ctrl.shape).expand(n, *ctrl.shape)
    dropped = Tensor.zeros(packed.shape[0], dtype=dtypes.int32, device=packed.device)
    t, frames = time.numpy(), []
    dt = np.asarray(self.model.dt, t.dtype)
    for i, traj, overflow in self._launches(packed, n, seq):
      dropped = (dropped + overflow).realize()
      k, stamps = traj.shape[0] - 1, []
      for j in range(1, k + 1):
        t = t + dt
        if every and ((i + j) % every == 0 or i + j == n): stamps.append(t)
      if not every: continue
      # only the recorded states leave the device: every `every`-th step's (a strided view), then the run's last
      first = every - i % every
      rows = list(traj.numpy()[1:] if every == 1 else traj[first::every].numpy() if first <= k else [])
      if i + k == n and n % every: rows.append(traj[k].numpy())
      frames += zip(rows, stamps, strict=True)
    return traj[-1].contiguous().realize(), Tensor(t, device=packed.device).realize(), dropped, frames

  def _run_substeps(self, k: int, packed: Tensor, time: Tensor, ctrl: Tensor | None = None):
    """k env-steps on the substep tier: per step, the contact plan's JIT (broadphase and parameter rows, as
    oracle_step.step_packed computes them) and S calls of one substep's JIT. The substep JIT reads the plan from the
    plan JIT's output buffers (the same buffers from its first call on, rewritten by every replay), so only the state
    and ctrl are its inputs."""
    if self._tier is None:
      m, cell = self.model, {}
      def plan(p: Tensor) -> tuple[Tensor, ...]:
        found = oracle_step.contact_plan(m, p, realize=True)
        out = tuple(getattr(found, f).contiguous().realize() for f in PLAN_FIELDS)
        cell["plan"] = dataclasses.replace(found, **dict(zip(PLAN_FIELDS, out)))   # runs once: the capture
        return out
      def sub(p: Tensor, c: Tensor | None = None) -> Tensor:
        return oracle_step.substep(m, p, self.h, self.damping, cell.get("plan"), c).realize()
      self._tier = (jit(plan) if self.contacts else None, jit(sub), {})
    plan, sub, clocks = self._tier
    overflow = Tensor.zeros(packed.shape[0], dtype=dtypes.int32, device=packed.device)
    for _ in range(k):
      if plan is not None:
        dropped = plan(packed)[PLAN_FIELDS.index("overflow")]
        if self.hashed: overflow = (overflow + dropped).realize()   # now: the next replay rewrites that buffer
      for _ in range(self.model.substeps): packed = sub(packed, *(() if ctrl is None else (ctrl,)))
    if k not in clocks: clocks[k] = jit(lambda t: (t + k * self.model.dt).realize())
    return packed, clocks[k](time), overflow.contiguous().realize()

  def jits(self) -> dict[str, list[TinyJit]]:
    """The JITs run() has built so far, by tier: "step" (runner's, per steps per call and twin), "plan" (the substep
    tier's contact plan; none without contacts), "substep" (its substep) and "clock" (its time updates, per steps per
    call). For the tests' and the bench's kernel counts and host-copy checks (engine/cpu_graph.py)."""
    plan, sub, clocks = self._tier or (None, None, {})
    return {"step": list(self._jit.values()), "plan": [plan] if plan is not None else [],
            "substep": [sub] if sub is not None else [], "clock": list(clocks.values())}

  # --- gradients ---
  def graph(self, packed: Tensor, ctrl: Tensor | None = None) -> Tensor:
    """One env-step as a lazy graph that Tensor.gradient differentiates to packed, ctrl and the model's tensors: the
    oracle's stages under tinygrad's autograd, or the WGSL kernel with its backward kernel attached."""
    if self.backend == "wgsl":
      from engine import wgsl
      return wgsl.step_grad(self.model, packed, ctrl)
    return oracle_step.step_packed(self.model, packed, self.damping, ctrl=ctrl)[0]

  def pairs(self, packed: Tensor) -> tuple[Tensor, ...]:
    """The step's contact pair table from the packed state at its start, realised (discrete: not differentiated), as
    a 1-tuple to checkpoint with the step; () for a scene without contacts."""
    if not self.contacts: return ()
    if self._pairs is None:
      def pairs(p: Tensor) -> Tensor: return oracle_step.find_pairs(self.model, p)[0].contiguous().realize()
      # plane pairs alone are a constant table (nothing to JIT); the broadphase is worth one
      self._pairs = jit(pairs) if self.hashed else pairs
    return (self._pairs(packed).clone().realize(),)

  def substep(self, packed: Tensor, ctrl: Tensor | None = None, pairs: tuple[Tensor, ...] = (),
              model: Model | None = None, cut=None) -> Tensor:
    """One lazy substep from packed (B, nbody, 13) with the step's pair table (from pairs(), or () without contacts):
    what a checkpointed reverse mode differentiates. model: this model in another dtype (same topology), e.g. float64
    Jacobians of a float32 simulation. cut: oracle/step.py substep's, between its stages, and on the contact plan's
    parameter rows."""
    model = self.model if model is None else model
    plan = oracle_step.plan_from_pairs(model, pairs[0]) if pairs else None
    if plan is not None and cut is not None:   # the per-side parameter rows every contact stage reads
      plan = dataclasses.replace(plan, pair_side=cut(plan.pair_side), contact_side=cut(plan.contact_side))
    return oracle_step.substep(model, packed, self.h, self.damping, plan, ctrl if model.nact else None, cut)

  # --- checks and stage views (tests, bench, the parity tool) ---
  def max_penetration(self, packed: Tensor) -> Tensor:
    """Deepest penetration [m] per env (B,) at the pose `packed`: a physical check, not part of the step."""
    from oracle.contacts import max_penetration
    return max_penetration(self.model, packed)

  def contact_set(self, packed: Tensor) -> tuple[Tensor, Tensor]:
    """The pair table (B, NPAIR, 2) and contacts (B, NSLOT, ROW) of the first substep of a step from packed,
    without controls: the oracle's contact_plan -> motor_loads -> integrate -> narrowphase at h = dt (a one-substep
    model), or what the kernel's scratch rows hold after that stage."""
    if self.backend == "wgsl":
      from engine import wgsl
      return wgsl.contact_set(self.model, wgsl.step_scratch(self.model, packed)[1])
    m = self.model
    packed = packed.contiguous().realize()
    plan = oracle_step.contact_plan(m, packed)
    work = oracle_step.integrate(m, packed, self.h, *oracle_step.motor_loads(m, packed, None)).contiguous().realize()
    return plan.pairs, oracle_step.narrowphase(m, plan, work)
