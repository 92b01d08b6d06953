// The contact plan's storage (oracle/contacts.py: the plan and the narrowphase row layout), the kernel's side of it:
// per pair slot its two model geoms (-1: empty), per contact slot its narrowphase row and this substep's solve
// result; slots are laid out block by block, pair by pair, as the oracle's plan. They live in this env's row of the
// scratch buffer `scr`, and the scene's static tables in `tab`, not in private arrays: lavapipe lowers a
// dynamically indexed private array to a compare-and-select over every element, so compile time grew with the slot
// count (2.7 s at 8 slots, 24 s at 64, over 10 minutes at stack10's 260).
// scr row (kernels/layout.py contact_tables): [pair geoms 2 NPAIR (as floats: -1 stored as bits would be a NaN,
// which a float store may change) | SLOT_W floats per contact slot, from SCR_SLOTS | the spatial hash's work rows
// (kernels/broadphase.wgsl), from SCR_AABB, SCR_CELL, SCR_BUCKET and SCR_ROW | pairs dropped (OVF)]. A slot's floats are laid out by the header's SLOT_*
// offsets, generated from the oracle's narrowphase row (oracle/contacts.py VALID, NORMAL, ...) followed by its
// contact solve's result row (oracle/solve.py DX1 .. DTH2, LAMBDA_N, LAMBDA_T, TOUCHED, TOUCHING).

fn sl(i: u32) -> u32 { return sb + SCR_SLOTS + SLOT_W * i; }   // contact slot i's first float in scr
fn lv3(o: u32) -> vec3<f32> { return vec3<f32>(scr[o], scr[o + 1u], scr[o + 2u]); }
fn sv3(o: u32, v: vec3<f32>) { scr[o] = v.x; scr[o + 1u] = v.y; scr[o + 2u] = v.z; }
fn pair_geoms(p: u32) -> vec2<i32> { return vec2<i32>(i32(scr[sb + 2u * p]), i32(scr[sb + 2u * p + 1u])); }
fn set_pair(p: u32, g: vec2<i32>) { scr[sb + 2u * p] = f32(g.x); scr[sb + 2u * p + 1u] = f32(g.y); }
fn set_slot_corr(i: u32, c: Correction) {
  sv3(sl(i) + SLOT_DX1, c.dx1);
  sv3(sl(i) + SLOT_DTH1, c.dth1);
  sv3(sl(i) + SLOT_DX2, c.dx2);
  sv3(sl(i) + SLOT_DTH2, c.dth2);
}
fn geom_body(g: u32) -> i32 { return tab[T_GEOM_BODY + g]; }
fn geom_body_pose(g: i32) -> Side {   // the owning body as a contact side (unsplit mass); the world for world geoms
  return gather_side(geom_body(u32(g)));
}

// geom g in the world frame from its body's pose s (oracle/contacts.py _geom)
fn geom_of(g: i32, s: Side) -> Geom {
  let u = u32(g);
  return Geom(s.x + rotate(s.q, p3(OFF_GEOM_POS + 3u * u)), qmul(s.q, p4q(OFF_GEOM_QUAT + 4u * u)),
              p3(OFF_GEOM_SIZE + 3u * u));
}

// Loop bounds read from `tab` (kernels/program.py LOOP_BOUNDS), not the header's constants, for the once-per-step
// loops of the broadphase and index_pairs: lavapipe's LLVM fully unrolls a loop with a small constant trip count,
// and unrolled copies of the AABB, the neighbour walk and the pair loops made stack10's kernel compile in 36 s
// instead of 11 (measured with MESA_SHADER_CACHE_DISABLE=true)
fn n_neighbours() -> u32 { return u32(tab[T_LOOP_BOUNDS]); }        // 27
fn n_slots() -> u32 { return u32(tab[T_LOOP_BOUNDS + 1u]); }        // HASH_SLOTS
fn n_hash() -> u32 { return u32(tab[T_LOOP_BOUNDS + 2u]); }         // NHASH
fn n_type() -> u32 { return u32(tab[T_LOOP_BOUNDS + 3u]); }         // NTYPE
fn n_pair() -> u32 { return u32(tab[T_LOOP_BOUNDS + 4u]); }         // NPAIR
fn n_body() -> u32 { return u32(tab[T_LOOP_BOUNDS + 5u]); }         // NBODY

// The step's live lists, built once per step after the broadphase (index_pairs), so that the substeps visit only the
// pairs that hold geoms (an empty pair's slots hold nothing) instead of every slot of the plan: the live pairs and
// their contact slots in plan order, and per body the live pairs touching it in pair order (a CSR), which is the
// order oracle/solve.py contact_sum adds them in. scr from SCR_LIVE: [live pairs n | n pair indices (NPAIR room) |
// live slots m | m slot indices (NSLOT room)]; from SCR_BODYP: [first entry per body, NBODY + 1 | fill cursor per
// body, NBODY | the entries: pair indices, 2 NPAIR room]. Lane 0 builds them, O(NPAIR + NBODY)
// (a scene without contact slots runs no broadphase: its lists are empty, never read from scr)
fn n_live_pairs() -> u32 { if (NSLOT == 0u) { return 0u; } return u32(scr[sb + SCR_LIVE]); }
fn live_pair(k: u32) -> u32 { return u32(scr[sb + SCR_LIVE + 1u + k]); }
fn n_live_slots() -> u32 { if (NSLOT == 0u) { return 0u; } return u32(scr[sb + SCR_LIVE + 1u + NPAIR]); }
fn live_slot(k: u32) -> u32 { return u32(scr[sb + SCR_LIVE + 2u + NPAIR + k]); }
fn body_first(b: u32) -> u32 {   // body b's entries: first(b) .. first(b + 1)
  if (NSLOT == 0u) { return 0u; }
  return u32(scr[sb + SCR_BODYP + b]);
}
fn body_pair(k: u32) -> u32 { return u32(scr[sb + SCR_BODYP + 2u * NBODY + 1u + k]); }

fn index_pairs() {
  if (lane != 0u) { return; }
  let first = sb + SCR_BODYP;
  let cursor = first + NBODY + 1u;
  let entries = cursor + NBODY;
  for (var b = 0u; b <= n_body(); b++) { scr[first + b] = 0.0; }
  var n = 0u;
  var m = 0u;
  for (var p = 0u; p < n_pair(); p++) {
    let g = pair_geoms(p);
    if (g.x < 0) { continue; }
    scr[sb + SCR_LIVE + 1u + n] = f32(p);
    n++;
    let i0 = u32(tab[T_PAIR_SLOT0 + p]);
    for (var i = i0; i < i0 + u32(tab[T_PAIR_SLOTS + p]); i++) { scr[sb + SCR_LIVE + 2u + NPAIR + m] = f32(i); m++; }
    for (var s = 0; s < 2; s++) {   // count at first[b + 1], the prefix sum below shifts it into place
      let b = geom_body(u32(select(g.y, g.x, s == 0)));
      if (b >= 0) { scr[first + u32(b) + 1u] = scr[first + u32(b) + 1u] + 1.0; }
    }
  }
  scr[sb + SCR_LIVE] = f32(n);
  scr[sb + SCR_LIVE + 1u + NPAIR] = f32(m);
  for (var b = 0u; b < n_body(); b++) {
    scr[first + b + 1u] = scr[first + b + 1u] + scr[first + b];
    scr[cursor + b] = scr[first + b];
  }
  for (var k = 0u; k < n; k++) {
    let p = live_pair(k);
    let g = pair_geoms(p);
    for (var s = 0; s < 2; s++) {
      let b = geom_body(u32(select(g.y, g.x, s == 0)));
      if (b >= 0) {
        scr[entries + u32(scr[cursor + u32(b)])] = f32(p);
        scr[cursor + u32(b)] = scr[cursor + u32(b)] + 1.0;
      }
    }
  }
}
fn slot_side(i: u32, s: u32) -> Side {   // body side s (0: a, 1: b) of live contact slot i, unsplit, from the snapshot
  return gather_side(slot_body(i, s));
}
fn slot_body(i: u32, s: u32) -> i32 {   // of a live slot; -1 for a world geom
  let g = pair_geoms(u32(tab[T_SLOT_PAIR + i]));
  return geom_body(u32(select(g.y, g.x, s == 0u)));
}
