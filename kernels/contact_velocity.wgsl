// The contact half of the velocity pass (oracle/contact_velocity.py): dynamic friction and restitution of every
// contact that touched in the position solve (M20 sec. 3.6, eqs. 30-35)
// the relative velocity, a to b, of the points at world offsets oa, ob from bodies ba's and bb's centres of mass
// (oracle/contact_velocity.py point_velocity; -1: the world)
fn point_velocity(ba: i32, bb: i32, oa: vec3<f32>, ob: vec3<f32>) -> vec3<f32> {
  return (body_vel(ba) + cross(body_angvel(ba), oa)) - (body_vel(bb) + cross(body_angvel(bb), ob));
}
// live slot i's sides and bodies, normal, points' offsets from the centres of mass (world) and relative velocity
// there, a to b (kernels/adjoint/contact_velocity.wgsl replays it)
struct SlotMotion { s1: Side, s2: Side, ba: i32, bb: i32, n: vec3<f32>, oa: vec3<f32>, ob: vec3<f32>, vrel: vec3<f32> }
fn slot_motion(i: u32) -> SlotMotion {
  let s1 = slot_side(i, 0u);
  let s2 = slot_side(i, 1u);
  let ba = slot_body(i, 0u);
  let bb = slot_body(i, 1u);
  let oa = rotate(s1.q, lv3(sl(i) + SLOT_RA));
  let ob = rotate(s2.q, lv3(sl(i) + SLOT_RB));
  return SlotMotion(s1, s2, ba, bb, lv3(sl(i) + SLOT_NORMAL), oa, ob, point_velocity(ba, bb, oa, ob));
}

// slot i's restitution coefficient where it applies (oracle/contact_velocity.py bounce): its approach speed before
// the solve past 2 |g| h
fn bounces(i: u32, h: f32) -> bool {
  let g = p3(OFF_GRAVITY);
  return abs(scr[sl(i) + SLOT_APPROACH]) > 2.0 * sqrt(dot(g, g)) * h;
}
fn bounce(i: u32, h: f32) -> f32 { return select(0.0, scr[sl(i) + SLOT_RESTITUTION], bounces(i, h)); }

fn contact_velocity(h: f32) {
  for (var k = lane; k < n_live_slots(); k += LANES) {
    let i = live_slot(k);
    if (scr[sl(i) + SLOT_TOUCHED] <= 0.0) { set_slot_corr(i, zero_corr()); continue; }   // the oracle masks: p = 0
    let m = slot_motion(i);
    let s1 = m.s1;
    let s2 = m.s2;
    let n = m.n;
    let oa = m.oa;
    let ob = m.ob;
    let vrel = m.vrel;
    let u = dot(vrel, n);
    let st = norm_dir(vrel - n * u, 1e-9);
    let wt = inv_mass_at(s1, oa, st.dir) + inv_mass_at(s2, ob, st.dir);
    let friction = min(scr[sl(i) + SLOT_FRICTION] * scr[sl(i) + SLOT_LAMBDA_N] * wt / h, st.len);
    let u0 = scr[sl(i) + SLOT_APPROACH];
    let e = bounce(i, h);
    let du = -u + min(-e * u0, 0.0);
    let dv = n * du - st.dir * select(0.0, friction, st.on);
    let dd = norm_dir(dv, 1e-12);
    let w = inv_mass_at(s1, oa, dd.dir) + inv_mass_at(s2, ob, dd.dir);
    let p = dd.dir * select(0.0, dd.len / (w + 1e-30), dd.on);   // touched in some iteration (above)
    set_slot_corr(i, impulse(s1, s2, oa, ob, p));
  }
  barrier();   // every slot's impulse written, and every slot's read of the velocities done
  for (var b = lane; b < NBODY; b += LANES) {
    var dv = vec3<f32>(0.0);
    var dw = vec3<f32>(0.0);
    let cnt = contact_sum(i32(b), &dv, &dw, SLOT_TOUCHED);
    let scale = 1.0 / max(cnt, 1.0);
    bv[b] = bv[b] + dv * scale;
    bw[b] = bw[b] + dw * scale;
  }
}
