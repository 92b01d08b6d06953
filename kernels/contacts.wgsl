// Contacts of the step kernel: broadphase, the narrowphase stage, the contact constraint and the contact velocity
// pass (oracle/broadphase.py, oracle/contacts.py, oracle/constraints/contact.py, oracle/velocity.py). The pair
// functions it calls are in kernels/narrowphase.wgsl and kernels/box.wgsl.

// --- scratch and table access ---
fn sl(i: u32) -> u32 { return sb + 2u * NPAIR + SLOT_W * i; }
fn lv3(o: u32) -> vec3<f32> { return vec3<f32>(scr[o], scr[o + 1u], scr[o + 2u]); }
fn sv3(o: u32, v: vec3<f32>) { scr[o] = v.x; scr[o + 1u] = v.y; scr[o + 2u] = v.z; }
fn pair_geoms(p: u32) -> vec2<i32> { return vec2<i32>(i32(scr[sb + 2u * p]), i32(scr[sb + 2u * p + 1u])); }
fn set_pair(p: u32, g: vec2<i32>) { scr[sb + 2u * p] = f32(g.x); scr[sb + 2u * p + 1u] = f32(g.y); }
fn set_slot_corr(i: u32, c: Correction) { let o = sl(i) + 13u; sv3(o, c.dx1); sv3(o + 3u, c.dth1); sv3(o + 6u, c.dx2); sv3(o + 9u, c.dth2); }
fn geom_body(g: u32) -> i32 { return tab[T_GEOM_BODY + g]; }
fn cand(k: u32) -> u32 { return sb + 2u * NPAIR + SLOT_W * NSLOT + k; }   // candidate k's overlap flag

// --- contacts (oracle/broadphase.py, oracle/contacts.py, oracle/constraints/contact.py, oracle/velocity.py) ---

fn geom_body_pose(g: i32) -> Side {   // the owning body as a contact side (unsplit mass); the world for world geoms
  return gather_side(geom_body(u32(g)));
}
fn body_vel(b: i32) -> vec3<f32> { if (b < 0) { return vec3<f32>(0.0); } return bv[u32(b)]; }
fn body_angvel(b: i32) -> vec3<f32> { if (b < 0) { return vec3<f32>(0.0); } return bw[u32(b)]; }

// world AABB (lo, hi) of geom g at the step's start, grown by 2 dt (|v| + |w| rho) + margin (oracle/broadphase.py
// _extents: every shape as a box of half extents e swept by a sphere of radius r)
fn geom_aabb(g: u32) -> array<vec3<f32>, 2> {
  let b = geom_body(g);
  let s = gather_side(b);
  let gp = p3(OFF_GEOM_POS + 3u * g);
  let sz = p3(OFF_GEOM_SIZE + 3u * g);
  let centre = s.x + rotate(s.q, gp);
  let q = qmul(s.q, p4q(OFF_GEOM_QUAT + 4u * g));
  let t = u32(tab[T_GEOM_TYPE + g]);
  let round_ = select(0.0, 1.0, t == SPHERE_G || t == CAPSULE_G);
  let box = select(0.0, 1.0, t == BOX_G);
  let cap = select(0.0, 1.0, t == CAPSULE_G);
  let r = sz.x * round_;
  let e = vec3<f32>(sz.x * box, sz.y * box, sz.z * box + sz.y * cap);
  let w = q.w; let x = q.v.x; let y = q.v.y; let z = q.v.z;
  let c0 = vec3<f32>(1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y + w * z), 2.0 * (x * z - w * y));
  let c1 = vec3<f32>(2.0 * (x * y - w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z + w * x));
  let c2 = vec3<f32>(2.0 * (x * z + w * y), 2.0 * (y * z - w * x), 1.0 - 2.0 * (x * x + y * y));
  let half = r + abs(c0) * e.x + abs(c1) * e.y + abs(c2) * e.z;
  let rho = r + sqrt(dot(e, e)) + sqrt(dot(gp, gp));
  let v = body_vel(b);
  let om = body_angvel(b);
  let grow = 2.0 * DT * (sqrt(dot(v, v)) + sqrt(dot(om, om)) * rho) + MARGIN;
  return array<vec3<f32>, 2>(centre - (half + grow), centre + (half + grow));
}

fn candidate(k: u32) -> vec3<i32> {   // (geom a, geom b, block)
  return vec3<i32>(tab[T_CANDIDATES + 3u * k], tab[T_CANDIDATES + 3u * k + 1u], tab[T_CANDIDATES + 3u * k + 2u]);
}

// candidate pairs for this step. The oracle's spatial hash returns, without overflow, exactly the pairs whose grown
// AABBs overlap, in a canonical (column 0, column 1) order per type pair; each env tests the static candidate list
// (rules already applied: different bodies, not excluded, i < j), O(G^2) per env: the lanes test candidates into
// flags, then lane 0 fills the blocks in the list's order, so the pair table does not depend on LANES
fn broadphase() {
  for (var p = lane; p < NPAIR; p += LANES) {
    if (p < NPLANE_PAIR) { set_pair(p, vec2<i32>(tab[T_PLANE_PAIRS + 2u * p], tab[T_PLANE_PAIRS + 2u * p + 1u])); }
    else { set_pair(p, vec2<i32>(-1, -1)); }
  }
  for (var k = lane; k < NCAND; k += LANES) {
    let c = candidate(k);
    let ba = geom_aabb(u32(c.x));
    let bb = geom_aabb(u32(c.y));
    scr[cand(k)] = select(0.0, 1.0, all(ba[0] <= bb[1]) && all(bb[0] <= ba[1]));
  }
  barrier();
  if (lane == 0u) {
    overflow = 0u;
    var count = array<u32, NBLOCK_ARR>();
    for (var k = 0u; k < NCAND; k++) {
      if (scr[cand(k)] > 0.0) {
        let c = candidate(k);
        let t = u32(c.z);
        if (count[t] < u32(tab[T_BLOCK_CAP + t])) {
          set_pair(u32(tab[T_BLOCK_PAIR0 + t]) + count[t], c.xy);
          count[t] = count[t] + 1u;
        } else { overflow = overflow + 1u; }
      }
    }
  }
}

fn geom_of(g: i32, s: Side) -> Geom {
  let u = u32(g);
  return Geom(s.x + rotate(s.q, p3(OFF_GEOM_POS + 3u * u)), qmul(s.q, p4q(OFF_GEOM_QUAT + 4u * u)),
              p3(OFF_GEOM_SIZE + 3u * u));
}

fn pair_contacts(kind: u32, a: Geom, b: Geom) {
  switch kind {
    case 0u: { plane_sphere(a, b); }
    case 1u: { plane_capsule(a, b); }
    case 2u: { plane_box(a, b); }
    case 3u: { sphere_sphere(a, b); }
    case 4u: { sphere_capsule(a, b); }
    case 5u: { capsule_capsule(a, b); }
    case 6u: { sphere_box(a, b); }
    case 7u: { capsule_box(a, b); }
    default: { box_box(a, b); }
  }
}

// contacts of every candidate pair at the substep's predicted poses, stored in the bodies' frames (oracle/contacts.py
// narrowphase): [valid | n | ra | rb | friction | restitution | approach speed]
fn narrowphase() {
  for (var p = lane; p < NPAIR; p += LANES) {   // nc is per lane (private): a pair's slots are its lane's
    let g = pair_geoms(p);
    if (g.x < 0) { continue; }   // an empty pair's slots are never read (slot_live)
    let sa = geom_body_pose(g.x);
    let sb = geom_body_pose(g.y);
    let ba = geom_body(u32(g.x));
    let bb = geom_body(u32(g.y));
    let va = body_vel(ba); let wa = body_angvel(ba); let vb = body_vel(bb); let wb = body_angvel(bb);
    let fric = max(p1(OFF_GEOM_FRICTION + u32(g.x)), p1(OFF_GEOM_FRICTION + u32(g.y)));
    let rest = max(p1(OFF_GEOM_RESTITUTION + u32(g.x)), p1(OFF_GEOM_RESTITUTION + u32(g.y)));
    pair_contacts(u32(tab[T_PAIR_KIND + p]), geom_of(g.x, sa), geom_of(g.y, sb));
    for (var k = 0u; k < u32(tab[T_PAIR_SLOTS + p]); k++) {
      let i = u32(tab[T_PAIR_SLOT0 + p]) + k;
      let c = nc[k];
      let oa = c.pa - sa.x;
      let ob = c.pb - sb.x;
      let vrel = (va + cross(wa, oa)) - (vb + cross(wb, ob));
      scr[sl(i)] = select(0.0, 1.0, c.valid);
      sv3(sl(i) + 1u, c.n);
      sv3(sl(i) + 4u, inv_rotate(sa.q, oa));
      sv3(sl(i) + 7u, inv_rotate(sb.q, ob));
      scr[sl(i) + 10u] = fric;
      scr[sl(i) + 11u] = rest;
      scr[sl(i) + 12u] = dot(vrel, c.n);
    }
  }
}

// the slots of an empty pair (no candidate this step) hold nothing: the constraint passes skip them and the per-body
// sums skip their pair. Valid pairs fill each block from its start, so live slots come in a few runs, which the
// lanes' round robin over slots spreads evenly
fn slot_live(i: u32) -> bool { return pair_geoms(u32(tab[T_SLOT_PAIR + i])).x >= 0; }
fn slot_side(i: u32, s: u32) -> Side {   // body side s (0: a, 1: b) of live contact slot i, unsplit, from the snapshot
  return gather_side(slot_body(i, s));
}
fn slot_body(i: u32, s: u32) -> i32 {   // of a live slot; -1 for a world geom
  let g = pair_geoms(u32(tab[T_SLOT_PAIR + i]));
  return geom_body(u32(select(g.y, g.x, s == 0u)));
}
fn body_disp(b: i32) -> vec3<f32> { if (b < 0) { return vec3<f32>(0.0); } return bd[u32(b)]; }
fn body_rot(b: i32) -> vec3<f32> { if (b < 0) { return vec3<f32>(0.0); } return bth[u32(b)]; }

// remove err along n at the points: impulse -P n on a, +P n on b (M20 eqs. 2-4, alpha~ = 0); returns P in .w
struct Push { c: Correction, mag: f32 }
fn push(s1: Side, s2: Side, oa: vec3<f32>, ob: vec3<f32>, n: vec3<f32>, err: f32, on: bool) -> Push {
  let w = inv_mass_at(s1, oa, n) + inv_mass_at(s2, ob, n);
  let mag = select(0.0, err / (w + 1e-30), on);
  let p = n * mag;
  return Push(Correction(-(p * s1.im), -world_inv_inertia(s1, cross(oa, p)), p * s2.im, world_inv_inertia(s2, cross(ob, p))), mag);
}

// normal then static friction of contact slot i from the Jacobi snapshot (M20 sec. 3.5); slot lambdas hold the
// multipliers of the previous iteration (zero at a substep's first)
fn contact(i: u32) {
  let s1 = slot_side(i, 0u);
  let s2 = slot_side(i, 1u);
  let n = lv3(sl(i) + 1u);
  let oa = rotate(s1.q, lv3(sl(i) + 4u));
  let ob = rotate(s2.q, lv3(sl(i) + 7u));
  let d = dot((s1.x + oa) - (s2.x + ob), n);
  let valid = scr[sl(i)] > 0.0;
  let touching = valid && d > 0.0;
  var err = d;
  var on = touching;
  if (CONTACT_BETA > 0.0) { err = max(d, 0.0) + log(exp(-(abs(d) * CONTACT_BETA)) + 1.0) / CONTACT_BETA; on = valid; }
  let normal = push(s1, s2, oa, ob, n, err, on);
  let lam_n = scr[sl(i) + 25u] + normal.mag;
  let ba = slot_body(i, 0u);
  let bb = slot_body(i, 1u);
  let dp = (body_disp(ba) + cross(body_rot(ba), oa)) - (body_disp(bb) + cross(body_rot(bb), ob));
  let dpt = dp - n * dot(dp, n);
  let slip = norm_dir(dpt, EPS);
  let w = inv_mass_at(s1, oa, slip.dir) + inv_mass_at(s2, ob, slip.dir);
  let pt = slip.len / (w + 1e-30);
  let stick = on && slip.on && ((scr[sl(i) + 25u + 1u] + pt) < scr[sl(i) + 10u] * lam_n);
  let fr = push(s1, s2, oa, ob, slip.dir, slip.len, stick);
  set_slot_corr(i, chain2(normal.c, fr.c));
  sv3(sl(i) + 25u, vec3<f32>(lam_n, scr[sl(i) + 25u + 1u] + fr.mag, select(0.0, 1.0, touching)));
}

// per body b >= 0: the contact sides touching it, summed in slot order (a side, then b side), and their count. A
// pair's slots are consecutive and its two geoms belong to different bodies, so walking the pairs in order and
// summing the one matching side of each slot of a pair is that order, at a fraction of a test per slot
fn contact_sum_add(b: i32, dx: ptr<function, vec3<f32>>, dth: ptr<function, vec3<f32>>) -> f32 {
  var n = 0.0;
  for (var p = 0u; p < NPAIR; p++) {
    let g = pair_geoms(p);
    if (g.x < 0) { continue; }   // an empty pair's slots belong to no body
    let side_a = geom_body(u32(g.x)) == b;
    if (!side_a && geom_body(u32(g.y)) != b) { continue; }
    let off = select(19u, 13u, side_a);   // dx1, dth1 or dx2, dth2 of the slot's correction
    let i0 = u32(tab[T_PAIR_SLOT0 + p]);
    for (var i = i0; i < i0 + u32(tab[T_PAIR_SLOTS + p]); i++) {
      *dx = *dx + lv3(sl(i) + off);
      *dth = *dth + lv3(sl(i) + off + 3u);
      n = n + scr[sl(i) + 25u + 2u];
    }
  }
  return n;
}

// dynamic friction and restitution of every contact that touched in the position solve (M20 sec. 3.6, eqs. 30-35)
fn contact_velocity(h: f32) {
  let g = p3(OFF_GRAVITY);
  for (var i = lane; i < NSLOT; i += LANES) {
    if (!slot_live(i)) { continue; }
    let s1 = slot_side(i, 0u);
    let s2 = slot_side(i, 1u);
    let ba = slot_body(i, 0u);
    let bb = slot_body(i, 1u);
    let n = lv3(sl(i) + 1u);
    let oa = rotate(s1.q, lv3(sl(i) + 4u));
    let ob = rotate(s2.q, lv3(sl(i) + 7u));
    let vrel = (body_vel(ba) + cross(body_angvel(ba), oa)) - (body_vel(bb) + cross(body_angvel(bb), ob));
    let u = dot(vrel, n);
    let st = norm_dir(vrel - n * u, 1e-9);
    let wt = inv_mass_at(s1, oa, st.dir) + inv_mass_at(s2, ob, st.dir);
    let friction = min(scr[sl(i) + 10u] * scr[sl(i) + 25u] * wt / h, st.len);
    let u0 = scr[sl(i) + 12u];
    let e = select(0.0, scr[sl(i) + 11u], abs(u0) > 2.0 * sqrt(dot(g, g)) * h);
    let du = -u + min(-e * u0, 0.0);
    let dv = n * du - st.dir * select(0.0, friction, st.on);
    let dd = norm_dir(dv, 1e-12);
    let touching = scr[sl(i) + 25u + 2u] > 0.0;
    let w = inv_mass_at(s1, oa, dd.dir) + inv_mass_at(s2, ob, dd.dir);
    let p = dd.dir * select(0.0, dd.len / (w + 1e-30), touching && dd.on);
    set_slot_corr(i, Correction(p * s1.im, world_inv_inertia(s1, cross(oa, p)), -(p * s2.im), -world_inv_inertia(s2, cross(ob, p))));
  }
  barrier();   // every slot's impulse written, and every slot's read of the velocities done
  for (var b = lane; b < NBODY; b += LANES) {
    var dv = vec3<f32>(0.0);
    var dw = vec3<f32>(0.0);
    let cnt = contact_sum_add(i32(b), &dv, &dw);
    let scale = 1.0 / max(cnt, 1.0);
    bv[b] = bv[b] + dv * scale;
    bw[b] = bw[b] + dw * scale;
  }
}
