// The activation stage (oracle/activation.py): each muscle's activation over one substep, MuJoCo's rate law with its
// time constant frozen at the substep's start, integrated exactly. Runs after the substep's other stages, which used
// the activations at its start (motor_loads). Muscle k on lane k % LANES.
fn activation(h: f32) {
  for (var k = lane; k < NMUSCLE; k += LANES) {
    let a = MUSCLES[k];
    let e = act_ctrl(i32(a));
    let prm = vec3<f32>(p1(OFF_ACT_DYNPRM + 3u * a), p1(OFF_ACT_DYNPRM + 3u * a + 1u), p1(OFF_ACT_DYNPRM + 3u * a + 2u));
    let tau = muscle_timescale(e, mact[k], prm);
    mact[k] = mact[k] + (clamp(e, 0.0, 1.0) - mact[k]) * (1.0 - exp(-h / tau));
  }
}
