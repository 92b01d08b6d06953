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
//   tab   (NTAB,) i32     the scene's static contact tables (kernels/program.py contact_tables)
//   scr   (B, SCR)        per-env scratch: the contact plan and slots (written and read by the kernel only)

@group(0) @binding(0) var<uniform> INFINITY : f32;
@group(0) @binding(1) var<storage, read_write> outp : array<f32>;
@group(0) @binding(2) var<storage, read_write> inp : array<f32>;
@group(0) @binding(3) var<storage, read_write> prm : array<f32>;
@group(0) @binding(4) var<storage, read_write> ctrl : array<f32>;
@group(0) @binding(5) var<storage, read_write> tab : array<i32>;
@group(0) @binding(6) var<storage, read_write> scr : array<f32>;

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
// contacts (oracle/contacts.py): per pair slot its two model geoms (-1: empty), per contact slot its narrowphase row
// and this substep's solve result; slots are laid out block by block, pair by pair, as the oracle's plan. They live
// in this env's rows of the scratch buffer `scr`, and the scene's static tables in `tab`, not in private arrays:
// lavapipe lowers a dynamically indexed private array to a compare-and-select over every element, so compile time
// grew with the slot count (2.7 s at 8 slots, 24 s at 64, over 10 minutes at stack10's 260).
// scr row: [pair geoms 2 NPAIR (as floats: -1 stored as bits would be a NaN, which a float store may change) | per slot SLOT_W: valid, n 3, ra 3, rb 3, friction, restitution,
//           approach, correction 12, (lambda_n, lambda_t, touching)]
var<private> sb: u32;                            // this env's row of scr
var<private> overflow: u32;                      // candidate pairs beyond their capacity, this step
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



// --- scratch and table access ---
fn sl(i: u32) -> u32 { return sb + 2u * NPAIR + SLOT_W * i; }
fn lv3(o: u32) -> vec3<f32> { return vec3<f32>(scr[o], scr[o + 1u], scr[o + 2u]); }
fn sv3(o: u32, v: vec3<f32>) { scr[o] = v.x; scr[o + 1u] = v.y; scr[o + 2u] = v.z; }
fn pair_geoms(p: u32) -> vec2<i32> { return vec2<i32>(i32(scr[sb + 2u * p]), i32(scr[sb + 2u * p + 1u])); }
fn set_pair(p: u32, g: vec2<i32>) { scr[sb + 2u * p] = f32(g.x); scr[sb + 2u * p + 1u] = f32(g.y); }
fn slot_corr(i: u32) -> Correction { let o = sl(i) + 13u; return Correction(lv3(o), lv3(o + 3u), lv3(o + 6u), lv3(o + 9u)); }
fn set_slot_corr(i: u32, c: Correction) { let o = sl(i) + 13u; sv3(o, c.dx1); sv3(o + 3u, c.dth1); sv3(o + 6u, c.dx2); sv3(o + 9u, c.dth2); }
fn geom_body(g: u32) -> i32 { return tab[T_GEOM_BODY + g]; }

// --- contacts (oracle/broadphase.py, oracle/contacts.py, oracle/constraints/contact.py, oracle/velocity.py) ---

fn geom_body_pose(g: i32) -> Side {   // the owning body as a contact side (unsplit mass); the world for world geoms
  return gather_side(geom_body(u32(g)));
}
fn body_vel(b: i32) -> vec3<f32> { if (b < 0) { return vec3<f32>(0.0); } return bv[u32(b)]; }
fn body_angvel(b: i32) -> vec3<f32> { if (b < 0) { return vec3<f32>(0.0); } return bw[u32(b)]; }

// world AABB (lo, hi) of geom g at the step's start, grown by 2 dt (|v| + |w| rho) + margin (oracle/broadphase.py
// _extents: every shape as a box of half extents e swept by a sphere of radius r)
fn geom_aabb(g: u32) -> array<vec3<f32>, 2> {
  let b = geom_body(g);
  let s = gather_side(b);
  let gp = p3(OFF_GEOM_POS + 3u * g);
  let sz = p3(OFF_GEOM_SIZE + 3u * g);
  let centre = s.x + rotate(s.q, gp);
  let q = qmul(s.q, p4q(OFF_GEOM_QUAT + 4u * g));
  let t = u32(tab[T_GEOM_TYPE + g]);
  let round_ = select(0.0, 1.0, t == SPHERE_G || t == CAPSULE_G);
  let box = select(0.0, 1.0, t == BOX_G);
  let cap = select(0.0, 1.0, t == CAPSULE_G);
  let r = sz.x * round_;
  let e = vec3<f32>(sz.x * box, sz.y * box, sz.z * box + sz.y * cap);
  let w = q.w; let x = q.v.x; let y = q.v.y; let z = q.v.z;
  let c0 = vec3<f32>(1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y + w * z), 2.0 * (x * z - w * y));
  let c1 = vec3<f32>(2.0 * (x * y - w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z + w * x));
  let c2 = vec3<f32>(2.0 * (x * z + w * y), 2.0 * (y * z - w * x), 1.0 - 2.0 * (x * x + y * y));
  let half = r + abs(c0) * e.x + abs(c1) * e.y + abs(c2) * e.z;
  let rho = r + sqrt(dot(e, e)) + sqrt(dot(gp, gp));
  let v = body_vel(b);
  let om = body_angvel(b);
  let grow = 2.0 * DT * (sqrt(dot(v, v)) + sqrt(dot(om, om)) * rho) + MARGIN;
  return array<vec3<f32>, 2>(centre - (half + grow), centre + (half + grow));
}

// candidate pairs for this step. The oracle's spatial hash returns, without overflow, exactly the pairs whose grown
// AABBs overlap, in a canonical (column 0, column 1) order per type pair; one invocation per env tests the static
// candidate list (rules already applied: different bodies, not excluded, i < j) in that order, O(G^2) per env
fn broadphase() {
  overflow = 0u;
  for (var p = 0u; p < NPAIR; p++) { set_pair(p, vec2<i32>(-1, -1)); }
  for (var p = 0u; p < NPLANE_PAIR; p++) { set_pair(p, vec2<i32>(tab[T_PLANE_PAIRS + 2u * p], tab[T_PLANE_PAIRS + 2u * p + 1u])); }
  var count = array<u32, NBLOCK_ARR>();
  for (var k = 0u; k < NCAND; k++) {
    let c = vec3<i32>(tab[T_CANDIDATES + 3u * k], tab[T_CANDIDATES + 3u * k + 1u], tab[T_CANDIDATES + 3u * k + 2u]);  // (geom a, geom b, block)
    let ba = geom_aabb(u32(c.x));
    let bb = geom_aabb(u32(c.y));
    if (all(ba[0] <= bb[1]) && all(bb[0] <= ba[1])) {
      let t = u32(c.z);
      if (count[t] < u32(tab[T_BLOCK_CAP + t])) { set_pair(u32(tab[T_BLOCK_PAIR0 + t]) + count[t], c.xy); count[t] = count[t] + 1u; }
      else { overflow = overflow + 1u; }
    }
  }
}

fn geom_of(g: i32, s: Side) -> Geom {
  let u = u32(g);
  return Geom(s.x + rotate(s.q, p3(OFF_GEOM_POS + 3u * u)), qmul(s.q, p4q(OFF_GEOM_QUAT + 4u * u)),
              p3(OFF_GEOM_SIZE + 3u * u));
}

fn pair_contacts(kind: u32, a: Geom, b: Geom) {
  switch kind {
    case 0u: { plane_sphere(a, b); }
    case 1u: { plane_capsule(a, b); }
    case 2u: { plane_box(a, b); }
    case 3u: { sphere_sphere(a, b); }
    case 4u: { sphere_capsule(a, b); }
    case 5u: { capsule_capsule(a, b); }
    case 6u: { sphere_box(a, b); }
    case 7u: { capsule_box(a, b); }
    default: { box_box(a, b); }
  }
}

// contacts of every candidate pair at the substep's predicted poses, stored in the bodies' frames (oracle/contacts.py
// narrowphase): [valid | n | ra | rb | friction | restitution | approach speed]
fn narrowphase() {
  for (var p = 0u; p < NPAIR; p++) {
    let ga = pair_geoms(p).x;
    let gb = pair_geoms(p).y;
    let pvalid = ga >= 0;
    let sa = geom_body_pose(max(ga, 0));
    let sb = geom_body_pose(max(gb, 0));
    var xa = vec3<f32>(0.0); var qa = Quat(1.0, vec3<f32>(0.0)); var xb = xa; var qb = qa;
    var va = xa; var wa = xa; var vb = xa; var wb = xa;
    var fric = 0.0; var rest = 0.0;
    if (pvalid) {   // an empty slot reads as the world on both sides: finite zeros, never valid
      xa = sa.x; qa = sa.q; xb = sb.x; qb = sb.q;
      let ba = geom_body(u32(ga));
      let bb = geom_body(u32(gb));
      va = body_vel(ba); wa = body_angvel(ba); vb = body_vel(bb); wb = body_angvel(bb);
      fric = max(p1(OFF_GEOM_FRICTION + u32(ga)), p1(OFF_GEOM_FRICTION + u32(gb)));
      rest = max(p1(OFF_GEOM_RESTITUTION + u32(ga)), p1(OFF_GEOM_RESTITUTION + u32(gb)));
      pair_contacts(u32(tab[T_PAIR_KIND + p]), geom_of(ga, Side(xa, qa, 0.0, vec3<f32>(0.0))), geom_of(gb, Side(xb, qb, 0.0, vec3<f32>(0.0))));
    }
    for (var k = 0u; k < u32(tab[T_PAIR_SLOTS + p]); k++) {
      let i = u32(tab[T_PAIR_SLOT0 + p]) + k;
      let c = nc[k];
      let oa = c.pa - xa;
      let ob = c.pb - xb;
      let vrel = (va + cross(wa, oa)) - (vb + cross(wb, ob));
      scr[sl(i)] = select(0.0, 1.0, c.valid && pvalid);
      sv3(sl(i) + 1u, c.n);
      sv3(sl(i) + 4u, inv_rotate(qa, oa));
      sv3(sl(i) + 7u, inv_rotate(qb, ob));
      scr[sl(i) + 10u] = fric;
      scr[sl(i) + 11u] = rest;
      scr[sl(i) + 12u] = dot(vrel, c.n);
      if (!pvalid) { scr[sl(i)] = 0.0; sv3(sl(i) + 1u, vec3<f32>(0.0)); sv3(sl(i) + 4u, vec3<f32>(0.0)); sv3(sl(i) + 7u, vec3<f32>(0.0)); scr[sl(i) + 12u] = 0.0; }
    }
  }
}

fn slot_side(i: u32, s: u32) -> Side {   // body side s (0: a, 1: b) of contact slot i, unsplit, from the snapshot
  let p = u32(tab[T_SLOT_PAIR + i]);
  let g = select(pair_geoms(p).y, pair_geoms(p).x, s == 0u);
  if (g < 0) { return gather_side(-1); }
  return gather_side(geom_body(u32(g)));
}
fn slot_body(i: u32, s: u32) -> i32 {
  let p = u32(tab[T_SLOT_PAIR + i]);
  let g = select(pair_geoms(p).y, pair_geoms(p).x, s == 0u);
  if (g < 0) { return -1; }
  return geom_body(u32(g));
}
fn body_disp(b: i32) -> vec3<f32> { if (b < 0) { return vec3<f32>(0.0); } return bd[u32(b)]; }
fn body_rot(b: i32) -> vec3<f32> { if (b < 0) { return vec3<f32>(0.0); } return bth[u32(b)]; }

// remove err along n at the points: impulse -P n on a, +P n on b (M20 eqs. 2-4, alpha~ = 0); returns P in .w
struct Push { c: Correction, mag: f32 }
fn push(s1: Side, s2: Side, oa: vec3<f32>, ob: vec3<f32>, n: vec3<f32>, err: f32, on: bool) -> Push {
  let w = inv_mass_at(s1, oa, n) + inv_mass_at(s2, ob, n);
  let mag = select(0.0, err / (w + 1e-30), on);
  let p = n * mag;
  return Push(Correction(-(p * s1.im), -world_inv_inertia(s1, cross(oa, p)), p * s2.im, world_inv_inertia(s2, cross(ob, p))), mag);
}

// normal then static friction of contact slot i from the Jacobi snapshot (M20 sec. 3.5); slot lambdas hold the
// multipliers of the previous iteration (zero at a substep's first)
fn contact(i: u32) {
  let s1 = slot_side(i, 0u);
  let s2 = slot_side(i, 1u);
  let n = lv3(sl(i) + 1u);
  let oa = rotate(s1.q, lv3(sl(i) + 4u));
  let ob = rotate(s2.q, lv3(sl(i) + 7u));
  let d = dot((s1.x + oa) - (s2.x + ob), n);
  let valid = scr[sl(i)] > 0.0;
  let touching = valid && d > 0.0;
  var err = d;
  var on = touching;
  if (CONTACT_BETA > 0.0) { err = max(d, 0.0) + log(exp(-(abs(d) * CONTACT_BETA)) + 1.0) / CONTACT_BETA; on = valid; }
  let normal = push(s1, s2, oa, ob, n, err, on);
  let lam_n = scr[sl(i) + 25u] + normal.mag;
  let ba = slot_body(i, 0u);
  let bb = slot_body(i, 1u);
  let dp = (body_disp(ba) + cross(body_rot(ba), oa)) - (body_disp(bb) + cross(body_rot(bb), ob));
  let dpt = dp - n * dot(dp, n);
  let slip = norm_dir(dpt, EPS);
  let w = inv_mass_at(s1, oa, slip.dir) + inv_mass_at(s2, ob, slip.dir);
  let pt = slip.len / (w + 1e-30);
  let stick = on && slip.on && ((scr[sl(i) + 25u + 1u] + pt) < scr[sl(i) + 10u] * lam_n);
  let fr = push(s1, s2, oa, ob, slip.dir, slip.len, stick);
  set_slot_corr(i, chain2(normal.c, fr.c));
  sv3(sl(i) + 25u, vec3<f32>(lam_n, scr[sl(i) + 25u + 1u] + fr.mag, select(0.0, 1.0, touching)));
}

// per body: the contact sides touching it, summed in slot order (a side, then b side), and their count
fn contact_sum_add(b: i32, dx: ptr<function, vec3<f32>>, dth: ptr<function, vec3<f32>>) -> f32 {
  var n = 0.0;
  for (var i = 0u; i < NSLOT; i++) {
    if (slot_body(i, 0u) == b) { *dx = *dx + slot_corr(i).dx1; *dth = *dth + slot_corr(i).dth1; n = n + scr[sl(i) + 25u + 2u]; }
    if (slot_body(i, 1u) == b) { *dx = *dx + slot_corr(i).dx2; *dth = *dth + slot_corr(i).dth2; n = n + scr[sl(i) + 25u + 2u]; }
  }
  return n;
}

// dynamic friction and restitution of every contact that touched in the position solve (M20 sec. 3.6, eqs. 30-35)
fn contact_velocity(h: f32) {
  let g = p3(OFF_GRAVITY);
  for (var i = 0u; i < NSLOT; i++) {
    let s1 = slot_side(i, 0u);
    let s2 = slot_side(i, 1u);
    let ba = slot_body(i, 0u);
    let bb = slot_body(i, 1u);
    let n = lv3(sl(i) + 1u);
    let oa = rotate(s1.q, lv3(sl(i) + 4u));
    let ob = rotate(s2.q, lv3(sl(i) + 7u));
    let vrel = (body_vel(ba) + cross(body_angvel(ba), oa)) - (body_vel(bb) + cross(body_angvel(bb), ob));
    let u = dot(vrel, n);
    let st = norm_dir(vrel - n * u, 1e-9);
    let wt = inv_mass_at(s1, oa, st.dir) + inv_mass_at(s2, ob, st.dir);
    let friction = min(scr[sl(i) + 10u] * scr[sl(i) + 25u] * wt / h, st.len);
    let u0 = scr[sl(i) + 12u];
    let e = select(0.0, scr[sl(i) + 11u], abs(u0) > 2.0 * sqrt(dot(g, g)) * h);
    let du = -u + min(-e * u0, 0.0);
    let dv = n * du - st.dir * select(0.0, friction, st.on);
    let dd = norm_dir(dv, 1e-12);
    let touching = scr[sl(i) + 25u + 2u] > 0.0;
    let w = inv_mass_at(s1, oa, dd.dir) + inv_mass_at(s2, ob, dd.dir);
    let p = dd.dir * select(0.0, dd.len / (w + 1e-30), touching && dd.on);
    set_slot_corr(i, Correction(p * s1.im, world_inv_inertia(s1, cross(oa, p)), -(p * s2.im), -world_inv_inertia(s2, cross(ob, p))));
  }
  for (var b = 0u; b < NBODY; b++) {
    var dv = vec3<f32>(0.0);
    var dw = vec3<f32>(0.0);
    let cnt = contact_sum_add(i32(b), &dv, &dw);
    let scale = 1.0 / max(cnt, 1.0);
    bv[b] = bv[b] + dv * scale;
    bw[b] = bw[b] + dw * scale;
  }
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

// one Jacobi iteration (oracle/solve.py solve): every joint and contact from the same snapshot, then the per-body
// average
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
  for (var i = 0u; i < NSLOT; i++) { contact(i); }
  for (var b = 0u; b < NBODY; b++) {
    // parent sides in joint order, then child sides (oracle/solve.py body_sum); then the contacts' (contact_sum)
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
    var cdx = vec3<f32>(0.0);
    var cdth = vec3<f32>(0.0);
    let touching = contact_sum_add(i32(b), &cdx, &cdth);
    dx = dx + cdx;
    dth = dth + cdth;
    let scale = RELAXATION / max(COUNTS[b] + touching, 1.0);
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
    if (t == SLIDE) { rel = a * dot(body_vel(JNT_CHILD[j]) - body_vel(JNT_PARENT[j]), a); }
    else {
      rel = body_angvel(JNT_CHILD[j]) - body_angvel(JNT_PARENT[j]);
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
  if (NSLOT > 0u) { narrowphase(); }
  for (var i = 0u; i < NLAM_ARR; i++) { lam[i] = 0.0; }
  for (var i = 0u; i < NSLOT; i++) { sv3(sl(i) + 25u, vec3<f32>(0.0)); }
  for (var it = 0u; it < ITERATIONS; it++) { if (NJOINT + NSLOT > 0u) { solve(h); } }
  recover(h);
  if (NSLOT > 0u) { contact_velocity(h); }
  if (DAMPING) { joint_damping(h); }
}

@compute @workgroup_size(WORKGROUP)
fn xpbd_step(@builtin(global_invocation_id) gid: vec3<u32>) {
  let e = gid.x;
  if (e >= BATCH) { return; }
  sb = e * SCR;
  mb = select(0u, e, MODEL_BATCHED) * NPARAM;
  cb = e * NCTRL;
  let base = e * NBODY * 13u;
  // the load and store loops take the constant bound NBODY, not NBODY + rz: with the rz bound lavapipe ran the
  // store loop once (body 0 only) in stacks of >= 8 boxes, leaving the other bodies' rows unwritten (a miscompile;
  // these loops are cheap to unroll)
  for (var b = 0u; b < NBODY; b++) {
    let o = base + 13u * b;
    bx[b] = vec3<f32>(inp[o], inp[o + 1u], inp[o + 2u]);
    bq[b] = Quat(inp[o + 3u], vec3<f32>(inp[o + 4u], inp[o + 5u], inp[o + 6u]));
    bv[b] = vec3<f32>(inp[o + 7u], inp[o + 8u], inp[o + 9u]);
    bw[b] = vec3<f32>(inp[o + 10u], inp[o + 11u], inp[o + 12u]);
  }
  for (var k = 0u; k < NSTEPS; k++) {
    if (NSLOT > 0u) { broadphase(); }   // once per step, on the step's starting state (M20 sec. 3.5)
    for (var s = 0u; s < SUBSTEPS; s++) { substep(H); }
  }
  for (var b = 0u; b < NBODY; b++) {
    let o = base + 13u * b;
    outp[o] = bx[b].x; outp[o + 1u] = bx[b].y; outp[o + 2u] = bx[b].z;
    outp[o + 3u] = bq[b].w; outp[o + 4u] = bq[b].v.x; outp[o + 5u] = bq[b].v.y; outp[o + 6u] = bq[b].v.z;
    outp[o + 7u] = bv[b].x; outp[o + 8u] = bv[b].y; outp[o + 9u] = bv[b].z;
    outp[o + 10u] = bw[b].x; outp[o + 11u] = bw[b].y; outp[o + 12u] = bw[b].z;
  }
}
