// Adjoint of the joint_damping stage (kernels/joint_damping.wgsl, oracle/joint_damping.py): each joint's implicit
// impulse replayed from the velocity pass's input (restored from the tape), then read in reverse; the velocities
// pass through the per-body average unchanged (v' = v + sum s, s = 1 / the body's count).

fn joint_damping_adj(h: f32) {
  for (var b = 0u; b < NBODY; b++) {
    let scale = 1.0 / max(COUNTS[b], 1.0);
    adj_cx[b] = adj_v[b] * scale;
    adj_cth[b] = adj_w[b] * scale;
  }
  for (var k = 0u; k < NJOINT; k++) {
    let j = JOINT_ORDER[k];
    let t = JNT_TYPE[j];
    if (t == DISTANCE || t == PLANAR || t == SLIDE2) { continue; }   // these joints carry no damping
    let par = JNT_PARENT[j];
    let chi = JNT_CHILD[j];
    let s1 = split_side(par);
    let s2 = split_side(chi);
    if (grouped(j)) { grouped_damping_adj(j, s1, s2, h); continue; }
    let d = damping_impulse(j, s1, s2, h);   // the forward's, replayed
    let nd = d.nd;
    let impulse = d.impulse;
    let p = nd.dir * impulse;
    // reverse: the Correction's gradient to the impulse p and the sides
    let g = joint_corr_grad(j);
    var g1 = side_adj_zero();
    var g2 = side_adj_zero();
    var gp: vec3<f32>;
    if (t == SLIDE) {
      gp = g.dx1 * s1.im - g.dx2 * s2.im;
      g1.im = dot(g.dx1, p);
      g2.im = -dot(g.dx2, p);
    } else {
      let w1 = world_inv_inertia_adj(s1, p, g.dth1);
      let w2 = world_inv_inertia_adj(s2, p, -g.dth2);
      gp = w1.v + w2.v;
      g1 = w1.s;
      g2 = w2.s;
    }
    var gdir = gp * impulse;
    let gimp = select(0.0, dot(gp, nd.dir), nd.on);
    let gm = gimp * nd.len;
    // min(coef h, cap) as tinygrad differentiates it (a tie splits the gradient)
    let ch = d.coef * h;
    let gcoef = gm * h * select(select(0.0, 0.5, ch == d.cap), 1.0, ch < d.cap);
    let gw = -gm * select(select(0.0, 0.5, ch == d.cap), 1.0, d.cap < ch) * d.cap * d.cap;
    if (t == SLIDE) { g1.im = g1.im + gw; g2.im = g2.im + gw; }
    else {
      let i1 = inv_inertia_along_adj(s1, nd.dir, gw);
      let i2 = inv_inertia_along_adj(s2, nd.dir, gw);
      g1 = side_adj_add(g1, i1.s);
      g2 = side_adj_add(g2, i2.s);
      gdir = gdir + i1.v + i2.v;
    }
    let grel = norm_dir_adj(d.rel, 1e-12, gimp * d.m, gdir);
    var gdv = grel;
    var ga = vec3<f32>(0.0);
    if (t == SLIDE || t == HINGE) {
      let galong = dot(grel, d.a);
      ga = grel * d.along + d.dv * galong;
      gdv = d.a * galong;
      if (t == HINGE) { act_ctrl_adj(JNT_VEL_SERVO[j], -galong); }
    }
    if (t == SLIDE) {
      if (chi >= 0) { adj_v[u32(chi)] = adj_v[u32(chi)] + gdv; }
      if (par >= 0) { adj_v[u32(par)] = adj_v[u32(par)] - gdv; }
    } else {
      if (chi >= 0) { adj_w[u32(chi)] = adj_w[u32(chi)] + gdv; }
      if (par >= 0) { adj_w[u32(par)] = adj_w[u32(par)] - gdv; }
    }
    let ro = rotate_adj(s1.q, jv(OFF_JNT_AXIS_PARENT, j), ga);
    g1.q = qadd(g1.q, ro.q);
    gjv(OFF_JNT_AXIS_PARENT, j, ro.v);
    gp1(OFF_JNT_DAMPING + j, gcoef * JNT_UNARMED[j]);   // coef = damping * JNT_UNARMED + kv
    if (t == HINGE) {
      let ps = JNT_POS_SERVO[j];
      let vs = JNT_VEL_SERVO[j];
      if (ps >= 0) { gp1(OFF_ACT_KV + u32(ps), gcoef); }
      if (vs >= 0) { gp1(OFF_ACT_KV + u32(vs), gcoef); }
    }
    split_side_adj(par, g1);
    split_side_adj(chi, g2);
  }
}

// grouped_damping (kernels/joint_damping.wgsl) in reverse, for a hinge j of a group: p = n (|rel| m), rel = u (dv . u),
// u the unit limit row n_i / |n_i|, m = min(d |n_i|^2 h, 1 / (wgen + 1e-30)); the row's gradient goes back through
// the group's angles (kernels/adjoint/hinges.wgsl group_row_adj)
fn grouped_damping_adj(j: u32, s1: Side, s2: Side, h: f32) {
  let lead = members(j, 0u);
  let k = group_params(lead);
  let i = JNT_GINDEX[j];
  let ga = hinge_angles_of(k, s1, s2);
  let row = limit_rows(ga)[i];
  let size = norm_dir(row, 1e-12);
  let par = JNT_PARENT[j];
  let chi = JNT_CHILD[j];
  let dv = body_angvel(chi) - body_angvel(par);
  let along = dot(dv, size.dir);
  let rel = size.dir * along;
  let nd = norm_dir(rel, 1e-12);
  let damp = p1(OFF_JNT_DAMPING + j) * JNT_UNARMED[j];
  let ch = damp * size.len * size.len * h;
  let wgen = inv_inertia_along(s1, nd.dir) + inv_inertia_along(s2, nd.dir);
  let cap = 1.0 / (wgen + 1e-30);
  let m = min(ch, cap);
  let imp = select(0.0, nd.len * m, nd.on);
  let p = nd.dir * imp;
  let g = joint_corr_grad(j);
  let w1 = world_inv_inertia_adj(s1, p, g.dth1);
  let w2 = world_inv_inertia_adj(s2, p, -g.dth2);
  let gp = w1.v + w2.v;
  var g1 = w1.s;
  var g2 = w2.s;
  var gdir = gp * imp;
  let gimp = select(0.0, dot(gp, nd.dir), nd.on);
  let gm = gimp * nd.len;
  let gmin = grad_min(ch, cap, gm);   // a tie splits the gradient, as tinygrad's minimum
  let gw = -gmin.y * cap * cap;
  let i1 = inv_inertia_along_adj(s1, nd.dir, gw);
  let i2 = inv_inertia_along_adj(s2, nd.dir, gw);
  g1 = side_adj_add(g1, i1.s);
  g2 = side_adj_add(g2, i2.s);
  gdir = gdir + i1.v + i2.v;
  let grel = norm_dir_adj(rel, 1e-12, gimp * m, gdir);
  let galong = dot(grel, size.dir);
  let gdv = size.dir * galong;
  if (chi >= 0) { adj_w[u32(chi)] = adj_w[u32(chi)] + gdv; }
  if (par >= 0) { adj_w[u32(par)] = adj_w[u32(par)] - gdv; }
  gp1(OFF_JNT_DAMPING + j, gmin.x * size.len * size.len * h * JNT_UNARMED[j]);
  let grow = norm_dir_adj(row, 1e-12, gmin.x * damp * 2.0 * size.len * h, grel * along + dv * galong);
  let aa = group_row_adj(k, s1, s2, ga, i, grow, vec3<f32>(0.0));
  group_scatter(lead, aa.k);
  g1.q = qadd(g1.q, aa.q1);
  g2.q = qadd(g2.q, aa.q2);
  split_side_adj(par, g1);
  split_side_adj(chi, g2);
}
