// The armature stage (oracle/armature.py): after the Jacobi iterations, one Newton step of the implicit-Euler
// objective over every joint coordinate of each armed tree (docs/mjcf.md "Armature" has the equations):
//   (G + diag(A + c h + k h^2)) d = A (h qdot0 - dq) - c h dq - k h^2 (q - s) + h^2 tau - <D, x - x~>_M,
// limited joints as an active set (arm_limited), then the rigid motions sum_j d_j D_j integrates to (exact turns,
// leaves first). The header's tables (kernels/program.py armature_tables): the armed trees' joints (ARM_JOINTS from
// ARM_JSTART[t], root first) and bodies (ARM_BODIES from ARM_BSTART[t]), whether each floats (ARM_FLOATS; within
// the plane of the planar joint ARM_PLANE[t] when that is not -1), and per
// body the bit mask of its tree's joints whose subtree holds it (ARM_SUB, bit k: the tree's k-th joint).
//
// One lane runs each tree (a tree's step is one small dense solve; the substep's barrier follows). D_j is never
// stored per body: its angular and linear velocity at body b (arm_dir) come from the joint's world axis, anchor and
// the tree's rigid momentum-cancelling part (rw, rv) when it floats. The tree's frame, floating part, coordinates and
// system [K | rhs] are built in kernels/armature_system.wgsl; this file has the stage, the limits and the motion.

var<env> arm_qd0: array<f32, NJOINT_ARR>;   // each armed joint's rate qdot0 at the substep's start

// the joint's coordinate rate from the substep's start state (oracle/armature.py armature_step's qdot0: the
// relative velocity, linear for a slide, angular for a hinge, along the axis as the parent held it; a hinge of a
// group's along its rate row n_i)
fn armature_start() {
  for (var k = lane; k < ARM_JSTART[NARMTREE]; k += LANES) {
    let j = ARM_JOINTS[k];
    let par = JNT_PARENT[j];
    let chi = JNT_CHILD[j];
    var rel = body_angvel(chi) - body_angvel(par);
    if (JNT_TYPE[j] == SLIDE) { rel = body_vel(chi) - body_vel(par); }
    arm_qd0[j] = dot(rel, arm_axis(j, gather_side(par), gather_side(chi)).n);
  }
}

// joint j's world axis a, about which (along which, a slide's) D_j moves the child's subtree, and its rate row n, the
// coordinate's change per turn (shift) of the child: a lone joint's n is its axis; a hinge of a group's (hinge2,
// hinge3: kernels/hinges.wgsl) a is its own w_i and n row i of [w1 w2 w3]^-1 (oracle/armature.py _group_axes)
struct ArmAxis { a: vec3<f32>, n: vec3<f32> }
fn arm_axis(j: u32, s1: Side, s2: Side) -> ArmAxis {
  let a = rotate(s1.q, jv(OFF_JNT_AXIS_PARENT, j));
  if (!grouped(j)) { return ArmAxis(a, a); }
  let g = hinge_angles(members(j, 0u), s1, s2);
  var w = array<vec3<f32>, 3>(g.w1, g.w2, g.w3);
  return ArmAxis(w[JNT_GINDEX[j]], limit_rows(g)[JNT_GINDEX[j]]);
}

// a tree's joints at the working state: world axes, rate rows (arm_axis), anchors, slide flags, and the floating
// part of each D_j
struct ArmFrame { a: array<vec3<f32>, ARM_MAX>, n: array<vec3<f32>, ARM_MAX>, p: array<vec3<f32>, ARM_MAX>,
                  sl: array<f32, ARM_MAX>, rw: array<vec3<f32>, ARM_MAX>, rv: array<vec3<f32>, ARM_MAX> }
struct Twist { w: vec3<f32>, v: vec3<f32> }

// D_k's angular and linear velocity at body b (oracle: om, ve, with the floating part added when the tree floats)
fn arm_dir(f: ptr<function, ArmFrame>, k: u32, b: u32, floats: bool) -> Twist {
  let on = select(0.0, 1.0, ((ARM_SUB[b] >> k) & 1u) == 1u);
  let a = (*f).a[k];
  let sl = (*f).sl[k];
  var om = a * (1.0 - sl) * on;
  var ve = (cross(a, bx[b] - (*f).p[k]) * (1.0 - sl) + a * sl) * on;
  if (floats) {
    om = om + (*f).rw[k];
    ve = ve + ((*f).rv[k] + cross((*f).rw[k], bx[b]));
  }
  return Twist(om, ve);
}

// K x = r by Gaussian elimination without pivoting (oracle/armature.py _solve_batched): the n x n system in the
// first n columns of the first n rows of `m`, its right-hand sides in the next `cols` columns, replaced by x
alias ArmAug = array<array<f32, ARM_W>, ARM_R>;
fn arm_solve(m: ptr<function, ArmAug>, n: u32, cols: u32) {
  for (var k = 0u; k < n; k++) {
    for (var i = k + 1u; i < n; i++) {
      let f = (*m)[i][k] / (*m)[k][k];
      for (var c = 0u; c < n + cols; c++) { (*m)[i][c] = (*m)[i][c] - (*m)[k][c] * f; }
    }
  }
  for (var ii = 0u; ii < n; ii++) {
    let i = n - 1u - ii;
    for (var c = n; c < n + cols; c++) {
      var acc = (*m)[i][c];
      for (var cc = i + 1u; cc < n; cc++) { acc = acc - (*m)[i][cc] * (*m)[cc][c]; }
      (*m)[i][c] = acc / (*m)[i][i];
    }
  }
}

// the Newton step d with the limits as an active set (oracle/armature.py _limited): a limited joint the step would
// carry past its range (further past, when the iterations left it outside) is pinned at the bound, the others
// re-solved with it held, twice; K and rhs in the first n rows of `m` (columns 0 .. n - 1 and n), q the joints'
// coordinates at the working state (arm_coords, shared with arm_system's spring as the oracle shares qc). ArmLimits
// keeps what the adjoint reads: each solve's d (d[0] the free step, d[2] the result), the coordinates q, their
// bounds, and per sweep the pins and the held steps
struct ArmLimits { d: array<array<f32, ARM_MAX>, 3>, q: array<f32, ARM_MAX>, lo: array<f32, ARM_MAX>,
                   hi: array<f32, ARM_MAX>, pin: array<array<f32, ARM_MAX>, 2>, held: array<array<f32, ARM_MAX>, 2> }
// the system of sweep s: K with the pinned rows and columns replaced by the identity's, its right side r
fn arm_pinned(m: ptr<function, ArmAug>, n: u32, pin: array<f32, ARM_MAX>, held: array<f32, ARM_MAX>) -> ArmAug {
  var s = *m;
  for (var i = 0u; i < n; i++) {
    var r = (*m)[i][n];
    for (var k = 0u; k < n; k++) { r = r - (*m)[i][k] * (pin[k] * held[k]); }
    s[i][n] = (1.0 - pin[i]) * r + pin[i] * held[i];
    for (var k = 0u; k < n; k++) {
      s[i][k] = (*m)[i][k] * (1.0 - pin[i]) * (1.0 - pin[k]) + select(0.0, pin[k], i == k);
    }
  }
  return s;
}
fn arm_limits(t: u32, m: ptr<function, ArmAug>, n: u32, q: array<f32, ARM_MAX>) -> ArmLimits {
  var out: ArmLimits;
  var free_sys = *m;
  arm_solve(&free_sys, n, 1u);
  var pin: array<f32, ARM_MAX>;
  for (var k = 0u; k < n; k++) {
    let j = ARM_JOINTS[ARM_JSTART[t] + k];
    out.d[0][k] = free_sys[k][n];
    out.q[k] = q[k];
    out.lo[k] = min(p1(OFF_JNT_RANGE + 2u * j), out.q[k]);
    out.hi[k] = max(p1(OFF_JNT_RANGE + 2u * j + 1u), out.q[k]);
    pin[k] = 0.0;
  }
  for (var sweep = 0u; sweep < 2u; sweep++) {
    var held: array<f32, ARM_MAX>;
    for (var k = 0u; k < n; k++) {
      let j = ARM_JOINTS[ARM_JSTART[t] + k];
      let moved = out.q[k] + out.d[sweep][k];
      let past = p1(OFF_JNT_LIMITED + j) > 0.0 && (moved < out.lo[k] || moved > out.hi[k]);
      pin[k] = max(pin[k], select(0.0, 1.0, past));
      held[k] = min(max(out.q[k] + out.d[sweep][k], out.lo[k]), out.hi[k]) - out.q[k];
    }
    out.pin[sweep] = pin;
    out.held[sweep] = held;
    var s = arm_pinned(m, n, pin, held);
    arm_solve(&s, n, 1u);
    for (var k = 0u; k < n; k++) { out.d[sweep + 1u][k] = s[k][n]; }
  }
  return out;
}

// the unit quaternion turning by angle |axis| about axis (|axis| 1 or 0; oracle/armature.py _turn: 1e-30 under the
// root keeps a zero axis's gradient finite)
fn arm_turn(axis: vec3<f32>, angle: f32) -> Quat {
  let norm = sqrt(dot(axis, axis) + 1e-30);
  let half = angle * norm * 0.5;
  return Quat(cos(half), axis / norm * sin(half));
}

// a tree's step up to its motion: the frame (its floating part too), the system [K | rhs] and the limits' solves
// (armature_tree, and armature_tree_adj, which recomputes them)
struct ArmSolved { f: ArmFrame, m: ArmAug, lim: ArmLimits }
fn arm_solved(t: u32, n: u32, floats: bool, h: f32) -> ArmSolved {
  var f = arm_frame(t, n);
  if (floats) { arm_float(t, &f, n); }
  let q = arm_coords(t, n);
  var m = arm_system(t, &f, n, floats, h, q);
  return ArmSolved(f, m, arm_limits(t, &m, n, q));
}

// one armed tree's Newton step (oracle/armature.py armature_step)
fn armature_tree(t: u32, h: f32) {
  let n = ARM_JSTART[t + 1u] - ARM_JSTART[t];
  let floats = ARM_ANY_FLOATS && ARM_FLOATS[t] == 1u;   // a constant false leaves the floating part out
  var s = arm_solved(t, n, floats, h);
  arm_motion(t, &s.f, n, floats, s.lim.d[2]);
}

// the bodies move by the rigid motions sum_k d_k D_k integrates to, leaves first (each axis still where it was
// computed); DISP takes each motion's displacement as such (arm_moved), ROT the rotation to first order
// (sum_k d_k om_k) as the solve keeps it
fn arm_motion(t: u32, f: ptr<function, ArmFrame>, n: u32, floats: bool, d: array<f32, ARM_MAX>) {
  var wsum: array<vec3<f32>, NBODY_ARR>;
  for (var i = ARM_BSTART[t]; i < ARM_BSTART[t + 1u]; i++) {
    let b = ARM_BODIES[i];
    var w = vec3<f32>(0.0);
    for (var k = 0u; k < n; k++) { w = w + arm_dir(f, k, b, floats).w * d[k]; }
    wsum[b] = w;
  }
  for (var kk = 0u; kk < n; kk++) {
    let k = n - 1u - kk;
    let r = arm_turn((*f).a[k] * (1.0 - (*f).sl[k]), d[k]);
    let shift = (*f).a[k] * (*f).sl[k] * d[k];
    for (var i = ARM_BSTART[t]; i < ARM_BSTART[t + 1u]; i++) {
      let b = ARM_BODIES[i];
      if (((ARM_SUB[b] >> k) & 1u) == 0u) { continue; }
      let step = arm_moved(r, bx[b] - (*f).p[k]) + shift;
      bx[b] = bx[b] + step;
      bd[b] = bd[b] + step;
      bq[b] = qmul(r, bq[b]);
    }
  }
  if (floats) {   // and the tree's momentum-cancelling rigid motion, about the world origin
    let fl = arm_float_motion(f, n, d);
    let r = arm_turn(fl.w, 1.0);
    for (var i = ARM_BSTART[t]; i < ARM_BSTART[t + 1u]; i++) {
      let b = ARM_BODIES[i];
      let step = arm_moved(r, bx[b]) + fl.v;
      bx[b] = bx[b] + step;
      bd[b] = bd[b] + step;
      bq[b] = qmul(r, bq[b]);
    }
  }
  for (var i = ARM_BSTART[t]; i < ARM_BSTART[t + 1u]; i++) {
    let b = ARM_BODIES[i];
    bq[b] = normalize_q(bq[b]);
    bth[b] = bth[b] + wsum[b];
  }
}

// the floating tree's rigid motion sum_k d_k (rw_k, rv_k)
fn arm_float_motion(f: ptr<function, ArmFrame>, n: u32, d: array<f32, ARM_MAX>) -> Twist {
  var out = Twist(vec3<f32>(0.0), vec3<f32>(0.0));
  for (var k = 0u; k < n; k++) { out.w = out.w + (*f).rw[k] * d[k]; out.v = out.v + (*f).rv[k] * d[k]; }
  return out;
}

// R(r) v - v without the cancellation of the difference (oracle/armature.py _moved): 2 w (u x v) + 2 u x (u x v)
fn arm_moved(r: Quat, v: vec3<f32>) -> vec3<f32> {
  let t = cross(r.v, v) * 2.0;
  return t * r.w + cross(r.v, t);
}

// every armed tree's step, each on one lane
fn armature(h: f32) {
  for (var t = lane; t < NARMTREE; t += LANES) { armature_tree(t, h); }
}
