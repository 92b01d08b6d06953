// The joint half of the velocity pass (oracle/joint_damping.py): joint damping and velocity drives as implicit
// impulses (M20 eq. 36), averaged per body like the position solve
fn joint_damping(h: f32) {
  for (var k = lane; k < NJOINT; k += LANES) {
    let j = JOINT_ORDER[k];  // distance joints carry no damping
    let t = JNT_TYPE[j];
    if (t == DISTANCE) { jc[j] = zero_corr(); continue; }
    let s1 = split_side(JNT_PARENT[j]);
    let s2 = split_side(JNT_CHILD[j]);
    var coef = p1(OFF_JNT_DAMPING + j);
    var goal = 0.0;
    let a = rotate(s1.q, jv(OFF_JNT_AXIS_PARENT, j));
    if (t == HINGE) {
      coef = coef + act_p(OFF_ACT_KV, JNT_POS_SERVO[j]) + act_p(OFF_ACT_KV, JNT_VEL_SERVO[j]);
      goal = act_ctrl(JNT_VEL_SERVO[j]);
    }
    var rel: vec3<f32>;
    if (t == SLIDE) { rel = a * dot(body_vel(JNT_CHILD[j]) - body_vel(JNT_PARENT[j]), a); }
    else {
      rel = body_angvel(JNT_CHILD[j]) - body_angvel(JNT_PARENT[j]);
      if (t == HINGE) { rel = a * (dot(rel, a) - goal); }
    }
    let nd = norm_dir(rel, 1e-12);
    var wgen: f32;
    if (t == SLIDE) { wgen = s1.im + s2.im; }
    else { wgen = inv_inertia_along(s1, nd.dir) + inv_inertia_along(s2, nd.dir); }
    let impulse = select(0.0, nd.len * min(coef * h, 1.0 / (wgen + 1e-30)), nd.on);
    let p = nd.dir * impulse;
    if (t == SLIDE) { jc[j] = Correction(p * s1.im, vec3<f32>(0.0), -(p * s2.im), vec3<f32>(0.0)); }
    else { jc[j] = Correction(vec3<f32>(0.0), world_inv_inertia(s1, p), vec3<f32>(0.0), -world_inv_inertia(s2, p)); }
  }
  barrier();   // every impulse written, and every joint's read of the velocities done
  for (var b = lane; b < NBODY; b += LANES) {
    let js = body_sum(b);
    let scale = 1.0 / max(COUNTS[b], 1.0);
    bv[b] = bv[b] + js[0] * scale;
    bw[b] = bw[b] + js[1] * scale;
  }
}
