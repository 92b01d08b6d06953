// Adjoints of the tendons (kernels/tendon.wgsl, oracle/tendon.py): the loads a tension puts on the bodies, the
// tendons' lengths and rates, the spring, and the sites' motion, into the start state's and the parameters'
// gradients. motor_loads_adj drives them (kernels/adjoint/motor_loads.wgsl).

// d loss / d each tendon's tension, length and rate
var<private> ten_gforce: array<f32, NTENDON_ARR>;
var<private> ten_glen: array<f32, NTENDON_ARR>;
var<private> ten_grate: array<f32, NTENDON_ARR>;

// site s's (position, velocity, arm) gradients into its body's pose and velocities and the site's position
fn site_motion_adj(s: u32, gp: vec3<f32>, gv: vec3<f32>, garm: vec3<f32>) {
  let b = SITE_BODY[s];
  let side = gather_side(b);
  let local = p3(OFF_SITE_POS + 3u * s);
  let arm = rotate(side.q, local);
  let cr = cross_adj(body_angvel(b), arm, gv);
  let ro = rotate_adj(side.q, local, gp + garm + cr.b);
  gather_side_adj(b, SideAdj(gp, ro.q, 0.0, vec3<f32>(0.0)));
  if (b >= 0) { adj_v[u32(b)] += gv; adj_w[u32(b)] += cr.a; }
  gp3(OFF_SITE_POS + 3u * s, ro.v);
}

// segment k's (direction, length, rate) gradients, plus its sites' arm gradients from the loads
fn segment_adj(k: u32, gu: vec3<f32>, glen: f32, grate: f32, garm_a: vec3<f32>, garm_b: vec3<f32>) {
  let a = site_motion(SEG_A[k]);
  let b = site_motion(SEG_B[k]);
  let nd = norm_dir(b.p - a.p, EPS);
  let gd = norm_dir_adj(b.p - a.p, EPS, glen, gu + (b.v - a.v) * grate);
  site_motion_adj(SEG_B[k], gd, nd.dir * grate, garm_b);
  site_motion_adj(SEG_A[k], -gd, -nd.dir * grate, garm_a);
}

struct SegmentLoadAdj { gu: vec3<f32>, garm_a: vec3<f32>, garm_b: vec3<f32> }
// segment k's load (F u at its second site, -F u at its first) given the bodies' load gradients adj_f, adj_t: the
// gradients of u and of the arms; adds d loss / d F to ten_gforce when `tension` is set
fn segment_loads_adj(k: u32, tension: bool) -> SegmentLoadAdj {
  let a = site_motion(SEG_A[k]);
  let b = site_motion(SEG_B[k]);
  let u = segment(k).u;
  let t = SEG_TENDON[k];
  let f = u * ten_force[t];
  let cb = cross_adj(b.arm, f, body_grad3(&adj_t, b.body));
  let ca = cross_adj(a.arm, f, -body_grad3(&adj_t, a.body));
  let gf = body_grad3(&adj_f, b.body) - body_grad3(&adj_f, a.body) + cb.b + ca.b;
  if (tension) { ten_gforce[t] += dot(gf, u); }
  return SegmentLoadAdj(gf * ten_force[t], ca.a, cb.a);
}

fn tendon_spring_adj(t: u32, g: f32) {
  let k = p1(OFF_TEN_STIFFNESS + t);
  let c = p1(OFF_TEN_DAMPING + t);
  ten_glen[t] += -k * g;
  ten_grate[t] += -c * g;
  gp1(OFF_TEN_STIFFNESS + t, -(ten_len[t] - p1(OFF_TEN_LENGTH + t)) * g);
  gp1(OFF_TEN_LENGTH + t, k * g);
  gp1(OFF_TEN_DAMPING + t, -ten_rate[t] * g);
}

// the tendons' part of motor_loads, reversed: ten_len, ten_rate and ten_force hold the substep's values (motor_loads
// ran from its start state)
fn tendon_loads_adj() {
  for (var t = 0u; t < NTENDON; t++) { ten_gforce[t] = 0.0; ten_glen[t] = 0.0; ten_grate[t] = 0.0; }
  for (var k = 0u; k < NSEG; k++) { _ = segment_loads_adj(k, true); }
  for (var t = 0u; t < NTENDON; t++) { tendon_spring_adj(t, ten_gforce[t]); muscle_force_adj(t, ten_gforce[t]); }
  for (var k = 0u; k < NSEG; k++) {
    let l = segment_loads_adj(k, false);
    segment_adj(k, l.gu, ten_glen[SEG_TENDON[k]], ten_grate[SEG_TENDON[k]], l.garm_a, l.garm_b);
  }
}
