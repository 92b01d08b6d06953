// Two or three hinges on one body (oracle/constraints/hinges.py; the design and its checks against MuJoCo in
// bench/study_hinges.py), in the oracle's names. The group's rows are its first hinge's joint correction; the other
// hinges' corrections are zero (kernels/solve.wgsl joint_correction). JNT_GROUP[3 j + k]: joint j's group's k-th
// hinge (a pair repeats its second; a joint outside a group lists itself).

fn members(j: u32, k: u32) -> u32 { return JNT_GROUP[3u * j + k]; }
// whether joint j is a hinge of a group (GROUPS: whether the scene has one, so that the test folds away without)
fn grouped(j: u32) -> bool { return GROUPS && (JNT_TYPE[j] == HINGE2 || JNT_TYPE[j] == HINGE3); }

// v turned by angle about the unit k (Rodrigues): the oracle's turn (kernels/xpbd.wgsl has a turn of its own)
fn turn_by(k: vec3<f32>, v: vec3<f32>, angle: f32) -> vec3<f32> {
  let c = cos(angle);
  return v * c + cross(k, v) * sin(angle) + k * (dot(k, v) * (1.0 - c));
}

// the signed angle about the unit axis that takes a's component across it onto b's
fn turn_about(axis: vec3<f32>, a: vec3<f32>, b: vec3<f32>) -> f32 {
  return atan2(dot(axis, cross(a, b)), dot(a, b) - dot(axis, a) * dot(axis, b));
}

// a group's parameters as values (the backward kernel's adjoints take them so: kernels/adjoint/hinges.wgsl): the
// members' axes in the parent (ap_i) and in the child (ac_i), the leader's anchors and compliance, the members' limits
// (component i: member i; a pair's third repeats its second, unused)
struct GroupParams { ap0: vec3<f32>, ap1: vec3<f32>, ap2: vec3<f32>, ac0: vec3<f32>, ac1: vec3<f32>, ac2: vec3<f32>,
                     anchor_p: vec3<f32>, anchor_c: vec3<f32>, compliance: f32, limited: vec3<f32>, lo: vec3<f32>,
                     hi: vec3<f32>, pair: bool }
fn group_params(j: u32) -> GroupParams {   // j: the group's first hinge
  let m = vec3<u32>(members(j, 0u), members(j, 1u), members(j, 2u));
  return GroupParams(jv(OFF_JNT_AXIS_PARENT, m.x), jv(OFF_JNT_AXIS_PARENT, m.y), jv(OFF_JNT_AXIS_PARENT, m.z),
                     jv(OFF_JNT_AXIS_CHILD, m.x), jv(OFF_JNT_AXIS_CHILD, m.y), jv(OFF_JNT_AXIS_CHILD, m.z),
                     jv(OFF_JNT_ANCHOR_PARENT, j), jv(OFF_JNT_ANCHOR_CHILD, j), p1(OFF_JNT_COMPLIANCE + j),
                     members_p1(OFF_JNT_LIMITED, m, 1u), members_p1(OFF_JNT_RANGE, m, 2u),
                     members_p1(OFF_JNT_RANGE + 1u, m, 2u), JNT_TYPE[j] == HINGE2);
}
// a scalar parameter of the members m, stride floats per joint from off
fn members_p1(off: u32, m: vec3<u32>, stride: u32) -> vec3<f32> {
  return vec3<f32>(p1(off + stride * m.x), p1(off + stride * m.y), p1(off + stride * m.z));
}

// the group's angles t (a pair's third is 0) and the hinges' world axes w1, w2, w3 (a pair's w3: w1 x w2), from its
// first hinge j (study claims 1-3)
struct HingeAngles { t: vec3<f32>, w1: vec3<f32>, w2: vec3<f32>, w3: vec3<f32> }
fn hinge_angles(j: u32, s1: Side, s2: Side) -> HingeAngles { return hinge_angles_of(group_params(j), s1, s2); }
// the root t2 of a1 . E a3 = p cos t2 + q sin t2 + r nearer 0, from c = (w1 . w3 - r) / sqrt(p^2 + q^2) clamped
fn triple_t2(c: f32, p: f32, q: f32) -> f32 {
  let off = atan2(sqrt(max(1.0 - c * c, 1e-30)), c);
  let phase = atan2(q, p);
  let up = wrap(phase + off);
  let down = wrap(phase - off);
  return select(down, up, abs(up) <= abs(down));
}
fn hinge_angles_of(k: GroupParams, s1: Side, s2: Side) -> HingeAngles {
  let w1 = rotate(s1.q, k.ap0);
  if (k.pair) {
    let w2 = rotate(s2.q, k.ac1);
    let t = vec3<f32>(turn_about(w1, rotate(s1.q, k.ap1), w2), turn_about(w2, w1, rotate(s2.q, k.ac0)), 0.0);
    return HingeAngles(t, w1, w2, cross(w1, w2));
  }
  let w3 = rotate(s2.q, k.ac2);
  // t2: a1 . E a3 = p cos t2 + q sin t2 + r; the root nearer 0
  let r = dot(k.ap0, k.ap1) * dot(k.ap1, k.ap2);
  let p = dot(k.ap0, k.ap2) - r;
  let q = dot(k.ap0, cross(k.ap1, k.ap2));
  let t2 = triple_t2(clamp((dot(w1, w3) - r) / sqrt(p * p + q * q), -1.0, 1.0), p, q);
  let t1 = turn_about(w1, rotate(s1.q, turn_by(k.ap1, k.ap2, t2)), w3);
  let t3 = turn_about(w3, w1, rotate(s2.q, turn_by(k.ac1, k.ac0, -t2)));
  return HingeAngles(vec3<f32>(t1, t2, t3), w1, rotate(s1.q, turn_by(k.ap0, k.ap1, t1)), w3);
}

// the rows of [w1 w2 w3]^-1 as the columns n_i: d t_i = n_i . d phi (study claim 5)
fn limit_rows(g: HingeAngles) -> mat3x3<f32> {
  let det = dot(g.w1, cross(g.w2, g.w3));
  return mat3x3<f32>(cross(g.w2, g.w3) / det, cross(g.w3, g.w1) / det, cross(g.w1, g.w2) / det);
}

// an angular row of the group: its unit direction and error, whether it fires, and what the adjoint reads again
struct GroupRow { nd: NormDir, err: f32, on: bool, g: HingeAngles, t: f32 }
// a pair's angular row: w1 . w2 back to its rest value, turning about w2 x w1; always rigid
fn hooke_row(k: GroupParams, s1: Side, s2: Side) -> GroupRow {
  let w1 = rotate(s1.q, k.ap0);
  let w2 = rotate(s2.q, k.ac1);
  let nd = norm_dir(cross(w2, w1), 1e-12);
  let err = -(dot(w1, w2) - dot(k.ap0, k.ap1)) / select(1.0, nd.len, nd.on);
  return GroupRow(nd, err, nd.on, HingeAngles(vec3<f32>(0.0), w1, w2, vec3<f32>(0.0)), 0.0);
}
// hinge i's limit row: along n_i back into [lo, hi], where limited and outside
fn limit_row(k: GroupParams, s1: Side, s2: Side, i: u32) -> GroupRow {
  let g = hinge_angles_of(k, s1, s2);
  let nd = norm_dir(limit_rows(g)[i], 1e-12);
  let t = g.t[i];
  let violated = k.limited[i] > 0.0 && (t < k.lo[i] || t > k.hi[i]);
  return GroupRow(nd, (min(max(t, k.lo[i]), k.hi[i]) - t) / nd.len, violated, g, t);
}
// stage st of a group's angular rows (a pair's Hooke row, then the limits), on multiplier LAMW j + 3 + st
fn group_row(k: GroupParams, s1: Side, s2: Side, st: u32) -> GroupRow {
  if (k.pair && st == 0u) { return hooke_row(k, s1, s2); }
  return limit_row(k, s1, s2, st - select(0u, 1u, k.pair));
}

// the group's rows: a pair's Hooke row and 2 limits or a triple's 3 limits, then the anchors; multipliers: 3
// positional, then the 3 angular rows
fn group(j: u32, s1_: Side, s2_: Side, h: f32) -> Correction {
  var s1 = s1_;
  var s2 = s2_;
  let k = group_params(j);
  var tot = zero_corr();
  for (var st = 0u; st < 3u; st++) {
    let r = group_row(k, s1, s2, st);
    let c = angular(s1, s2, r.nd.dir, r.err, r.on, LAMW * j + 3u + st, 0.0);
    s1 = apply(s1, c.dx1, c.dth1);
    s2 = apply(s2, c.dx2, c.dth2);
    tot = chain(tot, c);
  }
  return chain(tot, attach(j, s1, s2, LAMW * j, h));
}

fn hinge2(j: u32, s1: Side, s2: Side, h: f32) -> Correction { return group(j, s1, s2, h); }
fn hinge3(j: u32, s1: Side, s2: Side, h: f32) -> Correction { return group(j, s1, s2, h); }
