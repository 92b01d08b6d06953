// Adjoints of kernels/box.wgsl's pair functions (oracle/collide/box.py); conventions in kernels/adjoint/collide.wgsl.
// The box's frame `axes` (rotation_columns(box.rot)) gets its gradient as three columns, for rotation_columns_adj.

struct AxesVecAdj { v: vec3<f32>, axes: array<vec3<f32>, 3> }   // gradients of (v, axes)

fn axes_add(a: array<vec3<f32>, 3>, b: array<vec3<f32>, 3>) -> array<vec3<f32>, 3> {
  return array<vec3<f32>, 3>(a[0] + b[0], a[1] + b[1], a[2] + b[2]);
}

// to_local(v, axes)_i = v.axes[i]
fn to_local_adj(v: vec3<f32>, axes: array<vec3<f32>, 3>, g: vec3<f32>) -> AxesVecAdj {
  return AxesVecAdj(to_world(g, axes), array<vec3<f32>, 3>(v * g.x, v * g.y, v * g.z));
}

// to_world(v, axes) = sum_i axes[i] v_i
fn to_world_adj(v: vec3<f32>, axes: array<vec3<f32>, 3>, g: vec3<f32>) -> AxesVecAdj {
  return AxesVecAdj(to_local(g, axes), array<vec3<f32>, 3>(g * v.x, g * v.y, g * v.z));
}

// sphere_box_contact replayed: outside, n and pb come from norm_dir(loc - clamped) and clamped (the clamp is
// maximum then minimum: halves at a tie); inside, n is a constant and pb the centre moved onto face k (its
// coordinate k is s_k h_k), so only that face's choice matters, not the gaps'
struct SphereBoxAdj { c: vec3<f32>, r: f32, pos: vec3<f32>, size: vec3<f32>, axes: array<vec3<f32>, 3> }
fn sphere_box_contact_adj(c: vec3<f32>, r: f32, box: Geom, axes: array<vec3<f32>, 3>, g: ContactAdj) -> SphereBoxAdj {
  let loc = to_local(c - box.pos, axes);
  let h = box.size;
  let up = max(loc, -h);
  let clamped = min(up, h);
  let nd = norm_dir(loc - clamped, BOX_EPS);
  var k = 0u;
  var sk = 1.0;
  var gap = 0.0;
  for (var i = 0u; i < 3u; i++) {
    let s = select(-1.0, 1.0, loc[i] >= 0.0);
    let gi = h[i] - abs(loc[i]);
    let take = i == 0u || gi < gap;
    k = select(k, i, take);
    sk = select(sk, s, take);
    gap = select(gap, gi, take);
  }
  var n_in = vec3<f32>(0.0);
  n_in[k] = -sk;
  var q_in = loc;
  q_in[k] = sk * h[k];
  let nl = select(n_in, -nd.dir, nd.on);
  let pl = select(q_in, clamped, nd.on);
  let n = to_world(nl, axes);
  let gn = g.n + g.pa * r;                       // pa = c + n r
  let wn = to_world_adj(nl, axes, gn);
  let wp = to_world_adj(pl, axes, g.pb);         // pb = box.pos + to_world(pl)
  var gloc = vec3<f32>(0.0);
  var gh = vec3<f32>(0.0);
  if (nd.on) {
    let gv = norm_dir_adj(loc - clamped, BOX_EPS, 0.0, -wn.v);
    let gcl = wp.v - gv;
    gloc = gv;
    for (var i = 0u; i < 3u; i++) {
      let mn = grad_min(up[i], h[i], gcl[i]);
      let mx = grad_max(loc[i], -h[i], mn.x);
      gloc[i] = gloc[i] + mx.x;
      gh[i] = mn.y - mx.y;
    }
  } else {
    gloc = wp.v;
    gloc[k] = 0.0;
    gh[k] = sk * wp.v[k];
  }
  let lt = to_local_adj(c - box.pos, axes, gloc);
  return SphereBoxAdj(g.pa + lt.v, dot(g.pa, n), g.pb - lt.v, gh, axes_add(axes_add(wn.axes, wp.axes), lt.axes));
}

fn sphere_box_adj(a: Geom, b: Geom) -> GeomPairAdj {
  let sb = sphere_box_contact_adj(a.pos, a.size.x, b, rotation_columns(b.rot), gnc[0]);
  return GeomPairAdj(GeomAdj(sb.c, Quat(0.0, vec3<f32>(0.0)), vec3<f32>(sb.r, 0.0, 0.0)),
                     GeomAdj(sb.pos, rotation_columns_adj(b.rot, sb.axes), sb.size));
}

// _segment_nearest: the bisection's choices are piecewise constant, so its midpoint m is hl times the dyadic km that
// the same halvings of (-1, 1) give (tc only steers them: no gradient); the Newton step tn = clip(num / den) is
// differentiated where curved and taken, its clamp a maximum then a minimum (halves at a tie)
struct SegmentAdj { a: vec3<f32>, u: vec3<f32>, hl: f32, h: vec3<f32> }   // tc's gradient is 0
fn _segment_nearest_adj(a: vec3<f32>, u: vec3<f32>, hl: f32, h: vec3<f32>, tc: f32, g: f32) -> SegmentAdj {
  var lo = -hl;
  var hi = hl;
  var klo = -1.0;
  var khi = 1.0;
  for (var it = 0; it < BOX_CAPSULE_BISECT; it++) {
    let m = (lo + hi) * 0.5;
    let km = (klo + khi) * 0.5;
    let tm = _segment_terms(a, u, h, m);
    let rising = tm.e.x * tm.s.x * u.x + tm.e.y * tm.s.y * u.y + tm.e.z * tm.s.z * u.z
                 + BOX_CAPSULE_PULL * (m - tc) >= 0.0;
    lo = select(m, lo, rising);
    hi = select(hi, m, rising);
    klo = select(km, klo, rising);
    khi = select(khi, km, rising);
  }
  let m = (lo + hi) * 0.5;
  let km = (klo + khi) * 0.5;
  let tm = _segment_terms(a, u, h, m);
  var num = 0.0;
  var den = 0.0;
  for (var i = 0u; i < 3u; i++) {
    let out = tm.e[i] > 0.0;
    num = num + select(0.0, u[i] * (tm.s[i] * h[i] - a[i]), out);
    den = den + select(0.0, u[i] * u[i], out);
  }
  let curved = den > BOX_CAPSULE_PULL;
  let w = select(m, num / select(1.0, den, curved), curved);
  let tn = min(max(w, -hl), hl);
  let newton = _segment_f2(a, u, h, tn) <= _segment_f2(a, u, h, m);
  let mn = grad_min(max(w, -hl), hl, select(0.0, g, newton));
  let mx = grad_max(w, -hl, mn.x);
  var out = SegmentAdj(vec3<f32>(0.0), vec3<f32>(0.0), mn.y - mx.y, vec3<f32>(0.0));
  var gm = select(g, 0.0, newton);
  if (curved) {
    let gnum = mx.x / den;
    let gden = -gnum * num / den;
    for (var i = 0u; i < 3u; i++) {
      if (tm.e[i] > 0.0) {
        out.a[i] = -gnum * u[i];
        out.u[i] = gnum * (tm.s[i] * h[i] - a[i]) + gden * 2.0 * u[i];
        out.h[i] = gnum * u[i] * tm.s[i];
      }
    }
  } else {
    gm = gm + mx.x;
  }
  out.hl = out.hl + gm * km;
  return out;
}

// the ends a.pos -+ u hl and the nearest point a.pos + u t, t from _segment_nearest in b's frame
fn capsule_box_adj(a: Geom, b: Geom) -> GeomPairAdj {
  let axes = rotation_columns(b.rot);
  let u = rotation_columns(a.rot)[2];
  let r = a.size.x;
  let hl = a.size.y;
  let rel = a.pos - b.pos;
  let tc = min(max(-dot(rel, u), -hl), hl);
  let al = to_local(rel, axes);
  let ul = to_local(u, axes);
  let t = _segment_nearest(al, ul, hl, b.size, tc);
  let e0 = sphere_box_contact_adj(a.pos + u * -hl, r, b, axes, gnc[0]);
  let e1 = sphere_box_contact_adj(a.pos + u * hl, r, b, axes, gnc[1]);
  let em = sphere_box_contact_adj(a.pos + u * t, r, b, axes, gnc[2]);
  let sn = _segment_nearest_adj(al, ul, hl, b.size, tc, dot(em.c, u));
  let la = to_local_adj(rel, axes, sn.a);
  let lu = to_local_adj(u, axes, sn.u);
  let gu = (e1.c - e0.c) * hl + em.c * t + lu.v;
  let gaxes = axes_add(axes_add(axes_add(e0.axes, e1.axes), axes_add(em.axes, la.axes)), lu.axes);
  return GeomPairAdj(
    GeomAdj(e0.c + e1.c + em.c + la.v, z_axis_grad(a.rot, gu),
            vec3<f32>(e0.r + e1.r + em.r, dot(e1.c - e0.c, u) + sn.hl, 0.0)),
    GeomAdj(e0.pos + e1.pos + em.pos - la.v, rotation_columns_adj(b.rot, gaxes), e0.size + e1.size + em.size + sn.h));
}
