// The solve stage (oracle/solve.py): one Jacobi iteration over every joint and contact from the same snapshot, then
// each body's average of the corrections touching it, summed in the oracle's order.

// --- sides (oracle/solve.py gather_side, split_side) ---
fn gather_side(b: i32) -> Side {
  if (b < 0) { return Side(vec3<f32>(0.0), Quat(1.0, vec3<f32>(0.0)), 0.0, vec3<f32>(0.0)); }
  let u = u32(b);
  return Side(bx[u], bq[u], p1(OFF_BODY_INV_MASS + u), p3(OFF_BODY_INV_INERTIA + 3u * u));
}
// mass splitting (Tonge et al. 2012): a body touched by n joints shows each of them n times its inverse mass
fn split_side(b: i32) -> Side {
  var s = gather_side(b);
  if (b >= 0) { let n = max(COUNTS[u32(b)], 1.0); s.im = s.im * n; s.ii = s.ii * n; }
  return s;
}

// per body b, the sum of the joint corrections jc touching it: parent sides in joint order, then child sides
// (oracle/solve.py body_sum); [dx | dth] (or [dv | dw] in the velocity pass)
fn body_sum(b: u32) -> array<vec3<f32>, 2> {
  var out = array<vec3<f32>, 2>(vec3<f32>(0.0), vec3<f32>(0.0));
  for (var k = 0u; k < NJOINT; k++) {
    let j = JOINT_ORDER[k];
    if (JNT_PARENT[j] == i32(b)) { out[0] = out[0] + jc[j].dx1; out[1] = out[1] + jc[j].dth1; }
  }
  for (var k = 0u; k < NJOINT; k++) {
    let j = JOINT_ORDER[k];
    if (JNT_CHILD[j] == i32(b)) { out[0] = out[0] + jc[j].dx2; out[1] = out[1] + jc[j].dth2; }
  }
  return out;
}

// per body b >= 0: the contact sides touching it, summed in slot order (a side, then b side), and how many count
// (the slot flag `counted`: SLOT_TOUCHING in the solve, SLOT_TOUCHED in the velocity pass, as the oracle counts)
// (oracle/solve.py contact_sum). A pair's slots are consecutive and its two geoms belong to different bodies, so
// walking the body's live pairs in pair order (kernels/contacts.wgsl index_pairs) and summing the one matching side
// of each slot of a pair is that order, and visits only the pairs that touch b
fn contact_sum(b: i32, dx: ptr<function, vec3<f32>>, dth: ptr<function, vec3<f32>>, counted: u32) -> f32 {
  var n = 0.0;
  for (var k = body_first(u32(b)); k < body_first(u32(b) + 1u); k++) {
    let p = body_pair(k);
    let side_a = geom_body(u32(pair_geoms(p).x)) == b;
    let odx = select(SLOT_DX2, SLOT_DX1, side_a);     // the slot correction's dx1, dth1 or dx2, dth2
    let odth = select(SLOT_DTH2, SLOT_DTH1, side_a);
    let i0 = u32(tab[T_PAIR_SLOT0 + p]);
    for (var i = i0; i < i0 + u32(tab[T_PAIR_SLOTS + p]); i++) {
      *dx = *dx + lv3(sl(i) + odx);
      *dth = *dth + lv3(sl(i) + odth);
      n = n + scr[sl(i) + counted];
    }
  }
  return n;
}

// multipliers reset at the start of every substep (M20 Alg. 2 line 10): the joints' and the contact slots'
fn init_lambda() {
  for (var i = lane; i < NLAM_ARR; i += LANES) { lam[i] = 0.0; }
  for (var k = lane; k < n_live_slots(); k += LANES) {   // only live slots are read
    let i = live_slot(k);
    scr[sl(i) + SLOT_LAMBDA_N] = 0.0;
    scr[sl(i) + SLOT_LAMBDA_T] = 0.0;
    scr[sl(i) + SLOT_TOUCHED] = 0.0;
    scr[sl(i) + SLOT_TOUCHING] = 0.0;
  }
}

// joint j's correction from the iteration's snapshot (it also advances the joint's multipliers): the constraint of
// its type on its two split sides. kernels/adjoint/solve.wgsl joint_correction_adj reverses it. HAS_<TYPE> (the
// header's: whether the scene has a joint of the type) makes the other types' constraints dead code
fn joint_correction(j: u32, h: f32) -> Correction {
  let s1 = split_side(JNT_PARENT[j]);
  let s2 = split_side(JNT_CHILD[j]);
  let t = JNT_TYPE[j];
  if (HAS_BALL && t == BALL) { return ball(j, s1, s2, h); }
  if (HAS_HINGE && t == HINGE) { return hinge(j, s1, s2, h); }
  if (HAS_FIXED && t == FIXED) { return fixed(j, s1, s2, h); }
  if (HAS_DISTANCE && t == DISTANCE) { return distance(j, s1, s2, h); }
  if (HAS_SLIDE && t == SLIDE) { return slide(j, s1, s2, h); }
  if (HAS_PLANAR && t == PLANAR) { return planar(j, s1, s2, h); }
  if (HAS_SLIDE2 && t == SLIDE2) { return slide2(j, s1, s2, h); }
  // a group's other hinges: its first holds the group's rows (oracle/solve.py solver_joints)
  if (!GROUPS || JNT_GROUP[3u * j] != j) { return zero_corr(); }
  if (t == HINGE2) { return hinge2(j, s1, s2, h); }
  return hinge3(j, s1, s2, h);
}
// every joint's, in registry order, then joint index
fn joint_corrections(h: f32) {
  for (var k = lane; k < NJOINT; k += LANES) { jc[JOINT_ORDER[k]] = joint_correction(JOINT_ORDER[k], h); }
}

// the contacts' depenetration allowance this pass [m] (oracle/solve.py depenetration): DEPEN = max_depenetration h,
// but 0 in the Jacobi passes of a model with the armature stage, whose contacts' last pass (joints = false) pushes
fn depenetration(joints: bool) -> f32 { return select(0.0, DEPEN, !joints || NARMTREE == 0u); }

// one Jacobi iteration (oracle/solve.py solve): every joint and contact from the same snapshot, then the per-body
// average. joints = false: the contacts alone, averaged over the same counts (the armature stage's last word)
fn solve(h: f32, joints: bool) {
  if (joints) { joint_corrections(h); }
  else { for (var j = lane; j < NJOINT; j += LANES) { jc[j] = zero_corr(); } }
  for (var k = lane; k < n_live_slots(); k += LANES) { contact(live_slot(k), joints); }
  barrier();   // every correction written, and no lane still reads the snapshot that the update below overwrites
  for (var b = lane; b < NBODY; b += LANES) {
    // the joints' sums, then the contacts' (oracle/solve.py body_sum + contact_sum)
    let js = body_sum(b);
    var dx = js[0];
    var dth = js[1];
    var cdx = vec3<f32>(0.0);
    var cdth = vec3<f32>(0.0);
    let touching = contact_sum(i32(b), &cdx, &cdth, SLOT_TOUCHING);
    dx = dx + cdx;
    dth = dth + cdth;
    let scale = RELAXATION / max(COUNTS[b] + touching, 1.0);
    dx = dx * scale;
    dth = dth * scale;
    tape_solve(b, dth, scale);
    bx[b] = bx[b] + dx;
    bq[b] = add_rotation(bq[b], dth);
    bd[b] = bd[b] + dx;
    bth[b] = bth[b] + dth;
  }
}
