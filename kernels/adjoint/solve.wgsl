// Adjoint of the solve stage (kernels/solve.wgsl, oracle/solve.py): one Jacobi iteration read in reverse. The
// forward moves each body by its averaged summed correction, x' = x + dx s, q' = add_rotation(q, dth s),
// D' = D + dx s, TH' = TH + dth s (s = RELAXATION / the body's count of joints and touching contacts, a discrete
// choice); every joint's and contact's correction came from the iteration's snapshot, so the body's gradient passes
// through unchanged and each constraint adds its sides' share (a contact also its D and TH's, and its slot's row's).

// joints = false: the contacts' pass after the armature stage (solve(h, false)), whose joint corrections are zero
// With LANES > 1 the joints and contacts run on their lanes and each body's lane gathers their records after them
fn solve_adj(h: f32, o: u32, joints: bool) {   // restore_iteration put the snapshot back; o: its record on the tape
  let lam0 = o + 13u * NBODY;   // the multipliers before the iteration
  for (var b = lane; b < NBODY; b += LANES) {
    let c = o + TAPE_SOLVE + 4u * b;   // the body's averaged rotation correction and scale (tape_solve)
    let scale = tape[c + 3u];
    let ar = add_rotation_adj(bq[b], t3(c), adj_q[b]);
    adj_q[b] = ar.q;
    adj_cx[b] = (adj_x[b] + adj_d[b]) * scale;
    adj_cth[b] = (adj_th[b] + ar.v) * scale;
  }
  barrier();
  if (joints) {
    for (var k = lane; k < NJOINT; k += LANES) {
      joint_correction_adj(JOINT_ORDER[k], h, lam0 + LAMW * JOINT_ORDER[k]);
    }
  }
  for (var k = lane; k < n_live_slots(); k += LANES) { contact_adj(live_slot(k), lam0 + NLAM_ARR, joints); }
  if (LANES == 1u) { return; }
  barrier();
  for (var b = lane; b < NBODY; b += LANES) {   // the joints' records in JOINT_ORDER, then the slots'
    for (var k = 0u; k < NJOINT; k++) {
      let j = JOINT_ORDER[k];
      if (!joints) { break; }
      if (JNT_PARENT[j] == i32(b)) { add_rec(false, b, j, 0u); }
      if (JNT_CHILD[j] == i32(b)) { add_rec(false, b, j, 1u); }
    }
    gather_slots(false, b, NJOINT);
  }
}

fn tlam3(o: u32) -> vec3<f32> { return vec3<f32>(tape[o], tape[o + 1u], tape[o + 2u]); }
fn glam3(l: u32) -> vec3<f32> { return vec3<f32>(adj_lam[l], adj_lam[l + 1u], adj_lam[l + 2u]); }
fn set_glam3(l: u32, g: vec3<f32>) { adj_lam[l] = g.x; adj_lam[l + 1u] = g.y; adj_lam[l + 2u] = g.z; }
// a hinge's or a group's six multipliers: before the iteration from the tape at t, their gradients at l
fn tape_lam6(t: u32) -> array<f32, 6> {
  var a: array<f32, 6>;
  for (var i = 0u; i < 6u; i++) { a[i] = tape[t + i]; }
  return a;
}
fn adj_lam6(l: u32) -> array<f32, 6> {
  var a: array<f32, 6>;
  for (var i = 0u; i < 6u; i++) { a[i] = adj_lam[l + i]; }
  return a;
}
fn set_adj_lam6(l: u32, a: array<f32, 6>) { for (var i = 0u; i < 6u; i++) { adj_lam[l + i] = a[i]; } }

// joint_correction's adjoint: from joint j's Correction's gradient and its
// multipliers' after the iteration, the gradients of its sides, its parameters and its multipliers before; t: where
// the multipliers before are on the tape. HAS_<TYPE> (the header's) leaves out the types the scene does not have
fn joint_correction_adj(j: u32, h: f32, t: u32) {
  let s1 = split_side(JNT_PARENT[j]);
  let s2 = split_side(JNT_CHILD[j]);
  let g = joint_corr_grad(j);
  let l = LAMW * j;
  let ty = JNT_TYPE[j];
  let comp = OFF_JNT_COMPLIANCE + j;
  var a1: SideAdj;
  var a2: SideAdj;
  if (HAS_BALL && ty == BALL) {
    let pa = attach_adj(s1, s2, jv(OFF_JNT_ANCHOR_PARENT, j), jv(OFF_JNT_ANCHOR_CHILD, j), tlam3(t),
                        alpha_tilde(j, h), g, glam3(l));
    a1 = pa.s1; a2 = pa.s2;
    gjv(OFF_JNT_ANCHOR_PARENT, j, pa.r1); gjv(OFF_JNT_ANCHOR_CHILD, j, pa.r2); gp1(comp, pa.at / (h * h));
    set_glam3(l, pa.lam);
  } else if (HAS_HINGE && ty == HINGE) {
    let a = JNT_POS_SERVO[j];
    let kp = select(1.0, act_p(OFF_ACT_KP, a), a >= 0);
    let k = HingeParams(jv(OFF_JNT_AXIS_PARENT, j), jv(OFF_JNT_AXIS_CHILD, j), jv(OFF_JNT_REF_PARENT, j),
                        jv(OFF_JNT_REF_CHILD, j), jv(OFF_JNT_ANCHOR_PARENT, j), jv(OFF_JNT_ANCHOR_CHILD, j),
                        p1(comp), p1(OFF_JNT_LIMITED + j), p1(OFF_JNT_RANGE + 2u * j), p1(OFF_JNT_RANGE + 2u * j + 1u),
                        select(0.0, select(1.0, 2.0, a >= 0), POS_SERVOS), act_ctrl(a), 1.0 / kp);
    let ha = hinge_adj(s1, s2, k, tape_lam6(t), h, g, adj_lam6(l));
    a1 = ha.s1; a2 = ha.s2;
    gjv(OFF_JNT_AXIS_PARENT, j, ha.prm.axis_p); gjv(OFF_JNT_AXIS_CHILD, j, ha.prm.axis_c);
    gjv(OFF_JNT_REF_PARENT, j, ha.prm.ref_p); gjv(OFF_JNT_REF_CHILD, j, ha.prm.ref_c);
    gjv(OFF_JNT_ANCHOR_PARENT, j, ha.prm.anchor_p); gjv(OFF_JNT_ANCHOR_CHILD, j, ha.prm.anchor_c);
    gp1(comp, ha.prm.compliance);
    gp1(OFF_JNT_RANGE + 2u * j, ha.prm.lo); gp1(OFF_JNT_RANGE + 2u * j + 1u, ha.prm.hi);
    set_adj_lam6(l, ha.lam);
    if (a >= 0) {   // the servo's target clip(ctrl) and compliance 1 / kp
      act_ctrl_adj(a, ha.prm.goal);
      gp1(OFF_ACT_KP + u32(a), -ha.prm.servo_comp / (kp * kp));
    }
  } else if (HAS_FIXED && ty == FIXED) {
    let fa = fixed_adj(s1, s2, p4q(OFF_JNT_RELQUAT + 4u * j), jv(OFF_JNT_ANCHOR_PARENT, j),
                       jv(OFF_JNT_ANCHOR_CHILD, j), p1(comp), vec4<f32>(tape[t], tlam3(t + 1u)), h, g,
                       vec4<f32>(adj_lam[l], glam3(l + 1u)));
    a1 = fa.s1; a2 = fa.s2;
    gp4q(OFF_JNT_RELQUAT + 4u * j, fa.rel);
    gjv(OFF_JNT_ANCHOR_PARENT, j, fa.anchor_p); gjv(OFF_JNT_ANCHOR_CHILD, j, fa.anchor_c); gp1(comp, fa.compliance);
    adj_lam[l] = fa.lam.x;
    set_glam3(l + 1u, fa.lam.yzw);
  } else if (HAS_DISTANCE && ty == DISTANCE) {
    let da = distance_adj(s1, s2, jv(OFF_JNT_ANCHOR_PARENT, j), jv(OFF_JNT_ANCHOR_CHILD, j),
                          p1(OFF_JNT_LENGTH + j), p1(comp), tape[t], h, g, adj_lam[l]);
    a1 = da.s1; a2 = da.s2;
    gjv(OFF_JNT_ANCHOR_PARENT, j, da.anchor_p); gjv(OFF_JNT_ANCHOR_CHILD, j, da.anchor_c);
    gp1(OFF_JNT_LENGTH + j, da.length); gp1(comp, da.compliance);
    adj_lam[l] = da.lam;
  } else if (grouped(j)) {   // the group's rows on its first hinge, the others' zero
    a1 = side_adj_zero(); a2 = side_adj_zero();
    if (members(j, 0u) == j) {
      let ga = group_adj(s1, s2, group_params(j), tape_lam6(t), h, g, adj_lam6(l));
      a1 = ga.s1; a2 = ga.s2;
      group_scatter(j, ga.prm);
      set_adj_lam6(l, ga.lam);
    }
  } else if (HAS_SLIDE || HAS_PLANAR || HAS_SLIDE2) {   // the slide, planar and slide2 joints: the slide's frame
    let k = SlideParams(jv(OFF_JNT_AXIS_PARENT, j), jv(OFF_JNT_ANCHOR_PARENT, j), jv(OFF_JNT_ANCHOR_CHILD, j),
                        p4q(OFF_JNT_RELQUAT + 4u * j), p1(comp), p1(OFF_JNT_LIMITED + j), p1(OFF_JNT_RANGE + 2u * j),
                        p1(OFF_JNT_RANGE + 2u * j + 1u));
    var prm: SlideParams;
    if (HAS_SLIDE && ty == SLIDE) {
      let sa = slide_adj(s1, s2, k, tlam3(t), h, g, glam3(l));
      a1 = sa.s1; a2 = sa.s2; prm = sa.prm;
      set_glam3(l, sa.lam);
    } else if (HAS_PLANAR && ty == PLANAR) {
      let pa = planar_adj(s1, s2, k, jv(OFF_JNT_AXIS_CHILD, j), vec2<f32>(tape[t], tape[t + 1u]), h, g,
                          vec2<f32>(adj_lam[l], adj_lam[l + 1u]));
      a1 = pa.s1; a2 = pa.s2; prm = pa.prm;
      gjv(OFF_JNT_AXIS_CHILD, j, pa.axis_c);
      adj_lam[l] = pa.lam.x; adj_lam[l + 1u] = pa.lam.y;
    } else if (HAS_SLIDE2) {
      let sa = slide2_adj(s1, s2, k, jv(OFF_JNT_REF_PARENT, j), range2(j), vec4<f32>(tlam3(t), tape[t + 3u]), h, g,
                          vec4<f32>(glam3(l), adj_lam[l + 3u]));
      a1 = sa.s1; a2 = sa.s2; prm = sa.prm;
      gjv(OFF_JNT_REF_PARENT, j, sa.ref_p);
      set_glam3(l, sa.lam.xyz); adj_lam[l + 3u] = sa.lam.w;
    }
    gjv(OFF_JNT_AXIS_PARENT, j, prm.axis_p); gjv(OFF_JNT_ANCHOR_PARENT, j, prm.anchor_p);
    gjv(OFF_JNT_ANCHOR_CHILD, j, prm.anchor_c); gp4q(OFF_JNT_RELQUAT + 4u * j, prm.relquat);
    gp1(comp, prm.compliance);
    gp1(OFF_JNT_RANGE + 2u * j, prm.lo); gp1(OFF_JNT_RANGE + 2u * j + 1u, prm.hi);
  }
  item_side(false, j, 0u, JNT_PARENT[j], a1, split_count(JNT_PARENT[j]), vec3<f32>(0.0), vec3<f32>(0.0));
  item_side(false, j, 1u, JNT_CHILD[j], a2, split_count(JNT_CHILD[j]), vec3<f32>(0.0), vec3<f32>(0.0));
}
