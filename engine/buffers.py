"""Copies into and out of realised device buffers without tinygrad's scheduler, for the per-call host work around a
JIT replay (the env's step, the gradient front door). Tensor.clone() and Tensor(array) schedule, lower and launch a
copy on every call: on the WEBGPU device (lavapipe, 2026-11-30, a (256, 7) float32 tensor, median of 30) a clone took
3.7 to 5.0 ms of host against 0.54 ms for copy_of (0.9 ms before engine/wgsl.py gave the WEBGPU allocator a copy on
the device's queue), and Tensor(array).realize() 1.7 to 2.3 ms against 0.2 ms for upload, beside a pendulum_swingup
x256 env-step of 3.7 ms in its JIT."""
from __future__ import annotations
import weakref
import numpy as np
from tinygrad import Tensor
from tinygrad.device import Buffer
from tinygrad.dtype import _to_np_dtype
from tinygrad.uop.ops import Ops
from oracle.packed import pack_state
from oracle.types import State


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


# id(State) -> (the Model, its packed fields' uops, the packed buffer and the clock it was unpacked from)
_PACKED: dict[int, tuple] = {}


def _fields(state: State) -> tuple:
  """The uops of what pack_state reads from a State, and its clock's: a field realised, assigned or replaced since
  has another (tinygrad's uops are immutable values, and a Tensor changes only by taking a new one)."""
  return tuple(t.uop for t in (state.body_pos, state.body_quat, state.body_vel, state.body_angvel, state.time,
                               state.act) if t is not None)


def remember_packed(state: State, model, packed: Tensor, time: Tensor) -> State:
  """Note that `state` is unpack_state(packed, time, model): whole realised buffers of its own that nothing else
  writes (the Simulator's copies of a JIT's outputs), so that packed_of gives them back rather than packing the state
  again for the same model (the packed rows depend on it)."""
  _PACKED[id(state)] = (model, _fields(state), packed, time)
  weakref.finalize(state, _PACKED.pop, id(state), None)
  return state


def packed_of(state: State, model) -> tuple[Tensor, Tensor]:
  """pack_state(state) and its clock, each realised: the buffers the state was unpacked from where remember_packed
  noted them and the state's fields are still the views it was made of, else packed now. A State a Simulator
  returned goes back into the next call as it came out: pack_state's schedule and launch cost 2.5 to 2.8 ms of host a
  call on lavapipe (pendulum x64 and chain x4, 10-step rollouts of ~7 ms, 2026-11-30)."""
  hit = _PACKED.get(id(state))
  if hit is not None and hit[0] is model and len(hit[1]) == len(now := _fields(state)) and \
     all(a is b for a, b in zip(hit[1], now)):
    return hit[2], hit[3]
  return pack_state(state, model).contiguous().realize(), state.time.contiguous().realize()


__all__ = ["copy_of", "upload", "remember_packed", "packed_of"]
