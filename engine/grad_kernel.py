"""Reverse mode through the WGSL kernel (issue 17): the forward kernel's env-steps, then the backward kernel's
(kernels/adjoint/), both on the device; engine/grad.py rollout_grad picks it for a model on the WEBGPU device."""
from __future__ import annotations
from tinygrad import Tensor
from engine.buffers import copy_of, packed_of
from engine.grad_oracle import RolloutGrad
from engine.stepping import Stepper, check_ctrl, check_ctrls, is_sequence, jit
from oracle.types import State


class KernelRolloutGrad(RolloutGrad):
  """Reverse mode through the WGSL kernel, on the device, a launch per pass: the forward runs the horizon's env-steps
  and keeps the start and the packed state after each (13 floats per body per env per step: engine.wgsl.trajectory);
  the backward kernel then runs the steps from the last (engine.wgsl_backward.trajectory_vjp), recomputing each step's
  substeps from its row (its tape is scratch of one step) and carrying the adjoint state from step to step. A launch
  per step cost each pass 0.2 to 0.6 forward steps on lavapipe (bench/README.md). Each pass is one TinyJit per
  horizon (its few small ops captured with it). Parameter gradients come per env and are summed
  (engine.wgsl_backward.param_grads). Checkpoints are the capture's buffers: valid until the next forward of the same
  horizon."""

  def __init__(self, model, wrt: tuple[str, ...] = ()):
    from engine import wgsl, wgsl_backward
    from kernels.layout import PARAMS
    for name in wrt:
      if name not in PARAMS:
        raise ValueError(f"wrt: {name!r} is not a parameter the WGSL kernel differentiates (one of {list(PARAMS)})")
    self.model, self.wrt = model, tuple(wrt)
    self.stepper = Stepper(model, "wgsl", differentiable=True)
    wgsl.prepare(model)   # the model's buffers, outside the JIT captures below
    wgsl_backward.prepare_backward()
    self._fwds, self._bwds = {}, {}   # per (horizon, with controls): the jitted passes

  def _forward_fn(self, packed: Tensor, time: Tensor, *ctrls: Tensor) -> tuple[Tensor, ...]:
    """The start and the packed states after each of the steps, (steps + 1, B, NROWS, 13), in one launch
    (engine.wgsl.trajectory); the last of them in a buffer of its own, and the clock after the steps (the final
    state's, each a whole buffer that engine.buffers.copy_of copies without a schedule)."""
    from engine import wgsl
    ctrl = ctrls[0] if ctrls else None
    traj = wgsl.trajectory(self.model, packed, ctrl, self._steps, self.stepper.damping).realize()
    return traj, traj[-1].contiguous().realize(), (time + self._steps * self.model.dt).contiguous().realize()

  def _backward_fn(self, adj: Tensor, traj: Tensor, *ctrls: Tensor) -> tuple[Tensor, ...]:
    """(d/d initial packed, d/d the parameter row summed over steps where wrt names a parameter, d/d ctrl per step)
    from d/d final packed, the forward's trajectory and, when the model has actuators, its (steps, B, nact) controls:
    the backward kernel over every step in one launch (engine.wgsl_backward.trajectory_vjp)."""
    from engine import wgsl_backward
    ctrl = ctrls[0] if ctrls else None
    adj, gc, gp = wgsl_backward.trajectory_vjp(self.model, traj, ctrl, adj, self.stepper.damping)
    out = (adj.contiguous(),) + ((gp.contiguous(),) if self.wrt else ())
    if ctrl is not None: out += (gc.contiguous(),)   # (steps, B, nact): controls come only with actuators
    Tensor.realize(*out)
    return out

  def _pass(self, cache: dict, fn, steps: int, ctrls, *args):
    key = (steps, ctrls is not None)
    if key not in cache: cache[key] = jit(fn)
    self._steps = steps
    return cache[key](*args, *(() if ctrls is None else (ctrls,)))

  def forward_packed(self, state: State, steps: int, ctrl=None) -> tuple[Tensor, Tensor, tuple]:
    from engine import wgsl
    if steps < 1: raise ValueError(f"forward: steps must be at least 1, got {steps}")
    packed, time0 = packed_of(state, self.model)
    B = packed.shape[0]
    wgsl.idle_ctrl(B)   # built outside the captures
    ctrls = None   # (steps, B, nact) for a model with actuators
    if self.model.nact:   # a sequence as given, or the held control (zeros for None) repeated
      given = check_ctrls(self.model, B, ctrl, steps, packed.device)
      ctrls = given if is_sequence(given) else given.reshape(1, *given.shape).expand(steps, *given.shape)
      ctrls = ctrls.contiguous().realize()
    elif ctrl is not None: check_ctrl(self.model, B, ctrl, packed.device)   # raises: no actuators
    traj, last, time = self._pass(self._fwds, self._forward_fn, steps, ctrls, packed, time0)
    return copy_of(last), copy_of(time), (traj, ctrls)

  def backward(self, checkpoints: tuple, adj_final: Tensor) -> tuple[Tensor, dict[str, Tensor]]:
    from engine import wgsl_backward
    traj, ctrls = checkpoints
    adj = adj_final.clone(device=self.stepper.device).realize()   # a constant gradient has no device of its own
    out = self._pass(self._bwds, self._backward_fn, traj.shape[0] - 1, ctrls, adj, traj)
    named = wgsl_backward.param_grads(self.model, out[1]) if self.wrt else {}
    totals = {n: named[n].clone().realize() for n in self.wrt}
    if ctrls is not None: totals["ctrl"] = copy_of(out[-1])
    return copy_of(out[0]), totals
