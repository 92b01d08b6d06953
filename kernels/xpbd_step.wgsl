// The XPBD step (M20 Alg. 2) as one WGSL kernel: each env loops over steps, substeps and Jacobi iterations, on LANES
// invocations (engine/wgsl.py picks LANES: kernels/lanes.py default_lanes). LANES == 1: one invocation per env,
// WORKGROUP envs per workgroup. LANES > 1: one workgroup per env, its lanes sharing each stage's items (bodies,
// joints, pairs, contact slots: item i on lane i % LANES, the same lane every iteration, so a joint's or a slot's
// multipliers never move between lanes) with a barrier() wherever a stage reads what another lane wrote. Per-body
// sums run on the body's lane in the oracle's order, so results do not depend on LANES.
//
// The files mirror the oracle's one to one, with its names (tests/test_wgsl_bridge.py checks both directions):
// each stage of oracle/step.py STAGES is `fn <stage>` in kernels/<stage>.wgsl, as `def <stage>` in oracle/<stage>.py;
// kernels/math3.wgsl, xpbd.wgsl, contacts.wgsl (the plan's storage), collide.wgsl, primitives.wgsl, box.wgsl and
// box_box.wgsl mirror oracle/math3.py, xpbd.py, contacts.py, collide/__init__.py and collide/*.py; the constraints
// of oracle/constraints/ are in kernels/constraints.wgsl and, the slide family's, kernels/slides.wgsl. This file
// holds the buffers, the env's working state, the parameter and state accessors, `substep` and the entry point.
// kernels/program.py concatenates the files behind a generated header: the scene's constants (counts, topology
// tables, parameter offsets), the contact slot layout and the oracle's constants (EPS, the narrowphase's tolerances,
// the pair-kind dispatch), generated per Model.
//
// Buffers (tinygrad's layout: binding 0 is its INFINITY uniform, then the custom kernel's arguments in order):
//   outp  (B, NROWS, 13)  the state after NSTEPS env-steps (or a trajectory: (steps + 1, B, NROWS, 13), the start and the state after each step), oracle/packed.py's layout (the header's PACKED_*):
//                         [pos 0:3 | quat (w,x,y,z) 3:7 | vel 7:10 | angvel 10:13] per body, then MROWS rows of
//                         the muscles' activations, 13 a row (NROWS = NBODY + MROWS)
//   inp   (B, NROWS, 13)  the state before
//   prm   (MB, NPARAM)    the Model's tensors, flattened (MB = 1, or B with domain randomisation)
//   ctrl  (B, NCTRL)      actuator controls, held for the call (a trajectory's: (steps, B, NCTRL), a row per step)
//   tab   (NTAB,) i32     the scene's static contact tables (kernels/layout.py contact_tables)
//   scr   (B, SCR)        per-env scratch: the contact plan and slots (kernels/contacts.wgsl; the kernel's own)

@group(0) @binding(0) var<uniform> INFINITY : f32;
@group(0) @binding(1) var<storage, read_write> outp : array<f32>;
@group(0) @binding(2) var<storage, read_write> inp : array<f32>;
@group(0) @binding(4) var<storage, read_write> ctrl : array<f32>;
// prm (binding 3), tab (5) and scr (6) are declared by the header (kernels/lanes.py env_buffers): the storage
// buffers themselves with LANES > 1; with one lane per env, private copies that env_in() fills and env_out() writes
// back, as lavapipe checks the bounds of every storage access on every SIMD lane (but for short tables in the forward
// program, which every env reads at the same index: kernels/lanes.py STORAGE_TABLES)

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
var<env> mact: array<f32, NMUSCLE_ARR>;     // the muscles' activations (the packed state's rows after the bodies')
var<private> sb: u32;                            // this env's row of scr (0 for a private copy)
var<private> overflow: u32;                      // candidate pairs beyond their capacity, this step (lane 0)
var<private> mb: u32;                           // this env's row of prm (0 for a private copy)
var<private> cb: u32;                           // this env's row of ctrl
// env_index(gid, wid), barrier(), `lane` (this invocation's lane in its env, 0 .. LANES - 1) and set_lane(lid) come
// from the header: with LANES == 1 the env is gid.x, barrier() does nothing and lane is the constant 0; with
// LANES > 1 the env is the workgroup, uniform across its lanes, as WGSL's uniformity analysis requires of every
// control path that reaches a barrier

// --- parameters ---
fn p1(off: u32) -> f32 { return prm[mb + off]; }
fn p3(off: u32) -> vec3<f32> { return vec3<f32>(prm[mb + off], prm[mb + off + 1u], prm[mb + off + 2u]); }
fn p4q(off: u32) -> Quat { return Quat(prm[mb + off], p3(off + 1u)); }
fn jv(off: u32, j: u32) -> vec3<f32> { return p3(off + 3u * j); }
fn act_ctrl(a: i32) -> f32 {  // clip(ctrl[a], lo, hi); a < 0 reads 0 (oracle/actuators.py act_ctrl)
  if (a < 0) { return 0.0; }
  let u = u32(a);
  return min(max(ctrl[cb + u], p1(OFF_ACT_CTRLRANGE + 2u * u)), p1(OFF_ACT_CTRLRANGE + 2u * u + 1u));
}
fn act_p(off: u32, a: i32) -> f32 { if (a < 0) { return 0.0; } return p1(off + u32(a)); }

// --- the packed state's vectors ---
fn in3(o: u32) -> vec3<f32> { return vec3<f32>(inp[o], inp[o + 1u], inp[o + 2u]); }
fn out3(o: u32, v: vec3<f32>) { outp[o] = v.x; outp[o + 1u] = v.y; outp[o + 2u] = v.z; }

// --- per-body state of a constraint side; the world (b < 0) reads zero ---
fn body_vel(b: i32) -> vec3<f32> { if (b < 0) { return vec3<f32>(0.0); } return bv[u32(b)]; }
fn body_angvel(b: i32) -> vec3<f32> { if (b < 0) { return vec3<f32>(0.0); } return bw[u32(b)]; }
fn body_disp(b: i32) -> vec3<f32> { if (b < 0) { return vec3<f32>(0.0); } return bd[u32(b)]; }
fn body_rot(b: i32) -> vec3<f32> { if (b < 0) { return vec3<f32>(0.0); } return bth[u32(b)]; }

// one XPBD substep (oracle/step.py substep), its stages in STAGES order. A barrier after each stage whose results
// other lanes read, or whose inputs the next stage overwrites (motor_loads reads the poses that integrate moves).
// tape_iteration, tape_solve, tape_contact_velocity and tape_damping record what the backward kernel replays
// (kernels/adjoint/xpbd_step.wgsl); the
// forward program's are empty (kernels/program.py header)
fn substep(h: f32) {
  if (NARMTREE > 0u) { armature_start(); }   // the armature stage's joint rates at the substep's start
  motor_loads();
  barrier();
  integrate(h);
  barrier();
  if (NSLOT > 0u) { narrowphase(); }
  init_lambda();
  barrier();
  for (var it = 0u; it < ITERATIONS; it++) {
    if (NJOINT + NSLOT > 0u) { tape_iteration(it); solve(h, true); barrier(); }
  }
  if (NARMTREE > 0u) {
    tape_armature();
    armature(h);
    barrier();
    // the contacts get the last word (oracle/step.py): a pass over them alone
    if (NSLOT > 0u) { tape_iteration(ITERATIONS); solve(h, false); barrier(); }
  }
  recover(h);
  barrier();
  if (NSLOT > 0u) { tape_contact_velocity(); contact_velocity(h); barrier(); }
  if (RESTITUTION && NSLOT > 0u) { restitution(h); barrier(); }
  if (DAMPING) { tape_damping(); joint_damping(h); barrier(); }
  if (NMUSCLE > 0u) { activation(h); barrier(); }
}

// the env's packed state from inp at `base` into the working state (each body on its lane; the activations, in
// the rows after the bodies', each on its muscle's lane)
fn load_state(base: u32) {
  for (var b = lane; b < NBODY; b += LANES) {
    let o = base + PACKED_WIDTH * b;
    bx[b] = in3(o + PACKED_POS);
    bq[b] = Quat(inp[o + PACKED_QUAT], in3(o + PACKED_QUAT + 1u));
    bv[b] = in3(o + PACKED_VEL);
    bw[b] = in3(o + PACKED_ANGVEL);
  }
  for (var k = lane; k < NMUSCLE; k += LANES) { mact[k] = inp[base + PACKED_WIDTH * NBODY + k]; }
}

// the working state into outp at `base` (each body on its lane), then the activation rows, zero-padded as
// oracle/packed.py join_act pads them
fn store_state(base: u32) {
  for (var b = lane; b < NBODY; b += LANES) {
    let o = base + PACKED_WIDTH * b;
    out3(o + PACKED_POS, bx[b]);
    outp[o + PACKED_QUAT] = bq[b].w;
    out3(o + PACKED_QUAT + 1u, bq[b].v);
    out3(o + PACKED_VEL, bv[b]);
    out3(o + PACKED_ANGVEL, bw[b]);
  }
  for (var k = lane; k < MROWS * PACKED_WIDTH; k += LANES) {
    outp[base + PACKED_WIDTH * NBODY + k] = select(0.0, mact[min(k, NMUSCLE_ARR - 1u)], k < NMUSCLE);
  }
}

@compute @workgroup_size(WORKGROUP)
fn xpbd_step(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>,
             @builtin(local_invocation_id) lid: vec3<u32>) {
  let e = env_index(gid, wid);
  if (e >= BATCH) { return; }
  set_lane(lid);
  env_in(e);   // sets sb and mb
  cb = e * NCTRL;
  let base = e * NROWS * PACKED_WIDTH;
  load_state(base);
  barrier();
  var dropped = 0u;   // candidate pairs beyond their block's capacity, summed over the launch's steps (lane 0)
  // an output of more than one state is a trajectory (engine.wgsl.trajectory), its steps the rows after the start's:
  // read from the buffer's length, so that the program at NSTEPS = 1 serves every horizon and step() too (a program
  // per step count cost each new horizon a 7 to 11 s compile on lavapipe: chain x64, stack10 x64)
  let rows = arrayLength(&outp) / (BATCH * NROWS * PACKED_WIDTH);
  let trajectory = rows > 1u;
  let nsteps = select(NSTEPS, rows - 1u, trajectory);
  if (trajectory) { store_state(base); }   // row 0: the start, so that the rows are the backward's checkpoints
  for (var k = 0u; k < nsteps; k++) {
    if (trajectory) { cb = (k * BATCH + e) * NCTRL; }   // this step's controls
    if (NSLOT > 0u) { broadphase(); barrier(); dropped = dropped + overflow; }   // once per step (M20 sec. 3.5)
    for (var s = 0u; s < SUBSTEPS; s++) { substep(H); }
    // each step's state (the substep's last stage ended with a barrier, so every body is final on its lane)
    if (trajectory) { store_state((k + 1u) * BATCH * NROWS * PACKED_WIDTH + base); }
  }
  if (lane == 0u) { scr[sb + OVF] = f32(dropped); }   // read back as State.contact_overflow (engine/wgsl.py)
  env_out(e);
  if (!trajectory) { store_state(base); }
}
