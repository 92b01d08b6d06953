// Adjoints of the hinge groups (kernels/hinges.wgsl, oracle/constraints/hinges.py): two or three hinges on one body,
// solved as one joint (group), whose limit rows n_i also carry the group's motors and damping
// (kernels/motor_loads.wgsl, joint_damping.wgsl). They take the group's parameters as values (GroupParams) and
// return their gradients in the same shape (GroupParamsAdj), which group_scatter sums into the members' rows.

struct GroupParamsAdj { ap0: vec3<f32>, ap1: vec3<f32>, ap2: vec3<f32>, ac0: vec3<f32>, ac1: vec3<f32>,
                        ac2: vec3<f32>, anchor_p: vec3<f32>, anchor_c: vec3<f32>, compliance: f32, lo: vec3<f32>,
                        hi: vec3<f32> }
fn group_params_adj_zero() -> GroupParamsAdj {
  let z = vec3<f32>(0.0);
  return GroupParamsAdj(z, z, z, z, z, z, z, z, 0.0, z, z);
}
fn group_params_adj_add(a: GroupParamsAdj, b: GroupParamsAdj) -> GroupParamsAdj {
  return GroupParamsAdj(a.ap0 + b.ap0, a.ap1 + b.ap1, a.ap2 + b.ap2, a.ac0 + b.ac0, a.ac1 + b.ac1, a.ac2 + b.ac2,
                        a.anchor_p + b.anchor_p, a.anchor_c + b.anchor_c, a.compliance + b.compliance, a.lo + b.lo,
                        a.hi + b.hi);
}
// a group's parameter gradients into its members' rows (j: the group's first hinge; a pair's third member is its
// second again, whose gradients are zero)
fn group_scatter(j: u32, a: GroupParamsAdj) {
  let m = vec3<u32>(members(j, 0u), members(j, 1u), members(j, 2u));
  let n = select(3u, 2u, JNT_TYPE[j] == HINGE2);
  var ap = array<vec3<f32>, 3>(a.ap0, a.ap1, a.ap2);
  var ac = array<vec3<f32>, 3>(a.ac0, a.ac1, a.ac2);
  for (var i = 0u; i < n; i++) {
    gjv(OFF_JNT_AXIS_PARENT, m[i], ap[i]);
    gjv(OFF_JNT_AXIS_CHILD, m[i], ac[i]);
    gp1(OFF_JNT_RANGE + 2u * m[i], a.lo[i]);
    gp1(OFF_JNT_RANGE + 2u * m[i] + 1u, a.hi[i]);
  }
  gjv(OFF_JNT_ANCHOR_PARENT, j, a.anchor_p);
  gjv(OFF_JNT_ANCHOR_CHILD, j, a.anchor_c);
  gp1(OFF_JNT_COMPLIANCE + j, a.compliance);
}

struct Vec3Triple { a: vec3<f32>, b: vec3<f32>, c: vec3<f32> }

// turn_about(axis, a, b) = atan2(y, x), y = axis . (a x b), x = a . b - (axis . a)(axis . b): the gradients of
// (axis, a, b)
fn turn_about_adj(axis: vec3<f32>, a: vec3<f32>, b: vec3<f32>, g: f32) -> Vec3Triple {
  let ya = dot(axis, a);
  let yb = dot(axis, b);
  let gyx = atan2_adj(dot(axis, cross(a, b)), dot(a, b) - ya * yb, g);
  return Vec3Triple(cross(a, b) * gyx.x - (a * yb + b * ya) * gyx.y, cross(b, axis) * gyx.x + (b - axis * yb) * gyx.y,
                    cross(axis, a) * gyx.x + (a - axis * ya) * gyx.y);
}

// turn_by(k, v, angle) = v c + (k x v) s + k (k . v)(1 - c), c = cos(angle), s = sin(angle): the gradients of (k, v)
// and of the angle (in c.x)
fn turn_by_adj(k: vec3<f32>, v: vec3<f32>, angle: f32, g: vec3<f32>) -> Vec3Triple {
  let c = cos(angle);
  let s = sin(angle);
  let kg = dot(k, g);
  let kv = dot(k, v);
  let gk = cross(v, g) * s + (g * kv + v * kg) * (1.0 - c);
  let gv = g * c + cross(g, k) * s + k * (kg * (1.0 - c));
  let ga = dot(g, -v * s + cross(k, v) * c + k * (kv * s));
  return Vec3Triple(gk, gv, vec3<f32>(ga, 0.0, 0.0));
}

// row i of limit_rows: n_i = (w_{i+1} x w_{i+2}) / det, det = w1 . (w2 x w3): the gradients of (w1, w2, w3)
fn limit_rows_adj(g: HingeAngles, i: u32, gn: vec3<f32>) -> Vec3Triple {
  let det = dot(g.w1, cross(g.w2, g.w3));
  let rows = limit_rows(g);
  let gdet = -dot(gn, rows[i]) / det;
  var out = Vec3Triple(cross(g.w2, g.w3) * gdet, cross(g.w3, g.w1) * gdet, cross(g.w1, g.w2) * gdet);
  let gc = gn / det;
  if (i == 0u) { let cr = cross_adj(g.w2, g.w3, gc); out.b = out.b + cr.a; out.c = out.c + cr.b; }
  else if (i == 1u) { let cr = cross_adj(g.w3, g.w1, gc); out.c = out.c + cr.a; out.a = out.a + cr.b; }
  else { let cr = cross_adj(g.w1, g.w2, gc); out.a = out.a + cr.a; out.b = out.b + cr.b; }
  return out;
}

// hinge_angles_of in reverse: from the gradients of the angles (gt) and of the world axes (gw: w1, w2, w3), those of
// the sides' quaternions and of the axes. The triple's root choice (up or down) replays the forward's
struct AnglesAdj { q1: Quat, q2: Quat, k: GroupParamsAdj }
fn hinge_angles_adj(k: GroupParams, s1: Side, s2: Side, gt: vec3<f32>, gw_: Vec3Triple) -> AnglesAdj {
  var out = AnglesAdj(Quat(0.0, vec3<f32>(0.0)), Quat(0.0, vec3<f32>(0.0)), group_params_adj_zero());
  var gw = gw_;
  let w1 = rotate(s1.q, k.ap0);
  if (k.pair) {
    let w2 = rotate(s2.q, k.ac1);
    let p1w = rotate(s1.q, k.ap1);
    let c0w = rotate(s2.q, k.ac0);
    let cr = cross_adj(w1, w2, gw.c);
    let ta1 = turn_about_adj(w1, p1w, w2, gt.x);
    let ta2 = turn_about_adj(w2, w1, c0w, gt.y);
    let rw1 = rotate_adj(s1.q, k.ap0, gw.a + cr.a + ta1.a + ta2.b);
    let rp1 = rotate_adj(s1.q, k.ap1, ta1.b);
    let rw2 = rotate_adj(s2.q, k.ac1, gw.b + cr.b + ta1.c + ta2.a);
    let rc0 = rotate_adj(s2.q, k.ac0, ta2.c);
    out.q1 = qadd(rw1.q, rp1.q);
    out.q2 = qadd(rw2.q, rc0.q);
    out.k.ap0 = rw1.v;
    out.k.ap1 = rp1.v;
    out.k.ac1 = rw2.v;
    out.k.ac0 = rc0.v;
    return out;
  }
  let w3 = rotate(s2.q, k.ac2);
  let a1 = k.ap0;
  let a2 = k.ap1;
  let a3 = k.ap2;
  let r = dot(a1, a2) * dot(a2, a3);
  let p = dot(a1, a3) - r;
  let q = dot(a1, cross(a2, a3));
  let amp = sqrt(p * p + q * q);
  let m = (dot(w1, w3) - r) / amp;
  let c = clamp(m, -1.0, 1.0);
  let t2 = triple_t2(c, p, q);
  let tb1 = turn_by(a2, a3, t2);
  let x1 = rotate(s1.q, tb1);
  let t1 = turn_about(w1, x1, w3);
  let tb3 = turn_by(k.ac1, k.ac0, -t2);
  let y3 = rotate(s2.q, tb3);
  var g1 = gt.x;
  var g2 = gt.y;
  // w2 = rotate(q1, turn_by(a1, a2, t1))
  let tbw = turn_by(a1, a2, t1);
  let rw2 = rotate_adj(s1.q, tbw, gw.b);
  let bw2 = turn_by_adj(a1, a2, t1, rw2.v);
  g1 = g1 + bw2.c.x;
  // t3 = turn_about(w3, w1, rotate(q2, turn_by(ac1, ac0, -t2)))
  let ta3 = turn_about_adj(w3, w1, y3, gt.z);
  let ry3 = rotate_adj(s2.q, tb3, ta3.c);
  let b3 = turn_by_adj(k.ac1, k.ac0, -t2, ry3.v);
  g2 = g2 - b3.c.x;
  // t1 = turn_about(w1, rotate(q1, turn_by(a2, a3, t2)), w3)
  let ta1 = turn_about_adj(w1, x1, w3, g1);
  let rx1 = rotate_adj(s1.q, tb1, ta1.b);
  let b1 = turn_by_adj(a2, a3, t2, rx1.v);
  g2 = g2 + b1.c.x;
  // t2 = the root nearer 0 of wrap(phase +- off), off = atan2(sqrt(max(1 - c^2, 1e-30)), c), phase = atan2(q, p)
  let off = atan2(sqrt(max(1.0 - c * c, 1e-30)), c);
  let phase = atan2(q, p);
  let up_taken = abs(wrap(phase + off)) <= abs(wrap(phase - off));
  let gup = wrap_adj(phase + off, select(0.0, g2, up_taken));
  let gdown = wrap_adj(phase - off, select(g2, 0.0, up_taken));
  let gphase = gup + gdown;
  let goff = gup - gdown;
  let gqp = atan2_adj(q, p, gphase);
  let sq = sqrt(max(1.0 - c * c, 1e-30));
  let gsc = atan2_adj(sq, c, goff);
  let gc = gsc.y + select(0.0, gsc.x * (-c / sq), 1.0 - c * c > 1e-30);
  // c = m.maximum(-1).minimum(1), m = (w1 . w3 - r) / amp, amp = sqrt(p^2 + q^2)
  let gm = _bb_clamp_grads(m, -1.0, 1.0, gc).x;
  let gr_m = -gm / amp;
  let gamp = -gm * m / amp;
  let gp = gqp.y + gamp * p / amp;
  let gq = gqp.x + gamp * q / amp;
  let gr = gr_m - gp;
  // p = a1 . a3 - r, q = a1 . (a2 x a3), r = (a1 . a2)(a2 . a3)
  let ga1 = a3 * gp + cross(a2, a3) * gq + a2 * (gr * dot(a2, a3)) + bw2.a;
  let ga2 = cross(a3, a1) * gq + (a1 * dot(a2, a3) + a3 * dot(a1, a2)) * gr + bw2.b + b1.a;
  let ga3 = a1 * gp + cross(a1, a2) * gq + a2 * (gr * dot(a1, a2)) + b1.b;
  let rw1 = rotate_adj(s1.q, a1, gw.a + ta3.b + ta1.a + w3 * (gm / amp));
  let rw3 = rotate_adj(s2.q, k.ac2, gw.c + ta3.a + ta1.c + w1 * (gm / amp));
  out.q1 = qadd(qadd(rw1.q, rw2.q), rx1.q);
  out.q2 = qadd(rw3.q, ry3.q);
  out.k.ap0 = ga1 + rw1.v;
  out.k.ap1 = ga2;
  out.k.ap2 = ga3;
  out.k.ac0 = b3.b;
  out.k.ac1 = b3.a;
  out.k.ac2 = rw3.v;
  return out;
}

// limit_rows(g)[i], g = hinge_angles_of(k, s1, s2) (the caller's, from its forward replay), in reverse, with gt the
// gradient of the angles: those of the sides' quaternions and of the axes (motor_loads and joint_damping read the
// row n_i; the limits n_i and t_i)
fn group_row_adj(k: GroupParams, s1: Side, s2: Side, g: HingeAngles, i: u32, gn: vec3<f32>,
                 gt: vec3<f32>) -> AnglesAdj {
  return hinge_angles_adj(k, s1, s2, gt, limit_rows_adj(g, i, gn));
}

// a pair's Hooke row in reverse: err = -(w1 . w2 - ap0 . ap1) / |w2 x w1| along the unit w2 x w1; from the gradients
// of err and of the direction
fn hooke_row_adj(k: GroupParams, s1: Side, s2: Side, r: GroupRow, gerr_: f32, gdir: vec3<f32>) -> AnglesAdj {
  var out = AnglesAdj(Quat(0.0, vec3<f32>(0.0)), Quat(0.0, vec3<f32>(0.0)), group_params_adj_zero());
  let w1 = r.g.w1;
  let w2 = r.g.w2;
  let den = select(1.0, r.nd.len, r.nd.on);
  let gerr = gerr_ / den;   // of -(w1 . w2 - rest)
  let gv = norm_dir_adj(cross(w2, w1), 1e-12, select(0.0, -gerr_ * r.err / den, r.nd.on), gdir);
  let cr = cross_adj(w2, w1, gv);
  let rw1 = rotate_adj(s1.q, k.ap0, cr.b - w2 * gerr);
  let rw2 = rotate_adj(s2.q, k.ac1, cr.a - w1 * gerr);
  out.q1 = rw1.q;
  out.q2 = rw2.q;
  out.k.ap0 = rw1.v + k.ap1 * gerr;
  out.k.ap1 = k.ap0 * gerr;
  out.k.ac1 = rw2.v;
  return out;
}

fn side_adj_q(q: Quat) -> SideAdj { return SideAdj(vec3<f32>(0.0), q, 0.0, vec3<f32>(0.0)); }

// group (kernels/hinges.wgsl): the forward replayed to keep each row's sides, then the rows in reverse. A limit that
// does not fire passes its multiplier's gradient through (its apply, a re-normalisation, still runs, as in the
// forward). lam: the group's six multipliers before the iteration (3 positional, 3 angular)
struct GroupAdj { s1: SideAdj, s2: SideAdj, prm: GroupParamsAdj, lam: array<f32, 6> }
fn group_adj(s1_0: Side, s2_0: Side, k: GroupParams, lam: array<f32, 6>, h: f32, g: Correction,
             glam: array<f32, 6>) -> GroupAdj {
  var st1: array<Side, 4>;
  var st2: array<Side, 4>;
  var cs: array<Correction, 3>;
  st1[0] = s1_0;
  st2[0] = s2_0;
  for (var st = 0u; st < 3u; st++) {
    let r = group_row(k, st1[st], st2[st], st);
    cs[st] = angular_dlam(st1[st], st2[st], r.nd.dir, r.err, r.on, lam[3u + st], 0.0).c;
    st1[st + 1u] = apply(st1[st], cs[st].dx1, cs[st].dth1);
    st2[st + 1u] = apply(st2[st], cs[st].dx2, cs[st].dth2);
  }
  var out: GroupAdj;
  let at = k.compliance / (h * h);
  let pa = attach_adj(st1[3], st2[3], k.anchor_p, k.anchor_c, vec3<f32>(lam[0], lam[1], lam[2]), at, g,
                      vec3<f32>(glam[0], glam[1], glam[2]));
  out.prm = group_params_adj_zero();
  out.prm.anchor_p = pa.r1;
  out.prm.anchor_c = pa.r2;
  out.prm.compliance = pa.at / (h * h);
  out.lam[0] = pa.lam.x;
  out.lam[1] = pa.lam.y;
  out.lam[2] = pa.lam.z;
  var gs1 = pa.s1;
  var gs2 = pa.s2;
  for (var n = 0u; n < 3u; n++) {
    let st = 2u - n;
    let s1 = st1[st];
    let s2 = st2[st];
    let r = group_row(k, s1, s2, st);
    let p = apply_pair_adj(s1, s2, cs[st], gs1, gs2, g);
    let la = angular_adj(s1, s2, r.nd.dir, r.err, r.on, lam[3u + st], 0.0, p.c, glam[3u + st]);
    out.lam[3u + st] = la.lam;
    gs1 = side_adj_add(p.s1, la.s1);
    gs2 = side_adj_add(p.s2, la.s2);
    if (!r.on) { continue; }
    var aa: AnglesAdj;
    if (k.pair && st == 0u) { aa = hooke_row_adj(k, s1, s2, r, la.err, la.n); }
    else {   // err = (clamp(t, lo, hi) - t) / |row_i|, the row's direction n_i / |row_i|
      let i = st - select(0u, 1u, k.pair);
      let gx = la.err / r.nd.len;
      let cg = _bb_clamp_grads(r.t, k.lo[i], k.hi[i], gx);
      var gt = vec3<f32>(0.0);
      gt[i] = cg.x - gx;
      let gn = norm_dir_adj(limit_rows(r.g)[i], 1e-12, -la.err * r.err / r.nd.len, la.n);
      aa = group_row_adj(k, s1, s2, r.g, i, gn, gt);
      aa.k.lo[i] = aa.k.lo[i] + cg.y;
      aa.k.hi[i] = aa.k.hi[i] + cg.z;
    }
    gs1 = side_adj_add(gs1, side_adj_q(aa.q1));
    gs2 = side_adj_add(gs2, side_adj_q(aa.q2));
    out.prm = group_params_adj_add(out.prm, aa.k);
  }
  out.s1 = gs1;
  out.s2 = gs2;
  return out;
}
