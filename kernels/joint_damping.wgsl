// The joint half of the velocity pass (oracle/joint_damping.py): joint damping and velocity drives as implicit
// impulses (M20 eq. 36), averaged per body like the position solve
// joint j's damping impulse from its sides and the bodies' velocities, with the intermediates its adjoint needs
// (kernels/adjoint/joint_damping.wgsl): the world axis a; dv, the relative velocity whose part is damped (linear for
// a slide, angular otherwise); along = dv.a - goal (a velocity servo's target, else 0); rel, the damped part (a along
// for hinges and slides, dv otherwise) and its norm_dir; coef = damping + the servos' kv; cap = 1 / w_gen; m =
// min(coef h, cap); the impulse magnitude
struct Damping { a: vec3<f32>, dv: vec3<f32>, along: f32, rel: vec3<f32>, nd: NormDir, coef: f32, cap: f32, m: f32,
                 impulse: f32 }
fn damping_impulse(j: u32, s1: Side, s2: Side, h: f32) -> Damping {
  let t = JNT_TYPE[j];
  let par = JNT_PARENT[j];
  let chi = JNT_CHILD[j];
  var coef = p1(OFF_JNT_DAMPING + j) * JNT_UNARMED[j];   // an armed tree's damping is the armature stage's
  var goal = 0.0;
  let a = rotate(s1.q, jv(OFF_JNT_AXIS_PARENT, j));
  if (t == HINGE) {
    coef = coef + act_p(OFF_ACT_KV, JNT_POS_SERVO[j]) + act_p(OFF_ACT_KV, JNT_VEL_SERVO[j]);
    goal = act_ctrl(JNT_VEL_SERVO[j]);
  }
  var dv: vec3<f32>;
  if (t == SLIDE) { dv = body_vel(chi) - body_vel(par); } else { dv = body_angvel(chi) - body_angvel(par); }
  let along = dot(dv, a) - goal;
  var rel = dv;
  if (t == SLIDE || t == HINGE) { rel = a * along; }
  let nd = norm_dir(rel, 1e-12);
  var wgen: f32;
  if (t == SLIDE) { wgen = s1.im + s2.im; }
  else { wgen = inv_inertia_along(s1, nd.dir) + inv_inertia_along(s2, nd.dir); }
  let cap = 1.0 / (wgen + 1e-30);
  let m = min(coef * h, cap);
  return Damping(a, dv, along, rel, nd, coef, cap, m, select(0.0, nd.len * m, nd.on));
}

// a hinge of a group damps its own angle's rate along n_i (kernels/hinges.wgsl limit_rows): the hinge's rule along
// the unit n_i with the coefficient d |n_i|^2 (oracle/joint_damping.py _grouped); the angular impulse p
fn grouped_damping(j: u32, s1: Side, s2: Side, h: f32) -> vec3<f32> {
  let size = norm_dir(limit_rows(hinge_angles(members(j, 0u), s1, s2))[JNT_GINDEX[j]], 1e-12);
  let dv = body_angvel(JNT_CHILD[j]) - body_angvel(JNT_PARENT[j]);
  let nd = norm_dir(size.dir * dot(dv, size.dir), 1e-12);
  let coef = p1(OFF_JNT_DAMPING + j) * JNT_UNARMED[j] * size.len * size.len;
  let wgen = inv_inertia_along(s1, nd.dir) + inv_inertia_along(s2, nd.dir);
  return nd.dir * select(0.0, nd.len * min(coef * h, 1.0 / (wgen + 1e-30)), nd.on);
}

fn joint_damping(h: f32) {
  for (var k = lane; k < NJOINT; k += LANES) {
    let j = JOINT_ORDER[k];  // distance, planar and slide2 joints carry no damping
    let t = JNT_TYPE[j];
    if (t == DISTANCE || t == PLANAR || t == SLIDE2) { jc[j] = zero_corr(); continue; }
    let s1 = split_side(JNT_PARENT[j]);
    let s2 = split_side(JNT_CHILD[j]);
    if (grouped(j)) {
      let p = grouped_damping(j, s1, s2, h);
      jc[j] = Correction(vec3<f32>(0.0), world_inv_inertia(s1, p), vec3<f32>(0.0), -world_inv_inertia(s2, p));
      continue;
    }
    let d = damping_impulse(j, s1, s2, h);
    let p = d.nd.dir * d.impulse;
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
