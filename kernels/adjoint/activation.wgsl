// Adjoint of the activation stage (kernels/activation.wgsl, oracle/activation.py): act' = act + (E - act) c with
// E = clip(e, 0, 1), e the clipped control, c = 1 - exp(-h / tau(e, act)). Reads the activations at the substep's
// start (mact) and d loss / d act' (adj_act), which it turns into d loss / d act; the controls' and dynprm's
// gradients accumulate.
fn activation_adj(h: f32) {
  for (var k = 0u; k < NMUSCLE; k++) {
    let a = MUSCLES[k];
    let e = act_ctrl(i32(a));
    let prm = vec3<f32>(p1(OFF_ACT_DYNPRM + 3u * a), p1(OFF_ACT_DYNPRM + 3u * a + 1u), p1(OFF_ACT_DYNPRM + 3u * a + 2u));
    let act = mact[k];
    let tau = muscle_timescale(e, act, prm);
    let decay = exp(-h / tau);
    let g = adj_act[k];
    let big_e = clamp(e, 0.0, 1.0);
    let ts = muscle_timescale_adj(e, act, prm, g * (big_e - act) * (-decay * h / (tau * tau)));
    adj_act[k] = g * decay + ts.act;
    act_ctrl_adj(i32(a), clip01_adj(e, g * (1.0 - decay)) + ts.ctrl);
    gp3(OFF_ACT_DYNPRM + 3u * a, ts.prm);
  }
}
