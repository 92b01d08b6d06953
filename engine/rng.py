"""Counter-based random numbers on the device, one stream per env: resets inside a jitted step stay reproducible
(same seed -> same trajectory) without a global RNG. A key is a (B,) uint32 tensor; every draw also returns the next
key, functionally (as in JAX). The mixer is Wellons' lowbias32 integer hash."""
from __future__ import annotations
import numpy as np
from tinygrad import Tensor, dtypes
from oracle.math3 import const

GOLDEN = 0x9E3779B9  # Weyl increment: spreads consecutive counters before hashing


def mix(x: Tensor) -> Tensor:
  """lowbias32: a bijective 32-bit hash with low bias (uint32 -> uint32)."""
  x = x ^ (x >> 16)
  x = x * 0x7FEB352D
  x = x ^ (x >> 15)
  x = x * 0x846CA68B
  return x ^ (x >> 16)


def env_keys(seed: int, n: int, device: str | None = None) -> Tensor:
  """(n,) uint32 keys for envs 0..n-1 of a seed."""
  s = np.uint64(seed) & np.uint64(0xFFFFFFFF)
  base = (np.arange(n, dtype=np.uint64) * np.uint64(GOLDEN) + s * np.uint64(0x85EBCA6B)) & np.uint64(0xFFFFFFFF)
  return mix(Tensor(base.astype(np.uint32), device=device))


def uniform(key: Tensor, n: int, dtype=dtypes.float32) -> tuple[Tensor, Tensor]:
  """(B, n) uniforms in [0, 1) with 24 random bits each, and the next key (B,)."""
  # the counters, a constant realised outside any JIT capture (oracle/math3.py const; a reset draws inside one)
  idx = const([((i + 1) * GOLDEN) & 0xFFFFFFFF for i in range(n)], key, dtypes.uint32)
  bits = mix(key.reshape(-1, 1) + idx.reshape(1, n))
  return (bits >> 8).cast(dtype) * (1.0 / (1 << 24)), mix(key ^ 0xA5A5A5A5)
