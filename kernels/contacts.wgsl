// The contact plan's storage (oracle/contacts.py: the plan and the narrowphase row layout), the kernel's side of it:
// per pair slot its two model geoms (-1: empty), per contact slot its narrowphase row and this substep's solve
// result; slots are laid out block by block, pair by pair, as the oracle's plan. They live in this env's row of the
// scratch buffer `scr`, and the scene's static tables in `tab`, not in private arrays: lavapipe lowers a
// dynamically indexed private array to a compare-and-select over every element, so compile time grew with the slot
// count (2.7 s at 8 slots, 24 s at 64, over 10 minutes at stack10's 260).
// scr row (kernels/program.py contact_tables): [pair geoms 2 NPAIR (as floats: -1 stored as bits would be a NaN,
// which a float store may change) | SLOT_W floats per contact slot, from SCR_SLOTS | the spatial hash's work rows
// (kernels/broadphase.wgsl), from SCR_AABB, SCR_CELL, SCR_BUCKET and SCR_ROW | pairs dropped (OVF)]. A slot's floats are laid out by the header's SLOT_*
// offsets, generated from the oracle's narrowphase row (oracle/contacts.py VALID, NORMAL, ...) followed by its
// contact solve's result row (oracle/solve.py DX1 .. DTH2, LAMBDA_N, LAMBDA_T, TOUCHING).

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
