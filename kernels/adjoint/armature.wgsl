// Adjoint of the armature stage (kernels/armature.wgsl, oracle/armature.py): per armed tree, the Newton step read
// in reverse. armature_tree_adj recomputes the tree's forward from the stage's input (restored from the tape:
// tape_armature) and then reverses its operations from the last:
//   arm_motion_adj    the normalisation, the floating tree's rigid motion, then the turns (the forward applied them
//                     leaves first, n - 1 .. 0; each turn's input poses come from undoing it: arm_unturn), and TH's
//                     first-order rotation sum_k d_k om_k;
//   arm_limits_adj    the active-set solves: d_{s+1} = Kh_s^-1 r_s(K, rhs, held_s(d_s)), d_0 = K^-1 rhs. Every system is
//                     symmetric, so lambda = Kh^-1 g is its adjoint solve, g_Kh = -lambda d^T and g_r = lambda; the
//                     pins are constants (oracle/armature.py _limited detaches them);
//   arm_system_adj    K = G + diag(A + c h + k h^2) and the right-hand side, by bodies, to the twists D_k, the bodies'
//                     masses and inertias, x - x~, dq, qdot0 (arm_gqd0, for armature_start_adj), tau and the spring;
//   arm_coord_adj     the coordinates q (the spring and the limits read them);
//   arm_float_adj     the floating tree's momentum-cancelling part (rw, rv) = M6'^-1 (-momenta), M6 symmetric, and
//                     the projection onto a planar root's motions;
//   arm_frame_adj     the joints' world axes and anchors, from their parents' poses.
// Armature, stiffness and springref are static (the Model's tuples), and so have no gradient. tests/test_parity_grad_
// armature.py checks the whole against the float64 oracle's autograd. arm_system_adj, arm_coord_adj, arm_float_adj
// and arm_frame_adj are in kernels/adjoint/armature_system.wgsl, as their forwards are in kernels/armature_system.wgsl.

var<private> arm_gqd0: array<f32, NJOINT_ARR>;   // d loss / d arm_qd0, which armature_start_adj takes to the start

// the gradients of a tree's frame (axes a, rate rows n, anchors p), its floating part and its step, per joint of the
// tree
struct ArmGrad { a: array<vec3<f32>, ARM_MAX>, n: array<vec3<f32>, ARM_MAX>, p: array<vec3<f32>, ARM_MAX>,
                 rw: array<vec3<f32>, ARM_MAX>, rv: array<vec3<f32>, ARM_MAX>, d: array<f32, ARM_MAX> }
struct ArmPoses { x: array<vec3<f32>, NBODY_ARR>, q: array<Quat, NBODY_ARR> }
struct TurnAdj { axis: vec3<f32>, angle: f32 }

// arm_dir: D_k's angular (gw) and linear (gv) velocity gradients at body b, to the frame, the floating part and bx
fn arm_dir_adj(f: ptr<function, ArmFrame>, g: ptr<function, ArmGrad>, k: u32, b: u32, floats: bool, gw: vec3<f32>,
               gv: vec3<f32>) {
  let on = select(0.0, 1.0, ((ARM_SUB[b] >> k) & 1u) == 1u);
  let a = (*f).a[k];
  let sl = (*f).sl[k];
  let cr = cross_adj(a, bx[b] - (*f).p[k], gv * ((1.0 - sl) * on));
  (*g).a[k] += gw * ((1.0 - sl) * on) + cr.a + gv * (sl * on);
  (*g).p[k] -= cr.b;
  adj_x[b] += cr.b;
  if (floats) {
    let cf = cross_adj((*f).rw[k], bx[b], gv);
    (*g).rw[k] += gw + cf.a;
    (*g).rv[k] += gv;
    adj_x[b] += cf.b;
  }
}

// arm_turn(axis, angle) = (cos(angle |axis|~ / 2), axis / |axis|~ sin(angle |axis|~ / 2)), |axis|~ = sqrt(|axis|^2 +
// 1e-30)
fn arm_turn_adj(axis: vec3<f32>, angle: f32, g: Quat) -> TurnAdj {
  let norm = sqrt(dot(axis, axis) + 1e-30);
  let half = angle * norm * 0.5;
  let unit = axis / norm;
  let ghalf = -sin(half) * g.w + cos(half) * dot(unit, g.v);
  let gunit = g.v * sin(half);
  let gnorm = ghalf * angle * 0.5 - dot(gunit, axis) / (norm * norm);
  return TurnAdj(gunit / norm + axis * (gnorm / norm), ghalf * norm * 0.5);
}

// arm_moved(r, v) = w t + u x t with t = 2 u x v: rotate(r, v) - v as written
fn arm_moved_adj(r: Quat, v: vec3<f32>, g: vec3<f32>) -> QuatAdj {
  let ro = rotate_adj(r, v, g);
  return QuatAdj(ro.q, ro.v - g);
}

// the tree's poses as arm_motion leaves them after all its turns n - 1 .. 0, before the floating tree's rigid motion
fn arm_turned(t: u32, f: ptr<function, ArmFrame>, n: u32, d: array<f32, ARM_MAX>) -> ArmPoses {
  var out: ArmPoses;
  for (var i = ARM_BSTART[t]; i < ARM_BSTART[t + 1u]; i++) { let b = ARM_BODIES[i]; out.x[b] = bx[b]; out.q[b] = bq[b]; }
  for (var kk = 0u; kk < n; kk++) {
    let k = n - 1u - kk;
    let r = arm_turn((*f).a[k] * (1.0 - (*f).sl[k]), d[k]);
    let shift = (*f).a[k] * (*f).sl[k] * d[k];
    for (var i = ARM_BSTART[t]; i < ARM_BSTART[t + 1u]; i++) {
      let b = ARM_BODIES[i];
      if (((ARM_SUB[b] >> k) & 1u) == 0u) { continue; }
      out.x[b] = out.x[b] + arm_moved(r, out.x[b] - (*f).p[k]) + shift;
      out.q[b] = qmul(r, out.q[b]);
    }
  }
  return out;
}

// turn k undone in place: the poses before it from those after (x' = p + R (x - p) + shift, q' = r q), so that the
// adjoint walks the turns back in O(n) rather than replaying each turn's input from the start (O(n^2) turns; the
// humanoid's tree has 17 joints). Exact up to rounding, which is all that separates the undone poses from the
// forward's: the gradients are evaluated a few ulp away, far inside the parity tests' tolerances
fn arm_unturn(t: u32, f: ptr<function, ArmFrame>, k: u32, r: Quat, shift: vec3<f32>, poses: ptr<function, ArmPoses>) {
  let ri = conj(r);
  for (var i = ARM_BSTART[t]; i < ARM_BSTART[t + 1u]; i++) {
    let b = ARM_BODIES[i];
    if (((ARM_SUB[b] >> k) & 1u) == 0u) { continue; }
    (*poses).x[b] = (*f).p[k] + rotate(ri, (*poses).x[b] - (*f).p[k] - shift);
    (*poses).q[b] = qmul(ri, (*poses).q[b]);
  }
}

// arm_motion in reverse: the bodies' gradients (adj_x, adj_q, adj_d, adj_th) from the motion's output to its input,
// and the gradients of d and of the frame into g
fn arm_motion_adj(t: u32, f: ptr<function, ArmFrame>, g: ptr<function, ArmGrad>, n: u32, floats: bool,
                  d: array<f32, ARM_MAX>) {
  var pre = arm_turned(t, f, n, d);   // the input of the floating motion, then of each turn as it is undone
  var fl = Twist(vec3<f32>(0.0), vec3<f32>(0.0));
  if (floats) { fl = arm_float_motion(f, n, d); }
  let rf = arm_turn(fl.w, 1.0);   // the identity where the tree is rooted
  for (var i = ARM_BSTART[t]; i < ARM_BSTART[t + 1u]; i++) {
    let b = ARM_BODIES[i];
    adj_q[b] = normalize_q_adj(qmul(rf, pre.q[b]), adj_q[b]);
  }
  if (floats) {   // step = arm_moved(r, x) + V, q' = r q, r = arm_turn(W, 1); W, V = sum_k d_k (rw_k, rv_k)
    var gr = Quat(0.0, vec3<f32>(0.0));
    var gv = vec3<f32>(0.0);
    for (var i = ARM_BSTART[t]; i < ARM_BSTART[t + 1u]; i++) {
      let b = ARM_BODIES[i];
      let gstep = adj_x[b] + adj_d[b];
      let mo = arm_moved_adj(rf, pre.x[b], gstep);
      let qm = qmul_adj(rf, pre.q[b], adj_q[b]);
      gr = qadd(gr, qadd(mo.q, qm.a));
      adj_x[b] += mo.v;
      adj_q[b] = qm.b;
      gv += gstep;
    }
    let ta = arm_turn_adj(fl.w, 1.0, gr);
    for (var k = 0u; k < n; k++) {
      (*g).rw[k] += ta.axis * d[k];
      (*g).rv[k] += gv * d[k];
      (*g).d[k] += dot(ta.axis, (*f).rw[k]) + dot(gv, (*f).rv[k]);
    }
  }
  for (var k = 0u; k < n; k++) {   // the forward's last turn first
    let a = (*f).a[k];
    let sl = (*f).sl[k];
    let r = arm_turn(a * (1.0 - sl), d[k]);
    let shift = a * sl * d[k];
    arm_unturn(t, f, k, r, shift, &pre);
    var gr = Quat(0.0, vec3<f32>(0.0));
    var gshift = vec3<f32>(0.0);
    for (var i = ARM_BSTART[t]; i < ARM_BSTART[t + 1u]; i++) {
      let b = ARM_BODIES[i];
      if (((ARM_SUB[b] >> k) & 1u) == 0u) { continue; }
      let gstep = adj_x[b] + adj_d[b];
      let mo = arm_moved_adj(r, pre.x[b] - (*f).p[k], gstep);
      let qm = qmul_adj(r, pre.q[b], adj_q[b]);
      gr = qadd(gr, qadd(mo.q, qm.a));
      adj_x[b] += mo.v;
      (*g).p[k] -= mo.v;
      adj_q[b] = qm.b;
      gshift += gstep;
    }
    let ta = arm_turn_adj(a * (1.0 - sl), d[k], gr);
    (*g).a[k] += ta.axis * (1.0 - sl) + gshift * (sl * d[k]);
    (*g).d[k] += ta.angle + dot(gshift, a) * sl;
  }
  // TH' = TH + sum_k d_k om_k (the full D_k, floating part included), at the input poses
  for (var i = ARM_BSTART[t]; i < ARM_BSTART[t + 1u]; i++) {
    let b = ARM_BODIES[i];
    for (var k = 0u; k < n; k++) {
      (*g).d[k] += dot(adj_th[b], arm_dir(f, k, b, floats).w);
      arm_dir_adj(f, g, k, b, floats, adj_th[b] * d[k], vec3<f32>(0.0));
    }
  }
}

// the gradients of K (the first n columns) and of the right-hand side (column n) of the tree's system, and of its
// coordinates q
struct SystemAdj { m: ArmAug, q: array<f32, ARM_MAX> }

// arm_limits in reverse from the gradient gd of its result d[2]; m: the system [K | rhs] (arm_system)
fn arm_limits_adj(t: u32, m: ptr<function, ArmAug>, n: u32, lim: ArmLimits, gd: array<f32, ARM_MAX>) -> SystemAdj {
  var out: SystemAdj;
  for (var r = 0u; r < ARM_R; r++) { for (var c = 0u; c < ARM_W; c++) { out.m[r][c] = 0.0; } }
  var glo: array<f32, ARM_MAX>;
  var ghi: array<f32, ARM_MAX>;
  for (var k = 0u; k < n; k++) { out.q[k] = 0.0; glo[k] = 0.0; ghi[k] = 0.0; }
  var g = gd;
  for (var ss = 2u; ss > 0u; ss--) {
    let sweep = ss - 1u;
    let pin = lim.pin[sweep];
    let held = lim.held[sweep];
    var s = arm_pinned(m, n, pin, held);
    for (var i = 0u; i < n; i++) { s[i][n] = g[i]; }
    arm_solve(&s, n, 1u);   // lambda = Kh^-1 g
    var gheld: array<f32, ARM_MAX>;
    for (var k = 0u; k < n; k++) { gheld[k] = 0.0; }
    for (var i = 0u; i < n; i++) {
      let lam = s[i][n];
      let fi = 1.0 - pin[i];
      out.m[i][n] += fi * lam;   // r_i = (1 - p_i) (rhs_i - sum_k K_ik p_k held_k) + p_i held_i
      gheld[i] += pin[i] * lam;
      for (var k = 0u; k < n; k++) {
        // Kh_ik = K_ik (1 - p_i) (1 - p_k) + [i == k] p_k
        out.m[i][k] += -lam * lim.d[sweep + 1u][k] * fi * (1.0 - pin[k]) - fi * lam * pin[k] * held[k];
        gheld[k] -= fi * lam * (*m)[i][k] * pin[k];
      }
    }
    for (var k = 0u; k < n; k++) {   // held = min(max(q + d, lo), hi) - q
      let x = lim.q[k] + lim.d[sweep][k];
      let g1 = grad_min(max(x, lim.lo[k]), lim.hi[k], gheld[k]);
      let g2 = grad_max(x, lim.lo[k], g1.x);
      g[k] = g2.x;
      out.q[k] += g2.x - gheld[k];
      glo[k] += g2.y;
      ghi[k] += g1.y;
    }
  }
  var s = *m;   // d_0 = K^-1 rhs
  for (var i = 0u; i < n; i++) { s[i][n] = g[i]; }
  arm_solve(&s, n, 1u);
  for (var i = 0u; i < n; i++) {
    out.m[i][n] += s[i][n];
    for (var k = 0u; k < n; k++) { out.m[i][k] -= s[i][n] * lim.d[0][k]; }
  }
  for (var k = 0u; k < n; k++) {   // lo = min(range_lo, q), hi = max(range_hi, q)
    let j = ARM_JOINTS[ARM_JSTART[t] + k];
    let gl = grad_min(p1(OFF_JNT_RANGE + 2u * j), lim.q[k], glo[k]);
    let gh = grad_max(p1(OFF_JNT_RANGE + 2u * j + 1u), lim.q[k], ghi[k]);
    gp1(OFF_JNT_RANGE + 2u * j, gl.x);
    gp1(OFF_JNT_RANGE + 2u * j + 1u, gh.x);
    out.q[k] += gl.y + gh.y;
  }
  return out;
}

// one armed tree's Newton step in reverse (armature_tree); the working state holds the stage's input
fn armature_tree_adj(t: u32, h: f32) {
  let n = ARM_JSTART[t + 1u] - ARM_JSTART[t];
  let floats = ARM_ANY_FLOATS && ARM_FLOATS[t] == 1u;
  var s = arm_solved(t, n, floats, h);
  var g: ArmGrad;
  for (var k = 0u; k < n; k++) {
    g.a[k] = vec3<f32>(0.0); g.n[k] = vec3<f32>(0.0); g.p[k] = vec3<f32>(0.0); g.rw[k] = vec3<f32>(0.0);
    g.rv[k] = vec3<f32>(0.0); g.d[k] = 0.0;
  }
  arm_motion_adj(t, &s.f, &g, n, floats, s.lim.d[2]);
  var sa = arm_limits_adj(t, &s.m, n, s.lim, g.d);
  arm_system_adj(t, &s.f, &g, n, floats, h, &sa);
  for (var k = 0u; k < n; k++) {
    if (sa.q[k] != 0.0) { arm_coord_adj(ARM_JOINTS[ARM_JSTART[t] + k], sa.q[k]); }
  }
  if (floats) { arm_float_adj(t, &s.f, &g, n); }
  arm_frame_adj(t, &g, n);
}

// the stage in reverse, tree by tree (their bodies are disjoint); the working state holds its input (restore_armature)
// and arm_qd0 the substep's joint rates (armature_start)
fn armature_adj(h: f32) {
  for (var j = 0u; j < NJOINT_ARR; j++) { arm_gqd0[j] = 0.0; }
  for (var t = 0u; t < NARMTREE; t++) { armature_tree_adj(t, h); }
}

// armature_start in reverse, at the substep's start state: qdot0_j = (child's minus parent's velocity, linear for a
// slide, angular for a hinge) . n_j, the joint's rate row there (arm_axis)
fn armature_start_adj() {
  for (var k = 0u; k < ARM_JSTART[NARMTREE]; k++) {
    let j = ARM_JOINTS[k];
    let g = arm_gqd0[j];
    let par = JNT_PARENT[j];
    let chi = JNT_CHILD[j];
    let s1 = gather_side(par);
    let s2 = gather_side(chi);
    var rel = body_angvel(chi) - body_angvel(par);
    if (JNT_TYPE[j] == SLIDE) { rel = body_vel(chi) - body_vel(par); }
    let ax = arm_axis_adj(j, s1, s2, vec3<f32>(0.0), rel * g);
    arm_rel_adj(j, ax.n * g, &adj_v, &adj_w);
  }
}

// arm_axis in reverse: the gradients ga of the joint's world axis a and gn of its rate row n to the sides' poses and
// the axes (a group's hinge: through limit_rows and hinge_angles_of, kernels/adjoint/hinges.wgsl). Returns the
// forward's (a, n), which it recomputes (armature_start_adj reads n)
fn arm_axis_adj(j: u32, s1: Side, s2: Side, ga: vec3<f32>, gn: vec3<f32>) -> ArmAxis {
  let axis = jv(OFF_JNT_AXIS_PARENT, j);
  if (grouped(j)) {
    let i = JNT_GINDEX[j];
    let k = group_params(members(j, 0u));
    let g = hinge_angles_of(k, s1, s2);
    var gw = limit_rows_adj(g, i, gn);
    if (i == 0u) { gw.a += ga; } else if (i == 1u) { gw.b += ga; } else { gw.c += ga; }
    hinge_angles_grad(j, s1, s2, k, vec3<f32>(0.0), gw);
    var w = array<vec3<f32>, 3>(g.w1, g.w2, g.w3);
    return ArmAxis(w[i], limit_rows(g)[i]);
  }
  let ro = rotate_adj(s1.q, axis, ga + gn);   // a lone joint's n is its a
  gather_side_adj(JNT_PARENT[j], side_adj_q(ro.q));
  gjv(OFF_JNT_AXIS_PARENT, j, ro.v);
  let a = rotate(s1.q, axis);
  return ArmAxis(a, a);
}

// hinge_angles_adj of group member j's group (kernels/adjoint/hinges.wgsl), from the gradients of its angles (gt) and
// world axes (gw), with the sides' quaternions' gradients added to the bodies' and the axes' to the members' rows
fn hinge_angles_grad(j: u32, s1: Side, s2: Side, k: GroupParams, gt: vec3<f32>, gw: Vec3Triple) {
  let aa = hinge_angles_adj(k, s1, s2, gt, gw);
  gather_side_adj(JNT_PARENT[j], side_adj_q(aa.q1));
  gather_side_adj(JNT_CHILD[j], side_adj_q(aa.q2));
  group_scatter(members(j, 0u), aa.k);
}
