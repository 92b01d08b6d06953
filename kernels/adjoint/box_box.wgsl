// Adjoints of kernels/box_box.wgsl's pair functions (oracle/collide/box_box.py); conventions in
// kernels/adjoint/collide.wgsl.
// box_box_adj is the vector-Jacobian product of box_box as tinygrad's autograd takes it through the oracle. The
// oracle computes every branch and merges them with `where`, which passes a gradient to the picked side only, so
// the discrete choices (the SAT's axes, use_edge, the incident face, the candidates' validity and _pick4's scans)
// are replayed from the same inputs and only the picked values are differentiated. What has no gradient there:
// the separations, the |cos| table and the projected radii (only compared), the axes' signs ((dl >= 0).where(1,
// -1) is a constant), the inside tests' tolerances. What has: the normals (a face axis, or an edge axes' cross
// product through norm_dir), and the picked points' coordinates through the boxes' centres, axes and half extents.

// the gradients gathered on the way back: the two boxes' rotation columns (to rotation_columns_adj), centres and
// half extents
struct BoxBoxAcc { ua: array<vec3<f32>, 3>, ub: array<vec3<f32>, 3>, pa: vec3<f32>, pb: vec3<f32>, ha: vec3<f32>,
                   hb: vec3<f32> }

// the gradient g of x.maximum(lo).minimum(hi) (the oracle's clamps in _edge_contact) back to (x, lo, hi)
fn _bb_clamp_grads(x: f32, lo: f32, hi: f32, g: f32) -> vec3<f32> {
  let gm = grad_min(max(x, lo), hi, g);
  let gx = grad_max(x, lo, gm.x);
  return vec3<f32>(gx.x, gx.y, gm.y);
}

// _edge_contact: the gradients gpa, gpb of its pa, pb back to the boxes (into acc). n, i and j only choose (the
// supports' signs, the edges), and the contact's n is box_box's e_n, whose gradient box_box_adj takes
fn _edge_contact_adj(a: Geom, b: Geom, ua: array<vec3<f32>, 3>, ub: array<vec3<f32>, 3>, n: vec3<f32>, i: u32,
                     j: u32, gpa: vec3<f32>, gpb: vec3<f32>, acc: ptr<function, BoxBoxAcc>) {
  // forward replay, line for line with kernels/box_box.wgsl _edge_contact
  let ha = a.size;
  let hb = b.size;
  let eu = ua[i];
  let eh = ha[i];
  let ev = ub[j];
  let fh = hb[j];
  var sa: array<f32, 3>;   // the supports' signed half extents, and their signs
  var sb: array<f32, 3>;
  var ga: array<f32, 3>;
  var gb: array<f32, 3>;
  var pa0 = a.pos;
  var pb0 = b.pos;
  for (var k = 0u; k < 3u; k++) {
    ga[k] = select(-1.0, 1.0, dot(ua[k], n) >= 0.0);
    gb[k] = select(1.0, -1.0, dot(ub[k], n) >= 0.0);
    sa[k] = select(-ha[k], ha[k], dot(ua[k], n) >= 0.0);
    sb[k] = select(hb[k], -hb[k], dot(ub[k], n) >= 0.0);
    pa0 = pa0 + ua[k] * sa[k];
    pb0 = pb0 + ub[k] * sb[k];
  }
  let da = dot(pa0 - a.pos, eu);
  let db = dot(pb0 - b.pos, ev);
  let pa1 = pa0 - eu * da;
  let pb1 = pb0 - ev * db;
  let w = pa1 - pb1;
  let cc = dot(eu, ev);
  let f = dot(eu, w);
  let e = dot(ev, w);
  let den = 1.0 - cc * cc;
  let ok = den > BOX_BOX_PARALLEL_SIN * BOX_BOX_PARALLEL_SIN;
  let dd = select(1.0, den, ok);
  let sr = (cc * e - f) / dd;
  let s = min(max(sr, -eh), eh);
  let tr = e + s * cc;
  let t = min(max(tr, -fh), fh);
  // pa = pa1 + eu s, pb = pb1 + ev t
  var geu = gpa * s;
  var gev = gpb * t;
  let gt = _bb_clamp_grads(tr, -fh, fh, dot(ev, gpb));
  let gfh = gt.z - gt.y;
  // t = clamp(e + s cc)
  let gsc = _bb_clamp_grads(sr, -eh, eh, dot(eu, gpa) + gt.x * cc);
  let geh = gsc.z - gsc.y;
  // s = clamp((cc e - f) / dd), dd = den where ok (else the constant 1), den = 1 - cc^2
  let gnum = gsc.x / dd;
  let gden = select(0.0, -gsc.x * sr / dd, ok);
  let gcc = gt.x * s + gnum * e - 2.0 * cc * gden;
  let ge = gt.x + gnum * cc;
  let gf = -gnum;
  // cc = eu.ev, f = eu.w, e = ev.w, w = pa1 - pb1
  geu = geu + ev * gcc + w * gf;
  gev = gev + eu * gcc + w * ge;
  let gw = eu * gf + ev * ge;
  let gpa1 = gpa + gw;
  let gpb1 = gpb - gw;
  // pa1 = pa0 - eu (pa0 - a.pos).eu (slid to the edge's midpoint), pb1 likewise
  let gda = -dot(eu, gpa1);
  let gdb = -dot(ev, gpb1);
  geu = geu - gpa1 * da + (pa0 - a.pos) * gda;
  gev = gev - gpb1 * db + (pb0 - b.pos) * gdb;
  let gpa0 = gpa1 + eu * gda;
  let gpb0 = gpb1 + ev * gdb;
  (*acc).pa = (*acc).pa + gpa0 - eu * gda;   // through pa0, and the - a.pos of pa0 - a.pos
  (*acc).pb = (*acc).pb + gpb0 - ev * gdb;
  // the supports: pa0 = a.pos + sum ua_k (+-ha_k), the sign a where of constants
  for (var k = 0u; k < 3u; k++) {
    (*acc).ua[k] = (*acc).ua[k] + gpa0 * sa[k];
    (*acc).ub[k] = (*acc).ub[k] + gpb0 * sb[k];
    (*acc).ha[k] = (*acc).ha[k] + dot(ua[k], gpa0) * ga[k];
    (*acc).hb[k] = (*acc).hb[k] + dot(ub[k], gpb0) * gb[k];
  }
  // the picked edges (the oracle's `pick`, a where over the three)
  (*acc).ua[i] = (*acc).ua[i] + geu;
  (*acc).ub[j] = (*acc).ub[j] + gev;
  (*acc).ha[i] = (*acc).ha[i] + geh;
  (*acc).hb[j] = (*acc).hb[j] + gfh;
}

// _to_ref(v, t1, t2, nr) = (v.t1, v.t2, v.nr): the gradient g of its value back to v, t1, t2, nr
struct ToRefAdj { v: vec3<f32>, t1: vec3<f32>, t2: vec3<f32>, nr: vec3<f32> }
fn _to_ref_adj(v: vec3<f32>, t1: vec3<f32>, t2: vec3<f32>, nr: vec3<f32>, g: vec3<f32>) -> ToRefAdj {
  return ToRefAdj(t1 * g.x + t2 * g.y + nr * g.z, v * g.x, v * g.y, v * g.z);
}

// _face_contacts: the gradients gc[m].pa, .pb of slot m's points back to the boxes (into acc); returns the gradient
// of n (through nr, the reference normal). The slots' own n is box_box's, whose gradient box_box_adj takes
fn _face_contacts_adj(a: Geom, b: Geom, ua: array<vec3<f32>, 3>, ub: array<vec3<f32>, 3>, n: vec3<f32>, ref_a: bool,
                      k: u32, gc: array<ContactAdj, 4>, acc: ptr<function, BoxBoxAcc>) -> vec3<f32> {
  // forward replay (kernels/box_box.wgsl _face_contacts), keeping the indices of the picked axes
  let nr = select(-n, n, ref_a);
  var ur: array<vec3<f32>, 3>;
  var ui: array<vec3<f32>, 3>;
  for (var m = 0u; m < 3u; m++) { ur[m] = select(ub[m], ua[m], ref_a); ui[m] = select(ua[m], ub[m], ref_a); }
  let hr = select(b.size, a.size, ref_a);
  let hi = select(a.size, b.size, ref_a);
  let pi = select(a.pos, b.pos, ref_a);
  let k1 = (k + 1u) % 3u;
  let k2 = (k + 2u) % 3u;
  let t1 = ur[k1];
  let t2 = ur[k2];
  let e1 = hr[k1];
  let e2 = hr[k2];
  let hk = hr[k];
  let cr = select(b.pos, a.pos, ref_a) + nr * hk;
  // the incident face: axis mi, the first of the largest |cos| (the forward's strict >)
  var cosn: array<f32, 3>;
  for (var m = 0u; m < 3u; m++) { cosn[m] = dot(ui[m], nr); }
  var mi = 0u;
  var best = abs(cosn[0]);
  for (var m = 1u; m < 3u; m++) {
    if (abs(cosn[m]) > best) { best = abs(cosn[m]); mi = m; }
  }
  let sgn = select(1.0, -1.0, cosn[mi] >= 0.0);
  let m1 = (mi + 1u) % 3u;
  let m2 = (mi + 2u) % 3u;
  let ni = ui[mi] * sgn;
  let s1 = ui[m1];
  let s2 = ui[m2];
  let f1 = hi[m1];
  let f2 = hi[m2];
  let fh = hi[mi];
  let ci = pi + ni * fh;
  let cc = _to_ref(ci - cr, t1, t2, nr);
  let s1r = _to_ref(s1, t1, t2, nr);
  let s2r = _to_ref(s2, t1, t2, nr);
  let nir = _to_ref(ni, t1, t2, nr);
  var cands = _candidates(cc, s1r, s2r, nir, f1, f2, e1, e2);
  let picks = _pick4_index(&cands, BOX_BOX_DUP_TOL * (e1 + e2)).i;
  let g1s = array<f32, 4>(1.0, -1.0, -1.0, 1.0);
  let g2s = array<f32, 4>(1.0, 1.0, -1.0, -1.0);
  var verts: array<vec3<f32>, 4>;
  for (var m = 0u; m < 4u; m++) { verts[m] = cc + g1s[m] * f1 * s1r + g2s[m] * f2 * s2r; }
  // backward: the gradients of the reference frame (cr, t1, t2, nr, e1, e2), of the incident face in reference
  // coordinates (cc, s1r, s2r, nir, f1, f2) and of its corners
  var gcr = vec3<f32>(0.0);
  var gt1 = vec3<f32>(0.0);
  var gt2 = vec3<f32>(0.0);
  var gnr = vec3<f32>(0.0);
  var ge1 = 0.0;
  var ge2 = 0.0;
  var gcc = vec3<f32>(0.0);
  var gnir = vec3<f32>(0.0);
  var gverts: array<vec3<f32>, 4>;
  for (var m = 0u; m < 4u; m++) {
    let c = picks[m];
    let x = cands[c].x;
    let y = cands[c].y;
    let d = cands[c].d;
    // p_ref = cr + t1 x + t2 y, p_inc = p_ref - nr d; pa, pb = (p_ref, p_inc) where ref_a, else swapped
    let ginc = select(gc[m].pa, gc[m].pb, ref_a);
    let gref = select(gc[m].pb, gc[m].pa, ref_a) + ginc;
    gnr = gnr - ginc * d;
    let gd = -dot(nr, ginc);
    gcr = gcr + gref;
    gt1 = gt1 + gref * x;
    gt2 = gt2 + gref * y;
    let gx = dot(t1, gref);
    let gy = dot(t2, gref);
    if (c < 4u) {   // an incident corner (x, y, -z)
      gverts[c] = gverts[c] + vec3<f32>(gx, gy, -gd);
    } else if (c < 8u) {   // a reference corner (e1 g1, e2 g2) at the incident plane's height z
      let r = c - 4u;
      let num = nir.x * (x - cc.x) + nir.y * (y - cc.y);   // z = cc.z - num / nir.z
      let gz = -gd;
      let gnum = -gz / nir.z;
      gcc = gcc + vec3<f32>(-gnum * nir.x, -gnum * nir.y, gz);
      gnir = gnir + vec3<f32>(gnum * (x - cc.x), gnum * (y - cc.y), gz * num / (nir.z * nir.z));
      ge1 = ge1 + g1s[r] * (gx + gnum * nir.x);
      ge2 = ge2 + g2s[r] * (gy + gnum * nir.y);
    } else {   // incident edge mv's crossing (8 + 4 mv + 2 axis + g) with the reference edge line axis = +-lim
      let r = c - 8u;
      let mv = r / 4u;
      let axis = (r / 2u) % 2u;
      let gs = select(-1.0, 1.0, r % 2u == 0u);
      let o = 1u - axis;
      let p = verts[mv];
      let q = verts[(mv + 1u) % 4u];
      let lim = select(e2, e1, axis == 0u);
      let dv = q[axis] - p[axis];
      let ok = abs(dv) > 1e-12;
      let dd = select(1.0, dv, ok);
      let t = (lim * gs - p[axis]) / dd;
      let gother = select(gx, gy, axis == 0u);   // other = p[o] + t (q[o] - p[o])
      let gz = -gd;                              // z = p.z + t (q.z - p.z)
      var gp = vec3<f32>(0.0);
      var gq = vec3<f32>(0.0);
      gp[o] = gother * (1.0 - t);
      gq[o] = gother * t;
      gp.z = gz * (1.0 - t);
      gq.z = gz * t;
      // t = (lim gs - p[axis]) / dd, dd = q[axis] - p[axis] where ok (else the constant 1)
      let gt = gother * (q[o] - p[o]) + gz * (q.z - p.z);
      let gn = gt / dd;
      let gdd = select(0.0, -gt * t / dd, ok);
      gq[axis] = gq[axis] + gdd;
      gp[axis] = gp[axis] - gdd - gn;
      let glim = (select(gy, gx, axis == 0u) + gn) * gs;   // the coordinate lim gs, and t's numerator
      if (axis == 0u) { ge1 = ge1 + glim; } else { ge2 = ge2 + glim; }
      gverts[mv] = gverts[mv] + gp;
      gverts[(mv + 1u) % 4u] = gverts[(mv + 1u) % 4u] + gq;
    }
  }
  // the incident corners: verts[m] = cc + g1 f1 s1r + g2 f2 s2r
  var gs1r = vec3<f32>(0.0);
  var gs2r = vec3<f32>(0.0);
  var gf1 = 0.0;
  var gf2 = 0.0;
  for (var m = 0u; m < 4u; m++) {
    gcc = gcc + gverts[m];
    gs1r = gs1r + gverts[m] * (g1s[m] * f1);
    gs2r = gs2r + gverts[m] * (g2s[m] * f2);
    gf1 = gf1 + g1s[m] * dot(s1r, gverts[m]);
    gf2 = gf2 + g2s[m] * dot(s2r, gverts[m]);
  }
  // to reference coordinates: cc = ref(ci - cr), s1r = ref(s1), s2r = ref(s2), nir = ref(ni)
  let rc = _to_ref_adj(ci - cr, t1, t2, nr, gcc);
  let r1 = _to_ref_adj(s1, t1, t2, nr, gs1r);
  let r2 = _to_ref_adj(s2, t1, t2, nr, gs2r);
  let rn = _to_ref_adj(ni, t1, t2, nr, gnir);
  gt1 = gt1 + rc.t1 + r1.t1 + r2.t1 + rn.t1;
  gt2 = gt2 + rc.t2 + r1.t2 + r2.t2 + rn.t2;
  gnr = gnr + rc.nr + r1.nr + r2.nr + rn.nr;
  gcr = gcr - rc.v;
  // ci = pi + ni fh, cr = pr + nr hk
  let gni = rn.v + rc.v * fh;
  gnr = gnr + gcr * hk;
  var gur: array<vec3<f32>, 3>;
  var gui: array<vec3<f32>, 3>;
  var ghr = vec3<f32>(0.0);
  var ghi = vec3<f32>(0.0);
  gur[k1] = gt1;
  gur[k2] = gt2;
  ghr[k1] = ge1;
  ghr[k2] = ge2;
  ghr[k] = dot(nr, gcr);
  gui[mi] = gni * sgn;
  gui[m1] = r1.v;
  gui[m2] = r2.v;
  ghi[mi] = dot(ni, rc.v);
  ghi[m1] = gf1;
  ghi[m2] = gf2;
  // the reference box is a where ref_a, b otherwise; the incident box the other
  for (var m = 0u; m < 3u; m++) {
    (*acc).ua[m] = (*acc).ua[m] + select(gui[m], gur[m], ref_a);
    (*acc).ub[m] = (*acc).ub[m] + select(gur[m], gui[m], ref_a);
  }
  (*acc).ha = (*acc).ha + select(ghi, ghr, ref_a);
  (*acc).hb = (*acc).hb + select(ghr, ghi, ref_a);
  (*acc).pa = (*acc).pa + select(rc.v, gcr, ref_a);
  (*acc).pb = (*acc).pb + select(gcr, rc.v, ref_a);
  return select(-gnr, gnr, ref_a);   // nr = n where ref_a, else -n
}

// box_box: the gradients of its 4 slots (gnc[0..4)) back to the two geoms. Slot 0 is the edge contact's where
// use_edge, else the face clipping's first; slots 1-3 are always the clipping's points (invalid where use_edge, but
// their pa, pb are still the clipping's values, and so are their gradients); every slot's n is e_n where use_edge,
// else the face axis' f_n
fn box_box_adj(a: Geom, b: Geom) -> GeomPairAdj {
  let ua = rotation_columns(a.rot);
  let ub = rotation_columns(b.rot);
  let d = b.pos - a.pos;
  let sat = _sat(a, b, ua, ub, d);
  let use_edge = sat.e_ok && _beats(sat.e_sep, sat.f_sep);
  var acc: BoxBoxAcc;   // zero
  var gn = vec3<f32>(0.0);
  for (var m = 0u; m < 4u; m++) { gn = gn + gnc[m].n; }
  var gc = array<ContactAdj, 4>(gnc[0], gnc[1], gnc[2], gnc[3]);
  if (use_edge) {
    _edge_contact_adj(a, b, ua, ub, sat.e_n, sat.i, sat.j, gnc[0].pa, gnc[0].pb, &acc);
    gc[0] = ContactAdj(vec3<f32>(0.0), vec3<f32>(0.0), vec3<f32>(0.0));
  }
  let gfn = _face_contacts_adj(a, b, ua, ub, sat.f_n, sat.ref_a, sat.k, gc, &acc) + select(gn, vec3<f32>(0.0),
                                                                                           use_edge);
  // f_n = us_k (+-1 by the sign of d.us_k): the face axis' column
  let us = select(ub[sat.k], ua[sat.k], sat.ref_a);
  let gus = gfn * select(-1.0, 1.0, dot(d, us) >= 0.0);
  if (sat.ref_a) { acc.ua[sat.k] = acc.ua[sat.k] + gus; } else { acc.ub[sat.k] = acc.ub[sat.k] + gus; }
  if (use_edge) {   // e_n = lu (+-1 by the sign of d.lu), lu = norm_dir(ua_i x ub_j).dir; the length is only compared
    let l = cross(ua[sat.i], ub[sat.j]);
    let lu = norm_dir(l, BOX_BOX_PARALLEL_SIN).dir;
    let gl = norm_dir_adj(l, BOX_BOX_PARALLEL_SIN, 0.0, gn * select(-1.0, 1.0, dot(d, lu) >= 0.0));
    let cr = cross_adj(ua[sat.i], ub[sat.j], gl);
    acc.ua[sat.i] = acc.ua[sat.i] + cr.a;
    acc.ub[sat.j] = acc.ub[sat.j] + cr.b;
  }
  return GeomPairAdj(GeomAdj(acc.pa, rotation_columns_adj(a.rot, acc.ua), acc.ha),
                     GeomAdj(acc.pb, rotation_columns_adj(b.rot, acc.ub), acc.hb));
}
