"""Adjoint parity of the box-box narrowphase (kernels/adjoint/box_box.wgsl box_box_adj) against tinygrad's autograd of
oracle/collide/box_box.py box_box, with tests/test_parity_adjoint.py's harness (its docstring has the judgement): the
gradients of the two geoms (centre, quaternion, half extents) from random gradients of the 4 slots' pa, pb and n.

One case per configuration, so that each branch of the forward is checked on its own: a box resting on another
(the stack: slightly tilted and offset, a few mm deep, 4 contacts; a's face the reference, and b's in most cases),
two boxes crossed at about 45 degrees meeting edge to edge (the edge axis, the closest points inside both edges),
the same apart and past an edge's end (the edge contact's clamps), a corner into a face, random poses, mostly
overlapping (all of these mixed). Each is built in a local frame (z up), then moved by one random rigid motion per
case (edge_end: a translation only, see there).

The draws stay away from the forward's discrete switches: switch_distance replays box_box's choices in float64 and
a case within SAFE of any switch is drawn again (13 in 256 of the stack's: two corners within a few um of the same
depth; a third of the random ones). Near a switch float32 and float64 may choose differently, and the reference is
then another branch's gradient; two choices are decided by rounding alone in some poses (switch_distance, (1) and
(2)), and those poses are drawn again too.
"""
from __future__ import annotations
import hashlib
from pathlib import Path
import numpy as np
import pytest
from engine.npquat import quat_mul, quat_rotate, quat_to_mat
from oracle.collide import box_box as bb
from oracle.collide.box_box import box_box
from tests.test_parity_adjoint import N, Case, run_case, unit_quats
from tests.helpers import wgsl_checked  # noqa: F401 (autouse)

SOURCE_HASH = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()

WRAPPER = """
fn box_box_case(a: Geom, b: Geom, g0: ContactAdj, g1: ContactAdj, g2: ContactAdj, g3: ContactAdj) -> GeomPairAdj {
  gnc[0] = g0;
  gnc[1] = g1;
  gnc[2] = g2;
  gnc[3] = g3;
  return box_box_adj(a, b);
}
"""


# --- configurations, in a local frame with z up; (N, 10) geoms: pos 3, rot 4 (w, x, y, z), size 3 ---

def rot(axis: np.ndarray, angle: np.ndarray) -> np.ndarray:
  """Quaternions of the rotations by angle (N,) about the unit axes (N, 3)."""
  return np.concatenate([np.cos(angle / 2)[:, None], np.sin(angle / 2)[:, None] * axis], axis=1)


def about(k: int, angle: np.ndarray) -> np.ndarray:
  return rot(np.eye(3)[k][None].repeat(len(angle), 0), angle)


def horizontal(rng) -> np.ndarray:
  phi = rng.uniform(0, 2 * np.pi, N)
  return np.stack([np.cos(phi), np.sin(phi), np.zeros(N)], axis=1)


def half_height(q: np.ndarray, size: np.ndarray) -> np.ndarray:
  """How far a box of half extents size, rotated by q, reaches along z from its centre."""
  return np.sum(size * np.abs(quat_to_mat(q)[:, 2, :]), axis=1)


def geoms(rng, pos_lo, q_lo, size_lo, pos_up, q_up, size_up, lower_is_a, turn: bool = True) -> dict[str, np.ndarray]:
  """The lower and upper boxes moved by one random rigid motion per case (a translation only unless turn), as a and
  b (lower_is_a: (N,) bool)."""
  g, t = unit_quats(rng) if turn else np.array([[1.0, 0, 0, 0]]).repeat(N, 0), rng.normal(0, 1, (N, 3))
  lo = np.concatenate([quat_rotate(g, pos_lo) + t, quat_mul(g, q_lo), size_lo], axis=1)
  up = np.concatenate([quat_rotate(g, pos_up) + t, quat_mul(g, q_up), size_up], axis=1)
  return {"a": np.where(lower_is_a[:, None], lo, up), "b": np.where(lower_is_a[:, None], up, lo)}


def stack(rng, lower_is_a: bool):
  """A box resting face down on a larger one: the upper box tilted by 3-8 mrad about a random horizontal axis, yawed
  anyhow, its centre within the lower top face's middle half, its lowest corner 4-10 mm deep. The tilt keeps its
  4 corners' depths apart (by up to ~4 mm, all within MARGIN of the deepest: 4 contacts) and makes the lower box's
  face the reference by a few mm of separation, against the bias of ~0.5 mm. The upper box overhangs in some cases:
  then the clipping's edge crossings and the reference corners are picked too."""
  size_lo = np.stack([rng.uniform(0.2, 0.5, N), rng.uniform(0.2, 0.5, N), rng.uniform(0.05, 0.3, N)], axis=1)
  size_up = rng.uniform(0.1, 0.25, (N, 3))
  q_lo = about(2, rng.uniform(0, 2 * np.pi, N))
  q_up = quat_mul(rot(horizontal(rng), rng.uniform(0.003, 0.008, N)), about(2, rng.uniform(0, 2 * np.pi, N)))
  xy = rng.uniform(-0.5, 0.5, (N, 2)) * size_lo[:, :2]
  pos_up = np.concatenate([quat_rotate(q_lo, np.concatenate([xy, np.zeros((N, 1))], axis=1))[:, :2],
                           (size_lo[:, 2] + half_height(q_up, size_up) - rng.uniform(0.004, 0.01, N))[:, None]], axis=1)
  return geoms(rng, np.zeros((N, 3)), q_lo, size_lo, pos_up, q_up, size_up, np.full(N, lower_is_a))


def edge(rng):
  """Two boxes crossed at about 45 degrees: the upper one turned 45 +- 6 degrees about x (its lowest feature an edge
  along x), the lower one 45 +- 6 degrees about y and yawed by up to 17 degrees (its highest an edge along its y),
  the edges crossing within their middle halves, 1-10 mm deep."""
  size_lo, size_up = rng.uniform(0.1, 0.3, (N, 3)), rng.uniform(0.1, 0.3, (N, 3))
  q_up = about(0, np.pi / 4 + rng.uniform(-0.1, 0.1, N))
  q_lo = quat_mul(about(2, rng.uniform(-0.3, 0.3, N)), about(1, np.pi / 4 + rng.uniform(-0.1, 0.1, N)))
  r_up, r_lo = quat_to_mat(q_up), quat_to_mat(q_lo)
  # the edges' midpoints from the centres: the supports in -z (upper) and +z (lower) of the other two axes
  mid_up = sum(r_up[:, :, k] * (-np.sign(r_up[:, 2, k]) * size_up[:, k])[:, None] for k in (1, 2))
  mid_lo = sum(r_lo[:, :, k] * (np.sign(r_lo[:, 2, k]) * size_lo[:, k])[:, None] for k in (0, 2))
  cross = (mid_lo + r_lo[:, :, 1] * (rng.uniform(-0.5, 0.5, N) * size_lo[:, 1])[:, None]
           - r_up[:, :, 0] * (rng.uniform(-0.5, 0.5, N) * size_up[:, 0])[:, None])
  pos_up = cross - mid_up - np.array([0.0, 0.0, 1.0]) * rng.uniform(0.001, 0.01, (N, 1))
  return geoms(rng, np.zeros((N, 3)), q_lo, size_lo, pos_up, q_up, size_up, rng.random(N) < 0.5)


def edge_end(rng):
  """Edge to edge past an edge's end, where _edge_contact clamps s or t: the upper box turned 45 +- 6 degrees about
  x, the lower about y, 2-10 mm apart (a speculative contact) along z, the edges' lines crossing past one edge's end
  by 10-60 % of the gap (so the edge axis, z, separates them most). Not turned: the edges lie along the world's x
  and y exactly and n along z, so that the supports' signs on the edges' own axes, ua_i.n >= 0 and ub_j.n >= 0, see
  an exact 0 (else they are rounding, and a clamp passes them to the gradient: switch_distance, (2))."""
  size_lo, size_up = rng.uniform(0.1, 0.3, (N, 3)), rng.uniform(0.1, 0.3, (N, 3))
  q_up, q_lo = about(0, np.pi / 4 + rng.uniform(-0.1, 0.1, N)), about(1, np.pi / 4 + rng.uniform(-0.1, 0.1, N))
  r_up, r_lo = quat_to_mat(q_up), quat_to_mat(q_lo)
  mid_up = sum(r_up[:, :, k] * (-np.sign(r_up[:, 2, k]) * size_up[:, k])[:, None] for k in (1, 2))
  mid_lo = sum(r_lo[:, :, k] * (np.sign(r_lo[:, 2, k]) * size_lo[:, k])[:, None] for k in (0, 2))
  gap = rng.uniform(0.002, 0.01, N)
  up_end = rng.random(N) < 0.5   # past the end of the upper box's edge, else of the lower's
  end = rng.choice([-1.0, 1.0], N) * (np.where(up_end, size_up[:, 0], size_lo[:, 1]) + rng.uniform(0.1, 0.6, N) * gap)
  mid = rng.uniform(-0.5, 0.5, N) * np.where(up_end, size_lo[:, 1], size_up[:, 0])
  cross = (mid_lo + r_lo[:, :, 1] * np.where(up_end, mid, end)[:, None]
           - r_up[:, :, 0] * np.where(up_end, end, mid)[:, None])
  pos_up = cross - mid_up + np.array([0.0, 0.0, 1.0]) * gap[:, None]
  return geoms(rng, np.zeros((N, 3)), q_lo, size_lo, pos_up, q_up, size_up, rng.random(N) < 0.5, turn=False)


def corner(rng):
  """A box in a random orientation (its lowest feature a corner) 1-10 mm into a larger box's top face, within its
  middle half; a or b the lower box by halves."""
  size_lo = np.stack([rng.uniform(0.2, 0.5, N), rng.uniform(0.2, 0.5, N), rng.uniform(0.05, 0.3, N)], axis=1)
  size_up = rng.uniform(0.1, 0.3, (N, 3))
  q_lo, q_up = about(2, rng.uniform(0, 2 * np.pi, N)), unit_quats(rng)
  pos_up = np.concatenate([rng.uniform(-0.5, 0.5, (N, 2)) * size_lo[:, :2],
                           (size_lo[:, 2] + half_height(q_up, size_up) - rng.uniform(0.001, 0.01, N))[:, None]], axis=1)
  return geoms(rng, np.zeros((N, 3)), q_lo, size_lo, pos_up, q_up, size_up, rng.random(N) < 0.5)


def random_pair(rng):
  """Random orientations and half extents 0.1-0.5 m, the centres ~0.3 m apart: mostly overlapping, by anything from
  a touch to deep, a few apart (speculative slots)."""
  d = rng.normal(0, 0.3, (N, 3))
  return geoms(rng, np.zeros((N, 3)), unit_quats(rng), rng.uniform(0.1, 0.5, (N, 3)), d, unit_quats(rng),
               rng.uniform(0.1, 0.5, (N, 3)), np.full(N, True))


# --- the draws' distance from the forward's discrete switches ---

SAFE = 1e-5   # [m] a choice is kept when it is this far from its switch (float32 rounds the values to ~1e-7 m)


def _columns(q: np.ndarray) -> np.ndarray:
  """Quat.rotation_columns as written (rows: the three columns)."""
  w, x, y, z = q
  return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y)],
                   [2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x)],
                   [2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y)]])


def _gap(values: list[float]) -> float:
  """How far the largest of values is from the next (inf for one value)."""
  v = sorted(values, reverse=True)
  return v[0] - v[1] if len(v) > 1 else np.inf


def _margin(beats_sep: float, best: float) -> float:
  return abs(beats_sep - (best + bb.FACE_BIAS_REL * abs(best) + bb.FACE_BIAS_ABS))


def switch_distance(ga: np.ndarray, gb: np.ndarray) -> float:
  """How far (in m) the box pair's geoms ga, gb ((10,) each) are from a switch of any discrete choice of box_box
  whose outcome changes the gradient: box_box replayed in float64 (numpy), each choice's margin (in m: a length, or
  a squared length over a length), the smallest returned. 0 where a choice is ill-defined whatever the rounding:
  (1) _pick4's third or fourth scan finding no candidate strictly on its side of the line 1-2 while 1 and 2 are
  apart: p2's own area, ex ey - ey ex, is then 0 or a rounding error of either sign (with a fused multiply-add, as
  clang and GPU compilers emit), so the invalid pick is p1 or p2 by chance; (2) an edge contact clamped to an edge's
  end: the support's sign on that edge's own axis (ua_i.n >= 0, zero but for rounding) then reaches the gradient
  (while the closest points are inside both edges the slide along the edge cancels it), unless ua_i.n and ub_j.n
  are an exact 0 in any arithmetic (their componentwise products are: edge_end)."""
  pa, qa, ha, pb, qb, hb = ga[:3], ga[3:7], ga[7:], gb[:3], gb[3:7], gb[7:]
  ua, ub, d = _columns(qa), _columns(qb), pb - pa
  c = np.abs(ua @ ub.T)
  out = [np.inf]
  # _sat: the face axes
  fa = [abs(d @ ua[k]) - (ha[k] + hb @ c[k]) for k in range(3)]
  fb = [abs(d @ ub[k]) - (hb[k] + ha @ c[:, k]) for k in range(3)]
  ka, kb = int(np.argmax(fa)), int(np.argmax(fb))
  ref_a = not fb[kb] > fa[ka] + bb.FACE_BIAS_REL * abs(fa[ka]) + bb.FACE_BIAS_ABS
  k, us, f_sep = (ka, ua, fa[ka]) if ref_a else (kb, ub, fb[kb])
  n = us[k] * (1.0 if d @ us[k] >= 0 else -1.0)
  out += [_gap(fa), _gap(fb), _margin(fb[kb], fa[ka]), abs(d @ us[k])]
  # the edge axes
  edges = []
  for i in range(3):
    for j in range(3):
      v = np.cross(ua[i], ub[j])
      length = np.linalg.norm(v)
      out.append(abs(length - bb.PARALLEL_SIN))
      if length * length > bb.PARALLEL_SIN ** 2:
        i1, i2, j1, j2 = (i + 1) % 3, (i + 2) % 3, (j + 1) % 3, (j + 2) % 3
        rad = (ha[i1] * c[i2][j] + ha[i2] * c[i1][j] + hb[j1] * c[i][j2] + hb[j2] * c[i][j1]) / length
        edges.append((abs(d @ v / length) - rad, i, j, v / length * (1.0 if d @ v >= 0 else -1.0), abs(d @ v) / length))
  if edges:
    out.append(_gap([e[0] for e in edges]))
    e_sep, i, j, e_n, dl = max(edges, key=lambda e: e[0])
    out += [_margin(e_sep, f_sep), dl]
    if e_sep > f_sep + bb.FACE_BIAS_REL * abs(f_sep) + bb.FACE_BIAS_ABS:   # use_edge: _edge_contact's choices
      out += [abs(ua[m] @ e_n) for m in range(3) if m != i] + [abs(ub[m] @ e_n) for m in range(3) if m != j]
      sa = pa + sum(ua[m] * (ha[m] if ua[m] @ e_n >= 0 else -ha[m]) for m in range(3))
      sb = pb + sum(ub[m] * (-hb[m] if ub[m] @ e_n >= 0 else hb[m]) for m in range(3))
      eu, ev = ua[i], ub[j]
      w = (sa - eu * ((sa - pa) @ eu)) - (sb - ev * ((sb - pb) @ ev))
      cc, f, e = eu @ ev, eu @ w, ev @ w
      s = (cc * e - f) / (1 - cc * cc)
      t = e + np.clip(s, -ha[i], ha[i]) * cc
      if np.any(ua[i] * e_n != 0) or np.any(ub[j] * e_n != 0):   # ua_i.n, ub_j.n not an exact 0: (2)
        out += [ha[i] - abs(s), hb[j] - abs(t)]   # negative (so 0) where clamped
      else: out += [abs(abs(s) - ha[i]), abs(abs(t) - hb[j])]
  out += _face_distance(pa, ha, ua, pb, hb, ub, n, ref_a, k)
  return max(0.0, min(out))


def _face_distance(pa, ha, ua, pb, hb, ub, n, ref_a, k) -> list[float]:
  """_face_contacts' margins: the incident face, the 24 candidates' validity, _pick4's scans (switch_distance)."""
  nr = n if ref_a else -n
  ur, hr, pr, ui, hi, pi = (ua, ha, pa, ub, hb, pb) if ref_a else (ub, hb, pb, ua, ha, pa)
  t1, t2, e1, e2, hk = ur[(k + 1) % 3], ur[(k + 2) % 3], hr[(k + 1) % 3], hr[(k + 2) % 3], hr[k]
  cr = pr + nr * hk
  cos = [ui[m] @ nr for m in range(3)]
  mi = int(np.argmax(np.abs(cos)))
  out = [_gap(list(np.abs(cos))) * (e1 + e2)]
  ni = ui[mi] * (-1.0 if cos[mi] >= 0 else 1.0)
  s1, s2, f1, f2, fh = ui[(mi + 1) % 3], ui[(mi + 2) % 3], hi[(mi + 1) % 3], hi[(mi + 2) % 3], hi[mi]
  frame = np.stack([t1, t2, nr])
  cc, s1r, s2r, nir = frame @ (pi + ni * fh - cr), frame @ s1, frame @ s2, frame @ ni
  e1t, e2t, f1t, f2t = (v * (1 + bb.INSIDE_TOL) for v in (e1, e2, f1, f2))
  cands = []   # (x, y, depth, margins of the validity's tests: >= 0 passes)
  verts = [cc + g1 * f1 * s1r + g2 * f2 * s2r for g1, g2 in ((1, 1), (-1, 1), (-1, -1), (1, -1))]
  for x, y, z in verts: cands.append((x, y, -z, [e1t - abs(x), e2t - abs(y)]))
  for g1, g2 in ((1, 1), (-1, 1), (-1, -1), (1, -1)):
    x, y = e1 * g1, e2 * g2
    z = cc[2] - (nir[0] * (x - cc[0]) + nir[1] * (y - cc[1])) / nir[2]
    q = np.array([x, y, z]) - cc
    cands.append((x, y, -z, [f1t - abs(q @ s1r), f2t - abs(q @ s2r)]))
  for m in range(4):
    p, q = verts[m], verts[(m + 1) % 4]
    for axis, lim, other_lim in ((0, e1, e2t), (1, e2, e1t)):
      dv = q[axis] - p[axis]
      for g in (1.0, -1.0):
        if abs(dv) <= 1e-12:
          cands.append((0.0, 0.0, 0.0, [-np.inf]))
          continue
        t = (lim * g - p[axis]) / dv
        other, z = p[1 - axis] + t * (q[1 - axis] - p[1 - axis]), p[2] + t * (q[2] - p[2])
        xy = (lim * g, other) if axis == 0 else (other, lim * g)
        span = np.linalg.norm(q[:2] - p[:2])
        cands.append((xy[0], xy[1], -z, [t * span, (1 - t) * span, other_lim - abs(other)]))
  valid = []
  for x, y, dep, tests in cands:
    tests = tests + [dep + bb.MARGIN]
    ok = all(m >= 0 for m in tests)
    valid.append(ok)
    # a valid candidate stays so while all its tests pass; an invalid one while its clearest failing test fails
    out.append(min(tests) if ok else max(-m for m in tests if m < 0))
  pts = [(x, y, dep) for (x, y, dep, _), v in zip(cands, valid) if v]
  if len(pts) < 2: return out
  i1 = max(range(len(pts)), key=lambda m: pts[m][2])
  x1, y1 = pts[i1][0], pts[i1][1]
  out.append(_gap([p[2] for p in pts]))
  dist = [(x - x1) ** 2 + (y - y1) ** 2 for x, y, _ in pts]
  b2 = max(dist)
  if b2 == 0: return out
  out.append(_gap([np.sqrt(v) for v in dist]))
  x2, y2 = pts[int(np.argmax(dist))][:2]
  for side in (1.0, -1.0):
    area = [((x2 - x1) * (y - y1) - (y2 - y1) * (x - x1)) * side for x, y, _ in pts]
    top, second = sorted(area, reverse=True)[:2]
    out.append((top - max(0.0, second)) / np.sqrt(b2))   # (1): 0 where no point lies off the line on this side
  return out


def safe(draw):
  """draw, its cases drawn again (from the same generator) until every one is SAFE from box_box's switches."""
  def drawn(rng):
    got, total = {"a": [], "b": []}, 0
    while total < N:
      x = {k: v.astype(np.float32).astype(np.float64) for k, v in draw(rng).items()}
      keep = np.array([switch_distance(x["a"][m], x["b"][m]) > SAFE for m in range(N)])
      for k in got: got[k].append(x[k][keep])
      total += keep.sum()
    return {k: np.concatenate(v)[:N] for k, v in got.items()}
  return drawn


def case(draw) -> Case:
  outs = [(f"c{m}", "contact") for m in range(4)]
  return Case([("a", "geom"), ("b", "geom")], outs, "box_box_case({a}, {b}, {g_c0}, {g_c1}, {g_c2}, {g_c3})",
              [("a", "geom", "a"), ("b", "geom", "b")], lambda a, b: box_box(a, b), safe(draw), WRAPPER)


CASES = {
  "collide_box_box_stack_a": case(lambda rng: stack(rng, lower_is_a=True)),
  "collide_box_box_stack_b": case(lambda rng: stack(rng, lower_is_a=False)),
  "collide_box_box_edge": case(edge),
  "collide_box_box_edge_end": case(edge_end),
  "collide_box_box_corner": case(corner),
  "collide_box_box_random": case(random_pair),
}


@pytest.mark.parametrize("name", [pytest.param(k, marks=pytest.mark.xdist_group(f"adjoint_{k}")) for k in CASES])
def test_parity_adjoint_box_box(name):
  """box_box_adj against float64 autograd of the oracle's box_box, per geom."""
  run_case(name, CASES[name], source_hash=SOURCE_HASH)
