// The backward kernel (issue 17): the adjoint of one env-step of kernels/xpbd_step.wgsl, one invocation per env.
// Given the packed state at the step's start (its checkpoint) and the gradient of a loss with respect to the state
// at its end, it returns the gradients with respect to the start state, the step's controls and the env's parameter
// row (PARAMS, in the forward's buffer layout; engine/wgsl.py sums a shared row over the batch).
//
// How: a forward pass from the checkpoint records each substep's start state on the tape; then, substep by substep
// from the last, substep_adj runs the stages' adjoints in reverse (joint_damping_adj, restitution_adj,
// contact_velocity_adj, recover_adj, armature_adj after the contacts' last pass, solve_adj per Jacobi iteration,
// narrowphase_adj, integrate_adj, motor_loads_adj and armature_start_adj), each named as its forward stage and kept
// in the file of that name under kernels/adjoint/. An iteration's adjoint needs its input state and multipliers: with
// TAPE_SUBSTEPS == SUBSTEPS the first pass records them for every substep (memory), with TAPE_SUBSTEPS == 1
// substep_adj replays the substep from its start and records them again (time). kernels/tape.py tape_layout chooses.
//
// Buffers: the step kernel's (outp holds the gradients: per env [state NROWS x 13 | ctrl NCTRL | params NPARAM],
// and for a trajectory each step's control gradients after them),
// then the output gradient and the tape:
//   gout  (B, NROWS, 13)  d loss / d (state after the step), oracle/packed.py's layout (the muscles' rows last)
//   tape  (B, TAPE)       per env, the records below (kernels/tape.py tape_layout gives TAPE and the offsets); or,
//                         where TAPE_STRIDE is 0, the invocation's private array (kernels/tape.py PRIVATE_TAPE)

@group(0) @binding(7) var<storage, read_write> gout : array<f32>;
// tape: declared by kernels/program.py backward_source (kernels/tape.py tape_declaration)

// the adjoint state: d loss / d (each working-state array), per body and joint, and the env's control and parameter
// gradients, accumulated over the step; shared by the env's lanes as the working state is (var<env>)
var<env> adj_x: array<vec3<f32>, NBODY_ARR>;
var<env> adj_q: array<Quat, NBODY_ARR>;
var<env> adj_v: array<vec3<f32>, NBODY_ARR>;
var<env> adj_w: array<vec3<f32>, NBODY_ARR>;
var<env> adj_d: array<vec3<f32>, NBODY_ARR>;
var<env> adj_th: array<vec3<f32>, NBODY_ARR>;
var<env> adj_f: array<vec3<f32>, NBODY_ARR>;    // of the motor loads fext, text
var<env> adj_t: array<vec3<f32>, NBODY_ARR>;
var<env> adj_cx: array<vec3<f32>, NBODY_ARR>;   // of a body's summed correction (solve, joint_damping)
var<env> adj_cth: array<vec3<f32>, NBODY_ARR>;
var<env> adj_lam: array<f32, NLAM_ARR>;
var<env> adj_act: array<f32, NMUSCLE_ARR>;  // of the muscles' activations
var<private> go: u32;         // this env's row of outp, where the control and parameter gradients accumulate
var<private> tb: u32;        // this env's row of the tape (0: a private tape)
var<private> tape_s: u32;    // the substep being recorded
var<private> tape_it: u32;   // and its iteration

// --- parameter and control gradients, at the forward's offsets (p1, p3, p4q), summed in the env's outp row, or,
// where the row is short (GPRM_PRIVATE: kernels/lanes.py PRIVATE_PARAMS), in the private gprm, which the entry point
// writes to outp at the end: lavapipe checks the bounds of every storage access lane by lane (pendulum x4096: the
// backward 1.26x as fast). A long row stays in storage: a private array indexed by a runtime offset can lower to a
// compare-and-select over all its elements per access (stack10's backward step took 13 s that way). With LANES > 1
// each lane sums into its own row on the tape (TAPE_GPRM, controls then parameters), which the entry point adds up
// in lane order at the end: two lanes may add to one parameter (a geom's friction from two pairs) ---
var<private> gprm: array<f32, GPRM_ARR>;
fn glane(k: u32) -> u32 { return tb + TAPE_GPRM + lane * GPRM_W + k; }   // this lane's partial sum k
fn gp1(off: u32, g: f32) {
  if (LANES > 1u) { let o = glane(NCTRL + off); tape[o] = tape[o] + g; return; }
  if (GPRM_PRIVATE) { gprm[off] = gprm[off] + g; return; }
  let o = go + NROWS * PACKED_WIDTH + NCTRL + off; outp[o] = outp[o] + g;
}
var<private> gcb: u32;        // where this step's control gradients go in outp
fn gctrl(u: u32, g: f32) {
  if (LANES > 1u) { let o = glane(u); tape[o] = tape[o] + g; return; }
  let o = gcb + u; outp[o] = outp[o] + g;
}
fn gp3(off: u32, g: vec3<f32>) { gp1(off, g.x); gp1(off + 1u, g.y); gp1(off + 2u, g.z); }
fn gp4q(off: u32, g: Quat) { gp1(off, g.w); gp3(off + 1u, g.v); }
fn gjv(off: u32, j: u32, g: vec3<f32>) { gp3(off + 3u * j, g); }

// act_ctrl = min(max(ctrl, lo), hi) as tinygrad differentiates it (a tie splits the gradient in halves)
fn act_ctrl_adj(a: i32, g: f32) {
  if (a < 0) { return; }
  let u = u32(a);
  let raw = ctrl[cb + u];
  let lo = p1(OFF_ACT_CTRLRANGE + 2u * u);
  let hi = p1(OFF_ACT_CTRLRANGE + 2u * u + 1u);
  let m = max(raw, lo);
  let gm = g * select(select(0.0, 0.5, m == hi), 1.0, m < hi);
  gp1(OFF_ACT_CTRLRANGE + 2u * u + 1u, g * select(select(0.0, 0.5, m == hi), 1.0, m > hi));
  gctrl(u, gm * select(select(0.0, 0.5, raw == lo), 1.0, raw > lo));
  gp1(OFF_ACT_CTRLRANGE + 2u * u, gm * select(select(0.0, 0.5, raw == lo), 1.0, lo > raw));
}

// a Side's gradient into the body's (split_side: im and ii carry the body's joint count n; gather_side: the world
// reads constants)
fn add_side_grad(b: i32, g: SideAdj, n: f32) {
  if (b < 0) { return; }
  let u = u32(b);
  adj_x[u] = adj_x[u] + g.x;
  adj_q[u] = qadd(adj_q[u], g.q);
  gp1(OFF_BODY_INV_MASS + u, g.im * n);
  gp3(OFF_BODY_INV_INERTIA + 3u * u, g.ii * n);
}
fn split_count(b: i32) -> f32 { if (b < 0) { return 1.0; } return max(COUNTS[u32(b)], 1.0); }
fn split_side_adj(b: i32, g: SideAdj) { if (b >= 0) { add_side_grad(b, g, split_count(b)); } }
fn gather_side_adj(b: i32, g: SideAdj) { add_side_grad(b, g, 1.0); }

// --- an item's gradient into one of its bodies. The contact stages and the solve run their items (joints, contact
// slots, pairs) on the items' lanes, and two items may share a body: with LANES > 1 an item writes its share to its
// record on the tape (REC_W floats per side from TAPE_REC), and after a barrier each body's lane adds its items'
// records up in the one-lane order (add_rec: the solve's joints in JOINT_ORDER, then gather_slots; the narrowphase's
// pairs in live order), so the state's gradients do not depend on LANES but for rounding. With one
// lane the share goes to the body at once. n: the side's split count (1 for a gathered side); u, r: the stage's
// vector pair, the body's D and TH (vw = false: the solve) or v and w (vw = true: the contact velocity pass and the
// narrowphase) ---
fn rec(item: u32, side: u32) -> u32 { return tb + TAPE_REC + (2u * item + side) * REC_W; }
fn item_side(vw: bool, item: u32, side: u32, b: i32, g: SideAdj, n: f32, u: vec3<f32>, r: vec3<f32>) {
  if (LANES > 1u) {
    let o = rec(item, side);
    put3(o, g.x); tape[o + 3u] = g.q.w; put3(o + 4u, g.q.v); tape[o + 7u] = g.im * n; put3(o + 8u, g.ii * n);
    put3(o + 11u, u); put3(o + 14u, r);
    return;
  }
  if (b < 0) { return; }
  add_side_grad(b, g, n);
  add_pair(vw, u32(b), u, r);
}
fn add_pair(vw: bool, b: u32, u: vec3<f32>, r: vec3<f32>) {
  if (vw) { adj_v[b] = adj_v[b] + u; adj_w[b] = adj_w[b] + r; }
  else { adj_d[b] = adj_d[b] + u; adj_th[b] = adj_th[b] + r; }
}
fn zero_item(item: u32) {   // an item that adds nothing this time (a contact off, a slot untouched)
  if (LANES == 1u) { return; }
  for (var f = 0u; f < 2u * REC_W; f++) { tape[rec(item, 0u) + f] = 0.0; }
}
// body b's share of an item's side (b's lane, after a barrier)
fn add_rec(vw: bool, b: u32, item: u32, side: u32) {
  let o = rec(item, side);
  adj_x[b] = adj_x[b] + t3(o);
  adj_q[b] = qadd(adj_q[b], Quat(tape[o + 3u], t3(o + 4u)));
  gp1(OFF_BODY_INV_MASS + b, tape[o + 7u]);
  gp3(OFF_BODY_INV_INERTIA + 3u * b, t3(o + 8u));
  add_pair(vw, b, t3(o + 11u), t3(o + 14u));
}
// the records of the live slots (item base + i) whose sides are body b, in live order
fn gather_slots(vw: bool, b: u32, base: u32) {
  for (var k = 0u; k < n_live_slots(); k++) {
    let i = live_slot(k);
    if (slot_body(i, 0u) == i32(b)) { add_rec(vw, b, base + i, 0u); }
    if (slot_body(i, 1u) == i32(b)) { add_rec(vw, b, base + i, 1u); }
  }
}
// the records of the live pairs (item p) whose sides are body b, in live order
fn gather_pairs(vw: bool, b: u32) {
  for (var k = 0u; k < n_live_pairs(); k++) {
    let p = live_pair(k);
    let g = pair_geoms(p);
    if (geom_body(u32(g.x)) == i32(b)) { add_rec(vw, b, p, 0u); }
    if (geom_body(u32(g.y)) == i32(b)) { add_rec(vw, b, p, 1u); }
  }
}
// the gradient of a joint's Correction: its sides' summed-correction gradients (the world's: zero)
fn body_corr_grad(b: i32) -> array<vec3<f32>, 2> {
  if (b < 0) { return array<vec3<f32>, 2>(vec3<f32>(0.0), vec3<f32>(0.0)); }
  return array<vec3<f32>, 2>(adj_cx[u32(b)], adj_cth[u32(b)]);
}
fn joint_corr_grad(j: u32) -> Correction {
  let g1 = body_corr_grad(JNT_PARENT[j]);
  let g2 = body_corr_grad(JNT_CHILD[j]);
  return Correction(g1[0], g1[1], g2[0], g2[1]);
}

// --- the tape: per body 13 floats, x, q and a pair of vectors (v, w at a substep's start and before the velocity
// pass; D, TH before a Jacobi iteration), then, for an iteration, the multipliers. With LANES > 1 each lane records
// and restores what it owns, the lane the forward stages give it (a body, a muscle, a slot or a joint's multipliers
// on lane k % LANES, k its index in its loop), so that the stage after a record may change what it recorded without
// a barrier; a restore's readers on other lanes wait for the caller's barrier ---
fn t3(o: u32) -> vec3<f32> { return vec3<f32>(tape[o], tape[o + 1u], tape[o + 2u]); }
fn put3(o: u32, v: vec3<f32>) { tape[o] = v.x; tape[o + 1u] = v.y; tape[o + 2u] = v.z; }
fn put_pose(o: u32, k: u32) { put3(o, bx[k]); tape[o + 3u] = bq[k].w; put3(o + 4u, bq[k].v); }
fn get_pose(o: u32, k: u32) { bx[k] = t3(o); bq[k] = Quat(tape[o + 3u], t3(o + 4u)); }
// the state's pose and velocities (a substep's start, the velocity pass's input)
fn tape_velocities(o: u32) {
  for (var k = lane; k < NBODY; k += LANES) {
    let r = o + 13u * k;
    put_pose(r, k); put3(r + 7u, bv[k]); put3(r + 10u, bw[k]);
  }
}
fn restore_velocities(o: u32) {
  for (var k = lane; k < NBODY; k += LANES) {
    let r = o + 13u * k;
    get_pose(r, k); bv[k] = t3(r + 7u); bw[k] = t3(r + 10u);
  }
}
// an iteration's input: the pose, D and TH, the joints' multipliers, and from TAPE_CLAM the live contact slots'
// (lambda_n, lambda_t) at 2 per slot; then from TAPE_SOLVE its result per body: the averaged rotation correction and
// the scale it was averaged with (tape_solve, from solve), which solve_adj would otherwise recompute from every joint
// and contact
fn t_iteration(it: u32) -> u32 { return tb + TAPE_ITER + ((tape_s % TAPE_SUBSTEPS) * TAPE_ITERS + it) * TAPE_ITER_W; }
fn tape_iteration(it: u32) {
  tape_it = it;
  let o = t_iteration(it);
  for (var k = lane; k < NBODY; k += LANES) {
    let r = o + 13u * k;
    put_pose(r, k); put3(r + 7u, bd[k]); put3(r + 10u, bth[k]);
  }
  for (var k = lane; k < NJOINT; k += LANES) {   // a joint's multipliers on its lane (solve's joint_corrections)
    let j = JOINT_ORDER[k];
    for (var i = 0u; i < LAMW; i++) { tape[o + 13u * NBODY + LAMW * j + i] = lam[LAMW * j + i]; }
  }
  for (var k = lane; k < n_live_slots(); k += LANES) {
    let i = live_slot(k);
    tape[o + TAPE_CLAM + 2u * i] = scr[sl(i) + SLOT_LAMBDA_N];
    tape[o + TAPE_CLAM + 2u * i + 1u] = scr[sl(i) + SLOT_LAMBDA_T];
  }
}
fn tape_solve(b: u32, dth: vec3<f32>, scale: f32) {
  let o = t_iteration(tape_it) + TAPE_SOLVE + 4u * b;
  put3(o, dth);
  tape[o + 3u] = scale;
}
fn restore_iteration(it: u32) -> u32 {   // returns where the iteration's record starts on the tape
  let o = t_iteration(it);
  for (var k = lane; k < NBODY; k += LANES) {
    let r = o + 13u * k;
    get_pose(r, k); bd[k] = t3(r + 7u); bth[k] = t3(r + 10u);
  }
  for (var k = lane; k < NJOINT; k += LANES) {
    let j = JOINT_ORDER[k];
    for (var i = 0u; i < LAMW; i++) { lam[LAMW * j + i] = tape[o + 13u * NBODY + LAMW * j + i]; }
  }
  for (var k = lane; k < n_live_slots(); k += LANES) {
    let i = live_slot(k);
    scr[sl(i) + SLOT_LAMBDA_N] = tape[o + TAPE_CLAM + 2u * i];
    scr[sl(i) + SLOT_LAMBDA_T] = tape[o + TAPE_CLAM + 2u * i + 1u];
  }
  return o;
}
fn t_damping() -> u32 { return tb + TAPE_DAMP + (tape_s % TAPE_SUBSTEPS) * 13u * NBODY; }
fn tape_damping() { tape_velocities(t_damping()); }
fn t_contact_velocity() -> u32 { return tb + TAPE_CVEL + (tape_s % TAPE_SUBSTEPS) * 13u * NBODY; }
fn tape_contact_velocity() { tape_velocities(t_contact_velocity()); }
// the armature stage's input: the pose, D, TH, and the velocities integrate predicted (x~ = x + h v)
fn t_armature() -> u32 { return tb + TAPE_ARM + (tape_s % TAPE_SUBSTEPS) * 19u * NBODY; }
fn tape_armature() {
  let o = t_armature();
  for (var k = lane; k < NBODY; k += LANES) {
    let r = o + 19u * k;
    put_pose(r, k); put3(r + 7u, bd[k]); put3(r + 10u, bth[k]); put3(r + 13u, bv[k]); put3(r + 16u, bw[k]);
  }
  barrier();
}
fn restore_armature() {
  let o = t_armature();
  for (var k = lane; k < NBODY; k += LANES) {
    let r = o + 19u * k;
    get_pose(r, k); bd[k] = t3(r + 7u); bth[k] = t3(r + 10u); bv[k] = t3(r + 13u); bw[k] = t3(r + 16u);
  }
}
// a substep's start: the bodies' state and the muscles' activations (TAPE_STATE_W floats)
fn t_substep(s: u32) -> u32 { return tb + TAPE_STATE_W * s; }
fn tape_start(o: u32) {
  tape_velocities(o);
  for (var k = lane; k < NMUSCLE; k += LANES) { tape[o + 13u * NBODY + k] = mact[k]; }
}
fn restore_start(o: u32) {
  restore_velocities(o);
  for (var k = lane; k < NMUSCLE; k += LANES) { mact[k] = tape[o + 13u * NBODY + k]; }
}
// store mode: the live contact slots' rows as substep s left them (the replay recomputes them)
fn t_slot(s: u32, i: u32) -> u32 { return tb + TAPE_SLOTS + (s * NSLOT + i) * SLOT_W; }
fn tape_slots(s: u32) {
  for (var k = lane; k < n_live_slots(); k += LANES) {
    let i = live_slot(k);
    for (var f = 0u; f < SLOT_W; f++) { tape[t_slot(s, i) + f] = scr[sl(i) + f]; }
  }
}
fn restore_slots(s: u32) {
  for (var k = lane; k < n_live_slots(); k += LANES) {
    let i = live_slot(k);
    for (var f = 0u; f < SLOT_W; f++) { scr[sl(i) + f] = tape[t_slot(s, i) + f]; }
  }
}

// the adjoint of substep s, from the adjoint state at its end to the one at its start. The contact slots' rows and
// final multipliers are the substep's, in scr: replayed, or restored from the tape in store mode. With LANES > 1 the
// stages whose items share bodies (the solve, the contact velocity pass, the narrowphase) run on the items' lanes and
// gather per body, integrate and recover per body, and the rest (the muscles, joint damping, the armature stage and
// the motor loads: one item per joint or muscle, few) on lane 0 alone (serial), each followed by a barrier
fn serial() -> bool { return lane == 0u; }
fn substep_adj(s: u32, h: f32) {
  tape_s = s;
  if (TAPE_SUBSTEPS == 1u) { restore_start(t_substep(s)); barrier(); substep(h); }   // records the iterations again
  else if (NSLOT > 0u) { restore_slots(s); }
  for (var k = lane; k < NBODY; k += LANES) { adj_d[k] = vec3<f32>(0.0); adj_th[k] = vec3<f32>(0.0); }
  for (var k = lane; k < NLAM_ARR; k += LANES) { adj_lam[k] = 0.0; }   // the multipliers end with the substep
  for (var k = lane; k < n_live_slots(); k += LANES) {   // the slots' rows and multipliers too
    for (var f = 0u; f < SLOTADJ_W; f++) { tape[slot_grads(live_slot(k)) + f] = 0.0; }
  }
  barrier();
  if (NMUSCLE > 0u) {   // the substep's last stage
    restore_start(t_substep(s));
    barrier();
    if (serial()) { activation_adj(h); }
    barrier();
  }
  if (DAMPING) {
    restore_velocities(t_damping());
    barrier();
    if (serial()) { joint_damping_adj(h); }
    barrier();
  }
  // per body from here on each body on its lane, but for the stages' barriers
  if (NSLOT > 0u) {
    restore_velocities(t_contact_velocity());
    if (RESTITUTION) {   // the stage's input, the contact velocity pass's output: recomputed from the pass's input
      barrier();
      contact_velocity(h);
      barrier();
      restitution_adj(h);
      barrier();
      restore_velocities(t_contact_velocity());
    }
    contact_velocity_adj(h);
  }
  recover_adj(h);
  if (NARMTREE > 0u) {
    barrier();
    if (NSLOT > 0u) { solve_adj(h, restore_iteration(ITERATIONS), false); }   // the contacts' last pass
    // the substep's joint rates (armature_start), then the stage's input
    restore_start(t_substep(s));
    barrier();
    armature_start();
    barrier();
    restore_armature();
    barrier();
    if (serial()) { armature_adj(h); }
    barrier();
  }
  for (var it = ITERATIONS; it > 0u; it--) {
    if (NJOINT + NSLOT > 0u) { solve_adj(h, restore_iteration(it - 1u), true); }
  }
  // init_lambda zeroes the multipliers: their gradient stops here
  restore_start(t_substep(s));
  barrier();
  motor_loads();   // integrate's loads
  barrier();
  if (NSLOT > 0u) {   // the narrowphase read the poses and velocities integrate predicted
    integrate(h);
    barrier();
    narrowphase_adj();
    restore_velocities(t_substep(s));
  }
  integrate_adj(h);
  if (NMOTOR + NTENDON + NARMTREE > 0u) {
    barrier();
    if (serial()) {
      motor_loads_adj();
      if (NARMTREE > 0u) { armature_start_adj(); }   // at the start state, as integrate_adj leaves it
    }
    barrier();
  }
}

// the lanes' partial sums of the control gradients, added in lane order into this step's row (gcb), then zeroed
// for the next step's (a trajectory's per-step rows)
fn flush_ctrl_lanes() {
  barrier();
  for (var u = lane; u < NCTRL; u += LANES) {
    var sum = 0.0;
    for (var l = 0u; l < LANES; l++) {
      let o = tb + TAPE_GPRM + l * GPRM_W + u;
      sum = sum + tape[o];
      tape[o] = 0.0;
    }
    outp[gcb + u] = sum;
  }
  barrier();
}

@compute @workgroup_size(WORKGROUP)
fn xpbd_step_adj(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>,
                 @builtin(local_invocation_id) lid: vec3<u32>) {
  let e = env_index(gid, wid);
  if (e >= BATCH) { return; }
  set_lane(lid);
  env_in(e);
  tb = e * TAPE_STRIDE;
  let base = e * NROWS * PACKED_WIDTH;
  for (var b = lane; b < NBODY; b += LANES) {
    let o = base + PACKED_WIDTH * b;
    adj_x[b] = vec3<f32>(gout[o + PACKED_POS], gout[o + PACKED_POS + 1u], gout[o + PACKED_POS + 2u]);
    adj_q[b] = Quat(gout[o + PACKED_QUAT], vec3<f32>(gout[o + PACKED_QUAT + 1u], gout[o + PACKED_QUAT + 2u],
                                                       gout[o + PACKED_QUAT + 3u]));
    adj_v[b] = vec3<f32>(gout[o + PACKED_VEL], gout[o + PACKED_VEL + 1u], gout[o + PACKED_VEL + 2u]);
    adj_w[b] = vec3<f32>(gout[o + PACKED_ANGVEL], gout[o + PACKED_ANGVEL + 1u], gout[o + PACKED_ANGVEL + 2u]);
  }
  for (var k = lane; k < NMUSCLE; k += LANES) { adj_act[k] = gout[base + PACKED_WIDTH * NBODY + k]; }
  go = e * GRAD_W;
  for (var k = NBODY * PACKED_WIDTH + lane; k < GRAD_W; k += LANES) { outp[go + k] = 0.0; }
  for (var k = 0u; k < GPRM_ARR; k++) { gprm[k] = 0.0; }
  if (LANES > 1u) { for (var k = 0u; k < GPRM_W; k++) { tape[glane(k)] = 0.0; } }
  // inp of more than one state: the forward's trajectory (engine.wgsl.trajectory: the start, then the state after
  // each step), ctrl a row per step, and the steps run from the last to the first in this one launch, the adjoint
  // state carried from each into the one before; each step's control gradients go to their own row after the envs'
  // rows (BATCH * GRAD_W + (step * BATCH + env) * NCTRL). Otherwise inp is the step's start and there is one step.
  let rows = arrayLength(&inp) / (BATCH * NROWS * PACKED_WIDTH);
  let trajectory = rows > 1u;
  let nsteps = select(1u, rows - 1u, trajectory);
  for (var k = nsteps; k > 0u; k--) {
    let t = k - 1u;
    cb = select(e, t * BATCH + e, trajectory) * NCTRL;
    gcb = select(go + NROWS * PACKED_WIDTH, BATCH * GRAD_W + cb, trajectory);
    if (trajectory && LANES == 1u) { for (var u = 0u; u < NCTRL; u++) { outp[gcb + u] = 0.0; } }
    load_state(t * BATCH * NROWS * PACKED_WIDTH + base);
    barrier();
    if (NSLOT > 0u) { broadphase(); barrier(); }   // the step's candidate pairs, as the forward's
    for (var s = 0u; s < SUBSTEPS; s++) {
      tape_s = s;
      tape_start(t_substep(s));
      substep(H);
      if (TAPE_SUBSTEPS > 1u && NSLOT > 0u) { tape_slots(s); }
    }
    barrier();
    for (var s = SUBSTEPS; s > 0u; s--) { substep_adj(s - 1u, H); }
    if (trajectory && LANES > 1u) { flush_ctrl_lanes(); }
    barrier();   // the next step's load_state overwrites what this step's adjoints read
  }
  barrier();
  if (GPRM_PRIVATE) { for (var k = 0u; k < NPARAM; k++) { outp[go + NROWS * PACKED_WIDTH + NCTRL + k] = gprm[k]; } }
  if (LANES > 1u) {   // the lanes' partial sums, added in lane order
    for (var k = lane; k < GPRM_W; k += LANES) {
      var sum = 0.0;
      for (var l = 0u; l < LANES; l++) { sum = sum + tape[tb + TAPE_GPRM + l * GPRM_W + k]; }
      outp[go + NROWS * PACKED_WIDTH + k] = sum;
    }
  }
  // the start state's gradients, written as the forward writes a state (store_state, through the working state,
  // done with: each body and muscle on the lane that owns it, so no barrier)
  for (var b = lane; b < NBODY; b += LANES) { bx[b] = adj_x[b]; bq[b] = adj_q[b]; bv[b] = adj_v[b]; bw[b] = adj_w[b]; }
  for (var k = lane; k < NMUSCLE; k += LANES) { mact[k] = adj_act[k]; }
  store_state(go);
}
