"""Velocity recovery (M20 Alg. 2 lines 12-15): the substep's velocities from the motion the position solve made."""
from __future__ import annotations
from tinygrad import Tensor
from oracle.packed import pack, unpack_work


def recover(work: Tensor, h: float) -> Tensor:
  """v = (x - x_prev)/h and w = 2 vec(q q_prev^-1)/h (M20 Alg. 2 lines 13-15), computed from the displacement and
  rotation accumulated over the substep (exact in float32 too, see oracle/packed.py). (B, nbody, 19) -> 13."""
  x, q, _, _, disp, rot = unpack_work(work)
  return pack(x, q, disp / h, rot / h)
