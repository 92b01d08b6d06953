// The restitution stage (oracle/restitution.py): one impulse per contact pair at the centroid of its restituting
// contacts (touched in the position solve, bounce > 0), towards their mean target approach speed min(-e u0, 0),
// pushing apart only; each body takes the average over the pairs that push it. Runs where RESTITUTION (the model's
// contact_restitution); the pushes live in scr from SCR_PUSH, PUSH_W floats per pair (the Correction).

// live pair p's restituting contacts: how many, and their mean world offsets, normal and target (goal), with the
// pair's sides and bodies as kernels/contact_velocity.wgsl slot_motion gathers them (kernels/adjoint/restitution.wgsl
// replays it)
struct PairMean { s1: Side, s2: Side, ba: i32, bb: i32, cnt: f32, oa: vec3<f32>, ob: vec3<f32>, n: vec3<f32>,
                  goal: f32 }
fn restituting(i: u32, h: f32) -> bool { return scr[sl(i) + SLOT_TOUCHED] > 0.0 && bounce(i, h) > 0.0; }
fn pair_mean(p: u32, h: f32) -> PairMean {
  let i0 = u32(tab[T_PAIR_SLOT0 + p]);
  var m = PairMean(slot_side(i0, 0u), slot_side(i0, 1u), slot_body(i0, 0u), slot_body(i0, 1u), 0.0, vec3<f32>(0.0),
                   vec3<f32>(0.0), vec3<f32>(0.0), 0.0);
  for (var i = i0; i < i0 + u32(tab[T_PAIR_SLOTS + p]); i++) {
    if (!restituting(i, h)) { continue; }
    m.cnt = m.cnt + 1.0;
    m.oa = m.oa + rotate(m.s1.q, lv3(sl(i) + SLOT_RA));
    m.ob = m.ob + rotate(m.s2.q, lv3(sl(i) + SLOT_RB));
    m.n = m.n + lv3(sl(i) + SLOT_NORMAL);
    m.goal = m.goal + min(-bounce(i, h) * scr[sl(i) + SLOT_APPROACH], 0.0);   // M20 eq. 34's
  }
  let k = 1.0 / max(m.cnt, 1.0);
  m.oa = m.oa * k;
  m.ob = m.ob * k;
  m.n = m.n * k;
  m.goal = m.goal * k;
  return m;
}
fn push_at(p: u32) -> u32 { return sb + SCR_PUSH + PUSH_W * p; }
// whether live pair p pushes: some slot of it restitutes (read from the slots, which the backward restores per
// substep in store mode, not from the pushes, which hold the last substep's)
fn pushes(p: u32, h: f32) -> bool {
  let i0 = u32(tab[T_PAIR_SLOT0 + p]);
  for (var i = i0; i < i0 + u32(tab[T_PAIR_SLOTS + p]); i++) { if (restituting(i, h)) { return true; } }
  return false;
}

fn restitution(h: f32) {
  for (var k = lane; k < n_live_pairs(); k += LANES) {
    let p = live_pair(k);
    let m = pair_mean(p, h);
    let n = norm_dir(m.n, 1e-12).dir;
    let du = min(m.goal - dot(point_velocity(m.ba, m.bb, m.oa, m.ob), n), 0.0);   // push apart only
    let on = m.cnt > 0.0;
    let P = select(0.0, du / (inv_mass_at(m.s1, m.oa, n) + inv_mass_at(m.s2, m.ob, n) + 1e-30), on);
    let c = impulse(m.s1, m.s2, m.oa, m.ob, n * P);
    let o = push_at(p);
    sv3(o, c.dx1); sv3(o + 3u, c.dth1); sv3(o + 6u, c.dx2); sv3(o + 9u, c.dth2);
  }
  barrier();   // every pair's push written, and every pair's read of the velocities done
  for (var b = lane; b < NBODY; b += LANES) {
    var dv = vec3<f32>(0.0);
    var dw = vec3<f32>(0.0);
    let scale = 1.0 / max(push_sum(b, h, &dv, &dw), 1.0);
    bv[b] = bv[b] + dv * scale;
    bw[b] = bw[b] + dw * scale;
  }
}

// body b's side of the pushes of its live pairs, summed in pair order (oracle/contact_velocity.py apply_impulses'
// contact_sum over the pairs' rows), and how many of them push
fn push_sum(b: u32, h: f32, dv: ptr<function, vec3<f32>>, dw: ptr<function, vec3<f32>>) -> f32 {
  for (var k = body_first(b); k < body_first(b + 1u); k++) {
    let p = body_pair(k);
    let o = push_at(p) + select(6u, 0u, geom_body(u32(pair_geoms(p).x)) == i32(b));
    *dv = *dv + lv3(o);
    *dw = *dw + lv3(o + 3u);
  }
  return push_count(b, h);
}
fn push_count(b: u32, h: f32) -> f32 {
  var n = 0.0;
  for (var k = body_first(b); k < body_first(b + 1u); k++) { n = n + select(0.0, 1.0, pushes(body_pair(k), h)); }
  return n;
}
