// Adjoint of the contact velocity pass (kernels/contact_velocity.wgsl, oracle/contact_velocity.py): dynamic
// friction and restitution, replayed from the pass's input (substep_adj restores it from the tape) with the
// substep's final multipliers and touched flags in scr. Each touched slot's impulse p changes its bodies'
// velocities by impulse's Correction divided by the body's touched count (a discrete choice), so the velocities'
// gradients pass through and each slot adds its share, to its bodies' poses, velocities and mass parameters, and to
// its row and final lambda_n on the slot's adjoint (kernels/adjoint/narrowphase.wgsl).

// With LANES > 1 the slots run on their lanes and each body's lane gathers their records after them
fn contact_velocity_adj(h: f32) {
  for (var b = lane; b < NBODY; b += LANES) {   // the gradient of each body's summed impulse (adj_cx, adj_cth: free here)
    var dv = vec3<f32>(0.0);
    var dw = vec3<f32>(0.0);
    let scale = 1.0 / max(contact_sum(i32(b), &dv, &dw, SLOT_TOUCHED), 1.0);
    adj_cx[b] = adj_v[b] * scale;
    adj_cth[b] = adj_w[b] * scale;
  }
  barrier();
  for (var k = lane; k < n_live_slots(); k += LANES) {
    let i = live_slot(k);
    if (scr[sl(i) + SLOT_TOUCHED] <= 0.0) { zero_item(i); continue; }   // no impulse
    let m = slot_motion(i);
    let s1 = m.s1;
    let s2 = m.s2;
    let ba = m.ba;
    let bb = m.bb;
    let n = m.n;
    let oa = m.oa;
    let ob = m.ob;
    let vrel = m.vrel;
    let wa = body_angvel(ba);
    let wb = body_angvel(bb);
    let u = dot(vrel, n);
    let vt = vrel - n * u;
    let st = norm_dir(vt, 1e-9);
    let wt = inv_mass_at(s1, oa, st.dir) + inv_mass_at(s2, ob, st.dir);
    let fric = scr[sl(i) + SLOT_FRICTION];
    let lam_n = scr[sl(i) + SLOT_LAMBDA_N];
    let fmax = fric * lam_n * wt / h;
    let friction = min(fmax, st.len);
    let u0 = scr[sl(i) + SLOT_APPROACH];
    let e = bounce(i, h);
    let du = -u + min(-e * u0, 0.0);
    let fsel = select(0.0, friction, st.on);
    let dv = n * du - st.dir * fsel;
    let dd = norm_dir(dv, 1e-12);
    let w = inv_mass_at(s1, oa, dd.dir) + inv_mass_at(s2, ob, dd.dir);
    let P = select(0.0, dd.len / (w + 1e-30), dd.on);
    // p = dir P and its Correction (impulse_adj's form)
    let g1 = body_corr_grad(ba);
    let g2 = body_corr_grad(bb);
    let ia = impulse_adj(s1, s2, oa, ob, dd.dir * P, false, Correction(g1[0], g1[1], g2[0], g2[1]));
    let gP = dot(ia.p, dd.dir);
    let glen = select(0.0, gP / (w + 1e-30), dd.on);
    let m1 = inv_mass_at_adj(s1, oa, dd.dir, -glen * P);
    let m2 = inv_mass_at_adj(s2, ob, dd.dir, -glen * P);
    let gdv = norm_dir_adj(dv, 1e-12, glen, ia.p * P + m1.n + m2.n);
    // dv = n du - t fsel, fsel = friction where sliding; friction = min(fmax, |vt|) (a tie halves)
    var gn = gdv * du;
    let gdu = dot(gdv, n);
    var gt = -gdv * fsel;
    let gf = select(0.0, -dot(gdv, st.dir), st.on);
    let gm = grad_min(fmax, st.len, gf);
    let gfmax = gm.x;
    let gtlen = gm.y;
    let t1 = inv_mass_at_adj(s1, oa, st.dir, gfmax * fric * lam_n / h);   // fmax = mu lambda_n w_t / h
    let t2 = inv_mass_at_adj(s2, ob, st.dir, gfmax * fric * lam_n / h);
    gt = gt + t1.n + t2.n;
    // du = -u + min(-e u0, 0) (M20 eq. 34; at e = 0 the min ties and halves, as tinygrad's)
    let ga = grad_min(-e * u0, 0.0, gdu).x;
    var gu = -gdu;
    // vt = vrel - n u, u = vrel.n
    let gvt = norm_dir_adj(vt, 1e-9, gtlen, gt);
    gn = gn - gvt * u;
    gu = gu - dot(n, gvt);
    let gvrel = gvt + n * gu;
    gn = gn + vrel * gu;
    // vrel = (v_a + w_a x oa) - (v_b + w_b x ob); oa = rotate(q_a, ra), ob likewise
    let goa = ia.r1 + m1.r + t1.r + cross(gvrel, wa);
    let gob = ia.r2 + m2.r + t2.r - cross(gvrel, wb);
    let r1 = rotate_adj(s1.q, lv3(sl(i) + SLOT_RA), goa);
    let r2 = rotate_adj(s2.q, lv3(sl(i) + SLOT_RB), gob);
    var a1 = side_adj_add(side_adj_add(ia.s1, m1.s), t1.s);
    var a2 = side_adj_add(side_adj_add(ia.s2, m2.s), t2.s);
    a1.q = qadd(a1.q, r1.q);
    a2.q = qadd(a2.q, r2.q);
    item_side(true, i, 0u, ba, a1, 1.0, gvrel, cross(oa, gvrel));
    item_side(true, i, 1u, bb, a2, 1.0, -gvrel, -cross(ob, gvrel));
    let a = slot_grads(i);
    add_slot_adj3(a + SA_NORMAL, gn);
    add_slot_adj3(a + SA_RA, r1.v);
    add_slot_adj3(a + SA_RB, r2.v);
    tape[a + SA_FRICTION] = tape[a + SA_FRICTION] + gfmax * lam_n * wt / h;
    tape[a + SA_LAMBDA_N] = tape[a + SA_LAMBDA_N] + gfmax * fric * wt / h;
    tape[a + SA_RESTITUTION] = tape[a + SA_RESTITUTION] + select(0.0, -u0 * ga, bounces(i, h));
    tape[a + SA_APPROACH] = tape[a + SA_APPROACH] - e * ga;
  }
  if (LANES == 1u) { return; }
  barrier();
  for (var b = lane; b < NBODY; b += LANES) { gather_slots(true, b, 0u); }
}
