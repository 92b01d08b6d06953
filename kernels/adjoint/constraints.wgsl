// Adjoints of the joint constraints (kernels/constraints.wgsl, oracle/constraints/), for the backward kernel (issue
// 17); the slide family's (slide, planar, slide2) are in kernels/adjoint/slides.wgsl. They take the joint's
// parameters as values (the forward reads them with jv / p1), so that the stage's adjoint can sum the parameters'
// gradients per joint.

// ---------------------------------------------------------------- constraints/ball.py

// attach: r_i = rotate(q_i, anchor_i), point(s1, s2, r1, r2, (x1 + r1) - (x2 + r2), lam, at). The gradients of the
// anchors come back in r1 and r2, of d in d (unused: d is an intermediate), the rest as point_adj's
fn attach_adj(s1: Side, s2: Side, anchor1: vec3<f32>, anchor2: vec3<f32>, lv: vec3<f32>, at: f32, g: Correction,
              glam: vec3<f32>) -> PointAdj {
  let r1 = rotate(s1.q, anchor1);
  let r2 = rotate(s2.q, anchor2);
  var pa = point_adj(s1, s2, r1, r2, (s1.x + r1) - (s2.x + r2), lv, at, g, glam);
  let ro1 = rotate_adj(s1.q, anchor1, pa.r1 + pa.d);
  let ro2 = rotate_adj(s2.q, anchor2, pa.r2 - pa.d);
  pa.s1.x = pa.s1.x + pa.d;
  pa.s2.x = pa.s2.x - pa.d;
  pa.s1.q = qadd(pa.s1.q, ro1.q);
  pa.s2.q = qadd(pa.s2.q, ro2.q);
  pa.r1 = ro1.v;
  pa.r2 = ro2.v;
  pa.d = vec3<f32>(0.0);
  return pa;
}

// ---------------------------------------------------------------- constraints/hinge.py

// a hinge's parameters (the forward reads them from prm), and their gradients in the same shape. The position servo
// (oracle/actuators.py servo_target): servo 0 when no hinge of the scene has one (the stage is absent), 1 when others
// do but this one has none (the oracle applies its zero correction), 2 when it has one, with the target angle goal
// (the clipped control) and the compliance servo_comp = 1 / kp
struct HingeParams { axis_p: vec3<f32>, axis_c: vec3<f32>, ref_p: vec3<f32>, ref_c: vec3<f32>, anchor_p: vec3<f32>,
                     anchor_c: vec3<f32>, compliance: f32, limited: f32, lo: f32, hi: f32, servo: f32, goal: f32,
                     servo_comp: f32 }
// gradients of a hinge's inputs: the sides, the parameters and the six multipliers before the iteration
struct HingeAdj { s1: SideAdj, s2: SideAdj, prm: HingeParams, lam: array<f32, 6> }
struct AngleAdj { q1: Quat, q2: Quat, axis_p: vec3<f32>, ref_p: vec3<f32>, ref_c: vec3<f32> }

// hinge_angle: phi = atan2((n1 x n2).a, n1.n2), a = rotate(q1, axis_p), n1 = rotate(q1, ref_p), n2 = rotate(q2,
// ref_c); gphi and ga: the gradients of the angle and of the world axis
fn hinge_angle_adj(s1: Side, s2: Side, k: HingeParams, gphi: f32, ga_: vec3<f32>) -> AngleAdj {
  let a = rotate(s1.q, k.axis_p);
  let n1 = rotate(s1.q, k.ref_p);
  let n2 = rotate(s2.q, k.ref_c);
  let c = cross(n1, n2);
  let gyx = atan2_adj(dot(c, a), dot(n1, n2), gphi);
  let cr = cross_adj(n1, n2, a * gyx.x);
  let ra = rotate_adj(s1.q, k.axis_p, ga_ + c * gyx.x);
  let r1 = rotate_adj(s1.q, k.ref_p, n2 * gyx.y + cr.a);
  let r2 = rotate_adj(s2.q, k.ref_c, n1 * gyx.y + cr.b);
  return AngleAdj(qadd(ra.q, r1.q), r2.q, ra.v, r1.v, r2.v);
}

// wrap(x) = atan2(sin x, cos x) (kernels/constraints.wgsl)
fn wrap_adj(x: f32, g: f32) -> f32 {
  let gyx = atan2_adj(sin(x), cos(x), g);
  return gyx.x * cos(x) - gyx.y * sin(x);
}

// align_axes (kernels/constraints.wgsl) from the axes' values: its correction, which the adjoint replays, with the
// sides' inverse inertias as matrices (inertia_world), which align_axes_adj's angular_align_adj reads again
fn align_axes_of(s1: Side, s2: Side, axis_p: vec3<f32>, axis_c: vec3<f32>) -> Correction {
  let a1 = rotate(s1.q, axis_p);
  let al = norm_dir(cross(rotate(s2.q, axis_c), a1), EPS);
  let w1 = inertia_world(s1);
  let w2 = inertia_world(s2);
  let k = w1 + w2;
  let v = cross(a1, al.dir);
  let sol = align_from(al.dir, v, k * al.dir, k * v, al.len, al.on);
  let p = al.dir * sol.pu + v * sol.pv;   // align_corr's turn
  return Correction(vec3<f32>(0.0), w1 * p, vec3<f32>(0.0), -(w2 * p));
}

// align_axes then apply, in reverse: angular_align about n = (a2 x a1) / |a2 x a1| by theta = |a2 x a1|. From the
// gradients of the moved sides (gs1, gs2), of the constraint's total correction (g) and of the multiplier after,
// the gradients of the sides before, of both axes and of the multiplier before
struct AlignAdj { s1: SideAdj, s2: SideAdj, axis_p: vec3<f32>, axis_c: vec3<f32>, lam: f32 }
fn align_axes_adj(s1: Side, s2: Side, axis_p: vec3<f32>, axis_c: vec3<f32>, align: Correction, lam: f32,
                  gs1: SideAdj, gs2: SideAdj, g: Correction, glam: f32) -> AlignAdj {
  let a1 = rotate(s1.q, axis_p);
  let a2 = rotate(s2.q, axis_c);
  let al = norm_dir(cross(a2, a1), EPS);
  let q = apply_pair_adj(s1, s2, align, gs1, gs2, g);
  let aa = angular_align_adj(s1, s2, a1, al.dir, al.len, al.on, lam, q.c, glam);
  let cr = cross_adj(a2, a1, norm_dir_adj(cross(a2, a1), EPS, aa.err, aa.n));
  let r1 = rotate_adj(s1.q, axis_p, aa.r1 + cr.b);
  let r2 = rotate_adj(s2.q, axis_c, cr.a);
  return AlignAdj(side_adj_add(side_adj_add(q.s1, aa.s1), SideAdj(vec3<f32>(0.0), r1.q, 0.0, vec3<f32>(0.0))),
                  side_adj_add(side_adj_add(q.s2, aa.s2), SideAdj(vec3<f32>(0.0), r2.q, 0.0, vec3<f32>(0.0))),
                  r1.v, r2.v, aa.lam);
}

// hinge (oracle/constraints/hinge.py): the forward replayed to keep each stage's sides, then the stages in reverse.
// The limit and the servo run only where they fire, as in the forward kernel. The oracle applies their zero
// correction anyway, which re-normalises the sides' quaternions: a projection that the align stage's apply_adj
// (the adjoint of a normalisation at the same unit quaternion) applies again, so skipping it changes rounding only.
// A stage that does not fire passes its multiplier's gradient through and gives its parameters none. (On lavapipe
// the skip saved little time: the pendulum's backward step measured the same, 2026-11-25.)
fn hinge_adj(s1_0: Side, s2_0: Side, k: HingeParams, lam: array<f32, 6>, h: f32, g: Correction,
             glam: array<f32, 6>) -> HingeAdj {
  // forward: 1. align
  let align = align_axes_of(s1_0, s2_0, k.axis_p, k.axis_c);
  let s1_1 = apply(s1_0, align.dx1, align.dth1);
  let s2_1 = apply(s2_0, align.dx2, align.dth2);
  // 2. limits, where the angle leaves [lo, hi]
  var s1_2 = s1_1;
  var s2_2 = s2_1;
  var ph = vec4<f32>(0.0);
  var violated = false;
  if (k.limited > 0.0) {
    ph = hinge_angle_of(s1_1, s2_1, k.axis_p, k.ref_p, k.ref_c);
    violated = ph.x < k.lo || ph.x > k.hi;
  }
  let lerr = min(max(ph.x, k.lo), k.hi) - ph.x;
  var limit = zero_corr();
  if (violated) {
    limit = angular_dlam(s1_1, s2_1, ph.yzw, lerr, true, lam[1], 0.0).c;
    s1_2 = apply(s1_1, limit.dx1, limit.dth1);
    s2_2 = apply(s2_1, limit.dx2, limit.dth2);
  }
  // 3. position servo: angular about the axis by wrap(goal - angle), compliance 1/kp
  let son = k.servo > 1.5;
  let sat = k.servo_comp / (h * h);
  var s1_3 = s1_2;
  var s2_3 = s2_2;
  var sv = vec4<f32>(0.0);
  var servo = zero_corr();
  if (son) {
    sv = hinge_angle_of(s1_2, s2_2, k.axis_p, k.ref_p, k.ref_c);
    servo = angular_dlam(s1_2, s2_2, sv.yzw, wrap(k.goal - sv.x), true, lam[5], sat).c;
    s1_3 = apply(s1_2, servo.dx1, servo.dth1);
    s2_3 = apply(s2_2, servo.dx2, servo.dth2);
  }
  let at = k.compliance / (h * h);
  // reverse: 4. attach
  var out: HingeAdj;
  let pa = attach_adj(s1_3, s2_3, k.anchor_p, k.anchor_c, vec3<f32>(lam[2], lam[3], lam[4]), at, g,
                      vec3<f32>(glam[2], glam[3], glam[4]));
  out.prm.anchor_p = pa.r1;
  out.prm.anchor_c = pa.r2;
  out.prm.compliance = pa.at / (h * h);
  out.lam[1] = glam[1];
  out.lam[2] = pa.lam.x;
  out.lam[3] = pa.lam.y;
  out.lam[4] = pa.lam.z;
  out.lam[5] = glam[5];
  // 3. the servo: apply, then angular with err = wrap(goal - angle) about the axis
  var gs1_2 = pa.s1;
  var gs2_2 = pa.s2;
  if (son) {
    let serr = k.goal - sv.x;
    let p = apply_pair_adj(s1_2, s2_2, servo, pa.s1, pa.s2, g);
    let sa = angular_adj(s1_2, s2_2, sv.yzw, wrap(serr), true, lam[5], sat, p.c, glam[5]);
    out.lam[5] = sa.lam;
    out.prm.servo_comp = sa.at / (h * h);
    let gerr = wrap_adj(serr, sa.err);
    out.prm.goal = gerr;
    let an = hinge_angle_adj(s1_2, s2_2, k, -gerr, sa.n);
    out.prm.axis_p = an.axis_p;
    out.prm.ref_p = an.ref_p;
    out.prm.ref_c = an.ref_c;
    gs1_2 = side_adj_add(side_adj_add(p.s1, sa.s1), SideAdj(vec3<f32>(0.0), an.q1, 0.0, vec3<f32>(0.0)));
    gs2_2 = side_adj_add(side_adj_add(p.s2, sa.s2), SideAdj(vec3<f32>(0.0), an.q2, 0.0, vec3<f32>(0.0)));
  }
  // 2. limits: apply, then angular with err = clamp(phi, lo, hi) - phi about the axis
  var gs1_1 = gs1_2;
  var gs2_1 = gs2_2;
  if (violated) {
    let p = apply_pair_adj(s1_1, s2_1, limit, gs1_2, gs2_2, g);
    let la = angular_adj(s1_1, s2_1, ph.yzw, lerr, true, lam[1], 0.0, p.c, glam[1]);
    out.lam[1] = la.lam;
    let below = ph.x < k.lo;
    out.prm.lo = select(0.0, la.err, below);
    out.prm.hi = select(la.err, 0.0, below);
    let an = hinge_angle_adj(s1_1, s2_1, k, -la.err, la.n);
    out.prm.axis_p = out.prm.axis_p + an.axis_p;
    out.prm.ref_p = out.prm.ref_p + an.ref_p;
    out.prm.ref_c = out.prm.ref_c + an.ref_c;
    gs1_1 = side_adj_add(side_adj_add(p.s1, la.s1), SideAdj(vec3<f32>(0.0), an.q1, 0.0, vec3<f32>(0.0)));
    gs2_1 = side_adj_add(side_adj_add(p.s2, la.s2), SideAdj(vec3<f32>(0.0), an.q2, 0.0, vec3<f32>(0.0)));
  }
  // 1. align
  let aa = align_axes_adj(s1_0, s2_0, k.axis_p, k.axis_c, align, lam[0], gs1_1, gs2_1, g, glam[0]);
  out.lam[0] = aa.lam;
  out.prm.axis_p = out.prm.axis_p + aa.axis_p;
  out.prm.axis_c = aa.axis_c;
  out.s1 = aa.s1;
  out.s2 = aa.s2;
  return out;
}

// ---------------------------------------------------------------- constraints/fixed.py

// lock_orientation: dq = (q1 rel) conj(q2), sign = -1 where dq.w < 0, (theta, n) = norm_dir(2 sign dq.v), then
// angular_lock
struct LockAdj { s1: SideAdj, s2: SideAdj, rel: Quat, lam: f32 }
fn lock_orientation_adj(s1: Side, s2: Side, rel: Quat, lam: f32, g: Correction, glam: f32) -> LockAdj {
  let q1r = qmul(s1.q, rel);
  let dq = qmul(q1r, conj(s2.q));
  let sgn = select(1.0, -1.0, dq.w < 0.0);
  let nd = rest_turn(s1.q, s2.q, rel);
  let la = angular_lock_adj(s1, s2, nd.dir, nd.len, nd.on, lam, g, glam);
  let gv = norm_dir_adj(dq.v * (2.0 * sgn), EPS, la.err, la.n) * (2.0 * sgn);
  let m2 = qmul_adj(q1r, conj(s2.q), Quat(0.0, gv));
  let m1 = qmul_adj(s1.q, rel, m2.a);
  var gs1 = la.s1;
  var gs2 = la.s2;
  gs1.q = qadd(gs1.q, m1.a);
  gs2.q = qadd(gs2.q, conj(m2.b));
  return LockAdj(gs1, gs2, m1.b, la.lam);
}

// fixed: lock_orientation, apply, attach; lam = (orientation, 3 of the anchors)
struct FixedAdj { s1: SideAdj, s2: SideAdj, rel: Quat, anchor_p: vec3<f32>, anchor_c: vec3<f32>, compliance: f32,
                  lam: vec4<f32> }
fn fixed_adj(s1_0: Side, s2_0: Side, rel: Quat, anchor_p: vec3<f32>, anchor_c: vec3<f32>, compliance: f32,
             lam: vec4<f32>, h: f32, g: Correction, glam: vec4<f32>) -> FixedAdj {
  let od = rest_turn(s1_0.q, s2_0.q, rel);
  let orient = turn(s1_0, s2_0, lock_impulse(s1_0, s2_0, od.dir, od.len, od.on));   // without angular_lock's lam
  let s1_1 = apply(s1_0, orient.dx1, orient.dth1);
  let s2_1 = apply(s2_0, orient.dx2, orient.dth2);
  let pa = attach_adj(s1_1, s2_1, anchor_p, anchor_c, lam.yzw, compliance / (h * h), g, glam.yzw);
  let p = apply_pair_adj(s1_0, s2_0, orient, pa.s1, pa.s2, g);
  let lo = lock_orientation_adj(s1_0, s2_0, rel, lam.x, p.c, glam.x);
  return FixedAdj(side_adj_add(p.s1, lo.s1), side_adj_add(p.s2, lo.s2), lo.rel, pa.r1, pa.r2,
                  pa.at / (h * h), vec4<f32>(lo.lam, pa.lam));
}

// ---------------------------------------------------------------- constraints/distance.py

// distance: (len, n) = norm_dir(p1 - p2), positional along n by len - length; lam = its one multiplier
struct DistanceAdj { s1: SideAdj, s2: SideAdj, anchor_p: vec3<f32>, anchor_c: vec3<f32>, length: f32,
                     compliance: f32, lam: f32 }
fn distance_adj(s1: Side, s2: Side, anchor_p: vec3<f32>, anchor_c: vec3<f32>, length: f32, compliance: f32,
                lam: f32, h: f32, g: Correction, glam: f32) -> DistanceAdj {
  let r1 = rotate(s1.q, anchor_p);
  let r2 = rotate(s2.q, anchor_c);
  let d = (s1.x + r1) - (s2.x + r2);
  let nd = norm_dir(d, EPS);
  let pa = positional_adj(s1, s2, r1, r2, nd.dir, nd.len - length, nd.on, lam, compliance / (h * h), g, glam);
  let gd = norm_dir_adj(d, EPS, pa.err, pa.n);
  let ro1 = rotate_adj(s1.q, anchor_p, pa.r1 + gd);
  let ro2 = rotate_adj(s2.q, anchor_c, pa.r2 - gd);
  var gs1 = pa.s1;
  var gs2 = pa.s2;
  gs1.x = gs1.x + gd;
  gs2.x = gs2.x - gd;
  gs1.q = qadd(gs1.q, ro1.q);
  gs2.q = qadd(gs2.q, ro2.q);
  return DistanceAdj(gs1, gs2, ro1.v, ro2.v, -pa.err, pa.at / (h * h), pa.lam);
}

// ---------------------------------------------------------------- constraints/contact.py

// push: the correction is impulse_adj's for the impulse -p (p = n P, P = err / (w + 1e-30) where on). g and gmag:
// the gradients of the Correction and of P; the result's r1, r2 are oa's and ob's, n n's, err err's
fn push_adj(s1: Side, s2: Side, oa: vec3<f32>, ob: vec3<f32>, n: vec3<f32>, err: f32, on: bool, g: Correction,
            gmag: f32) -> CorrAdj {
  let w = inv_mass_at(s1, oa, n) + inv_mass_at(s2, ob, n);
  let mag = select(0.0, err / (w + 1e-30), on);
  let ia = impulse_adj(s1, s2, oa, ob, n * mag, false,
                       Correction(-g.dx1, -g.dth1, -g.dx2, -g.dth2));
  let gerr = select(0.0, dot(ia.p, n) + gmag, on) / (w + 1e-30);
  let m1 = inv_mass_at_adj(s1, oa, n, -gerr * mag);
  let m2 = inv_mass_at_adj(s2, ob, n, -gerr * mag);
  return CorrAdj(side_adj_add(ia.s1, m1.s), side_adj_add(ia.s2, m2.s), ia.r1 + m1.r, ia.r2 + m2.r,
                 ia.p * mag + m1.n + m2.n, gerr, 0.0, 0.0);
}

// contact slot i's adjoint (kernels/constraints.wgsl contact, replayed from the restored snapshot): from the
// gradients of its Correction (its bodies' summed corrections') and of its multipliers after (the slot's adjoint
// on the tape, kernels/adjoint/narrowphase.wgsl), the gradients of its sides, its bodies' D and TH and its row's
// n, ra and rb. lam0: where the iteration's contact multipliers before are on the tape; joints: the forward pass's
// (the depenetration allowance). The discrete choices (on, stick, the cap's side) are replayed; lambda' = lambda + P
// for both multipliers, so their gradients pass through unchanged (the friction coefficient enters only the stick
// test: no gradient here)
fn contact_adj(i: u32, lam0: u32, joints: bool) {
  let s1 = slot_side(i, 0u);
  let s2 = slot_side(i, 1u);
  let ba = slot_body(i, 0u);
  let bb = slot_body(i, 1u);
  let n = lv3(sl(i) + SLOT_NORMAL);
  let ce = contact_err(i, s1, s2, joints);
  let oa = ce.dep.oa;
  let ob = ce.dep.ob;
  let d = ce.dep.d;
  let err = ce.err;
  let on = ce.on;
  if (!on) { zero_item(NJOINT + i); return; }   // a zero correction, the multipliers unchanged
  let lam_n = tape[lam0 + 2u * i] + push(s1, s2, oa, ob, n, err, on).mag;
  let dp = ce.dp;
  let dpt = dp - n * dot(dp, n);
  let slip = norm_dir(dpt, EPS);
  let wt = inv_mass_at(s1, oa, slip.dir) + inv_mass_at(s2, ob, slip.dir);
  let stick = slip.on && ((tape[lam0 + 2u * i + 1u] + slip.len / (wt + 1e-30)) < scr[sl(i) + SLOT_FRICTION] * lam_n);
  let g1 = body_corr_grad(ba);
  let g2 = body_corr_grad(bb);
  let g = Correction(g1[0], g1[1], g2[0], g2[1]);
  let a = slot_grads(i);
  // static friction: push along the slip's direction by its length
  let fr = push_adj(s1, s2, oa, ob, slip.dir, slip.len, stick, g, tape[a + SA_LAMBDA_T]);
  let gdpt = norm_dir_adj(dpt, EPS, fr.err, fr.n);
  let gs = -dot(n, gdpt);                      // dpt = dp - n s, s = dp.n
  var gdp = gdpt + n * gs;
  var gn = gdpt * -dot(dp, n);
  // the normal push; with the cap err = min(raw, max(room, 0)), room = dp.n + allowance: the gradient goes to the
  // smaller side, halved on a tie, and through max(room, 0) where room > 0 (halved at 0), as tinygrad's min and max
  let nm = push_adj(s1, s2, oa, ob, n, err, on, g, tape[a + SA_LAMBDA_N]);
  var graw = nm.err;
  if (DEPEN > 0.0) {
    let cap = max(ce.room, 0.0);
    let tie = select(0.0, 0.5, cap == ce.raw);
    let gcap = nm.err * select(tie, 1.0, cap < ce.raw) * select(select(0.0, 0.5, ce.room == 0.0), 1.0, ce.room > 0.0);
    graw = nm.err * select(tie, 1.0, ce.raw < cap);
    gdp = gdp + n * gcap;
    gn = gn + dp * gcap;
  }
  gn = gn + dp * gs;
  var goa = fr.r1 + cross(gdp, body_rot(ba));  // dp = (D_a + TH_a x oa) - (D_b + TH_b x ob)
  var gob = fr.r2 - cross(gdp, body_rot(bb));
  // raw = d (or its softplus: max(d, 0) + log(1 + exp(-|d| beta)) / beta, tinygrad's tie halves)
  var gd = graw;
  if (CONTACT_BETA > 0.0) {
    let e = exp(-(abs(d) * CONTACT_BETA));
    gd = graw * (select(select(0.0, 0.5, d == 0.0), 1.0, d > 0.0) - sign(d) * e / (e + 1.0));
  }
  gn = gn + nm.n + ((s1.x + oa) - (s2.x + ob)) * gd;   // d = ((x1 + oa) - (x2 + ob)).n
  goa = goa + nm.r1 + n * gd;
  gob = gob + nm.r2 - n * gd;
  var a1 = side_adj_add(fr.s1, nm.s1);
  var a2 = side_adj_add(fr.s2, nm.s2);
  a1.x = a1.x + n * gd;
  a2.x = a2.x - n * gd;
  let r1 = rotate_adj(s1.q, lv3(sl(i) + SLOT_RA), goa);   // oa = rotate(q_a, ra), ob = rotate(q_b, rb)
  let r2 = rotate_adj(s2.q, lv3(sl(i) + SLOT_RB), gob);
  a1.q = qadd(a1.q, r1.q);
  a2.q = qadd(a2.q, r2.q);
  item_side(false, NJOINT + i, 0u, ba, a1, 1.0, gdp, cross(oa, gdp));
  item_side(false, NJOINT + i, 1u, bb, a2, 1.0, -gdp, -cross(ob, gdp));
  add_slot_adj3(a + SA_NORMAL, gn);
  add_slot_adj3(a + SA_RA, r1.v);
  add_slot_adj3(a + SA_RB, r2.v);
}
