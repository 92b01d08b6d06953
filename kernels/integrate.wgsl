// The integrate stage (oracle/integrate.py): semi-implicit Euler with the gyroscopic term (M20 Alg. 2 lines 5-9,
// eq. 27), the motors' loads from motor_loads
fn integrate(h: f32) {
  let g = p3(OFF_GRAVITY);
  for (var b = lane; b < NBODY; b += LANES) {
    let im = p1(OFF_BODY_INV_MASS + b);
    let ii = p3(OFF_BODY_INV_INERTIA + 3u * b);
    let acc = g * select(0.0, 1.0, im > 0.0) + fext[b] * im;
    let v = bv[b] + acc * h;
    bx[b] = bx[b] + v * h;
    let wb = inv_rotate(bq[b], bw[b]);
    let inertia = select(vec3<f32>(0.0), 1.0 / select(ii, vec3<f32>(1.0), ii <= vec3<f32>(0.0)), ii > vec3<f32>(0.0));
    let tau = -cross(wb, wb * inertia) + inv_rotate(bq[b], text[b]);
    let w = rotate(bq[b], wb + tau * ii * h);
    bq[b] = add_rotation(bq[b], w * h);
    bv[b] = v;
    bw[b] = w;
    bd[b] = v * h;
    bth[b] = w * h;
  }
}
