// Pair functions for the plane and the round shapes (oracle/collide/primitives.py), line for line with the
// oracle's of the same names; conventions in kernels/collide.wgsl, constants (PRIMITIVES_*) in the generated header.

// plane (unit normal n through plane.pos) against the sphere (p, r); the oracle's r = None (a box corner) is r = 0
// here: p - n * 0 is p exactly
fn _plane_point(plane: Geom, n: vec3<f32>, p: vec3<f32>, r: f32) -> Contact {
  let pb = p - n * r;
  let pa = pb - n * dot(pb - plane.pos, n);
  return Contact(pa, pb, n, true);
}

// sphere (ca, ra) against sphere (cb, rb); the unit `fallback` normal where the centres are within PRIMITIVES_EPS
fn _spheres(ca: vec3<f32>, ra: f32, cb: vec3<f32>, rb: f32, fallback: vec3<f32>) -> Contact {
  let nd = norm_dir(cb - ca, PRIMITIVES_EPS);
  let n = select(fallback, nd.dir, nd.on);
  let pa = ca + n * ra;
  return Contact(pa, cb - n * rb, n, true);
}

fn plane_sphere(a: Geom, b: Geom) {
  nc[0] = _plane_point(a, rotation_columns(a.rot)[2], b.pos, b.size.x);
}

// slot 0 the capsule's -z end sphere, slot 1 its +z end
fn plane_capsule(a: Geom, b: Geom) {
  let n = rotation_columns(a.rot)[2];
  let half = rotation_columns(b.rot)[2] * b.size.y;
  nc[0] = _plane_point(a, n, b.pos - half, b.size.x);
  nc[1] = _plane_point(a, n, b.pos + half, b.size.x);
}

// slot k at the local corner whose x, y, z signs are bits 0, 1, 2 of k (clear: -, set: +)
fn plane_box(a: Geom, b: Geom) {
  let n = rotation_columns(a.rot)[2];
  let rb = rotation_columns(b.rot);
  let ex = rb[0] * b.size.x;
  let ey = rb[1] * b.size.y;
  let ez = rb[2] * b.size.z;
  for (var k = 0u; k < 8u; k++) {
    let corner = b.pos + select(-ex, ex, (k & 1u) != 0u) + select(-ey, ey, ((k >> 1u) & 1u) != 0u)
                 + select(-ez, ez, (k >> 2u) != 0u);
    nc[k] = _plane_point(a, n, corner, 0.0);
  }
}

// coincident centres: n = world +z
fn sphere_sphere(a: Geom, b: Geom) {
  nc[0] = _spheres(a.pos, a.size.x, b.pos, b.size.x, vec3<f32>(0.0, 0.0, 1.0));
}

// at the point of b's segment closest to a's centre; a centre on the segment takes b's local +x
fn sphere_capsule(a: Geom, b: Geom) {
  let rb = rotation_columns(b.rot);
  let u = rb[2];
  let t = clamp(dot(a.pos - b.pos, u), -b.size.y, b.size.y);
  nc[0] = _spheres(a.pos, a.size.x, b.pos + u * t, b.size.x, rb[0]);
}

// slot 0: the segments' closest points; slot 1 (support): the far end of b's shadow on a's axis, valid only where the
// axes are within asin(PRIMITIVES_SUPPORT_SIN) of parallel and the shadow overlaps a's segment
fn capsule_capsule(a: Geom, b: Geom) {
  let ra = rotation_columns(a.rot);
  let ua = ra[2];
  let ub = rotation_columns(b.rot)[2];
  let ha = a.size.y;
  let hb = b.size.y;
  let d = b.pos - a.pos;
  let cs = dot(ua, ub);   // the oracle's `cos` (a WGSL builtin's name)
  let c = dot(ua, d);
  let f = dot(ub, d);
  // points a.pos + s ua and b.pos + t ub; |s ua - t ub - d|^2 is stationary at s = cs t + c and t = cs s - f
  let cr = cross(ua, ub);
  let sin2 = dot(cr, cr);  // = 1 - cs^2 without the cancellation when nearly parallel
  let nd = norm_dir(cr, PRIMITIVES_PARALLEL_SIN);
  let perp = nd.dir;
  let skew = nd.on;
  // b's segment projects onto a's axis as s in c -+ |cs| hb; its overlap with [-ha, ha] is [lo, hi]
  let spread = abs(cs) * hb;
  let lo = max(c - spread, -ha);
  let hi = min(c + spread, ha);
  // closest points of the infinite lines (Ericson 2005, sec. 5.1.9) clamped to a, then t for that s, then s again
  var s = clamp(select(lo, (c - cs * f) / select(1.0, sin2, skew), skew), -ha, ha);
  let t = clamp(cs * s - f, -hb, hb);
  s = clamp(cs * t + c, -ha, ha);
  let fallback = select(ra[0], perp, skew);
  nc[0] = _spheres(a.pos + ua * s, a.size.x, b.pos + ub * t, b.size.x, fallback);
  let s1 = select(hi, lo, s - lo > hi - s);
  let t1 = clamp(cs * s1 - f, -hb, hb);
  let support = _spheres(a.pos + ua * s1, a.size.x, b.pos + ub * t1, b.size.x, fallback);
  let valid = (sin2 < PRIMITIVES_SUPPORT_SIN * PRIMITIVES_SUPPORT_SIN) && (lo <= hi);
  nc[1] = Contact(support.pa, support.pb, support.n, valid);
}
