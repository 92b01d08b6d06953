"""Box-box narrowphase (DESIGN sec. 3): separating-axis test over 15 axes, then face clipping or one edge-edge point.

1. SAT. For each axis L (3 face normals of a, 3 of b, 9 edge cross products) the separation is
   |d.L| - r_a(L) - r_b(L), d = centre offset, r = the box's projected half width. The axis of greatest separation
   (least penetration) is the contact normal. Edge axes of near-parallel edges have no direction and are skipped
   (the face axes cover those poses). An edge axis must beat the best face axis by FACE_BIAS_REL of its depth plus
   FACE_BIAS_ABS, as in ODE's dBoxBox: a resting box then keeps face contacts instead of flickering to a single edge
   point when an edge axis ties the face axis (equal stacked cubes tie exactly). b's best face must beat a's the
   same way, as Box2D's b2CollidePolygons prefers the first polygon's face: two stacked boxes tilted against each
   other by a few 1e-4 rad have face separations a few 1e-8 m apart, below float32's rounding of them, so without
   the bias the normal (one box's up axis or the other's) flickered with rounding, and the oracle and the WGSL kernel
   picked different boxes' faces from the same state (tests/test_parity_wgsl_stages.py, stack10).
2. Face axis: the box owning it gives the reference face (the face along the normal towards the other box), the
   other box the incident face (its face most anti-parallel to the reference normal). In the reference face's 2D
   frame, the 24 candidates are the 4 incident corners inside the reference rectangle, the 4 reference corners
   inside the incident quad, and the 16 crossings of incident edges with reference edges; each has a depth below
   the reference face and a validity mask, and those shallower than -MARGIN are dropped. Four are then picked by
   fixed argmax scans (see _pick4). Edge axis: one contact at the closest points of the two edges.

Everything is elementwise over lanes with fixed Python loops (15 axes, 24 candidates, 4 picks): one GPU thread per
pair, the same code line by line in WGSL.
"""
from __future__ import annotations
from tinygrad import Tensor
from oracle.collide import Contact, Geom, pair
from oracle.math3 import V3

MARGIN = 1e-3         # [m] clipped points apart by more than this are dropped; closer ones stay (speculative)
FACE_BIAS_REL = 0.05  # [-] an edge axis must beat the best face axis by this fraction of its separation...
FACE_BIAS_ABS = 1e-5  # [m] ...plus this, so ties (stacked boxes) and float32 rounding keep face contacts
PARALLEL_SIN = 1e-4   # [-] |sin| of the angle between two edges below which their cross product is no axis
INSIDE_TOL = 1e-5     # [-] relative slack of the inside tests: corners that coincide exactly survive f32 rounding
DUP_TOL = 1e-3        # [-] picks closer than this times the reference face's half extents (summed) are duplicates


def _beats(sep: Tensor, best: Tensor) -> Tensor:
  """Whether an axis of separation sep replaces the incumbent of separation best: it must beat it by FACE_BIAS_REL
  of |best| plus FACE_BIAS_ABS (b's face over a's, an edge over the face)."""
  return sep > best + FACE_BIAS_REL * best.abs() + FACE_BIAS_ABS


def _sel(take: Tensor, new, old):
  """take ? new : old for a Tensor, a Python number or a V3: one step of a running argmax over a fixed list."""
  return new.where(take, old) if isinstance(new, V3) else take.where(new, old)


def _sat(a: Geom, b: Geom, ua, ub, d: V3):
  """The 15-axis SAT. Returns the best face axis (sep, n, ref_a, k) with n the a->b unit normal, ref_a whether the
  axis is a's, k its index, and the best edge axis (sep, found, n, i, j) for a's edge i and b's edge j."""
  ha, hb = (a.size.x, a.size.y, a.size.z), (b.size.x, b.size.y, b.size.z)
  c = [[ua[i].dot(ub[j]).abs() for j in range(3)] for i in range(3)]  # |cos| between the axes, reused by all 15
  best = {}   # per box, its best face axis
  for ref_a, (us, k) in [(True, (ua, k)) for k in range(3)] + [(False, (ub, k)) for k in range(3)]:
    dl = d.dot(us[k])
    rad = ha[k] + sum(hb[j] * c[k][j] for j in range(3)) if ref_a else hb[k] + sum(ha[i] * c[i][k] for i in range(3))
    n = us[k] * (dl >= 0).where(1.0, -1.0)  # coincident centres take +axis
    cand = (dl.abs() - rad, n, ref_a, k)
    if ref_a not in best: best[ref_a] = cand
    else:
      take = cand[0] > best[ref_a][0]  # strict: ties keep the earlier axis
      best[ref_a] = tuple(_sel(take, x, y) for x, y in zip(cand, best[ref_a]))
  fa, fb = best[True], best[False]
  face = tuple(_sel(_beats(fb[0], fa[0]), x, y) for x, y in zip(fb, fa))
  edge = None
  for i in range(3):
    for j in range(3):
      length, lu, ok = ua[i].cross(ub[j]).norm_dir(PARALLEL_SIN)
      i1, i2, j1, j2 = (i + 1) % 3, (i + 2) % 3, (j + 1) % 3, (j + 2) % 3
      # projected half widths on ua_i x ub_j through the |cos| table (Gottschalk's OBB test), / |L| to normalise
      rad = (ha[i1] * c[i2][j] + ha[i2] * c[i1][j] + hb[j1] * c[i][j2] + hb[j2] * c[i][j1]) / ok.where(length, 1.0)
      dl = d.dot(lu)
      cand = (dl.abs() - rad, ok, lu * (dl >= 0).where(1.0, -1.0), i, j)
      if edge is None: edge = cand
      else:
        take = cand[1] & (~edge[1] | (cand[0] > edge[0]))
        edge = (take.where(cand[0], edge[0]), edge[1] | cand[1]) + tuple(_sel(take, x, y) for x, y in
                                                                          zip(cand[2:], edge[2:]))
  return face, edge


def _edge_contact(a: Geom, b: Geom, ua, ub, n: V3, i, j) -> Contact:
  """Closest points of a's edge along ua_i and b's edge along ub_j (i, j selected per lane as Tensors), the edges
  being those of a's support in +n and b's support in -n. Line-line closest points clamped to each edge."""
  def pick(axes, sizes, idx):  # axis idx (a per-lane index) and its half extent, by where over the three
    return (axes[0].where(idx == 0, axes[1].where(idx == 1, axes[2])),
            (idx == 0).where(sizes[0], (idx == 1).where(sizes[1], sizes[2])))
  ha, hb = (a.size.x, a.size.y, a.size.z), (b.size.x, b.size.y, b.size.z)
  eu, eh = pick(ua, ha, i)
  ev, fh = pick(ub, hb, j)
  # support points (the corner furthest along +-n), then slide to the edge's midpoint (n is normal to the edge)
  pa, pb = a.pos, b.pos
  for k in range(3):
    pa = pa + ua[k] * (ua[k].dot(n) >= 0).where(ha[k], -ha[k])
    pb = pb + ub[k] * (ub[k].dot(n) >= 0).where(-hb[k], hb[k])
  pa, pb = pa - eu * (pa - a.pos).dot(eu), pb - ev * (pb - b.pos).dot(ev)
  # minimise |pa + s eu - pb - t ev|^2: s (1 - c^2) = c e - f, t = e + s c with c = eu.ev, f = eu.w, e = ev.w
  w, cc = pa - pb, eu.dot(ev)
  f, e, den = eu.dot(w), ev.dot(w), 1.0 - cc * cc
  ok = den > PARALLEL_SIN * PARALLEL_SIN  # false only on lanes where the face branch is used
  s = ((cc * e - f) / ok.where(den, 1.0)).maximum(-eh).minimum(eh)
  t = (e + s * cc).maximum(-fh).minimum(fh)
  pa, pb = pa + eu * s, pb + ev * t
  return Contact(pa, pb, n, (pa - pb).dot(n) > -MARGIN)


def _pick4(cands, tol):
  """Up to 4 of the candidates [(x, y, depth, valid)] in the reference face's 2D frame, by fixed scans:
  1. the deepest; 2. the farthest from it (more than tol away); 3. and 4. the points farthest on either side of
  the line 1-2 (more than tol off it), i.e. the largest triangle each side: together they span the contact
  polygon (the largest quad that has the diagonal 1-2). Ties keep the earlier candidate. Returns 4 picks."""
  x1, y1, d1, v1 = cands[0]
  for x, y, d, v in cands[1:]:
    take = v & (~v1 | (d > d1))
    x1, y1, d1, v1 = take.where(x, x1), take.where(y, y1), take.where(d, d1), v1 | v
  x2, y2, d2, b2 = x1, y1, d1, -1.0
  for x, y, d, v in cands:
    dist = (x - x1) * (x - x1) + (y - y1) * (y - y1)
    take = v & (dist > b2)
    x2, y2, d2, b2 = take.where(x, x2), take.where(y, y2), take.where(d, d2), take.where(dist, b2)
  ex, ey = x2 - x1, y2 - y1
  picks = [(x1, y1, d1, v1), (x2, y2, d2, v1 & (b2 > tol * tol))]
  for side in (1.0, -1.0):  # signed area of (1, 2, p) along the reference normal: + one side, - the other
    x3, y3, d3, b3 = x1, y1, d1, 0.0
    for x, y, d, v in cands:
      area = (ex * (y - y1) - ey * (x - x1)) * side
      take = v & (area > b3)
      x3, y3, d3, b3 = take.where(x, x3), take.where(y, y3), take.where(d, d3), take.where(area, b3)
    picks.append((x3, y3, d3, v1 & (b3 * b3 > tol * tol * b2)))  # distance from line 1-2 = area / |p2 - p1| > tol
  return picks


def _face_contacts(a: Geom, b: Geom, ua, ub, n: V3, ref_a: Tensor, k: Tensor) -> list[Contact]:
  """Clip the incident face against the reference face (module docstring, step 2): 4 slots."""
  ha, hb = (a.size.x, a.size.y, a.size.z), (b.size.x, b.size.y, b.size.z)
  nr = n.where(ref_a, -n)  # reference face's outward normal, towards the incident box
  # reference box: its face k (per lane) gives the face centre, its other two axes the 2D frame (t1, t2, e1, e2)
  ur = [ua[m].where(ref_a, ub[m]) for m in range(3)]
  hr = [ref_a.where(ha[m], hb[m]) for m in range(3)]
  ui = [ub[m].where(ref_a, ua[m]) for m in range(3)]
  hi = [ref_a.where(hb[m], ha[m]) for m in range(3)]
  pr, pi = a.pos.where(ref_a, b.pos), b.pos.where(ref_a, a.pos)
  t1, t2, e1, e2, hk = ur[1], ur[2], hr[1], hr[2], hr[0]
  for m in (1, 2):
    sel = k == m
    t1, t2 = ur[(m + 1) % 3].where(sel, t1), ur[(m + 2) % 3].where(sel, t2)
    e1, e2, hk = sel.where(hr[(m + 1) % 3], e1), sel.where(hr[(m + 2) % 3], e2), sel.where(hr[m], hk)
  cr = pr + nr * hk
  # incident face: the incident axis most (anti)parallel to nr; |cos| >= 1/sqrt(3), so no division below is small
  cos = [ui[m].dot(nr) for m in range(3)]
  best, ni, s1, s2, f1, f2 = cos[0].abs(), ui[0] * (cos[0] >= 0).where(-1.0, 1.0), ui[1], ui[2], hi[1], hi[2]
  fh = hi[0]
  for m in (1, 2):
    take = cos[m].abs() > best
    best, fh = take.where(cos[m].abs(), best), take.where(hi[m], fh)
    ni = (ui[m] * (cos[m] >= 0).where(-1.0, 1.0)).where(take, ni)
    s1, s2 = ui[(m + 1) % 3].where(take, s1), ui[(m + 2) % 3].where(take, s2)
    f1, f2 = take.where(hi[(m + 1) % 3], f1), take.where(hi[(m + 2) % 3], f2)
  ci = pi + ni * fh
  # everything in reference coordinates (x, y along t1, t2; z height above the reference face along nr)
  def ref(v: V3): return v.dot(t1), v.dot(t2), v.dot(nr)
  (cx, cy, cz), s1r, s2r, nir = ref(ci - cr), ref(s1), ref(s2), ref(ni)
  e1t, e2t = e1 * (1.0 + INSIDE_TOL), e2 * (1.0 + INSIDE_TOL)
  cands = []
  # incident corners, in order around the quad, kept when inside the reference rectangle
  verts = [tuple(c + g1 * f1 * u + g2 * f2 * w for c, u, w in zip((cx, cy, cz), s1r, s2r))
           for g1, g2 in ((1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0))]
  for x, y, z in verts: cands.append((x, y, -z, (x.abs() <= e1t) & (y.abs() <= e2t)))
  # reference corners, kept when their projection along nr onto the incident plane lies inside the incident quad
  f1t, f2t = f1 * (1.0 + INSIDE_TOL), f2 * (1.0 + INSIDE_TOL)
  for g1, g2 in ((1.0, 1.0), (-1.0, 1.0), (-1.0, -1.0), (1.0, -1.0)):
    x, y = e1 * g1, e2 * g2
    z = cz - (nir[0] * (x - cx) + nir[1] * (y - cy)) / nir[2]  # on the incident plane: (q - ci).ni = 0
    u1 = (x - cx) * s1r[0] + (y - cy) * s1r[1] + (z - cz) * s1r[2]
    u2 = (x - cx) * s2r[0] + (y - cy) * s2r[1] + (z - cz) * s2r[2]
    cands.append((x, y, -z, (u1.abs() <= f1t) & (u2.abs() <= f2t)))
  # crossings of each incident edge with the 4 reference edge lines x = +-e1 (|y| <= e2) and y = +-e2 (|x| <= e1)
  for m in range(4):
    p, q = verts[m], verts[(m + 1) % 4]
    for axis, lim, other_lim in ((0, e1, e2t), (1, e2, e1t)):
      o = 1 - axis
      dv = q[axis] - p[axis]
      ok = dv.abs() > 1e-12  # an edge parallel to the reference edge never crosses it (or lies on it: corners do)
      for g in (1.0, -1.0):
        t = (lim * g - p[axis]) / ok.where(dv, 1.0)
        other = p[o] + t * (q[o] - p[o])
        z = p[2] + t * (q[2] - p[2])
        xy = (lim * g, other) if axis == 0 else (other, lim * g)
        cands.append((xy[0], xy[1], -z, ok & (t >= 0) & (t <= 1) & (other.abs() <= other_lim)))
  cands = [(x, y, d, v & (d > -MARGIN)) for x, y, d, v in cands]
  out = []
  for x, y, d, v in _pick4(cands, DUP_TOL * (e1 + e2)):
    p_ref = cr + t1 * x + t2 * y   # on the reference face
    p_inc = p_ref - nr * d         # on the incident face, depth d below it
    out.append(Contact(p_ref.where(ref_a, p_inc), p_inc.where(ref_a, p_ref), n, v))
  return out


@pair("box", "box", 4)
def box_box(a: Geom, b: Geom) -> list[Contact]:
  """Box a against box b (half extents size): 4 slots. Face contact: up to 4 clipped points; edge-edge: slot 0 at
  the closest points of the two edges, slots 1-3 invalid. Valid slots have depth > -MARGIN."""
  ua, ub = a.rot.rotation_columns(), b.rot.rotation_columns()
  (f_sep, f_n, ref_a, k), (e_sep, e_ok, e_n, i, j) = _sat(a, b, ua, ub, b.pos - a.pos)
  use_edge = e_ok & _beats(e_sep, f_sep)
  faces = _face_contacts(a, b, ua, ub, f_n, ref_a, k)
  edge = _edge_contact(a, b, ua, ub, e_n, i, j)
  out = [Contact(edge.pa.where(use_edge, faces[0].pa), edge.pb.where(use_edge, faces[0].pb), e_n.where(use_edge, f_n),
                 use_edge.where(edge.valid, faces[0].valid))]
  return out + [Contact(c.pa, c.pb, e_n.where(use_edge, f_n), c.valid & ~use_edge) for c in faces[1:]]
