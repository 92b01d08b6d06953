// The recover stage (oracle/recover.py): v = D/h, w = TH/h, from the motion the position solve made (M20 Alg. 2
// lines 13-15)
fn recover(h: f32) {
  for (var b = lane; b < NBODY; b += LANES) { bv[b] = bd[b] / h; bw[b] = bth[b] / h; }
}
