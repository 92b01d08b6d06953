// Vectors and quaternions (oracle/math3.py): WGSL's vec3<f32> plus a quaternion struct, with the oracle's method
// names as functions (q.rotate(v) is rotate(q, v)), and the oracle's atan2. Shared by the step and the pair functions.

struct Quat { w: f32, v: vec3<f32> }
struct NormDir { len: f32, dir: vec3<f32>, on: bool }

fn qmul(a: Quat, b: Quat) -> Quat {  // Quat.__mul__, the Hamilton product
  return Quat(a.w * b.w - dot(a.v, b.v), a.w * b.v + b.w * a.v + cross(a.v, b.v));
}
fn conj(q: Quat) -> Quat { return Quat(q.w, -q.v); }
fn rotate(q: Quat, v: vec3<f32>) -> vec3<f32> {
  let t = cross(q.v, v) * 2.0;
  return v + t * q.w + cross(q.v, t);
}
fn inv_rotate(q: Quat, v: vec3<f32>) -> vec3<f32> { return rotate(conj(q), v); }
fn normalize_q(q: Quat) -> Quat {  // Quat.normalize (a WGSL fn named normalize would hide the vector built-in)
  let n = sqrt(q.w * q.w + dot(q.v, q.v));
  return Quat(q.w / n, q.v / n);
}
fn add_rotation(q: Quat, dth: vec3<f32>) -> Quat {
  let dq = qmul(Quat(0.0, dth), q);
  return normalize_q(Quat(q.w + 0.5 * dq.w, q.v + 0.5 * dq.v));
}
// the columns of R(q) for a unit q: the world directions of the local x, y, z axes
fn rotation_columns(q: Quat) -> array<vec3<f32>, 3> {
  let w = q.w; let x = q.v.x; let y = q.v.y; let z = q.v.z;
  return array<vec3<f32>, 3>(vec3<f32>(1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y + w * z), 2.0 * (x * z - w * y)),
                             vec3<f32>(2.0 * (x * y - w * z), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z + w * x)),
                             vec3<f32>(2.0 * (x * z + w * y), 2.0 * (y * z - w * x), 1.0 - 2.0 * (x * x + y * y)));
}
// length, direction, on = length > eps; lanes that are off keep v / 1 as the direction, as the oracle does
// (WGSL reserves the words "active" and "target": they are `on` and `goal` here)
fn norm_dir(v: vec3<f32>, eps: f32) -> NormDir {
  let s = dot(v, v);
  let on = s > eps * eps;
  let len = sqrt(select(1.0, s, on));
  return NormDir(select(0.0, len, on), v / len, on);
}

const PI = 3.141592653589793;   // math.pi

// atan(r) for r in [0, 1] as asin(r / sqrt(1 + r^2)) by the polynomial MATH3_ASIN (A&S 4.4.46, tinygrad's asin),
// shifted so that atan(0) is exactly 0 (oracle/math3.py _atan01); Horner's order as tinygrad's polyN
fn _atan01(r: f32) -> f32 {
  let u = r / sqrt(1.0 + r * r);
  var p = 0.0;
  for (var i = 0u; i < 8u; i++) { p = p * u + MATH3_ASIN[i]; }
  return (1.0 - sqrt(1.0 - u) * p / MATH3_ASIN[7]) * (PI / 2.0);
}

// four-quadrant arctangent from _atan01 of min(|x|, |y|) / max(|x|, |y|), the octant restored by reflections
// (oracle/math3.py atan2, where the reasons are). It hides WGSL's built-in atan2 for the whole program, so every
// caller gets the oracle's polynomial, not the driver's arctangent
struct Octant { sx: f32, sy: f32, swap: bool, num: f32, den: f32 }   // atan2's reflections (kernels/adjoint too)
fn octant(y: f32, x: f32) -> Octant {
  let sx = select(1.0, -1.0, x < 0.0);
  let sy = select(1.0, -1.0, y < 0.0);
  let ax = x * sx;
  let ay = y * sy;
  let swap = ay > ax;
  return Octant(sx, sy, swap, select(ay, ax, swap), select(ax, ay, swap));
}
fn atan2(y: f32, x: f32) -> f32 {
  let o = octant(y, x);
  var a = _atan01(o.num / select(o.den, 1.0, o.den == 0.0));
  a = select(a, PI / 2.0 - a, o.swap);
  return select(a, PI - a, x < 0.0) * o.sy;
}
