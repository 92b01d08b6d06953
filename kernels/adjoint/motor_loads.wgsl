// Adjoint of the motor_loads stage (kernels/motor_loads.wgsl, oracle/motor_loads.py): per motor, load = rotate(q1,
// axis) clip(ctrl) gear (a hinge of a group: its limit row n_i instead, kernels/adjoint/hinges.wgsl group_row_adj);
// the child gets (load sl, load (1 - sl)), the parent (-f, -t - (x2 - x1) x f), f = load sl (sl = 1 for a slide
// joint); then the tendons' loads (kernels/adjoint/tendon.wgsl). Reads adj_f, adj_t (integrate_adj's) and the
// substep's start state.

fn body_grad3(a: ptr<env, array<vec3<f32>, NBODY_ARR>>, b: i32) -> vec3<f32> {
  if (b < 0) { return vec3<f32>(0.0); }
  return (*a)[u32(b)];
}

fn motor_loads_adj() {
  for (var k = 0u; k < NMOTOR; k++) {
    let a = MOTORS[k];
    let j = u32(ACT_JOINT[a]);
    let p = JNT_PARENT[j];
    let c = JNT_CHILD[j];
    let s1 = gather_side(p);
    let s2 = gather_side(c);
    // a hinge of a group: along its limit row n_i (kernels/motor_loads.wgsl)
    let in_group = grouped(j);
    var axis = rotate(s1.q, jv(OFF_JNT_AXIS_PARENT, j));
    var ga = HingeAngles(vec3<f32>(0.0), vec3<f32>(0.0), vec3<f32>(0.0), vec3<f32>(0.0));
    if (in_group) { ga = hinge_angles(members(j, 0u), s1, s2); axis = limit_rows(ga)[JNT_GINDEX[j]]; }
    let u = act_ctrl(i32(a));
    let gear = p1(OFF_ACT_GEAR + a);
    let sl = select(0.0, 1.0, JNT_TYPE[j] == SLIDE);
    let gtp = body_grad3(&adj_t, p);
    let cr = cross_adj(s2.x - s1.x, axis * (u * gear * sl), -gtp);
    let gload = (body_grad3(&adj_f, c) - body_grad3(&adj_f, p) + cr.b) * sl
                + (body_grad3(&adj_t, c) - gtp) * (1.0 - sl);
    let gk = dot(gload, axis);
    var q1 = Quat(0.0, vec3<f32>(0.0));
    var q2 = q1;
    if (in_group) {
      let lead = members(j, 0u);
      let aa = group_row_adj(group_params(lead), s1, s2, ga, JNT_GINDEX[j], gload * (u * gear), vec3<f32>(0.0));
      group_scatter(lead, aa.k);
      q1 = aa.q1;
      q2 = aa.q2;
    } else {
      let ro = rotate_adj(s1.q, jv(OFF_JNT_AXIS_PARENT, j), gload * (u * gear));
      gjv(OFF_JNT_AXIS_PARENT, j, ro.v);
      q1 = ro.q;
    }
    gather_side_adj(p, SideAdj(-cr.a, q1, 0.0, vec3<f32>(0.0)));
    gather_side_adj(c, SideAdj(cr.a, q2, 0.0, vec3<f32>(0.0)));
    gp1(OFF_ACT_GEAR + a, gk * u);
    act_ctrl_adj(i32(a), gk * gear);
  }
  if (NTENDON > 0u) { tendon_loads_adj(); }
}
