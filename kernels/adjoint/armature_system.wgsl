// Adjoints of the armature stage's system (kernels/armature_system.wgsl): arm_system_adj, arm_coord_adj,
// arm_float_adj and arm_frame_adj with their helpers, which armature_tree_adj (kernels/adjoint/armature.wgsl, where
// the reversal's order is described) calls after arm_limits_adj. Left out of a backward program without armature, as
// kernels/adjoint/armature.wgsl is (kernels/program.py UNARMED).

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
fn arm_rel_adj(j: u32, g: vec3<f32>, lin: ptr<env, array<vec3<f32>, NBODY_ARR>>,
               ang: ptr<env, array<vec3<f32>, NBODY_ARR>>) {
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
    // dq = (child's minus parent's DISP or TH) . n_k (arm_dq)
    let gdq = -(arm + c * h) * gr;
    var acc = body_rot(JNT_CHILD[j]) - body_rot(JNT_PARENT[j]);
    if (JNT_TYPE[j] == SLIDE) { acc = body_disp(JNT_CHILD[j]) - body_disp(JNT_PARENT[j]); }
    (*g).n[k] += acc * gdq;
    arm_rel_adj(j, (*f).n[k] * gdq, &adj_d, &adj_th);
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

// the joints' coordinates (arm_coord: hinge_angle, a group's hinge_angles, slide_frame's x) from their gradients
fn arm_coord_adj(j: u32, gq: f32) {
  let par = JNT_PARENT[j];
  let chi = JNT_CHILD[j];
  let s1 = gather_side(par);
  let s2 = gather_side(chi);
  let zero = vec3<f32>(0.0);
  if (grouped(j)) {
    var gt = zero;
    gt[JNT_GINDEX[j]] = gq;
    hinge_angles_grad(j, s1, s2, group_params(members(j, 0u)), gt, Vec3Triple(zero, zero, zero));
    return;
  }
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

// arm_frame in reverse: (a_k, n_k) = arm_axis (a lone joint's both rotate(q_par, axis_p)), p_k = x_par +
// rotate(q_par, anchor_p)
fn arm_frame_adj(t: u32, g: ptr<function, ArmGrad>, n: u32) {
  for (var k = 0u; k < n; k++) {
    let j = ARM_JOINTS[ARM_JSTART[t] + k];
    let par = gather_side(JNT_PARENT[j]);
    _ = arm_axis_adj(j, par, gather_side(JNT_CHILD[j]), (*g).a[k], (*g).n[k]);
    let rp = rotate_adj(par.q, jv(OFF_JNT_ANCHOR_PARENT, j), (*g).p[k]);
    gather_side_adj(JNT_PARENT[j], SideAdj((*g).p[k], rp.q, 0.0, vec3<f32>(0.0)));
    gjv(OFF_JNT_ANCHOR_PARENT, j, rp.v);
  }
}
