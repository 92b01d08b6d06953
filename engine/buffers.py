"""Copies into and out of realised device buffers without tinygrad's scheduler, for the per-call host work around a
JIT replay (the env's step, the gradient front door). Tensor.clone() and Tensor(array) schedule, lower and launch a
copy on every call: on the WEBGPU device (lavapipe, 2026-11-30, a (256, 7) float32 tensor, median of 30) a clone took
3.7 to 5.0 ms of host against 0.54 ms for copy_of (0.9 ms before engine/wgsl.py gave the WEBGPU allocator a copy on
the device's queue), and Tensor(array).realize() 1.7 to 2.3 ms against 0.2 ms for upload, beside a pendulum_swingup
x256 env-step of 3.7 ms in its JIT."""
from __future__ import annotations
import numpy as np
from tinygrad import Tensor
from tinygrad.device import Buffer
from tinygrad.dtype import _to_np_dtype
from tinygrad.uop.ops import Ops


def _whole_buffer(t: Tensor) -> bool:
  """Whether t is a realised buffer, whole, in its own layout (a JIT's output is one, reshaped), so that its bytes are
  the tensor's in order. A slice or any other view is not."""
  u = t.uop
  return u.is_realized and u.op in (Ops.BUFFER, Ops.RESHAPE) and u.base.op is Ops.BUFFER and u.buffer.size == t.numel()


def copy_of(t: Tensor) -> Tensor:
  """A realised copy of t in a buffer of its own, which later writes to t's buffer (the next JIT replay) leave alone:
  a device-to-device buffer copy where t is a whole realised buffer, else t.clone().realize()."""
  if not _whole_buffer(t): return t.clone().realize()
  out = Tensor.empty(*t.shape, dtype=t.dtype, device=t.device).realize()
  out.uop.buffer.ensure_allocated().copy_from(t.uop.buffer)
  return out


def upload(arr: np.ndarray, into: Tensor) -> Tensor:
  """Copy a host array into `into`, a whole realised buffer of the same shape (the caller checked the shape), cast to
  its dtype; returns `into`."""
  assert _whole_buffer(into) and tuple(np.shape(arr)) == tuple(into.shape), (np.shape(arr), into.shape)
  src = np.ascontiguousarray(arr, dtype=_to_np_dtype(into.dtype))
  into.uop.buffer.ensure_allocated().copy_from(Buffer("NPY", src.size, into.dtype, opaque=src).ensure_allocated())
  return into


__all__ = ["copy_of", "upload"]
