// XPBD corrections between two bodies (oracle/xpbd.py): the Side and Correction types and the positional, angular
// and vector corrections every constraint is built from, with the oracle's names. Multipliers live in the env's
// `lam` array (kernels/xpbd_step.wgsl); a correction adds its increment to lam[li].

// one side of a constraint (oracle/xpbd.py Side): the world is x = 0, q = identity, im = 0, ii = 0
struct Side { x: vec3<f32>, q: Quat, im: f32, ii: vec3<f32> }
struct Correction { dx1: vec3<f32>, dth1: vec3<f32>, dx2: vec3<f32>, dth2: vec3<f32> }

fn inv_mass_at(s: Side, r: vec3<f32>, n: vec3<f32>) -> f32 {  // M20 eq. 2
  let rn = inv_rotate(s.q, cross(r, n));
  return s.im + dot(rn, rn * s.ii);
}
fn inv_inertia_along(s: Side, n: vec3<f32>) -> f32 {  // M20 eq. 3
  let nb = inv_rotate(s.q, n);
  return dot(nb, nb * s.ii);
}
fn world_inv_inertia(s: Side, v: vec3<f32>) -> vec3<f32> { return rotate(s.q, inv_rotate(s.q, v) * s.ii); }
fn apply(s: Side, dx: vec3<f32>, dth: vec3<f32>) -> Side {  // Side.apply
  return Side(s.x + dx, add_rotation(s.q, dth), s.im, s.ii);
}
fn zero_corr() -> Correction { return Correction(vec3<f32>(0.0), vec3<f32>(0.0), vec3<f32>(0.0), vec3<f32>(0.0)); }
fn chain(a: Correction, b: Correction) -> Correction {  // of two corrections (the oracle's takes any number)
  return Correction(a.dx1 + b.dx1, a.dth1 + b.dth1, a.dx2 + b.dx2, a.dth2 + b.dth2);
}

// impulse p (side 1 on side 2) at world offsets r1, r2 from the centres of mass, as the sides' Correction: p im1,
// I1^-1 (r1 x p), -p im2, -I2^-1 (r2 x p) (kernels/adjoint/xpbd.wgsl impulse_adj reverses it)
fn impulse(s1: Side, s2: Side, r1: vec3<f32>, r2: vec3<f32>, p: vec3<f32>) -> Correction {
  return Correction(p * s1.im, world_inv_inertia(s1, cross(r1, p)), -(p * s2.im), -world_inv_inertia(s2, cross(r2, p)));
}

// M20 eqs. 2-9 from the multiplier's value lm: the correction and the multiplier's increment (kernels/adjoint/
// replays it without touching lam)
struct CorrDlam { c: Correction, dlam: f32 }
fn positional_dlam(s1: Side, s2: Side, r1: vec3<f32>, r2: vec3<f32>, n: vec3<f32>, c: f32, on: bool, lm: f32,
                   at: f32) -> CorrDlam {
  let w = inv_mass_at(s1, r1, n) + inv_mass_at(s2, r2, n);
  let dlam = select(0.0, (-c - at * lm) / (w + at + 1e-30), on);
  let p = n * dlam;
  return CorrDlam(impulse(s1, s2, r1, r2, p), dlam);
}
// returns the correction; the multiplier's increment goes to lam[li]
fn positional(s1: Side, s2: Side, r1: vec3<f32>, r2: vec3<f32>, n: vec3<f32>, c: f32, on: bool, li: u32,
              at: f32) -> Correction {
  let r = positional_dlam(s1, s2, r1, r2, n, c, on, lam[li], at);
  lam[li] = lam[li] + r.dlam;
  return r.c;
}

// an angular impulse p: body 1 turns by I1^-1 p, body 2 by -I2^-1 p
fn turn(s1: Side, s2: Side, p: vec3<f32>) -> Correction {
  return Correction(vec3<f32>(0.0), world_inv_inertia(s1, p), vec3<f32>(0.0), -world_inv_inertia(s2, p));
}

// M20 eqs. 11-14: body 1 turns about -n, body 2 about +n; from the multiplier's value lm, as positional_dlam
fn angular_dlam(s1: Side, s2: Side, n: vec3<f32>, theta: f32, on: bool, lm: f32, at: f32) -> CorrDlam {
  let w = inv_inertia_along(s1, n) + inv_inertia_along(s2, n);
  let dlam = select(0.0, (-theta - at * lm) / (w + at + 1e-30), on);
  let p = n * dlam;
  return CorrDlam(turn(s1, s2, p), dlam);
}
fn angular(s1: Side, s2: Side, n: vec3<f32>, theta: f32, on: bool, li: u32, at: f32) -> Correction {
  let r = angular_dlam(s1, s2, n, theta, on, lam[li], at);
  lam[li] = lam[li] + r.dlam;
  return r.c;
}

// -K^-1 for the 3x3 K with columns a, b, c, as the rows [bc ca ab] / det of the scaled columns' cross products and
// -1 / (det s): K / s, s its largest |entry| (det K overflows f32 for ~1 mm bodies); 0 where off or K singular
struct Adjugate { bc: vec3<f32>, ca: vec3<f32>, ab: vec3<f32>, inv_det: f32 }
fn neg_inverse3(a_: vec3<f32>, b_: vec3<f32>, c_: vec3<f32>, on_: bool) -> Adjugate {
  let m = max(max(max(abs(a_.x), abs(a_.y)), max(abs(a_.z), abs(b_.y))), max(abs(b_.z), abs(c_.z)));
  let s = select(1.0, m, m > 0.0);
  let a = a_ / s;
  let b = b_ / s;
  let c = c_ / s;
  let bc = cross(b, c);
  let det = dot(a, bc);
  let on = on_ && abs(det) > 1e-30;
  return Adjugate(bc, cross(c, a), cross(a, b), select(0.0, -1.0 / select(1.0, det * s, on), on));
}
// -K^-1 rhs (oracle/xpbd.py neg_solve3)
fn neg_solve3(a_: vec3<f32>, b_: vec3<f32>, c_: vec3<f32>, rhs: vec3<f32>, on_: bool) -> vec3<f32> {
  let m = neg_inverse3(a_, b_, c_, on_);
  return vec3<f32>(dot(m.bc, rhs), dot(m.ca, rhs), dot(m.ab, rhs)) * m.inv_det;
}

fn inv_inertia_pair(s1: Side, s2: Side, e: vec3<f32>) -> vec3<f32> {  // (I1^-1 + I2^-1) e
  return world_inv_inertia(s1, e) + world_inv_inertia(s2, e);
}

// rigid full orientation lock as one 3-vector constraint (oracle/xpbd.py angular_lock): p = -K^-1 (theta n),
// K = I1^-1 + I2^-1; lam[li] accumulates p . n
fn lock_impulse(s1: Side, s2: Side, n: vec3<f32>, theta: f32, on: bool) -> vec3<f32> {   // p
  return neg_solve3(inv_inertia_pair(s1, s2, vec3<f32>(1.0, 0.0, 0.0)),
                    inv_inertia_pair(s1, s2, vec3<f32>(0.0, 1.0, 0.0)),
                    inv_inertia_pair(s1, s2, vec3<f32>(0.0, 0.0, 1.0)), n * theta, on);
}
fn angular_lock(s1: Side, s2: Side, n: vec3<f32>, theta: f32, on: bool, li: u32) -> Correction {
  let p = lock_impulse(s1, s2, n, theta, on);
  lam[li] = lam[li] + dot(p, n);
  return turn(s1, s2, p);
}

// rigid 2-dof axis alignment, free about the unit axis a (oracle/xpbd.py angular_align): p in the plane (u = n,
// v = a x n), the relative turn's projection on it equal to theta n (Cramer's rule); lam[li] accumulates p . n
// the 2x2 solve's terms (kernels/adjoint/xpbd.wgsl angular_align_adj reads them too)
struct Align { v: vec3<f32>, ku: vec3<f32>, kv: vec3<f32>, kuu: f32, kuv: f32, kvv: f32, det: f32, on: bool,
               scale: f32, pu: f32, pv: f32 }
fn align_solve(s1: Side, s2: Side, a: vec3<f32>, u: vec3<f32>, theta: f32, on_: bool) -> Align {
  let v = cross(a, u);
  return align_from(u, v, inv_inertia_pair(s1, s2, u), inv_inertia_pair(s1, s2, v), theta, on_);
}
// from ku = K u and kv = K v (K = I1^-1 + I2^-1; kernels/adjoint/xpbd.wgsl angular_align_adj has K as a matrix)
fn align_from(u: vec3<f32>, v: vec3<f32>, ku: vec3<f32>, kv: vec3<f32>, theta: f32, on_: bool) -> Align {
  let kuu = dot(u, ku);
  let kuv = dot(v, ku);
  let kvv = dot(v, kv);
  let det = kuu * kvv - kuv * kuv;
  let on = on_ && abs(det) > 1e-30;
  let scale = select(0.0, theta / select(1.0, det, on), on);
  return Align(v, ku, kv, kuu, kuv, kvv, det, on, scale, -(kvv * scale), kuv * scale);
}
fn align_corr(s1: Side, s2: Side, n: vec3<f32>, al: Align) -> Correction {   // u = n, v = a x n
  return turn(s1, s2, n * al.pu + al.v * al.pv);
}
fn angular_align(s1: Side, s2: Side, a: vec3<f32>, n: vec3<f32>, theta: f32, on_: bool, li: u32) -> Correction {
  let al = align_solve(s1, s2, a, n, theta, on_);
  lam[li] = lam[li] + al.pu;
  return align_corr(s1, s2, n, al);
}

// K_s e = e/m + (I^-1 (r x e)) x r: how far a unit impulse e at offset r moves that point of body s
fn k_apply(s: Side, r: vec3<f32>, e: vec3<f32>) -> vec3<f32> {
  return e * s.im + cross(world_inv_inertia(s, cross(r, e)), r);
}

// a point attachment as one 3-vector constraint (oracle/xpbd.py point; Macklin et al. 2016 eq. 18); lam[li..li+3]
// its multipliers; the 3x3 system's columns a, b, c are K1 + K2 + at 1 (kernels/adjoint/xpbd.wgsl point_adj builds
// K as a matrix)
fn point(s1: Side, s2: Side, r1: vec3<f32>, r2: vec3<f32>, d: vec3<f32>, li: u32, at: f32) -> Correction {
  let lv = vec3<f32>(lam[li], lam[li + 1u], lam[li + 2u]);
  let ex = vec3<f32>(1.0, 0.0, 0.0);
  let ey = vec3<f32>(0.0, 1.0, 0.0);
  let ez = vec3<f32>(0.0, 0.0, 1.0);
  let a = k_apply(s1, r1, ex) + k_apply(s2, r2, ex) + ex * at;
  let b = k_apply(s1, r1, ey) + k_apply(s2, r2, ey) + ey * at;
  let c = k_apply(s1, r1, ez) + k_apply(s2, r2, ez) + ez * at;
  let P = neg_solve3(a, b, c, d + lv * at, norm_dir(d, EPS).on);
  lam[li] = lv.x + P.x;
  lam[li + 1u] = lv.y + P.y;
  lam[li + 2u] = lv.z + P.z;
  return impulse(s1, s2, r1, r2, P);
}
