"""Analytic ray casts for the renderer: plane, sphere, capsule and box, in float32 numpy.

Vectors are component-first: a point or direction is an array of shape (3, ...) (or a (3,) constant), so that the
three components are contiguous planes and every formula below is a handful of whole-array operations. Directions
are unit length. Each cast returns the ray parameter of the first hit beyond `tmin`, or +inf on a miss, so a depth
buffer is a plain `np.minimum`.
"""
from __future__ import annotations

import numpy as np

INF = np.float32(np.inf)


def quat_to_mat(q: np.ndarray) -> np.ndarray:
  """(..., 4) (w,x,y,z) -> (..., 3, 3) rotation matrices; normalises first, so slightly drifted quaternions work."""
  q = q / np.maximum(np.linalg.norm(q, axis=-1, keepdims=True), 1e-12)
  w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
  r = np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
                2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], axis=-1)
  return r.reshape(q.shape[:-1] + (3, 3)).astype(np.float32)


def as_trajectory(x, k: int) -> np.ndarray:
  """(T, B, nbody, k), or (T, nbody, k) for a single env, -> float32 (T, B, nbody, k)."""
  a = np.asarray(x.numpy() if hasattr(x, "numpy") else x, np.float32)
  if a.ndim == 3: a = a[:, None]
  if a.ndim != 4 or a.shape[-1] != k: raise ValueError(f"expected a (T, B, nbody, {k}) trajectory, got {a.shape}")
  return a


def bound_extent(kind: str, size: np.ndarray) -> np.ndarray | None:
  """Half extents of the local bounding box of a geom; None for an (infinite) plane."""
  if kind == "sphere": return np.full(3, size[0], np.float32)
  if kind == "capsule": return np.array([size[0], size[0], size[1] + size[0]], np.float32)
  if kind == "box": return np.asarray(size[:3], np.float32)
  return None


def _local_dir(R, d):
  """Direction in the geom frame: R's columns are the geom axes in world, so local = R^T world."""
  return [R[0, i] * d[0] + R[1, i] * d[1] + R[2, i] * d[2] for i in range(3)]


def _local_point(c, R, p):
  return _local_dir(R, (p[0] - c[0], p[1] - c[1], p[2] - c[2]))


def _sphere_t(ox, oy, oz, dx, dy, dz, r, tmin):
  # near root only: rays start outside (camera) or just off a surface facing away (shadow rays)
  b = ox * dx + oy * dy + oz * dz
  disc = b * b - (ox * ox + oy * oy + oz * oz - r * r)
  t = -b - np.sqrt(np.maximum(disc, 0))
  return np.where((disc > 0) & (t > tmin), t, INF)


def _capsule_t(lo, ld, r, h, tmin):
  ox, oy, oz = lo
  dx, dy, dz = ld
  a = dx * dx + dy * dy
  b = ox * dx + oy * dy
  disc = b * b - a * (ox * ox + oy * oy - r * r)
  # a ray that misses the infinite cylinder misses the capsule, which lies inside it
  par = a < 1e-9
  tc = (-b - np.sqrt(np.maximum(disc, 0))) / np.where(par, 1, a)
  z = oz + tc * dz
  on_side = (disc > 0) & ~par & (np.abs(z) <= h)
  # entering the cylinder above the segment, the first thing in the way is the upper cap (and vice versa);
  # a ray along the axis meets the cap it travels towards
  zc = np.where(par, -dz, z)
  s = np.where(zc >= 0, h, -h)
  tcap = _sphere_t(ox, oy, oz - s, dx, dy, dz, r, tmin)
  t = np.where(on_side, tc, tcap)
  return np.where(t > tmin, t, INF)


def _box_t(lo, ld, s, tmin):
  tn, tf = None, None
  for i in range(3):
    inv = 1 / ld[i]  # +-inf for rays parallel to a slab: the slab then spans everything or nothing
    t1, t2 = (-s[i] - lo[i]) * inv, (s[i] - lo[i]) * inv
    lo_i, hi_i = np.minimum(t1, t2), np.maximum(t1, t2)
    tn = lo_i if tn is None else np.maximum(tn, lo_i)
    tf = hi_i if tf is None else np.minimum(tf, hi_i)
  return np.where((tn <= tf) & (tn > tmin), tn, INF)


def _plane_t(c, R, o, d, tmin):
  n = R[:, 2]
  den = n[0] * d[0] + n[1] * d[1] + n[2] * d[2]
  num = n[0] * (c[0] - o[0]) + n[1] * (c[1] - o[1]) + n[2] * (c[2] - o[2])
  t = num / np.where(np.abs(den) < 1e-12, np.float32(1e-12), den)
  return np.where(t > tmin, t, INF)


def cast(kind: str, c, R, size, o, d, tmin=1e-4) -> np.ndarray:
  """Ray parameter of the first hit of rays o + t d with a geom, +inf on a miss.

  c (3, ...) centre, R (3, 3, ...) rotation (columns = geom axes), size (3, ...): broadcast against the rays, so one
  call can cover the same geom in many envs."""
  if kind == "plane": return _plane_t(c, R, o, d, tmin)
  if kind == "sphere":
    return _sphere_t(o[0] - c[0], o[1] - c[1], o[2] - c[2], d[0], d[1], d[2], size[0], tmin)
  lo, ld = _local_point(c, R, o), _local_dir(R, d)
  if kind == "capsule": return _capsule_t(lo, ld, size[0], size[1], tmin)
  if kind == "box":
    with np.errstate(divide="ignore", invalid="ignore"): return _box_t(lo, ld, size, tmin)
  raise ValueError(f"unknown geom type {kind!r}")


def normal(kind: str, c, R, size, P: np.ndarray) -> np.ndarray:
  """Outward unit normals (3, ...) at surface points P (3, ...) of a geom (parameters broadcast as in `cast`)."""
  if kind == "plane": return np.stack([np.broadcast_to(R[i, 2], P.shape[1:]) for i in range(3)])
  if kind == "sphere": return np.stack([(P[i] - c[i]) / size[0] for i in range(3)])
  q = _local_point(c, R, P)
  if kind == "capsule":
    q[2] = q[2] - np.clip(q[2], -size[1], size[1])  # offset from the nearest point on the axis segment
    q = [qi / size[0] for qi in q]
  else:
    # the face is the axis along which the point is proportionally farthest out
    r0, r1, r2 = (np.abs(q[i]) / np.maximum(size[i], 1e-9) for i in range(3))
    a0 = (r0 >= r1) & (r0 >= r2)
    a1 = ~a0 & (r1 >= r2)
    a2 = ~a0 & ~a1
    q = [np.where(a, np.sign(qi), np.float32(0)) for a, qi in zip((a0, a1, a2), q)]
  return np.stack([R[i, 0] * q[0] + R[i, 1] * q[1] + R[i, 2] * q[2] for i in range(3)])
