// The XPBD step (M20 Alg. 2) as one WGSL kernel: one invocation per env loops over steps, substeps and Jacobi
// iterations. Functions carry the oracle's stage and constraint names (oracle/step.py STAGES, oracle/constraints/)
// and mirror them line by line; read the two side by side. kernels/program.py prepends a header with the scene's
// constants (counts, topology tables, parameter offsets), generated per Model.
//
// Buffers (tinygrad's layout: binding 0 is its INFINITY uniform, then the custom kernel's arguments in order):
//   outp  (B, NBODY, 13)  the state after NSTEPS env-steps   [pos 0:3 | quat (w,x,y,z) 3:7 | vel 7:10 | angvel 10:13]
//   inp   (B, NBODY, 13)  the state before
//   prm   (MB, NPARAM)    the Model's tensors, flattened (MB = 1, or B with domain randomisation)
//   ctrl  (B, NCTRL)      actuator controls, held for the call

@group(0) @binding(0) var<uniform> INFINITY : f32;
@group(0) @binding(1) var<storage, read_write> outp : array<f32>;
@group(0) @binding(2) var<storage, read_write> inp : array<f32>;
@group(0) @binding(3) var<storage, read_write> prm : array<f32>;
@group(0) @binding(4) var<storage, read_write> ctrl : array<f32>;

// one side of a constraint (oracle/xpbd.py Side): the world is x = 0, q = identity, im = 0, ii = 0
struct Side { x: vec3<f32>, q: Quat, im: f32, ii: vec3<f32> }
struct Correction { dx1: vec3<f32>, dth1: vec3<f32>, dx2: vec3<f32>, dth2: vec3<f32> }

// the working state of this env's bodies (oracle/packed.py: the 19-wide substep state)
var<private> bx: array<vec3<f32>, NBODY_ARR>;
var<private> bq: array<Quat, NBODY_ARR>;
var<private> bv: array<vec3<f32>, NBODY_ARR>;
var<private> bw: array<vec3<f32>, NBODY_ARR>;
var<private> bd: array<vec3<f32>, NBODY_ARR>;   // displacement D since the substep began
var<private> bth: array<vec3<f32>, NBODY_ARR>;  // rotation vector TH since the substep began
var<private> fext: array<vec3<f32>, NBODY_ARR>; // motor force [N] and torque [N m], world frame
var<private> text: array<vec3<f32>, NBODY_ARR>;
var<private> jc: array<Correction, NJOINT_ARR>; // this iteration's correction of each joint
var<private> lam: array<f32, NLAM_ARR>;         // XPBD multipliers, LAMW per joint
var<private> mb: u32;                           // this env's row of prm
var<private> cb: u32;                           // this env's row of ctrl

// --- parameters ---
fn p1(off: u32) -> f32 { return prm[mb + off]; }
fn p3(off: u32) -> vec3<f32> { return vec3<f32>(prm[mb + off], prm[mb + off + 1u], prm[mb + off + 2u]); }
fn p4q(off: u32) -> Quat { return Quat(prm[mb + off], vec3<f32>(prm[mb + off + 1u], prm[mb + off + 2u], prm[mb + off + 3u])); }
fn jv(off: u32, j: u32) -> vec3<f32> { return p3(off + 3u * j); }
fn act_ctrl(a: i32) -> f32 {  // clip(ctrl[a], lo, hi); a < 0 reads 0 (oracle/actuators.py act_ctrl)
  if (a < 0) { return 0.0; }
  let u = u32(a);
  return min(max(ctrl[cb + u], p1(OFF_ACT_CTRLRANGE + 2u * u)), p1(OFF_ACT_CTRLRANGE + 2u * u + 1u));
}
fn act_p(off: u32, a: i32) -> f32 { if (a < 0) { return 0.0; } return p1(off + u32(a)); }

// --- sides (oracle/solve.py gather_side, split_side) ---
fn gather_side(b: i32) -> Side {
  if (b < 0) { return Side(vec3<f32>(0.0), Quat(1.0, vec3<f32>(0.0)), 0.0, vec3<f32>(0.0)); }
  let u = u32(b);
  return Side(bx[u], bq[u], p1(OFF_BODY_INV_MASS + u), p3(OFF_BODY_INV_INERTIA + 3u * u));
}
fn split_side(b: i32) -> Side {
  var s = gather_side(b);
  if (b >= 0) { let n = SPLIT[u32(b)]; s.im = s.im * n; s.ii = s.ii * n; }
  return s;
}
fn apply_side(s: Side, dx: vec3<f32>, dth: vec3<f32>) -> Side { return Side(s.x + dx, add_rotation(s.q, dth), s.im, s.ii); }

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

fn k_apply(s: Side, r: vec3<f32>, e: vec3<f32>) -> vec3<f32> { return e * s.im + cross(world_inv_inertia(s, cross(r, e)), r); }

// a point attachment as one 3-vector constraint (oracle/xpbd.py point; Macklin et al. 2016 eq. 18); lam[li..li+3]
fn point(s1: Side, s2: Side, r1: vec3<f32>, r2: vec3<f32>, d: vec3<f32>, li: u32, at: f32) -> Correction {
  let lv = vec3<f32>(lam[li], lam[li + 1u], lam[li + 2u]);
  let a = k_apply(s1, r1, vec3<f32>(1.0, 0.0, 0.0)) + k_apply(s2, r2, vec3<f32>(1.0, 0.0, 0.0)) + vec3<f32>(1.0, 0.0, 0.0) * at;
  let b = k_apply(s1, r1, vec3<f32>(0.0, 1.0, 0.0)) + k_apply(s2, r2, vec3<f32>(0.0, 1.0, 0.0)) + vec3<f32>(0.0, 1.0, 0.0) * at;
  let c = k_apply(s1, r1, vec3<f32>(0.0, 0.0, 1.0)) + k_apply(s2, r2, vec3<f32>(0.0, 0.0, 1.0)) + vec3<f32>(0.0, 0.0, 1.0) * at;
  let bc = cross(b, c);
  let ca = cross(c, a);
  let ab = cross(a, b);
  let det = dot(a, bc);
  let on = norm_dir(d, EPS).on && abs(det) > 1e-30;
  let rhs = d + lv * at;
  let inv_det = select(0.0, -1.0 / select(1.0, det, on), on);
  let P = vec3<f32>(dot(bc, rhs), dot(ca, rhs), dot(ab, rhs)) * inv_det;
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
  // 1. align the axes (M20 eq. 20), always rigid
  let a1 = rotate(s1.q, jv(OFF_JNT_AXIS_PARENT, j));
  let a2 = rotate(s2.q, jv(OFF_JNT_AXIS_CHILD, j));
  let al = norm_dir(cross(a2, a1), EPS);
  let align = angular(s1, s2, al.dir, al.len, al.on, l, 0.0);
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
  return angular(s1, s2, nd.dir, nd.len, nd.on, li, 0.0);
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

// --- stages (oracle/step.py STAGES) ---

// oracle/actuators.py motor_loads: hinge motors turn the child by +tau, the parent by -tau; slide motors push
fn motor_loads() {
  for (var b = 0u; b < NBODY; b++) { fext[b] = vec3<f32>(0.0); text[b] = vec3<f32>(0.0); }
  for (var k = 0u; k < NMOTOR; k++) {
    let a = MOTORS[k];
    let j = u32(ACT_JOINT[a]);
    let s1 = gather_side(JNT_PARENT[j]);
    let s2 = gather_side(JNT_CHILD[j]);
    let load = rotate(s1.q, jv(OFF_JNT_AXIS_PARENT, j)) * (act_ctrl(i32(a)) * p1(OFF_ACT_GEAR + a));
    let sl = select(0.0, 1.0, JNT_TYPE[j] == SLIDE);
    let f_child = load * sl;
    let t_child = load * (1.0 - sl);
    let c = u32(JNT_CHILD[j]);
    fext[c] = fext[c] + f_child;
    text[c] = text[c] + t_child;
    if (JNT_PARENT[j] >= 0) {
      let p = u32(JNT_PARENT[j]);
      fext[p] = fext[p] - f_child;
      text[p] = text[p] + (-t_child - cross(s2.x - s1.x, f_child));
    }
  }
}

// semi-implicit Euler with the gyroscopic term (oracle/integrate.py; M20 Alg. 2 lines 5-9, eq. 27)
fn integrate(h: f32) {
  let g = p3(OFF_GRAVITY);
  for (var b = 0u; b < NBODY; b++) {
    let im = p1(OFF_BODY_INV_MASS + b);
    let ii = p3(OFF_BODY_INV_INERTIA + 3u * b);
    let acc = g * select(0.0, 1.0, im > 0.0) + fext[b] * im;
    let v = bv[b] + acc * h;
    bx[b] = bx[b] + v * h;
    let wb = inv_rotate(bq[b], bw[b]);
    let inertia = select(vec3<f32>(0.0), 1.0 / select(ii, vec3<f32>(1.0), ii <= vec3<f32>(0.0)), ii > vec3<f32>(0.0));
    let tau = -cross(wb, wb * inertia) + inv_rotate(bq[b], text[b]);
    let w = rotate(bq[b], wb + tau * ii * h);
    bq[b] = add_rotation(bq[b], w * h);
    bv[b] = v;
    bw[b] = w;
    bd[b] = v * h;
    bth[b] = w * h;
  }
}

// one Jacobi iteration (oracle/solve.py solve): every joint from the same snapshot, then the per-body average
fn solve(h: f32) {
  for (var k = 0u; k < NJOINT; k++) {
    let j = JOINT_ORDER[k];  // registry order, then joint index
    let s1 = split_side(JNT_PARENT[j]);
    let s2 = split_side(JNT_CHILD[j]);
    let t = JNT_TYPE[j];
    var c: Correction;
    if (t == BALL) { c = ball(j, s1, s2, h); }
    else if (t == HINGE) { c = hinge(j, s1, s2, h); }
    else if (t == FIXED) { c = fixed(j, s1, s2, h); }
    else if (t == DISTANCE) { c = distance(j, s1, s2, h); }
    else { c = slide(j, s1, s2, h); }
    jc[j] = c;
  }
  for (var b = 0u; b < NBODY; b++) {
    // parent sides in joint order, then child sides (oracle/solve.py body_sum)
    var dx = vec3<f32>(0.0);
    var dth = vec3<f32>(0.0);
    for (var k = 0u; k < NJOINT; k++) {
      let j = JOINT_ORDER[k];
      if (JNT_PARENT[j] == i32(b)) { dx = dx + jc[j].dx1; dth = dth + jc[j].dth1; }
    }
    for (var k = 0u; k < NJOINT; k++) {
      let j = JOINT_ORDER[k];
      if (JNT_CHILD[j] == i32(b)) { dx = dx + jc[j].dx2; dth = dth + jc[j].dth2; }
    }
    let scale = RELAXATION / max(COUNTS[b], 1.0);
    dx = dx * scale;
    dth = dth * scale;
    bx[b] = bx[b] + dx;
    bq[b] = add_rotation(bq[b], dth);
    bd[b] = bd[b] + dx;
    bth[b] = bth[b] + dth;
  }
}

// v = D/h, w = TH/h (oracle/velocity.py recover; M20 Alg. 2 lines 13-15)
fn recover(h: f32) {
  for (var b = 0u; b < NBODY; b++) { bv[b] = bd[b] / h; bw[b] = bth[b] / h; }
}

fn body_vec_v(b: i32) -> vec3<f32> { if (b < 0) { return vec3<f32>(0.0); } return bv[u32(b)]; }
fn body_vec_w(b: i32) -> vec3<f32> { if (b < 0) { return vec3<f32>(0.0); } return bw[u32(b)]; }

// joint damping and velocity drives as implicit impulses (oracle/velocity.py joint_damping; M20 eq. 36)
fn joint_damping(h: f32) {
  for (var k = 0u; k < NJOINT; k++) {
    let j = JOINT_ORDER[k];  // distance joints carry no damping
    let t = JNT_TYPE[j];
    if (t == DISTANCE) { jc[j] = zero_corr(); continue; }
    let s1 = split_side(JNT_PARENT[j]);
    let s2 = split_side(JNT_CHILD[j]);
    var coef = p1(OFF_JNT_DAMPING + j);
    var goal = 0.0;
    let a = rotate(s1.q, jv(OFF_JNT_AXIS_PARENT, j));
    if (t == HINGE) {
      coef = coef + act_p(OFF_ACT_KV, JNT_POS_SERVO[j]) + act_p(OFF_ACT_KV, JNT_VEL_SERVO[j]);
      goal = act_ctrl(JNT_VEL_SERVO[j]);
    }
    var rel: vec3<f32>;
    if (t == SLIDE) { rel = a * dot(body_vec_v(JNT_CHILD[j]) - body_vec_v(JNT_PARENT[j]), a); }
    else {
      rel = body_vec_w(JNT_CHILD[j]) - body_vec_w(JNT_PARENT[j]);
      if (t == HINGE) { rel = a * (dot(rel, a) - goal); }
    }
    let nd = norm_dir(rel, 1e-12);
    var wgen: f32;
    if (t == SLIDE) { wgen = s1.im + s2.im; } else { wgen = inv_inertia_along(s1, nd.dir) + inv_inertia_along(s2, nd.dir); }
    let impulse = select(0.0, nd.len * min(coef * h, 1.0 / (wgen + 1e-30)), nd.on);
    let p = nd.dir * impulse;
    if (t == SLIDE) { jc[j] = Correction(p * s1.im, vec3<f32>(0.0), -(p * s2.im), vec3<f32>(0.0)); }
    else { jc[j] = Correction(vec3<f32>(0.0), world_inv_inertia(s1, p), vec3<f32>(0.0), -world_inv_inertia(s2, p)); }
  }
  for (var b = 0u; b < NBODY; b++) {
    var dv = vec3<f32>(0.0);
    var dw = vec3<f32>(0.0);
    for (var k = 0u; k < NJOINT; k++) {
      let j = JOINT_ORDER[k];
      if (JNT_PARENT[j] == i32(b)) { dv = dv + jc[j].dx1; dw = dw + jc[j].dth1; }
    }
    for (var k = 0u; k < NJOINT; k++) {
      let j = JOINT_ORDER[k];
      if (JNT_CHILD[j] == i32(b)) { dv = dv + jc[j].dx2; dw = dw + jc[j].dth2; }
    }
    let scale = 1.0 / max(COUNTS[b], 1.0);
    bv[b] = bv[b] + dv * scale;
    bw[b] = bw[b] + dw * scale;
  }
}

// one XPBD substep (oracle/step.py substep)
fn substep(h: f32) {
  motor_loads();
  integrate(h);
  for (var i = 0u; i < NLAM_ARR; i++) { lam[i] = 0.0; }
  for (var it = 0u; it < ITERATIONS; it++) { if (NJOINT > 0u) { solve(h); } }
  recover(h);
  if (DAMPING) { joint_damping(h); }
}

@compute @workgroup_size(WORKGROUP)
fn xpbd_step(@builtin(global_invocation_id) gid: vec3<u32>) {
  let e = gid.x;
  if (e >= BATCH) { return; }
  mb = select(0u, e, MODEL_BATCHED) * NPARAM;
  cb = e * NCTRL;
  let base = e * NBODY * 13u;
  for (var b = 0u; b < NBODY; b++) {
    let o = base + 13u * b;
    bx[b] = vec3<f32>(inp[o], inp[o + 1u], inp[o + 2u]);
    bq[b] = Quat(inp[o + 3u], vec3<f32>(inp[o + 4u], inp[o + 5u], inp[o + 6u]));
    bv[b] = vec3<f32>(inp[o + 7u], inp[o + 8u], inp[o + 9u]);
    bw[b] = vec3<f32>(inp[o + 10u], inp[o + 11u], inp[o + 12u]);
  }
  for (var s = 0u; s < NSTEPS * SUBSTEPS; s++) { substep(H); }
  for (var b = 0u; b < NBODY; b++) {
    let o = base + 13u * b;
    outp[o] = bx[b].x; outp[o + 1u] = bx[b].y; outp[o + 2u] = bx[b].z;
    outp[o + 3u] = bq[b].w; outp[o + 4u] = bq[b].v.x; outp[o + 5u] = bq[b].v.y; outp[o + 6u] = bq[b].v.z;
    outp[o + 7u] = bv[b].x; outp[o + 8u] = bv[b].y; outp[o + 9u] = bv[b].z;
    outp[o + 10u] = bw[b].x; outp[o + 11u] = bw[b].y; outp[o + 12u] = bw[b].z;
  }
}
