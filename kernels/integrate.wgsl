// The integrate stage (oracle/integrate.py): semi-implicit Euler with the gyroscopic term (M20 Alg. 2 lines 5-9,
// eq. 27), the motors' loads from motor_loads

// one body's pose, velocities and the substep's displacement D and rotation TH (integrate's output)
struct BodyWork { x: vec3<f32>, q: Quat, v: vec3<f32>, w: vec3<f32>, d: vec3<f32>, th: vec3<f32> }

// one body from the substep's start; kernels/adjoint/integrate.wgsl differentiates this formula
fn integrate_body(x: vec3<f32>, q: Quat, v: vec3<f32>, w: vec3<f32>, force: vec3<f32>, torque: vec3<f32>, im: f32,
                  ii: vec3<f32>, gravity: vec3<f32>, h: f32) -> BodyWork {
  let acc = gravity * select(0.0, 1.0, im > 0.0) + force * im;
  let v1 = v + acc * h;
  let wb = inv_rotate(q, w);
  let inertia = select(vec3<f32>(0.0), 1.0 / select(ii, vec3<f32>(1.0), ii <= vec3<f32>(0.0)), ii > vec3<f32>(0.0));
  let tau = -cross(wb, wb * inertia) + inv_rotate(q, torque);
  let w1 = rotate(q, wb + tau * ii * h);
  return BodyWork(x + v1 * h, add_rotation(q, w1 * h), v1, w1, v1 * h, w1 * h);
}

fn integrate(h: f32) {
  let g = p3(OFF_GRAVITY);
  for (var b = lane; b < NBODY; b += LANES) {
    let r = integrate_body(bx[b], bq[b], bv[b], bw[b], fext[b], text[b], p1(OFF_BODY_INV_MASS + b),
                           p3(OFF_BODY_INV_INERTIA + 3u * b), g, h);
    bx[b] = r.x;
    bq[b] = r.q;
    bv[b] = r.v;
    bw[b] = r.w;
    bd[b] = r.d;
    bth[b] = r.th;
  }
}
