"""Narrowphase for the plane and the round shapes: plane/sphere/capsule pairs, and plane/box (DESIGN sec. 3).

A sphere is a point with a radius and a capsule a segment with a radius, so each round pair reduces to the closest
points between two points or segments, and `_spheres` then puts the surface points one radius out along the line
between them. Plane pairs take the normal from the plane's orientation, so they never degenerate; the round pairs
fall back to a fixed, documented axis where the line between the closest points has no direction. Every slot is
valid (speculative contacts keep a negative depth) except capsule_capsule's support slot, used only when the axes
are near parallel.
"""
from __future__ import annotations
from tinygrad import Tensor, dtypes
from oracle.collide import Contact, Geom, pair
from oracle.math3 import V3

EPS = 1e-6            # [m] closest points nearer than this have no usable direction: use the fallback normal
PARALLEL_SIN = 1e-5   # [-] |sin| of the angle between capsule axes under which the axes count as parallel
SUPPORT_SIN = 0.05    # [-] |sin| of that angle under which capsule_capsule adds its second (support) contact


def _all(like: Tensor) -> Tensor:
  """A True mask shaped like `like` (a broadcast constant: no buffer, no load)."""
  return Tensor.full(like.shape, True, dtype=dtypes.bool, device=like.device, buffer=False)


def _plane_point(plane: Geom, n: V3, p: V3, r: Tensor | None) -> Contact:
  """Plane (unit normal n through plane.pos) against the sphere (p, r), or the point p when r is None (a box
  corner). pb = p - r n is b's point deepest below the plane, pa its projection onto the plane, so
  depth = r - (p - plane.pos).n: the plane is infinite and one-sided, a centre below it is simply deeper."""
  pb = p if r is None else p - n * r
  pa = pb - n * (pb - plane.pos).dot(n)
  return Contact(pa, pb, n, _all(pa.x))


def _spheres(ca: V3, ra: Tensor, cb: V3, rb: Tensor, fallback: V3) -> Contact:
  """Sphere (ca, ra) against sphere (cb, rb): n = (cb - ca)/|cb - ca|, or the unit `fallback` where the centres are
  within EPS (any axis separates concentric spheres; norm_dir keeps the gradient finite there). pa = ca + ra n and
  pb = cb - rb n, so depth = ra + rb - |cb - ca|."""
  _, u, apart = (cb - ca).norm_dir(EPS)
  n = u.where(apart, fallback)
  pa = ca + n * ra
  return Contact(pa, cb - n * rb, n, _all(pa.x))


@pair("plane", "sphere", 1)
def plane_sphere(a: Geom, b: Geom) -> list[Contact]:
  """Plane a (normal: a's local +z) against sphere b (radius b.size.x): one contact below the centre."""
  return [_plane_point(a, a.rot.rotation_columns()[2], b.pos, b.size.x)]


@pair("plane", "capsule", 2)
def plane_capsule(a: Geom, b: Geom) -> list[Contact]:
  """Plane a against capsule b (radius size.x, half length size.y along its local z): one contact per end sphere,
  slot 0 the -z end, slot 1 the +z end. Both ends, not just the lower one, so a capsule lying flat rests on two
  points instead of rocking about one."""
  n, half = a.rot.rotation_columns()[2], b.rot.rotation_columns()[2] * b.size.y
  return [_plane_point(a, n, b.pos - half, b.size.x), _plane_point(a, n, b.pos + half, b.size.x)]


@pair("plane", "box", 8)
def plane_box(a: Geom, b: Geom) -> list[Contact]:
  """Plane a against box b (half extents size): one contact per corner, slot k at local corner
  (sx, sy, sz) * size with sx = -1 if bit 0 of k is clear else +1, sy from bit 1, sz from bit 2."""
  n, (bx, by, bz) = a.rot.rotation_columns()[2], b.rot.rotation_columns()
  ex, ey, ez = bx * b.size.x, by * b.size.y, bz * b.size.z
  sides = ((-ex, ex), (-ey, ey), (-ez, ez))
  return [_plane_point(a, n, b.pos + sides[0][k & 1] + sides[1][k >> 1 & 1] + sides[2][k >> 2], None)
          for k in range(8)]


@pair("sphere", "sphere", 1)
def sphere_sphere(a: Geom, b: Geom) -> list[Contact]:
  """Sphere a against sphere b. Coincident centres: n = world +z (b is pushed up), depth = ra + rb."""
  return [_spheres(a.pos, a.size.x, b.pos, b.size.x, V3(0.0, 0.0, 1.0))]


@pair("sphere", "capsule", 1)
def sphere_capsule(a: Geom, b: Geom) -> list[Contact]:
  """Sphere a against capsule b, at the point q of b's segment closest to a's centre. Centre on the segment:
  n = b's local +x, perpendicular to its axis (the shortest way out of a capsule), depth = ra + rb."""
  bx, _, u = b.rot.rotation_columns()
  t = (a.pos - b.pos).dot(u).clip(-b.size.y, b.size.y)  # projection of the centre onto the axis, kept on the segment
  return [_spheres(a.pos, a.size.x, b.pos + u * t, b.size.x, bx)]


@pair("capsule", "capsule", 2)
def capsule_capsule(a: Geom, b: Geom) -> list[Contact]:
  """Capsule a against capsule b. Slot 0: the closest points of the two segments. Slot 1 (support): where the axes
  are within asin(SUPPORT_SIN) of parallel and b's shadow on a's axis overlaps a's segment, the end of that overlap
  farther from slot 0, paired with its closest point on b; then side-by-side capsules rest on two points, the ends
  of the overlap. Elsewhere slot 1 is marked invalid (a second point would only repeat the crossing point and double
  its impulse); its points are still a finite pair of surface points.
  Degenerate cases: parallel axes (within PARALLEL_SIN) take slot 0 at the overlap's start, so the two slots are
  exactly the two ends; intersecting axes give n = ua x ub normalised, and collinear overlapping axes n = a's local
  +x, each with depth ra + rb."""
  (ax, _, ua), ub, ha, hb = a.rot.rotation_columns(), b.rot.rotation_columns()[2], a.size.y, b.size.y
  d = b.pos - a.pos
  cos, c, f = ua.dot(ub), ua.dot(d), ub.dot(d)
  # points a.pos + s ua and b.pos + t ub; |s ua - t ub - d|^2 is stationary at s = cos t + c and t = cos s - f
  cross = ua.cross(ub)
  sin2 = cross.dot(cross)  # = 1 - cos^2, but without the cancellation when nearly parallel
  _, perp, skew = cross.norm_dir(PARALLEL_SIN)
  # b's segment projects onto a's axis as s in c -+ |cos| hb; its overlap with a's segment [-ha, ha] is [lo, hi]
  spread = cos.abs() * hb
  lo, hi = (c - spread).maximum(-ha), (c + spread).minimum(ha)
  # closest points of the infinite lines (Ericson 2005, sec. 5.1.9), clamped to a's segment; then the closest t on
  # b for that s, clamped, and s again for that t: exact for segments, as in Ericson's clamp-and-recompute
  s = skew.where((c - cos * f) / skew.where(sin2, 1.0), lo).clip(-ha, ha)
  t = (cos * s - f).clip(-hb, hb)
  s = (cos * t + c).clip(-ha, ha)
  fallback = perp.where(skew, ax)
  closest = _spheres(a.pos + ua * s, a.size.x, b.pos + ub * t, b.size.x, fallback)
  s1 = (s - lo > hi - s).where(lo, hi)
  t1 = (cos * s1 - f).clip(-hb, hb)
  support = _spheres(a.pos + ua * s1, a.size.x, b.pos + ub * t1, b.size.x, fallback)
  valid = (sin2 < SUPPORT_SIN * SUPPORT_SIN) & (lo <= hi)
  return [closest, Contact(support.pa, support.pb, support.n, valid)]
