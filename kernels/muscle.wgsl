// Hill-type muscle curves (oracle/muscle.py, function by function): MuJoCo's mju_muscleGain, mju_muscleBias and
// mju_muscleDynamics. prm = (range0, range1, force, scale, lmin, lmax, vmax, fpmax, fvmax); the masks are select()s
// in the oracle's order of operations. muscle_force sums the muscles on one tendon (the header's MUSCLES, MUS_TENDON).

fn _floor(x: f32) -> f32 { return max(x, MUSCLE_MINVAL); }

fn muscle_force_scale(force: f32, scale: f32, acc0: f32) -> f32 { return select(force, scale / _floor(acc0), force < 0.0); }

struct Normalised { l0: f32, big_l: f32 }
fn muscle_normalised(length: f32, lr: vec2<f32>, range0: f32, range1: f32) -> Normalised {
  let l0 = (lr.y - lr.x) / _floor(range1 - range0);
  return Normalised(l0, range0 + (length - lr.x) / _floor(l0));
}

fn muscle_gain_length(length: f32, lmin: f32, lmax: f32) -> f32 {
  let a = 0.5 * (lmin + 1.0);
  let b = 0.5 * (1.0 + lmax);
  let x1 = (length - lmin) / _floor(a - lmin);
  let x2 = (1.0 - length) / _floor(1.0 - a);
  let x3 = (length - 1.0) / _floor(b - 1.0);
  let x4 = (lmax - length) / _floor(lmax - b);
  let fl = select(select(select(0.5 * x4 * x4, 1.0 - 0.5 * x3 * x3, length <= b), 1.0 - 0.5 * x2 * x2, length <= 1.0),
                  0.5 * x1 * x1, length <= a);
  return select(0.0, fl, lmin <= length && length <= lmax);
}

fn muscle_gain_velocity(v: f32, fvmax: f32) -> f32 {
  let y = fvmax - 1.0;
  return select(select(select(fvmax, fvmax - (y - v) * (y - v) / _floor(y), v <= y), (v + 1.0) * (v + 1.0), v <= 0.0),
                0.0, v <= -1.0);
}

fn muscle_gain(length: f32, vel: f32, lr: vec2<f32>, acc0: f32, prm: array<f32, 9>) -> f32 {
  let n = muscle_normalised(length, lr, prm[0], prm[1]);
  let v = vel / _floor(n.l0 * prm[6]);
  return -muscle_force_scale(prm[2], prm[3], acc0) * muscle_gain_length(n.big_l, prm[4], prm[5]) *
    muscle_gain_velocity(v, prm[8]);
}

fn muscle_bias(length: f32, lr: vec2<f32>, acc0: f32, prm: array<f32, 9>) -> f32 {
  let n = muscle_normalised(length, lr, prm[0], prm[1]);
  let b = 0.5 * (1.0 + prm[5]);
  let x1 = (n.big_l - 1.0) / _floor(b - 1.0);
  let x2 = (n.big_l - b) / _floor(b - 1.0);
  let f0 = muscle_force_scale(prm[2], prm[3], acc0);
  return select(select(-f0 * prm[7] * (0.5 + x2), -f0 * prm[7] * 0.5 * x1 * x1, n.big_l <= b), 0.0, n.big_l <= 1.0);
}

fn sigmoid5(x: f32) -> f32 {
  return select(select(x * x * x * (3.0 * x * (2.0 * x - 5.0) + 10.0), 1.0, x >= 1.0), 0.0, x <= 0.0);
}

fn muscle_timescale(ctrl: f32, act: f32, prm: vec3<f32>) -> f32 {
  let actclamp = clamp(act, 0.0, 1.0);
  let tau_act = prm.x * (0.5 + 1.5 * actclamp);
  let tau_deact = prm.y / (0.5 + 1.5 * actclamp);
  let dctrl = clamp(ctrl, 0.0, 1.0) - act;
  let hard = select(tau_deact, tau_act, dctrl > 0.0);
  let smooth_on = prm.z >= MUSCLE_MINVAL;
  let blend = tau_deact + (tau_act - tau_deact) * sigmoid5(dctrl / select(1.0, prm.z, smooth_on) + 0.5);
  return _floor(select(hard, blend, smooth_on));
}

fn muscle_dynamics(ctrl: f32, act: f32, prm: vec3<f32>) -> f32 {
  return (clamp(ctrl, 0.0, 1.0) - act) / muscle_timescale(ctrl, act, prm);
}

// the parameters of muscle k (the k-th entry of MUSCLES)
fn muscle_prm(a: u32) -> array<f32, 9> {
  var p: array<f32, 9>;
  for (var i = 0u; i < 9u; i++) { p[i] = p1(OFF_ACT_GAINPRM + 9u * a + i); }
  return p;
}
fn muscle_lr(a: u32) -> vec2<f32> { return vec2<f32>(p1(OFF_ACT_LENGTHRANGE + 2u * a), p1(OFF_ACT_LENGTHRANGE + 2u * a + 1u)); }

// tendon t's muscle tension [N] (negative: pulling) at the activations mact, from the tendons' lengths and rates
fn muscle_force(t: u32) -> f32 {
  var f = 0.0;
  for (var k = 0u; k < NMUSCLE; k++) {
    if (MUS_TENDON[k] != t) { continue; }
    let a = MUSCLES[k];
    let prm = muscle_prm(a);
    let acc0 = p1(OFF_ACT_ACC0 + a);
    f = f + muscle_gain(ten_len[t], ten_rate[t], muscle_lr(a), acc0, prm) * mact[k] +
      muscle_bias(ten_len[t], muscle_lr(a), acc0, prm);
  }
  return f;
}
