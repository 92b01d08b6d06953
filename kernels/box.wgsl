// Pair functions for a round shape against a box (oracle/collide/box.py), line for line with the oracle's of the
// same names; conventions in kernels/collide.wgsl, constants (BOX_*) in the generated header.

fn to_local(v: vec3<f32>, axes: array<vec3<f32>, 3>) -> vec3<f32> {  // R^T v
  return vec3<f32>(dot(v, axes[0]), dot(v, axes[1]), dot(v, axes[2]));
}

fn to_world(v: vec3<f32>, axes: array<vec3<f32>, 3>) -> vec3<f32> {  // R v
  return axes[0] * v.x + axes[1] * v.y + axes[2] * v.z;
}

// sphere (c, r) as geom a against `box` as geom b (axes = rotation_columns(box.rot)). Outside: pb is c clamped into
// the box; inside (within BOX_EPS): the sphere leaves through the face of least clearance, ties to the lower axis
fn sphere_box_contact(c: vec3<f32>, r: f32, box: Geom, axes: array<vec3<f32>, 3>) -> Contact {
  let loc = to_local(c - box.pos, axes);
  let h = box.size;
  let clamped = min(max(loc, -h), h);
  let nd = norm_dir(loc - clamped, BOX_EPS);  // dir: from the box point to the centre
  let u = nd.dir;
  let outside = nd.on;
  var n_in = vec3<f32>(0.0);
  var q_in = vec3<f32>(0.0);
  var gap = 0.0;
  for (var i = 0u; i < 3u; i++) {
    let s = select(-1.0, 1.0, loc[i] >= 0.0);  // which face on axis i; the mid-plane takes +
    let g = h[i] - abs(loc[i]);
    var n_i = vec3<f32>(s * 0.0);
    n_i[i] = -s;                                // b pushed along +n: the sphere leaves along +s e_i
    var q_i = loc;
    q_i[i] = s * h[i];
    let take = i == 0u || g < gap;              // strict: ties keep the lower axis
    n_in = select(n_in, n_i, take);
    q_in = select(q_in, q_i, take);
    gap = select(gap, g, take);
  }
  let n = to_world(select(n_in, -u, outside), axes);
  let pb = box.pos + to_world(select(q_in, clamped, outside), axes);
  let pa = c + n * r;
  return Contact(pa, pb, n, true);
}

fn sphere_box(a: Geom, b: Geom) {
  nc[0] = sphere_box_contact(a.pos, a.size.x, b, rotation_columns(b.rot));
}

// per axis of _segment_nearest at parameter t: distance beyond the slab |x_i| <= h_i (0 inside) and the side
struct SlabTerms { e: vec3<f32>, s: vec3<f32> }
fn _segment_terms(a: vec3<f32>, u: vec3<f32>, h: vec3<f32>, t: f32) -> SlabTerms {
  let p = a + u * t;
  return SlabTerms(max(abs(p) - h, vec3<f32>(0.0)), select(vec3<f32>(-1.0), vec3<f32>(1.0), p >= vec3<f32>(0.0)));
}
fn _segment_f2(a: vec3<f32>, u: vec3<f32>, h: vec3<f32>, t: f32) -> f32 {  // the squared distance f2(t)
  let e = _segment_terms(a, u, h, t).e;
  return e.x * e.x + e.y * e.y + e.z * e.z;
}

// parameter t in [-hl, hl] of the point a + t u (box frame, u unit) nearest the box |x_i| <= h_i: BOX_CAPSULE_BISECT
// halvings on the sign of (f2 + BOX_CAPSULE_PULL (t - tc)^2)'/2, one Newton step, kept if it does not raise f2
fn _segment_nearest(a: vec3<f32>, u: vec3<f32>, hl: f32, h: vec3<f32>, tc: f32) -> f32 {
  var lo = -hl;
  var hi = hl;
  for (var it = 0; it < BOX_CAPSULE_BISECT; it++) {
    let m = (lo + hi) * 0.5;
    let tm = _segment_terms(a, u, h, m);
    let rising = tm.e.x * tm.s.x * u.x + tm.e.y * tm.s.y * u.y + tm.e.z * tm.s.z * u.z
                 + BOX_CAPSULE_PULL * (m - tc) >= 0.0;
    lo = select(m, lo, rising);
    hi = select(hi, m, rising);
  }
  let m = (lo + hi) * 0.5;
  // Newton: minimise the sum over the axes outside their slab at m of (a_i + t u_i - s_i h_i)^2
  let tm = _segment_terms(a, u, h, m);
  var num = 0.0;
  var den = 0.0;
  for (var i = 0u; i < 3u; i++) {
    let out = tm.e[i] > 0.0;
    num = num + select(0.0, u[i] * (tm.s[i] * h[i] - a[i]), out);
    den = den + select(0.0, u[i] * u[i], out);
  }
  let curved = den > BOX_CAPSULE_PULL;  // not parallel to every face it is outside of
  let tn = min(max(select(m, num / select(1.0, den, curved), curved), -hl), hl);
  return select(m, tn, _segment_f2(a, u, h, tn) <= _segment_f2(a, u, h, m));
}

// slot 0: the -z end sphere, slot 1: the +z end, slot 2: the sphere at the segment point nearest the box, invalid
// where that point is a segment end (it would repeat the end's contact)
fn capsule_box(a: Geom, b: Geom) {
  let axes = rotation_columns(b.rot);
  let u = rotation_columns(a.rot)[2];
  let r = a.size.x;
  let hl = a.size.y;
  let rel = a.pos - b.pos;
  let tc = min(max(-dot(rel, u), -hl), hl);
  let t = _segment_nearest(to_local(rel, axes), to_local(u, axes), hl, b.size, tc);
  nc[0] = sphere_box_contact(a.pos + u * -hl, r, b, axes);
  nc[1] = sphere_box_contact(a.pos + u * hl, r, b, axes);
  let mid = sphere_box_contact(a.pos + u * t, r, b, axes);
  nc[2] = Contact(mid.pa, mid.pb, mid.n, abs(t) < hl);
}
