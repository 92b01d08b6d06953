"""Reverse mode through the WGSL kernel (issue 17): the forward kernel's env-steps, then the backward kernel's
(kernels/adjoint/), both on the device; engine/grad.py rollout_grad picks it for a model on the WEBGPU device."""
from __future__ import annotations
from tinygrad import Tensor
from engine.grad_oracle import RolloutGrad
from engine.stepping import Stepper, check_ctrl, jit
from oracle.packed import pack_state, unpack_state
from oracle.types import State


# steps per realize in the passes. Each realize walks every live tensor's graph (tinygrad's becomes-map) and the passes
# keep a checkpoint tensor per step alive, so a realize per step costs steps^2 in the first, uncaptured call of a
# horizon (later calls replay the capture), while a lazy graph of many steps is slow to schedule. Chain, 1,000 steps,
# first call, warm shader cache: 98 s with four realizes a step, 40 s with one, 24 s every 10 to 50 steps, 162 s once
REALIZE_EVERY = 25


class KernelRolloutGrad(RolloutGrad):
  """Reverse mode through the WGSL kernel, on the device. The forward runs the horizon's env-steps, one launch each,
  and keeps the packed state before each (13 floats per body per env per step); the backward runs the backward kernel
  (engine.wgsl.step_vjp) once per step, from the last, each recomputing its step's substeps from its checkpoint (the
  kernel's tape is scratch of one step). Each pass is one TinyJit per horizon: outside a capture every small op
  (a checkpoint's copy, a gradient's sum) is scheduled again at every step, which cost more than the kernels
  (chain x64, 20 steps: 100 of 176 ms). Parameter gradients come per env and are summed (engine.wgsl.param_grads).
  Checkpoints are the capture's buffers: valid until the next forward of the same horizon."""

  def __init__(self, model, wrt: tuple[str, ...] = ()):
    from engine import wgsl
    from kernels.layout import PARAMS
    for name in wrt:
      if name not in PARAMS:
        raise ValueError(f"wrt: {name!r} is not a parameter the WGSL kernel differentiates (one of {list(PARAMS)})")
    self.model, self.wrt = model, tuple(wrt)
    self.stepper = Stepper(model, "wgsl", differentiable=True)
    wgsl.prepare(model)   # the model's buffers, outside the JIT captures below
    wgsl.prepare_backward()
    self._fwds, self._bwds = {}, {}   # per (horizon, with controls): the jitted passes

  def _forward_fn(self, packed: Tensor, *ctrls: Tensor) -> tuple[Tensor, ...]:
    """The packed states after each of the len(ctrls) or steps env-steps."""
    from engine import wgsl
    out = []
    for t in range(self._steps):
      packed = wgsl.step(self.model, packed, ctrls[0][t] if ctrls else None, 1, self.stepper.damping)
      out.append(packed)
      if (t + 1) % REALIZE_EVERY == 0 or t + 1 == self._steps: Tensor.realize(*out[-REALIZE_EVERY:])
    return tuple(out)

  def _backward_fn(self, adj: Tensor, *args: Tensor) -> tuple[Tensor, ...]:
    """(d/d initial packed, d/d the parameter row summed over steps where wrt names a parameter, d/d ctrl per step)
    from d/d final packed; args: the states before each step, then the (steps, B, nact) controls when the model has
    actuators. Without wrt the parameter row's sum is left out: a (B, NPARAM) add a step (pendulum x4096, 20 steps:
    rollout backward 153 -> 118 ms on lavapipe)."""
    from engine import wgsl
    states, ctrls = args[:self._steps], (args[self._steps] if len(args) > self._steps else None)
    prm, per_step = None, []
    for t in reversed(range(self._steps)):
      adj, gc, gp = wgsl.step_vjp(self.model, states[t], None if ctrls is None else ctrls[t], adj, self.stepper.damping)
      adj = adj.contiguous()
      if self.wrt: prm = gp.contiguous() if prm is None else prm + gp
      if ctrls is not None: per_step.append(gc[:, :self.model.nact].contiguous())
      if t % REALIZE_EVERY == 0: Tensor.realize(adj, *([prm] if self.wrt else []), *per_step[-REALIZE_EVERY:])
    out = (adj,) + ((prm,) if self.wrt else ())
    if ctrls is not None: out += (Tensor.stack(*reversed(per_step)).realize(),)
    return out

  def _pass(self, cache: dict, fn, steps: int, ctrls, *args):
    key = (steps, ctrls is not None)
    if key not in cache: cache[key] = jit(fn)
    self._steps = steps
    return cache[key](*args, *(() if ctrls is None else (ctrls,)))

  def forward(self, state: State, steps: int, ctrl=None) -> tuple[State, tuple]:
    from engine import wgsl
    packed = pack_state(state, self.model).contiguous().realize()
    B = packed.shape[0]
    wgsl.idle_ctrl(B)   # built outside the captures
    ctrls = None   # (steps, B, nact) for a model with actuators
    if self.model.nact: ctrls = Tensor.stack(*self._ctrl(ctrl, B, steps, packed.device)).contiguous().realize()
    elif ctrl is not None: check_ctrl(self.model, B, ctrl, packed.device)   # raises: no actuators
    states = self._pass(self._fwds, self._forward_fn, steps, ctrls, packed)
    final = unpack_state(states[-1].clone().realize(), (state.time + steps * self.model.dt).realize(), self.model)
    return final, ((packed, *states[:-1]), ctrls)

  def backward(self, checkpoints: tuple, adj_final: Tensor) -> tuple[Tensor, dict[str, Tensor]]:
    from engine import wgsl
    states, ctrls = checkpoints
    if not states: raise ValueError("backward: no steps to differentiate")
    adj = adj_final.clone(device=self.stepper.device).realize()   # a constant gradient has no device of its own
    out = self._pass(self._bwds, self._backward_fn, len(states), ctrls, adj, *states)
    named = wgsl.param_grads(self.model, out[1]) if self.wrt else {}
    totals = {n: named[n].clone().realize() for n in self.wrt}
    if ctrls is not None: totals["ctrl"] = out[-1].clone().realize()
    return out[0].clone().realize(), totals
