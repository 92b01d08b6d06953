// Narrowphase (oracle/collide/): one function per registered pair, line for line with the oracle's pair function of
// the same name, writing its fixed contact slots into nc[0..K) in the oracle's list order. Conventions
// (oracle/collide/__init__.py): n is the unit a->b normal, pa is a's point deepest inside b, pb b's point deepest
// inside a, depth = (pa - pb).n (negative apart); `valid` marks the slots that hold a contact.
// The oracle computes both sides of every `where`; here a select (or an index) keeps the picked side, the same value.
// Needs kernels/math3.wgsl (Quat, NormDir, norm_dir).

struct Geom { pos: vec3<f32>, rot: Quat, size: vec3<f32> }
struct Contact { pa: vec3<f32>, pb: vec3<f32>, n: vec3<f32>, valid: bool }
var<private> nc: array<Contact, 8>;   // the slots of the last pair function called

// The oracle's module constants. Untyped (abstract) like Python floats, so products such as SUPPORT_SIN * SUPPORT_SIN
// round to f32 once, as tinygrad's constants do. Names the three modules share (EPS, PARALLEL_SIN) and MARGIN carry
// their module's prefix: one WGSL program holds all three, and the step's header has its own EPS.
const PRIM_EPS = 1e-6;             // primitives.EPS [m]: closest points nearer than this use the fallback normal
const PRIM_PARALLEL_SIN = 1e-5;    // primitives.PARALLEL_SIN [-]: capsule axes this close count as parallel
const SUPPORT_SIN = 0.05;          // [-] capsule_capsule adds its support slot below this |sin|
const BOX_EPS = 1e-9;              // box.EPS [m]: a centre this close to the box counts as inside it
const CAPSULE_BISECT = 12;         // bisection steps of _segment_nearest
const CAPSULE_PULL = 1e-6;         // [-] tie-break pull towards the box centre in _segment_nearest
const BOX_BOX_MARGIN = 1e-3;       // box_box.MARGIN [m]: clipped points apart by more than this are dropped
const FACE_BIAS_REL = 0.05;        // [-] an edge axis must beat the best face axis by this fraction...
const FACE_BIAS_ABS = 1e-5;        // [m] ...plus this
const BOX_BOX_PARALLEL_SIN = 1e-4; // box_box.PARALLEL_SIN [-]: edges this close to parallel give no axis
const INSIDE_TOL = 1e-5;           // [-] relative slack of the clipping inside tests
const DUP_TOL = 1e-3;              // [-] picks closer than this times (e1 + e2) are duplicates

// ---------------------------------------------------------------- primitives.py

// column i of q's rotation matrix: the geom's local axis i in the world frame
fn _axis(q: Quat, i: u32) -> vec3<f32> {
  let w = q.w; let x = q.v.x; let y = q.v.y; let z = q.v.z;
  if (i == 0u) { return vec3<f32>(1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y + w * z), 2.0 * (x * z - w * y)); }
  if (i == 1u) { return vec3<f32>(2.0 * (x * y - w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z + w * x)); }
  return vec3<f32>(2.0 * (x * z + w * y), 2.0 * (y * z - w * x), 1.0 - 2.0 * (x * x + y * y));
}

// plane (unit normal n through plane.pos) against the sphere (p, r); the oracle's r = None (a box corner) is r = 0
// here: p - n * 0 is p exactly
fn _plane_point(plane: Geom, n: vec3<f32>, p: vec3<f32>, r: f32) -> Contact {
  let pb = p - n * r;
  let pa = pb - n * dot(pb - plane.pos, n);
  return Contact(pa, pb, n, true);
}

// sphere (ca, ra) against sphere (cb, rb); the unit `fallback` normal where the centres are within PRIM_EPS
fn _spheres(ca: vec3<f32>, ra: f32, cb: vec3<f32>, rb: f32, fallback: vec3<f32>) -> Contact {
  let nd = norm_dir(cb - ca, PRIM_EPS);
  let n = select(fallback, nd.dir, nd.on);
  let pa = ca + n * ra;
  return Contact(pa, cb - n * rb, n, true);
}

fn plane_sphere(a: Geom, b: Geom) {
  nc[0] = _plane_point(a, _axis(a.rot, 2u), b.pos, b.size.x);
}

// slot 0 the capsule's -z end sphere, slot 1 its +z end
fn plane_capsule(a: Geom, b: Geom) {
  let n = _axis(a.rot, 2u);
  let half = _axis(b.rot, 2u) * b.size.y;
  nc[0] = _plane_point(a, n, b.pos - half, b.size.x);
  nc[1] = _plane_point(a, n, b.pos + half, b.size.x);
}

// slot k at the local corner whose x, y, z signs are bits 0, 1, 2 of k (clear: -, set: +)
fn plane_box(a: Geom, b: Geom) {
  let n = _axis(a.rot, 2u);
  let ex = _axis(b.rot, 0u) * b.size.x;
  let ey = _axis(b.rot, 1u) * b.size.y;
  let ez = _axis(b.rot, 2u) * b.size.z;
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
  let u = _axis(b.rot, 2u);
  let t = clamp(dot(a.pos - b.pos, u), -b.size.y, b.size.y);
  nc[0] = _spheres(a.pos, a.size.x, b.pos + u * t, b.size.x, _axis(b.rot, 0u));
}

// slot 0: the segments' closest points; slot 1 (support): the far end of b's shadow on a's axis, valid only where the
// axes are within asin(SUPPORT_SIN) of parallel and the shadow overlaps a's segment
fn capsule_capsule(a: Geom, b: Geom) {
  let ua = _axis(a.rot, 2u);
  let ub = _axis(b.rot, 2u);
  let ha = a.size.y;
  let hb = b.size.y;
  let d = b.pos - a.pos;
  let cs = dot(ua, ub);   // the oracle's `cos` (a WGSL builtin's name)
  let c = dot(ua, d);
  let f = dot(ub, d);
  // points a.pos + s ua and b.pos + t ub; |s ua - t ub - d|^2 is stationary at s = cs t + c and t = cs s - f
  let cr = cross(ua, ub);
  let sin2 = dot(cr, cr);  // = 1 - cs^2 without the cancellation when nearly parallel
  let nd = norm_dir(cr, PRIM_PARALLEL_SIN);
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
  let fallback = select(_axis(a.rot, 0u), perp, skew);
  nc[0] = _spheres(a.pos + ua * s, a.size.x, b.pos + ub * t, b.size.x, fallback);
  let s1 = select(hi, lo, s - lo > hi - s);
  let t1 = clamp(cs * s1 - f, -hb, hb);
  let support = _spheres(a.pos + ua * s1, a.size.x, b.pos + ub * t1, b.size.x, fallback);
  let valid = (sin2 < SUPPORT_SIN * SUPPORT_SIN) && (lo <= hi);
  nc[1] = Contact(support.pa, support.pb, support.n, valid);
}
