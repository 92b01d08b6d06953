"""Adjoint parity of the narrowphase's pair functions (kernels/adjoint/primitives.wgsl, box.wgsl) against tinygrad's
autograd of the oracle's (oracle/collide/primitives.py, box.py), with tests/test_parity_adjoint.py's harness: per
pair function one Case whose outputs are its K contact slots (the gradients of pa, pb, n; a WGSL wrapper stores them
in gnc and calls `<pair>_adj`) and whose inputs are the two world-frame geoms. The draws mix generic poses with the
poses where the forward's discrete choices tie or switch and that real scenes reach: exact clamps at a segment's end
(dyadic coordinates and axes, so float32 and float64 agree on the tie), exactly parallel capsules, centres on a box
face, coincident centres (the fallback normals), near-parallel capsules (the support slot), a capsule exactly
parallel to a box face (capsule_box's flat distance). capsule_box's draw leaves out the poses where its float32
forward takes other branches than float64 by rounding (capsule_box_fragile: measured, about 30% of near poses).
"""
from __future__ import annotations
import hashlib
from pathlib import Path
import numpy as np
import pytest
from oracle.collide import box, primitives
from tests.test_parity_adjoint import Case, N, run_case, unit_quats
from tests.helpers import wgsl_checked  # noqa: F401 (autouse)

SOURCE_HASH = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()


# --- random inputs: geoms as (N, 10) rows pos 3, rot 4, size 3 ---

def geoms(pos, rot, size) -> np.ndarray:
  return np.concatenate([pos, rot, size], axis=1)


def mix(rng, parts: list[tuple[float, dict]]) -> dict:
  """Row-wise mixture of draws: each row from part j with probability weight j (the parts' dicts share keys)."""
  cat = rng.choice(len(parts), N, p=np.array([w for w, _ in parts]) / sum(w for w, _ in parts))
  out = {k: v.copy() for k, v in parts[0][1].items()}
  for j, (_, d) in enumerate(parts):
    for k in out: out[k][cat == j] = d[k][cat == j]
  return out


def yaw(rng, n: int = N) -> np.ndarray:
  """Rotations about world z: the local z axis is exactly (0, 0, 1) (rotation_columns' x and y terms vanish)."""
  phi = rng.uniform(-np.pi, np.pi, n)
  return np.stack([np.cos(phi / 2), np.zeros(n), np.zeros(n), np.sin(phi / 2)], axis=1)


def dyadic(rng, lo: float, hi: float, shape) -> np.ndarray:
  """Multiples of 1/64 in [lo, hi]: sums and differences of a few are exact in float32."""
  return rng.integers(int(lo * 64), int(hi * 64) + 1, shape) / 64.0


def quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
  w1, v1, w2, v2 = a[:, :1], a[:, 1:], b[:, :1], b[:, 1:]
  return np.concatenate([w1 * w2 - (v1 * v2).sum(1, keepdims=True), w1 * v2 + w2 * v1 + np.cross(v1, v2)], axis=1)


def axis_angle(axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
  axis = axis / np.linalg.norm(axis, axis=1, keepdims=True)
  return np.concatenate([np.cos(angle / 2)[:, None], axis * np.sin(angle / 2)[:, None]], axis=1)


def quat_to(v: np.ndarray) -> np.ndarray:
  """Rotations taking z to the unit vectors v (rows): the shortest arc to v, or to -v after a half turn about x."""
  up = np.where(v[:, 2:] >= 0, v, -v)
  q = np.concatenate([1.0 + up[:, 2:], -up[:, 1:2], up[:, 0:1], np.zeros((len(v), 1))], axis=1)
  q /= np.linalg.norm(q, axis=1, keepdims=True)
  return np.where(v[:, 2:] >= 0, q, quat_mul(q, np.tile([0.0, 1.0, 0.0, 0.0], (len(v), 1))))


def rot_z(q: np.ndarray) -> np.ndarray:
  """The local z axis of unit quaternions q (rows)."""
  w, x, y, z = q.T
  return np.stack([2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)], axis=1)


def rot_cols(q: np.ndarray) -> np.ndarray:
  """(N, 3 columns, 3) rotation matrices' columns."""
  w, x, y, z = q.T
  return np.stack([np.stack([1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y)], 1),
                   np.stack([2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x)], 1),
                   np.stack([2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)], 1)], axis=1)


def sphere_size(rng) -> np.ndarray: return np.stack([rng.uniform(0.05, 1, N), np.zeros(N), np.zeros(N)], axis=1)
def capsule_size(rng) -> np.ndarray:
  return np.stack([rng.uniform(0.05, 0.5, N), rng.uniform(0.05, 1, N), np.zeros(N)], axis=1)


def plane_geom(rng) -> np.ndarray:
  """Planes through ~0.3 m of the origin, tilted anyhow or level (a yaw: the normal exactly +z); size unused."""
  rot = np.where(rng.random((N, 1)) < 0.25, yaw(rng), unit_quats(rng))
  return geoms(rng.normal(0, 0.3, (N, 3)), rot, rng.uniform(0.05, 1, (N, 3)))


def plane_draw(rng, size) -> dict:
  return {"a": plane_geom(rng), "b": geoms(rng.normal(0, 0.5, (N, 3)), unit_quats(rng), size)}


def sphere_sphere_draw(rng) -> dict:
  """Centres apart, coincident (the fallback +z) and within EPS of each other (fallback too)."""
  ca = rng.normal(0, 0.5, (N, 3))
  off = rng.normal(0, 0.5, (N, 3))
  k = rng.random((N, 1))
  off = np.where(k < 0.125, 0.0, np.where(k < 0.25, off / np.linalg.norm(off, axis=1, keepdims=True) * 3e-7, off))
  return {"a": geoms(ca, unit_quats(rng), sphere_size(rng)), "b": geoms(ca + off, unit_quats(rng), sphere_size(rng))}


def sphere_capsule_draw(rng) -> dict:
  """Centres along the axis beyond either end (t clamped), beside the segment, on its axis (the fallback: b's x),
  and exactly at an end's height with b's axis exactly z (the clamp's tie)."""
  rb, sb = unit_quats(rng), capsule_size(rng)
  pb = rng.normal(0, 0.5, (N, 3))
  u = rot_z(rb)
  t = rng.uniform(-1.5, 1.5, (N, 1)) * sb[:, 1:2]
  side = np.cross(u, rng.normal(size=(N, 3)))
  generic = {"a": geoms(pb + u * t + side * rng.uniform(0, 1, (N, 1)), unit_quats(rng), sphere_size(rng)),
             "b": geoms(pb, rb, sb)}
  on_axis = {**generic, "a": geoms(pb + u * t, unit_quats(rng), sphere_size(rng))}   # within rounding of the axis
  pb2, hl = dyadic(rng, -1, 1, (N, 3)), dyadic(rng, 0.0625, 1, (N, 1))
  end = np.concatenate([dyadic(rng, -0.5, 0.5, (N, 2)), hl * rng.choice([-1.0, 1.0], (N, 1))], axis=1)
  tie = {"a": geoms(pb2 + end, unit_quats(rng), sphere_size(rng)),
         "b": geoms(pb2, yaw(rng), np.concatenate([sb[:, :1], hl, np.zeros((N, 1))], axis=1))}
  return mix(rng, [(0.625, generic), (0.125, on_axis), (0.25, tie)])


def capsule_capsule_draw(rng) -> dict:
  """Skew capsules anyhow; near-parallel ones side by side (skew, support slot valid); exactly parallel ones (axes
  exactly +-z, dyadic positions and lengths: the overlap's clamps tie, e.g. equal lengths side by side); coincident
  centres (intersecting axes: the fallback perp) and collinear overlapping ones (the fallback: a's x)."""
  ra, rb = unit_quats(rng), unit_quats(rng)
  sa, sb = capsule_size(rng), capsule_size(rng)
  pa = rng.normal(0, 0.5, (N, 3))
  generic = {"a": geoms(pa, ra, sa), "b": geoms(pa + rng.normal(0, 0.5, (N, 3)), rb, sb)}
  # near parallel: b's rotation is a's turned by 0.003-0.045 rad about a random axis; b beside a, shifted along it
  tilt = quat_mul(axis_angle(rng.normal(size=(N, 3)), rng.uniform(0.003, 0.045, N)), ra)
  tilt = tilt * rng.choice([-1.0, 1.0], (N, 1))
  cols = rot_cols(ra)
  beside = (cols[:, 0] * rng.normal(0, 0.4, (N, 1)) + cols[:, 1] * rng.normal(0, 0.4, (N, 1))
            + cols[:, 2] * rng.normal(0, 0.5, (N, 1)))
  near = {"a": generic["a"], "b": geoms(pa + beside, tilt, sb)}
  # exactly parallel: yaws (axis +z) or b flipped (axis -z exactly); dyadic offsets, equal lengths in half of them
  pa2 = dyadic(rng, -1, 1, (N, 3))
  ha, hb = dyadic(rng, 0.0625, 1, (N, 1)), dyadic(rng, 0.0625, 1, (N, 1))
  hb = np.where(rng.random((N, 1)) < 0.5, ha, hb)
  flip = np.array([[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]])[rng.integers(0, 2, N)]
  rb2 = np.where(rng.random((N, 1)) < 0.3, flip, yaw(rng))
  dz = np.where(rng.random((N, 1)) < 0.3, 0.0, dyadic(rng, -2, 2, (N, 1)))
  off = np.concatenate([dyadic(rng, -0.5, 0.5, (N, 2)), dz], axis=1)
  par = {"a": geoms(pa2, yaw(rng), np.concatenate([sa[:, :1], ha, sa[:, 2:]], 1)),
         "b": geoms(pa2 + off, rb2, np.concatenate([sb[:, :1], hb, sb[:, 2:]], 1))}
  # coincident centres (skew: the perp fallback), collinear (parallel, same axis line: a's x)
  coincident = {"a": generic["a"], "b": geoms(pa, rb, sb)}
  collinear = {"a": par["a"], "b": geoms(pa2 + off * np.array([0.0, 0.0, 1.0]), rb2, par["b"][:, 7:])}
  return mix(rng, [(0.25, generic), (0.3, near), (0.25, par), (0.1, coincident), (0.1, collinear)])


EXACT = np.array([[1.0, 0, 0, 0], [0, 1.0, 0, 0], [0, 0, 1.0, 0], [0, 0, 0, 1.0]])  # columns exactly +-e_i


def box_size(rng) -> np.ndarray: return rng.uniform(0.05, 1, (N, 3))


def in_box_frame(pos, rot, loc) -> np.ndarray:
  """World points at local coordinates loc (rows) of the frames (pos, rot)."""
  return pos + np.einsum("nij,ni->nj", rot_cols(rot), loc)


def sphere_box_draw(rng) -> dict:
  """Centres outside (faces, edges, corners) and inside the box; and with the box's axes exactly +-e_i and dyadic
  coordinates, centres exactly on faces, edges and corners (inside: the gap ties; outside: the clamp's tie) or at
  the centre (the face of least half extent)."""
  pb, rb, h = rng.normal(0, 0.5, (N, 3)), unit_quats(rng), box_size(rng)
  loc = rng.uniform(-1.6, 1.6, (N, 3)) * h
  generic = {"a": geoms(in_box_frame(pb, rb, loc), unit_quats(rng), sphere_size(rng)), "b": geoms(pb, rb, h)}
  pb2, h2 = dyadic(rng, -1, 1, (N, 3)), dyadic(rng, 0.0625, 1, (N, 3))
  k = rng.integers(0, 4, (N, 3))   # per axis: on the + or - face, at 0, or anywhere within 1.5 h
  loc2 = np.choose(k, [h2, -h2, np.zeros((N, 3)), np.round(rng.uniform(-1.5, 1.5, (N, 3)) * h2 * 64) / 64])
  exact_rot = EXACT[rng.integers(0, 4, N)]
  exact = {"a": geoms(in_box_frame(pb2, exact_rot, loc2), unit_quats(rng), sphere_size(rng)),
           "b": geoms(pb2, exact_rot, h2)}
  return mix(rng, [(0.6, generic), (0.4, exact)])


def segment_nearest(a, u, hl, h, tc):
  """oracle/collide/box.py _segment_nearest in numpy (float64, per row): t, and whether the forward's choices there
  are decided by rounding: the Newton step's test f2(tn) <= f2(m) where f2(tn) and f2(m) are closer than float32
  resolves them (1e-5 relative, or 2 e 5e-7 for a rounding of 5e-7 m in the distance e: near an interior minimiser
  they differ by den (m - tn)^2 < den (hl 2^-12)^2, so float32 decides by rounding unless the distance is ~1 mm or
  less), or a coordinate of the bracket's midpoint within 1e-6 of a face's plane."""
  def terms(t):
    p = a + u * t[:, None]
    return np.maximum(np.abs(p) - h, 0.0), np.where(p >= 0, 1.0, -1.0), p
  lo, hi = -hl, hl
  for _ in range(box.CAPSULE_BISECT):
    m = (lo + hi) * 0.5
    e, s, _ = terms(m)
    rising = (e * s * u).sum(1) + box.CAPSULE_PULL * (m - tc) >= 0
    lo, hi = np.where(rising, lo, m), np.where(rising, m, hi)
  m = (lo + hi) * 0.5
  e, s, p = terms(m)
  num, den = np.where(e > 0, u * (s * h - a), 0.0).sum(1), np.where(e > 0, u * u, 0.0).sum(1)
  curved = den > box.CAPSULE_PULL
  tn = np.clip(np.where(curved, num / np.where(curved, den, 1.0), m), -hl, hl)
  f2n, f2m = (terms(tn)[0] ** 2).sum(1), (terms(m)[0] ** 2).sum(1)
  f2 = np.maximum(f2n, f2m)
  fragile = (np.abs(f2n - f2m) <= 1e-5 * f2 + 1e-6 * np.sqrt(f2)) & (tn != m)
  return np.where(f2n <= f2m, tn, m), fragile | (np.abs(np.abs(p) - h) < 1e-6).any(1)


def capsule_box_fragile(a: np.ndarray, b: np.ndarray) -> np.ndarray:
  """The rows where capsule_box's float32 forward can take other choices than float64 (so its gradient is another
  one): segment_nearest's, and a sphere centre (an end, or the nearest point) within 1e-6 of a face's plane (the
  kink between the outside and the inside formulas; the Newton step lands exactly there when the segment dips
  into the box short of the point nearest its centre) or inside with two faces' clearances within 1e-6."""
  axes, u, hl, h = rot_cols(b[:, 3:7]), rot_cols(a[:, 3:7])[:, 2], a[:, 8], b[:, 7:10]
  rel = a[:, :3] - b[:, :3]
  tc = np.clip(-(rel * u).sum(1), -hl, hl)
  t, fragile = segment_nearest(np.einsum("nij,nj->ni", axes, rel), np.einsum("nij,nj->ni", axes, u), hl, h, tc)
  for s in (-hl, hl, t):
    loc = np.einsum("nij,nj->ni", axes, rel + u * s[:, None])
    gaps = np.sort(h - np.abs(loc), axis=1)
    fragile |= (np.abs(gaps) < 1e-6).any(1) | ((gaps[:, 0] > 0) & (gaps[:, 1] - gaps[:, 0] < 1e-6))
  return fragile


def capsule_box_draw(rng) -> dict:
  """Capsules anyhow near the box (touching, apart, sunk in); upright ones in a box turned about z (both axes
  exactly z: standing over the top face, the Newton step clamped at the end; or beside a side face, lying exactly
  parallel to it: the distance flat along the segment, t from the pull to tc); ones piercing the box. The rows
  capsule_box_fragile flags are drawn again (how many of the first draw: printed): there float32 and float64 take
  other branches. Capsules lying parallel to a face only to within rounding are left out likewise: there the
  bisection's test weighs the pull, 1e-6 (m - tc), against the face term e u_i with u_i ~ 1e-8 of rounding, so t
  moves by cm with the precision."""
  def once(rng):
    pb, rb, h = rng.normal(0, 0.5, (N, 3)), unit_quats(rng), box_size(rng)
    size = capsule_size(rng)
    hl = size[:, 1:2]
    near = {"a": geoms(in_box_frame(pb, rb, rng.uniform(-1.3, 1.3, (N, 3)) * (h + hl)), unit_quats(rng), size),
            "b": geoms(pb, rb, h)}
    yb = yaw(rng)
    lz = rng.uniform(-1.3, 1.3, (N, 1)) * (h[:, 2:] + hl)
    lxy = rng.uniform(-1.5, 1.5, (N, 2)) * h[:, :2]
    upright = {"a": geoms(in_box_frame(pb, yb, np.concatenate([lxy, lz], 1)), yaw(rng), size),
               "b": geoms(pb, yb, h)}
    piercing = {"a": geoms(in_box_frame(pb, rb, rng.uniform(-0.8, 0.8, (N, 3)) * h), unit_quats(rng), size),
                "b": near["b"]}
    # across an edge, 1-6 mm from it, its nearest point inside the segment: the Newton step's interior minimiser
    i = rng.integers(0, 3, N)
    along = np.eye(3)[i]
    sides = (1.0 - along) * rng.choice([-1.0, 1.0], (N, 3))
    edge = sides * h + along * h * rng.uniform(-0.8, 0.8, (N, 1))
    out = sides / np.sqrt(2.0)
    dirn = np.cross(out, along) + along * rng.normal(0, 0.5, (N, 1))
    dirn /= np.linalg.norm(dirn, axis=1, keepdims=True)
    centre = edge + out * rng.uniform(1e-3, 6e-3, (N, 1)) + dirn * rng.uniform(-0.5, 0.5, (N, 1)) * hl
    world = np.einsum("nij,ni->nj", rot_cols(rb), dirn)
    across = {"a": geoms(in_box_frame(pb, rb, centre), quat_mul(quat_to(world), yaw(rng)), size), "b": near["b"]}
    return mix(rng, [(0.3, near), (0.3, upright), (0.1, piercing), (0.3, across)])
  parts, kept = [], 0
  while kept < N:
    d = {k: v.astype(np.float32).astype(np.float64) for k, v in once(rng).items()}
    ok = ~capsule_box_fragile(d["a"], d["b"])
    if not parts: print(f"capsule_box: {N - ok.sum()} of {N} drawn rows fragile")
    parts.append({k: v[ok] for k, v in d.items()})
    kept += ok.sum()
  return {k: np.concatenate([p[k] for p in parts])[:N] for k in parts[0]}


def pair_case(pair: str, k: int, fn, draw) -> Case:
  """The pair function `pair` (k slots): a WGSL wrapper stores the slots' gradients in gnc and calls its adjoint."""
  gs = ", ".join(f"g{j}: ContactAdj" for j in range(k))
  sets = " ".join(f"gnc[{j}] = g{j};" for j in range(k))
  wgsl = f"fn {pair}_case(a: Geom, b: Geom, {gs}) -> GeomPairAdj {{ {sets} return {pair}_adj(a, b); }}\n"
  call = f"{pair}_case({{a}}, {{b}}, " + ", ".join(f"{{g_c{j}}}" for j in range(k)) + ")"
  return Case([("a", "geom"), ("b", "geom")], [(f"c{j}", "contact") for j in range(k)], call,
              [("a", "geom", "a"), ("b", "geom", "b")], lambda a, b: fn(a, b), draw, wgsl)


CASES = {
  "rotation_columns": Case(
    [("q", "q")], [("c0", "v"), ("c1", "v"), ("c2", "v")],
    "rotation_columns_adj({q}, array<vec3<f32>, 3>({g_c0}, {g_c1}, {g_c2}))", [("q", "q", "")],
    lambda q: list(q.rotation_columns()),
    # unit quaternions, and some not (the adjoint follows the formulas as written)
    lambda rng: {"q": unit_quats(rng) * np.where(rng.random((N, 1)) < 0.25, rng.uniform(0.5, 2, (N, 1)), 1.0)}),
  "plane_sphere": pair_case("plane_sphere", 1, primitives.plane_sphere, lambda rng: plane_draw(rng, sphere_size(rng))),
  "plane_box": pair_case("plane_box", 8, primitives.plane_box,
                         lambda rng: plane_draw(rng, rng.uniform(0.05, 1, (N, 3)))),
  "plane_capsule": pair_case("plane_capsule", 2, primitives.plane_capsule,
                             lambda rng: plane_draw(rng, capsule_size(rng))),
  "sphere_sphere": pair_case("sphere_sphere", 1, primitives.sphere_sphere, sphere_sphere_draw),
  "sphere_capsule": pair_case("sphere_capsule", 1, primitives.sphere_capsule, sphere_capsule_draw),
  "capsule_capsule": pair_case("capsule_capsule", 2, primitives.capsule_capsule, capsule_capsule_draw),
  "sphere_box": pair_case("sphere_box", 1, box.sphere_box, sphere_box_draw),
  "capsule_box": pair_case("capsule_box", 3, box.capsule_box, capsule_box_draw),
}


# one xdist group per case (conftest.py), as tests/test_parity_adjoint.py
@pytest.mark.parametrize("name", [pytest.param(k, marks=pytest.mark.xdist_group(f"adjoint_collide_{k}"))
                                  for k in CASES])
def test_parity_adjoint_collide(name):
  """The WGSL pair function's adjoint against float64 autograd of the oracle's, per input geom."""
  run_case(f"collide_{name}", CASES[name], source_hash=SOURCE_HASH)
