"""The gradient front door: rollout_grad, the value and gradient of a loss after a rollout, through the backend the
model is on: the WGSL kernel's backward (engine/grad_kernel.py KernelRolloutGrad) for a model on the WEBGPU device,
else the oracle's autograd, one jitted VJP per substep (engine/grad_oracle.py RolloutGrad). The oracle's reverse
mode is a file of its own so that the float64 gradient references (tests/golden.py PHYSICS) depend on it, not on the
kernel's side."""
from __future__ import annotations
from collections import OrderedDict
from engine.grad_kernel import KernelRolloutGrad
from engine.grad_oracle import RolloutGrad
from oracle.packed import unpack_state
from oracle.types import State


def backend_of(model) -> str:
  """The backend a model's gradients go through: the WGSL kernel's backward for a model on the WEBGPU device, else
  the oracle (engine/stepping.py DEFAULT_DEVICE)."""
  return "wgsl" if model.body_inv_mass.device == "WEBGPU" else "oracle"


_GRADERS: OrderedDict = OrderedDict()
GRADERS_KEPT = 2   # models whose graders stay cached (each holds its JIT captures and their buffers)


def grader(model, wrt: tuple[str, ...], batch: int) -> RolloutGrad:
  """The RolloutGrad (or KernelRolloutGrad) of `model` for `wrt` and `batch` envs, built once and reused: its jitted
  forward and VJP are captured on their first calls, so a fresh one per rollout_grad call re-ran those warm-up calls
  (pendulum x4096, 20 steps: a third of the gradient's time). Kept for the last GRADERS_KEPT models."""
  key = id(model)
  if key not in _GRADERS or _GRADERS[key][0] is not model: _GRADERS[key] = (model, {})
  _GRADERS.move_to_end(key)
  while len(_GRADERS) > GRADERS_KEPT: _GRADERS.popitem(last=False)
  cache = _GRADERS[key][1]
  if (wrt, batch) not in cache:
    cache[(wrt, batch)] = (KernelRolloutGrad if backend_of(model) == "wgsl" else RolloutGrad)(model, wrt)
  return cache[(wrt, batch)]


def rollout_grad(model, state: State, steps: int, loss_fn, wrt: tuple[str, ...] = (), ctrl=None):
  """Value and gradient of loss_fn(final_state) -> scalar Tensor after `steps` env-steps.

  A model on the WEBGPU device differentiates through the WGSL kernel's backward (KernelRolloutGrad), any other
  through the oracle. Returns (loss, d loss/d initial state as a State of adjoints (time: zeros), {param name: d loss /
  d param}, plus
  "ctrl": (steps, B, nact) for a model with actuators). ctrl: None (zeros), one (B, nact) held, or `steps` of them.
  loss_fn must be differentiable by tinygrad; it sees a lazy State built from the final packed tensor.
  """
  rg = grader(model, tuple(wrt), state.body_pos.shape[0])
  packed, time, checkpoints = rg.forward_packed(state, steps, ctrl)
  loss = loss_fn(unpack_state(packed, time, model))
  (adj_final,) = loss.gradient(packed)
  adj0, params = rg.backward(checkpoints, adj_final)
  return loss.realize(), unpack_state(adj0, time.zeros_like(), model), params


__all__ = ["rollout_grad", "grader", "backend_of", "RolloutGrad", "KernelRolloutGrad"]
