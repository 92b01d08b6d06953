// The constraints of oracle/constraints/, one function per registered name (CONSTRAINTS: ball, hinge, fixed,
// distance, contact here; slide, planar and slide2 in kernels/slides.wgsl) with its helpers, in the oracle's file
// order and names. A joint's multipliers are lam[LAMW j ..] (kernels/xpbd_step.wgsl), in the oracle's tuple order; a
// contact's are in its slot.

// ---------------------------------------------------------------- constraints/__init__.py

fn alpha_tilde(j: u32, h: f32) -> f32 { return p1(OFF_JNT_COMPLIANCE + j) / (h * h); }   // alpha / h^2

// ---------------------------------------------------------------- constraints/ball.py

// shared point attachment of ball, hinge and fixed joints; lam[li .. li + 3]
fn attach(j: u32, s1: Side, s2: Side, li: u32, h: f32) -> Correction {
  let r1 = rotate(s1.q, jv(OFF_JNT_ANCHOR_PARENT, j));
  let r2 = rotate(s2.q, jv(OFF_JNT_ANCHOR_CHILD, j));
  return point(s1, s2, r1, r2, (s1.x + r1) - (s2.x + r2), li, alpha_tilde(j, h));
}

fn ball(j: u32, s1: Side, s2: Side, h: f32) -> Correction { return attach(j, s1, s2, LAMW * j, h); }

// ---------------------------------------------------------------- constraints/hinge.py

// (angle, world axis) from the axis and reference vectors' values (kernels/adjoint/constraints.wgsl replays it)
fn hinge_angle_of(s1: Side, s2: Side, axis_p: vec3<f32>, ref_p: vec3<f32>, ref_c: vec3<f32>) -> vec4<f32> {
  let a = rotate(s1.q, axis_p);
  let n1 = rotate(s1.q, ref_p);
  let n2 = rotate(s2.q, ref_c);
  return vec4<f32>(atan2(dot(cross(n1, n2), a), dot(n1, n2)), a);
}
fn hinge_angle(j: u32, s1: Side, s2: Side) -> vec4<f32> {
  return hinge_angle_of(s1, s2, jv(OFF_JNT_AXIS_PARENT, j), jv(OFF_JNT_REF_PARENT, j), jv(OFF_JNT_REF_CHILD, j));
}
fn wrap(angle: f32) -> f32 { return atan2(sin(angle), cos(angle)); }   // to [-pi, pi]

// the child's axis onto the parent's (M20 eq. 20), always rigid; free about a1: step 1 of the hinge and the planar joint
fn align_axes(j: u32, s1: Side, s2: Side, l: u32) -> Correction {
  let a1 = rotate(s1.q, jv(OFF_JNT_AXIS_PARENT, j));
  let a2 = rotate(s2.q, jv(OFF_JNT_AXIS_CHILD, j));
  let al = norm_dir(cross(a2, a1), EPS);
  return angular_align(s1, s2, a1, al.dir, al.len, al.on, l);
}

fn hinge(j: u32, s1_: Side, s2_: Side, h: f32) -> Correction {
  var s1 = s1_;
  var s2 = s2_;
  let l = LAMW * j;
  // 1. align the axes
  let align = align_axes(j, s1, s2, l);
  s1 = apply(s1, align.dx1, align.dth1);
  s2 = apply(s2, align.dx2, align.dth2);
  // 2. limits (M20 Alg. 3). Branches where the oracle masks: an unlimited joint skips the angle (a quarter of the
  // pendulum's step on lavapipe), and a limit that holds skips its correction, which is zero (the oracle's only
  // differs by re-normalising the quaternions). Uniform across a SIMD group but for the violated test
  var tot = align;
  if (p1(OFF_JNT_LIMITED + j) > 0.0) {
    let ph = hinge_angle(j, s1, s2);
    let lo = p1(OFF_JNT_RANGE + 2u * j);
    let hi = p1(OFF_JNT_RANGE + 2u * j + 1u);
    if (ph.x < lo || ph.x > hi) {
      let limit = angular(s1, s2, ph.yzw, min(max(ph.x, lo), hi) - ph.x, true, l + 1u, 0.0);
      s1 = apply(s1, limit.dx1, limit.dth1);
      s2 = apply(s2, limit.dx2, limit.dth2);
      tot = chain(tot, limit);
    }
  }
  // 3. position servo: compliance 1/kp (M20 sec. 3.4.1)
  let a = JNT_POS_SERVO[j];
  if (a >= 0) {
    let ph = hinge_angle(j, s1, s2);
    let servo = angular(s1, s2, ph.yzw, wrap(act_ctrl(a) - ph.x), true, l + 5u, (1.0 / act_p(OFF_ACT_KP, a)) / (h * h));
    s1 = apply(s1, servo.dx1, servo.dth1);
    s2 = apply(s2, servo.dx2, servo.dth2);
    tot = chain(tot, servo);
  }
  // 4. attach the anchors
  return chain(tot, attach(j, s1, s2, l + 2u, h));
}

// ---------------------------------------------------------------- constraints/fixed.py

// the child keeps its rest orientation relative to the parent (shared by fixed and slide joints)
// the turn (theta, n) that brings the child to q1 rel: dq = (q1 rel) conj(q2), the shortest arc (kernels/adjoint
// replays it)
fn rest_turn(q1: Quat, q2: Quat, rel: Quat) -> NormDir {
  let dq = qmul(qmul(q1, rel), conj(q2));
  return norm_dir(dq.v * (2.0 * select(1.0, -1.0, dq.w < 0.0)), EPS);
}
fn lock_orientation(j: u32, s1: Side, s2: Side, li: u32) -> Correction {
  let nd = rest_turn(s1.q, s2.q, p4q(OFF_JNT_RELQUAT + 4u * j));
  return angular_lock(s1, s2, nd.dir, nd.len, nd.on, li);
}

fn fixed(j: u32, s1: Side, s2: Side, h: f32) -> Correction {
  let l = LAMW * j;
  let orient = lock_orientation(j, s1, s2, l);
  return chain(orient, attach(j, apply(s1, orient.dx1, orient.dth1), apply(s2, orient.dx2, orient.dth2), l + 1u, h));
}

// ---------------------------------------------------------------- constraints/distance.py

fn distance(j: u32, s1: Side, s2: Side, h: f32) -> Correction {
  let r1 = rotate(s1.q, jv(OFF_JNT_ANCHOR_PARENT, j));
  let r2 = rotate(s2.q, jv(OFF_JNT_ANCHOR_CHILD, j));
  let nd = norm_dir((s1.x + r1) - (s2.x + r2), EPS);
  return positional(s1, s2, r1, r2, nd.dir, nd.len - p1(OFF_JNT_LENGTH + j), nd.on, LAMW * j, alpha_tilde(j, h));
}

// ---------------------------------------------------------------- constraints/contact.py

// penetration depth d = (p_a - p_b) . n (> 0: overlapping) of contact slot i and the world offsets of its points
struct Depth { d: f32, oa: vec3<f32>, ob: vec3<f32> }
fn depth(i: u32, s1: Side, s2: Side) -> Depth {
  let oa = rotate(s1.q, lv3(sl(i) + SLOT_RA));
  let ob = rotate(s2.q, lv3(sl(i) + SLOT_RB));
  return Depth(dot((s1.x + oa) - (s2.x + ob), lv3(sl(i) + SLOT_NORMAL)), oa, ob);
}

// remove err along n at the points: impulse -P n on a, +P n on b (M20 eqs. 2-4, alpha~ = 0); P in .mag
struct Push { c: Correction, mag: f32 }
fn push(s1: Side, s2: Side, oa: vec3<f32>, ob: vec3<f32>, n: vec3<f32>, err: f32, on: bool) -> Push {
  let w = inv_mass_at(s1, oa, n) + inv_mass_at(s2, ob, n);
  let mag = select(0.0, err / (w + 1e-30), on);
  let p = n * mag;
  return Push(Correction(-(p * s1.im), -world_inv_inertia(s1, cross(oa, p)), p * s2.im,
                         world_inv_inertia(s2, cross(ob, p))), mag);
}

// contact slot i's depth at the snapshot (sides s1, s2), the error its normal push removes and whether it pushes:
// touching = valid && d > 0; raw = d where touching, or the softplus max(d, 0) + log(1 + exp(-|d| beta)) / beta
// wherever valid; err = min(raw, max(room, 0)) with a depenetration cap (DEPEN > 0), room = dp.n + the pass's
// allowance (depenetration), dp the points' relative motion since the substep began (D + TH x r, also static
// friction's). kernels/adjoint/constraints.wgsl contact_adj replays it
struct ContactErr { dep: Depth, err: f32, on: bool, touching: bool, dp: vec3<f32>, raw: f32, room: f32 }
fn contact_err(i: u32, s1: Side, s2: Side, joints: bool) -> ContactErr {
  let dep = depth(i, s1, s2);
  let d = dep.d;
  let valid = scr[sl(i) + SLOT_VALID] > 0.0;
  let touching = valid && d > 0.0;
  let ba = slot_body(i, 0u);
  let bb = slot_body(i, 1u);
  let dp = (body_disp(ba) + cross(body_rot(ba), dep.oa)) - (body_disp(bb) + cross(body_rot(bb), dep.ob));
  var raw = d;
  var on = touching;
  if (CONTACT_BETA > 0.0) {
    raw = max(d, 0.0) + log(exp(-(abs(d) * CONTACT_BETA)) + 1.0) / CONTACT_BETA;
    on = valid;
  }
  let room = dot(dp, lv3(sl(i) + SLOT_NORMAL)) + depenetration(joints);
  let err = select(raw, min(raw, max(room, 0.0)), DEPEN > 0.0);
  return ContactErr(dep, err, on, touching, dp, raw, room);
}

// normal then static friction of contact slot i from the Jacobi snapshot (M20 sec. 3.5); the slot's multipliers
// hold the previous iteration's (zero at a substep's first: init_lambda). Writes the slot's correction and
// (lambda_n, lambda_t, touching), the oracle's solve_contacts row. joints: whether this is a full Jacobi pass (the
// depenetration allowance, kernels/solve.wgsl)
fn contact(i: u32, joints: bool) {
  let s1 = slot_side(i, 0u);
  let s2 = slot_side(i, 1u);
  let n = lv3(sl(i) + SLOT_NORMAL);
  let ce = contact_err(i, s1, s2, joints);
  let oa = ce.dep.oa;
  let ob = ce.dep.ob;
  let err = ce.err;
  let on = ce.on;
  let touching = ce.touching;
  if (!on) {   // a branch where the oracle masks: no push, no friction (its stick needs on), a zero correction
    set_slot_corr(i, zero_corr());
    scr[sl(i) + SLOT_TOUCHING] = 0.0;
    return;
  }
  let normal = push(s1, s2, oa, ob, n, err, on);
  let lam_n = scr[sl(i) + SLOT_LAMBDA_N] + normal.mag;
  // static friction from the contact points' relative tangential motion since the substep began (the oracle says
  // why the snapshot's motion, without this contact's own normal correction)
  let dp = ce.dp;
  let dpt = dp - n * dot(dp, n);
  let slip = norm_dir(dpt, EPS);
  let w = inv_mass_at(s1, oa, slip.dir) + inv_mass_at(s2, ob, slip.dir);
  let pt = slip.len / (w + 1e-30);
  let stick = on && slip.on && ((scr[sl(i) + SLOT_LAMBDA_T] + pt) < scr[sl(i) + SLOT_FRICTION] * lam_n);
  let fr = push(s1, s2, oa, ob, slip.dir, slip.len, stick);
  set_slot_corr(i, chain(normal.c, fr.c));
  scr[sl(i) + SLOT_LAMBDA_T] = scr[sl(i) + SLOT_LAMBDA_T] + fr.mag;
  scr[sl(i) + SLOT_LAMBDA_N] = lam_n;
  scr[sl(i) + SLOT_TOUCHED] = max(scr[sl(i) + SLOT_TOUCHED], select(0.0, 1.0, touching));   // any iteration so far
  scr[sl(i) + SLOT_TOUCHING] = select(0.0, 1.0, touching);
}
