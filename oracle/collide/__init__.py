"""Narrowphase: analytic contact points for each pair of geom types (MJX-style pair table, DESIGN sec. 3).

A pair function `fn(a: Geom, b: Geom) -> list[Contact]` takes two geoms per lane (every component (B, P), or
broadcastable) and returns a fixed number of contact slots, the same for every lane, so the shapes never depend on
the data (the WGSL kernel loops over the same fixed slots). Conventions, shared by every function:

- `a` has the first type of the pair in GEOM_TYPES order (plane < sphere < capsule < box); `fn` is named `{a}_{b}`.
- `n` is a unit normal pointing from a to b: b is pushed along +n, a along -n.
- `pa` is a's point deepest inside b (on a's surface), `pb` is b's point deepest inside a (on b's surface), so the
  penetration depth is `depth = (pa - pb) . n`, positive when the geoms overlap, negative when they are apart.
- `valid` marks the slots that hold a contact point (e.g. box-box clipping yields 1 to 4 points). A separated pair
  may still return valid slots with a negative depth (speculative contacts): the solver only acts where depth > 0.
- Degenerate inputs (coincident centres, parallel faces) return finite values and autograd-safe gradients: no
  division by a zero length, no sqrt of zero on an active lane (use V3.norm_dir's double-where).
"""
from __future__ import annotations
from dataclasses import dataclass
from typing import Callable
from tinygrad import Tensor
from oracle.math3 import V3, Quat


@dataclass(frozen=True)
class Geom:
  """One geom per lane in the world frame; every component (B, P) or broadcastable to it."""
  pos: V3        # [m] centre
  rot: Quat      # orientation (w, x, y, z), unit; a plane's normal is its local +z, a capsule's axis its local z
  size: V3       # [m] sphere (r, 0, 0); capsule (r, half length, 0); box half extents; plane unused


@dataclass(frozen=True)
class Contact:
  """One contact slot per lane: world points on each surface, the a->b normal and whether the slot is used."""
  pa: V3
  pb: V3
  n: V3
  valid: Tensor  # bool

  def depth(self) -> Tensor: return (self.pa - self.pb).dot(self.n)


# (type_a, type_b) -> (pair function, contact slots per pair); filled by the modules imported below
NARROWPHASE: dict[tuple[str, str], tuple[Callable, int]] = {}


def pair(type_a: str, type_b: str, ncontacts: int):
  """Register `fn(a, b) -> list[Contact]` (exactly `ncontacts` slots) for geoms of types (type_a, type_b)."""
  def deco(fn):
    NARROWPHASE[(type_a, type_b)] = (fn, ncontacts)
    return fn
  return deco


# importing the modules registers their pair functions; the registry's order is the kernel's pair-kind numbering
# (kernels/program.py generates its dispatch from it)
from oracle.collide import primitives, box, box_box  # noqa: E402, F401
