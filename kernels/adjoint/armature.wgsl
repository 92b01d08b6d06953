// Adjoint of the armature stage (kernels/armature.wgsl, oracle/armature.py): per armed tree, the Newton step read
// in reverse. armature_tree_adj recomputes the tree's forward from the stage's input (restored from the tape:
// tape_armature) and then reverses its operations from the last:
//   arm_motion_adj    the normalisation, the floating tree's rigid motion, then the turns (the forward applied them
//                     leaves first, n - 1 .. 0; each turn's input poses are replayed by arm_replay), and TH's first-order
//                     rotation sum_k d_k om_k;
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
// armature.py checks the whole against the float64 oracle's autograd.

var<private> arm_gqd0: array<f32, NJOINT_ARR>;   // d loss / d arm_qd0, which armature_start_adj takes to the start

// the gradients of a tree's frame, its floating part and its step, per joint of the tree
struct ArmGrad { a: array<vec3<f32>, ARM_MAX>, p: array<vec3<f32>, ARM_MAX>, rw: array<vec3<f32>, ARM_MAX>,
                 rv: array<vec3<f32>, ARM_MAX>, d: array<f32, ARM_MAX> }
struct ArmPoses { x: array<vec3<f32>, NBODY_ARR>, q: array<Quat, NBODY_ARR> }
struct TurnAdj { axis: vec3<f32>, angle: f32 }
struct InertiaAdj { w: vec3<f32>, q: Quat, ii: vec3<f32> }

// I_w w = R (I (R^T w)) of body b: the gradients of w, the body's quaternion and its inverse inertia
fn arm_inertia_adj(b: u32, w: vec3<f32>, g: vec3<f32>) -> InertiaAdj {
  let ii = p3(OFF_BODY_INV_INERTIA + 3u * b);
  let u = inv_rotate(bq[b], w);
  let ro = rotate_adj(bq[b], u / ii, g);
  let iro = inv_rotate_adj(bq[b], w, ro.v / ii);
  return InertiaAdj(iro.v, qadd(ro.q, iro.q), -ro.v * u / (ii * ii));
}
// arm_inertia_adj with the quaternion's and the inertia's gradients added to the body's; returns w's
fn arm_inertia_grad(b: u32, w: vec3<f32>, g: vec3<f32>) -> vec3<f32> {
  let ia = arm_inertia_adj(b, w, g);
  adj_q[b] = qadd(adj_q[b], ia.q);
  gp3(OFF_BODY_INV_INERTIA + 3u * b, ia.ii);
  return ia.w;
}
// a gradient of the mass 1 / inv_mass to inv_mass
fn arm_mass_grad(b: u32, gm: f32) {
  let mass = 1.0 / p1(OFF_BODY_INV_MASS + b);
  gp1(OFF_BODY_INV_MASS + b, -gm * mass * mass);
}

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

// the tree's poses as arm_motion leaves them after its turns n - 1 .. stop (stop = n: none), and after the floating
// tree's rigid motion too where `whole` (before the normalisation)
fn arm_replay(t: u32, f: ptr<function, ArmFrame>, n: u32, d: array<f32, ARM_MAX>, stop: u32, whole: bool) -> ArmPoses {
  var out: ArmPoses;
  for (var i = ARM_BSTART[t]; i < ARM_BSTART[t + 1u]; i++) { let b = ARM_BODIES[i]; out.x[b] = bx[b]; out.q[b] = bq[b]; }
  for (var k = n; k > stop; k--) {
    let kk = k - 1u;
    let r = arm_turn((*f).a[kk] * (1.0 - (*f).sl[kk]), d[kk]);
    let shift = (*f).a[kk] * (*f).sl[kk] * d[kk];
    for (var i = ARM_BSTART[t]; i < ARM_BSTART[t + 1u]; i++) {
      let b = ARM_BODIES[i];
      if (((ARM_SUB[b] >> kk) & 1u) == 0u) { continue; }
      out.x[b] = out.x[b] + arm_moved(r, out.x[b] - (*f).p[kk]) + shift;
      out.q[b] = qmul(r, out.q[b]);
    }
  }
  if (whole && ARM_FLOATS[t] == 1u) {
    let fl = arm_float_motion(f, n, d);
    let r = arm_turn(fl.w, 1.0);
    for (var i = ARM_BSTART[t]; i < ARM_BSTART[t + 1u]; i++) {
      let b = ARM_BODIES[i];
      out.x[b] = out.x[b] + arm_moved(r, out.x[b]) + fl.v;
      out.q[b] = qmul(r, out.q[b]);
    }
  }
  return out;
}

// arm_motion in reverse: the bodies' gradients (adj_x, adj_q, adj_d, adj_th) from the motion's output to its input,
// and the gradients of d and of the frame into g
fn arm_motion_adj(t: u32, f: ptr<function, ArmFrame>, g: ptr<function, ArmGrad>, n: u32, floats: bool,
                  d: array<f32, ARM_MAX>) {
  let fin = arm_replay(t, f, n, d, 0u, true);
  for (var i = ARM_BSTART[t]; i < ARM_BSTART[t + 1u]; i++) {
    let b = ARM_BODIES[i];
    adj_q[b] = normalize_q_adj(fin.q[b], adj_q[b]);
  }
  if (floats) {   // step = arm_moved(r, x) + V, q' = r q, r = arm_turn(W, 1); W, V = sum_k d_k (rw_k, rv_k)
    let pre = arm_replay(t, f, n, d, 0u, false);
    let fl = arm_float_motion(f, n, d);
    let r = arm_turn(fl.w, 1.0);
    var gr = Quat(0.0, vec3<f32>(0.0));
    var gv = vec3<f32>(0.0);
    for (var i = ARM_BSTART[t]; i < ARM_BSTART[t + 1u]; i++) {
      let b = ARM_BODIES[i];
      let gstep = adj_x[b] + adj_d[b];
      let mo = arm_moved_adj(r, pre.x[b], gstep);
      let qm = qmul_adj(r, pre.q[b], adj_q[b]);
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
    let pre = arm_replay(t, f, n, d, k + 1u, false);
    let a = (*f).a[k];
    let sl = (*f).sl[k];
    let r = arm_turn(a * (1.0 - sl), d[k]);
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

// the motors' load tau on armed joint j (arm_tau): gear and clipped control
fn arm_tau_adj(j: u32, g: f32) {
  for (var i = 0u; i < NARM_MOTOR; i++) {
    let a = ARM_MOTORS[i];
    if (u32(ACT_JOINT[a]) != j) { continue; }
    let gear = p1(OFF_ACT_GEAR + a);
    gp1(OFF_ACT_GEAR + a, g * act_ctrl(i32(a)));
    act_ctrl_adj(i32(a), g * gear);
  }
}

// the gradient g of joint j's child-minus-parent quantity (linear for a slide, angular for a hinge) to the bodies':
// in `lin` for a slide, in `ang` for a hinge
fn arm_rel_adj(j: u32, g: vec3<f32>, lin: ptr<private, array<vec3<f32>, NBODY_ARR>>,
               ang: ptr<private, array<vec3<f32>, NBODY_ARR>>) {
  let chi = u32(JNT_CHILD[j]);
  let par = JNT_PARENT[j];
  if (JNT_TYPE[j] == SLIDE) {
    (*lin)[chi] += g;
    if (par >= 0) { (*lin)[u32(par)] -= g; }
  } else {
    (*ang)[chi] += g;
    if (par >= 0) { (*ang)[u32(par)] -= g; }
  }
}

// arm_system in reverse from the gradients ga of [K | rhs]; adds to sa.q the spring's coordinate gradients
fn arm_system_adj(t: u32, f: ptr<function, ArmFrame>, g: ptr<function, ArmGrad>, n: u32, floats: bool, h: f32,
                  sa: ptr<function, SystemAdj>) {
  for (var k = 0u; k < n; k++) {
    let j = ARM_JOINTS[ARM_JSTART[t] + k];
    let gr = (*sa).m[k][n];
    let dq = arm_dq(f, j, k);
    let arm = JNT_ARMATURE[j];
    let c = p1(OFF_JNT_DAMPING + j);
    let kh2 = JNT_STIFFNESS[j] * h * h;
    // rhs_k += A (h qdot0 - dq) - c h dq - k h^2 (q - s) + h^2 tau;  K_kk += A + c h + k h^2
    gp1(OFF_JNT_DAMPING + j, (*sa).m[k][k] * h - gr * h * dq);
    arm_gqd0[j] += arm * h * gr;
    (*sa).q[k] -= kh2 * gr;
    arm_tau_adj(j, h * h * gr);
    let gdq = -(arm + c * h) * gr;   // dq = (child's minus parent's DISP or TH) . a_k
    var acc = body_rot(JNT_CHILD[j]) - body_rot(JNT_PARENT[j]);
    if (JNT_TYPE[j] == SLIDE) { acc = body_disp(JNT_CHILD[j]) - body_disp(JNT_PARENT[j]); }
    (*g).a[k] += acc * gdq;
    arm_rel_adj(j, (*f).a[k] * gdq, &adj_d, &adj_th);
  }
  for (var i = ARM_BSTART[t]; i < ARM_BSTART[t + 1u]; i++) {
    let b = ARM_BODIES[i];
    let mass = 1.0 / p1(OFF_BODY_INV_MASS + b);
    let gw = bth[b] - bw[b] * h;
    let gv = bd[b] - bv[b] * h;
    var tw: array<Twist, ARM_MAX>;
    var iom: array<vec3<f32>, ARM_MAX>;
    for (var k = 0u; k < n; k++) { tw[k] = arm_dir(f, k, b, floats); iom[k] = arm_inertia(b, tw[k].w); }
    var gm = 0.0;
    var ggw = vec3<f32>(0.0);
    var ggv = vec3<f32>(0.0);
    for (var k = 0u; k < n; k++) {
      let gr = (*sa).m[k][n];   // rhs_k -= iom_k . (x - x~)_w + m tw_k.v . (x - x~)_v
      var giom = -gw * gr;
      var gtw = -gv * (gr * mass);
      var gtww = vec3<f32>(0.0);
      ggw -= iom[k] * gr;
      ggv -= tw[k].v * (gr * mass);
      gm -= gr * dot(tw[k].v, gv);
      for (var i2 = 0u; i2 < n; i2++) {   // K_ik = tw_i.w . iom_k + m tw_i.v . tw_k.v
        giom += tw[i2].w * (*sa).m[i2][k];
        gtww += iom[i2] * (*sa).m[k][i2];
        gtw += tw[i2].v * (((*sa).m[i2][k] + (*sa).m[k][i2]) * mass);
        gm += (*sa).m[i2][k] * dot(tw[i2].v, tw[k].v);
      }
      gtww += arm_inertia_grad(b, tw[k].w, giom);
      arm_dir_adj(f, g, k, b, floats, gtww, gtw);
    }
    arm_mass_grad(b, gm);
    adj_th[b] += ggw;
    adj_w[b] -= ggw * h;
    adj_d[b] += ggv;
    adj_v[b] -= ggv * h;
  }
}

// the joints' coordinates (arm_coord: hinge_angle, slide_frame's x) from their gradients
fn arm_coord_adj(j: u32, gq: f32) {
  let par = JNT_PARENT[j];
  let chi = JNT_CHILD[j];
  let s1 = gather_side(par);
  let s2 = gather_side(chi);
  let zero = vec3<f32>(0.0);
  if (JNT_TYPE[j] == SLIDE) {
    let k = SlideParams(jv(OFF_JNT_AXIS_PARENT, j), jv(OFF_JNT_ANCHOR_PARENT, j), jv(OFF_JNT_ANCHOR_CHILD, j),
                        Quat(1.0, zero), 0.0, 0.0, 0.0, 0.0);
    let fa = slide_frame_adj(s1, s2, k, zero, zero, zero, gq);
    gather_side_adj(par, fa.s1);
    gather_side_adj(chi, fa.s2);
    gjv(OFF_JNT_AXIS_PARENT, j, fa.axis_p); gjv(OFF_JNT_ANCHOR_PARENT, j, fa.anchor_p);
    gjv(OFF_JNT_ANCHOR_CHILD, j, fa.anchor_c);
    return;
  }
  let k = HingeParams(jv(OFF_JNT_AXIS_PARENT, j), zero, jv(OFF_JNT_REF_PARENT, j), jv(OFF_JNT_REF_CHILD, j), zero,
                      zero, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
  let aa = hinge_angle_adj(s1, s2, k, gq, zero);
  gather_side_adj(par, SideAdj(zero, aa.q1, 0.0, zero));
  gather_side_adj(chi, SideAdj(zero, aa.q2, 0.0, zero));
  gjv(OFF_JNT_AXIS_PARENT, j, aa.axis_p); gjv(OFF_JNT_REF_PARENT, j, aa.ref_p); gjv(OFF_JNT_REF_CHILD, j, aa.ref_c);
}

// arm_float in reverse: from the gradients of (rw, rv) to the spatial inertia M6, the momenta of the joints' own
// motions (their twists without the floating part), and a planar root's normal
fn arm_float_adj(t: u32, f: ptr<function, ArmFrame>, g: ptr<function, ArmGrad>, n: u32) {
  let raw = arm_float_system(t, f, n);   // [M6 | R], R = -(momenta)
  var mp = raw;
  arm_in_plane(t, &mp, n);               // [M6' | R']
  var x = mp;
  arm_solve(&x, 6u, n);                  // X = M6'^-1 R' in columns 6..
  var lam = mp;
  for (var k = 0u; k < n; k++) {
    for (var r = 0u; r < 3u; r++) { lam[r][6u + k] = (*g).rw[k][r]; lam[r + 3u][6u + k] = (*g).rv[k][r]; }
  }
  arm_solve(&lam, 6u, n);                // Lambda = M6'^-1 g_X: g_R' = Lambda, g_M6' = -Lambda X^T
  var gm6: Mat6;
  var gr: array<array<f32, ARM_MAX>, 6>;
  for (var r = 0u; r < 6u; r++) {
    for (var c = 0u; c < 6u; c++) {
      var acc = 0.0;
      for (var k = 0u; k < n; k++) { acc -= lam[r][6u + k] * x[c][6u + k]; }
      gm6[r][c] = acc;
    }
    for (var k = 0u; k < n; k++) { gr[r][k] = lam[r][6u + k]; }
  }
  if (ARM_PLANE[t] >= 0) {   // M6' = P M6 P + I - P, R' = P R
    let pj = u32(ARM_PLANE[t]);
    let nrm = jv(OFF_JNT_AXIS_PARENT, pj);
    let P = arm_projector(nrm);
    // g_P = G P M6 + M6 P G - G + g_R' R^T (P and M6 symmetric), to the normal through nn^T's blocks
    var gp: Mat6;
    var pm: Mat6;   // P M6 (M6 P is its transpose)
    for (var r = 0u; r < 6u; r++) {
      for (var c = 0u; c < 6u; c++) {
        var acc = 0.0;
        for (var a = 0u; a < 6u; a++) { acc += P[r][a] * raw[a][c]; }
        pm[r][c] = acc;
      }
    }
    for (var r = 0u; r < 6u; r++) {
      for (var c = 0u; c < 6u; c++) {
        var acc = -gm6[r][c];
        for (var a = 0u; a < 6u; a++) { acc += gm6[r][a] * pm[a][c] + pm[a][r] * gm6[a][c]; }
        for (var k = 0u; k < n; k++) { acc += gr[r][k] * raw[c][6u + k]; }
        gp[r][c] = acc;
      }
    }
    var gn = vec3<f32>(0.0);
    for (var r = 0u; r < 3u; r++) {
      for (var c = 0u; c < 3u; c++) {
        let gnn = gp[r][c] - gp[r + 3u][c + 3u];
        gn[r] += gnn * nrm[c];
        gn[c] += gnn * nrm[r];
      }
    }
    gjv(OFF_JNT_AXIS_PARENT, pj, gn);
    var pg: Mat6;   // g_M6 = P G P, g_R = P g_R'
    var pr: array<array<f32, ARM_MAX>, 6>;
    for (var r = 0u; r < 6u; r++) {
      for (var c = 0u; c < 6u; c++) {
        var acc = 0.0;
        for (var a = 0u; a < 6u; a++) { for (var b = 0u; b < 6u; b++) { acc += P[r][a] * gm6[a][b] * P[b][c]; } }
        pg[r][c] = acc;
      }
      for (var k = 0u; k < n; k++) {
        var acc = 0.0;
        for (var a = 0u; a < 6u; a++) { acc += P[r][a] * gr[a][k]; }
        pr[r][k] = acc;
      }
    }
    gm6 = pg;
    gr = pr;
  }
  for (var i = ARM_BSTART[t]; i < ARM_BSTART[t + 1u]; i++) {   // arm_float_system, body by body
    let b = ARM_BODIES[i];
    let x = bx[b];
    let mass = 1.0 / p1(OFF_BODY_INV_MASS + b);
    var gm = 0.0;
    var gx = vec3<f32>(0.0);
    for (var c = 0u; c < 3u; c++) {
      var e = vec3<f32>(0.0);
      e[c] = 1.0;
      let gtop = vec3<f32>(gm6[0][c], gm6[1][c], gm6[2][c]);   // I_w e - m x x (x x e)
      let gbot = vec3<f32>(gm6[3][c], gm6[4][c], gm6[5][c]);   // -m x x e
      let gtrn = vec3<f32>(gm6[0][c + 3u], gm6[1][c + 3u], gm6[2][c + 3u]);   // m x x e
      let xe = cross(x, e);
      let ia = arm_inertia_adj(b, e, gtop);
      adj_q[b] = qadd(adj_q[b], ia.q);
      gp3(OFF_BODY_INV_INERTIA + 3u * b, ia.ii);
      let c1 = cross_adj(x, xe, -gtop * mass);
      let c2 = cross_adj(x, e, c1.b + (gtrn - gbot) * mass);
      gx += c1.a + c2.a;
      gm += -dot(gtop, cross(x, xe)) + dot(gtrn - gbot, xe) + gm6[c + 3u][c + 3u];
    }
    for (var k = 0u; k < n; k++) {   // R_k -= (I_w om + m x x ve, m ve)
      let d = arm_dir(f, k, b, false);
      let gang = -vec3<f32>(gr[0][k], gr[1][k], gr[2][k]);
      let glin = -vec3<f32>(gr[3][k], gr[4][k], gr[5][k]);
      let gdw = arm_inertia_grad(b, d.w, gang);
      let cx = cross_adj(x, d.v, gang * mass);
      gx += cx.a;
      gm += dot(gang, cross(x, d.v)) + dot(glin, d.v);
      arm_dir_adj(f, g, k, b, false, gdw, cx.b + glin * mass);
    }
    adj_x[b] += gx;
    arm_mass_grad(b, gm);
  }
}

// arm_frame in reverse: a_k = rotate(q_par, axis_p), p_k = x_par + rotate(q_par, anchor_p)
fn arm_frame_adj(t: u32, g: ptr<function, ArmGrad>, n: u32) {
  for (var k = 0u; k < n; k++) {
    let j = ARM_JOINTS[ARM_JSTART[t] + k];
    let par = gather_side(JNT_PARENT[j]);
    let ra = rotate_adj(par.q, jv(OFF_JNT_AXIS_PARENT, j), (*g).a[k]);
    let rp = rotate_adj(par.q, jv(OFF_JNT_ANCHOR_PARENT, j), (*g).p[k]);
    gather_side_adj(JNT_PARENT[j], SideAdj((*g).p[k], qadd(ra.q, rp.q), 0.0, vec3<f32>(0.0)));
    gjv(OFF_JNT_AXIS_PARENT, j, ra.v);
    gjv(OFF_JNT_ANCHOR_PARENT, j, rp.v);
  }
}

// one armed tree's Newton step in reverse (armature_tree); the working state holds the stage's input
fn armature_tree_adj(t: u32, h: f32) {
  let n = ARM_JSTART[t + 1u] - ARM_JSTART[t];
  let floats = ARM_FLOATS[t] == 1u;
  var s = arm_solved(t, n, floats, h);
  var g: ArmGrad;
  for (var k = 0u; k < n; k++) {
    g.a[k] = vec3<f32>(0.0); g.p[k] = vec3<f32>(0.0); g.rw[k] = vec3<f32>(0.0); g.rv[k] = vec3<f32>(0.0); g.d[k] = 0.0;
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
// slide, angular for a hinge) . rotate(q_parent, axis_p)
fn armature_start_adj() {
  for (var k = 0u; k < ARM_JSTART[NARMTREE]; k++) {
    let j = ARM_JOINTS[k];
    let g = arm_gqd0[j];
    let par = JNT_PARENT[j];
    let chi = u32(JNT_CHILD[j]);
    let qp = gather_side(par).q;
    let a0 = rotate(qp, jv(OFF_JNT_AXIS_PARENT, j));
    var rel = body_angvel(i32(chi)) - body_angvel(par);
    if (JNT_TYPE[j] == SLIDE) { rel = body_vel(i32(chi)) - body_vel(par); }
    arm_rel_adj(j, a0 * g, &adj_v, &adj_w);
    let ro = rotate_adj(qp, jv(OFF_JNT_AXIS_PARENT, j), rel * g);
    gather_side_adj(par, SideAdj(vec3<f32>(0.0), ro.q, 0.0, vec3<f32>(0.0)));
    gjv(OFF_JNT_AXIS_PARENT, j, ro.v);
  }
}
