// The broadphase stage (oracle/broadphase.py), once per step (M20 sec. 3.5): the same uniform spatial hash as the
// oracle, stage by stage, so it returns the same pair table in the same canonical order with the same overflow. The
// oracle's tensor form is O(N^2) per env (one-hot gathers into an (N, N) matrix); here each stage is a loop over the
// N hashed geoms, O(N) per env for bodies of bounded density. Stages (lanes share the geoms; lane 0 runs the two
// sequential ones, O(N M) and O(N)):
//   1. AABB of every hashed geom (scr SCR_AABB), also read by the plane pairs (plane_reach); the table is cleared
//   2. the cell size s (the largest full extent, times CELL_MARGIN), each geom's cell and bucket (SCR_CELL)
//   3. lane 0 inserts the geoms in index order: a geom's slot in its bucket is its rank (lower-index geoms with the
//      same bucket), as in the oracle; one ranked >= HASH_SLOTS does not fit, counts as overflow, pairs with nothing
//   4. each geom that fits counts, per column type, the pairs it heads: partners from the buckets of its 27 neighbour
//      cells (a slot counts only if its geom's cell IS that cell), accepted by `heads` (SCR_ROW counts)
//   5. lane 0 turns the counts into each row's first slot in its type-pair block (prefix sums in geom order, which
//      is the block's row order) and counts the pairs beyond a block's capacity as overflow
//   6. each row writes its partners in increasing index order into its slots, up to the block's capacity
// Plane pairs have static slots (every world plane against every body geom), the plan's first, filled where the
// geom's AABB reaches the plane (plane_reach).

var<private> hash_fresh = true;   // no step of this launch has hashed yet

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

// hashed geom i's rows in scr: AABB [lo 3 | hi 3], cell [ix | iy | iz | bucket | fits], and per column type t the
// pairs it heads [count | first slot in its block]
fn h_aabb(i: u32) -> u32 { return sb + SCR_AABB + 6u * i; }
fn h_cell(i: u32) -> u32 { return sb + SCR_CELL + 5u * i; }
fn h_row(i: u32, t: u32) -> u32 { return sb + SCR_ROW + 2u * (NTYPE * i + t); }
fn h_bucket(k: u32) -> u32 { return sb + SCR_BUCKET + HASH_SLOTS * k; }   // bucket k's first slot (geom + 1, 0: empty)
fn hashed_geom(i: u32) -> u32 { return u32(tab[T_HASHED + i]); }
fn hashed_type(i: u32) -> u32 { return u32(tab[T_GEOM_TYPE + hashed_geom(i)]); }
fn cell_of(i: u32) -> vec3<i32> { let o = h_cell(i); return vec3<i32>(i32(scr[o]), i32(scr[o + 1u]), i32(scr[o + 2u])); }

// Teschner et al. 2003: (ix p1 ^ iy p2 ^ iz p3) mod NBUCKET on u32 (products wrap mod 2^32, as the oracle's _bucket)
fn bucket_of(c: vec3<i32>) -> u32 {
  let u = bitcast<vec3<u32>>(c) * vec3<u32>(HASH_P0, HASH_P1, HASH_P2);
  return (u.x ^ u.y ^ u.z) & (NBUCKET - 1u);
}

// neighbour cell n of c, n = 0 .. 26 (oracle NEIGHBOURS: offsets in {-1, 0, 1}, x slowest)
fn neighbour(c: vec3<i32>, n: u32) -> vec3<i32> {
  return c + vec3<i32>(i32(n / 9u) - 1, i32((n / 3u) % 3u) - 1, i32(n % 3u) - 1);
}

// oracle/broadphase.py pair_allowed: different bodies (world geoms share -1) whose pair is not excluded
fn pair_allowed(ba: i32, bb: i32) -> bool {
  if (ba == bb) { return false; }
  let lo = min(ba, bb);
  let hi = max(ba, bb);
  for (var k = tab[T_EXCL_START + u32(lo + 1)]; k < tab[T_EXCL_START + u32(lo + 2)]; k++) {
    if (tab[T_EXCL_LIST + u32(k)] == hi) { return false; }
  }
  return true;
}

// whether hashed geom i heads the accepted pair {i, j}: i is the pair's column 0 (the earlier type in GEOM_TYPES, or
// the lower index of two equal types), the AABBs overlap (closed intervals) and the rules allow it
fn heads(i: u32, ti: u32, j: u32, tj: u32) -> bool {
  if (j == i || tj < ti || (tj == ti && j < i)) { return false; }
  let a = h_aabb(i);
  let b = h_aabb(j);
  if (!(all(lv3(a) <= lv3(b + 3u)) && all(lv3(b) <= lv3(a + 3u)))) { return false; }
  return pair_allowed(geom_body(hashed_geom(i)), geom_body(hashed_geom(j)));
}

// The neighbour walk of stages 4 and 6 for hashed geom i (of type ti): the geoms j in the buckets of its 27 neighbour
// cells whose cell IS that cell and whose pair i heads. t == NTYPE counts them, per column type, into i's rows (scr
// SCR_ROW counts, zeroed first); t < NTYPE returns the partner of type t with the lowest index above `above` (-1:
// none), so that a row is written in increasing index order
fn walk(i: u32, ti: u32, t: u32, above: i32) -> i32 {
  let c = cell_of(i);
  var best = -1;
  for (var n = 0u; n < n_neighbours(); n++) {
    let nc = neighbour(c, n);
    let base = h_bucket(bucket_of(nc));
    for (var m = 0u; m < n_slots(); m++) {
      let j1 = i32(scr[base + m]);
      if (j1 == 0) { break; }   // slots fill from 0 in rank order: the rest are empty
      let j = u32(j1 - 1);
      let tj = hashed_type(j);
      let wanted = t == NTYPE || (tj == t && j1 - 1 > above && (best < 0 || j1 - 1 < best));
      if (wanted && all(cell_of(j) == nc) && heads(i, ti, j, tj)) {
        if (t == NTYPE) { scr[h_row(i, tj)] = scr[h_row(i, tj)] + 1.0; } else { best = j1 - 1; }
      }
    }
  }
  return best;
}

// stages 4 (write false: count i's partners per column type, one walk) and 6 (write true: fill i's rows, one walk
// per entry, up to the block's capacity) for a hashed geom that fits. `walk` is called from here alone, and this from
// one loop: lavapipe inlines every call, and each copy of the walk cost ~1.7 s of compile (stack10)
fn rows(i: u32, write: bool) {
  let ti = hashed_type(i);
  var t = select(NTYPE, 0u, write);   // the column type whose row is being written (NTYPE: counting)
  var k = 0u;                         // its next entry
  var last = -1;                      // the partner written last
  loop {
    if (write) {   // the next entry to fill: a row is done past its count or its block's capacity
      loop {
        if (t >= n_type()) { return; }
        let blk = tab[T_BLOCK_OF + NTYPE * ti + t];
        if (blk >= 0) {
          let cap = u32(tab[T_BLOCK_CAP + u32(blk)]);
          if (k < u32(scr[h_row(i, t)]) && u32(scr[h_row(i, t) + 1u]) + k < cap) { break; }
        }
        t++;
        k = 0u;
        last = -1;
      }
    }
    let j = walk(i, ti, t, last);
    if (!write) { return; }
    let blk = u32(tab[T_BLOCK_OF + NTYPE * ti + t]);
    set_pair(u32(tab[T_BLOCK_PAIR0 + blk]) + u32(scr[h_row(i, t) + 1u]) + k,
             vec2<i32>(i32(hashed_geom(i)), i32(hashed_geom(u32(j)))));
    last = j;
    k++;
  }
}

// oracle/broadphase.py plane_reach: whether hashed geom i's AABB (stored by broadphase) reaches plane pl's
// half-space, its lowest corner along the plane's normal (the plane frame's z axis) at or below the plane; the same
// sums in the same order as the oracle
fn plane_reach(pl: u32, i: u32) -> bool {
  let n = rotation_columns(p4q(OFF_GEOM_QUAT + 4u * pl))[2];
  let pos = p3(OFF_GEOM_POS + 3u * pl);
  let low = select(lv3(h_aabb(i) + 3u), lv3(h_aabb(i)), n > vec3<f32>(0.0));
  return n.x * low.x + n.y * low.y + n.z * low.z <= n.x * pos.x + n.y * pos.y + n.z * pos.z;
}

// this step's pair table, then the live lists the substeps loop over (kernels/contacts.wgsl index_pairs). Plane
// pairs keep their static slots, the plan's first, empty where the geom cannot reach the plane this step
fn broadphase() {
  overflow = 0u;
  // 1. (for the plane pairs too: every non-plane geom is hashed, kernels/layout.py contact_tables)
  for (var i = lane; i < n_hash(); i += LANES) {
    let b = geom_aabb(hashed_geom(i));
    sv3(h_aabb(i), b[0]);
    sv3(h_aabb(i) + 3u, b[1]);
  }
  barrier();
  for (var p = lane; p < n_pair(); p += LANES) {
    var pair = vec2<i32>(-1, -1);
    if (p < NPLANE_PAIR) {
      let pg = vec2<i32>(tab[T_PLANE_PAIRS + 2u * p], tab[T_PLANE_PAIRS + 2u * p + 1u]);
      if (plane_reach(u32(pg.x), u32(tab[T_PLANE_AT + p]))) { pair = pg; }
    }
    set_pair(p, pair);
  }
  if (NBLOCK > 0u) { spatial_hash(); }
  barrier();
  index_pairs();
}

// stages 2 to 6 on the AABBs broadphase stored (stage 1)
fn spatial_hash() {
  // empty buckets: all of them at a launch's first step (the scratch holds the last launch's, or nothing), then only
  // the buckets the last step filled, which stage 2 left in the cell rows (the ant x256 on lavapipe: 4.05 -> 3.94 ms
  // a step). Two geoms of one bucket clear it twice, with the same zeros
  if (hash_fresh) {
    for (var k = lane; k < NBUCKET * HASH_SLOTS; k += LANES) { scr[h_bucket(0u) + k] = 0.0; }
  } else {
    for (var i = lane; i < n_hash(); i += LANES) {
      let base = h_bucket(u32(scr[h_cell(i) + 3u]));
      for (var m = 0u; m < n_slots(); m++) { scr[base + m] = 0.0; }
    }
  }
  hash_fresh = false;
  barrier();
  // 2. every lane takes the same max (exact in any order); the centre times 1 / s, as tinygrad divides
  var size = 0.0;
  for (var i = 0u; i < n_hash(); i++) {
    let e = lv3(h_aabb(i) + 3u) - lv3(h_aabb(i));
    size = max(size, max(e.x, max(e.y, e.z)));
  }
  let inv = 1.0 / (size * BROADPHASE_CELL_MARGIN);
  for (var i = lane; i < n_hash(); i += LANES) {
    let q = floor((lv3(h_aabb(i)) + lv3(h_aabb(i) + 3u)) * 0.5 * inv);
    // a NaN centre goes to cell 0 (the oracle's (q == q).where(q, 0)), tested on the bits: WGSL may fold q != q
    let nan = (bitcast<vec3<u32>>(q) & vec3<u32>(0x7fffffffu)) > vec3<u32>(0x7f800000u);
    let lim = f32(BROADPHASE_CELL_LIMIT);
    let c = vec3<i32>(clamp(select(q, vec3<f32>(0.0), nan), vec3<f32>(-lim), vec3<f32>(lim)));
    sv3(h_cell(i), vec3<f32>(c));
    scr[h_cell(i) + 3u] = f32(bucket_of(c));
  }
  barrier();
  // 3.
  if (lane == 0u) {
    for (var i = 0u; i < n_hash(); i++) {
      let base = h_bucket(u32(scr[h_cell(i) + 3u]));
      var m = 0u;
      while (m < n_slots() && scr[base + m] != 0.0) { m++; }
      let fits = m < n_slots();
      if (fits) { scr[base + m] = f32(i + 1u); } else { overflow = overflow + 1u; }
      scr[h_cell(i) + 4u] = select(0.0, 1.0, fits);
    }
  }
  barrier();
  // 4. to 6.: the rows' counts, their first slots, their partners. One loop over both passes, so that rows() and
  // its walk have one call site. A constant bound of 2 would be unrolled into two copies, and a bound read from tab
  // is not uniform (a barrier follows); min(INFINITY, 2) is 2, uniform, and unknown to the compiler
  for (var ph = 0u; ph < u32(min(INFINITY, 2.0)); ph++) {
    if (ph == 1u) { barrier(); block_offsets(); barrier(); }   // 5.
    for (var i = lane; i < n_hash(); i += LANES) {
      if (ph == 0u) { for (var t = 0u; t < n_type(); t++) { scr[h_row(i, t)] = 0.0; } }
      if (scr[h_cell(i) + 4u] > 0.0) { rows(i, ph == 1u); }   // a geom that does not fit pairs with nothing
    }
  }
}

// 5. lane 0 turns the counts into each row's first slot in its type-pair block (prefix sums in geom order) and counts
// the pairs beyond a block's capacity as overflow
fn block_offsets() {
  if (lane != 0u) { return; }
  var running = array<u32, NBLOCK_ARR>();
  for (var i = 0u; i < n_hash(); i++) {
    let ti = hashed_type(i);
    for (var t = 0u; t < n_type(); t++) {
      let blk = tab[T_BLOCK_OF + NTYPE * ti + t];
      if (blk >= 0) {
        scr[h_row(i, t) + 1u] = f32(running[blk]);
        running[blk] = running[blk] + u32(scr[h_row(i, t)]);
      }
    }
  }
  for (var t = 0u; t < NBLOCK; t++) {
    let cap = u32(tab[T_BLOCK_CAP + t]);
    if (running[t] > cap) { overflow = overflow + running[t] - cap; }
  }
}
