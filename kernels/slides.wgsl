// The slide family of oracle/constraints/: the slide joint (slide.py), the planar joint (planar.py) and the
// two-axis slide (slide2.py), one function per registered name with its helpers, in the oracle's file order and
// names. The helpers they share with the other joints (alpha_tilde, align_axes, lock_orientation) are in
// kernels/constraints.wgsl. A joint's multipliers are lam[LAMW j ..] (kernels/xpbd_step.wgsl), in the oracle's tuple
// order.

// ---------------------------------------------------------------- constraints/slide.py

// world axis a (parent frame), anchor offsets r1, r2 and the child's position x along the axis [m]
struct SlideFrame { a: vec3<f32>, r1: vec3<f32>, r2: vec3<f32>, x: f32 }
fn slide_frame(j: u32, s1: Side, s2: Side) -> SlideFrame {
  let a = rotate(s1.q, jv(OFF_JNT_AXIS_PARENT, j));
  let r1 = rotate(s1.q, jv(OFF_JNT_ANCHOR_PARENT, j));
  let r2 = rotate(s2.q, jv(OFF_JNT_ANCHOR_CHILD, j));
  return SlideFrame(a, r1, r2, dot((s2.x + r2) - (s1.x + r1), a));
}

fn slide(j: u32, s1_: Side, s2_: Side, h: f32) -> Correction {
  var s1 = s1_;
  var s2 = s2_;
  let l = LAMW * j;
  // 1. lock the relative orientation (as a fixed joint)
  let orient = lock_orientation(j, s1, s2, l);
  s1 = apply(s1, orient.dx1, orient.dth1);
  s2 = apply(s2, orient.dx2, orient.dth2);
  // 2. the anchors may differ only along the axis: remove the normal part d - (d.a) a, d = p1 - p2
  var f = slide_frame(j, s1, s2);
  let d = (s1.x + f.r1) - (s2.x + f.r2);
  let nd = norm_dir(d - f.a * dot(d, f.a), EPS);
  let normal = positional(s1, s2, f.r1, f.r2, nd.dir, nd.len, nd.on, l + 1u, alpha_tilde(j, h));
  s1 = apply(s1, normal.dx1, normal.dth1);
  s2 = apply(s2, normal.dx2, normal.dth2);
  // 3. limits
  f = slide_frame(j, s1, s2);
  let limit = axis_limit(s1, s2, f.r1, f.r2, f.a, f.x, p1(OFF_JNT_RANGE + 2u * j), p1(OFF_JNT_RANGE + 2u * j + 1u),
                         p1(OFF_JNT_LIMITED + j) > 0.0, l + 2u);
  return chain(chain(orient, normal), limit);
}

// a coordinate x along the world axis a kept within [lo, hi]: when it leaves, move the child along a by (goal - x),
// rigidly (the slide's and the slide2's limit row)
fn axis_limit(s1: Side, s2: Side, r1: vec3<f32>, r2: vec3<f32>, a: vec3<f32>, x: f32, lo: f32, hi: f32, limited: bool,
              li: u32) -> Correction {
  return positional(s1, s2, r1, r2, a, min(max(x, lo), hi) - x, limited && (x < lo || x > hi), li, 0.0);
}

// ---------------------------------------------------------------- constraints/planar.py

fn planar(j: u32, s1: Side, s2: Side, h: f32) -> Correction {
  let align = align_axes(j, s1, s2, LAMW * j);   // 1. the normals aligned; free about the parent's
  let t1 = apply(s1, align.dx1, align.dth1);
  let t2 = apply(s2, align.dx2, align.dth2);
  // 2. the anchors may differ only within the plane: move the child along the normal by -x
  let f = slide_frame(j, t1, t2);
  return chain(align, positional(t1, t2, f.r1, f.r2, f.a, -f.x, true, LAMW * j + 1u, alpha_tilde(j, h)));
}

// ---------------------------------------------------------------- constraints/slide2.py

// world axes a1 (jnt_axis_parent) and a2 (jnt_ref_parent), anchor offsets and the child's coordinates along them
struct Slide2Frame { a1: vec3<f32>, a2: vec3<f32>, r1: vec3<f32>, r2: vec3<f32>, x1: f32, x2: f32 }
fn slide2_frame(j: u32, s1: Side, s2: Side) -> Slide2Frame {
  let f = slide_frame(j, s1, s2);
  let a2 = rotate(s1.q, jv(OFF_JNT_REF_PARENT, j));
  return Slide2Frame(f.a, a2, f.r1, f.r2, f.x, dot((s2.x + f.r2) - (s1.x + f.r1), a2));
}

// the second coordinate's [lo, hi] [m] (a static table: ranges are not differentiated)
fn range2(j: u32) -> vec2<f32> { return vec2<f32>(JNT_RANGE2[2u * j], JNT_RANGE2[2u * j + 1u]); }

fn slide2(j: u32, s1: Side, s2: Side, h: f32) -> Correction {
  let l = LAMW * j;
  let orient = lock_orientation(j, s1, s2, l);   // 1. lock the relative orientation (as a fixed joint)
  let o1 = apply(s1, orient.dx1, orient.dth1);
  let o2 = apply(s2, orient.dx2, orient.dth2);
  // 2. the anchors may differ only within the plane: move the child along the normal n = a1 x a2 by -(d.n)
  let f = slide2_frame(j, o1, o2);
  let n = cross(f.a1, f.a2);
  let normal = positional(o1, o2, f.r1, f.r2, n, -dot((o2.x + f.r2) - (o1.x + f.r1), n), true, l + 1u,
                          alpha_tilde(j, h));
  let n1 = apply(o1, normal.dx1, normal.dth1);
  let n2 = apply(o2, normal.dx2, normal.dth2);
  // 3. each coordinate's limits, the first, then the second from where the first left the bodies
  let limited = p1(OFF_JNT_LIMITED + j) > 0.0;
  let g = slide2_frame(j, n1, n2);
  let limit1 = axis_limit(n1, n2, g.r1, g.r2, g.a1, g.x1, p1(OFF_JNT_RANGE + 2u * j), p1(OFF_JNT_RANGE + 2u * j + 1u),
                          limited, l + 2u);
  let m1 = apply(n1, limit1.dx1, limit1.dth1);
  let m2 = apply(n2, limit1.dx2, limit1.dth2);
  let k = slide2_frame(j, m1, m2);
  let r2 = range2(j);
  let limit2 = axis_limit(m1, m2, k.r1, k.r2, k.a2, k.x2, r2.x, r2.y, limited, l + 3u);
  return chain(chain(chain(orient, normal), limit1), limit2);
}
