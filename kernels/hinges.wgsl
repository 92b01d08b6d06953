// Two or three hinges on one body (oracle/constraints/hinges.py; the design and its checks against MuJoCo in
// bench/study_hinges.py), in the oracle's names. The group's rows are its first hinge's joint correction; the other
// hinges' corrections are zero (kernels/solve.wgsl joint_correction). JNT_GROUP[3 j + k]: joint j's group's k-th
// hinge (a pair repeats its second; a joint outside a group lists itself).

fn members(j: u32, k: u32) -> u32 { return JNT_GROUP[3u * j + k]; }

// v turned by angle about the unit k (Rodrigues): the oracle's turn (kernels/xpbd.wgsl has a turn of its own)
fn turn_by(k: vec3<f32>, v: vec3<f32>, angle: f32) -> vec3<f32> {
  let c = cos(angle);
  return v * c + cross(k, v) * sin(angle) + k * (dot(k, v) * (1.0 - c));
}

// the signed angle about the unit axis that takes a's component across it onto b's
fn turn_about(axis: vec3<f32>, a: vec3<f32>, b: vec3<f32>) -> f32 {
  return atan2(dot(axis, cross(a, b)), dot(a, b) - dot(axis, a) * dot(axis, b));
}

// the group's angles t (a pair's third is 0) and the hinges' world axes w1, w2, w3 (a pair's w3: w1 x w2), from its
// first hinge j (study claims 1-3)
struct HingeAngles { t: vec3<f32>, w1: vec3<f32>, w2: vec3<f32>, w3: vec3<f32> }
fn hinge_angles(j: u32, s1: Side, s2: Side) -> HingeAngles {
  let w1 = rotate(s1.q, jv(OFF_JNT_AXIS_PARENT, j));
  if (JNT_TYPE[j] == HINGE2) {
    let w2 = rotate(s2.q, jv(OFF_JNT_AXIS_CHILD, members(j, 1u)));
    let t = vec3<f32>(turn_about(w1, rotate(s1.q, jv(OFF_JNT_AXIS_PARENT, members(j, 1u))), w2),
                      turn_about(w2, w1, rotate(s2.q, jv(OFF_JNT_AXIS_CHILD, j))), 0.0);
    return HingeAngles(t, w1, w2, cross(w1, w2));
  }
  let w3 = rotate(s2.q, jv(OFF_JNT_AXIS_CHILD, members(j, 2u)));
  let a1 = jv(OFF_JNT_AXIS_PARENT, j);
  let a2 = jv(OFF_JNT_AXIS_PARENT, members(j, 1u));
  let a3 = jv(OFF_JNT_AXIS_PARENT, members(j, 2u));
  // t2: a1 . E a3 = p cos t2 + q sin t2 + r; the root nearer 0
  let r = dot(a1, a2) * dot(a2, a3);
  let p = dot(a1, a3) - r;
  let q = dot(a1, cross(a2, a3));
  let c = clamp((dot(w1, w3) - r) / sqrt(p * p + q * q), -1.0, 1.0);
  let off = atan2(sqrt(max(1.0 - c * c, 1e-30)), c);
  let phase = atan2(q, p);
  let up = wrap(phase + off);
  let down = wrap(phase - off);
  let t2 = select(down, up, abs(up) <= abs(down));
  let t1 = turn_about(w1, rotate(s1.q, turn_by(a2, a3, t2)), w3);
  let t3 = turn_about(w3, w1, rotate(s2.q, turn_by(jv(OFF_JNT_AXIS_CHILD, members(j, 1u)), jv(OFF_JNT_AXIS_CHILD, j),
                                                -t2)));
  return HingeAngles(vec3<f32>(t1, t2, t3), w1, rotate(s1.q, turn_by(a1, a2, t1)), w3);
}

// the rows of [w1 w2 w3]^-1 as the columns n_i: d t_i = n_i . d phi (study claim 5)
fn limit_rows(g: HingeAngles) -> mat3x3<f32> {
  let det = dot(g.w1, cross(g.w2, g.w3));
  return mat3x3<f32>(cross(g.w2, g.w3) / det, cross(g.w3, g.w1) / det, cross(g.w1, g.w2) / det);
}

// a pair's angular row: w1 . w2 back to its rest value, turning about w2 x w1; always rigid
fn hooke_row(j: u32, s1: Side, s2: Side, li: u32) -> Correction {
  let w1 = rotate(s1.q, jv(OFF_JNT_AXIS_PARENT, j));
  let w2 = rotate(s2.q, jv(OFF_JNT_AXIS_CHILD, members(j, 1u)));
  let rest = dot(jv(OFF_JNT_AXIS_PARENT, j), jv(OFF_JNT_AXIS_PARENT, members(j, 1u)));
  let g = norm_dir(cross(w2, w1), 1e-12);
  return angular(s1, s2, g.dir, -(dot(w1, w2) - rest) / select(1.0, g.len, g.on), g.on, li, 0.0);
}

// the group's rows: a pair's Hooke row, each hinge's limit, then the anchors; multipliers: 3 positional, then a pair's
// Hooke row and 2 limits or a triple's 3 limits
fn group(j: u32, s1_: Side, s2_: Side, h: f32) -> Correction {
  var s1 = s1_;
  var s2 = s2_;
  let l = LAMW * j;
  let pair = JNT_TYPE[j] == HINGE2;
  var tot = zero_corr();
  if (pair) {
    tot = hooke_row(j, s1, s2, l + 3u);
    s1 = apply(s1, tot.dx1, tot.dth1);
    s2 = apply(s2, tot.dx2, tot.dth2);
  }
  for (var i = 0u; i < select(3u, 2u, pair); i++) {
    let g = hinge_angles(j, s1, s2);
    let nd = norm_dir(limit_rows(g)[i], 1e-12);
    let k = members(j, i);
    let lo = p1(OFF_JNT_RANGE + 2u * k);
    let hi = p1(OFF_JNT_RANGE + 2u * k + 1u);
    let t = g.t[i];
    let violated = p1(OFF_JNT_LIMITED + k) > 0.0 && (t < lo || t > hi);
    let c = angular(s1, s2, nd.dir, (min(max(t, lo), hi) - t) / nd.len, violated, l + select(3u, 4u, pair) + i, 0.0);
    s1 = apply(s1, c.dx1, c.dth1);
    s2 = apply(s2, c.dx2, c.dth2);
    tot = chain(tot, c);
  }
  return chain(tot, attach(j, s1, s2, l, h));
}

fn hinge2(j: u32, s1: Side, s2: Side, h: f32) -> Correction { return group(j, s1, s2, h); }
fn hinge3(j: u32, s1: Side, s2: Side, h: f32) -> Correction { return group(j, s1, s2, h); }
