// The motor_loads stage (oracle/motor_loads.py): hinge motors turn the child by +tau, the parent by -tau; slide
// motors push; the tendons' springs and muscles pull along their paths (kernels/tendon.wgsl, muscle.wgsl).
// Per body on its lane, its motors' loads added in motor order (the oracle's scatter order), then its tendon loads:
// no two lanes write a body. Each lane computes the tendons' tensions for itself.
fn motor_loads() {
  if (NTENDON > 0u) {
    tendon_state();
    for (var t = 0u; t < NTENDON; t++) { ten_force[t] = tendon_spring(t) + muscle_force(t); }
  }
  for (var b = lane; b < NBODY; b += LANES) {
    var f = vec3<f32>(0.0);
    var t = vec3<f32>(0.0);
    for (var k = 0u; k < NMOTOR; k++) {
      let a = MOTORS[k];
      let j = u32(ACT_JOINT[a]);
      let child = JNT_CHILD[j] == i32(b);
      if (!child && JNT_PARENT[j] != i32(b)) { continue; }
      let s1 = gather_side(JNT_PARENT[j]);
      let s2 = gather_side(JNT_CHILD[j]);
      var axis = rotate(s1.q, jv(OFF_JNT_AXIS_PARENT, j));
      if (grouped(j)) {   // a hinge of a group: along n_i alone
        axis = limit_rows(hinge_angles(members(j, 0u), s1, s2))[JNT_GINDEX[j]];
      }
      let load = axis * (act_ctrl(i32(a)) * p1(OFF_ACT_GEAR + a));
      let sl = select(0.0, 1.0, JNT_TYPE[j] == SLIDE);
      let f_child = load * sl;
      let t_child = load * (1.0 - sl);
      if (child) { f = f + f_child; t = t + t_child; }
      else { f = f - f_child; t = t + (-t_child - cross(s2.x - s1.x, f_child)); }
    }
    if (NTENDON > 0u) { let l = tendon_loads(i32(b)); f = f + l.f; t = t + l.t; }
    fext[b] = f;
    text[b] = t;
  }
}
