// Adjoints of the muscle curves (kernels/muscle.wgsl, oracle/muscle.py), each reversing its forward function branch
// by branch as tinygrad's autograd does: a where() sends the gradient to the branch it took, a maximum() splits it
// in halves at a tie (_floor), a clip() passes it where lo <= x <= hi. prm and its gradient: (range0, range1, force,
// scale, lmin, lmax, vmax, fpmax, fvmax).

fn _floor_adj(x: f32, g: f32) -> f32 { return g * select(select(0.0, 0.5, x == MUSCLE_MINVAL), 1.0, x > MUSCLE_MINVAL); }
fn clip01_adj(x: f32, g: f32) -> f32 { return select(0.0, g, x >= 0.0 && x <= 1.0); }

struct ForceScaleAdj { force: f32, scale: f32, acc0: f32 }
fn muscle_force_scale_adj(force: f32, scale: f32, acc0: f32, g: f32) -> ForceScaleAdj {
  if (force >= 0.0) { return ForceScaleAdj(g, 0.0, 0.0); }
  let d = _floor(acc0);
  return ForceScaleAdj(0.0, g / d, _floor_adj(acc0, -g * scale / (d * d)));
}

struct NormalisedAdj { length: f32, lr: vec2<f32>, range0: f32, range1: f32 }
fn muscle_normalised_adj(length: f32, lr: vec2<f32>, range0: f32, range1: f32, gl0: f32, gbig: f32) -> NormalisedAdj {
  let n = muscle_normalised(length, lr, range0, range1);
  let d2 = _floor(n.l0);
  let gl0_all = gl0 + _floor_adj(n.l0, -gbig * (length - lr.x) / (d2 * d2));
  let d1 = _floor(range1 - range0);
  let gd1 = _floor_adj(range1 - range0, -gl0_all * (lr.y - lr.x) / (d1 * d1));
  return NormalisedAdj(gbig / d2, vec2<f32>(-gbig / d2 - gl0_all / d1, gl0_all / d1), gbig - gd1, gd1);
}

// (d/d length, d/d lmin, d/d lmax)
fn muscle_gain_length_adj(length: f32, lmin: f32, lmax: f32, g: f32) -> vec3<f32> {
  if (!(lmin <= length && length <= lmax)) { return vec3<f32>(0.0); }
  let a = 0.5 * (lmin + 1.0);
  let b = 0.5 * (1.0 + lmax);
  if (length <= a) {
    let d = _floor(a - lmin);
    let x = (length - lmin) / d;
    let gx = g * x;
    let gd = _floor_adj(a - lmin, -gx * (length - lmin) / (d * d));   // d/d(a - lmin), a = (lmin + 1) / 2
    return vec3<f32>(gx / d, -gx / d - 0.5 * gd, 0.0);
  }
  if (length <= 1.0) {
    let d = _floor(1.0 - a);
    let x = (1.0 - length) / d;
    let gx = -g * x;
    let gd = _floor_adj(1.0 - a, -gx * (1.0 - length) / (d * d));
    return vec3<f32>(-gx / d, -0.5 * gd, 0.0);
  }
  if (length <= b) {
    let d = _floor(b - 1.0);
    let x = (length - 1.0) / d;
    let gx = -g * x;
    let gd = _floor_adj(b - 1.0, -gx * (length - 1.0) / (d * d));
    return vec3<f32>(gx / d, 0.0, 0.5 * gd);
  }
  let d = _floor(lmax - b);
  let x = (lmax - length) / d;
  let gx = g * x;
  let gd = _floor_adj(lmax - b, -gx * (lmax - length) / (d * d));   // d/d(lmax - b), b = (1 + lmax) / 2
  return vec3<f32>(-gx / d, 0.0, gx / d + 0.5 * gd);
}

// (d/d v, d/d fvmax)
fn muscle_gain_velocity_adj(v: f32, fvmax: f32, g: f32) -> vec2<f32> {
  let y = fvmax - 1.0;
  if (v <= -1.0) { return vec2<f32>(0.0); }
  if (v <= 0.0) { return vec2<f32>(2.0 * (v + 1.0) * g, 0.0); }
  if (v <= y) {
    let d = _floor(y);
    let gy = -g * 2.0 * (y - v) / d + _floor_adj(y, g * (y - v) * (y - v) / (d * d));
    return vec2<f32>(g * 2.0 * (y - v) / d, g + gy);
  }
  return vec2<f32>(0.0, g);
}

struct CurveAdj { length: f32, vel: f32, lr: vec2<f32>, acc0: f32, prm: array<f32, 9> }

fn add_normalised_scale(out: ptr<function, CurveAdj>, length: f32, lr: vec2<f32>, acc0: f32, prm: array<f32, 9>,
                        gl0: f32, gbig: f32, gf0: f32) {
  let na = muscle_normalised_adj(length, lr, prm[0], prm[1], gl0, gbig);
  let fa = muscle_force_scale_adj(prm[2], prm[3], acc0, gf0);
  (*out).length += na.length;
  (*out).lr += na.lr;
  (*out).prm[0] += na.range0;
  (*out).prm[1] += na.range1;
  (*out).prm[2] += fa.force;
  (*out).prm[3] += fa.scale;
  (*out).acc0 += fa.acc0;
}

fn muscle_gain_adj(length: f32, vel: f32, lr: vec2<f32>, acc0: f32, prm: array<f32, 9>, g: f32) -> CurveAdj {
  var out: CurveAdj;
  let n = muscle_normalised(length, lr, prm[0], prm[1]);
  let e = _floor(n.l0 * prm[6]);
  let v = vel / e;
  let f0 = muscle_force_scale(prm[2], prm[3], acc0);
  let fl = muscle_gain_length(n.big_l, prm[4], prm[5]);
  let fv = muscle_gain_velocity(v, prm[8]);
  let ga = muscle_gain_length_adj(n.big_l, prm[4], prm[5], -g * f0 * fv);
  let gv = muscle_gain_velocity_adj(v, prm[8], -g * f0 * fl);
  out.vel = gv.x / e;
  let gprod = _floor_adj(n.l0 * prm[6], -gv.x * vel / (e * e));
  out.prm[4] = ga.y;
  out.prm[5] = ga.z;
  out.prm[6] = gprod * n.l0;
  out.prm[8] = gv.y;
  add_normalised_scale(&out, length, lr, acc0, prm, gprod * prm[6], ga.x, -g * fl * fv);
  return out;
}

fn muscle_bias_adj(length: f32, lr: vec2<f32>, acc0: f32, prm: array<f32, 9>, g: f32) -> CurveAdj {
  var out: CurveAdj;
  let n = muscle_normalised(length, lr, prm[0], prm[1]);
  if (n.big_l <= 1.0) { return out; }
  let b = 0.5 * (1.0 + prm[5]);
  let d = _floor(b - 1.0);
  let f0 = muscle_force_scale(prm[2], prm[3], acc0);
  var gbig: f32;
  var gd: f32;
  var gb = 0.0;
  var shape: f32;   // the force per -f0 fpmax
  if (n.big_l <= b) {
    let x1 = (n.big_l - 1.0) / d;
    shape = 0.5 * x1 * x1;
    let gx = -g * f0 * prm[7] * x1;
    gbig = gx / d;
    gd = -gx * (n.big_l - 1.0) / (d * d);
  } else {
    let x2 = (n.big_l - b) / d;
    shape = 0.5 + x2;
    let gx = -g * f0 * prm[7];
    gbig = gx / d;
    gb = -gx / d;
    gd = -gx * (n.big_l - b) / (d * d);
  }
  gb += _floor_adj(b - 1.0, gd);
  out.prm[5] = 0.5 * gb;
  out.prm[7] = -g * f0 * shape;
  add_normalised_scale(&out, length, lr, acc0, prm, 0.0, gbig, -g * prm[7] * shape);
  return out;
}

fn sigmoid5_adj(x: f32, g: f32) -> f32 {
  if (x <= 0.0 || x >= 1.0) { return 0.0; }
  let p = 3.0 * x * (2.0 * x - 5.0) + 10.0;
  return g * (3.0 * x * x * p + x * x * x * (12.0 * x - 15.0));
}

struct TimescaleAdj { ctrl: f32, act: f32, prm: vec3<f32> }
fn muscle_timescale_adj(ctrl: f32, act: f32, prm: vec3<f32>, g: f32) -> TimescaleAdj {
  let actclamp = clamp(act, 0.0, 1.0);
  let s = 0.5 + 1.5 * actclamp;
  let tau_act = prm.x * s;
  let tau_deact = prm.y / s;
  let dctrl = clamp(ctrl, 0.0, 1.0) - act;
  let smooth_on = prm.z >= MUSCLE_MINVAL;
  let w = select(1.0, prm.z, smooth_on);
  let z = dctrl / w + 0.5;
  let sg = sigmoid5(z);
  let pre = select(select(tau_deact, tau_act, dctrl > 0.0), tau_deact + (tau_act - tau_deact) * sg, smooth_on);
  let gpre = _floor_adj(pre, g);
  var gta = 0.0;
  var gtd = 0.0;
  var gdc = 0.0;
  var gw = 0.0;
  if (smooth_on) {
    gta = gpre * sg;
    gtd = gpre * (1.0 - sg);
    let gz = sigmoid5_adj(z, gpre * (tau_act - tau_deact));
    gdc = gz / w;
    gw = -gz * dctrl / (w * w);
  } else if (dctrl > 0.0) { gta = gpre; } else { gtd = gpre; }
  let gs = gta * prm.x - gtd * prm.y / (s * s);
  return TimescaleAdj(clip01_adj(ctrl, gdc), clip01_adj(act, 1.5 * gs) - gdc, vec3<f32>(gta * s, gtd / s, gw));
}

fn gmuscle_prm(a: u32, g: array<f32, 9>) { for (var i = 0u; i < 9u; i++) { gp1(OFF_ACT_GAINPRM + 9u * a + i, g[i]); } }
fn gmuscle_curve(a: u32, c: CurveAdj) {
  gmuscle_prm(a, c.prm);
  gp1(OFF_ACT_LENGTHRANGE + 2u * a, c.lr.x);
  gp1(OFF_ACT_LENGTHRANGE + 2u * a + 1u, c.lr.y);
  gp1(OFF_ACT_ACC0 + a, c.acc0);
}

// tendon t's muscle tension's adjoint, g = d loss / d tension: into ten_glen, ten_grate, the activations' and the
// muscle parameters' gradients
fn muscle_force_adj(t: u32, g: f32) {
  for (var k = 0u; k < NMUSCLE; k++) {
    if (MUS_TENDON[k] != t) { continue; }
    let a = MUSCLES[k];
    let prm = muscle_prm(a);
    let acc0 = p1(OFF_ACT_ACC0 + a);
    let lr = muscle_lr(a);
    let gain = muscle_gain(ten_len[t], ten_rate[t], lr, acc0, prm);
    adj_act[k] += g * gain;
    let ga = muscle_gain_adj(ten_len[t], ten_rate[t], lr, acc0, prm, g * mact[k]);
    let gb = muscle_bias_adj(ten_len[t], lr, acc0, prm, g);
    ten_glen[t] += ga.length + gb.length;
    ten_grate[t] += ga.vel;
    gmuscle_curve(a, ga);
    gmuscle_curve(a, gb);
  }
}
