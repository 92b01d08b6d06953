// Adjoint of the restitution stage (kernels/restitution.wgsl, oracle/restitution.py), replayed from the stage's input
// (substep_adj recomputes it: the contact velocity pass from its taped input) with the substep's touched flags in
// scr. Each pushing pair's impulse changes its bodies' velocities by its Correction over the body's count of pushing
// pairs (a discrete choice, as which slots restitute), so the velocities' gradients pass through and each pair adds
// its share to its bodies' poses, velocities and mass parameters, and to its restituting slots' rows (normal,
// offsets, approach speed, restitution) on the slots' adjoint (kernels/adjoint/narrowphase.wgsl).

// With LANES > 1 the pairs run on their lanes and each body's lane gathers their records after them
fn restitution_adj(h: f32) {
  for (var b = lane; b < NBODY; b += LANES) {   // the gradient of each body's summed push (adj_cx, adj_cth: free here)
    let scale = 1.0 / max(push_count(b, h), 1.0);
    adj_cx[b] = adj_v[b] * scale;
    adj_cth[b] = adj_w[b] * scale;
  }
  barrier();
  for (var k = lane; k < n_live_pairs(); k += LANES) {
    let p = live_pair(k);
    let m = pair_mean(p, h);
    if (m.cnt <= 0.0) { zero_item(p); continue; }   // no push
    let n = norm_dir(m.n, 1e-12).dir;
    let wa = body_angvel(m.ba);
    let wb = body_angvel(m.bb);
    let vrel = point_velocity(m.ba, m.bb, m.oa, m.ob);
    let un = dot(vrel, n);
    let w = inv_mass_at(m.s1, m.oa, n) + inv_mass_at(m.s2, m.ob, n) + 1e-30;
    let P = min(m.goal - un, 0.0) / w;
    // the push n P and its Correction (impulse_adj), P = du / w
    let g1 = body_corr_grad(m.ba);
    let g2 = body_corr_grad(m.bb);
    let ia = impulse_adj(m.s1, m.s2, m.oa, m.ob, n * P, false, Correction(g1[0], g1[1], g2[0], g2[1]));
    let gP = dot(ia.p, n);
    let m1 = inv_mass_at_adj(m.s1, m.oa, n, -gP * P / w);
    let m2 = inv_mass_at_adj(m.s2, m.ob, n, -gP * P / w);
    // du = min(goal - vrel.n, 0): pushing apart only (a tie halves, as tinygrad's)
    let gd = grad_min(m.goal - un, 0.0, gP / w).x;
    let gvrel = -n * gd;
    let gn = ia.p * P + m1.n + m2.n - vrel * gd;
    // vrel = (v_a + w_a x oa) - (v_b + w_b x ob) at the centroid; the means over the pair's cnt restituting slots
    let k1 = 1.0 / m.cnt;
    let goa = (ia.r1 + m1.r + cross(gvrel, wa)) * k1;
    let gob = (ia.r2 + m2.r - cross(gvrel, wb)) * k1;
    let gnm = norm_dir_adj(m.n, 1e-12, 0.0, gn) * k1;
    var a1 = side_adj_add(ia.s1, m1.s);
    var a2 = side_adj_add(ia.s2, m2.s);
    let i0 = u32(tab[T_PAIR_SLOT0 + p]);
    for (var i = i0; i < i0 + u32(tab[T_PAIR_SLOTS + p]); i++) {
      if (!restituting(i, h)) { continue; }
      let r1 = rotate_adj(m.s1.q, lv3(sl(i) + SLOT_RA), goa);   // oa's terms rotate(q_a, ra)
      let r2 = rotate_adj(m.s2.q, lv3(sl(i) + SLOT_RB), gob);
      a1.q = qadd(a1.q, r1.q);
      a2.q = qadd(a2.q, r2.q);
      let a = slot_grads(i);
      add_slot_adj3(a + SA_NORMAL, gnm);
      add_slot_adj3(a + SA_RA, r1.v);
      add_slot_adj3(a + SA_RB, r2.v);
      // the target's terms min(-e u0, 0), e the slot's restitution (it bounces: it restitutes)
      let e = bounce(i, h);
      let u0 = scr[sl(i) + SLOT_APPROACH];
      let gt = grad_min(-e * u0, 0.0, gd * k1).x;
      tape[a + SA_RESTITUTION] = tape[a + SA_RESTITUTION] - u0 * gt;
      tape[a + SA_APPROACH] = tape[a + SA_APPROACH] - e * gt;
    }
    item_side(true, p, 0u, m.ba, a1, 1.0, gvrel, cross(m.oa, gvrel));
    item_side(true, p, 1u, m.bb, a2, 1.0, -gvrel, -cross(m.ob, gvrel));
  }
  if (LANES == 1u) { return; }
  barrier();
  for (var b = lane; b < NBODY; b += LANES) { gather_pairs(true, b); }
}
