"""Plane/sphere/capsule narrowphase (oracle/collide/primitives.py) against hand-computed geometry, and its gradients.

Each pair function runs once on all of its cases at once, one case per lane (float64, CPU), so the module compiles
three graphs per function: the contacts, the gradient of the summed depth, and that gradient again in float32 on the
degenerate lanes. Expected contacts are written from the geometry: points, unit normals and depths worked out by
hand, never read back from the code.
"""
from __future__ import annotations
import functools
import math
import numpy as np
import pytest
from tinygrad import Tensor, dtypes
from oracle.collide import NARROWPHASE, Geom
from oracle.collide import primitives as P
from oracle.math3 import V3, Quat

S2, S3 = math.sqrt(0.5), math.sqrt(3.0) / 2.0
X, Y, Z = (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)
MX, MZ = (-1.0, 0.0, 0.0), (0.0, 0.0, -1.0)


def quat(axis, deg: float) -> tuple:
  """(w, x, y, z) of a turn of `deg` degrees about `axis` (right-handed)."""
  a = np.asarray(axis, np.float64) / np.linalg.norm(axis)
  h = math.radians(deg) / 2.0
  return (math.cos(h), *(a * math.sin(h)))


I = (1.0, 0.0, 0.0, 0.0)
RY90 = quat(Y, 90.0)     # local z -> +x, local x -> -z
RYM90 = quat(Y, -90.0)   # local z -> -x
RXM90 = quat(X, -90.0)   # local z -> +y
RX30 = quat(X, 30.0)     # local z -> (0, -1/2, sqrt(3)/2), local y -> (0, sqrt(3)/2, 1/2)
RXM45 = quat(X, -45.0)   # local z -> (0, 1, 1)/sqrt(2)
RX180 = quat(X, 180.0)   # local z -> -z: a plane facing down


def case(pos_a, rot_a, size_a, pos_b, rot_b, size_b) -> tuple:
  return (pos_a, rot_a, size_a, pos_b, rot_b, size_b)


def slot(pa, pb, n, depth, valid=True) -> tuple:
  return (pa, pb, n, depth, valid)


def sph(r): return (r, 0.0, 0.0)
def cap(r, half): return (r, half, 0.0)


def add(*vs): return tuple(float(x) for x in np.sum([np.asarray(v, np.float64) for v in vs], axis=0))
def mul(v, s): return tuple(float(x) * s for x in v)


# ---------------------------------------------------------------- lanes


def geoms(cases: list[tuple], dtype=dtypes.float64) -> tuple[Geom, Geom, list[Tensor]]:
  """One lane per case: every component a (1, P) tensor of `dtype`. Returns (a, b, leaves), leaves being the six
  position components (a.pos.x, .y, .z, b.pos.x, .y, .z), the targets of `Tensor.gradient`."""
  def col(i: int, k: int) -> Tensor: return Tensor(np.array([[c[i][k] for c in cases]], np.float64), dtype=dtype)
  leaves = [col(i, k) for i in (0, 3) for k in range(3)]
  a = Geom(V3(*leaves[:3]), Quat(*(col(1, k) for k in range(4))), V3(*(col(2, k) for k in range(3))))
  b = Geom(V3(*leaves[3:]), Quat(*(col(4, k) for k in range(4))), V3(*(col(5, k) for k in range(3))))
  return a, b, leaves


def contacts(fn, cases: list[tuple]) -> np.ndarray:
  """fn's slots on the lanes as one realised array (nslot, 10, P): pa xyz, pb xyz, n xyz, valid."""
  a, b, _ = geoms(cases)
  out = fn(a, b)
  shape = out[0].pa.x.shape
  rows = [t.cast(dtypes.float64).expand(shape) for c in out
          for t in (c.pa.x, c.pa.y, c.pa.z, c.pb.x, c.pb.y, c.pb.z, c.n.x, c.n.y, c.n.z, c.valid)]
  return Tensor.stack(*rows).numpy().reshape(len(out), 10, len(cases))


def depth_grads(fn, cases: list[tuple], dtype=dtypes.float64) -> tuple[np.ndarray, np.ndarray]:
  """(grad (6, P), depth (P,)): d(sum of every slot's depth over all lanes)/d(position components) per lane, and
  each lane's summed depth; one graph."""
  a, b, leaves = geoms(cases, dtype)
  per_lane = sum(c.depth() for c in fn(a, b))
  out = Tensor.stack(*per_lane.sum().gradient(*leaves), per_lane).cast(dtypes.float64).numpy().reshape(7, len(cases))
  return out[:6], out[6]


# ---------------------------------------------------------------- hand-computed cases

PLANE_SPHERE = {  # plane a through pos_a with normal local +z; sphere b
  "resting": (case((0, 0, 0), I, sph(0), (1, 2, 0.3), I, sph(0.5)),
              [slot((1, 2, 0), (1, 2, -0.2), Z, 0.2)]),
  "touching": (case((0, 0, 0), I, sph(0), (0, 0, 0.5), I, sph(0.5)),
               [slot((0, 0, 0), (0, 0, 0), Z, 0.0)]),
  "separated": (case((0, 0, 0), I, sph(0), (0, 0, 2), I, sph(0.5)),
                [slot((0, 0, 0), (0, 0, 1.5), Z, -1.5)]),
  "centre_below": (case((0, 0, 0), I, sph(0), (3, -1, -0.2), I, sph(0.5)),
                   [slot((3, -1, 0), (3, -1, -0.7), Z, 0.7)]),
  # plane through (0,0,1) tilted 30 deg about x; centre 0.3 above it along n, 2 m along the plane's x
  "tilted_plane": (case((0, 0, 1), RX30, sph(0), add((2, 0, 1), mul((0, -0.5, S3), 0.3)), I, sph(0.5)),
                   [slot((2, 0, 1), add((2, 0, 1), mul((0, -0.5, S3), -0.2)), (0, -0.5, S3), 0.2)]),
  # the plane faces -z: a centre 0.2 above the origin is 0.2 behind it, so 0.7 deep; pb is above the centre
  "facing_down": (case((0, 0, 0), RX180, sph(0), (0, 0, 0.2), I, sph(0.5)),
                  [slot((0, 0, 0), (0, 0, 0.7), MZ, 0.7)]),
}

PLANE_CAPSULE = {  # slot 0 the capsule's -z end, slot 1 its +z end
  "lying": (case((0, 0, 0), I, sph(0), (0, 0, 0.2), RY90, cap(0.25, 1.0)),
            [slot((-1, 0, 0), (-1, 0, -0.05), Z, 0.05), slot((1, 0, 0), (1, 0, -0.05), Z, 0.05)]),
  "upright_touching": (case((0, 0, 0), I, sph(0), (0, 0, 1.25), I, cap(0.25, 1.0)),
                       [slot((0, 0, 0), (0, 0, 0), Z, 0.0), slot((0, 0, 0), (0, 0, 2.0), Z, -2.0)]),
  # axis (sin 60, 0, cos 60): ends at z = 0.4 -+ 0.5, one 0.1 below the plane and one 0.9 above
  "tilted_capsule": (case((0, 0, 0), I, sph(0), (0, 1, 0.4), quat(Y, 60.0), cap(0.1, 1.0)),
                     [slot((-S3, 1, 0), (-S3, 1, -0.2), Z, 0.2), slot((S3, 1, 0), (S3, 1, 0.8), Z, -0.8)]),
  # plane through (1,1,1) with n = (0,1,1)/sqrt 2; capsule along x with its axis 0.1 behind the plane, r = 0.3
  "tilted_plane": (case((1, 1, 1), RXM45, sph(0), add((1, 1, 1), mul((0, S2, S2), -0.1)), RY90, cap(0.3, 0.5)),
                   [slot(add((0.5, 1, 1)), add((0.5, 1, 1), mul((0, S2, S2), -0.4)), (0, S2, S2), 0.4),
                    slot(add((1.5, 1, 1)), add((1.5, 1, 1), mul((0, S2, S2), -0.4)), (0, S2, S2), 0.4)]),
  "zero_length": (case((0, 0, 0), I, sph(0), (0, 0, 0.3), I, cap(0.5, 0.0)),
                  [slot((0, 0, 0), (0, 0, -0.2), Z, 0.2)] * 2),
}


def box_on_plane(plane_pos, n, centre, axes, half) -> list[tuple]:
  """The 8 corner slots of a box (centre, world axes columns, half extents) on a plane (plane_pos, unit n), corner
  k at local signs (bit 0 -> x, bit 1 -> y, bit 2 -> z; clear = -1): pb the corner, pa its foot on the plane."""
  out = []
  for k in range(8):
    s = [1.0 if k >> i & 1 else -1.0 for i in range(3)]
    pb = np.asarray(centre, np.float64) + sum(s[i] * half[i] * np.asarray(axes[i], np.float64) for i in range(3))
    h = float((pb - np.asarray(plane_pos, np.float64)) @ np.asarray(n, np.float64))  # height above the plane
    out.append(slot(tuple(pb - h * np.asarray(n, np.float64)), tuple(pb), n, -h))
  return out


PLANE_BOX = {
  # bottom face 0.05 below the ground (depth 0.05), top face 0.45 above it
  "flat": (case((0, 0, 0), I, sph(0), (0, 0, 0.2), I, (1.0, 0.5, 0.25)),
           [slot((sx, sy * 0.5, 0), (sx, sy * 0.5, 0.2 + sz * 0.25), Z, 0.05 if sz < 0 else -0.45)
            for sz in (-1, 1) for sy in (-1, 1) for sx in (-1, 1)]),
  # unit cube turned 45 deg about y, standing on an edge (corners with sx = +1, sz = -1) sunk 0.1 into the ground
  "rotated_box": (case((0, 0, 0), I, sph(0), (0, 0, S2 - 0.1), quat(Y, 45.0), (0.5, 0.5, 0.5)),
                  box_on_plane((0, 0, 0), Z, (0, 0, S2 - 0.1), [(S2, 0, -S2), Y, (S2, 0, S2)], (0.5, 0.5, 0.5))),
  # box lying flat on a plane tilted 30 deg about x (the same turn), centre 0.08 above it: bottom corners 0.02 deep
  "tilted_plane": (case((0.5, -0.5, 0.2), RX30, sph(0), add((0.5, -0.5, 0.2), (0.4, 0, 0), mul((0, -0.5, S3), 0.08)),
                        RX30, (0.2, 0.3, 0.1)),
                   box_on_plane((0.5, -0.5, 0.2), (0, -0.5, S3), add((0.5, -0.5, 0.2), (0.4, 0, 0),
                                mul((0, -0.5, S3), 0.08)), [X, (0, S3, 0.5), (0, -0.5, S3)], (0.2, 0.3, 0.1))),
}

SPHERE_SPHERE = {
  "touching": (case((0, 0, 0), I, sph(0.5), (0.6, 0.8, 0), I, sph(0.5)),
               [slot((0.3, 0.4, 0), (0.3, 0.4, 0), (0.6, 0.8, 0), 0.0)]),
  "overlapping": (case((1, 1, 1), I, sph(0.3), (1, 1, 1.4), I, sph(0.2)),
                  [slot((1, 1, 1.3), (1, 1, 1.2), Z, 0.1)]),
  "separated": (case((0, 0, 0), I, sph(1.0), (3, 4, 0), I, sph(1.0)),
                [slot((0.6, 0.8, 0), (2.4, 3.2, 0), (0.6, 0.8, 0), -3.0)]),
  "deep": (case((0, 0, 0), I, sph(1.0), (-1e-3, 0, 0), I, sph(1.0)),
           [slot((-1, 0, 0), (0.999, 0, 0), MX, 1.999)]),
  # coincident centres: the fallback normal world +z, depth ra + rb
  "coincident": (case((2, -1, 0.5), I, sph(0.4), (2, -1, 0.5), I, sph(0.3)),
                 [slot((2, -1, 0.9), (2, -1, 0.2), Z, 0.7)]),
  # 1e-8 m apart along x, under EPS: still the fallback, and the offset is orthogonal to it so depth is exact
  "nearly_coincident": (case((0, 0, 0), I, sph(1.0), (1e-8, 0, 0), I, sph(1.0)),
                        [slot((0, 0, 1), (1e-8, 0, -1), Z, 2.0)]),
}

SPHERE_CAPSULE = {  # sphere a (r 0.3) against a capsule b (r 0.2) along z, half length 1 unless noted
  "side": (case((0.4, 0, 0.5), I, sph(0.3), (0, 0, 0), I, cap(0.2, 1.0)),
           [slot((0.1, 0, 0.5), (0.2, 0, 0.5), MX, 0.1)]),
  "beyond_end": (case((0, 0, 1.4), I, sph(0.3), (0, 0, 0), I, cap(0.2, 1.0)),
                 [slot((0, 0, 1.1), (0, 0, 1.2), MZ, 0.1)]),
  # centre (0.3, 0, 1.4) is 0.5 from the end point (0, 0, 1): a 3-4-5 triangle, just touching
  "touching_end": (case((0.3, 0, 1.4), I, sph(0.3), (0, 0, 0), I, cap(0.2, 1.0)),
                   [slot((0.12, 0, 1.16), (0.12, 0, 1.16), (-0.6, 0, -0.8), 0.0)]),
  "separated": (case((2, 0, 0), I, sph(0.3), (0, 0, 0), I, cap(0.2, 1.0)),
                [slot((1.7, 0, 0), (0.2, 0, 0), MX, -1.5)]),
  # centre on the axis: the fallback normal, the capsule's local +x (here world +x), depth ra + rb
  "on_axis": (case((0, 0, 0.3), I, sph(0.3), (0, 0, 0), I, cap(0.2, 1.0)),
              [slot((0.3, 0, 0.3), (-0.2, 0, 0.3), X, 0.5)]),
  # capsule along world x (turned 90 deg about y) at (1,2,3), half length 0.5
  "rotated": (case((1.2, 2, 3.4), I, sph(0.3), (1, 2, 3), RY90, cap(0.2, 0.5)),
              [slot((1.2, 2, 3.1), (1.2, 2, 3.2), MZ, 0.1)]),
  # on the axis of the turned capsule: its local +x is world -z
  "rotated_on_axis": (case((0.8, 2, 3), I, sph(0.3), (1, 2, 3), RY90, cap(0.2, 0.5)),
                      [slot((0.8, 2, 2.7), (0.8, 2, 3.2), MZ, 0.5)]),
  "zero_length": (case((0.3, 0.4, 0), I, sph(0.3), (0, 0, 0), I, cap(0.2, 0.0)),
                  [slot((0.12, 0.16, 0), (0.12, 0.16, 0), (-0.6, -0.8, 0), 0.0)]),
}

ALPHA = math.asin(0.02)  # a tilt under SUPPORT_SIN: still "side by side"
CA = math.cos(ALPHA)
T1 = CA * CA - 0.2 * 0.02  # closest t on b to a's point s = cos(alpha): its projection onto b's axis
CAPSULE_CAPSULE = {  # both radii 0.1; a along world x (turned 90 deg about y) at the origin, half length 1
  # b along y, 0.15 above a's axis: they cross at x = 0.3
  "crossed": (case((0, 0, 0), RY90, cap(0.1, 1), (0.3, -0.2, 0.15), RXM90, cap(0.1, 1)),
              [slot((0.3, 0, 0.1), (0.3, 0, 0.05), Z, 0.05), slot(None, None, None, None, False)]),
  # the axes intersect: normal ua x ub = x cross y = +z, depth ra + rb
  "crossed_intersecting": (case((0, 0, 0), RY90, cap(0.1, 1), (0.3, -0.2, 0), RXM90, cap(0.1, 1)),
                           [slot((0.3, 0, 0.1), (0.3, 0, -0.1), Z, 0.2), slot(None, None, None, None, False)]),
  # b along (1,1,0)/sqrt 2 through (0.2, 0.1, 0.15): the lines pass closest at s = 0.1, inside both segments
  "skew": (case((0, 0, 0), RY90, cap(0.1, 1), (0.2, 0.1, 0.15), quat((-1, 1, 0), 90.0), cap(0.1, 1)),
           [slot((0.1, 0, 0.1), (0.1, 0, 0.05), Z, 0.05), slot(None, None, None, None, False)]),
  # b along y over x in [0.5, 1.5] at x = 1.5: closest are a's +x end (1,0,0) and b's end (1.5, 0.5, 0)
  "ends": (case((0, 0, 0), RY90, cap(0.1, 1), (1.5, 1, 0), RXM90, cap(0.1, 0.5)),
           [slot((1 + 0.1 * S2, 0.1 * S2, 0), (1.5 - 0.1 * S2, 0.5 - 0.1 * S2, 0), (S2, S2, 0), 0.2 - S2),
            slot(None, None, None, None, False)]),
  # parallel, b 0.15 above and shifted +0.5: overlap x in [-0.5, 1], both ends supported
  "parallel": (case((0, 0, 0), RY90, cap(0.1, 1), (0.5, 0, 0.15), RY90, cap(0.1, 1)),
               [slot((-0.5, 0, 0.1), (-0.5, 0, 0.05), Z, 0.05), slot((1, 0, 0.1), (1, 0, 0.05), Z, 0.05)]),
  # antiparallel b (axis -x), half length 0.25 at x = 0.5, 0.15 along +y: overlap x in [0.25, 0.75]
  "antiparallel": (case((0, 0, 0), RY90, cap(0.1, 1), (0.5, 0.15, 0), RYM90, cap(0.1, 0.25)),
                   [slot((0.25, 0.1, 0), (0.25, 0.05, 0), Y, 0.05), slot((0.75, 0.1, 0), (0.75, 0.05, 0), Y, 0.05)]),
  # collinear, end to end with a 0.5 gap: one contact between the facing ends, no overlap so no support
  "collinear_apart": (case((0, 0, 0), RY90, cap(0.1, 1), (2.5, 0, 0), RY90, cap(0.1, 1)),
                      [slot((1.1, 0, 0), (1.4, 0, 0), X, -0.3), slot(None, None, None, None, False)]),
  # collinear and overlapping on x in [-0.5, 1]: no direction between the axes, fallback a's local +x = world -z
  "collinear_overlap": (case((0, 0, 0), RY90, cap(0.1, 1), (0.5, 0, 0), RY90, cap(0.1, 1)),
                        [slot((-0.5, 0, -0.1), (-0.5, 0, 0.1), MZ, 0.2), slot((1, 0, -0.1), (1, 0, 0.1), MZ, 0.2)]),
  # b 0.2 above a, tilted by alpha in the xz plane (axis (cos a, 0, sin a)): its low end (-cos a, 0, 0.18) is the
  # closest; the support at the overlap's far end s = cos a is cos a (0.2 + sin a) from b's axis, along b's normal
  "near_parallel": (case((0, 0, 0), RY90, cap(0.1, 1), (0, 0, 0.2), quat(Y, 90.0 - math.degrees(ALPHA)), cap(0.1, 1)),
                    [slot((-CA, 0, 0.1), (-CA, 0, 0.08), Z, 0.02),
                     slot(add((CA, 0, 0), mul((-0.02, 0, CA), 0.1)),
                          add((T1 * CA, 0, 0.2 + T1 * 0.02), mul((-0.02, 0, CA), -0.1)), (-0.02, 0, CA),
                          0.2 - 0.22 * CA)]),
}

TABLES = {"plane_sphere": PLANE_SPHERE, "plane_capsule": PLANE_CAPSULE, "plane_box": PLANE_BOX,
          "sphere_sphere": SPHERE_SPHERE, "sphere_capsule": SPHERE_CAPSULE, "capsule_capsule": CAPSULE_CAPSULE}


@functools.cache
def computed(fn_name: str) -> np.ndarray:
  return contacts(getattr(P, fn_name), [c for c, _ in TABLES[fn_name].values()])


def check(fn_name: str, name: str):
  table = TABLES[fn_name]
  lane = list(table).index(name)
  got = computed(fn_name)[:, :, lane]
  expected = table[name][1]
  assert got.shape[0] == len(expected) == NARROWPHASE[tuple(fn_name.split("_"))][1]
  for k, (pa, pb, n, depth, valid) in enumerate(expected):
    g = got[k]
    where = f"{fn_name}[{name}] slot {k}"
    assert bool(g[9]) == valid, f"{where}: valid"
    n_got = g[6:9]
    # every slot, used or not, holds finite points and a unit normal
    assert np.isfinite(g).all() and abs(np.linalg.norm(n_got) - 1.0) < 1e-12, f"{where}: {g}"
    if pa is None: continue
    np.testing.assert_allclose(g[0:3], pa, atol=1e-12, err_msg=f"{where}: pa")
    np.testing.assert_allclose(g[3:6], pb, atol=1e-12, err_msg=f"{where}: pb")
    np.testing.assert_allclose(n_got, n, atol=1e-12, err_msg=f"{where}: n")
    assert (g[0:3] - g[3:6]) @ n_got == pytest.approx(depth, abs=1e-12), f"{where}: depth"


@pytest.mark.parametrize("pair,name", [(p, n) for p, cases in TABLES.items() for n in cases])
def test_verify_pair(pair, name): check(pair, name)


def test_verify_plane_box_hand_depths():
  """box_on_plane's corner depths against the numbers worked out by hand."""
  assert [s[3] for s in PLANE_BOX["rotated_box"][1]] == pytest.approx(
    [-(S2 - 0.1), 0.1, -(S2 - 0.1), 0.1, -(2 * S2 - 0.1), -(S2 - 0.1), -(2 * S2 - 0.1), -(S2 - 0.1)])
  assert [s[3] for s in PLANE_BOX["tilted_plane"][1]] == pytest.approx([0.02] * 4 + [-0.18] * 4)




# ---------------------------------------------------------------- gradients

H = 1e-6  # [m] central-difference step: O(H^2) truncation ~1e-12, rounding ~1e-16/H = 1e-10 on float64
TILT = quat((1, 2, 3), 40.0)  # a plane or a shape in no special orientation


def perturbed(c: tuple) -> list[tuple]:
  """12 copies of case c: each of the six position components moved by +H, then -H."""
  out = []
  for i in (0, 3):
    for k in range(3):
      for sign in (1.0, -1.0):
        pos = list(c[i])
        pos[k] += sign * H
        out.append(tuple(tuple(pos) if j == i else c[j] for j in range(6)))
  return out


def check_grad(fn_name: str, exact: list[tuple], generic: list[tuple]):
  """d(sum of all slots' depth)/d(a.pos, b.pos): equal to the hand-derived `exact` [(case, 6 numbers)] (the
  degenerate lanes, where it follows from the documented fallback normal), and to float64 central differences on
  the `generic` cases; the exact lanes also in float32. Invalid slots count too, so a NaN hiding behind `valid`
  would show."""
  cases = [c for c, _ in exact] + generic + [p for c in generic for p in perturbed(c)]
  grad, depth = depth_grads(getattr(P, fn_name), cases)
  assert np.isfinite(grad).all() and np.isfinite(depth).all(), (grad, depth)
  for lane, (_, want) in enumerate(exact):
    np.testing.assert_allclose(grad[:, lane], want, atol=1e-12, err_msg=f"{fn_name} exact lane {lane}")
  ne, ng = len(exact), len(generic)
  # the simulation runs in float32: the degenerate lanes again there, to float32 rounding
  grad32, depth32 = depth_grads(getattr(P, fn_name), [c for c, _ in exact], dtypes.float32)
  assert np.isfinite(grad32).all() and np.isfinite(depth32).all(), (grad32, depth32)
  np.testing.assert_allclose(grad32, np.array([w for _, w in exact], np.float64).T, atol=1e-5, err_msg="float32")
  for j in range(ng):
    d = depth[ne + ng + 12 * j:ne + ng + 12 * (j + 1)]
    fd = (d[0::2] - d[1::2]) / (2 * H)
    np.testing.assert_allclose(grad[:, ne + j], fd, atol=1e-8, err_msg=f"{fn_name} generic lane {j}")
    assert np.abs(fd).max() > 0.1, "degenerate test case: depth does not depend on the positions"


def plane_grad(n, slots: int) -> tuple:
  """Every plane contact's depth is r - (p - plane.pos).n: +n per slot for the plane, -n for the shape."""
  return tuple(slots * x for x in n) + tuple(-slots * x for x in n)


def test_grad_plane_sphere():
  check_grad("plane_sphere", [(PLANE_SPHERE["centre_below"][0], plane_grad(Z, 1)),
                              (PLANE_SPHERE["tilted_plane"][0], plane_grad((0, -0.5, S3), 1))],
             [case((0.1, 0.2, 0.3), TILT, sph(0), (0.5, -0.3, 0.6), I, sph(0.4))])


def test_grad_plane_capsule():
  check_grad("plane_capsule", [(PLANE_CAPSULE["zero_length"][0], plane_grad(Z, 2)),
                               (PLANE_CAPSULE["tilted_plane"][0], plane_grad((0, S2, S2), 2))],
             [case((0.1, 0.2, 0.3), TILT, sph(0), (0.4, -0.2, 0.5), quat((-2, 1, 0.5), 70.0), cap(0.2, 0.6))])


def test_grad_plane_box():
  check_grad("plane_box", [(PLANE_BOX["rotated_box"][0], plane_grad(Z, 8)),
                           (PLANE_BOX["tilted_plane"][0], plane_grad((0, -0.5, S3), 8))],
             [case((0.1, 0.2, 0.3), TILT, sph(0), (0.4, -0.2, 0.5), quat((0.3, -1, 2), 50.0), (0.3, 0.2, 0.4))])


def test_grad_sphere_sphere():
  # coincident centres: depth = (ca - cb).z + ra + rb with the fallback +z
  check_grad("sphere_sphere", [(SPHERE_SPHERE["coincident"][0], (0, 0, 1, 0, 0, -1)),
                               (SPHERE_SPHERE["nearly_coincident"][0], (0, 0, 1, 0, 0, -1))],
             [case((0.1, 0.2, 0.3), I, sph(0.5), (0.4, -0.1, 0.7), I, sph(0.3))])


def test_grad_sphere_capsule():
  # centre on the axis: the fallback (capsule's local +x) is normal to the axis, so sliding along it changes nothing
  check_grad("sphere_capsule", [(SPHERE_CAPSULE["on_axis"][0], (1, 0, 0, -1, 0, 0)),
                                (SPHERE_CAPSULE["rotated_on_axis"][0], (0, 0, -1, 0, 0, 1))],
             [case((0.3, 0.2, 0.1), I, sph(0.3), (0.05, -0.1, 0.2), TILT, cap(0.2, 0.5)),      # beside the segment
              case((0.6, 0.5, 0.9), I, sph(0.3), (0.05, -0.1, 0.2), TILT, cap(0.2, 0.5))])     # beyond its +z end


def test_grad_capsule_capsule():
  # both slots count: intersecting axes give n = +z in both, collinear axes the fallback -z, parallel axes depth
  # ra + rb - (distance between the axes), moved by either position only along n
  check_grad("capsule_capsule", [(CAPSULE_CAPSULE["crossed_intersecting"][0], (0, 0, 2, 0, 0, -2)),
                                 (CAPSULE_CAPSULE["collinear_overlap"][0], (0, 0, -2, 0, 0, 2)),
                                 (CAPSULE_CAPSULE["parallel"][0], (0, 0, 2, 0, 0, -2))],
             [CAPSULE_CAPSULE["skew"][0], CAPSULE_CAPSULE["ends"][0], CAPSULE_CAPSULE["near_parallel"][0],
              case((0.1, -0.2, 0.3), TILT, cap(0.2, 0.7), (0.3, 0.1, 0.2), quat((-1, 0.5, 2), 100.0), cap(0.1, 0.4))])
