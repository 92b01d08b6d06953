// Adjoints of the slide family (kernels/slides.wgsl: oracle/constraints/slide.py, planar.py, slide2.py), for the
// backward kernel, with the conventions of kernels/adjoint/constraints.wgsl: the joint's parameters as values
// (SlideParams), their gradients in the same shape. The adjoints they share with the other joints
// (lock_orientation_adj, align_axes_of, align_axes_adj) are in kernels/adjoint/constraints.wgsl.

// ---------------------------------------------------------------- constraints/slide.py

struct SlideParams { axis_p: vec3<f32>, anchor_p: vec3<f32>, anchor_c: vec3<f32>, relquat: Quat, compliance: f32,
                     limited: f32, lo: f32, hi: f32 }
struct SlideAdj { s1: SideAdj, s2: SideAdj, prm: SlideParams, lam: vec3<f32> }

// slide_frame (kernels/slides.wgsl) from the parameters' values
fn slide_frame_of(s1: Side, s2: Side, k: SlideParams) -> SlideFrame {
  let a = rotate(s1.q, k.axis_p);
  let r1 = rotate(s1.q, k.anchor_p);
  let r2 = rotate(s2.q, k.anchor_c);
  return SlideFrame(a, r1, r2, dot((s2.x + r2) - (s1.x + r1), a));
}

// slide_frame's (a, r1, r2) and x = (p2 - p1).a from the gradients of all four: the sides' and the parameters'
struct FrameAdj { s1: SideAdj, s2: SideAdj, axis_p: vec3<f32>, anchor_p: vec3<f32>, anchor_c: vec3<f32> }
fn slide_frame_adj(s1: Side, s2: Side, k: SlideParams, ga_: vec3<f32>, gr1_: vec3<f32>, gr2_: vec3<f32>,
                   gx: f32) -> FrameAdj {
  let a = rotate(s1.q, k.axis_p);
  let r1 = rotate(s1.q, k.anchor_p);
  let r2 = rotate(s2.q, k.anchor_c);
  let gp = a * gx;   // of p2 = x2 + r2 (and -gp of p1 = x1 + r1)
  let ra = rotate_adj(s1.q, k.axis_p, ga_ + ((s2.x + r2) - (s1.x + r1)) * gx);
  let ro1 = rotate_adj(s1.q, k.anchor_p, gr1_ - gp);
  let ro2 = rotate_adj(s2.q, k.anchor_c, gr2_ + gp);
  return FrameAdj(SideAdj(-gp, qadd(ra.q, ro1.q), 0.0, vec3<f32>(0.0)), SideAdj(gp, ro2.q, 0.0, vec3<f32>(0.0)),
                  ra.v, ro1.v, ro2.v);
}

// axis_limit: positional along a by clamp(x, lo, hi) - x where limited and outside [lo, hi] (the target is x itself
// inside: err = 0). The positional's gradients, and those of x, lo and hi
struct AxisLimitAdj { c: CorrAdj, x: f32, lo: f32, hi: f32 }
fn axis_limit_adj(s1: Side, s2: Side, r1: vec3<f32>, r2: vec3<f32>, a: vec3<f32>, x: f32, lo: f32, hi: f32,
                  limited: bool, lam: f32, g: Correction, glam: f32) -> AxisLimitAdj {
  let below = x < lo;
  let above = x > hi;
  let la = positional_adj(s1, s2, r1, r2, a, min(max(x, lo), hi) - x, limited && (below || above), lam, 0.0, g, glam);
  return AxisLimitAdj(la, select(0.0, -la.err, below || above), select(0.0, la.err, below),
                      select(0.0, la.err, above && !below));
}

// slide: lock the orientation, remove the anchors' offset across the axis, then the limits along it
fn slide_adj(s1_0: Side, s2_0: Side, k: SlideParams, lam: vec3<f32>, h: f32, g: Correction,
             glam: vec3<f32>) -> SlideAdj {
  let at = k.compliance / (h * h);
  // forward: 1. orientation (as fixed_adj)
  let od = rest_turn(s1_0.q, s2_0.q, k.relquat);
  let orient = turn(s1_0, s2_0, lock_impulse(s1_0, s2_0, od.dir, od.len, od.on));
  let s1_1 = apply(s1_0, orient.dx1, orient.dth1);
  let s2_1 = apply(s2_0, orient.dx2, orient.dth2);
  // 2. the normal part of d = p1 - p2
  let a = rotate(s1_1.q, k.axis_p);
  let r1 = rotate(s1_1.q, k.anchor_p);
  let r2 = rotate(s2_1.q, k.anchor_c);
  let d = (s1_1.x + r1) - (s2_1.x + r2);
  let e = d - a * dot(d, a);
  let nd = norm_dir(e, EPS);
  let normal = positional_dlam(s1_1, s2_1, r1, r2, nd.dir, nd.len, nd.on, lam.y, at).c;
  let s1_2 = apply(s1_1, normal.dx1, normal.dth1);
  let s2_2 = apply(s2_1, normal.dx2, normal.dth2);
  // 3. limits
  let f = slide_frame_of(s1_2, s2_2, k);
  // reverse: 3. limits
  var out: SlideAdj;
  let la = axis_limit_adj(s1_2, s2_2, f.r1, f.r2, f.a, f.x, k.lo, k.hi, k.limited > 0.0, lam.z, g, glam.z);
  out.prm.lo = la.lo;
  out.prm.hi = la.hi;
  let f2 = slide_frame_adj(s1_2, s2_2, k, la.c.n, la.c.r1, la.c.r2, la.x);
  // 2. apply the normal correction, then positional along n by c, (c, n) = norm_dir(d - a (d.a))
  let pn = apply_pair_adj(s1_1, s2_1, normal, side_adj_add(la.c.s1, f2.s1), side_adj_add(la.c.s2, f2.s2), g);
  let na = positional_adj(s1_1, s2_1, r1, r2, nd.dir, nd.len, nd.on, lam.y, at, pn.c, glam.y);
  let ge = norm_dir_adj(e, EPS, na.err, na.n);
  let gd = ge - a * dot(a, ge);
  let f1 = slide_frame_adj(s1_1, s2_1, k, -(ge * dot(d, a) + d * dot(a, ge)), na.r1 + gd, na.r2 - gd, 0.0);
  var gs1_1 = side_adj_add(side_adj_add(pn.s1, na.s1), f1.s1);
  var gs2_1 = side_adj_add(side_adj_add(pn.s2, na.s2), f1.s2);
  gs1_1.x = gs1_1.x + gd;
  gs2_1.x = gs2_1.x - gd;
  // 1. apply the orientation correction, then lock_orientation
  let po = apply_pair_adj(s1_0, s2_0, orient, gs1_1, gs2_1, g);
  let lo = lock_orientation_adj(s1_0, s2_0, k.relquat, lam.x, po.c, glam.x);
  out.s1 = side_adj_add(po.s1, lo.s1);
  out.s2 = side_adj_add(po.s2, lo.s2);
  out.prm.axis_p = f1.axis_p + f2.axis_p;
  out.prm.anchor_p = f1.anchor_p + f2.anchor_p;
  out.prm.anchor_c = f1.anchor_c + f2.anchor_c;
  out.prm.relquat = lo.rel;
  out.prm.compliance = na.at / (h * h);
  out.lam = vec3<f32>(lo.lam, na.lam, la.c.lam);
  return out;
}

// ---------------------------------------------------------------- constraints/planar.py

// planar: align the normals (the hinge's step 1), then positional along the parent's normal a by -x. Its parameters
// are the slide's frame (k: axis_p, anchor_p, anchor_c; relquat, limits unused: their gradients are 0), the child's
// axis and the compliance; lam = (align, normal)
struct PlanarAdj { s1: SideAdj, s2: SideAdj, prm: SlideParams, axis_c: vec3<f32>, lam: vec2<f32> }
fn planar_adj(s1_0: Side, s2_0: Side, k: SlideParams, axis_c: vec3<f32>, lam: vec2<f32>, h: f32, g: Correction,
              glam: vec2<f32>) -> PlanarAdj {
  let at = k.compliance / (h * h);
  // forward: 1. align
  let align = align_axes_of(s1_0, s2_0, k.axis_p, axis_c);
  let s1_1 = apply(s1_0, align.dx1, align.dth1);
  let s2_1 = apply(s2_0, align.dx2, align.dth2);
  let fr = slide_frame_of(s1_1, s2_1, k);
  // reverse: 2. positional along a by -x
  var out: PlanarAdj;
  let na = positional_adj(s1_1, s2_1, fr.r1, fr.r2, fr.a, -fr.x, true, lam.y, at, g, glam.y);
  let f = slide_frame_adj(s1_1, s2_1, k, na.n, na.r1, na.r2, -na.err);
  // 1. apply the alignment, then align_axes
  let aa = align_axes_adj(s1_0, s2_0, k.axis_p, axis_c, align, lam.x, side_adj_add(na.s1, f.s1),
                          side_adj_add(na.s2, f.s2), g, glam.x);
  out.s1 = aa.s1;
  out.s2 = aa.s2;
  out.prm.axis_p = aa.axis_p + f.axis_p;
  out.prm.anchor_p = f.anchor_p;
  out.prm.anchor_c = f.anchor_c;
  out.prm.compliance = na.at / (h * h);
  out.axis_c = aa.axis_c;
  out.lam = vec2<f32>(aa.lam, na.lam);
  return out;
}

// ---------------------------------------------------------------- constraints/slide2.py

// slide2_frame's (a1, a2, r1, r2, x1, x2) from the gradients of all six: the sides' and the parameters' (the
// second axis a2 = rotate(q1, ref_p) and x2 = d.a2, d = (x2 + r2) - (x1 + r1), on top of slide_frame's)
struct Frame2Adj { f: FrameAdj, ref_p: vec3<f32> }
fn slide2_frame_adj(s1: Side, s2: Side, k: SlideParams, ref_p: vec3<f32>, ga1: vec3<f32>, ga2: vec3<f32>,
                    gr1: vec3<f32>, gr2: vec3<f32>, gx1: f32, gx2: f32) -> Frame2Adj {
  let a2 = rotate(s1.q, ref_p);
  let d = (s2.x + rotate(s2.q, k.anchor_c)) - (s1.x + rotate(s1.q, k.anchor_p));
  let gd = a2 * gx2;
  let ra = rotate_adj(s1.q, ref_p, ga2 + d * gx2);
  var f = slide_frame_adj(s1, s2, k, ga1, gr1 - gd, gr2 + gd, gx1);
  f.s1.x = f.s1.x - gd;
  f.s2.x = f.s2.x + gd;
  f.s1.q = qadd(f.s1.q, ra.q);
  return Frame2Adj(f, ra.v);
}

// slide2: lock the orientation, positional along n = a1 x a2 by -(d.n), then each coordinate's limit (the second's
// range is static: no gradient). k: the slide's parameters; lam = (orientation, normal, limit 1, limit 2)
struct Slide2Adj { s1: SideAdj, s2: SideAdj, prm: SlideParams, ref_p: vec3<f32>, lam: vec4<f32> }
fn slide2_adj(s1_0: Side, s2_0: Side, k: SlideParams, ref_p: vec3<f32>, range2: vec2<f32>, lam: vec4<f32>, h: f32,
              g: Correction, glam: vec4<f32>) -> Slide2Adj {
  let at = k.compliance / (h * h);
  let limited = k.limited > 0.0;
  // forward: 1. orientation (as fixed_adj)
  let od = rest_turn(s1_0.q, s2_0.q, k.relquat);
  let orient = turn(s1_0, s2_0, lock_impulse(s1_0, s2_0, od.dir, od.len, od.on));
  let o1 = apply(s1_0, orient.dx1, orient.dth1);
  let o2 = apply(s2_0, orient.dx2, orient.dth2);
  // 2. the normal
  let a1 = rotate(o1.q, k.axis_p);
  let a2 = rotate(o1.q, ref_p);
  let r1 = rotate(o1.q, k.anchor_p);
  let r2 = rotate(o2.q, k.anchor_c);
  let n = cross(a1, a2);
  let d = (o2.x + r2) - (o1.x + r1);
  let normal = positional_dlam(o1, o2, r1, r2, n, -dot(d, n), true, lam.y, at).c;
  let n1 = apply(o1, normal.dx1, normal.dth1);
  let n2 = apply(o2, normal.dx2, normal.dth2);
  // 3. the first coordinate's limit
  let f1 = slide_frame_of(n1, n2, k);
  let limit1 = positional_dlam(n1, n2, f1.r1, f1.r2, f1.a, min(max(f1.x, k.lo), k.hi) - f1.x,
                               limited && (f1.x < k.lo || f1.x > k.hi), lam.z, 0.0).c;
  let m1 = apply(n1, limit1.dx1, limit1.dth1);
  let m2 = apply(n2, limit1.dx2, limit1.dth2);
  // 4. the second's
  let c2 = rotate(m1.q, ref_p);
  let q1 = rotate(m1.q, k.anchor_p);
  let q2 = rotate(m2.q, k.anchor_c);
  let x2 = dot((m2.x + q2) - (m1.x + q1), c2);
  // reverse: 4. the second coordinate's limit
  var out: Slide2Adj;
  let l2 = axis_limit_adj(m1, m2, q1, q2, c2, x2, range2.x, range2.y, limited, lam.w, g, glam.w);
  let f4 = slide2_frame_adj(m1, m2, k, ref_p, vec3<f32>(0.0), l2.c.n, l2.c.r1, l2.c.r2, 0.0, l2.x);
  // 3. apply limit 1, then the first coordinate's limit
  let pl = apply_pair_adj(n1, n2, limit1, side_adj_add(l2.c.s1, f4.f.s1), side_adj_add(l2.c.s2, f4.f.s2), g);
  let l1 = axis_limit_adj(n1, n2, f1.r1, f1.r2, f1.a, f1.x, k.lo, k.hi, limited, lam.z, pl.c, glam.z);
  let f3 = slide_frame_adj(n1, n2, k, l1.c.n, l1.c.r1, l1.c.r2, l1.x);
  // 2. apply the normal correction, then positional along n by c = -(d.n)
  let pn = apply_pair_adj(o1, o2, normal, side_adj_add(side_adj_add(pl.s1, l1.c.s1), f3.s1),
                          side_adj_add(side_adj_add(pl.s2, l1.c.s2), f3.s2), g);
  let na = positional_adj(o1, o2, r1, r2, n, -dot(d, n), true, lam.y, at, pn.c, glam.y);
  let gd = -(n * na.err);
  let cr = cross_adj(a1, a2, na.n - d * na.err);
  let f2 = slide2_frame_adj(o1, o2, k, ref_p, cr.a, cr.b, na.r1 - gd, na.r2 + gd, 0.0, 0.0);
  var go1 = side_adj_add(side_adj_add(pn.s1, na.s1), f2.f.s1);
  var go2 = side_adj_add(side_adj_add(pn.s2, na.s2), f2.f.s2);
  go1.x = go1.x - gd;
  go2.x = go2.x + gd;
  // 1. apply the orientation correction, then lock_orientation
  let po = apply_pair_adj(s1_0, s2_0, orient, go1, go2, g);
  let lo = lock_orientation_adj(s1_0, s2_0, k.relquat, lam.x, po.c, glam.x);
  out.s1 = side_adj_add(po.s1, lo.s1);
  out.s2 = side_adj_add(po.s2, lo.s2);
  out.prm.axis_p = f2.f.axis_p + f3.axis_p + f4.f.axis_p;
  out.prm.anchor_p = f2.f.anchor_p + f3.anchor_p + f4.f.anchor_p;
  out.prm.anchor_c = f2.f.anchor_c + f3.anchor_c + f4.f.anchor_c;
  out.prm.relquat = lo.rel;
  out.prm.compliance = na.at / (h * h);
  out.prm.lo = l1.lo;
  out.prm.hi = l1.hi;
  out.ref_p = f2.ref_p + f4.ref_p;
  out.lam = vec4<f32>(lo.lam, na.lam, l1.c.lam, l2.c.lam);
  return out;
}
