// The XPBD step (M20 Alg. 2) as one WGSL kernel: each env loops over steps, substeps and Jacobi iterations, on LANES
// invocations (engine/wgsl.py picks LANES: kernels/program.py default_lanes). LANES == 1: one invocation per env,
// WORKGROUP envs per workgroup. LANES > 1: one workgroup per env, its lanes sharing each stage's items (bodies,
// joints, pairs, contact slots: item i on lane i % LANES, the same lane every iteration, so a joint's or a slot's
// multipliers never move between lanes) with a barrier() wherever a stage reads what another lane wrote. Per-body
// sums run on the body's lane in the oracle's order, so results do not depend on LANES.
// Functions carry the oracle's stage and constraint names (oracle/step.py STAGES, oracle/constraints/) and mirror
// them line by line; read the two side by side. Joints are in kernels/joints.wgsl, contacts in
// kernels/contacts.wgsl, the pair functions in kernels/narrowphase.wgsl and kernels/box.wgsl, vectors and
// quaternions in kernels/math3.wgsl; kernels/program.py concatenates them behind a header with the scene's
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

// the working state of this env's bodies (oracle/packed.py: the 19-wide substep state). `var<env>` is not WGSL:
// kernels/program.py makes it var<private> when LANES == 1 and var<workgroup> (shared by the env's lanes) otherwise
var<env> bx: array<vec3<f32>, NBODY_ARR>;
var<env> bq: array<Quat, NBODY_ARR>;
var<env> bv: array<vec3<f32>, NBODY_ARR>;
var<env> bw: array<vec3<f32>, NBODY_ARR>;
var<env> bd: array<vec3<f32>, NBODY_ARR>;   // displacement D since the substep began
var<env> bth: array<vec3<f32>, NBODY_ARR>;  // rotation vector TH since the substep began
var<env> fext: array<vec3<f32>, NBODY_ARR>; // motor force [N] and torque [N m], world frame
var<env> text: array<vec3<f32>, NBODY_ARR>;
var<env> jc: array<Correction, NJOINT_ARR>; // this iteration's correction of each joint
var<env> lam: array<f32, NLAM_ARR>;         // XPBD multipliers, LAMW per joint
// contacts (oracle/contacts.py): per pair slot its two model geoms (-1: empty), per contact slot its narrowphase row
// and this substep's solve result; slots are laid out block by block, pair by pair, as the oracle's plan. They live
// in this env's rows of the scratch buffer `scr`, and the scene's static tables in `tab`, not in private arrays:
// lavapipe lowers a dynamically indexed private array to a compare-and-select over every element, so compile time
// grew with the slot count (2.7 s at 8 slots, 24 s at 64, over 10 minutes at stack10's 260).
// scr row: [pair geoms 2 NPAIR (as floats: -1 stored as bits would be a NaN, which a float store may change) | per slot SLOT_W: valid, n 3, ra 3, rb 3, friction, restitution,
//           approach, correction 12, (lambda_n, lambda_t, touching) | per broadphase candidate: overlap flag |
//           pairs dropped (OVF)]
var<private> sb: u32;                            // this env's row of scr
var<private> overflow: u32;                      // candidate pairs beyond their capacity, this step (lane 0)
var<private> mb: u32;                           // this env's row of prm
var<private> cb: u32;                           // this env's row of ctrl
var<private> lane: u32;                         // this invocation's lane in its env, 0 .. LANES - 1
// env_index(gid, wid) and barrier() come from the header: with LANES == 1 the env is gid.x and barrier() does
// nothing; with LANES > 1 the env is the workgroup, uniform across its lanes, as WGSL's uniformity analysis requires
// of every control path that reaches a barrier

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
  if (b >= 0) { let n = max(COUNTS[u32(b)], 1.0); s.im = s.im * n; s.ii = s.ii * n; }
  return s;
}
fn apply_side(s: Side, dx: vec3<f32>, dth: vec3<f32>) -> Side { return Side(s.x + dx, add_rotation(s.q, dth), s.im, s.ii); }

// per body b, the sum of the joint corrections jc touching it: parent sides in joint order, then child sides
// (oracle/solve.py body_sum); [dx | dth] (or [dv | dw] in the velocity pass)
fn joint_sum(b: u32) -> array<vec3<f32>, 2> {
  var out = array<vec3<f32>, 2>(vec3<f32>(0.0), vec3<f32>(0.0));
  for (var k = 0u; k < NJOINT; k++) {
    let j = JOINT_ORDER[k];
    if (JNT_PARENT[j] == i32(b)) { out[0] = out[0] + jc[j].dx1; out[1] = out[1] + jc[j].dth1; }
  }
  for (var k = 0u; k < NJOINT; k++) {
    let j = JOINT_ORDER[k];
    if (JNT_CHILD[j] == i32(b)) { out[0] = out[0] + jc[j].dx2; out[1] = out[1] + jc[j].dth2; }
  }
  return out;
}

// --- stages (oracle/step.py STAGES) ---

// oracle/actuators.py motor_loads: hinge motors turn the child by +tau, the parent by -tau; slide motors push.
// Per body on its lane, its motors' loads added in motor order (the oracle's scatter order): no two lanes write a body
fn motor_loads() {
  for (var b = lane; b < NBODY; b += LANES) {
    var f = vec3<f32>(0.0);
    var t = vec3<f32>(0.0);
    for (var k = 0u; k < NMOTOR; k++) {
      let a = MOTORS[k];
      let j = u32(ACT_JOINT[a]);
      let child = JNT_CHILD[j] == i32(b);
      if (!child && JNT_PARENT[j] != i32(b)) { continue; }
      let s1 = gather_side(JNT_PARENT[j]);
      let s2 = gather_side(JNT_CHILD[j]);
      let load = rotate(s1.q, jv(OFF_JNT_AXIS_PARENT, j)) * (act_ctrl(i32(a)) * p1(OFF_ACT_GEAR + a));
      let sl = select(0.0, 1.0, JNT_TYPE[j] == SLIDE);
      let f_child = load * sl;
      let t_child = load * (1.0 - sl);
      if (child) { f = f + f_child; t = t + t_child; }
      else { f = f - f_child; t = t + (-t_child - cross(s2.x - s1.x, f_child)); }
    }
    fext[b] = f;
    text[b] = t;
  }
}

// semi-implicit Euler with the gyroscopic term (oracle/integrate.py; M20 Alg. 2 lines 5-9, eq. 27)
fn integrate(h: f32) {
  let g = p3(OFF_GRAVITY);
  for (var b = lane; b < NBODY; b += LANES) {
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
  for (var k = lane; k < NJOINT; k += LANES) {
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
  for (var i = lane; i < NSLOT; i += LANES) { if (slot_live(i)) { contact(i); } }
  barrier();   // every correction written, and no lane still reads the snapshot that the update below overwrites
  for (var b = lane; b < NBODY; b += LANES) {
    // the joints' sums, then the contacts' (oracle/solve.py body_sum + contact_sum)
    let js = joint_sum(b);
    var dx = js[0];
    var dth = js[1];
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
  for (var b = lane; b < NBODY; b += LANES) { bv[b] = bd[b] / h; bw[b] = bth[b] / h; }
}


// joint damping and velocity drives as implicit impulses (oracle/velocity.py joint_damping; M20 eq. 36)
fn joint_damping(h: f32) {
  for (var k = lane; k < NJOINT; k += LANES) {
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
  barrier();   // every impulse written, and every joint's read of the velocities done
  for (var b = lane; b < NBODY; b += LANES) {
    let js = joint_sum(b);
    let scale = 1.0 / max(COUNTS[b], 1.0);
    bv[b] = bv[b] + js[0] * scale;
    bw[b] = bw[b] + js[1] * scale;
  }
}

// one XPBD substep (oracle/step.py substep). A barrier after each stage whose results other lanes read, or whose
// inputs the next stage overwrites (motor_loads reads the poses that integrate moves)
fn substep(h: f32) {
  motor_loads();
  barrier();
  integrate(h);
  barrier();
  if (NSLOT > 0u) { narrowphase(); }
  for (var i = lane; i < NLAM_ARR; i += LANES) { lam[i] = 0.0; }
  for (var i = lane; i < NSLOT; i += LANES) { sv3(sl(i) + 25u, vec3<f32>(0.0)); }
  barrier();
  for (var it = 0u; it < ITERATIONS; it++) { if (NJOINT + NSLOT > 0u) { solve(h); barrier(); } }
  recover(h);
  barrier();
  if (NSLOT > 0u) { contact_velocity(h); barrier(); }
  if (DAMPING) { joint_damping(h); barrier(); }
}

@compute @workgroup_size(WORKGROUP)
fn xpbd_step(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>,
             @builtin(local_invocation_id) lid: vec3<u32>) {
  let e = env_index(gid, wid);
  if (e >= BATCH) { return; }
  lane = lid.x % LANES;
  sb = e * SCR;
  mb = select(0u, e, MODEL_BATCHED) * NPARAM;
  cb = e * NCTRL;
  let base = e * NBODY * 13u;
  for (var b = lane; b < NBODY; b += LANES) {
    let o = base + 13u * b;
    bx[b] = vec3<f32>(inp[o], inp[o + 1u], inp[o + 2u]);
    bq[b] = Quat(inp[o + 3u], vec3<f32>(inp[o + 4u], inp[o + 5u], inp[o + 6u]));
    bv[b] = vec3<f32>(inp[o + 7u], inp[o + 8u], inp[o + 9u]);
    bw[b] = vec3<f32>(inp[o + 10u], inp[o + 11u], inp[o + 12u]);
  }
  barrier();
  var dropped = 0u;   // candidate pairs beyond their block's capacity, summed over the launch's steps (lane 0)
  for (var k = 0u; k < NSTEPS; k++) {
    if (NSLOT > 0u) { broadphase(); barrier(); dropped = dropped + overflow; }   // once per step (M20 sec. 3.5)
    for (var s = 0u; s < SUBSTEPS; s++) { substep(H); }
  }
  if (lane == 0u) { scr[sb + OVF] = f32(dropped); }   // read back as State.contact_overflow (engine/wgsl.py)
  for (var b = lane; b < NBODY; b += LANES) {
    let o = base + 13u * b;
    outp[o] = bx[b].x; outp[o + 1u] = bx[b].y; outp[o + 2u] = bx[b].z;
    outp[o + 3u] = bq[b].w; outp[o + 4u] = bq[b].v.x; outp[o + 5u] = bq[b].v.y; outp[o + 6u] = bq[b].v.z;
    outp[o + 7u] = bv[b].x; outp[o + 8u] = bv[b].y; outp[o + 9u] = bv[b].z;
    outp[o + 10u] = bw[b].x; outp[o + 11u] = bw[b].y; outp[o + 12u] = bw[b].z;
  }
}
