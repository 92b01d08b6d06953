"""The packed state: one (B, nbody, 13) tensor [pos 0:3 | quat 3:7 | vel 7:10 | angvel 10:13] between stages. A model
with muscles carries their activations in muscle_rows(model) more rows after the bodies', 13 activations a row in
actuator order, zero-padded: every dynamic quantity stays in one realised tensor, so the steppers, checkpoints and
gradients need no second state buffer. The step splits them off (split_act) and joins them back (join_act).

Every stage of the step reads realised packed tensors and writes exactly one new one. Two reasons, both measured on
tinygrad 0.14: an intermediate shared by two outputs is materialised as its own kernel (~100 tiny kernels per substep
with per-field outputs), and a gather from a lazy intermediate materialises it too; gathers from a realised buffer are
plain loads. The WGSL kernel uses the same layout.
"""
from __future__ import annotations
from tinygrad import Tensor
from oracle.math3 import V3, Quat
from oracle.types import State

POS, QUAT, VEL, ANGVEL = slice(0, 3), slice(3, 7), slice(7, 10), slice(10, 13)
WIDTH = 13
# inside a substep two more vectors ride along: the displacement D and rotation vector TH accumulated since the
# substep began. Recovering v = D/h instead of (x - x_prev)/h matters in float32: near 1 m a position's ulp is
# 1.2e-7 m while a substep moves a slow body ~4e-7 m, so position differences are quantised (measured: free fall
# gained 12 % too much speed per step). In exact arithmetic both are the same (M20 Alg. 2 line 13).
DISP, ROT = slice(13, 16), slice(16, 19)
WORK_WIDTH = 19


def pack(x: V3, q: Quat, v: V3, w: V3) -> Tensor:
  """Components (B, nbody) -> (B, nbody, 13)."""
  return Tensor.stack(x.x, x.y, x.z, q.w, q.x, q.y, q.z, v.x, v.y, v.z, w.x, w.y, w.z, dim=-1)


def unpack(p: Tensor) -> tuple[V3, Quat, V3, V3]:
  return V3.of(p[..., POS]), Quat.of(p[..., QUAT]), V3.of(p[..., VEL]), V3.of(p[..., ANGVEL])


def pack_work(x: V3, q: Quat, v: V3, w: V3, disp: V3, rot: V3) -> Tensor:
  """The substep's working state (B, nbody, 19): the packed state plus the accumulated displacement and rotation."""
  return Tensor.stack(x.x, x.y, x.z, q.w, q.x, q.y, q.z, v.x, v.y, v.z, w.x, w.y, w.z, disp.x, disp.y, disp.z,
                      rot.x, rot.y, rot.z, dim=-1)


def unpack_work(p: Tensor) -> tuple[V3, Quat, V3, V3, V3, V3]:
  return (*unpack(p), V3.of(p[..., DISP]), V3.of(p[..., ROT]))


def nmuscle(model) -> int: return sum(t == "muscle" for t in model.act_type)


def muscle_rows(model) -> int:
  """Rows of the packed state after the bodies' that hold the muscles' activations."""
  return -(-nmuscle(model) // WIDTH)


def split_act(model, packed: Tensor) -> tuple[Tensor, Tensor | None]:
  """(bodies (B, nbody, 13), activations (B, nmuscle) or None) of a packed state."""
  if not muscle_rows(model): return packed, None
  rows = packed[:, model.nbody:]
  return packed[:, :model.nbody], rows.reshape(rows.shape[0], -1)[:, :nmuscle(model)]


def join_act(model, bodies: Tensor, act: Tensor | None) -> Tensor:
  """The packed state of bodies (B, nbody, 13) and activations (B, nmuscle) (split_act's inverse)."""
  if act is None: return bodies
  n = muscle_rows(model) * WIDTH
  return bodies.cat(act.pad((None, (0, n - act.shape[-1]))).reshape(act.shape[0], -1, WIDTH), dim=1).contiguous()


def pack_state(state: State, model=None) -> Tensor:
  """The packed state of a State; model: needed when the state carries muscle activations."""
  bodies = state.body_pos.cat(state.body_quat, state.body_vel, state.body_angvel, dim=-1)
  return bodies if state.act is None else join_act(model, bodies, state.act)


def unpack_state(p: Tensor, time: Tensor, model=None) -> State:
  """A State whose fields are views of one packed tensor; model: needed when it carries muscle activations."""
  bodies, act = (p, None) if model is None else split_act(model, p)
  return State(body_pos=bodies[..., POS], body_quat=bodies[..., QUAT], body_vel=bodies[..., VEL],
               body_angvel=bodies[..., ANGVEL], time=time, act=act)
