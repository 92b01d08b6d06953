// Spatial tendons (oracle/tendon.py, function by function): site motion, the tendons' lengths and rates, and the
// loads a tension puts on a body. The header's tables give each site's body (SITE_BODY) and each segment's tendon
// and sites (SEG_TENDON, SEG_A, SEG_B), in the oracle's segments() order.

// this lane's copy of every tendon's length, rate and tension (each lane computes them for the bodies it loads)
var<private> ten_len: array<f32, NTENDON_ARR>;
var<private> ten_rate: array<f32, NTENDON_ARR>;
var<private> ten_force: array<f32, NTENDON_ARR>;
// each segment's direction, from tendon_state (tendon_loads reuses it for every body of the lane)
var<private> seg_u: array<vec3<f32>, NSEG_ARR>;

struct SiteMotion { p: vec3<f32>, v: vec3<f32>, arm: vec3<f32>, body: i32 }

fn site_motion(s: u32) -> SiteMotion {
  let b = SITE_BODY[s];
  let side = gather_side(b);
  let arm = rotate(side.q, p3(OFF_SITE_POS + 3u * s));
  return SiteMotion(side.x + arm, body_vel(b) + cross(body_angvel(b), arm), arm, b);
}

// segment k's direction, length and rate (norm_dir: a segment shorter than EPS has length 0 and a direction of
// length < EPS, as in the oracle)
struct Segment { u: vec3<f32>, len: f32, rate: f32 }
fn segment(k: u32) -> Segment {
  let a = site_motion(SEG_A[k]);
  let b = site_motion(SEG_B[k]);
  let nd = norm_dir(b.p - a.p, EPS);
  return Segment(nd.dir, nd.len, dot(nd.dir, b.v - a.v));
}

fn tendon_state() {
  for (var t = 0u; t < NTENDON; t++) { ten_len[t] = 0.0; ten_rate[t] = 0.0; }
  for (var k = 0u; k < NSEG; k++) {
    let s = segment(k);
    seg_u[k] = s.u;
    ten_len[SEG_TENDON[k]] = ten_len[SEG_TENDON[k]] + s.len;
    ten_rate[SEG_TENDON[k]] = ten_rate[SEG_TENDON[k]] + s.rate;
  }
}

fn tendon_spring(t: u32) -> f32 {
  return -p1(OFF_TEN_STIFFNESS + t) * (ten_len[t] - p1(OFF_TEN_LENGTH + t)) - p1(OFF_TEN_DAMPING + t) * ten_rate[t];
}

// body b's (force, torque) from the tensions ten_force: F u at each segment's second site, -F u at its first (u:
// seg_u, as tendon_state left it; a site's arm is computed only on its own body)
struct Load { f: vec3<f32>, t: vec3<f32> }
fn tendon_loads(b: i32) -> Load {
  var out = Load(vec3<f32>(0.0), vec3<f32>(0.0));
  let q = gather_side(b).q;
  for (var k = 0u; k < NSEG; k++) {
    let on_b = SITE_BODY[SEG_B[k]] == b;
    let on_a = SITE_BODY[SEG_A[k]] == b;
    if (!on_a && !on_b) { continue; }
    let f = seg_u[k] * ten_force[SEG_TENDON[k]];
    if (on_b) { out.f = out.f + f; out.t = out.t + cross(rotate(q, p3(OFF_SITE_POS + 3u * SEG_B[k])), f); }
    if (on_a) { out.f = out.f - f; out.t = out.t - cross(rotate(q, p3(OFF_SITE_POS + 3u * SEG_A[k])), f); }
  }
  return out;
}
