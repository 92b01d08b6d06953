"""Integrate: semi-implicit Euler for positions and orientations, gyroscopic term included (M20 Alg. 2, lines 5-9)."""
from __future__ import annotations
from tinygrad import Tensor
from oracle.math3 import V3
from oracle.packed import pack_work, unpack


def integrate(model, packed: Tensor, h: float, force: V3 | None = None, torque: V3 | None = None) -> Tensor:
  """One substep of free motion for every body, vectorised over bodies. packed: (B, nbody, 13) -> the substep's
  working state (B, nbody, 19) with D = h v and TH = h w (oracle/packed.py). force [N] and torque [N m] are optional
  world-frame loads (B, nbody). A body with zero inverse mass does not move."""
  x, q, v, w = unpack(packed)
  im, ii = model.body_inv_mass, V3.of(model.body_inv_inertia)
  acc = V3.of(model.gravity) * (im > 0).where(1.0, 0.0)
  if force is not None: acc = acc + force * im
  v = v + acc * h                                                     # v += h (g + f/m)
  x = x + v * h                                                       # x += h v
  # Euler's equation in the body frame, where I is diagonal: w += h I^-1 (tau - w x (I w))  (M20 eq. 27)
  wb = q.inv_rotate(w)
  inertia = ii.map(lambda t: (t > 0).where(1.0 / (t + (t <= 0).where(1.0, 0.0)), 0.0))  # I = 1/I^-1, 0 when static
  tau = -wb.cross(wb * inertia)
  if torque is not None: tau = tau + q.inv_rotate(torque)
  w = q.rotate(wb + tau * ii * h)
  q = q.add_rotation(w * h)                                           # q += h/2 [w, 0] q; normalise
  return pack_work(x, q, v, w, v * h, w * h)
