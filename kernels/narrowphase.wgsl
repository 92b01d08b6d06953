// The narrowphase stage (oracle/narrowphase.py): the contacts of every candidate pair at the substep's predicted
// poses, each slot's row stored in the bodies' frames at the header's SLOT_* offsets (the oracle's row layout). The
// pair functions (kernels/primitives.wgsl, box.wgsl, box_box.wgsl) write their slots to nc; pair_contacts, generated
// in the header from the oracle's registry (oracle/collide NARROWPHASE), dispatches on the pair's kind.
fn narrowphase() {
  for (var k = lane; k < n_live_pairs(); k += LANES) {   // nc is per lane (private): a pair's slots are its lane's
    let p = live_pair(k);   // an empty pair's slots are never read (kernels/contacts.wgsl index_pairs)
    let g = pair_geoms(p);
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
      scr[sl(i) + SLOT_VALID] = select(0.0, 1.0, c.valid);
      sv3(sl(i) + SLOT_NORMAL, c.n);
      sv3(sl(i) + SLOT_RA, inv_rotate(sa.q, oa));
      sv3(sl(i) + SLOT_RB, inv_rotate(sb.q, ob));
      scr[sl(i) + SLOT_FRICTION] = fric;
      scr[sl(i) + SLOT_RESTITUTION] = rest;
      scr[sl(i) + SLOT_APPROACH] = dot(vrel, c.n);
    }
  }
}
