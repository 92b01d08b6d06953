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

// K e = (I1^-1 + I2^-1) e: the sides' gradients and e's
struct PairAdj { s1: SideAdj, s2: SideAdj, e: vec3<f32> }
fn inv_inertia_pair_adj(s1: Side, s2: Side, e: vec3<f32>, g: vec3<f32>) -> PairAdj {
  let w1 = world_inv_inertia_adj(s1, e, g);
  let w2 = world_inv_inertia_adj(s2, e, g);
  return PairAdj(w1.s, w2.s, w1.v + w2.v);
}

// angular_lock: p = neg_solve3(K e_x, K e_y, K e_z, theta n), lam' = lam + p.n; r1, r2 and at of the result are zero
fn angular_lock_adj(s1: Side, s2: Side, n: vec3<f32>, theta: f32, on: bool, lam: f32, g: Correction,
                    glam: f32) -> CorrAdj {
  let ex = vec3<f32>(1.0, 0.0, 0.0);
  let ey = vec3<f32>(0.0, 1.0, 0.0);
  let ez = vec3<f32>(0.0, 0.0, 1.0);
  let a = inv_inertia_pair(s1, s2, ex);
  let b = inv_inertia_pair(s1, s2, ey);
  let c = inv_inertia_pair(s1, s2, ez);
  let p = neg_solve3(a, b, c, n * theta, on);
  let ia = impulse_adj(s1, s2, vec3<f32>(0.0), vec3<f32>(0.0), p, true, g);
  let ns = neg_solve3_adj(a, b, c, n * theta, on, ia.p + n * glam);
  let ka = inv_inertia_pair_adj(s1, s2, ex, ns.a);
  let kb = inv_inertia_pair_adj(s1, s2, ey, ns.b);
  let kc = inv_inertia_pair_adj(s1, s2, ez, ns.c);
  return CorrAdj(side_adj_add(side_adj_add(ia.s1, ka.s1), side_adj_add(kb.s1, kc.s1)),
                 side_adj_add(side_adj_add(ia.s2, ka.s2), side_adj_add(kb.s2, kc.s2)), vec3<f32>(0.0),
                 vec3<f32>(0.0), p * glam + ns.rhs * theta, dot(ns.rhs, n), glam, 0.0);
}

// angular_align (Cramer's rule on the 2x2 in the plane u = n, v = a x n); the axis a's gradient is in r1 of the
// result, r2 and at are zero
fn angular_align_adj(s1: Side, s2: Side, a: vec3<f32>, n: vec3<f32>, theta: f32, on_: bool, lam: f32,
                     g: Correction, glam: f32) -> CorrAdj {
  let al = align_solve(s1, s2, a, n, theta, on_);
  let u = n;
  let v = al.v;
  let ku = al.ku;
  let kv = al.kv;
  let kuu = al.kuu;
  let kuv = al.kuv;
  let kvv = al.kvv;
  let det = al.det;
  let on = al.on;
  let scale = al.scale;
  let pu = al.pu;
  let pv = al.pv;
  let ia = impulse_adj(s1, s2, vec3<f32>(0.0), vec3<f32>(0.0), u * pu + v * pv, true, g);
  let gpu = dot(ia.p, u) + glam;
  let gpv = dot(ia.p, v);
  let gscale = -gpu * kvv + gpv * kuv;
  let gdet = select(0.0, -gscale * scale / select(1.0, det, on), on);
  let gkuu = gdet * kvv;
  let gkvv = -gpu * scale + gdet * kuu;
  let gkuv = gpv * scale - 2.0 * gdet * kuv;
  let ku_adj = inv_inertia_pair_adj(s1, s2, u, u * gkuu + v * gkuv);
  let kv_adj = inv_inertia_pair_adj(s1, s2, v, v * gkvv);
  let gv = ia.p * pv + ku * gkuv + kv * gkvv + kv_adj.e;
  let cr = cross_adj(a, n, gv);
  let gu = ia.p * pu + ku * gkuu + ku_adj.e;
  return CorrAdj(side_adj_add(ia.s1, side_adj_add(ku_adj.s1, kv_adj.s1)),
                 side_adj_add(ia.s2, side_adj_add(ku_adj.s2, kv_adj.s2)), cr.a, vec3<f32>(0.0), gu + cr.b,
                 select(0.0, gscale / select(1.0, det, on), on), glam, 0.0);
}

// k_apply(s, r, e) = e im + (I^-1 (r x e)) x r
fn k_apply_adj(s: Side, r: vec3<f32>, e: vec3<f32>, g: vec3<f32>) -> SideDirAdj {
  let w = world_inv_inertia(s, cross(r, e));
  let ca = cross_adj(w, r, g);
  let wa = world_inv_inertia_adj(s, cross(r, e), ca.a);
  let cr = cross_adj(r, e, wa.v);
  var gs = wa.s;
  gs.im = dot(g, e);
  return SideDirAdj(gs, ca.b + cr.a, g * s.im + cr.b);   // n: e's gradient
}

// point: P = neg_solve3(K1 + K2 + at 1, d + at lam), lam' = lam + P; the result's n is d's gradient
struct PointAdj { s1: SideAdj, s2: SideAdj, r1: vec3<f32>, r2: vec3<f32>, d: vec3<f32>, lam: vec3<f32>, at: f32 }
fn point_adj(s1: Side, s2: Side, r1: vec3<f32>, r2: vec3<f32>, d: vec3<f32>, lv: vec3<f32>, at: f32,
             g: Correction, glam: vec3<f32>) -> PointAdj {
  let ps = point_solve(s1, s2, r1, r2, d, lv, at);
  let a = ps.a;
  let b = ps.b;
  let c = ps.c;
  let on = ps.on;
  let P = ps.P;
  let ia = impulse_adj(s1, s2, r1, r2, P, false, g);
  let ns = neg_solve3_adj(a, b, c, d + lv * at, on, ia.p + glam);
  var out = PointAdj(ia.s1, ia.s2, ia.r1, ia.r2, ns.rhs, glam + ns.rhs * at,
                     dot(ns.rhs, lv) + ns.a.x + ns.b.y + ns.c.z);
  let cols = array<vec3<f32>, 3>(ns.a, ns.b, ns.c);
  for (var k = 0u; k < 3u; k++) {
    let e = vec3<f32>(f32(k == 0u), f32(k == 1u), f32(k == 2u));
    let k1 = k_apply_adj(s1, r1, e, cols[k]);
    let k2 = k_apply_adj(s2, r2, e, cols[k]);
    out.s1 = side_adj_add(out.s1, k1.s);
    out.s2 = side_adj_add(out.s2, k2.s);
    out.r1 = out.r1 + k1.r;
    out.r2 = out.r2 + k2.r;
  }
  return out;
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
