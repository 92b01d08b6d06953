"""Box spaces: the shape, dtype and bounds of observations and actions (Gymnasium's Box, without the dependency)."""
from __future__ import annotations
from dataclasses import dataclass
import numpy as np


@dataclass(frozen=True, eq=False)
class Box:
  low: np.ndarray       # float32, `shape`
  high: np.ndarray      # float32, `shape`

  @property
  def shape(self) -> tuple[int, ...]: return tuple(self.low.shape)
  @property
  def dtype(self): return np.dtype(np.float32)

  def sample(self, rng: np.random.Generator | None = None) -> np.ndarray:
    """Uniform within finite bounds, standard normal along unbounded ones."""
    rng = np.random.default_rng() if rng is None else rng
    finite = np.isfinite(self.low) & np.isfinite(self.high)
    lo, hi = np.where(finite, self.low, 0.0), np.where(finite, self.high, 1.0)
    return np.where(finite, rng.uniform(lo, hi), rng.standard_normal(self.shape)).astype(np.float32)

  def contains(self, x) -> bool:
    x = np.asarray(x)
    return x.shape == self.shape and bool(np.all((x >= self.low) & (x <= self.high)))

  def batched(self, n: int) -> Box:
    return Box(np.broadcast_to(self.low, (n, *self.shape)).copy(), np.broadcast_to(self.high, (n, *self.shape)).copy())

  def __repr__(self):
    return f"Box(shape={self.shape}, dtype=float32, low={self.low.min():g}.., high={self.high.max():g}..)"
