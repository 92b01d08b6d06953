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

// the stage: every body from the substep's start (restored, with motor_loads' fext, text); integrate overwrites D and
// TH, so their gradients stop here, and the loads' go to adj_f, adj_t for motor_loads_adj
fn integrate_adj(h: f32) {
  let gravity = p3(OFF_GRAVITY);
  for (var b = lane; b < NBODY; b += LANES) {
    let r = integrate_body_adj(bx[b], bq[b], bv[b], bw[b], fext[b], text[b], p1(OFF_BODY_INV_MASS + b),
                               p3(OFF_BODY_INV_INERTIA + 3u * b), gravity, h,
                               BodyWork(adj_x[b], adj_q[b], adj_v[b], adj_w[b], adj_d[b], adj_th[b]));
    adj_x[b] = r.x;
    adj_q[b] = r.q;
    adj_v[b] = r.v;
    adj_w[b] = r.w;
    adj_d[b] = vec3<f32>(0.0);
    adj_th[b] = vec3<f32>(0.0);
    adj_f[b] = r.force;
    adj_t[b] = r.torque;
    gp1(OFF_BODY_INV_MASS + b, r.im);
    gp3(OFF_BODY_INV_INERTIA + 3u * b, r.ii);
    gp3(OFF_GRAVITY, r.gravity);
  }
}
