// Box-box narrowphase (oracle/collide/box_box.py): separating axes, then face clipping or one edge-edge point, line
// for line with the oracle's functions of the same names; conventions in kernels/collide.wgsl, constants (BOX_BOX_*)
// in the generated header.

// the best face axis (sep, a->b unit normal n, ref_a: the axis is a's, k its index) and the best edge axis (sep,
// found, n, a's edge i, b's edge j) of the 15-axis SAT
struct Sat { f_sep: f32, f_n: vec3<f32>, ref_a: bool, k: u32, e_sep: f32, e_ok: bool, e_n: vec3<f32>, i: u32, j: u32 }

// whether an axis of separation sep replaces the incumbent best (b's face over a's, an edge over the face)
fn _beats(sep: f32, best: f32) -> bool {
  return sep > best + BOX_BOX_FACE_BIAS_REL * abs(best) + BOX_BOX_FACE_BIAS_ABS;
}

fn _sat(a: Geom, b: Geom, ua: array<vec3<f32>, 3>, ub: array<vec3<f32>, 3>, d: vec3<f32>) -> Sat {
  let ha = a.size;
  let hb = b.size;
  var c: array<vec3<f32>, 3>;  // c[i][j] = |cos| between ua_i and ub_j, reused by all 15 axes
  for (var i = 0u; i < 3u; i++) {
    c[i] = vec3<f32>(abs(dot(ua[i], ub[0])), abs(dot(ua[i], ub[1])), abs(dot(ua[i], ub[2])));
  }
  var out: Sat;
  var fb: Sat;   // b's best face axis; out holds a's, then the winner
  for (var m = 0u; m < 6u; m++) {  // a's three face axes, then b's
    let ref_a = m < 3u;
    let k = m % 3u;
    let us = select(ub[k], ua[k], ref_a);
    let dl = dot(d, us);
    var rad: f32;
    if (ref_a) { rad = ha[k] + (hb[0] * c[k][0] + hb[1] * c[k][1] + hb[2] * c[k][2]); }
    else { rad = hb[k] + (ha[0] * c[0][k] + ha[1] * c[1][k] + ha[2] * c[2][k]); }
    let n = us * select(-1.0, 1.0, dl >= 0.0);  // coincident centres take +axis
    let sep = abs(dl) - rad;
    if (ref_a && (m == 0u || sep > out.f_sep)) {  // strict: ties keep the earlier axis
      out.f_sep = sep; out.f_n = n; out.ref_a = ref_a; out.k = k;
    }
    if (!ref_a && (m == 3u || sep > fb.f_sep)) { fb.f_sep = sep; fb.f_n = n; fb.ref_a = ref_a; fb.k = k; }
  }
  if (_beats(fb.f_sep, out.f_sep)) { out.f_sep = fb.f_sep; out.f_n = fb.f_n; out.ref_a = false; out.k = fb.k; }
  for (var i = 0u; i < 3u; i++) {
    for (var j = 0u; j < 3u; j++) {
      let nd = norm_dir(cross(ua[i], ub[j]), BOX_BOX_PARALLEL_SIN);
      let lu = nd.dir;
      let ok = nd.on;
      let i1 = (i + 1u) % 3u; let i2 = (i + 2u) % 3u; let j1 = (j + 1u) % 3u; let j2 = (j + 2u) % 3u;
      // projected half widths on ua_i x ub_j through the |cos| table (Gottschalk's OBB test), / |L| to normalise
      let rad = (ha[i1] * c[i2][j] + ha[i2] * c[i1][j] + hb[j1] * c[i][j2] + hb[j2] * c[i][j1])
                / select(1.0, nd.len, ok);
      let dl = dot(d, lu);
      let sep = abs(dl) - rad;
      let first = i == 0u && j == 0u;
      let take = first || (ok && (!out.e_ok || sep > out.e_sep));
      if (take) { out.e_sep = sep; out.e_n = lu * select(-1.0, 1.0, dl >= 0.0); out.i = i; out.j = j; }
      out.e_ok = select(out.e_ok || ok, ok, first);
    }
  }
  return out;
}

// closest points of a's edge along ua_i and b's edge along ub_j, the edges of a's support in +n and b's in -n
fn _edge_contact(a: Geom, b: Geom, ua: array<vec3<f32>, 3>, ub: array<vec3<f32>, 3>, n: vec3<f32>, i: u32, j: u32)
    -> Contact {
  let ha = a.size;
  let hb = b.size;
  let eu = ua[i];
  let eh = ha[i];
  let ev = ub[j];
  let fh = hb[j];
  // support points (the corner furthest along +-n), then slide to the edge's midpoint (n is normal to the edge)
  var pa = a.pos;
  var pb = b.pos;
  for (var k = 0u; k < 3u; k++) {
    pa = pa + ua[k] * select(-ha[k], ha[k], dot(ua[k], n) >= 0.0);
    pb = pb + ub[k] * select(hb[k], -hb[k], dot(ub[k], n) >= 0.0);
  }
  pa = pa - eu * dot(pa - a.pos, eu);
  pb = pb - ev * dot(pb - b.pos, ev);
  // minimise |pa + s eu - pb - t ev|^2: s (1 - c^2) = c e - f, t = e + s c with c = eu.ev, f = eu.w, e = ev.w
  let w = pa - pb;
  let cc = dot(eu, ev);
  let f = dot(eu, w);
  let e = dot(ev, w);
  let den = 1.0 - cc * cc;
  let ok = den > BOX_BOX_PARALLEL_SIN * BOX_BOX_PARALLEL_SIN;  // false only on lanes where the face branch is used
  let s = min(max((cc * e - f) / select(1.0, den, ok), -eh), eh);
  let t = min(max(e + s * cc, -fh), fh);
  pa = pa + eu * s;
  pb = pb + ev * t;
  return Contact(pa, pb, n, dot(pa - pb, n) > -BOX_BOX_MARGIN);
}

// a clipping candidate (or a pick) in the reference face's 2D frame: position, depth below the face, validity
struct Cand { x: f32, y: f32, d: f32, v: bool }

// up to 4 of the candidates by fixed scans: 1. the deepest; 2. the farthest from it (more than tol away); 3. and 4.
// the farthest on either side of the line 1-2 (more than tol off it). Ties keep the earlier candidate. The picks'
// candidate indices and validities (a pick's x, y, d are its candidate's: the adjoint sends their gradients there)
struct Picks { i: array<u32, 4>, v: array<bool, 4> }
fn _pick4_index(cands: ptr<function, array<Cand, 24>>, tol: f32) -> Picks {
  var i1 = 0u;
  var p1 = (*cands)[0];
  for (var m = 1u; m < 24u; m++) {
    let q = (*cands)[m];
    let take = q.v && (!p1.v || q.d > p1.d);
    if (take) { i1 = m; p1 = Cand(q.x, q.y, q.d, p1.v); }
    p1.v = p1.v || q.v;
  }
  var i2 = i1;
  var b2 = -1.0;
  for (var m = 0u; m < 24u; m++) {
    let q = (*cands)[m];
    let dist = (q.x - p1.x) * (q.x - p1.x) + (q.y - p1.y) * (q.y - p1.y);
    if (q.v && dist > b2) { i2 = m; b2 = dist; }
  }
  let ex = (*cands)[i2].x - p1.x;
  let ey = (*cands)[i2].y - p1.y;
  var out = Picks(array<u32, 4>(i1, i2, i1, i1), array<bool, 4>(p1.v, p1.v && b2 > tol * tol, false, false));
  for (var sd = 0u; sd < 2u; sd++) {  // signed area of (1, 2, p) along the reference normal: + one side, - the other
    let side = select(-1.0, 1.0, sd == 0u);
    var b3 = 0.0;
    for (var m = 0u; m < 24u; m++) {
      let q = (*cands)[m];
      let area = (ex * (q.y - p1.y) - ey * (q.x - p1.x)) * side;
      if (q.v && area > b3) { out.i[2u + sd] = m; b3 = area; }
    }
    out.v[2u + sd] = p1.v && b3 * b3 > tol * tol * b2;  // distance from line 1-2 > tol
  }
  return out;
}
fn _pick4(cands: ptr<function, array<Cand, 24>>, tol: f32) -> array<Cand, 4> {
  let p = _pick4_index(cands, tol);
  var picks: array<Cand, 4>;
  for (var m = 0u; m < 4u; m++) {
    let c = (*cands)[p.i[m]];
    picks[m] = Cand(c.x, c.y, c.d, p.v[m]);
  }
  return picks;
}

// the three components of v in the reference frame (x, y along t1, t2; z along nr); the oracle's `ref`, a reserved
// word in WGSL
fn _to_ref(v: vec3<f32>, t1: vec3<f32>, t2: vec3<f32>, nr: vec3<f32>) -> vec3<f32> {
  return vec3<f32>(dot(v, t1), dot(v, t2), dot(v, nr));
}

// the 24 clipping candidates of _face_contacts from the incident face in reference coordinates (its centre cc, its
// axes s1r, s2r, its normal nir, half extents f1, f2) and the reference face's half extents e1, e2 (the adjoint
// replays them: kernels/adjoint/box_box.wgsl)
fn _candidates(cc: vec3<f32>, s1r: vec3<f32>, s2r: vec3<f32>, nir: vec3<f32>, f1: f32, f2: f32, e1: f32,
             e2: f32) -> array<Cand, 24> {
  let e1t = e1 * (1.0 + BOX_BOX_INSIDE_TOL);
  let e2t = e2 * (1.0 + BOX_BOX_INSIDE_TOL);
  let g1s = array<f32, 4>(1.0, -1.0, -1.0, 1.0);
  let g2s = array<f32, 4>(1.0, 1.0, -1.0, -1.0);
  var cands: array<Cand, 24>;
  var verts: array<vec3<f32>, 4>;
  for (var m = 0u; m < 4u; m++) {
    let p = cc + g1s[m] * f1 * s1r + g2s[m] * f2 * s2r;
    verts[m] = p;
    cands[m] = Cand(p.x, p.y, -p.z, (abs(p.x) <= e1t) && (abs(p.y) <= e2t));
  }
  let f1t = f1 * (1.0 + BOX_BOX_INSIDE_TOL);
  let f2t = f2 * (1.0 + BOX_BOX_INSIDE_TOL);
  for (var m = 0u; m < 4u; m++) {
    let x = e1 * g1s[m];
    let y = e2 * g2s[m];
    let z = cc.z - (nir[0] * (x - cc.x) + nir[1] * (y - cc.y)) / nir[2];
    let u1 = (x - cc.x) * s1r[0] + (y - cc.y) * s1r[1] + (z - cc.z) * s1r[2];
    let u2 = (x - cc.x) * s2r[0] + (y - cc.y) * s2r[1] + (z - cc.z) * s2r[2];
    cands[4u + m] = Cand(x, y, -z, (abs(u1) <= f1t) && (abs(u2) <= f2t));
  }
  var nk = 8u;
  for (var m = 0u; m < 4u; m++) {
    let p = verts[m];
    let q = verts[(m + 1u) % 4u];
    for (var axis = 0u; axis < 2u; axis++) {
      let lim = select(e2, e1, axis == 0u);
      let other_lim = select(e1t, e2t, axis == 0u);
      let o = 1u - axis;
      let dv = q[axis] - p[axis];
      let ok = abs(dv) > 1e-12;
      for (var g = 0u; g < 2u; g++) {
        let gs = select(-1.0, 1.0, g == 0u);
        let t = (lim * gs - p[axis]) / select(1.0, dv, ok);
        let other = p[o] + t * (q[o] - p[o]);
        let z = p[2] + t * (q[2] - p[2]);
        let v = ok && (t >= 0.0) && (t <= 1.0) && (abs(other) <= other_lim);
        if (axis == 0u) { cands[nk] = Cand(lim * gs, other, -z, v); } else { cands[nk] = Cand(other, lim * gs, -z, v); }
        nk = nk + 1u;
      }
    }
  }
  for (var m = 0u; m < 24u; m++) { cands[m].v = cands[m].v && (cands[m].d > -BOX_BOX_MARGIN); }
  return cands;
}

// clip the incident face against the reference face: slots 0..3 of nc
fn _face_contacts(a: Geom, b: Geom, ua: array<vec3<f32>, 3>, ub: array<vec3<f32>, 3>, n: vec3<f32>, ref_a: bool,
                  k: u32) {
  let ha = a.size;
  let hb = b.size;
  let nr = select(-n, n, ref_a);  // reference face's outward normal, towards the incident box
  // reference box: its face k gives the face centre, its other two axes the 2D frame (t1, t2, e1, e2)
  var ur: array<vec3<f32>, 3>;
  var ui: array<vec3<f32>, 3>;
  for (var m = 0u; m < 3u; m++) { ur[m] = select(ub[m], ua[m], ref_a); ui[m] = select(ua[m], ub[m], ref_a); }
  let hr = select(hb, ha, ref_a);
  let hi = select(ha, hb, ref_a);
  let pr = select(b.pos, a.pos, ref_a);
  let pi = select(a.pos, b.pos, ref_a);
  // the oracle's where over k = 1, 2 picks exactly these
  let t1 = ur[(k + 1u) % 3u];
  let t2 = ur[(k + 2u) % 3u];
  let e1 = hr[(k + 1u) % 3u];
  let e2 = hr[(k + 2u) % 3u];
  let hk = hr[k];
  let cr = pr + nr * hk;
  // incident face: the incident axis most (anti)parallel to nr; |cos| >= 1/sqrt(3), so no division below is small
  var cosn: array<f32, 3>;  // the oracle's `cos`
  for (var m = 0u; m < 3u; m++) { cosn[m] = dot(ui[m], nr); }
  var best = abs(cosn[0]);
  var ni = ui[0] * select(1.0, -1.0, cosn[0] >= 0.0);
  var s1 = ui[1];
  var s2 = ui[2];
  var f1 = hi[1];
  var f2 = hi[2];
  var fh = hi[0];
  for (var m = 1u; m < 3u; m++) {
    if (abs(cosn[m]) > best) {
      best = abs(cosn[m]); fh = hi[m];
      ni = ui[m] * select(1.0, -1.0, cosn[m] >= 0.0);
      s1 = ui[(m + 1u) % 3u]; s2 = ui[(m + 2u) % 3u];
      f1 = hi[(m + 1u) % 3u]; f2 = hi[(m + 2u) % 3u];
    }
  }
  let ci = pi + ni * fh;
  // everything in reference coordinates (x, y along t1, t2; z height above the reference face along nr)
  let cc = _to_ref(ci - cr, t1, t2, nr);
  let s1r = _to_ref(s1, t1, t2, nr);
  let s2r = _to_ref(s2, t1, t2, nr);
  let nir = _to_ref(ni, t1, t2, nr);
  var cands = _candidates(cc, s1r, s2r, nir, f1, f2, e1, e2);
  let picks = _pick4(&cands, BOX_BOX_DUP_TOL * (e1 + e2));
  for (var m = 0u; m < 4u; m++) {
    let p_ref = cr + t1 * picks[m].x + t2 * picks[m].y;  // on the reference face
    let p_inc = p_ref - nr * picks[m].d;                 // on the incident face, depth d below it
    nc[m] = Contact(select(p_inc, p_ref, ref_a), select(p_ref, p_inc, ref_a), n, picks[m].v);
  }
}

// face contact: up to 4 clipped points; edge-edge: slot 0 at the edges' closest points, slots 1-3 invalid
fn box_box(a: Geom, b: Geom) {
  let ua = rotation_columns(a.rot);
  let ub = rotation_columns(b.rot);
  let sat = _sat(a, b, ua, ub, b.pos - a.pos);
  let use_edge = sat.e_ok && _beats(sat.e_sep, sat.f_sep);
  _face_contacts(a, b, ua, ub, sat.f_n, sat.ref_a, sat.k);
  let edge = _edge_contact(a, b, ua, ub, sat.e_n, sat.i, sat.j);
  let n = select(sat.f_n, sat.e_n, use_edge);
  nc[0] = Contact(select(nc[0].pa, edge.pa, use_edge), select(nc[0].pb, edge.pb, use_edge), n,
                  select(nc[0].valid, edge.valid, use_edge));
  for (var m = 1u; m < 4u; m++) { nc[m] = Contact(nc[m].pa, nc[m].pb, n, nc[m].valid && !use_edge); }
}
