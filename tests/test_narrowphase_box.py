"""Box narrowphase (sphere_box, capsule_box, box_box) against hand-computed contacts, and its gradients.

Each pair function runs once (float64, CPU) on a batch of lanes, one case per lane, with the gradient of the summed
depth over valid slots w.r.t. both geoms' positions and rotations in the same realise: the expected contacts come
from the geometry of each case (comments show the arithmetic); the gradient lanes are the same hand cases (must be
finite, and analytic where the depth is a plain height) plus generic poses with +-EPS copies for central differences.
"""
from __future__ import annotations
import math
import numpy as np
import pytest
from tinygrad import Tensor, dtypes
from oracle.collide import Geom
from oracle.collide.box import CAPSULE_BISECT, capsule_box, sphere_box
from oracle.collide.box_box import MARGIN, box_box
from oracle.math3 import V3, Quat

I = (1.0, 0.0, 0.0, 0.0)
S2, S3 = math.sqrt(2.0), math.sqrt(3.0)
FD_EPS = 1e-6  # [m] or [-] central-difference step on positions and quaternion components (float64)


def qa(axis, deg: float) -> tuple:
  """Unit quaternion (w, x, y, z): rotation by `deg` degrees about `axis`."""
  a = np.asarray(axis, np.float64) / np.linalg.norm(axis)
  h = math.radians(deg) / 2
  return (math.cos(h), *(a * math.sin(h)))


def qmul(p, q) -> tuple:
  (w1, x1, y1, z1), (w2, x2, y2, z2) = p, q
  return (w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
          w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2)


def rotate(q, v) -> np.ndarray:
  u, w = np.asarray(q[1:]), q[0]
  t = 2 * np.cross(u, v)
  return np.asarray(v) + w * t + np.cross(u, t)


def lanes(cases):
  """Geoms a and b with one lane per case ((pos, quat, size) for a, then for b): components (1, P) float64 tensors,
  plus the 14 differentiated components (a.pos, b.pos, a.rot, b.rot) in that order."""
  geoms, params = [], []
  for g in range(2):
    cols = [np.array([c[g][f] for c in cases], np.float64).T for f in range(3)]
    pos, rot, size = ([Tensor(x[None], dtype=dtypes.float64).realize() for x in col] for col in cols)
    geoms.append(Geom(V3(*pos), Quat(*rot), V3(*size)))
    params.append((pos, rot))
  return geoms[0], geoms[1], params[0][0] + params[1][0] + params[0][1] + params[1][1]


def fd_lanes(case) -> list:
  """The case, then for each of its 14 differentiated components a +FD_EPS and a -FD_EPS copy."""
  out = [case]
  for k in range(14):
    g, field, comp = (k // 3) % 2 if k < 6 else (k - 6) // 4, 0 if k < 6 else 1, k % 3 if k < 6 else (k - 6) % 4
    for s in (FD_EPS, -FD_EPS):
      geom = [list(case[0]), list(case[1])]
      v = list(geom[g][field])
      v[comp] += s
      geom[g][field] = tuple(v)
      out.append((tuple(geom[0]), tuple(geom[1])))
  return out


def run(fn, cases):
  """fn on all cases in one realise: pa, pb, n (S, P, 3), depth (S, P), valid (S, P) and grad (14, P) of the
  summed depth over valid slots (a.pos xyz, b.pos xyz, a.rot wxyz, b.rot wxyz)."""
  a, b, params = lanes(cases)
  cs = fn(a, b)
  total = sum(c.valid.where(c.depth(), 0.0) for c in cs)
  grads = total.gradient(*params, gradient=Tensor.ones(*total.shape, dtype=dtypes.float64))
  cols = [x.expand(total.shape) for c in cs for x in (c.pa.x, c.pa.y, c.pa.z, c.pb.x, c.pb.y, c.pb.z, c.n.x, c.n.y,
                                                       c.n.z, c.depth(), c.valid.cast(dtypes.float64))]
  # one stacked realise: separate outputs would each get a kernel, materialising the shared intermediates
  out = Tensor.stack(*cols, *(g.expand(total.shape) for g in grads)).numpy()[:, 0]
  per = out[:11 * len(cs)].reshape(len(cs), 11, -1)
  return dict(pa=per[:, 0:3].transpose(0, 2, 1), pb=per[:, 3:6].transpose(0, 2, 1), n=per[:, 6:9].transpose(0, 2, 1),
              depth=per[:, 9], valid=per[:, 10] > 0.5, grad=out[11 * len(cs):])


def fd_check(res, start: int, name: str):
  """Autograd at lane `start` vs central differences over the next 28 lanes; the contact set must not change."""
  sums = np.where(res["valid"], res["depth"], 0.0).sum(0)
  assert (res["valid"][:, start:start + 29] == res["valid"][:, start:start + 1]).all(), f"{name}: contact set changed"
  fd = (sums[start + 1:start + 29:2] - sums[start + 2:start + 29:2]) / (2 * FD_EPS)
  np.testing.assert_allclose(res["grad"][:, start], fd, rtol=1e-6, atol=1e-7, err_msg=name)
  assert np.abs(fd).max() > 0.1, name  # the case moves something


def check_slot(res, lane: int, slot: int, pa, pb, n, depth: float, name: str, tol=1e-12):
  got = {k: res[k][slot, lane] for k in ("pa", "pb", "n", "depth", "valid")}
  assert got["valid"], f"{name} slot {slot}: invalid"
  for k, v in (("pa", pa), ("pb", pb), ("n", n), ("depth", depth)):
    np.testing.assert_allclose(got[k], v, rtol=0, atol=tol, err_msg=f"{name} slot {slot} {k}")


# --- sphere-box: a = sphere (pos, I, (r, 0, 0)), b = box ---
def sph(p, r): return (p, I, (r, 0.0, 0.0))


UNIT = ((0.0, 0.0, 0.0), I, (1.0, 1.0, 1.0))
BOX123 = ((0.0, 0.0, 0.0), I, (1.0, 2.0, 3.0))
ROT_Z45 = ((1.0, 0.0, 0.0), qa((0, 0, 1), 45), (1.0, 1.0, 1.0))
ROT_X30 = ((0.0, 1.0, 0.0), qa((1, 0, 0), 30), (0.5, 0.5, 0.5))
EY30 = np.array([0.0, math.cos(math.radians(30)), math.sin(math.radians(30))])  # ROT_X30's local +y in world
N111 = -np.ones(3) / S3
# name, sphere, box, pa, pb, n, depth
SPHERE_CASES = [
  ("face", sph((0, 0, 1.4), 0.5), UNIT, (0, 0, 0.9), (0, 0, 1), (0, 0, -1), 0.1),
  ("touching", sph((0, 0, 1.5), 0.5), UNIT, (0, 0, 1), (0, 0, 1), (0, 0, -1), 0.0),
  ("apart", sph((0, 0, 2), 0.5), UNIT, (0, 0, 1.5), (0, 0, 1), (0, 0, -1), -0.5),
  # corner region: closest point (1, 1, 1) at distance sqrt(3)
  ("corner", sph((2, 2, 2), 2.0), UNIT, 2 + 2 * N111, (1, 1, 1), N111, 2 - S3),
  # edge region: offset (0.3, 0, 0.4) from the edge point (1, 0.2, 1), length 0.5
  ("edge", sph((1.3, 0.2, 1.4), 0.6), UNIT, (0.94, 0.2, 0.92), (1, 0.2, 1), (-0.6, 0, -0.8), 0.1),
  # centre inside: clearances x 0.2, y 1.9, z 2.8 -> leaves through +x; depth = r + 0.2
  ("inside", sph((0.8, 0.1, 0.2), 0.1), BOX123, (0.7, 0.1, 0.2), (1, 0.1, 0.2), (-1, 0, 0), 0.3),
  ("inside_neg_y", sph((0.1, -1.7, 0), 0.2), BOX123, (0.1, -1.5, 0), (0.1, -2, 0), (0, 1, 0), 0.5),
  # centre on the box centre: nearest face is +x (clearance 1, ties go to x, the mid-plane to +)
  ("centre", sph((0.5, 0.5, 0.5), 0.25), ((0.5, 0.5, 0.5), I, (1.0, 2.0, 3.0)), (0.25, 0.5, 0.5), (1.5, 0.5, 0.5),
   (-1, 0, 0), 1.25),
  # box turned 45 deg about z: its corner (1, -1) sits at world x = 1 + sqrt(2); the sphere is 0.3 beyond it
  ("rotated_corner", sph((1 + S2 + 0.3, 0, 0.5), 0.5), ROT_Z45, (1 + S2 - 0.2, 0, 0.5), (1 + S2, 0, 0.5),
   (-1, 0, 0), 0.2),
  # box turned 30 deg about x: sphere 0.7 out along its local +y, radius 0.3 -> 0.1 deep into that face
  ("rotated_face", sph(tuple(np.array([0, 1, 0]) + 0.7 * EY30), 0.3), ROT_X30, np.array([0, 1, 0]) + 0.4 * EY30,
   np.array([0, 1, 0]) + 0.5 * EY30, -EY30, 0.1),
]
SPHERE_GENERIC = [(sph((0.9, 1.3, -0.7), 0.4), ((0.1, 0.2, -0.1), qa((1, 2, 3), 40), (0.6, 0.7, 0.5))),  # edge/corner
                  (sph((0.2, 0.1, 0.0), 0.3), ((0.1, 0.2, -0.1), qa((1, -2, 1), 25), (0.6, 0.7, 0.5)))]  # inside


@pytest.fixture(scope="module")
def sphere():
  cases = [(s, b) for _, s, b, *_ in SPHERE_CASES] + [c for g in SPHERE_GENERIC for c in fd_lanes(g)]
  return run(sphere_box, cases)


def test_verify_sphere_box(sphere):
  for lane, (name, _, _, pa, pb, n, depth) in enumerate(SPHERE_CASES):
    check_slot(sphere, lane, 0, pa, pb, n, depth, name)


def test_grad_sphere_box(sphere):
  g = sphere["grad"]
  assert np.isfinite(g).all()
  # face: depth = r - (z_sphere - 1); centre: depth = r + 1 - (x_sphere - x_box) (leaves through +x)
  np.testing.assert_allclose(g[[2, 5], 0], [-1, 1], atol=1e-12)
  np.testing.assert_allclose(g[[0, 3], 7], [-1, 1], atol=1e-12)
  for k in range(len(SPHERE_GENERIC)): fd_check(sphere, len(SPHERE_CASES) + 29 * k, f"sphere generic {k}")


# --- capsule-box: a = capsule (pos, quat, (r, half length, 0)), b = box; slots: -z end, +z end, nearest point ---
Y90, Y135 = qa((0, 1, 0), 90), qa((0, 1, 0), 135)  # capsule axis (local z) -> world +x, -> (1, 0, -1)/sqrt(2)
U45, W45 = np.array([1, 0, -1]) / S2, np.array([1, 0, 1]) / S2
P45 = np.array([1, 0.3, 2]) + 0.15 * W45  # 0.15 out from the edge (x = 1, z = 2) of the (1, 1, 2) box, r = 0.2
E0, E1 = P45 - U45, P45 + U45   # ends (half length 1): E0 above the top face, E1 beside the +x face
WALL = np.array([0.8, 0, -0.15]) / math.hypot(0.8, 0.15)  # end (+-1, .4, 1.15) -> wall edge (+-.2, .4, 1): 0.8, 0.15
# name, capsule, box, [(pa, pb, n, depth) or None for an invalid slot] * 3
CAPSULE_CASES = [
  ("flat_on_face", ((0.2, 0.1, 1.15), Y90, (0.2, 0.5, 0.0)), UNIT,
   [((-0.3, 0.1, 0.95), (-0.3, 0.1, 1), (0, 0, -1), 0.05), ((0.7, 0.1, 0.95), (0.7, 0.1, 1), (0, 0, -1), 0.05),
    ((0.0, 0.1, 0.95), (0.0, 0.1, 1), (0, 0, -1), 0.05)]),  # middle: below the box centre
  ("across_edge_45", (tuple(P45), Y135, (0.2, 1.0, 0.0)), ((0.0, 0.0, 0.0), I, (1.0, 1.0, 2.0)),
   [(E0 - 0.2 * np.array([0, 0, 1]), (E0[0], 0.3, 2), (0, 0, -1), 0.2 - (E0[2] - 2)),
    (E1 - 0.2 * np.array([1, 0, 0]), (1, 0.3, E1[2]), (-1, 0, 0), 0.2 - (E1[0] - 1)),
    (P45 - 0.2 * W45, (1, 0.3, 2), -W45, 0.05)]),  # middle: on the edge, 0.2 - 0.15 deep
  ("across_wall", ((0.0, 0.4, 1.15), Y90, (0.2, 1.0, 0.0)), ((0.0, 0.0, 0.0), I, (0.2, 1.0, 1.0)),
   [(np.array([-1, 0.4, 1.15]) + 0.2 * WALL, (-0.2, 0.4, 1), WALL, 0.2 - math.hypot(0.8, 0.15)),
    (np.array([1, 0.4, 1.15]) + 0.2 * WALL * [-1, 1, 1], (0.2, 0.4, 1), WALL * [-1, 1, 1], 0.2 - math.hypot(0.8, 0.15)),
    ((0, 0.4, 0.95), (0, 0.4, 1), (0, 0, -1), 0.05)]),  # both ends off the wall: only the middle holds it
  ("standing", ((0.3, -0.2, 1.65), I, (0.2, 0.5, 0.0)), UNIT,
   [((0.3, -0.2, 0.95), (0.3, -0.2, 1), (0, 0, -1), 0.05), ((0.3, -0.2, 1.95), (0.3, -0.2, 1), (0, 0, -1), -0.95),
    None]),  # the nearest point is the lower end: the middle slot would duplicate it
  # the segment pierces the box: its points nearest the box centre's projection (x = 0) leave through the nearest
  # face, the top (clearance 0.4, radius 0.1); the ends are 0.7 and 1.3 beyond the x faces
  ("deep", ((0.3, 0.0, 0.1), Y90, (0.1, 2.0, 0.0)), ((0.0, 0.0, 0.0), I, (1.0, 1.0, 0.5)),
   [((-1.6, 0, 0.1), (-1, 0, 0.1), (1, 0, 0), -0.6), ((2.2, 0, 0.1), (1, 0, 0.1), (-1, 0, 0), -1.2),
    ((0, 0, 0), (0, 0, 0.5), (0, 0, -1), 0.5)]),
]
CAPSULE_GENERIC = [(((0.5, 0.3, 0.75), qmul(qa((0, 1, 0), 100), qa((1, 0, 0), 15)), (0.15, 0.6, 0.0)),
                    ((0.05, -0.1, 0.0), qa((1, 1, 0), 12), (0.5, 0.6, 0.6)))]  # across the box's top +x edge


@pytest.fixture(scope="module")
def capsule():
  cases = [(c, b) for _, c, b, _ in CAPSULE_CASES] + [c for g in CAPSULE_GENERIC for c in fd_lanes(g)]
  return run(capsule_box, cases)


def test_verify_capsule_box(capsule):
  for lane, (name, _, _, slots) in enumerate(CAPSULE_CASES):
    for s, want in enumerate(slots):
      if want is None: assert not capsule["valid"][s, lane], f"{name} slot {s}: should be invalid"
      # lying flat or piercing, the nearest points form an interval along x: the middle slot is the bisection's,
      # within hl 2^-CAPSULE_BISECT of the one nearest the box centre (x = 0); y, z and the depth are exact
      elif name in ("flat_on_face", "across_wall", "deep") and s == 2:
        check_slot(capsule, lane, s, *want, name, tol=CAPSULE_CASES[lane][1][2][1] * 2.0 ** -CAPSULE_BISECT)
        np.testing.assert_allclose(capsule["pa"][s, lane, 1:], want[0][1:], atol=1e-12)
        np.testing.assert_allclose(capsule["pb"][s, lane, 1:], want[1][1:], atol=1e-12)
        np.testing.assert_allclose(capsule["depth"][s, lane], want[3], atol=1e-12)
      else: check_slot(capsule, lane, s, *want, name)


def test_grad_capsule_box(capsule):
  g = capsule["grad"]
  assert np.isfinite(g).all()
  # flat on a face: 3 contacts each r - (z_capsule - 1) deep
  np.testing.assert_allclose(g[[2, 5], 0], [-3, 3], atol=1e-12)
  start = len(CAPSULE_CASES)
  assert capsule["valid"][:, start].all() and capsule["depth"][2, start] > 0  # held at the edge by the middle slot
  fd_check(capsule, start, "capsule generic")


# --- box-box ---
H = (0.5, 0.5, 0.5)
CUBE = ((0.0, 0.0, 0.0), I, H)
BIG = ((0.0, 0.0, 0.0), I, (2.0, 2.0, 0.5))
SMALL = ((0.5, -0.4, 0.58), I, (0.3, 0.2, 0.1))
C30, S30 = math.cos(math.radians(30)), math.sin(math.radians(30))
X0 = 0.5 * C30 - 0.5 * S30  # lowest edge of a cube (h 0.5) turned 30 deg about y sits at x = X0, z = -0.5 (C30 + S30)
Q_TILT = qmul(qa((0, 1, 0), 10), qa((1, 0, 0), 20))
LOW = min((rotate(Q_TILT, np.array([sx, sy, sz]) * 0.3) for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)),
          key=lambda v: v[2])  # a tilted cube's (h 0.3) lowest corner, from its centre
TILT_POS = np.array([0.2, -0.3, 0.5 - 0.01]) - LOW  # that corner 0.01 into BIG's top face, at (0.2, -0.3)


def quad(cx, cy, hx, hy, z, rot_deg=0.0):
  """The 4 corners (cx, cy) + R(rot) (+-hx, +-hy) at height z."""
  c, s = math.cos(math.radians(rot_deg)), math.sin(math.radians(rot_deg))
  return [(cx + c * x - s * y, cy + s * x + c * y, z) for x in (-hx, hx) for y in (-hy, hy)]


def pairs(pa, pb): return list(zip(pa, pb))


def canonical(c: np.ndarray) -> np.ndarray:
  """Contacts (K, 2, 3) sorted by their rounded coordinates, so slot order and last-bit noise do not matter."""
  return c[np.lexsort(np.round(c.reshape(len(c), -1), 9).T[::-1])]


# name, a, b, n, [(pa, pb)] of the valid slots (any order), depth
BOX_CASES = [
  ("stacked_touching", CUBE, ((0, 0, 1.0), I, H), (0, 0, 1), pairs(quad(0, 0, .5, .5, .5), quad(0, 0, .5, .5, .5)), 0),
  ("stacked_deep", CUBE, ((0, 0, 0.9), I, H), (0, 0, 1), pairs(quad(0, 0, .5, .5, .5), quad(0, 0, .5, .5, .4)), .1),
  ("b_below", ((0, 0, 0.9), I, H), CUBE, (0, 0, -1), pairs(quad(0, 0, .5, .5, .4), quad(0, 0, .5, .5, .5)), .1),
  ("small_on_big", BIG, SMALL, (0, 0, 1), pairs(quad(.5, -.4, .3, .2, .5), quad(.5, -.4, .3, .2, .48)), .02),
  # reversed: the small box's bottom is the reference face, BIG's top corners are outside it: its corners clip
  ("big_on_small", SMALL, BIG, (0, 0, -1), pairs(quad(.5, -.4, .3, .2, .48), quad(.5, -.4, .3, .2, .5)), .02),
  ("small_turned_on_big", BIG, ((0.1, 0.2, 0.67), qa((0, 0, 1), 17), (0.4, 0.3, 0.2)), (0, 0, 1),
   pairs(quad(.1, .2, .4, .3, .5, 17), quad(.1, .2, .4, .3, .47, 17)), .03),
  # resting on one edge: the other two bottom corners are 0.5 - 0.01 above, far beyond MARGIN: two contacts
  ("on_edge", BIG, ((0, 0, 0.5 + 0.5 * (C30 + S30) - 0.01), qa((0, 1, 0), 30), H), (0, 0, 1),
   [((X0, y, .5), (X0, y, .49)) for y in (-.5, .5)], .01),
  # a corner into a face: the reference face is b's, n still points a -> b
  ("corner_into_face", (tuple(TILT_POS), Q_TILT, (0.3, 0.3, 0.3)), BIG, (0, 0, -1),
   [((0.2, -0.3, 0.49), (0.2, -0.3, 0.5))], .01),
  # identical boxes at the same pose: least overlap along x (2 * 0.3), coincident centres take +x
  ("coincident", ((.1, .2, .3), I, (.3, .5, .7)), ((.1, .2, .3), I, (.3, .5, .7)), (1, 0, 0),
   [((.4, .2 + y, .3 + z), (-.2, .2 + y, .3 + z)) for y in (-.5, .5) for z in (-.7, .7)], .6),
  ("apart_within_margin", CUBE, ((0, 0, 1 + MARGIN / 2), I, H), (0, 0, 1),
   pairs(quad(0, 0, .5, .5, .5), quad(0, 0, .5, .5, .5 + MARGIN / 2)), -MARGIN / 2),
  ("apart_beyond_margin", CUBE, ((0, 0, 1.1), I, H), (0, 0, 1), [], None),
]
# a cube turned 45 deg about z on an equal cube, 0.05 deep: the overlap is the regular octagon of inradius 0.5
OCTAGON = (CUBE, ((0, 0, 0.95), qa((0, 0, 1), 45), H))
OCT_R = 0.5 / math.cos(math.pi / 8)  # circumradius; vertices (+-0.5, +-(sqrt(2)/2 - 0.5)) and swapped
# edges crossing: a turned 45 deg about x (top edge along x at z = sqrt(2)/2), b turned 45 deg about y (bottom edge
# along y at z_b - sqrt(2)/2), b shifted so they cross at (0.2, 0, sqrt(2)/2), 0.05 deep; normal x cross y = +z
EDGE_EDGE = (((0, 0, 0), qa((1, 0, 0), 45), H), ((0.2, 0.1, S2 - 0.05), qa((0, 1, 0), 45), H))
BOX_GENERIC = [
  (BIG, ((0.1, 0.2, 0.66), qmul(qa((0, 0, 1), 17), qmul(qa((1, 0, 0), 2.3), qa((0, 1, 0), -1.7))), (0.4, 0.3, 0.2))),
  (((0, 0, 0), qa((1, 0, 0), 46), H), ((0.15, 0.05, 1.38), qmul(qa((0, 1, 0), 40), qa((0, 0, 1), 6)), H)),  # edges
  (CUBE, ((0.03, -0.02, 0.96), qmul(qa((0, 0, 1), 34), qa((1, 1, 0), 0.8)), H)),  # turned and tilted: clipped
]


@pytest.fixture(scope="module")
def boxes():
  cases = [(a, b) for _, a, b, *_ in BOX_CASES] + [OCTAGON, EDGE_EDGE] + [c for g in BOX_GENERIC for c in fd_lanes(g)]
  return run(box_box, cases)


def test_verify_box_box_faces(boxes):
  for lane, (name, _, _, n, want, depth) in enumerate(BOX_CASES):
    valid = boxes["valid"][:, lane]
    assert valid.sum() == len(want), f"{name}: {valid.sum()} contacts, expected {len(want)}"
    if not want: continue
    got = np.stack([boxes["pa"][valid, lane], boxes["pb"][valid, lane]], 1)
    np.testing.assert_allclose(canonical(got), canonical(np.array(want, np.float64)), atol=1e-12, err_msg=name)
    np.testing.assert_allclose(boxes["n"][valid, lane], np.broadcast_to(n, (len(want), 3)), atol=1e-12, err_msg=name)
    np.testing.assert_allclose(boxes["depth"][valid, lane], depth, atol=1e-12, err_msg=name)


def test_verify_box_box_octagon(boxes):
  lane, valid = len(BOX_CASES), boxes["valid"][:, len(BOX_CASES)]
  assert valid.all()
  pa, pb = boxes["pa"][:, lane], boxes["pb"][:, lane]
  k = S2 / 2 - 0.5
  verts = np.array([(sx * a, sy * b, 0.5) for sx in (-1, 1) for sy in (-1, 1) for a, b in ((0.5, k), (k, 0.5))])
  assert all(np.abs(verts - p).max(1).min() < 1e-12 for p in pa), pa  # every pick is an octagon vertex
  np.testing.assert_allclose(pa - pb, np.broadcast_to([0, 0, 0.05], (4, 3)), atol=1e-12)
  np.testing.assert_allclose(boxes["n"][:, lane], np.broadcast_to([0, 0, 1], (4, 3)), atol=1e-12)
  # deepest (all tie: the first), farthest from it (the opposite vertex), then the farthest on either side of that
  # diagonal: a square of side sqrt(2) R and diagonal 2R spanning the octagon (area 2 R^2, 77 % of the octagon's)
  d = np.linalg.norm(pa[:, None] - pa[None], axis=-1)
  np.testing.assert_allclose(np.sort(d[np.triu_indices(4, 1)]), [S2 * OCT_R] * 4 + [2 * OCT_R] * 2, atol=1e-12)


def test_verify_box_box_edge_edge(boxes):
  lane = len(BOX_CASES) + 1
  assert list(boxes["valid"][:, lane]) == [True, False, False, False]
  check_slot(boxes, lane, 0, (0.2, 0, S2 / 2), (0.2, 0, S2 / 2 - 0.05), (0, 0, 1), 0.05, "edge_edge")


def test_verify_box_box_on_surfaces(boxes):
  """Every valid slot of every lane: pa on a's surface, pb on b's (max_i |local_i| - h_i = 0), |n| = 1."""
  cases = [(a, b) for _, a, b, *_ in BOX_CASES] + [OCTAGON, EDGE_EDGE] + [g for g in BOX_GENERIC]
  lanes_ = list(range(len(BOX_CASES) + 2)) + [len(BOX_CASES) + 2 + 29 * k for k in range(len(BOX_GENERIC))]
  for lane, (a, b) in zip(lanes_, cases):
    for s in np.nonzero(boxes["valid"][:, lane])[0]:
      for p, (pos, q, h) in ((boxes["pa"][s, lane], a), (boxes["pb"][s, lane], b)):
        local = rotate((q[0], -q[1], -q[2], -q[3]), p - np.asarray(pos))
        assert abs((np.abs(local) - np.asarray(h)).max()) < 1e-12, (lane, s, local)
      assert abs(np.linalg.norm(boxes["n"][s, lane]) - 1) < 1e-12


def test_grad_box_box(boxes):
  g = boxes["grad"]
  assert np.isfinite(g).all()  # touching, coincident, parallel faces, octagon ties, edge-edge included
  # stacked_touching: 4 contacts each z_a + 0.5 - (z_b - 0.5) deep; edge-edge: one such contact
  np.testing.assert_allclose(g[0:6, 0], [0, 0, 4, 0, 0, -4], atol=1e-12)
  np.testing.assert_allclose(g[0:6, len(BOX_CASES) + 1], [0, 0, 1, 0, 0, -1], atol=1e-12)
  start = len(BOX_CASES) + 2
  assert list(boxes["valid"][:, start + 29]) == [True, False, False, False]  # generic edge-edge stays edge-edge
  for k in range(len(BOX_GENERIC)): fd_check(boxes, start + 29 * k, f"box generic {k}")
