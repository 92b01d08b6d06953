// The armature stage's system (kernels/armature.wgsl, oracle/armature.py armature_step), which arm_solved builds
// before the limits' solves: per armed tree, the frame (each joint's world axis and anchor: arm_frame), a floating
// tree's momentum-cancelling part of each D_j (arm_float; within a planar root's plane: arm_in_plane), the joints'
// coordinates (arm_coords) and the Newton step's [K | rhs] (arm_system). The types (ArmFrame, Twist, ArmAug), arm_dir
// and arm_solve are kernels/armature.wgsl's; like that file, this one is left out of a program without armature
// (kernels/program.py UNARMED).

// a tree's frame at the working state: each joint's world axis, rate row (arm_axis) and anchor from its parent's
// pose (and a group's child's)
fn arm_frame(t: u32, n: u32) -> ArmFrame {
  var f: ArmFrame;
  for (var k = 0u; k < n; k++) {
    let j = ARM_JOINTS[ARM_JSTART[t] + k];
    let par = gather_side(JNT_PARENT[j]);
    let ax = arm_axis(j, par, gather_side(JNT_CHILD[j]));
    f.a[k] = ax.a;
    f.n[k] = ax.n;
    f.p[k] = par.x + rotate(par.q, jv(OFF_JNT_ANCHOR_PARENT, j));
    f.sl[k] = select(0.0, 1.0, JNT_TYPE[j] == SLIDE);
    f.rw[k] = vec3<f32>(0.0);
    f.rv[k] = vec3<f32>(0.0);
  }
  return f;
}

// I_w w = R (I (R^T w)) of body b
fn arm_inertia(b: u32, w: vec3<f32>) -> vec3<f32> {
  return rotate(bq[b], inv_rotate(bq[b], w) / p3(OFF_BODY_INV_INERTIA + 3u * b));
}

// the floating tree's momentum-cancelling rigid motion (rw, rv) of each D_k: the spatial inertia about the world
// origin M6 [rw; rv] = -(the momentum of D_k's joint motion); arm_float_system builds [M6 | -momenta]
fn arm_float_system(t: u32, f: ptr<function, ArmFrame>, n: u32) -> ArmAug {
  var m: ArmAug;
  for (var r = 0u; r < ARM_R; r++) { for (var c = 0u; c < ARM_W; c++) { m[r][c] = 0.0; } }
  for (var i = ARM_BSTART[t]; i < ARM_BSTART[t + 1u]; i++) {
    let b = ARM_BODIES[i];
    let x = bx[b];
    let mass = 1.0 / p1(OFF_BODY_INV_MASS + b);
    for (var c = 0u; c < 3u; c++) {
      var e = vec3<f32>(0.0);
      e[c] = 1.0;
      let top = arm_inertia(b, e) - cross(x, cross(x, e)) * mass;   // momentum of rw = e: angular, linear
      let bot = -cross(x, e) * mass;
      let trn = cross(x, e) * mass;                                 // of rv = e
      for (var r = 0u; r < 3u; r++) {
        m[r][c] += top[r];
        m[r + 3u][c] += bot[r];
        m[r][c + 3u] += trn[r];
      }
      m[c + 3u][c + 3u] += mass;
    }
    for (var k = 0u; k < n; k++) {
      let d = arm_dir(f, k, b, false);
      let ang = arm_inertia(b, d.w) + cross(x, d.v) * mass;
      let lin = d.v * mass;
      for (var r = 0u; r < 3u; r++) { m[r][6u + k] -= ang[r]; m[r + 3u][6u + k] -= lin[r]; }
    }
  }
  return m;
}
// a tree on a planar root (ARM_PLANE[t] >= 0) moves within the plane: rotation about the normal, translation across
// it. With P = diag(nn^T, I - nn^T) the projector onto those motions, [M6 | r] becomes [P M6 P + I - P | P r], whose
// solution lies in P's range (oracle/armature.py _in_plane)
alias Mat6 = array<array<f32, 6>, 6>;
fn arm_projector(nrm: vec3<f32>) -> Mat6 {
  var P: array<array<f32, 6>, 6>;
  for (var r = 0u; r < 3u; r++) {
    for (var c = 0u; c < 3u; c++) {
      let nn = nrm[r] * nrm[c];
      P[r][c] = nn;
      P[r + 3u][c + 3u] = select(0.0, 1.0, r == c) - nn;
      P[r][c + 3u] = 0.0;
      P[r + 3u][c] = 0.0;
    }
  }
  return P;
}
fn arm_in_plane(t: u32, m: ptr<function, ArmAug>, n: u32) {
  if (ARM_PLANE[t] < 0) { return; }
  let P = arm_projector(jv(OFF_JNT_AXIS_PARENT, u32(ARM_PLANE[t])));
  var out = *m;
  for (var r = 0u; r < 6u; r++) {
    for (var c = 0u; c < 6u + n; c++) {
      var acc = 0.0;
      if (c < 6u) {   // (P M6 P)[r][c] + (I - P)[r][c]
        for (var a = 0u; a < 6u; a++) {
          for (var b = 0u; b < 6u; b++) { acc += P[r][a] * (*m)[a][b] * P[b][c]; }
        }
        acc += select(0.0, 1.0, r == c) - P[r][c];
      } else {        // (P r)[r]
        for (var a = 0u; a < 6u; a++) { acc += P[r][a] * (*m)[a][c]; }
      }
      out[r][c] = acc;
    }
  }
  *m = out;
}
fn arm_float(t: u32, f: ptr<function, ArmFrame>, n: u32) {
  var m = arm_float_system(t, f, n);
  arm_in_plane(t, &m, n);
  arm_solve(&m, 6u, n);
  for (var k = 0u; k < n; k++) {
    (*f).rw[k] = vec3<f32>(m[0][6u + k], m[1][6u + k], m[2][6u + k]);
    (*f).rv[k] = vec3<f32>(m[3][6u + k], m[4][6u + k], m[5][6u + k]);
  }
}

// the joint's coordinate at the working state (oracle/joints.py joint_coords): hinge angle (a group's hinge's from
// the group's angles), slide position
fn arm_coord(j: u32) -> f32 {
  let s1 = gather_side(JNT_PARENT[j]);
  let s2 = gather_side(JNT_CHILD[j]);
  if (JNT_TYPE[j] == SLIDE) { return slide_frame(j, s1, s2).x; }
  if (grouped(j)) { return hinge_angles(members(j, 0u), s1, s2).t[JNT_GINDEX[j]]; }
  return hinge_angle(j, s1, s2).x;
}

// a tree's joint coordinates at the working state, read once per substep (the spring and the limits share them)
fn arm_coords(t: u32, n: u32) -> array<f32, ARM_MAX> {
  var q: array<f32, ARM_MAX>;
  for (var k = 0u; k < n; k++) { q[k] = arm_coord(ARM_JOINTS[ARM_JSTART[t] + k]); }
  return q;
}

// joint k's coordinate change dq since the substep began (DISP for a slide, ROT for a hinge, along the rate row) and
// its armed motors' load tau
fn arm_dq(f: ptr<function, ArmFrame>, j: u32, k: u32) -> f32 {
  var acc = body_rot(JNT_CHILD[j]) - body_rot(JNT_PARENT[j]);
  if (JNT_TYPE[j] == SLIDE) { acc = body_disp(JNT_CHILD[j]) - body_disp(JNT_PARENT[j]); }
  return dot(acc, (*f).n[k]);
}
fn arm_tau(j: u32) -> f32 {
  var tau = 0.0;
  for (var i = 0u; i < NARM_MOTOR; i++) {
    let a = ARM_MOTORS[i];
    if (u32(ACT_JOINT[a]) == j) { tau = tau + act_ctrl(i32(a)) * p1(OFF_ACT_GEAR + a); }
  }
  return tau;
}

// K = G + diag(A + c h + k h^2) and the right-hand side (column n), by bodies; q: arm_coords
fn arm_system(t: u32, f: ptr<function, ArmFrame>, n: u32, floats: bool, h: f32, q: array<f32, ARM_MAX>) -> ArmAug {
  var m: ArmAug;
  for (var r = 0u; r < ARM_R; r++) { for (var c = 0u; c < ARM_W; c++) { m[r][c] = 0.0; } }
  for (var i = ARM_BSTART[t]; i < ARM_BSTART[t + 1u]; i++) {
    let b = ARM_BODIES[i];
    let mass = 1.0 / p1(OFF_BODY_INV_MASS + b);
    let gw = bth[b] - bw[b] * h;   // x - x~: the prediction's D and TH are h v and h w (integrate)
    let gv = bd[b] - bv[b] * h;
    var tw: array<Twist, ARM_MAX>;
    for (var k = 0u; k < n; k++) { tw[k] = arm_dir(f, k, b, floats); }
    for (var k = 0u; k < n; k++) {
      let iom = arm_inertia(b, tw[k].w);
      for (var i2 = 0u; i2 < n; i2++) { m[i2][k] += dot(tw[i2].w, iom) + dot(tw[i2].v, tw[k].v) * mass; }
      m[k][n] -= dot(iom, gw) + dot(tw[k].v, gv) * mass;
    }
  }
  for (var k = 0u; k < n; k++) {
    let j = ARM_JOINTS[ARM_JSTART[t] + k];
    let dq = arm_dq(f, j, k);
    let arm = JNT_ARMATURE[j];
    let c = p1(OFF_JNT_DAMPING + j);
    let kh2 = JNT_STIFFNESS[j] * h * h;   // the spring, (k h^2 / 2) (q + d - s)^2
    var spring = 0.0;
    if (kh2 != 0.0) { spring = kh2 * (q[k] - JNT_SPRINGREF[j]); }
    m[k][n] += arm * (h * arm_qd0[j] - dq) - c * h * dq - spring + h * h * arm_tau(j);
    m[k][k] += arm + c * h + kh2;
  }
  return m;
}
