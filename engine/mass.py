"""Mass properties of geoms and bodies, float64 numpy (scene build time).

A body's inertia is gathered in its user frame (the frame its JSON "pos"/"quat" place), then diagonalised: the
engine's body frame is the inertial frame (origin at the centre of mass, axes along the principal axes), so the
solver only ever needs a diagonal inverse inertia (DESIGN.md sec. 2).
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from engine.npquat import mat_to_quat, quat_to_mat


def geom_mass(kind: str, size, density: float) -> tuple[float, np.ndarray]:
  """Mass [kg] and principal moments (3,) [kg m^2] of a solid geom about its centre, in the geom frame.

  size: sphere (r,), capsule (r, half_length) along local z, box (hx, hy, hz) half extents. density [kg/m^3].
  """
  size, density = np.asarray(size, np.float64), np.float64(density)  # numpy floats overflow to inf, not an exception
  if kind == "sphere":
    r = size[0]
    m = density * 4.0 / 3.0 * np.pi * r ** 3
    return m, np.full(3, 0.4 * m * r * r)
  if kind == "box":
    hx, hy, hz = size[:3]
    m = density * 8.0 * hx * hy * hz
    return m, m / 3.0 * np.array([hy * hy + hz * hz, hx * hx + hz * hz, hx * hx + hy * hy])
  if kind == "capsule":
    # MuJoCo's capsule: a cylinder of height 2h plus two hemispheres; each hemisphere's centre of mass sits 3r/8
    # beyond the cylinder end, and 83/320 m r^2 + m (h + 3r/8)^2 summed over both simplifies to the line below
    r, h = size[0], size[1]
    m_cyl = density * np.pi * r * r * 2.0 * h
    m_sph = density * 4.0 / 3.0 * np.pi * r ** 3
    i_axis = m_cyl * 0.5 * r * r + m_sph * 0.4 * r * r
    i_trans = m_cyl * (0.25 * r * r + (2.0 * h) ** 2 / 12.0) + m_sph * (0.4 * r * r + 0.75 * r * h + h * h)
    return m_cyl + m_sph, np.array([i_trans, i_trans, i_axis])
  raise ValueError(f"geom type {kind!r} has no mass")


def body_mass(geoms) -> tuple[float, np.ndarray, np.ndarray]:
  """Combine solid geoms into one rigid body, in the body's user frame.

  geoms: iterable of (kind, size, density, pos (3,), quat (4,)) with pose relative to the user frame.
  Returns total mass [kg], centre of mass (3,) [m] and the 3x3 inertia tensor about the centre of mass [kg m^2].
  """
  parts = []
  for kind, size, density, pos, quat in geoms:
    m, moments = geom_mass(kind, size, density)
    rot = quat_to_mat(quat)
    parts.append((m, np.asarray(pos, np.float64), rot @ np.diag(moments) @ rot.T))  # R I R^T into the user frame
  mass = np.float64(sum(m for m, _, _ in parts))
  com = sum(m * c for m, c, _ in parts) / mass
  inertia = np.zeros((3, 3))
  for m, c, inertia_c in parts:
    d = c - com
    inertia += inertia_c + m * (d @ d * np.eye(3) - np.outer(d, d))  # parallel-axis theorem
  return mass, com, inertia


def principal_axes(inertia: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
  """Principal moments (3,) and the unit quaternion (w, x, y, z) of the principal frame relative to the input frame.

  The frame is chosen as close to the input axes as possible (an already diagonal tensor gives the identity), so
  scenes whose bodies are axis-aligned keep their axes and the choice is deterministic for repeated moments.
  """
  inertia = 0.5 * (inertia + inertia.T)
  off = inertia - np.diag(np.diag(inertia))
  if np.abs(off).max() <= 1e-12 * np.abs(np.diag(inertia)).max():
    return np.diag(inertia).copy(), np.array([1.0, 0.0, 0.0, 0.0])
  moments, vecs = np.linalg.eigh(inertia)
  # a repeated moment (a capsule's or cylinder's two across its axis, tilted in the body): eigh returns any basis of
  # that plane, which one depending on the LAPACK kernel (a converted MJCF model's frames differed by 20 degrees
  # between an Intel and an AMD machine's OpenBLAS, 2026-11-28), so choose the basis of the plane here
  if (k := _repeated(moments)) is not None:
    vecs = _closest_frame(vecs[:, k])
    return np.einsum("ik,ij,jk->k", vecs, inertia, vecs), mat_to_quat(vecs)   # the moments in that frame
  # eigh sorts by moment; reorder the columns to best match x, y, z and flip them to point along +x, +y, +z
  perm = max(itertools.permutations(range(3)), key=lambda p: sum(abs(vecs[k, p[k]]) for k in range(3)))
  vecs, moments = vecs[:, perm], moments[list(perm)]
  vecs = vecs * np.where(np.diag(vecs) < 0, -1.0, 1.0)
  if np.linalg.det(vecs) < 0:  # a reflection: flip the least aligned axis to get a proper rotation
    k = int(np.argmin(np.abs(np.diag(vecs))))
    vecs[:, k] = -vecs[:, k]
  return moments, mat_to_quat(vecs)


def _repeated(moments: np.ndarray) -> int | None:
  """The index of the one distinct moment of eigh's sorted three when the other two are equal to 1e-9 of the largest
  (eigh's eigenvectors in a plane so nearly repeated are rounding noise), else None. Three equal ones are a diagonal
  tensor, which principal_axes keeps as it is before it gets here."""
  tol = 1e-9 * np.abs(moments).max()
  low, high = moments[1] - moments[0] <= tol, moments[2] - moments[1] <= tol
  return 2 if low and not high else 0 if high and not low else None


def _closest_frame(u: np.ndarray) -> np.ndarray:
  """The rotation (columns: the frame's axes) with u, the distinct principal axis, as the input axis it is most
  aligned with (k, along +k) and the other two (i, j, cyclic after k) across it, turned about u to the angle that
  maximises their alignment v.e_i + w.e_j with the input axes: the same frame from any basis of the plane eigh gives."""
  k = int(np.argmax(np.abs(u)))
  i, j = (k + 1) % 3, (k + 2) % 3
  u = u * np.sign(u[k])
  a = np.eye(3)[i] - u[i] * u   # |u_i| <= |u_k| and u_i^2 + u_k^2 <= 1: e_i is at least 45 degrees from u
  a /= np.linalg.norm(a)
  b = np.cross(u, a)
  theta = math.atan2(b[i] - a[j], a[i] + b[j])   # v = cos a + sin b, w = u x v = cos b - sin a
  v = math.cos(theta) * a + math.sin(theta) * b
  out = np.zeros((3, 3))
  out[:, k], out[:, i], out[:, j] = u, v, np.cross(u, v)
  return out
