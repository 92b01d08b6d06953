"""The step backends behind one signature, so the simulator and the env pick one by name and never branch on it.

`advance(model, packed, k, damping, ctrl) -> (packed, overflow)`: k env-steps of the packed (B, nbody, 13) state with
ctrl (B, nact) or None held, realised per substep (the jitted forward path); overflow (B,) int32 counts the contact
pairs the broadphase dropped (always 0 where there is no broadphase).
- oracle: pure tinygrad stages (oracle/step.py), any device, differentiable by autograd;
- wgsl: the monolithic WGSL kernel (kernels/xpbd_step.wgsl via engine/wgsl.py) on the WEBGPU device.
"""
from __future__ import annotations
from tinygrad import Tensor, dtypes
from oracle.step import step_packed_plan
from oracle.types import Model


def _oracle(model: Model, packed: Tensor, k: int, damping: bool, ctrl: Tensor | None) -> tuple[Tensor, Tensor]:
  overflow = None
  for _ in range(k):
    packed, plan = step_packed_plan(model, packed, damping, eager=True, ctrl=ctrl)
    if plan is not None: overflow = plan.overflow if overflow is None else overflow + plan.overflow
  if overflow is None: overflow = Tensor.zeros(packed.shape[0], dtype=dtypes.int32, device=packed.device)
  return packed, overflow


def _wgsl(model: Model, packed: Tensor, k: int, damping: bool, ctrl: Tensor | None) -> tuple[Tensor, Tensor]:
  from engine import wgsl  # the WebGPU runtime loads only when this backend is used
  return wgsl.step_overflow(model, packed, ctrl, k, damping)


def _wgsl_prepare(model: Model) -> None:
  from engine import wgsl
  wgsl.require_webgpu()
  wgsl.check_model(model)


ADVANCE = {"oracle": _oracle, "wgsl": _wgsl}
PREPARE = {"oracle": lambda model: None, "wgsl": _wgsl_prepare}
BACKENDS = tuple(ADVANCE)
DEFAULT_DEVICE = {"wgsl": "WEBGPU"}   # where a backend's model lives when the caller names no device


def check_name(backend: str, differentiable: bool = False) -> None:
  """A clear error for an unknown backend name, or for differentiable=True on a backend without autograd."""
  if backend not in ADVANCE: raise ValueError(f"backend: expected one of {list(BACKENDS)}, got {backend!r}")
  if differentiable and backend != "oracle":
    raise ValueError(f"differentiable=True: only the oracle backend builds an autograd graph, not {backend!r}")


def check_backend(backend: str, model: Model, differentiable: bool = False) -> None:
  """check_name, then a clear error if the model (or this machine) cannot run on the backend."""
  check_name(backend, differentiable)
  PREPARE[backend](model)
