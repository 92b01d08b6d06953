// Adjoints of kernels/primitives.wgsl's pair functions (oracle/collide/primitives.py); conventions in
// kernels/adjoint/collide.wgsl.

// the gradient of q through rotation_columns(q)[2] alone
fn z_axis_grad(q: Quat, g: vec3<f32>) -> Quat {
  return rotation_columns_adj(q, array<vec3<f32>, 3>(vec3<f32>(0.0), vec3<f32>(0.0), g));
}

// _plane_point: pb = p - n r, pa = pb - n d with d = (pb - plane.pos).n; the plane's gradient is its pos's alone
struct PlanePointAdj { plane_pos: vec3<f32>, n: vec3<f32>, p: vec3<f32>, r: f32 }
fn _plane_point_adj(plane: Geom, n: vec3<f32>, p: vec3<f32>, r: f32, g: ContactAdj) -> PlanePointAdj {
  let pb = p - n * r;
  let gd = -dot(g.pa, n);
  let gpb = g.pb + g.pa + n * gd;
  let gn = g.n - g.pa * dot(pb - plane.pos, n) + (pb - plane.pos) * gd - gpb * r;
  return PlanePointAdj(-n * gd, gn, gpb, -dot(gpb, n));
}

// _spheres: pa = ca + n ra, pb = cb - n rb, n = norm_dir(cb - ca).dir where on, else the fallback (the where gives
// the other side nothing)
struct SpheresAdj { ca: vec3<f32>, ra: f32, cb: vec3<f32>, rb: f32, fallback: vec3<f32> }
fn _spheres_adj(ca: vec3<f32>, ra: f32, cb: vec3<f32>, rb: f32, fallback: vec3<f32>, g: ContactAdj) -> SpheresAdj {
  let nd = norm_dir(cb - ca, PRIMITIVES_EPS);
  let n = select(fallback, nd.dir, nd.on);
  let gn = g.n + g.pa * ra - g.pb * rb;
  let gv = select(vec3<f32>(0.0), norm_dir_adj(cb - ca, PRIMITIVES_EPS, 0.0, gn), nd.on);
  return SpheresAdj(g.pa - gv, dot(g.pa, n), g.pb + gv, -dot(g.pb, n), select(gn, vec3<f32>(0.0), nd.on));
}

fn plane_sphere_adj(a: Geom, b: Geom) -> GeomPairAdj {
  let pp = _plane_point_adj(a, rotation_columns(a.rot)[2], b.pos, b.size.x, gnc[0]);
  return GeomPairAdj(GeomAdj(pp.plane_pos, z_axis_grad(a.rot, pp.n), vec3<f32>(0.0)),
                     GeomAdj(pp.p, Quat(0.0, vec3<f32>(0.0)), vec3<f32>(pp.r, 0.0, 0.0)));
}

// ends b.pos -+ half, half = u hb
fn plane_capsule_adj(a: Geom, b: Geom) -> GeomPairAdj {
  let n = rotation_columns(a.rot)[2];
  let u = rotation_columns(b.rot)[2];
  let half = u * b.size.y;
  let p0 = _plane_point_adj(a, n, b.pos - half, b.size.x, gnc[0]);
  let p1 = _plane_point_adj(a, n, b.pos + half, b.size.x, gnc[1]);
  let ghalf = p1.p - p0.p;
  return GeomPairAdj(GeomAdj(p0.plane_pos + p1.plane_pos, z_axis_grad(a.rot, p0.n + p1.n), vec3<f32>(0.0)),
                     GeomAdj(p0.p + p1.p, z_axis_grad(b.rot, ghalf * b.size.y),
                             vec3<f32>(p0.r + p1.r, dot(ghalf, u), 0.0)));
}

// corner k = b.pos + (-+ex) + (-+ey) + (-+ez), e_i = column i of b.rot times size_i; the corners' r is 0
fn plane_box_adj(a: Geom, b: Geom) -> GeomPairAdj {
  let n = rotation_columns(a.rot)[2];
  let rb = rotation_columns(b.rot);
  let ex = rb[0] * b.size.x;
  let ey = rb[1] * b.size.y;
  let ez = rb[2] * b.size.z;
  var out = GeomPairAdj(geom_adj_zero(), geom_adj_zero());
  var gn = vec3<f32>(0.0);
  var ge = array<vec3<f32>, 3>(vec3<f32>(0.0), vec3<f32>(0.0), vec3<f32>(0.0));   // of ex, ey, ez
  for (var k = 0u; k < 8u; k++) {
    let corner = b.pos + select(-ex, ex, (k & 1u) != 0u) + select(-ey, ey, ((k >> 1u) & 1u) != 0u)
                 + select(-ez, ez, (k >> 2u) != 0u);
    let pp = _plane_point_adj(a, n, corner, 0.0, gnc[k]);
    out.a.pos = out.a.pos + pp.plane_pos;
    gn = gn + pp.n;
    out.b.pos = out.b.pos + pp.p;
    ge[0] = ge[0] + select(-pp.p, pp.p, (k & 1u) != 0u);
    ge[1] = ge[1] + select(-pp.p, pp.p, ((k >> 1u) & 1u) != 0u);
    ge[2] = ge[2] + select(-pp.p, pp.p, (k >> 2u) != 0u);
  }
  out.a.rot = z_axis_grad(a.rot, gn);
  out.b.rot = rotation_columns_adj(b.rot, array<vec3<f32>, 3>(ge[0] * b.size.x, ge[1] * b.size.y, ge[2] * b.size.z));
  out.b.size = vec3<f32>(dot(ge[0], rb[0]), dot(ge[1], rb[1]), dot(ge[2], rb[2]));
  return out;
}

fn sphere_sphere_adj(a: Geom, b: Geom) -> GeomPairAdj {
  let sp = _spheres_adj(a.pos, a.size.x, b.pos, b.size.x, vec3<f32>(0.0, 0.0, 1.0), gnc[0]);
  return GeomPairAdj(GeomAdj(sp.ca, Quat(0.0, vec3<f32>(0.0)), vec3<f32>(sp.ra, 0.0, 0.0)),
                     GeomAdj(sp.cb, Quat(0.0, vec3<f32>(0.0)), vec3<f32>(sp.rb, 0.0, 0.0)));
}

// cb = b.pos + u t, t = (a.pos - b.pos).u clipped to [-hb, hb]; the fallback is b's column 0
fn sphere_capsule_adj(a: Geom, b: Geom) -> GeomPairAdj {
  let rb = rotation_columns(b.rot);
  let u = rb[2];
  let x = dot(a.pos - b.pos, u);
  let t = clamp(x, -b.size.y, b.size.y);
  let sp = _spheres_adj(a.pos, a.size.x, b.pos + u * t, b.size.x, rb[0], gnc[0]);
  let gc = grad_clip(x, -b.size.y, b.size.y, dot(sp.cb, u));
  let gu = sp.cb * t + (a.pos - b.pos) * gc.x;
  return GeomPairAdj(GeomAdj(sp.ca + u * gc.x, Quat(0.0, vec3<f32>(0.0)), vec3<f32>(sp.ra, 0.0, 0.0)),
                     GeomAdj(sp.cb - u * gc.x, rotation_columns_adj(b.rot, array<vec3<f32>, 3>(sp.fallback,
                             vec3<f32>(0.0), gu)), vec3<f32>(sp.rb, gc.z - gc.y, 0.0)));
}

// the forward replayed (its choices: skew, the clamps, the support end) then each step taken back
fn capsule_capsule_adj(a: Geom, b: Geom) -> GeomPairAdj {
  let ra = rotation_columns(a.rot);
  let ua = ra[2];
  let ub = rotation_columns(b.rot)[2];
  let ha = a.size.y;
  let hb = b.size.y;
  let d = b.pos - a.pos;
  let cs = dot(ua, ub);
  let c = dot(ua, d);
  let f = dot(ub, d);
  let cr = cross(ua, ub);
  let sin2 = dot(cr, cr);
  let nd = norm_dir(cr, PRIMITIVES_PARALLEL_SIN);
  let skew = nd.on;
  let spread = abs(cs) * hb;
  let lo = max(c - spread, -ha);
  let hi = min(c + spread, ha);
  let q = (c - cs * f) / select(1.0, sin2, skew);
  let s0r = select(lo, q, skew);
  let s0 = clamp(s0r, -ha, ha);
  let y = cs * s0 - f;
  let t = clamp(y, -hb, hb);
  let z = cs * t + c;
  let s = clamp(z, -ha, ha);
  let fallback = select(ra[0], nd.dir, skew);
  let take_lo = s - lo > hi - s;
  let s1 = select(hi, lo, take_lo);
  let y1 = cs * s1 - f;
  let t1 = clamp(y1, -hb, hb);
  // gradients of: the points' centres' parameters and the scalars they are built from
  let sp0 = _spheres_adj(a.pos + ua * s, a.size.x, b.pos + ub * t, b.size.x, fallback, gnc[0]);
  let sp1 = _spheres_adj(a.pos + ua * s1, a.size.x, b.pos + ub * t1, b.size.x, fallback, gnc[1]);
  var gapos = sp0.ca + sp1.ca;
  var gbpos = sp0.cb + sp1.cb;
  var gua = sp0.ca * s + sp1.ca * s1;
  var gub = sp0.cb * t + sp1.cb * t1;
  let gfb = sp0.fallback + sp1.fallback;
  var gcs = 0.0;
  var gc = 0.0;
  var gf = 0.0;
  var gha = 0.0;
  var ghb = 0.0;
  var glo = 0.0;
  var ghi = 0.0;
  // the support slot: t1 = clip(cs s1 - f), s1 = lo or hi
  let c1 = grad_clip(y1, -hb, hb, dot(sp1.cb, ub));
  ghb = ghb + c1.z - c1.y;
  gcs = gcs + c1.x * s1;
  gf = gf - c1.x;
  let gs1 = dot(sp1.ca, ua) + c1.x * cs;
  glo = glo + select(0.0, gs1, take_lo);
  ghi = ghi + select(gs1, 0.0, take_lo);
  // the closest slot: s = clip(cs t + c), t = clip(cs s0 - f), s0 = clip(s0r), s0r = q where skew, else lo
  let cz = grad_clip(z, -ha, ha, dot(sp0.ca, ua));
  gha = gha + cz.z - cz.y;
  gcs = gcs + cz.x * t;
  gc = gc + cz.x;
  let cy = grad_clip(y, -hb, hb, dot(sp0.cb, ub) + cz.x * cs);
  ghb = ghb + cy.z - cy.y;
  gcs = gcs + cy.x * s0;
  gf = gf - cy.x;
  let c0 = grad_clip(s0r, -ha, ha, cy.x * cs);
  gha = gha + c0.z - c0.y;
  var gsin2 = 0.0;
  if (skew) {
    let gq = c0.x / sin2;
    gc = gc + gq;
    gcs = gcs - gq * f;
    gf = gf - gq * cs;
    gsin2 = -gq * q;
  } else {
    glo = glo + c0.x;
  }
  // lo = max(c - spread, -ha), hi = min(c + spread, ha), spread = |cs| hb
  let ml = grad_max(c - spread, -ha, glo);
  let mh = grad_min(c + spread, ha, ghi);
  gc = gc + ml.x + mh.x;
  gha = gha - ml.y + mh.y;
  let gspread = mh.x - ml.x;
  gcs = gcs + gspread * hb * sign(cs);
  ghb = ghb + gspread * abs(cs);
  // the fallback: perp (norm_dir of cr) where skew, else a's column 0; sin2 = cr.cr
  let gcr = select(vec3<f32>(0.0), norm_dir_adj(cr, PRIMITIVES_PARALLEL_SIN, 0.0, gfb), skew) + cr * (2.0 * gsin2);
  let cx = cross_adj(ua, ub, gcr);
  let gd = ua * gc + ub * gf;
  gua = gua + cx.a + ub * gcs + d * gc;
  gub = gub + cx.b + ua * gcs + d * gf;
  gapos = gapos - gd;
  gbpos = gbpos + gd;
  let gax = select(gfb, vec3<f32>(0.0), skew);
  return GeomPairAdj(
    GeomAdj(gapos, rotation_columns_adj(a.rot, array<vec3<f32>, 3>(gax, vec3<f32>(0.0), gua)),
            vec3<f32>(sp0.ra + sp1.ra, gha, 0.0)),
    GeomAdj(gbpos, z_axis_grad(b.rot, gub), vec3<f32>(sp0.rb + sp1.rb, ghb, 0.0)));
}
