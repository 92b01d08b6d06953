// Adjoint of the integrate stage (kernels/integrate.wgsl, oracle/integrate.py) for one body: integrate_body's
// formula line by line, each line's gradients read in reverse.

// gradients of integrate's inputs: the packed state, the motor loads, and the parameters (inverse mass and inertia,
// gravity), per body: the backward kernel sums a shared parameter over the bodies and envs that read it
struct IntegrateAdj { x: vec3<f32>, q: Quat, v: vec3<f32>, w: vec3<f32>, force: vec3<f32>, torque: vec3<f32>,
                      im: f32, ii: vec3<f32>, gravity: vec3<f32> }

// g: the gradient of integrate_body's output
fn integrate_body_adj(x: vec3<f32>, q: Quat, v: vec3<f32>, w: vec3<f32>, force: vec3<f32>, torque: vec3<f32>,
                      im: f32, ii: vec3<f32>, gravity: vec3<f32>, h: f32, g: BodyWork) -> IntegrateAdj {
  // the forward's intermediates
  let on = select(0.0, 1.0, im > 0.0);
  let wb = inv_rotate(q, w);
  let static_ = ii <= vec3<f32>(0.0);
  let inertia = select(vec3<f32>(0.0), 1.0 / select(ii, vec3<f32>(1.0), static_), ii > vec3<f32>(0.0));
  let tau = -cross(wb, wb * inertia) + inv_rotate(q, torque);
  let u = wb + tau * ii * h;
  let w1 = rotate(q, u);
  // q1 = add_rotation(q, w1 h); then w1 (itself, and in TH = w1 h, and in q1)
  let ar = add_rotation_adj(q, w1 * h, g.q);
  let gw1 = g.w + (g.th + ar.v) * h;
  let ro = rotate_adj(q, u, gw1);                       // w1 = rotate(q, u)
  let gtau = ro.v * ii * h;                              // u = wb + tau ii h
  var gii = ro.v * tau * h;
  let cr = cross_adj(wb, wb * inertia, -gtau);           // tau = -wb x (wb inertia) + inv_rotate(q, torque)
  let gwb = ro.v + cr.a + cr.b * inertia;
  let ginertia = cr.b * wb;
  gii = gii + select(-ginertia * inertia * inertia, vec3<f32>(0.0), static_);   // inertia = 1 / ii where ii > 0
  let it = inv_rotate_adj(q, torque, gtau);
  let iw = inv_rotate_adj(q, w, gwb);                   // wb = inv_rotate(q, w)
  // v1 (itself, in D = v1 h and in x1 = x + v1 h) = v + acc h
  let gv1 = g.v + (g.d + g.x) * h;
  let gacc = gv1 * h;
  return IntegrateAdj(g.x, qadd(qadd(ar.q, ro.q), qadd(it.q, iw.q)), gv1, iw.v, gacc * im, it.v, dot(gacc, force),
                      gii, gacc * on);
}
