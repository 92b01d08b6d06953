"""Constraint registry: `@register(name, nlam)` maps a joint type to its solve function.

A solve function `fn(model, jidx, s1, s2, lam, h, ctrl) -> (Correction, lam)` computes, for the joints `jidx` of its
type (vectorised: every tensor is (B, J)), the net correction of both sides from one Jacobi snapshot. `lam` is a tuple
of `nlam` XPBD multipliers, reset every substep; ctrl (B, nact) or None feeds the position servos. The same names are
the WGSL kernel's functions.
"""
from __future__ import annotations
from typing import Callable
from tinygrad import Tensor
from oracle.math3 import V3, take

CONSTRAINTS: dict[str, Callable] = {}
NLAM: dict[str, int] = {}


def register(name: str, nlam: int = 1):
  def deco(fn):
    CONSTRAINTS[name], NLAM[name] = fn, nlam
    return fn
  return deco


def jvec(model, field: str, jidx: tuple[int, ...]) -> V3:
  """A per-joint vector parameter, (njoint, 3) or (B, njoint, 3), gathered for jidx, as components."""
  return V3.of(take(getattr(model, field), jidx, axis=-2))


def jscalar(model, field: str, jidx: tuple[int, ...]) -> Tensor:
  return take(getattr(model, field), jidx, axis=-1)


def alpha_tilde(model, jidx, h: float) -> Tensor:
  """XPBD time-scaled compliance alpha / h^2 (Macklin et al. 2016, eq. 4)."""
  return jscalar(model, "jnt_compliance", jidx) / (h * h)


# importing the modules registers them; the order here is the order corrections are summed in
from oracle.constraints import ball, hinge, fixed, distance, slide, contact, planar, slide2, hinges  # noqa: E402, F401
