"""Vectors and quaternions as named components, one (B,) Tensor per component per body.

Why components and not a trailing axis of 3, and why one tensor per body rather than (B, nbody): tinygrad's scheduler
materialises an intermediate as soon as two consumers index it differently (a reduction over the axis of 3, a gather
from bodies to joints). Per-body (B,) components keep every consumer on the same index, so a whole step fuses into a
handful of kernels instead of ~450 per substep (measured). It also reads like the WGSL kernel it mirrors: one thread
per env looping over bodies with `vec3<f32>` arithmetic.
"""
from __future__ import annotations
import math
from dataclasses import dataclass
from tinygrad import Tensor
from tinygrad.helpers import Context, polyN


@dataclass(frozen=True)
class V3:
  x: Tensor
  y: Tensor
  z: Tensor

  @staticmethod
  def of(t: Tensor) -> V3: return V3(t[..., 0], t[..., 1], t[..., 2])
  @staticmethod
  def const(x: float, y: float, z: float, like: Tensor) -> V3:
    return V3(*(Tensor(v, dtype=like.dtype, device=like.device) for v in (x, y, z)))
  def stack(self) -> Tensor: return Tensor.stack(self.x, self.y, self.z, dim=-1)
  def __add__(self, o: V3) -> V3: return V3(self.x + o.x, self.y + o.y, self.z + o.z)
  def __sub__(self, o: V3) -> V3: return V3(self.x - o.x, self.y - o.y, self.z - o.z)
  def __neg__(self) -> V3: return V3(-self.x, -self.y, -self.z)
  def __mul__(self, s) -> V3:
    # s: a scalar/Tensor (broadcast) or a V3 (componentwise, e.g. a diagonal inertia)
    if isinstance(s, V3): return V3(self.x * s.x, self.y * s.y, self.z * s.z)
    return V3(self.x * s, self.y * s, self.z * s)
  __rmul__ = __mul__
  def __truediv__(self, s) -> V3: return V3(self.x / s, self.y / s, self.z / s)
  def dot(self, o: V3) -> Tensor: return self.x * o.x + self.y * o.y + self.z * o.z
  def cross(self, o: V3) -> V3:
    return V3(self.y * o.z - self.z * o.y, self.z * o.x - self.x * o.z, self.x * o.y - self.y * o.x)
  def where(self, cond: Tensor, other: V3) -> V3:
    return V3(cond.where(self.x, other.x), cond.where(self.y, other.y), cond.where(self.z, other.z))
  def map(self, f) -> V3: return V3(f(self.x), f(self.y), f(self.z))

  def norm_dir(self, eps: float) -> tuple[Tensor, V3, Tensor]:
    """(length, unit direction, active) with active = length > eps. Safe for autograd at zero length: the square
    root never sees a zero (the double-where trick), so inactive lanes get zero gradient instead of 0*inf = NaN."""
    s = self.dot(self)
    active = s > eps * eps
    length = active.where(s, 1.0).sqrt()
    return active.where(length, 0.0), self / length, active


@dataclass(frozen=True)
class Quat:
  w: Tensor
  x: Tensor
  y: Tensor
  z: Tensor

  @staticmethod
  def of(t: Tensor) -> Quat: return Quat(t[..., 0], t[..., 1], t[..., 2], t[..., 3])
  @staticmethod
  def identity(like: Tensor) -> Quat:
    return Quat(*(Tensor(v, dtype=like.dtype, device=like.device) for v in (1.0, 0.0, 0.0, 0.0)))
  def stack(self) -> Tensor: return Tensor.stack(self.w, self.x, self.y, self.z, dim=-1)
  @property
  def vec(self) -> V3: return V3(self.x, self.y, self.z)
  def conj(self) -> Quat: return Quat(self.w, -self.x, -self.y, -self.z)
  def __mul__(self, o: Quat) -> Quat:
    # Hamilton product
    return Quat(self.w * o.w - self.x * o.x - self.y * o.y - self.z * o.z,
                self.w * o.x + self.x * o.w + self.y * o.z - self.z * o.y,
                self.w * o.y - self.x * o.z + self.y * o.w + self.z * o.x,
                self.w * o.z + self.x * o.y - self.y * o.x + self.z * o.w)
  def rotate(self, v: V3) -> V3:
    # v' = v + 2 u x (u x v + w v), u = vec(q): two cross products instead of a matrix
    u = self.vec
    t = u.cross(v) * 2.0
    return v + t * self.w + u.cross(t)
  def inv_rotate(self, v: V3) -> V3: return self.conj().rotate(v)
  def rotation_columns(self) -> tuple[V3, V3, V3]:
    """The columns of R(q) for a unit q: the world directions of the local x, y, z axes. Written out rather than
    q.rotate(e_i), which would spend most of its products on the zeros of e_i; a caller that needs one column gets
    only its expressions computed (the others are never realised)."""
    w, x, y, z = self.w, self.x, self.y, self.z
    return (V3(1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y + w * z), 2.0 * (x * z - w * y)),
            V3(2.0 * (x * y - w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z + w * x)),
            V3(2.0 * (x * z + w * y), 2.0 * (y * z - w * x), 1.0 - 2.0 * (x * x + y * y)))
  def normalize(self) -> Quat:
    n = (self.w * self.w + self.x * self.x + self.y * self.y + self.z * self.z).sqrt()
    return Quat(self.w / n, self.x / n, self.y / n, self.z / n)
  def add_rotation(self, dtheta: V3) -> Quat:
    """q + 1/2 [dtheta, 0] q, renormalised: applies a small world-frame rotation vector (M20 eq. 8 and Alg. 2)."""
    dq = Quat(dtheta.x * 0.0, dtheta.x, dtheta.y, dtheta.z) * self
    return Quat(self.w + 0.5 * dq.w, self.x + 0.5 * dq.x, self.y + 0.5 * dq.y, self.z + 0.5 * dq.z).normalize()


# A&S 4.4.46, the polynomial tinygrad's asin uses (|error| < 2e-8 on [0, 1])
_ASIN = (-0.0012624911, 0.0066700901, -0.0170881256, 0.0308918810, -0.0501743046, 0.0889789874, -0.2145988016,
         1.5707963050)


def _atan01(r: Tensor) -> Tensor:
  """atan(r) for r in [0, 1] as asin(r / sqrt(1 + r^2)), like tinygrad's atan but without its sign(): tinygrad
  multiplies by sign(u), whose gradient (and abs's) is 0 at u = 0, so d atan/dr came out 0 at r = 0 instead of 1.
  Shifted so that atan(0) is exactly 0."""
  u = r / (1.0 + r * r).sqrt()
  return (1.0 - (1.0 - u).sqrt() * polyN(u, list(_ASIN)) / _ASIN[-1]) * (math.pi / 2)


def atan2(y: Tensor, x: Tensor) -> Tensor:
  """Four-quadrant arctangent, branch-free, from tinygrad's atan of a ratio in [0, 1] (tinygrad has no atan2).

  Why the ratio is kept <= 1: tinygrad 0.14 computes atan(u) as asin(u / sqrt(1 + u^2)), which in float32 returns NaN
  once |u| > ~4e3 (asin's argument rounds past 1). atan(y / x) did so for a hinge within ~2e-4 rad of +-90 degrees:
  a NaN joint angle from a finite state (reacher's elbow, ~1 in 50k observations; it also dropped a limit check for
  that substep). Here atan sees min(|x|, |y|) / max(|x|, |y|) and the octant is restored by reflections. The swap is
  a where, not min/max, so at |x| = |y| the gradient is that of one branch (both are the true one), not a blend;
  |.| is a product with a +-1 sign, so at y = 0 (a hinge at its zero angle) d/dy is 1/x, not abs's 0."""
  sx, sy = (x < 0).where(-1.0, 1.0), (y < 0).where(-1.0, 1.0)
  ax, ay = x * sx, y * sy                                        # |x|, |y| with slope +-1 at 0 too (abs' is 0 there)
  swap = ay > ax
  num, den = swap.where(ax, ay), swap.where(ay, ax)
  a = _atan01(num / (den == 0).where(1.0, den))                # in [0, pi/4]; 0 at the origin
  a = swap.where(math.pi / 2 - a, a)
  return (x < 0).where(math.pi - a, a) * sy


# --- fixed-shape gathers over a static index list (the topology is Python, known at trace time) ---

def _runs(idx: tuple[int, ...]) -> list[tuple[int, int]]:
  """Split idx into maximal runs [(start, length)] of consecutive indices (or of -1s), so a gather is a few slices."""
  runs: list[tuple[int, int]] = []
  for i in idx:
    if runs and i >= 0 and runs[-1][0] >= 0 and sum(runs[-1]) == i: runs[-1] = (runs[-1][0], runs[-1][1] + 1)
    elif runs and i < 0 and runs[-1][0] < 0: runs[-1] = (-1, runs[-1][1] + 1)
    else: runs.append((i, 1))
  return runs


_CONSTS: dict = {}


def const(values, like: Tensor, dtype=None) -> Tensor:
  """A small constant tensor from Python values (like's dtype unless given, like's device), realised once and cached.
  Created inside the step, it would be copied from Python on every substep (one kernel each). Realised outside any
  TinyJit capture (CAPTURING=0): realised inside one, the JIT records the copy and replays it on every call (measured:
  26 host copies in each replay of reacher's substep, a quarter of its replay time, before this)."""
  dtype = like.dtype if dtype is None else dtype
  key = (tuple(values), dtype, like.device)
  if key not in _CONSTS:
    with Context(CAPTURING=0): _CONSTS[key] = Tensor(list(values), dtype=dtype, device=like.device).realize()
  return _CONSTS[key]


def take(t: Tensor, idx: tuple[int, ...], fill: float = 0.0, axis: int = -1) -> Tensor:
  """t[..., idx] along `axis`; index -1 (the world) reads `fill`. Slices, a concatenation and a cached mask only, so
  on a realised buffer it is plain indexed loads inside the consuming kernel. Gather only from realised tensors:
  gathering from a lazy intermediate makes tinygrad materialise it (its consumers would index it differently)."""
  axis = axis % t.ndim
  world = [i < 0 for i in idx]
  if all(world):  # a constant, broadcast: no load at all
    shape = tuple(len(idx) if a == axis else (1 if a < axis else s) for a, s in enumerate(t.shape))
    return Tensor(fill, dtype=t.dtype, device=t.device).reshape((1,) * len(shape)).expand(shape)
  pieces = [t.shrink(tuple((start, start + n) if a == axis else None for a in range(t.ndim)))
            for start, n in _runs(tuple(max(i, 0) for i in idx))]
  out = pieces[0] if len(pieces) == 1 else pieces[0].cat(*pieces[1:], dim=axis)
  if not any(world): return out
  mask = const([float(w) for w in world], t).reshape(tuple(len(idx) if a == axis else 1 for a in range(t.ndim)))
  return (mask > 0).where(fill, out)
