// Adjoints of the XPBD corrections (kernels/xpbd.wgsl, oracle/xpbd.py), for the backward kernel (issue 17). A
// correction's adjoint takes the gradient of its Correction and of its updated multiplier, and returns the
// gradients of its inputs. The discrete choices (`on`, and the singular-K test inside) are replayed from the
// forward's inputs: the adjoint recomputes them, so it takes the branch the forward took.

struct SideAdj { x: vec3<f32>, q: Quat, im: f32, ii: vec3<f32> }   // gradients of a Side's fields
struct SideVecAdj { s: SideAdj, v: vec3<f32> }
struct SideDirAdj { s: SideAdj, r: vec3<f32>, n: vec3<f32> }
struct Solve3Adj { a: vec3<f32>, b: vec3<f32>, c: vec3<f32>, rhs: vec3<f32> }
// a two-body correction's input gradients: both sides, the offsets r1, r2 (or the axis a), the direction n, the
// error (c or theta), the multiplier before and the compliance alpha~
struct CorrAdj { s1: SideAdj, s2: SideAdj, r1: vec3<f32>, r2: vec3<f32>, n: vec3<f32>, err: f32, lam: f32, at: f32 }

fn side_adj_zero() -> SideAdj { return SideAdj(vec3<f32>(0.0), Quat(0.0, vec3<f32>(0.0)), 0.0, vec3<f32>(0.0)); }
fn side_adj_add(a: SideAdj, b: SideAdj) -> SideAdj { return SideAdj(a.x + b.x, qadd(a.q, b.q), a.im + b.im, a.ii + b.ii); }

// world_inv_inertia(s, v) = rotate(q, inv_rotate(q, v) ii)
fn world_inv_inertia_adj(s: Side, v: vec3<f32>, g: vec3<f32>) -> SideVecAdj {
  let a = inv_rotate(s.q, v);
  let ro = rotate_adj(s.q, a * s.ii, g);
  let ir = inv_rotate_adj(s.q, v, ro.v * s.ii);
  return SideVecAdj(SideAdj(vec3<f32>(0.0), qadd(ro.q, ir.q), 0.0, ro.v * a), ir.v);
}

// inv_mass_at(s, r, n) = im + rn.(rn ii), rn = inv_rotate(q, r x n)   (M20 eq. 2)
fn inv_mass_at_adj(s: Side, r: vec3<f32>, n: vec3<f32>, g: f32) -> SideDirAdj {
  let rn = inv_rotate(s.q, cross(r, n));
  let ir = inv_rotate_adj(s.q, cross(r, n), rn * s.ii * (2.0 * g));
  let cr = cross_adj(r, n, ir.v);
  return SideDirAdj(SideAdj(vec3<f32>(0.0), ir.q, g, rn * rn * g), cr.a, cr.b);
}

// inv_inertia_along(s, n) = nb.(nb ii), nb = inv_rotate(q, n)   (M20 eq. 3)
fn inv_inertia_along_adj(s: Side, n: vec3<f32>, g: f32) -> SideVecAdj {
  let nb = inv_rotate(s.q, n);
  let ir = inv_rotate_adj(s.q, n, nb * s.ii * (2.0 * g));
  return SideVecAdj(SideAdj(vec3<f32>(0.0), ir.q, 0.0, nb * nb * g), ir.v);
}

// neg_solve3 returns x = -K^-1 rhs, K the matrix of columns a, b, c (the adjugate form is exact for any K, and the
// scaling by s cancels). With y = K^-1 rhs = -x: g_rhs = -K^-T g, and g_K = -g_rhs y^T = g_rhs x^T, column by column.
// K^-T g = (bc g.x + ca g.y + ab g.z) / det with the forward's scaled a, b, c
fn neg_solve3_adj(a_: vec3<f32>, b_: vec3<f32>, c_: vec3<f32>, rhs: vec3<f32>, on_: bool, g: vec3<f32>) -> Solve3Adj {
  let m = max(max(max(abs(a_.x), abs(a_.y)), max(abs(a_.z), abs(b_.y))), max(abs(b_.z), abs(c_.z)));
  let s = select(1.0, m, m > 0.0);
  let a = a_ / s;
  let b = b_ / s;
  let c = c_ / s;
  let bc = cross(b, c);
  let ca = cross(c, a);
  let ab = cross(a, b);
  let det = dot(a, bc);
  let on = on_ && abs(det) > 1e-30;
  let inv_det = select(0.0, -1.0 / select(1.0, det * s, on), on);
  let x = vec3<f32>(dot(bc, rhs), dot(ca, rhs), dot(ab, rhs)) * inv_det;
  let grhs = (bc * g.x + ca * g.y + ab * g.z) * inv_det;
  return Solve3Adj(grhs * x.x, grhs * x.y, grhs * x.z, grhs);
}

// the gradient of p (an impulse) and of the sides through a Correction (p im1, I1^-1 (r1 x p), -p im2,
// -I2^-1 (r2 x p)); r1 = r2 = 0 for a pure angular impulse (pass angular = true: dth = +-I^-1 p)
struct ImpulseAdj { s1: SideAdj, s2: SideAdj, r1: vec3<f32>, r2: vec3<f32>, p: vec3<f32> }
fn impulse_adj(s1: Side, s2: Side, r1: vec3<f32>, r2: vec3<f32>, p: vec3<f32>, angular: bool,
               g: Correction) -> ImpulseAdj {
  var out = ImpulseAdj(side_adj_zero(), side_adj_zero(), vec3<f32>(0.0), vec3<f32>(0.0), vec3<f32>(0.0));
  if (angular) {
    let w1 = world_inv_inertia_adj(s1, p, g.dth1);
    let w2 = world_inv_inertia_adj(s2, p, -g.dth2);
    out.s1 = w1.s;
    out.s2 = w2.s;
    out.p = w1.v + w2.v;
    return out;
  }
  let w1 = world_inv_inertia_adj(s1, cross(r1, p), g.dth1);
  let w2 = world_inv_inertia_adj(s2, cross(r2, p), -g.dth2);
  let c1 = cross_adj(r1, p, w1.v);
  let c2 = cross_adj(r2, p, w2.v);
  out.s1 = w1.s;
  out.s2 = w2.s;
  out.s1.im = dot(g.dx1, p);
  out.s2.im = -dot(g.dx2, p);
  out.r1 = c1.a;
  out.r2 = c2.a;
  out.p = g.dx1 * s1.im - g.dx2 * s2.im + c1.b + c2.b;
  return out;
}

// dlam = on ? (-err - at lam) / (w + at + 1e-30) : 0 and lam' = lam + dlam (M20 eq. 4): gradients of (w, err, lam,
// at) from gdlam (through p) and glam' (the updated multiplier's)
struct DlamAdj { w: f32, err: f32, lam: f32, at: f32 }
fn dlam_adj(w: f32, err: f32, on: bool, lam: f32, at: f32, gdlam: f32, glam: f32) -> DlamAdj {
  let den = w + at + 1e-30;
  let dlam = (-err - at * lam) / den;
  let gd = select(0.0, gdlam + glam, on) / den;
  return DlamAdj(-gd * dlam, -gd, glam - gd * at, -gd * (lam + dlam));
}

// positional (M20 eqs. 2-9)
fn positional_adj(s1: Side, s2: Side, r1: vec3<f32>, r2: vec3<f32>, n: vec3<f32>, c: f32, on: bool, lam: f32,
                  at: f32, g: Correction, glam: f32) -> CorrAdj {
  let w = inv_mass_at(s1, r1, n) + inv_mass_at(s2, r2, n);
  let dlam = select(0.0, (-c - at * lam) / (w + at + 1e-30), on);
  let ia = impulse_adj(s1, s2, r1, r2, n * dlam, false, g);
  let dl = dlam_adj(w, c, on, lam, at, dot(ia.p, n), glam);
  let m1 = inv_mass_at_adj(s1, r1, n, dl.w);
  let m2 = inv_mass_at_adj(s2, r2, n, dl.w);
  return CorrAdj(side_adj_add(ia.s1, m1.s), side_adj_add(ia.s2, m2.s), ia.r1 + m1.r, ia.r2 + m2.r,
                 ia.p * dlam + m1.n + m2.n, dl.err, dl.lam, dl.at);
}

// angular (M20 eqs. 11-14); r1, r2 of the result are zero
fn angular_adj(s1: Side, s2: Side, n: vec3<f32>, theta: f32, on: bool, lam: f32, at: f32, g: Correction,
               glam: f32) -> CorrAdj {
  let w = inv_inertia_along(s1, n) + inv_inertia_along(s2, n);
  let dlam = select(0.0, (-theta - at * lam) / (w + at + 1e-30), on);
  let ia = impulse_adj(s1, s2, vec3<f32>(0.0), vec3<f32>(0.0), n * dlam, true, g);
  let dl = dlam_adj(w, theta, on, lam, at, dot(ia.p, n), glam);
  let m1 = inv_inertia_along_adj(s1, n, dl.w);
  let m2 = inv_inertia_along_adj(s2, n, dl.w);
  return CorrAdj(side_adj_add(ia.s1, m1.s), side_adj_add(ia.s2, m2.s), vec3<f32>(0.0), vec3<f32>(0.0),
                 ia.p * dlam + m1.v + m2.v, dl.err, dl.lam, dl.at);
}
