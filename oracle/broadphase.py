"""Broadphase: a uniform spatial hash per env, fixed shapes, integer keys (DESIGN sec. 3; M20 sec. 3.5).

Once per step every non-plane geom gets a world AABB, grown by how far it can move in two steps, lands in a cell of a
uniform grid and is stored in a hash bucket; each geom then reads the buckets of its 27 neighbour cells. Planes are
not hashed: the contact stage pairs them with every body geom statically.

The stages, each a pass of the WGSL kernel (one thread per env and geom; integer keys only, no float atomics):
1. AABB of every hashed geom; per env the cell size s = the largest full AABB extent (times CELL_MARGIN).
2. cell = floor(centre / s) (int32, clamped to CELL_LIMIT); bucket = Teschner et al. 2003 hash of the cell mod H.
3. Bucket table (B, H, M): each bucket's geoms in geom order (rank = lower-index geoms with the same bucket); a geom
   ranked >= M does not fit, is counted as overflow and takes part in no pair this step (whichever side reads the
   table, so the kernel, which enumerates a pair from its row geom, finds the same pairs).
4. Geom i (if it fits) reads the M slots of the buckets of its 27 neighbour cells; slot geom j is a candidate when
   j's cell IS that neighbour cell (hash collisions drop out, and j is seen once: one cell, one slot); pair (i, j) is
   accepted when i < j, the AABBs overlap (closed intervals) and pair_allowed(bodies): they differ and are not
   excluded (joined by a joint).
5. Per type pair, the accepted pairs are numbered by prefix sums in (column 0, column 1) order and pair k goes to
   row k - 1 of the fixed-capacity table; pairs beyond the capacity are counted as overflow, never silently dropped.

The tensor form does the gathers as one-hot sums and collects the accepted slots into a dense (N, N) matrix before
compaction, so it is O(N^2) per env where the kernel is O(N). Because accepted pairs come out in (column 0, column 1)
order, the table does not depend on H, s or the hash function: without overflow it is exactly the brute-force set,
in a canonical order. The kernel reproduces the order from per-row counts: an exclusive prefix sum over the rows of a
type pair's block, then each row's accepted columns in index order.
"""
from __future__ import annotations
import itertools
from dataclasses import dataclass
import numpy as np
from tinygrad import Tensor, dtypes
from tinygrad.helpers import Context
from oracle.math3 import V3, Quat, const, take
from oracle.packed import ANGVEL, POS, QUAT, VEL
from oracle.types import GEOM_TYPES

HASH_PRIMES = (73856093, 19349663, 83492791)  # Teschner et al. 2003, "Optimized spatial hashing for collision ..."
# Cells are clamped to [-CELL_LIMIT, CELL_LIMIT] before the float -> int32 cast, so the cast never overflows (UB in C)
# whatever the positions, and cell +- 1 stays far inside int32. Clamping is monotone, so two cells at most one apart
# stay at most one apart: far geoms are merged into boundary cells (more candidates), never lost.
CELL_LIMIT = 1 << 20
# s is the largest full extent times (1 + 1/64): two overlapping AABBs have centres at most s / (1 + 1/64) apart per
# axis, and the 1/64 absorbs the float32 rounding of centres, extents and centre / s (each ~2^-24 |centre| / s), so
# floor(centre / s) of two overlapping geoms differs by at most 1 while |centre| / s < ~3e4 cells (float32).
CELL_MARGIN = 1.0 + 1.0 / 64.0
NEIGHBOURS = tuple(itertools.product((-1, 0, 1), repeat=3))  # the 27 cell offsets, x slowest


@dataclass(frozen=True)
class PairTable:
  """Broadphase output, realised. P per type pair is its capacity in model.pair_capacity."""
  pairs: dict      # (type_a, type_b) -> (B, P, 2) int32 model geom indices, column 0 of type_a (equal types: the
  #                  lower index first); rows sorted by (column 0, column 1), then -1 in the empty rows
  overflow: Tensor  # (B,) int32: overlapping pairs beyond their capacity + geoms that did not fit their hash bucket
  tested: Tensor    # (B,) int32: pairs i < j the hash made candidates (adjacent cells, both in the table), whose AABBs
  #                  and rules it tested: O(N) for bodies of bounded density, where brute force tests N (N - 1) / 2


def hashed_geoms(model) -> tuple[int, ...]:
  """Model geom indices that go through the hash, in model order (the hashed order, in which i < j): every non-plane
  geom (static world geoms too) when contacts are enabled, else none."""
  if not model.contact_enabled: return ()
  return tuple(g for g, t in enumerate(model.geom_type) if t != "plane")


def _type_mask(model, geoms, kinds, like: Tensor) -> Tensor:
  """1.0 where the geom's type is in kinds, else 0.0: (N,) cached constant."""
  return const([float(model.geom_type[g] in kinds) for g in geoms], like)


def _extents(model, geoms, packed: Tensor) -> tuple[V3, V3]:
  """World centre (B, N) [m] and AABB half extents (B, N) [m] of each hashed geom, expanded for motion."""
  body = tuple(model.geom_body[g] for g in geoms)
  # the owning body's state per geom; a world geom reads the identity pose and zero velocity (fill values)
  x = V3(*(take(packed[..., POS][..., k], body) for k in range(3)))
  qb = Quat(take(packed[..., QUAT][..., 0], body, 1.0), *(take(packed[..., QUAT][..., k], body) for k in (1, 2, 3)))
  v = V3(*(take(packed[..., VEL][..., k], body) for k in range(3)))
  w = V3(*(take(packed[..., ANGVEL][..., k], body) for k in range(3)))
  gp = V3(*(take(model.geom_pos[..., k], geoms) for k in range(3)))
  gq = Quat(*(take(model.geom_quat[..., k], geoms) for k in range(4)))
  sz = V3(*(take(model.geom_size[..., k], geoms) for k in range(3)))
  centre = x + qb.rotate(gp)                  # body frame = inertial frame, so x is the centre of mass
  q = qb * gq
  # every shape as a box of half extents e swept by a sphere of radius r: sphere (0; r), capsule ((0, 0, hl); r),
  # box (h; 0); the AABB half extents are r + sum_j |c_j| e_j, c_j = q e_j the rotation's columns (componentwise |.|)
  round_, box, cap = (_type_mask(model, geoms, kinds, packed) for kinds in (("sphere", "capsule"), ("box",),
                                                                             ("capsule",)))
  r = sz.x * round_
  e = V3(sz.x * box, sz.y * box, sz.z * box + sz.y * cap)
  c0, c1, c2 = (c.map(Tensor.abs) for c in q.rotation_columns())
  half = V3(r, r, r) + c0 * e.x + c1 * e.y + c2 * e.z
  # a point at distance <= rho from the centre of mass moves at most (|v| + |w| rho) dt in a step; the pairs found
  # at the step's start must hold all step long, so grow by k dt (...) with the safety factor k = 2 (M20 sec. 3.5)
  rho = r + (e.dot(e)).sqrt() + gp.dot(gp).sqrt()
  grow = 2.0 * model.dt * (v.dot(v).sqrt() + w.dot(w).sqrt() * rho) + _margin(model)
  return centre, half.map(lambda t: t + grow)


def _margin(model) -> float:
  """[m] extra growth of every AABB (the scene's contact.margin): pairs this close stay candidates even at rest."""
  return float(model.contact_margin)


def _stage(t: Tensor) -> Tensor:
  """t as its own kernel writing one buffer: one stage of the pipeline (a gather from a lazy intermediate would
  materialise it anyway, oracle/packed.py)."""
  return t.contiguous()


def _aabb(model, geoms, packed: Tensor) -> Tensor:
  """(B, N, 6) [lo | hi] [m], one realised buffer (stage 1)."""
  centre, half = _extents(model, geoms, packed)
  lo, hi = centre - half, centre + half
  return _stage(Tensor.stack(lo.x, lo.y, lo.z, hi.x, hi.y, hi.z, dim=-1))


def geom_aabb(model, packed: Tensor) -> tuple[Tensor, Tensor]:
  """(lo, hi) world AABBs [m] of the hashed geoms, each (B, N, 3), N = len(hashed_geoms(model)), expanded on every
  side by 2 dt (|v| + |w| rho) + contact margin, rho the geom's bounding radius plus its offset from the body's centre
  of mass (world geoms: zero velocity). packed: (B, nbody, 13) realised."""
  box = _aabb(model, hashed_geoms(model), packed).realize()
  return box[..., 0:3], box[..., 3:6]


def plane_reach(model, packed: Tensor, pairs: list[tuple[int, int]]) -> Tensor:
  """(B, len(pairs)) bool, for static (plane, geom) pairs: whether the geom's AABB (as the hash grows it: for the
  step's motion and the contact margin) reaches the plane's half-space: its lowest corner along the plane's normal n
  (the plane frame's z axis) is at or below the plane, sum_k n_k (lo_k if n_k > 0 else hi_k) <= n . p. A plane pairs
  with the geoms that can touch it this step, as the hash pairs geoms, so a body in the air has no plane slots to
  solve (kernels/broadphase.wgsl plane_reach writes the same sums in the same order)."""
  geoms = hashed_geoms(model)
  box = _aabb(model, geoms, packed)                                                    # (B, N, 6) [lo | hi]
  at = const([geoms.index(g) for _, g in pairs], packed, dtypes.int32)
  lo, hi = box[:, at, 0:3], box[:, at, 3:6]                                            # (B, P, 3)
  planes = tuple(p for p, _ in pairs)
  n = Quat(*(take(model.geom_quat[..., k], planes) for k in range(4))).rotation_columns()[2]
  pos = V3(*(take(model.geom_pos[..., k], planes) for k in range(3)))
  def low(k, nk): return (nk > 0).where(lo[..., k], hi[..., k])
  lowest = n.x * low(0, n.x) + n.y * low(1, n.y) + n.z * low(2, n.z)
  return lowest <= n.x * pos.x + n.y * pos.y + n.z * pos.z


def table_size(n: int) -> int:
  """H: hash buckets per env, the smallest power of two >= 2 n (sparse, so distinct cells rarely share a bucket)."""
  return 1 << max(2 * n - 1, 1).bit_length()


def _bucket(cx: Tensor, cy: Tensor, cz: Tensor, nbuckets: int) -> Tensor:
  """Teschner et al. 2003: (ix p1 ^ iy p2 ^ iz p3) mod H on uint32 (products wrap mod 2^32, as in WGSL); int32."""
  u = [c.bitcast(dtypes.uint32) * p for c, p in zip((cx, cy, cz), HASH_PRIMES)]
  return ((u[0] ^ u[1] ^ u[2]) & (nbuckets - 1)).bitcast(dtypes.int32)


def pair_allowed(body_a: int, body_b: int, exclude: frozenset) -> bool:
  """The collision rule, the one place it is written (engine/scene.py sizes the capacities with it, the kernel
  mirrors it as kernels/broadphase.wgsl pair_allowed from tables generated here): geoms of different bodies (two
  world geoms share WORLD) whose body pair is not excluded (joined by a joint with collide false)."""
  return body_a != body_b and (min(body_a, body_b), max(body_a, body_b)) not in exclude


def _rules(model, geoms) -> np.ndarray:
  """(N, N) bool, static: i < j in hashed order and pair_allowed."""
  body = [model.geom_body[g] for g in geoms]
  ok = np.zeros((len(geoms),) * 2, bool)
  for i, j in itertools.combinations(range(len(geoms)), 2): ok[i, j] = pair_allowed(body[i], body[j],
                                                                                    model.collide_exclude)
  return ok


def _type_pair(model, ga: int, gb: int) -> tuple[tuple[str, str], int, int]:
  """((type_a, type_b), geom of type_a, geom of type_b) for ga < gb: column 0 gets the earlier type in GEOM_TYPES."""
  ta, tb = model.geom_type[ga], model.geom_type[gb]
  if GEOM_TYPES.index(tb) < GEOM_TYPES.index(ta): return (tb, ta), gb, ga
  return (ta, tb), ga, gb


def _blocks(model, geoms) -> list[tuple[tuple[int, ...], tuple[int, ...], int]]:
  """Per entry (a, b, capacity) of model.pair_capacity: the hashed positions of the geoms of type a (rows of its
  block), of type b (columns), and the capacity."""
  def of(kind): return tuple(i for i, g in enumerate(geoms) if model.geom_type[g] == kind)
  return [(of(a), of(b), cap) for a, b, cap in model.pair_capacity]


@dataclass(frozen=True)
class _Static:
  """One model's collision topology as constant tensors, realised once: a Tensor built from Python inside the
  function would be uploaded on every call. T type pairs (model.pair_capacity order), each a block of R x C
  (the most rows, columns of any block; smaller blocks are padded)."""
  offsets: tuple          # 3 x (27,) int32: neighbour cell offsets per axis, NEIGHBOURS order
  where: Tensor           # (T, R, C) int32: i N + j of block entry (r, c) in the (N, N) pair matrix
  allowed: Tensor         # (T, R, C) int32: 1 where the rules allow pair (i, j) (i < j, bodies), 0 also in padding
  cols: Tensor            # (T, 2, R C) int32: model geom index + 1 of column 0 / column 1 of block entry r C + c
  caps: Tensor            # (T,) int32: capacity per type pair
  width: int              # P: the largest capacity


_STATICS: dict = {}


def _statics(model, geoms, device) -> _Static:
  key = (model.geom_type, model.geom_body, model.collide_exclude, model.pair_capacity, device)
  if key in _STATICS: return _STATICS[key]
  blocks, rules, n = _blocks(model, geoms), _rules(model, geoms), len(geoms)
  shape = (len(blocks), max(len(rows) for rows, _, _ in blocks), max(len(cols) for _, cols, _ in blocks))
  where, allowed, cols = np.zeros(shape, np.int32), np.zeros(shape, np.int32), np.zeros((*shape, 2), np.int32)
  for t, (rows, columns, _) in enumerate(blocks):
    for (r, i), (c, j) in itertools.product(enumerate(rows), enumerate(columns)):
      # the pair matrix holds pair {i, j} at [min, max] (found from the lower hashed index); a block of equal
      # types holds each pair twice, at (r, c) and (c, r): keep i < j
      where[t, r, c], allowed[t, r, c] = min(i, j) * n + max(i, j), rules[min(i, j), max(i, j)] and (
        i < j or model.geom_type[geoms[i]] != model.geom_type[geoms[j]])
      cols[t, r, c] = geoms[i] + 1, geoms[j] + 1
  offsets = [np.array([d[a] for d in NEIGHBOURS], np.int32) for a in range(3)]
  def up(a):   # outside any TinyJit capture, which would record the copy and replay it (oracle/math3.py const)
    with Context(CAPTURING=0): return Tensor(np.ascontiguousarray(a), device=device).realize()
  _STATICS[key] = _Static(tuple(up(o) for o in offsets), up(where), up(allowed),
                          up(cols.reshape(shape[0], -1, 2).transpose(0, 2, 1)),
                          up(np.array([cap for *_, cap in blocks], np.int32)), max(cap for *_, cap in blocks))
  return _STATICS[key]


def _arange(n: int) -> Tensor: return Tensor.arange(n, dtype=dtypes.int32)


def _gather(src: Tensor, idx: Tensor, size: int) -> Tensor:
  """src[..., idx] along src's last axis (length size), idx broadcast against src's leading axes; an index outside
  [0, size) reads 0. A one-hot sum, which tinygrad usually lowers to one indexed load (no loop over size)."""
  return (idx.unsqueeze(-1) == _arange(size)).where(src, 0).sum(-1)


def broadphase(model, packed: Tensor) -> PairTable:
  """Candidate pairs per env and type pair from the spatial hash. packed: (B, nbody, 13) realised, once per step.
  Realised: the tables are views of one (B, T, P, 2) buffer. 18 kernels when all three hashed types are present."""
  geoms, B = hashed_geoms(model), packed.shape[0]
  if not model.pair_capacity:  # nothing can pair (no contacts, or every pair excluded): no table, nothing to lose
    zero = Tensor.zeros(B, dtype=dtypes.int32, device=packed.device).contiguous().realize()
    return PairTable({}, zero, zero)
  n, slots, nbuckets, st = len(geoms), model.hash_slots, table_size(len(geoms)), _statics(model, geoms, packed.device)
  idx1 = _arange(n) + 1                                                                 # geom + 1: 0 marks empty

  # 1. AABBs, and per env the cell size: the largest full extent (with margin), so overlapping AABBs have centres in
  #    neighbouring cells whatever their velocities
  box = _aabb(model, geoms, packed)
  lo, hi = box[..., 0:3], box[..., 3:6]
  size = _stage((hi - lo).max(axis=(1, 2)) * CELL_MARGIN)                              # (B,) [m]
  # 2. cell (clamped, see CELL_LIMIT; a NaN centre goes to cell 0, its AABB overlaps nothing) and bucket of each
  #    geom: (B, N, 4) int32 [ix | iy | iz | bucket]
  q = ((lo + hi) * 0.5 / size.reshape(B, 1, 1)).floor()
  cell = (q == q).where(q, 0.0).clip(-CELL_LIMIT, CELL_LIMIT).cast(dtypes.int32)
  cells = _stage(cell.cat(_bucket(cell[..., 0], cell[..., 1], cell[..., 2], nbuckets).unsqueeze(-1), dim=-1))
  key = cells[..., 3]

  # 3. bucket table (B, H, M, 4): [geom + 1 | cell] in slot `rank` of bucket `key`, 0 where empty. A geom's rank is
  #    the number of lower-index geoms with its key, so a bucket lists its geoms in order; rank >= M: overflow
  lower = _arange(n).reshape(1, n) < _arange(n).reshape(n, 1)                          # [i, j]: j < i
  rank = _stage(((key.reshape(B, n, 1) == key.reshape(B, 1, n)) & lower).sum(-1).cast(dtypes.int32))  # (B, N)
  into = ((key.reshape(B, n, 1, 1, 1) == _arange(nbuckets).reshape(nbuckets, 1, 1))
          & (rank.reshape(B, n, 1, 1, 1) == _arange(slots).reshape(slots, 1)))          # (B, N, H, M, 1)
  entry = idx1.reshape(1, n, 1).expand(B, n, 1).cat(cells[..., 0:3], dim=-1)           # (B, N, 4)
  table = _stage(into.where(entry.reshape(B, n, 1, 1, 4), 0).sum(1).cast(dtypes.int32))

  # 4. every geom reads the M slots of the buckets of its 27 neighbour cells (B, N, 27, M, 4); a slot's geom j counts
  #    only if j's cell IS that neighbour cell, so hash collisions drop out and j is seen once (one cell, one slot)
  ncell = [cells[..., a].reshape(B, n, 1) + st.offsets[a] for a in range(3)]           # (B, N, 27) each
  nkey = _bucket(*ncell, nbuckets)
  slot = table.permute(0, 2, 3, 1).reshape(B, 1, 1, slots, 4, nbuckets)               # (B, 1, 1, M, 4, H)
  def read(c): return _gather(slot[..., c, :], nkey.reshape(B, n, 27, 1), nbuckets)     # (B, N, 27, M)
  same = (read(1) == ncell[0].reshape(B, n, 27, 1)) & (read(2) == ncell[1].reshape(B, n, 27, 1)) & (
    read(3) == ncell[2].reshape(B, n, 27, 1))
  cand = _stage(same.where(read(0), 0))                                                # (B, N, 27, M) geom + 1
  # pairs (i, j): j among i's candidates and the AABBs overlap; the static rules (i < j, bodies differ, not excluded)
  # apply when the blocks are gathered below (st.allowed)
  fits = (rank < slots).reshape(B, n, 1)                                               # a geom not in the table
  found = _stage(((cand.reshape(B, n, 27 * slots, 1) == idx1).sum(2) > 0) & fits)      # (B, N, N) [i, j]
  overlap = found
  for a in range(3):
    overlap = overlap & (lo[..., a].reshape(B, n, 1) <= hi[..., a].reshape(B, 1, n)) & (
      lo[..., a].reshape(B, 1, n) <= hi[..., a].reshape(B, n, 1))
  accept = _stage(overlap.cast(dtypes.int32).reshape(B, n * n))                        # (B, N N) row-major

  # 5. compaction. Type pair t's pairs form a block (rows: geoms of type a, columns: type b, each in index order)
  #    gathered from `accept` (pair {i, j} sits at [min, max]); numbered row-major by prefix sums, pair k goes to row
  #    k - 1 of the table if k <= capacity, else to overflow. Table row k - 1 finds its pair as the kernel places it:
  #    the block row from the rows' running totals, then the column from that row's running count.
  nrow, ncol, width = st.where.shape[1], st.where.shape[2], st.width
  blk = _gather(accept.reshape(B, 1, 1, 1, n * n), st.where, n * n) * st.allowed        # (B, T, R, C) 0 / 1
  upto = _stage(blk.cumsum(-1))                                                        # pairs in row r, columns <= c
  total = _stage(upto[..., -1].cumsum(-1))                                             # (B, T, R) pairs in rows <= r
  k = _arange(width) + 1                                                               # (P,) slot k - 1, 1-based
  row = _stage((total.reshape(B, -1, 1, nrow) < k.reshape(width, 1)).sum(-1))          # (B, T, P) row of pair k
  before = _gather(total.reshape(B, -1, 1, nrow), row - 1, nrow)                       # pairs in rows < row
  line = _gather(upto.permute(0, 1, 3, 2).reshape(B, -1, 1, ncol, nrow), row.unsqueeze(-1), nrow)  # (B, T, P, C)
  col = _stage((line < (k - before).unsqueeze(-1)).sum(-1))                            # (B, T, P) column of pair k
  count = total[..., -1]                                                               # (B, T)
  got = _gather(st.cols.reshape(1, -1, 1, 2, nrow * ncol), (row * ncol + col).unsqueeze(-1), nrow * ncol)
  out = _stage(((k <= count.minimum(st.caps).unsqueeze(-1)).unsqueeze(-1).where(got, 0) - 1).cast(dtypes.int32))
  overflow = _stage(((count - st.caps).maximum(0).sum(-1) + (rank >= slots).sum(-1)).cast(dtypes.int32))
  tested = _stage((found & ~lower.reshape(1, n, n) & ~Tensor.eye(n, dtype=dtypes.bool)).sum((1, 2))
                  .cast(dtypes.int32))
  Tensor.realize(out, overflow, tested)
  pairs = {(a, b): out[:, t, :cap] for t, (a, b, cap) in enumerate(model.pair_capacity)}
  return PairTable(pairs, overflow, tested)


def brute_force_pairs(model, packed: Tensor) -> list[set]:
  """Numpy reference: per env the set of (type_a, type_b, ga, gb) pairs whose AABBs (from geom_aabb) overlap and
  that the rules allow, every pair tested against every other."""
  geoms = hashed_geoms(model)
  if not geoms: return [set() for _ in range(packed.shape[0])]
  lo, hi = (t.numpy() for t in geom_aabb(model, packed))
  rules = _rules(model, geoms)
  out = []
  for b in range(lo.shape[0]):
    found = set()
    for i, j in zip(*np.nonzero(rules)):
      if (lo[b, i] <= hi[b, j]).all() and (lo[b, j] <= hi[b, i]).all():
        (ta, tb), ga, gb = _type_pair(model, geoms[i], geoms[j])
        found.add((ta, tb, ga, gb))
    out.append(found)
  return out
