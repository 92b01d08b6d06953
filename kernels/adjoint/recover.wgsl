// Adjoint of the recover stage (kernels/recover.wgsl): v = D/h and w = TH/h overwrite the velocities
fn recover_adj(h: f32) {
  for (var b = lane; b < NBODY; b += LANES) {
    adj_d[b] = adj_d[b] + adj_v[b] / h;
    adj_th[b] = adj_th[b] + adj_w[b] / h;
    adj_v[b] = vec3<f32>(0.0);
    adj_w[b] = vec3<f32>(0.0);
  }
}
