"""Broadphase (oracle/broadphase.py): the spatial hash returns exactly the brute-force set of overlapping AABB pairs,
overflow counts every pair it could not store, the collision rules exclude what they should, and the AABBs are the
analytic ones.

tinygrad compiles per shape (seconds each), so each random test keeps one scene layout and varies positions,
orientations, velocities and sizes through the state and Model tensors, replaying one TinyJit graph per layout.
"""
from __future__ import annotations
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from tinygrad import Tensor, TinyJit, dtypes
from engine import load_scene
from engine.npquat import quat_to_mat
from tests.helpers import axis_angle
from oracle.broadphase import (CELL_MARGIN, HASH_PRIMES, _bucket, broadphase, brute_force_pairs, geom_aabb,
                               hashed_geoms, plane_reach, table_size)

B = 4  # envs per random example: one compiled graph per layout
# random layout: 10 free bodies (two with two geoms), a ground plane and a static world box; bodies 0-1 joined with
# collide false (excluded), bodies 2-3 joined with collide true (not excluded)
LAYOUT = (("sphere",), ("capsule",), ("box",), ("box", "sphere"), ("capsule",), ("sphere",), ("box",),
          ("capsule", "box"), ("sphere",), ("sphere",))
SIZE = {"sphere": [0.1], "capsule": [0.05, 0.1], "box": [0.1, 0.08, 0.05]}


def random_scene(contact: dict) -> dict:
  bodies = [{"name": f"b{k}", "pos": [0.5 * k, 0.0, 1.0],
             "geoms": [{"type": t, "size": SIZE[t], "pos": [0.0, 0.0, 0.15 * g]} for g, t in enumerate(types)]}
            for k, types in enumerate(LAYOUT)]
  joints = [{"type": "ball", "parent": "b0", "child": "b1", "anchor": [0.25, 0.0, 1.0]},
            {"type": "ball", "parent": "b2", "child": "b3", "anchor": [1.25, 0.0, 1.0], "collide": True}]
  world = [{"type": "plane"}, {"type": "box", "size": [0.2, 0.3, 0.1], "pos": [0.1, -0.2, 0.3]}]
  return {"name": "random", "contact": contact, "world": {"geoms": world}, "bodies": bodies, "joints": joints}


def runner(model):
  """broadphase(model with geom_size, packed) as one TinyJit replayed for every example: (pairs as numpy, overflow)."""
  keys = [(a, b) for a, b, _ in model.pair_capacity]
  def run(packed: Tensor, size: Tensor):
    table = broadphase(model.replace(geom_size=size), packed)
    return (*(table.pairs[k] for k in keys), table.overflow)
  jit = TinyJit(run)
  def call(packed: Tensor, size: Tensor):
    out = jit(packed, size)
    return {k: o.numpy() for k, o in zip(keys, out)}, out[-1].numpy()
  return call


def random_inputs(model, seed: int, spread: float, speed: float, scale: float, offset: float):
  """(packed (B, nbody, 13), geom_size (ngeom, 3)) realised: bodies uniform in a cube of half side `spread` [m]
  around `offset` (x, y, z), random orientations, velocities ~ N(0, speed^2), sizes times U(0.3, 2) * scale."""
  rng = np.random.default_rng(seed)
  nb = model.nbody
  pos = offset + rng.uniform(-spread, spread, (B, nb, 3))
  q = rng.normal(size=(B, nb, 4))
  q /= np.linalg.norm(q, axis=-1, keepdims=True)
  vel, angvel = rng.normal(0.0, speed, (B, nb, 3)), rng.normal(0.0, 3.0 * speed, (B, nb, 3))
  size = model.geom_size.numpy() * rng.uniform(0.3, 2.0, (model.ngeom, 1)) * scale
  packed = np.concatenate([pos, q, vel, angvel], axis=-1).astype(np.float32)
  return Tensor(packed).realize(), Tensor(size.astype(np.float32)).realize()


def table_sets(model, pairs: dict) -> list[dict]:
  """Per env {type pair: [(ga, gb), ...] in table order}; checks the table layout on the way: column 0 has type_a,
  rows sorted by (column 0, column 1), filled rows first, -1 only in both columns of the empty rows."""
  out = [{} for _ in range(next(iter(pairs.values())).shape[0])] if pairs else []
  for (ta, tb), table in pairs.items():
    for b, rows in enumerate(table.numpy() if isinstance(table, Tensor) else table):
      filled = rows[rows[:, 0] >= 0]
      assert (rows[len(filled):] == -1).all() and (filled >= 0).all(), rows
      got = [tuple(map(int, r)) for r in filled]
      assert got == sorted(set(got)), got
      assert all(model.geom_type[a] == ta and model.geom_type[c] == tb and (ta != tb or a < c) for a, c in got)
      out[b][(ta, tb)] = got
  return out


def by_type(ref: set) -> dict:
  out: dict = {}
  for ta, tb, ga, gb in ref: out.setdefault((ta, tb), []).append((ga, gb))
  return {k: sorted(v) for k, v in out.items()}


_inputs = dict(seed=st.integers(0, 2**32 - 1), spread=st.floats(0.2, 2.0), speed=st.sampled_from([0.0, 0.5, 5.0]),
               scale=st.floats(0.5, 3.0), offset=st.sampled_from([0.0, -3.0, 1000.0]))
_FULL, _SMALL = {}, {}  # model and runner per layout, built on first use


def _fixture(cache: dict, contact: dict):
  if not cache:
    cache["model"] = load_scene(random_scene(contact))
    cache["run"] = runner(cache["model"])
  return cache["model"], cache["run"]


@settings(max_examples=30, deadline=None, database=None, derandomize=True)
@given(**_inputs)
def test_verify_broadphase_matches_brute_force(seed, spread, speed, scale, offset):
  # a bucket holds all 13 hashed geoms and every type pair has room for all its pairs (the default): nothing is lost
  model, run = _fixture(_FULL, {"hash_slots": 16})
  packed, size = random_inputs(model, seed, spread, speed, scale, offset)
  pairs, overflow = run(packed, size)
  ref = brute_force_pairs(model.replace(geom_size=size), packed)
  assert (overflow == 0).all(), overflow
  for got, want in zip(table_sets(model, pairs), ref):
    assert {k: v for k, v in got.items() if v} == by_type(want)


@settings(max_examples=20, deadline=None, database=None, derandomize=True)
@given(**_inputs)
def test_verify_broadphase_capacity_overflow_is_counted(seed, spread, speed, scale, offset):
  # capacity 2 per type pair: the table keeps the first min(2, n) pairs in (column 0, column 1) order and overflow
  # counts exactly the others
  model, run = _fixture(_SMALL, {"pair_capacity": 2, "hash_slots": 16})
  cap = {(a, b): c for a, b, c in model.pair_capacity}
  packed, size = random_inputs(model, seed, spread, speed, scale, offset)
  pairs, overflow = run(packed, size)
  ref = brute_force_pairs(model.replace(geom_size=size), packed)
  for b, (got, want) in enumerate(zip(table_sets(model, pairs), ref)):
    want = by_type(want)
    lost = 0
    for tp, n in cap.items():
      full = want.get(tp, [])
      assert got[tp] == full[:n], (tp, got[tp], full)
      lost += max(len(full) - n, 0)
    assert overflow[b] == lost, (overflow[b], lost)


def test_verify_broadphase_bucket_overflow_is_counted():
  # one slot per bucket. Env 0: two overlapping spheres in one cell, so the second does not fit its bucket: counted,
  # and the pair is lost. Env 1: the same spheres straddle a cell boundary (cells x = -1 and 0, whose buckets differ
  # in the low bits since 73856093 is odd): both fit, the pair is found.
  spheres = [{"name": f"s{k}", "pos": [0.0, 0.0, 1.0], "geoms": [{"type": "sphere", "size": [0.1]}]} for k in (0, 1)]
  model = load_scene({"name": "bucket", "contact": {"hash_slots": 1}, "world": {"geoms": [{"type": "plane"}]},
                      "bodies": spheres})
  pos = np.array([[[0.02, 0.0, 1.0], [0.06, 0.0, 1.0]], [[-0.05, 0.0, 1.0], [0.05, 0.0, 1.0]]])
  packed = np.concatenate([pos, np.tile([1.0, 0, 0, 0], (2, 2, 1)), np.zeros((2, 2, 6))], axis=-1)
  packed = Tensor(packed.astype(np.float32)).realize()
  table = broadphase(model, packed)
  assert [len(r) for r in brute_force_pairs(model, packed)] == [1, 1]
  assert table.overflow.numpy().tolist() == [1, 0]
  assert table.pairs[("sphere", "sphere")].numpy().tolist() == [[[-1, -1]], [[1, 2]]]


def test_verify_broadphase_exclusions():
  # four groups far apart, all at rest: (x = 0) a world box and a world sphere that overlap each other (world-world:
  # never) and a body sphere overlapping both (pairs with each); (x = 5) one body with two overlapping geoms (same
  # body: never); (x = 10) two overlapping bodies joined with collide false (never); (x = 15) the same with collide
  # true (pairs)
  def body(name, x, *geoms): return {"name": name, "pos": [x, 0.0, 1.0], "geoms": list(geoms)}
  ball, cube = {"type": "sphere", "size": [0.25]}, {"type": "box", "size": [0.2, 0.2, 0.2]}
  scene = {"name": "rules",
           "world": {"geoms": [{"type": "plane"}, {"type": "box", "size": [0.3, 0.3, 0.3], "pos": [0.0, 0.0, 1.0]},
                               {"type": "sphere", "size": [0.3], "pos": [0.0, 0.0, 1.5]}]},
           "bodies": [body("a", 0.5, ball), body("s", 5.0, ball, cube), body("p", 10.0, ball), body("q", 10.3, cube),
                      body("u", 15.0, ball), body("v", 15.3, cube)],
           "joints": [{"type": "ball", "parent": "p", "child": "q", "anchor": [10.15, 0.0, 1.0]},
                      {"type": "ball", "parent": "u", "child": "v", "anchor": [15.15, 0.0, 1.0], "collide": True}]}
  model = load_scene(scene)
  # geoms: 0 plane, 1 world box, 2 world sphere, 3 a, 4-5 s, 6 p, 7 q, 8 u, 9 v
  assert hashed_geoms(model) == tuple(range(1, 10))
  packed = Tensor(np.concatenate([model.body_pos0.numpy(), model.body_quat0.numpy(), np.zeros((model.nbody, 6))],
                                 axis=-1)[None].astype(np.float32)).realize()
  want = {("sphere", "sphere", 2, 3), ("sphere", "box", 3, 1), ("sphere", "box", 8, 9)}
  assert brute_force_pairs(model, packed) == [want]
  got = table_sets(model, broadphase(model, packed).pairs)[0]
  assert {(ta, tb, a, c) for (ta, tb), rows in got.items() for a, c in rows} == want


def test_verify_broadphase_contact_disabled():
  model = load_scene({"name": "off", "contact": {"enabled": False}, "world": {"geoms": [{"type": "plane"}]},
                      "bodies": [{"name": "a", "pos": [0, 0, 1], "geoms": [{"type": "sphere", "size": [0.1]}]},
                                 {"name": "b", "pos": [0, 0, 1], "geoms": [{"type": "sphere", "size": [0.1]}]}]})
  table = broadphase(model, Tensor.zeros(3, 2, 13).contiguous().realize())
  assert hashed_geoms(model) == () and table.pairs == {} and table.overflow.numpy().tolist() == [0, 0, 0]


def test_verify_broadphase_aabb_is_analytic():
  # float64: at rest the AABB is that of the geom's extreme points (box corners, capsule end spheres, sphere) plus the
  # contact margin; moving, every side grows by 2 dt (|v| + |w| rho) more, rho = bounding radius + the geom's offset
  # from the centre of mass
  tilt = axis_angle([1.0, 2.0, 0.5], 0.7).tolist()  # an arbitrary rotation
  scene = {"name": "aabb", "dt": 0.01,
           "world": {"geoms": [{"type": "plane"}, {"type": "box", "size": [0.5, 0.2, 0.1], "quat": tilt}]},
           "bodies": [{"name": "a", "pos": [0.3, -0.2, 1.0], "quat": tilt,
                       "geoms": [{"type": "box", "size": [0.1, 0.2, 0.3], "pos": [0.1, 0.0, 0.0]},
                                 {"type": "capsule", "size": [0.05, 0.2], "pos": [-0.2, 0.1, 0.0], "quat": tilt},
                                 {"type": "sphere", "size": [0.07], "pos": [0.0, 0.0, 0.3]}]}]}
  model = load_scene(scene, dtypes.float64, "CPU")
  x, q = model.body_pos0.numpy()[0], model.body_quat0.numpy()[0]
  v, w = np.array([0.5, -1.0, 2.0]), np.array([3.0, 0.0, -4.0])
  packed = Tensor(np.concatenate([x, q, v, w])[None, None], dtype=dtypes.float64, device="CPU").realize()
  still = Tensor(np.concatenate([x, q, 0 * v, 0 * w])[None, None], dtype=dtypes.float64, device="CPU").realize()
  gpos, gquat, gsize = model.geom_pos.numpy(), model.geom_quat.numpy(), model.geom_size.numpy()
  for k, g in enumerate(hashed_geoms(model)):
    world = model.geom_body[g] < 0
    rb = np.eye(3) if world else quat_to_mat(q)
    centre, rot = (gpos[g] if world else x + rb @ gpos[g]), rb @ quat_to_mat(gquat[g])
    kind, s = model.geom_type[g], gsize[g]
    if kind == "box":
      pts = centre + np.array([rot @ ((2 * np.array(c) - 1) * s) for c in np.ndindex(2, 2, 2)])
      lo, hi, bound = pts.min(0), pts.max(0), np.linalg.norm(s)
    elif kind == "capsule":
      ends = centre + np.array([rot[:, 2] * s[1], -rot[:, 2] * s[1]])
      lo, hi, bound = ends.min(0) - s[0], ends.max(0) + s[0], s[0] + s[1]
    else:
      lo, hi, bound = centre - s[0], centre + s[0], s[0]
    grow = 0.0 if world else 2 * model.dt * (np.linalg.norm(v) + np.linalg.norm(w) * (bound + np.linalg.norm(gpos[g])))
    margin = getattr(model, "contact_margin", 0.0)  # every AABB grows by it, at rest too
    for state, extra in ((still, margin), (packed, grow + margin)):
      got_lo, got_hi = (t.numpy()[0, k] for t in geom_aabb(model, state))
      np.testing.assert_allclose(got_lo, lo - extra, rtol=0, atol=1e-12, err_msg=f"geom {g} ({kind}) lo")
      np.testing.assert_allclose(got_hi, hi + extra, rtol=0, atol=1e-12, err_msg=f"geom {g} ({kind}) hi")


def test_verify_broadphase_hash_is_teschner():
  # the bucket of a cell is (ix p1 ^ iy p2 ^ iz p3) mod H on uint32, negative cells as two's complement
  cells = np.array([[-1, 0, 5], [1 << 20, -(1 << 20), 7], [123, -456, 789], [0, 0, 0], [-7, -8, -9]], np.int32)
  nbuckets = table_size(36)
  assert nbuckets == 128
  got = _bucket(*(Tensor(cells[:, a]) for a in range(3)), nbuckets).numpy()
  u = cells.astype(np.uint32)
  want = ((u[:, 0] * np.uint32(HASH_PRIMES[0])) ^ (u[:, 1] * np.uint32(HASH_PRIMES[1]))
          ^ (u[:, 2] * np.uint32(HASH_PRIMES[2]))) & np.uint32(nbuckets - 1)
  assert got.tolist() == want.astype(np.int64).tolist()


def test_verify_broadphase_work_grows_linearly():
  """Equal spheres at rest on a k x k x k lattice 1.2 cells apart (k = 3, 4, 6: 27 to 216 bodies, no two touching):
  the hash tests a bounded number of pairs per sphere (each alone in its cell, so at most 26 neighbours, 13 pairs
  per sphere), so its tested pairs grow like n, not like brute force's n (n - 1) / 2 (351 to 23220), and it does
  see its neighbours (the count is not vacuously 0). Nothing overlaps, so the table is empty."""
  per_sphere = []
  for k in (3, 4, 6):
    n, r = k ** 3, 0.1
    model = load_scene({"name": f"lattice{k}", "contact": {"hash_slots": 8, "margin": 0.0},
                        "bodies": [{"name": f"s{i}", "pos": [0.0, 0.0, 0.0], "geoms": [{"type": "sphere", "size": [r]}]}
                                   for i in range(n)]})
    s = 2.0 * r * CELL_MARGIN   # the cell size at rest: the largest extent (one diameter)
    grid = np.stack(np.meshgrid(*(np.arange(k),) * 3, indexing="ij"), -1).reshape(n, 3) * 1.2 * s
    packed = np.concatenate([grid + 0.37 * s, np.tile([1.0, 0, 0, 0], (n, 1)), np.zeros((n, 6))], -1)[None]
    table = broadphase(model, Tensor(packed.astype(np.float32)).realize())
    tested = int(table.tested.numpy()[0])
    assert int(table.overflow.numpy()[0]) == 0 and (table.pairs[("sphere", "sphere")].numpy() == -1).all()
    assert 0 < tested <= 13 * n and tested < n * (n - 1) // 2, (n, tested)
    per_sphere.append(tested / n)
  # per sphere the count stays in a band (measured 5.9, 7.3, 5.9: which lattice neighbours share adjacent cells
  # depends on where 1.2 k falls between cell boundaries), while brute force's grows 8-fold from 27 to 216 spheres
  assert per_sphere[-1] < 2.0 * per_sphere[0], per_sphere


def test_verify_plane_pairs_reach():
  """A plane pairs with a geom only where the geom's grown AABB reaches it (oracle/broadphase.py plane_reach): a
  sphere of radius r moving at v above a plane tilted by 0.3 rad, placed along the plane's normal at distance
  r + 2 dt |v| + margin plus or minus 1 mm, since the AABB of a sphere is a cube, its lowest corner along a unit
  normal n lies sum_k |n_k| (r + grow) below the centre. float64."""
  tilt = axis_angle([1.0, 0.0, 0.0], 0.3)
  scene = {"name": "reach", "dt": 0.01, "contact": {"margin": 0.002},
           "world": {"geoms": [{"type": "plane", "quat": tilt.tolist(), "pos": [0.0, 0.0, 0.5]}]},
           "bodies": [{"name": "s", "pos": [0.0, 0.0, 2.0], "geoms": [{"type": "sphere", "size": [0.1]}]}]}
  model = load_scene(scene, dtypes.float64, "CPU")
  n = quat_to_mat(tilt)[:, 2]
  v = np.array([0.3, -0.4, 0.0])                                                        # |v| = 0.5 m/s
  half = 0.1 + 2 * 0.01 * 0.5 + 0.002                                                   # r + grow [m]
  reach = half * np.abs(n).sum()                                                        # centre to lowest corner
  rows = [np.concatenate([np.array([0.0, 0.0, 0.5]) + n * (reach + dz), [1.0, 0, 0, 0], v, [0.0, 0, 0]])
          for dz in (-1e-3, 1e-3)]
  got = plane_reach(model, Tensor(np.array(rows)[:, None], dtype=dtypes.float64, device="CPU"), [(0, 1)])
  assert got.numpy()[:, 0].tolist() == [True, False]
