// Adjoints of the joint constraints (kernels/constraints.wgsl, oracle/constraints/), for the backward kernel (issue
// 17). They take the joint's parameters as values (the forward reads them with jv / p1), so that the stage's adjoint
// can sum the parameters' gradients per joint.

// ---------------------------------------------------------------- constraints/ball.py

// attach: r_i = rotate(q_i, anchor_i), point(s1, s2, r1, r2, (x1 + r1) - (x2 + r2), lam, at). The gradients of the
// anchors come back in r1 and r2, of d in d (unused: d is an intermediate), the rest as point_adj's
fn attach_adj(s1: Side, s2: Side, anchor1: vec3<f32>, anchor2: vec3<f32>, lv: vec3<f32>, at: f32, g: Correction,
              glam: vec3<f32>) -> PointAdj {
  let r1 = rotate(s1.q, anchor1);
  let r2 = rotate(s2.q, anchor2);
  var pa = point_adj(s1, s2, r1, r2, (s1.x + r1) - (s2.x + r2), lv, at, g, glam);
  let ro1 = rotate_adj(s1.q, anchor1, pa.r1 + pa.d);
  let ro2 = rotate_adj(s2.q, anchor2, pa.r2 - pa.d);
  pa.s1.x = pa.s1.x + pa.d;
  pa.s2.x = pa.s2.x - pa.d;
  pa.s1.q = qadd(pa.s1.q, ro1.q);
  pa.s2.q = qadd(pa.s2.q, ro2.q);
  pa.r1 = ro1.v;
  pa.r2 = ro2.v;
  pa.d = vec3<f32>(0.0);
  return pa;
}
