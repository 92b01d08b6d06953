"""Numpy quaternion helpers (w, x, y, z; Hamilton convention) for scene building and tests.

Build-time only: the engine's differentiable quaternion maths lives in the oracle. Everything here is float64.
"""
from __future__ import annotations

import numpy as np


def quat_mul(a, b) -> np.ndarray:
  """Hamilton product a * b of (..., 4) quaternions: rotate by b, then by a."""
  a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
  aw, ax, ay, az = np.moveaxis(a, -1, 0)
  bw, bx, by, bz = np.moveaxis(b, -1, 0)
  return np.stack([aw * bw - ax * bx - ay * by - az * bz,
                   aw * bx + ax * bw + ay * bz - az * by,
                   aw * by - ax * bz + ay * bw + az * bx,
                   aw * bz + ax * by - ay * bx + az * bw], axis=-1)


def quat_conj(q) -> np.ndarray:
  """Conjugate of (..., 4) quaternions: the inverse rotation for unit quaternions."""
  q = np.asarray(q, np.float64)
  return q * np.array([1.0, -1.0, -1.0, -1.0])


def quat_to_mat(q) -> np.ndarray:
  """(..., 4) unit quaternion -> (..., 3, 3) rotation matrix (columns are the rotated frame's axes)."""
  w, x, y, z = np.moveaxis(np.asarray(q, np.float64), -1, 0)
  rows = [[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
          [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
          [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]]
  return np.stack([np.stack(r, axis=-1) for r in rows], axis=-2)


def mat_to_quat(m) -> np.ndarray:
  """(3, 3) proper rotation matrix -> unit quaternion (4,) with w >= 0 (Shepperd's method, stable for any angle)."""
  m = np.asarray(m, np.float64)
  tr = np.trace(m)
  # branch on the largest of (w, x, y, z)^2 so the divisor is never small
  k = int(np.argmax([tr, m[0, 0], m[1, 1], m[2, 2]]))
  if k == 0:
    s = 2.0 * np.sqrt(1.0 + tr)
    q = [s / 4, (m[2, 1] - m[1, 2]) / s, (m[0, 2] - m[2, 0]) / s, (m[1, 0] - m[0, 1]) / s]
  elif k == 1:
    s = 2.0 * np.sqrt(1.0 + m[0, 0] - m[1, 1] - m[2, 2])
    q = [(m[2, 1] - m[1, 2]) / s, s / 4, (m[0, 1] + m[1, 0]) / s, (m[0, 2] + m[2, 0]) / s]
  elif k == 2:
    s = 2.0 * np.sqrt(1.0 + m[1, 1] - m[0, 0] - m[2, 2])
    q = [(m[0, 2] - m[2, 0]) / s, (m[0, 1] + m[1, 0]) / s, s / 4, (m[1, 2] + m[2, 1]) / s]
  else:
    s = 2.0 * np.sqrt(1.0 + m[2, 2] - m[0, 0] - m[1, 1])
    q = [(m[1, 0] - m[0, 1]) / s, (m[0, 2] + m[2, 0]) / s, (m[1, 2] + m[2, 1]) / s, s / 4]
  return quat_canon(np.array(q))


def quat_canon(q) -> np.ndarray:
  """Normalise and pick the sign with w >= 0 (q and -q are the same rotation)."""
  q = np.asarray(q, np.float64)
  q = q / np.linalg.norm(q, axis=-1, keepdims=True)
  return np.where(q[..., :1] < 0, -q, q)


def quat_rotate(q, v) -> np.ndarray:
  """Rotate (..., 3) vectors v by (..., 4) unit quaternions q."""
  return np.einsum("...ij,...j->...i", quat_to_mat(q), np.asarray(v, np.float64))
