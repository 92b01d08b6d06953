// The broadphase stage (oracle/broadphase.py), once per step (M20 sec. 3.5): this step's candidate pairs into the
// plan's pair slots (kernels/contacts.wgsl), by a brute-force test of the scene's static candidate list.

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
  let c = rotation_columns(q);
  let half = r + abs(c[0]) * e.x + abs(c[1]) * e.y + abs(c[2]) * e.z;
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
