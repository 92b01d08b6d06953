"""Narrowphase parity: the kernel's pair functions (kernels/primitives.wgsl, box.wgsl, box_box.wgsl) against the
oracle's (oracle/collide/), one pair type at a time, on the same random float32 geom pairs.

One WGSL program runs every pair type at once (one invocation per pair, the pair type from its index) and writes each
slot's (pa, pb, n, valid); the oracle runs each pair function once on the CPU in float32. Slots are compared in the
oracle's order: valid flags identical, pa, pb, n and depth = (pa - pb).n within TOL over the valid slots.

Near a discrete threshold (a tie between box faces, a bisection step whose derivative is ~0, an inside test on the
boundary) one float32 rounding can flip a choice, and both answers are right. Such lanes are found from the oracle
alone: it also runs on 2 NJITTER copies of each lane moved by ~JITTER (a few ulps), and a lane whose oracle output
moves by more than TOL under that is ill-conditioned. Every lane must then either
- agree with the oracle at the same input, or
- agree with the oracle at one of the jittered inputs (the kernel took the other side of a threshold), or
- be ill-conditioned with the same valid flags, normals and depths, the points moved (capsule_box's slot 2 sliding
  along a flat interval, box_box's slots permuted among equally deep points), or
- be ill-conditioned and excluded: at most MAX_EXCLUDED of the lanes, so the test cannot pass by excluding them all.
The counts of each are printed (pytest -s).
"""
from __future__ import annotations
import re
import numpy as np
import pytest
from tinygrad import Tensor, dtypes
import engine.wgsl as wgsl
from engine.npquat import quat_mul, quat_rotate
from kernels.program import collide_source
from oracle.collide import NARROWPHASE, Geom
from oracle.math3 import V3, Quat

N = 768            # lanes per pair type
TOL = 1e-5         # [m] or [-]: positions are O(1) m, so ~100 float32 ulps
JITTER = 3e-7      # [m] or [-]: input perturbation of the conditioning probe (a few float32 ulps)
NJITTER = 8        # random directions, each applied with + and -
MAX_EXCLUDED = 0.03  # fraction of lanes that may be excluded as ill-conditioned
W = 20             # floats per lane: a.pos 3, a.rot 4 (w, x, y, z), a.size 3, then the same for b
KINDS = list(NARROWPHASE)


def wgsl_source() -> str:
  return collide_source()


def ported() -> dict[tuple[str, str], str]:
  """The registered pairs whose function the WGSL defines: pair -> function name."""
  fns = set(re.findall(r"^fn (\w+)\(", wgsl_source(), flags=re.M))
  return {k: NARROWPHASE[k][0].__name__ for k in KINDS if NARROWPHASE[k][0].__name__ in fns}


def entry_source(kinds: list[tuple[str, str]]) -> str:
  """The test entry point: invocation e runs pair type kinds[e / N] on lane e and writes its K slots to
  out[e, slot, 0:10] = (pa, pb, n, valid); the 8 - K slots it does not have stay NaN (CHECK poisons them)."""
  cases = "\n".join(f"    case {i}u: {{ {NARROWPHASE[k][0].__name__}(a, b); count = {NARROWPHASE[k][1]}u; }}"
                    for i, k in enumerate(kinds))
  return f"""
@group(0) @binding(0) var<uniform> INFINITY: f32;
@group(0) @binding(1) var<storage, read_write> outp: array<f32>;
@group(0) @binding(2) var<storage, read_write> geo: array<f32>;

fn geom_in(o: u32) -> Geom {{
  return Geom(vec3<f32>(geo[o], geo[o + 1u], geo[o + 2u]),
              Quat(geo[o + 3u], vec3<f32>(geo[o + 4u], geo[o + 5u], geo[o + 6u])),
              vec3<f32>(geo[o + 7u], geo[o + 8u], geo[o + 9u]));
}}

@compute @workgroup_size(64)
fn narrowphase_parity(@builtin(global_invocation_id) gid: vec3<u32>) {{
  if (gid.x >= {len(kinds) * N}u) {{ return; }}
  let a = geom_in(gid.x * {W}u);
  let b = geom_in(gid.x * {W}u + 10u);
  var count = 0u;
  switch gid.x / {N}u {{
{cases}
    default: {{}}
  }}
  for (var s = 0u; s < count; s++) {{
    let o = (gid.x * 8u + s) * 10u;
    let c = nc[s];
    outp[o] = c.pa.x; outp[o + 1u] = c.pa.y; outp[o + 2u] = c.pa.z;
    outp[o + 3u] = c.pb.x; outp[o + 4u] = c.pb.y; outp[o + 5u] = c.pb.z;
    outp[o + 6u] = c.n.x; outp[o + 7u] = c.n.y; outp[o + 8u] = c.n.z;
    outp[o + 9u] = select(0.0, 1.0, c.valid);
  }}
}}
"""


# ---------------------------------------------------------------- random geom pairs

def unit(v: np.ndarray) -> np.ndarray: return v / np.linalg.norm(v, axis=-1, keepdims=True)


def about(axis, angle) -> np.ndarray:
  """Quaternions (n, 4) of turns by `angle` (n,) [rad] about the unit `axis` (3,) or (n, 3)."""
  angle = np.asarray(angle, np.float64)
  axis = np.broadcast_to(np.asarray(axis, np.float64), angle.shape + (3,))
  return np.concatenate([np.cos(angle / 2)[:, None], axis * np.sin(angle / 2)[:, None]], -1)


class Lanes:
  """n random pairs of one type (float64 pos, rot, size of a and b), built from categories: generic poses and the
  oracle's documented degenerate cases, each a function filling every lane, of which `mix` keeps its share."""
  def __init__(self, rng: np.random.Generator, n: int):
    self.rng, self.n = rng, n
    self.pos = [np.zeros((n, 3)), np.zeros((n, 3))]
    self.rot = [np.tile([1.0, 0.0, 0.0, 0.0], (n, 1)), np.tile([1.0, 0.0, 0.0, 0.0], (n, 1))]
    self.size = [np.zeros((n, 3)), np.zeros((n, 3))]

  def u(self, lo, hi, shape=()) -> np.ndarray: return self.rng.uniform(lo, hi, (self.n,) + shape)
  def quats(self) -> np.ndarray: return unit(self.rng.normal(size=(self.n, 4)))
  def dirs(self) -> np.ndarray: return unit(self.rng.normal(size=(self.n, 3)))
  def frames(self, exact_share=0.3) -> np.ndarray:
    """Random orientations, the identity on a share of the lanes (exact axes: exact ties stay exact)."""
    q = self.quats()
    q[self.u(0, 1) < exact_share] = [1.0, 0.0, 0.0, 0.0]
    return q

  def round_size(self, g: int, kind: str):
    self.size[g][:, 0] = self.u(0.05, 0.5)
    if kind == "capsule": self.size[g][:, 1] = self.u(0.05, 0.5)
    if kind == "box": self.size[g] = self.u(0.05, 0.5, (3,))

  def mix(self, parts: list[tuple[float, callable]]) -> np.ndarray:
    """Each lane from one of the categories `parts` [(share, fn(lanes))], drawn by share: (n, W) rows."""
    cat = self.rng.choice(len(parts), size=self.n, p=np.array([s for s, _ in parts]) / sum(s for s, _ in parts))
    snapshot = [(p.copy(), r.copy(), s.copy()) for p, r, s in zip(self.pos, self.rot, self.size)]
    rows = np.zeros((self.n, W))
    for i, (_, fn) in enumerate(parts):
      for g in range(2): self.pos[g], self.rot[g], self.size[g] = (x.copy() for x in snapshot[g])
      fn(self)
      m = cat == i
      for g in range(2):
        rows[m, 10 * g:10 * g + 3], rows[m, 10 * g + 3:10 * g + 7] = self.pos[g][m], self.rot[g][m]
        rows[m, 10 * g + 7:10 * g + 10] = self.size[g][m]
    return rows


def radius(L: Lanes, g: int, kind: str) -> np.ndarray:
  """Bounding radius of geom g [m]."""
  s = L.size[g]
  return {"sphere": s[:, 0], "capsule": s[:, 0] + s[:, 1], "box": np.linalg.norm(s, axis=-1)}[kind]


def generic(ta: str, tb: str):
  """Random orientations; b at a random direction from a, from overlapping to a little apart (plane: b at a random
  signed height above the plane)."""
  def fill(L: Lanes):
    L.round_size(1, tb)
    L.pos[0], L.rot[0], L.rot[1] = L.u(-1, 1, (3,)), L.quats(), L.quats()
    if ta == "plane":
      normal = quat_rotate(L.rot[0], np.tile([0.0, 0.0, 1.0], (L.n, 1)))
      along = L.u(-1, 1, (3,))
      along -= normal * (along * normal).sum(-1, keepdims=True)
      L.pos[1] = L.pos[0] + along + normal * (L.u(-1.0, 1.3) * radius(L, 1, tb))[:, None]
    else:
      L.round_size(0, ta)
      reach = radius(L, 0, ta) + radius(L, 1, tb)
      L.pos[1] = L.pos[0] + L.dirs() * (reach * L.u(0.0, 1.1))[:, None]
  return fill


def plane_flat(tb: str):
  """b resting flat on the plane: a box face-down (4 corners at one height), a capsule lying along the plane."""
  def fill(L: Lanes):
    L.round_size(1, tb)
    L.pos[0], L.rot[0] = L.u(-1, 1, (3,)), L.frames()
    spin = about([0.0, 0.0, 1.0], L.u(0, 2 * np.pi))
    if tb == "capsule": spin = quat_mul(spin, about([1.0, 0.0, 0.0], np.full(L.n, np.pi / 2)))  # axis along the plane
    L.rot[1] = quat_mul(L.rot[0], spin)
    height = (L.size[1][:, 2] if tb == "box" else L.size[1][:, 0]) + L.rng.choice([0.0, -1e-3, 1e-3, -0.02], L.n)
    offset = np.concatenate([L.u(-1, 1, (2,)), height[:, None]], -1)
    L.pos[1] = L.pos[0] + quat_rotate(L.rot[0], offset)
  return fill


def coincident(ta: str, tb: str):
  """Coincident centres (the fallback normals); same or random orientations."""
  def fill(L: Lanes):
    L.round_size(0, ta)
    L.round_size(1, tb)
    L.pos[0] = L.u(-1, 1, (3,))
    L.pos[1] = L.pos[0].copy()
    L.rot[0] = L.frames()
    L.rot[1] = np.where(L.u(0, 1)[:, None] < 0.5, L.rot[0], L.quats())
  return fill


def sphere_on_segment(L: Lanes):
  """Sphere centre on the capsule's segment (centre inside or past its ends on the axis)."""
  L.round_size(0, "sphere")
  L.round_size(1, "capsule")
  L.pos[1], L.rot[1] = L.u(-1, 1, (3,)), L.frames()
  axis = quat_rotate(L.rot[1], np.tile([0.0, 0.0, 1.0], (L.n, 1)))
  t = L.size[1][:, 1] * L.rng.choice([0.0, 0.5, -1.0, 1.0, 1.5, -3.0], L.n)
  L.pos[0] = L.pos[1] + axis * t[:, None]


def capsules_parallel(L: Lanes):
  """Parallel (same or opposite) or collinear axes, side by side at about ra + rb, overlapping or not along the
  axis; and axes crossing at a point (intersecting segments)."""
  L.round_size(0, "capsule")
  L.round_size(1, "capsule")
  L.pos[0], L.rot[0] = L.u(-1, 1, (3,)), L.frames()
  flip = np.where(L.u(0, 1)[:, None] < 0.5, [[1.0, 0.0, 0.0, 0.0]], [[0.0, 1.0, 0.0, 0.0]])  # 180 deg about x
  tilt = about(unit(L.rng.normal(size=(L.n, 3))), L.rng.choice([0.0, 0.0, 1e-6, 1e-4, 0.02, 0.3], L.n))
  L.rot[1] = quat_mul(quat_mul(L.rot[0], flip), tilt)
  ua = quat_rotate(L.rot[0], np.tile([0.0, 0.0, 1.0], (L.n, 1)))
  side = quat_rotate(L.rot[0], np.tile([1.0, 0.0, 0.0], (L.n, 1)))
  gap = (L.size[0][:, 0] + L.size[1][:, 0]) * L.rng.choice([0.0, 0.5, 1.0, 1.01, 0.99], L.n)
  along = (L.size[0][:, 1] + L.size[1][:, 1]) * L.u(-1.3, 1.3)
  L.pos[1] = L.pos[0] + side * gap[:, None] + ua * along[:, None]
  cross = L.u(0, 1) < 0.2  # intersecting axes: b's centre offset along its own axis from a point on a's segment
  L.rot[1][cross] = L.quats()[cross]
  ub = quat_rotate(L.rot[1], np.tile([0.0, 0.0, 1.0], (L.n, 1)))
  hit = L.pos[0] + ua * (L.size[0][:, 1] * L.u(-1, 1))[:, None] - ub * (L.size[1][:, 1] * L.u(-1, 1))[:, None]
  L.pos[1][cross] = hit[cross]


def sphere_in_box(L: Lanes):
  """Sphere centre inside the box, at its centre (equal clearances on a cube), on a face or on an edge."""
  L.round_size(0, "sphere")
  L.round_size(1, "box")
  cube = L.u(0, 1) < 0.3
  L.size[1][cube] = L.size[1][cube][:, :1]
  L.pos[1], L.rot[1] = L.u(-1, 1, (3,)), L.frames()
  loc = L.size[1] * L.rng.choice([0.0, 0.5, -0.5, 1.0, -1.0, 1.2, 0.3], (L.n, 3))
  L.pos[0] = L.pos[1] + quat_rotate(L.rot[1], loc)


def capsule_over_box(L: Lanes):
  """Capsule lying parallel over a box face (the flat-interval case), standing on it, piercing it, or lying across
  an edge."""
  L.round_size(0, "capsule")
  L.round_size(1, "box")
  L.pos[1], L.rot[1] = L.u(-1, 1, (3,)), L.frames()
  pose = L.rng.integers(0, 4, L.n)
  lying = quat_mul(about([0.0, 0.0, 1.0], L.u(0, 2 * np.pi)), about([1.0, 0.0, 0.0], np.full(L.n, np.pi / 2)))
  standing = np.tile([1.0, 0.0, 0.0, 0.0], (L.n, 1))
  local = np.where((pose == 1)[:, None], standing, np.where((pose == 2)[:, None], L.quats(), lying))
  L.rot[0] = quat_mul(L.rot[1], local)
  lift = np.where(pose == 1, L.size[0][:, 1] + L.size[0][:, 0], L.size[0][:, 0])
  height = L.size[1][:, 2] + lift * L.rng.choice([1.0, 1.0, 0.99, 1.01, 0.0], L.n)
  height = np.where(pose == 2, L.size[1][:, 2] * L.u(-0.5, 0.5), height)
  xy = L.size[1][:, :2] * np.where((pose == 3)[:, None], 1.0, L.u(-0.8, 0.8, (2,)))
  L.pos[0] = L.pos[1] + quat_rotate(L.rot[1], np.concatenate([xy, height[:, None]], -1))


def boxes_face(L: Lanes):
  """Face to face: b on a's +-z face, turned about the shared normal (0 or random), at a small gap or overlap;
  equal cubes stacked exactly on a share of the lanes."""
  L.round_size(0, "box")
  L.round_size(1, "box")
  equal = L.u(0, 1) < 0.3
  L.size[1][equal] = L.size[0][equal]
  L.pos[0], L.rot[0] = L.u(-1, 1, (3,)), L.frames()
  turn = np.where(L.u(0, 1) < 0.4, 0.0, L.u(0, 2 * np.pi))
  L.rot[1] = quat_mul(L.rot[0], about([0.0, 0.0, 1.0], turn))
  up = L.rng.choice([1.0, -1.0], L.n)
  height = (L.size[0][:, 2] + L.size[1][:, 2] + L.rng.choice([0.0, -1e-3, 1e-3, -0.02, 2e-3], L.n)) * up
  xy = np.where(equal[:, None] & (L.u(0, 1) < 0.5)[:, None], 0.0, L.size[0][:, :2] * L.u(-1.2, 1.2, (2,)))
  L.pos[1] = L.pos[0] + quat_rotate(L.rot[0], np.concatenate([xy, height[:, None]], -1))


def boxes_edge(L: Lanes):
  """Edge to edge: a turned 45 deg about its x, b 45 deg about y in a's frame, stacked so the edges cross (a small
  gap or overlap); sometimes tilted off the exact crossing."""
  L.round_size(0, "box")
  L.round_size(1, "box")
  L.pos[0], frame = L.u(-1, 1, (3,)), L.frames()
  tilt = about(L.dirs(), L.rng.choice([0.0, 0.0, 0.05], L.n))
  L.rot[0] = quat_mul(frame, about([1.0, 0.0, 0.0], np.full(L.n, np.pi / 4)))
  L.rot[1] = quat_mul(frame, quat_mul(tilt, about([0.0, 1.0, 0.0], np.full(L.n, np.pi / 4))))
  # heights of the top edge of a (along x) and the bottom edge of b (along y) over their centres
  height = ((L.size[0][:, 1] + L.size[0][:, 2]) + (L.size[1][:, 0] + L.size[1][:, 2])) / np.sqrt(2)
  height = height + L.rng.choice([0.0, -1e-3, 1e-3, -0.02], L.n)
  xy = L.u(-0.05, 0.05, (2,))
  L.pos[1] = L.pos[0] + quat_rotate(frame, np.concatenate([xy, height[:, None]], -1))


def categories(ta: str, tb: str) -> list[tuple[float, callable]]:
  parts = [(1.0, generic(ta, tb))]
  if ta == "plane": parts += [(0.5, plane_flat(tb))] if tb != "sphere" else []
  else: parts += [(0.15, coincident(ta, tb))]
  parts += {("sphere", "capsule"): [(0.3, sphere_on_segment)], ("capsule", "capsule"): [(0.8, capsules_parallel)],
            ("sphere", "box"): [(0.5, sphere_in_box)], ("capsule", "box"): [(0.8, capsule_over_box)],
            ("box", "box"): [(0.6, boxes_face), (0.4, boxes_edge)]}.get((ta, tb), [])
  return parts


def inputs(kind: tuple[str, str], seed: int) -> np.ndarray:
  """(N, W) float32 rows of one pair type, quaternions unit in float64 before the cast."""
  rows = Lanes(np.random.default_rng(seed), N).mix(categories(*kind))
  return rows.astype(np.float32)


def jittered(rows: np.ndarray, seed: int) -> np.ndarray:
  """(2 NJITTER, N, W): the rows moved by +-JITTER along NJITTER random directions (positions, sizes and
  quaternions, the quaternions renormalised); a plane's unused size stays as it is."""
  rng = np.random.default_rng(seed)
  out = []
  for _ in range(NJITTER):
    d = rng.normal(size=rows.shape) * JITTER
    for s in (1.0, -1.0):
      r = rows.astype(np.float64) + s * d
      for g in range(2): r[:, 10 * g + 3:10 * g + 7] = unit(r[:, 10 * g + 3:10 * g + 7])
      out.append(r.astype(np.float32))
  return np.stack(out)


# ---------------------------------------------------------------- runs

def oracle(kind: tuple[str, str], rows: np.ndarray) -> np.ndarray:
  """The oracle pair function on rows (M, W) float32, CPU: (M, K, 10) = (pa, pb, n, valid) per slot."""
  fn, k = NARROWPHASE[kind]
  x = Tensor(np.ascontiguousarray(rows.T), dtype=dtypes.float32, device="CPU").realize()
  def geom(o): return Geom(V3(x[o], x[o + 1], x[o + 2]), Quat(x[o + 3], x[o + 4], x[o + 5], x[o + 6]),
                           V3(x[o + 7], x[o + 8], x[o + 9]))
  cs = fn(geom(0), geom(10))
  assert len(cs) == k
  cols = [v.cast(dtypes.float32).expand(rows.shape[0]) for c in cs
          for v in (c.pa.x, c.pa.y, c.pa.z, c.pb.x, c.pb.y, c.pb.z, c.n.x, c.n.y, c.n.z, c.valid)]
  return Tensor.stack(*cols).numpy().reshape(k, 10, -1).transpose(2, 0, 1)


@pytest.fixture(scope="module")
def gpu():
  """Every ported pair type in one WGSL launch: kind -> (rows (N, W), out (N, 8, 10))."""
  wgsl.require_webgpu()
  old, wgsl.CHECK = wgsl.CHECK, True
  try:
    kinds = list(ported())
    rows = {k: inputs(k, seed=i) for i, k in enumerate(KINDS) if k in kinds}
    if not kinds: return {}
    src = wgsl_source() + entry_source(kinds)
    geo = Tensor(np.concatenate([rows[k] for k in kinds]), device="WEBGPU")
    out = wgsl.launch(src, "narrowphase_parity", (len(kinds) * N, 8, 10), geo, threads=len(kinds) * N).numpy()
    return {k: (rows[k], out[i * N:(i + 1) * N]) for i, k in enumerate(kinds)}
  finally:
    wgsl.CHECK = old


def slot_diff(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
  """Per lane: valid flags differ in any slot; max |pa, pb, n| difference and |depth| difference over the slots
  valid in both. x, y: (M, K, 10)."""
  both = (x[..., 9] > 0.5) & (y[..., 9] > 0.5)
  flags = ((x[..., 9] > 0.5) != (y[..., 9] > 0.5)).any(-1)
  err = np.where(both, np.abs(x[..., :9] - y[..., :9]).max(-1), 0.0).max(-1)
  def depth(z): return ((z[..., 0:3].astype(np.float64) - z[..., 3:6]) * z[..., 6:9]).sum(-1)
  derr = np.where(both, np.abs(depth(x) - depth(y)), 0.0).max(-1)
  return flags, err, derr


def agree(x: np.ndarray, y: np.ndarray) -> np.ndarray:
  """Per lane: x and y agree slot by slot (valid flags identical, pa, pb, n and depth within TOL)."""
  flags, err, derr = slot_diff(x, y)
  return ~flags & (err <= TOL) & (derr <= TOL)


@pytest.mark.parametrize("kind", KINDS, ids=[f"{a}_{b}" for a, b in KINDS])
def test_parity_narrowphase(gpu, kind):
  name, k = NARROWPHASE[kind][0].__name__, NARROWPHASE[kind][1]
  module = NARROWPHASE[kind][0].__module__.rsplit(".", 1)[-1]
  assert kind in gpu, f"kernels/{module}.wgsl has no `fn {name}(`: port the pair function"
  rows, full = gpu[kind]
  out = full[:, :k]
  assert np.isnan(full[:, k:]).all(), f"{name} wrote past its {k} slots"
  assert np.isfinite(out).all(), f"{name}: a slot left unwritten or not finite"
  ref = oracle(kind, np.concatenate([rows[None], jittered(rows, seed=100)]).reshape(-1, W))
  ref = ref.reshape(1 + 2 * NJITTER, N, k, 10)
  assert np.isfinite(ref).all(), f"oracle {name}: not finite"
  same = agree(out, ref[0])
  # the other side of a threshold: the kernel's answer is the oracle's at an input within JITTER
  near = ~same & np.any([agree(out, r) for r in ref[1:]], axis=0)
  # ill-conditioned: the oracle's own output jumps under a JITTER-sized change of the inputs
  ill = ~np.all([agree(ref[0], r) for r in ref[1:]], axis=0)
  flags, err, derr = slot_diff(out, ref[0])
  # on an ill-conditioned lane, the same contacts but for points moved along a flat interval (capsule_box's slot 2
  # over a face) or permuted among equally deep ones (box_box face to face): flags, n and depth agree
  both = (out[..., 9] > 0.5) & (ref[0][..., 9] > 0.5)
  nerr = np.where(both, np.abs(out[..., 6:9] - ref[0][..., 6:9]).max(-1), 0.0).max(-1)
  slid = ~same & ~near & ill & ~flags & (nerr <= TOL) & (derr <= TOL)
  excluded = ~same & ~near & ~slid & ill
  failed = ~same & ~near & ~ill
  print(f"\n{name}: {N} lanes, {int(ill.sum())} ill-conditioned; {int(same.sum())} agree, {int(near.sum())} agree "
        f"across a threshold, {int(slid.sum())} slid, {int(excluded.sum())} excluded; max |d(pa, pb, n)| "
        f"{err[same].max():.2e}, max |d depth| {derr[same].max():.2e}; valid slots {int((out[..., 9] > 0.5).sum())}"
        f"/{N * k}")
  worst = np.nonzero(failed)[0][:5]
  assert not failed.any(), (f"{name}: {int(failed.sum())} lanes differ (flags {int(flags[failed].sum())}, max err "
                            f"{err[failed].max():.3e}, depth {derr[failed].max():.3e}); e.g. lanes {worst.tolist()}:"
                            f"\n{rows[worst]}\nwgsl\n{out[worst]}\noracle\n{ref[0][worst]}")
  assert excluded.mean() <= MAX_EXCLUDED, f"{name}: {int(excluded.sum())} of {N} lanes excluded as ill-conditioned"
