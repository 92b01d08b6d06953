// XPBD corrections (oracle/xpbd.py) and the joint constraints (oracle/constraints/), one function per registered
// joint type; part of the step kernel (kernels/xpbd_step.wgsl holds the buffers, Side and Correction).

// --- XPBD corrections (oracle/xpbd.py) ---
fn inv_mass_at(s: Side, r: vec3<f32>, n: vec3<f32>) -> f32 {  // M20 eq. 2
  let rn = inv_rotate(s.q, cross(r, n));
  return s.im + dot(rn, rn * s.ii);
}
fn inv_inertia_along(s: Side, n: vec3<f32>) -> f32 {  // M20 eq. 3
  let nb = inv_rotate(s.q, n);
  return dot(nb, nb * s.ii);
}
fn world_inv_inertia(s: Side, v: vec3<f32>) -> vec3<f32> { return rotate(s.q, inv_rotate(s.q, v) * s.ii); }
fn zero_corr() -> Correction { return Correction(vec3<f32>(0.0), vec3<f32>(0.0), vec3<f32>(0.0), vec3<f32>(0.0)); }
fn chain2(a: Correction, b: Correction) -> Correction {
  return Correction(a.dx1 + b.dx1, a.dth1 + b.dth1, a.dx2 + b.dx2, a.dth2 + b.dth2);
}

// M20 eqs. 2-9: returns the correction; the multiplier's increment goes to lam[li]
fn positional(s1: Side, s2: Side, r1: vec3<f32>, r2: vec3<f32>, n: vec3<f32>, c: f32, on: bool, li: u32,
              at: f32) -> Correction {
  let w = inv_mass_at(s1, r1, n) + inv_mass_at(s2, r2, n);
  let dlam = select(0.0, (-c - at * lam[li]) / (w + at + 1e-30), on);
  let p = n * dlam;
  lam[li] = lam[li] + dlam;
  return Correction(p * s1.im, world_inv_inertia(s1, cross(r1, p)), -(p * s2.im), -world_inv_inertia(s2, cross(r2, p)));
}

// M20 eqs. 11-14: body 1 turns about -n, body 2 about +n
fn angular(s1: Side, s2: Side, n: vec3<f32>, theta: f32, on: bool, li: u32, at: f32) -> Correction {
  let w = inv_inertia_along(s1, n) + inv_inertia_along(s2, n);
  let dlam = select(0.0, (-theta - at * lam[li]) / (w + at + 1e-30), on);
  let p = n * dlam;
  lam[li] = lam[li] + dlam;
  return Correction(vec3<f32>(0.0), world_inv_inertia(s1, p), vec3<f32>(0.0), -world_inv_inertia(s2, p));
}

// -K^-1 rhs for the symmetric 3x3 K with columns a, b, c, by the adjugate of K / s, s its largest |entry| (det K
// overflows f32 for ~1 mm bodies); zero where off or K singular (oracle/xpbd.py neg_solve3)
fn neg_solve3(a_: vec3<f32>, b_: vec3<f32>, c_: vec3<f32>, rhs: vec3<f32>, on_: bool) -> vec3<f32> {
  let m = max(max(max(abs(a_.x), abs(a_.y)), max(abs(a_.z), abs(b_.y))), max(abs(b_.z), abs(c_.z)));
  let s = select(1.0, m, m > 0.0);
  let a = a_ / s;
  let b = b_ / s;
  let c = c_ / s;
  let bc = cross(b, c);
  let ca = cross(c, a);
  let ab = cross(a, b);
  let det = dot(a, bc);
  let on = on_ && abs(det) > 1e-30;
  let inv_det = select(0.0, -1.0 / select(1.0, det * s, on), on);
  return vec3<f32>(dot(bc, rhs), dot(ca, rhs), dot(ab, rhs)) * inv_det;
}

fn inv_inertia_pair(s1: Side, s2: Side, e: vec3<f32>) -> vec3<f32> {  // (I1^-1 + I2^-1) e
  return world_inv_inertia(s1, e) + world_inv_inertia(s2, e);
}

// rigid full orientation lock as one 3-vector constraint (oracle/xpbd.py angular_lock): p = -K^-1 (theta n),
// K = I1^-1 + I2^-1; lam[li] accumulates p . n
fn angular_lock(s1: Side, s2: Side, n: vec3<f32>, theta: f32, on: bool, li: u32) -> Correction {
  let a = inv_inertia_pair(s1, s2, vec3<f32>(1.0, 0.0, 0.0));
  let b = inv_inertia_pair(s1, s2, vec3<f32>(0.0, 1.0, 0.0));
  let c = inv_inertia_pair(s1, s2, vec3<f32>(0.0, 0.0, 1.0));
  let p = neg_solve3(a, b, c, n * theta, on);
  lam[li] = lam[li] + dot(p, n);
  return Correction(vec3<f32>(0.0), world_inv_inertia(s1, p), vec3<f32>(0.0), -world_inv_inertia(s2, p));
}

// rigid 2-dof axis alignment, free about the unit axis a (oracle/xpbd.py angular_align): p in the plane (u = n,
// v = a x n), the relative turn's projection on it equal to theta n (Cramer's rule); lam[li] accumulates p . n
fn angular_align(s1: Side, s2: Side, a: vec3<f32>, n: vec3<f32>, theta: f32, on_: bool, li: u32) -> Correction {
  let u = n;
  let v = cross(a, n);
  let ku = inv_inertia_pair(s1, s2, u);
  let kv = inv_inertia_pair(s1, s2, v);
  let kuu = dot(u, ku);
  let kuv = dot(v, ku);
  let kvv = dot(v, kv);
  let det = kuu * kvv - kuv * kuv;
  let on = on_ && abs(det) > 1e-30;
  let scale = select(0.0, theta / select(1.0, det, on), on);
  let pu = -(kvv * scale);
  let pv = kuv * scale;
  let p = u * pu + v * pv;
  lam[li] = lam[li] + pu;
  return Correction(vec3<f32>(0.0), world_inv_inertia(s1, p), vec3<f32>(0.0), -world_inv_inertia(s2, p));
}

fn k_apply(s: Side, r: vec3<f32>, e: vec3<f32>) -> vec3<f32> { return e * s.im + cross(world_inv_inertia(s, cross(r, e)), r); }

// a point attachment as one 3-vector constraint (oracle/xpbd.py point; Macklin et al. 2016 eq. 18); lam[li..li+3]
fn point(s1: Side, s2: Side, r1: vec3<f32>, r2: vec3<f32>, d: vec3<f32>, li: u32, at: f32) -> Correction {
  let lv = vec3<f32>(lam[li], lam[li + 1u], lam[li + 2u]);
  let a = k_apply(s1, r1, vec3<f32>(1.0, 0.0, 0.0)) + k_apply(s2, r2, vec3<f32>(1.0, 0.0, 0.0)) + vec3<f32>(1.0, 0.0, 0.0) * at;
  let b = k_apply(s1, r1, vec3<f32>(0.0, 1.0, 0.0)) + k_apply(s2, r2, vec3<f32>(0.0, 1.0, 0.0)) + vec3<f32>(0.0, 1.0, 0.0) * at;
  let c = k_apply(s1, r1, vec3<f32>(0.0, 0.0, 1.0)) + k_apply(s2, r2, vec3<f32>(0.0, 0.0, 1.0)) + vec3<f32>(0.0, 0.0, 1.0) * at;
  let P = neg_solve3(a, b, c, d + lv * at, norm_dir(d, EPS).on);
  lam[li] = lv.x + P.x;
  lam[li + 1u] = lv.y + P.y;
  lam[li + 2u] = lv.z + P.z;
  return Correction(P * s1.im, world_inv_inertia(s1, cross(r1, P)), -(P * s2.im), -world_inv_inertia(s2, cross(r2, P)));
}

// --- joints (oracle/constraints/) ---
fn alpha_tilde(j: u32, h: f32) -> f32 { return p1(OFF_JNT_COMPLIANCE + j) / (h * h); }

fn attach(j: u32, s1: Side, s2: Side, li: u32, h: f32) -> Correction {
  let r1 = rotate(s1.q, jv(OFF_JNT_ANCHOR_PARENT, j));
  let r2 = rotate(s2.q, jv(OFF_JNT_ANCHOR_CHILD, j));
  return point(s1, s2, r1, r2, (s1.x + r1) - (s2.x + r2), li, alpha_tilde(j, h));
}

fn ball(j: u32, s1: Side, s2: Side, h: f32) -> Correction { return attach(j, s1, s2, LAMW * j, h); }

fn hinge_angle(j: u32, s1: Side, s2: Side) -> vec4<f32> {  // (angle, world axis)
  let a = rotate(s1.q, jv(OFF_JNT_AXIS_PARENT, j));
  let n1 = rotate(s1.q, jv(OFF_JNT_REF_PARENT, j));
  let n2 = rotate(s2.q, jv(OFF_JNT_REF_CHILD, j));
  return vec4<f32>(atan2(dot(cross(n1, n2), a), dot(n1, n2)), a);
}
fn wrap(angle: f32) -> f32 { return atan2(sin(angle), cos(angle)); }

fn hinge(j: u32, s1_: Side, s2_: Side, h: f32) -> Correction {
  var s1 = s1_;
  var s2 = s2_;
  let l = LAMW * j;
  // 1. align the axes (M20 eq. 20), always rigid; free about a1
  let a1 = rotate(s1.q, jv(OFF_JNT_AXIS_PARENT, j));
  let a2 = rotate(s2.q, jv(OFF_JNT_AXIS_CHILD, j));
  let al = norm_dir(cross(a2, a1), EPS);
  let align = angular_align(s1, s2, a1, al.dir, al.len, al.on, l);
  s1 = apply_side(s1, align.dx1, align.dth1);
  s2 = apply_side(s2, align.dx2, align.dth2);
  // 2. limits (M20 Alg. 3)
  var ph = hinge_angle(j, s1, s2);
  let lo = p1(OFF_JNT_RANGE + 2u * j);
  let hi = p1(OFF_JNT_RANGE + 2u * j + 1u);
  let goal = min(max(ph.x, lo), hi);
  let violated = p1(OFF_JNT_LIMITED + j) > 0.0 && (ph.x < lo || ph.x > hi);
  let limit = angular(s1, s2, ph.yzw, goal - ph.x, violated, l + 1u, 0.0);
  s1 = apply_side(s1, limit.dx1, limit.dth1);
  s2 = apply_side(s2, limit.dx2, limit.dth2);
  var tot = chain2(align, limit);
  // 3. position servo: compliance 1/kp (M20 sec. 3.4.1)
  let a = JNT_POS_SERVO[j];
  if (a >= 0) {
    ph = hinge_angle(j, s1, s2);
    let servo = angular(s1, s2, ph.yzw, wrap(act_ctrl(a) - ph.x), true, l + 5u, (1.0 / act_p(OFF_ACT_KP, a)) / (h * h));
    s1 = apply_side(s1, servo.dx1, servo.dth1);
    s2 = apply_side(s2, servo.dx2, servo.dth2);
    tot = chain2(tot, servo);
  }
  // 4. attach the anchors
  return chain2(tot, attach(j, s1, s2, l + 2u, h));
}

fn lock_orientation(j: u32, s1: Side, s2: Side, li: u32) -> Correction {
  let dq = qmul(qmul(s1.q, p4q(OFF_JNT_RELQUAT + 4u * j)), qconj(s2.q));
  let sgn = select(1.0, -1.0, dq.w < 0.0);
  let nd = norm_dir(dq.v * (2.0 * sgn), EPS);
  return angular_lock(s1, s2, nd.dir, nd.len, nd.on, li);
}

fn fixed(j: u32, s1: Side, s2: Side, h: f32) -> Correction {
  let l = LAMW * j;
  let orient = lock_orientation(j, s1, s2, l);
  return chain2(orient, attach(j, apply_side(s1, orient.dx1, orient.dth1), apply_side(s2, orient.dx2, orient.dth2), l + 1u, h));
}

fn distance(j: u32, s1: Side, s2: Side, h: f32) -> Correction {
  let r1 = rotate(s1.q, jv(OFF_JNT_ANCHOR_PARENT, j));
  let r2 = rotate(s2.q, jv(OFF_JNT_ANCHOR_CHILD, j));
  let nd = norm_dir((s1.x + r1) - (s2.x + r2), EPS);
  return positional(s1, s2, r1, r2, nd.dir, nd.len - p1(OFF_JNT_LENGTH + j), nd.on, LAMW * j, alpha_tilde(j, h));
}

fn slide(j: u32, s1_: Side, s2_: Side, h: f32) -> Correction {
  var s1 = s1_;
  var s2 = s2_;
  let l = LAMW * j;
  let orient = lock_orientation(j, s1, s2, l);
  s1 = apply_side(s1, orient.dx1, orient.dth1);
  s2 = apply_side(s2, orient.dx2, orient.dth2);
  var a = rotate(s1.q, jv(OFF_JNT_AXIS_PARENT, j));
  var r1 = rotate(s1.q, jv(OFF_JNT_ANCHOR_PARENT, j));
  var r2 = rotate(s2.q, jv(OFF_JNT_ANCHOR_CHILD, j));
  let d = (s1.x + r1) - (s2.x + r2);
  let nd = norm_dir(d - a * dot(d, a), EPS);
  let normal = positional(s1, s2, r1, r2, nd.dir, nd.len, nd.on, l + 1u, alpha_tilde(j, h));
  s1 = apply_side(s1, normal.dx1, normal.dth1);
  s2 = apply_side(s2, normal.dx2, normal.dth2);
  a = rotate(s1.q, jv(OFF_JNT_AXIS_PARENT, j));
  r1 = rotate(s1.q, jv(OFF_JNT_ANCHOR_PARENT, j));
  r2 = rotate(s2.q, jv(OFF_JNT_ANCHOR_CHILD, j));
  let x = dot((s2.x + r2) - (s1.x + r1), a);
  let lo = p1(OFF_JNT_RANGE + 2u * j);
  let hi = p1(OFF_JNT_RANGE + 2u * j + 1u);
  let violated = p1(OFF_JNT_LIMITED + j) > 0.0 && (x < lo || x > hi);
  let limit = positional(s1, s2, r1, r2, a, min(max(x, lo), hi) - x, violated, l + 2u, 0.0);
  return chain2(chain2(orient, normal), limit);
}
