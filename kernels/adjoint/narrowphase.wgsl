// Adjoint of the narrowphase stage (kernels/narrowphase.wgsl, oracle/narrowphase.py), and the contact slots'
// adjoint that the contact stages fill in reverse before it reads it. Each live slot's row (n, ra, rb, friction,
// restitution, approach) is read by every Jacobi iteration's contact and by the velocity pass, and its multipliers
// (lambda_n, lambda_t) carry from one iteration to the next: their gradients gather on the tape from TAPE_SLOTADJ,
// SLOTADJ_W floats per slot at the SA_* offsets (zeroed at each substep_adj's start).

const SA_NORMAL = 0u;
const SA_RA = 3u;
const SA_RB = 6u;
const SA_FRICTION = 9u;
const SA_RESTITUTION = 10u;
const SA_APPROACH = 11u;
const SA_LAMBDA_N = 12u;
const SA_LAMBDA_T = 13u;

fn slot_grads(i: u32) -> u32 { return tb + TAPE_SLOTADJ + SLOTADJ_W * i; }
fn add_slot_adj3(o: u32, g: vec3<f32>) { put3(o, t3(o) + g); }

// geom_of(g, s) = Geom(x + rotate(q, pos_g), qmul(q, quat_g), size_g): the geom parameters' gradients, and the
// side's (x, q) returned
fn geom_of_adj(g: i32, s: Side, ga: GeomAdj) -> SideAdj {
  let u = u32(g);
  let ro = rotate_adj(s.q, p3(OFF_GEOM_POS + 3u * u), ga.pos);
  let qm = qmul_adj(s.q, p4q(OFF_GEOM_QUAT + 4u * u), ga.rot);
  gp3(OFF_GEOM_POS + 3u * u, ro.v);
  gp4q(OFF_GEOM_QUAT + 4u * u, qm.b);
  gp3(OFF_GEOM_SIZE + 3u * u, ga.size);
  return SideAdj(ga.pos, qadd(ro.q, qm.a), 0.0, vec3<f32>(0.0));
}

// the stage's adjoint at the poses and velocities integrate predicted (substep_adj restores them): per live pair,
// the pair function replayed, its rows' gradients taken back to its contacts' (pa, pb, n) in gnc, then through the
// pair's adjoint (pair_contacts_adj, generated with pair_contacts) to the two geoms, their bodies and parameters
fn narrowphase_adj() {   // with LANES > 1 the pairs on their lanes, then each body's lane gathers their records
  for (var k = lane; k < n_live_pairs(); k += LANES) {
    let p = live_pair(k);
    let g = pair_geoms(p);
    let sa = geom_body_pose(g.x);
    let sb = geom_body_pose(g.y);
    let ba = geom_body(u32(g.x));
    let bb = geom_body(u32(g.y));
    let va = body_vel(ba); let wa = body_angvel(ba); let vb = body_vel(bb); let wb = body_angvel(bb);
    let kind = u32(tab[T_PAIR_KIND + p]);
    let ga = geom_of(g.x, sa);
    let gb = geom_of(g.y, sb);
    pair_contacts(kind, ga, gb);
    var asa = side_adj_zero();
    var asb = side_adj_zero();
    var gva = vec3<f32>(0.0); var gwa = vec3<f32>(0.0); var gvb = vec3<f32>(0.0); var gwb = vec3<f32>(0.0);
    var gfric = 0.0;
    var grest = 0.0;
    for (var m = 0u; m < u32(tab[T_PAIR_SLOTS + p]); m++) {
      let a = slot_grads(u32(tab[T_PAIR_SLOT0 + p]) + m);
      let c = nc[m];
      let oa = c.pa - sa.x;
      let ob = c.pb - sb.x;
      let vrel = (va + cross(wa, oa)) - (vb + cross(wb, ob));
      let gvrel = c.n * tape[a + SA_APPROACH];             // approach = vrel.n
      let ra = inv_rotate_adj(sa.q, oa, t3(a + SA_RA));    // ra = inv_rotate(q_a, oa), rb likewise
      let rb = inv_rotate_adj(sb.q, ob, t3(a + SA_RB));
      let goa = ra.v + cross(gvrel, wa);
      let gob = rb.v - cross(gvrel, wb);
      gva = gva + gvrel;
      gwa = gwa + cross(oa, gvrel);
      gvb = gvb - gvrel;
      gwb = gwb - cross(ob, gvrel);
      asa.q = qadd(asa.q, ra.q);
      asb.q = qadd(asb.q, rb.q);
      asa.x = asa.x - goa;                                  // oa = pa - x_a, ob = pb - x_b
      asb.x = asb.x - gob;
      gnc[m] = ContactAdj(goa, gob, t3(a + SA_NORMAL) + vrel * tape[a + SA_APPROACH]);
      gfric = gfric + tape[a + SA_FRICTION];
      grest = grest + tape[a + SA_RESTITUTION];
    }
    let pg = pair_contacts_adj(kind, ga, gb);
    asa = side_adj_add(asa, geom_of_adj(g.x, sa, pg.a));
    asb = side_adj_add(asb, geom_of_adj(g.y, sb, pg.b));
    item_side(true, p, 0u, ba, asa, 1.0, gva, gwa);
    item_side(true, p, 1u, bb, asb, 1.0, gvb, gwb);
    // friction and restitution: the larger of the two geoms' (a tie halves)
    let fa = OFF_GEOM_FRICTION + u32(g.x);
    let fb = OFF_GEOM_FRICTION + u32(g.y);
    let gf = grad_max(p1(fa), p1(fb), gfric);
    gp1(fa, gf.x); gp1(fb, gf.y);
    let ea = OFF_GEOM_RESTITUTION + u32(g.x);
    let eb = OFF_GEOM_RESTITUTION + u32(g.y);
    let ge = grad_max(p1(ea), p1(eb), grest);
    gp1(ea, ge.x); gp1(eb, ge.y);
  }
  if (LANES == 1u) { return; }
  barrier();
  for (var b = lane; b < NBODY; b += LANES) { gather_pairs(true, b); }
}
