"""Spatial tendons (DESIGN sec. 4): paths of sites across bodies, their lengths, rates and the loads a tension puts on
the bodies. Used by the motor_loads stage (oracle/motor_loads.py): the tendons' springs, and the muscles, act along
them as external loads of integrate.

A tendon's length is the sum of its straight segments, L = sum_k |p_k+1 - p_k|, so dL/dp_k+1 = u_k and
dL/dp_k = -u_k for each segment's unit direction u_k. A tension F along the tendon (MuJoCo's sign: negative pulls,
shortening it) is the generalised force J^T F, i.e. the force F dL/dp at each site, and its moment about the body's
centre: the power F dL/dt equals the loads' power sum f.v + tau.w (tests/test_verify_tendon.py). A segment within one
body puts equal and opposite forces on one line through it: no net load, as it should.
"""
from __future__ import annotations
from tinygrad import Tensor
from oracle.math3 import V3, const, take
from oracle.packed import ANGVEL, VEL
from oracle.solve import gather_side
from oracle.types import WORLD
from oracle.xpbd import EPS


def segments(model) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
  """Every tendon's segments, flattened: (tendon, first site, second site) per segment, as three index tuples."""
  rows = [(t, a, b) for t, path in enumerate(model.ten_site) for a, b in zip(path, path[1:])]
  return tuple(r[0] for r in rows), tuple(r[1] for r in rows), tuple(r[2] for r in rows)


def site_motion(model, packed: Tensor, sidx: tuple[int, ...]) -> tuple[V3, V3, V3, tuple[int, ...]]:
  """World (position, velocity, arm from the body's centre) of the sites sidx (B, S), and their bodies."""
  bodies = tuple(model.site_body[s] for s in sidx)
  side = gather_side(model, packed, bodies)
  arm = side.q.rotate(V3.of(take(model.site_pos, sidx, axis=-2)))
  v, w = (V3(*(take(packed[..., sl][..., i], bodies) for i in range(3))) for sl in (VEL, ANGVEL))
  return side.x + arm, v + w.cross(arm), arm, bodies


def _sum_by(values: Tensor, groups: tuple[int, ...], n: int) -> Tensor:
  """(B, S) -> (B, n): the sum over the entries of each group, through a constant one-hot (S, n) matrix."""
  onehot = const([float(g == i) for g in groups for i in range(n)], values).reshape(len(groups), n)
  return values @ onehot


def tendon_state(model, packed: Tensor) -> tuple[Tensor, Tensor, tuple]:
  """(length [m], rate [m/s]) of every tendon (B, ntendon), and the segment geometry tendon_loads reuses."""
  ten, sa, sb = segments(model)
  pa, va, ra, ba = site_motion(model, packed, sa)
  pb, vb, rb, bb = site_motion(model, packed, sb)
  seg_len, u, _ = (pb - pa).norm_dir(EPS)    # a zero-length segment has no direction: no rate, no load
  rate = u.dot(vb - va)
  geometry = (ten, u, ra, ba, rb, bb)
  return _sum_by(seg_len, ten, model.ntendon), _sum_by(rate, ten, model.ntendon), geometry


def tendon_loads(model, tension: Tensor, geometry: tuple) -> tuple[V3, V3]:
  """World-frame (force [N], torque [N m]) per body (B, nbody) from a tension (B, ntendon) along every tendon:
  F dL/dp at each site, F u_k at the segment's second site and -F u_k at its first."""
  ten, u, ra, ba, rb, bb = geometry
  f = u * take(tension, ten)                        # (B, S): the force on the second site
  def onehot(bodies): return const([float(b == i and b != WORLD) for b in bodies for i in range(model.nbody)],
                                   tension).reshape(len(bodies), model.nbody)
  to_a, to_b = onehot(ba), onehot(bb)
  def scatter(vb: V3, va: V3) -> V3: return V3(*(b @ to_b + a @ to_a for b, a in zip(
    (vb.x, vb.y, vb.z), (va.x, va.y, va.z))))
  return scatter(f, -f), scatter(rb.cross(f), -ra.cross(f))


def tendon_spring(model, length: Tensor, rate: Tensor) -> Tensor:
  """The tendons' passive tension -k (L - L_rest) - b dL/dt [N] (B, ntendon): negative (pulling) when stretched."""
  return -model.ten_stiffness * (length - model.ten_length) - model.ten_damping * rate
