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
fn side_adj_add(a: SideAdj, b: SideAdj) -> SideAdj {
  return SideAdj(a.x + b.x, qadd(a.q, b.q), a.im + b.im, a.ii + b.ii);
}

// world_inv_inertia(s, v) = rotate(q, inv_rotate(q, v) ii)
fn world_inv_inertia_adj(s: Side, v: vec3<f32>, g: vec3<f32>) -> SideVecAdj {
  let a = inv_rotate(s.q, v);
  let ro = rotate_adj(s.q, a * s.ii, g);
  let ir = inv_rotate_adj(s.q, v, ro.v * s.ii);
  return SideVecAdj(SideAdj(vec3<f32>(0.0), qadd(ro.q, ir.q), 0.0, ro.v * a), ir.v);
}

// world_inv_inertia as a matrix: W = R diag(ii) R^T, R = rotation_columns(q), the map that rotate and inv_rotate
// apply for any q (not only a unit one). An adjoint that uses a side's W several times (a solve's K, the impulse)
// sums each use's gradient (for W v: g v^T) and takes the sum back to q and ii once, where world_inv_inertia_adj
// costs three rotations a use (the hinge's adjoint, pendulum x4096 on lavapipe: 2026-11-30)
fn inertia_world(s: Side) -> mat3x3<f32> {
  let c = rotation_columns(s.q);
  return mat3x3<f32>(c[0] * s.ii.x, c[1] * s.ii.y, c[2] * s.ii.z) * transpose(mat3x3<f32>(c[0], c[1], c[2]));
}
// from W's gradient gw: g_R = (gw + gw^T) R diag(ii), g_ii = diag(R^T gw R)
fn inertia_world_adj(s: Side, gw: mat3x3<f32>) -> SideAdj {
  let c = rotation_columns(s.q);
  let sg = gw + transpose(gw);
  let gq = rotation_columns_adj(s.q, array<vec3<f32>, 3>(sg * c[0] * s.ii.x, sg * c[1] * s.ii.y, sg * c[2] * s.ii.z));
  return SideAdj(vec3<f32>(0.0), gq, 0.0, vec3<f32>(dot(c[0], gw * c[0]), dot(c[1], gw * c[1]), dot(c[2], gw * c[2])));
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
fn neg_solve3_adj(a_: vec3<f32>, b_: vec3<f32>, c_: vec3<f32>, rhs: vec3<f32>, on_: bool,
                  g: vec3<f32>) -> Solve3Adj {
  let m = neg_inverse3(a_, b_, c_, on_);
  let x = vec3<f32>(dot(m.bc, rhs), dot(m.ca, rhs), dot(m.ab, rhs)) * m.inv_det;
  let grhs = (m.bc * g.x + m.ca * g.y + m.ab * g.z) * m.inv_det;
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

// angular_lock: p = neg_solve3(K e_x, K e_y, K e_z, theta n) with K = W1 + W2, lam' = lam + p.n; the impulse turns
// the sides by W1 p and -W2 p. r1, r2 and at of the result are zero
fn angular_lock_adj(s1: Side, s2: Side, n: vec3<f32>, theta: f32, on: bool, lam: f32, g: Correction,
                    glam: f32) -> CorrAdj {
  let w1 = inertia_world(s1);
  let w2 = inertia_world(s2);
  let k = w1 + w2;
  let p = neg_solve3(k[0], k[1], k[2], n * theta, on);
  let ns = neg_solve3_adj(k[0], k[1], k[2], n * theta, on, w1 * g.dth1 - w2 * g.dth2 + n * glam);
  let gk = mat3x3<f32>(ns.a, ns.b, ns.c);
  return CorrAdj(inertia_world_adj(s1, outer(g.dth1, p) + gk), inertia_world_adj(s2, outer(-g.dth2, p) + gk),
                 vec3<f32>(0.0), vec3<f32>(0.0), p * glam + ns.rhs * theta, dot(ns.rhs, n), glam, 0.0);
}

// angular_align (Cramer's rule on the 2x2 in the plane u = n, v = a x n; ku = K u, kv = K v with K = W1 + W2); the
// axis a's gradient is in r1 of the result, r2 and at are zero
fn angular_align_adj(s1: Side, s2: Side, a: vec3<f32>, n: vec3<f32>, theta: f32, on_: bool, lam: f32,
                     g: Correction, glam: f32) -> CorrAdj {
  let w1 = inertia_world(s1);
  let w2 = inertia_world(s2);
  let k = w1 + w2;
  let u = n;
  let v = cross(a, u);
  let al = align_from(u, v, k * u, k * v, theta, on_);
  let p = u * al.pu + v * al.pv;
  let gp = w1 * g.dth1 - w2 * g.dth2;   // the impulse's: dth1 = W1 p, dth2 = -W2 p
  let gpu = dot(gp, u) + glam;
  let gpv = dot(gp, v);
  let gscale = -gpu * al.kvv + gpv * al.kuv;
  let gdet = select(0.0, -gscale * al.scale / select(1.0, al.det, al.on), al.on);
  let gkuu = gdet * al.kvv;
  let gkvv = -gpu * al.scale + gdet * al.kuu;
  let gkuv = gpv * al.scale - 2.0 * gdet * al.kuv;
  let gku = u * gkuu + v * gkuv;
  let gkv = v * gkvv;
  let gk = outer(gku, u) + outer(gkv, v);
  let cr = cross_adj(a, n, gp * al.pv + al.ku * gkuv + al.kv * gkvv + k * gkv);
  return CorrAdj(inertia_world_adj(s1, outer(g.dth1, p) + gk), inertia_world_adj(s2, outer(-g.dth2, p) + gk), cr.a,
                 vec3<f32>(0.0), gp * al.pu + al.ku * gkuu + k * gku + cr.b,
                 select(0.0, gscale / select(1.0, al.det, al.on), al.on), glam, 0.0);
}

// point: P = neg_solve3(K, d + at lam) with K = (im1 + im2 + at) 1 - [r1]x W1 [r1]x - [r2]x W2 [r2]x (k_apply's
// matrix, side by side), lam' = lam + P; the impulse moves the sides by P im1, W1 (r1 x P), -P im2, -W2 (r2 x P).
// The result's d is d's gradient
struct PointAdj { s1: SideAdj, s2: SideAdj, r1: vec3<f32>, r2: vec3<f32>, d: vec3<f32>, lam: vec3<f32>, at: f32 }
fn point_adj(s1: Side, s2: Side, r1: vec3<f32>, r2: vec3<f32>, d: vec3<f32>, lv: vec3<f32>, at: f32,
             g: Correction, glam: vec3<f32>) -> PointAdj {
  let w1 = inertia_world(s1);
  let w2 = inertia_world(s2);
  let x1 = cross_matrix(r1);
  let x2 = cross_matrix(r2);
  let k = mat3x3<f32>(1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0) * (s1.im + s2.im + at) - x1 * w1 * x1 - x2 * w2 * x2;
  let rhs = d + lv * at;
  let on = norm_dir(d, EPS).on;
  let P = neg_solve3(k[0], k[1], k[2], rhs, on);
  let c1 = cross_adj(r1, P, w1 * g.dth1);
  let c2 = cross_adj(r2, P, -(w2 * g.dth2));
  let ns = neg_solve3_adj(k[0], k[1], k[2], rhs, on, g.dx1 * s1.im - g.dx2 * s2.im + c1.b + c2.b + glam);
  let gk = mat3x3<f32>(ns.a, ns.b, ns.c);
  let tr = ns.a.x + ns.b.y + ns.c.z;
  // through -[r]x W [r]x: g_W = -[r]x gk [r]x, g_[r]x = gk [r]x W + W [r]x gk
  var a1 = inertia_world_adj(s1, outer(g.dth1, cross(r1, P)) - x1 * gk * x1);
  var a2 = inertia_world_adj(s2, outer(-g.dth2, cross(r2, P)) - x2 * gk * x2);
  a1.im = dot(g.dx1, P) + tr;
  a2.im = tr - dot(g.dx2, P);
  return PointAdj(a1, a2, c1.a + cross_matrix_adj(gk * x1 * w1 + w1 * x1 * gk),
                  c2.a + cross_matrix_adj(gk * x2 * w2 + w2 * x2 * gk), ns.rhs, glam + ns.rhs * at,
                  dot(ns.rhs, lv) + tr);
}

// apply to both sides (xpbd.py apply) after a correction c that the constraint's total also chains: the sides'
// gradients before it and c's (g, the total's gradient, plus what the moved sides pass back)
struct ApplyPairAdj { s1: SideAdj, s2: SideAdj, c: Correction }
fn apply_pair_adj(s1: Side, s2: Side, c: Correction, g1: SideAdj, g2: SideAdj, g: Correction) -> ApplyPairAdj {
  let a1 = apply_adj(s1, c.dx1, c.dth1, g1);
  let a2 = apply_adj(s2, c.dx2, c.dth2, g2);
  return ApplyPairAdj(a1.s, a2.s, Correction(g.dx1 + a1.r, g.dth1 + a1.n, g.dx2 + a2.r, g.dth2 + a2.n));
}

// apply(s, dx, dth) = Side(x + dx, add_rotation(q, dth), im, ii): g is the moved side's gradient; returns the
// side's, with dx's in r and dth's in n
fn apply_adj(s: Side, dx: vec3<f32>, dth: vec3<f32>, g: SideAdj) -> SideDirAdj {
  let ar = add_rotation_adj(s.q, dth, g.q);
  return SideDirAdj(SideAdj(g.x, ar.q, g.im, g.ii), g.x, ar.v);
}
