// Vectors and quaternions (oracle/math3.py): WGSL's vec3<f32> plus a quaternion struct. Shared by the step
// (kernels/xpbd_step.wgsl) and the narrowphase (kernels/narrowphase.wgsl); kernels/program.py concatenates them.

struct Quat { w: f32, v: vec3<f32> }
struct NormDir { len: f32, dir: vec3<f32>, on: bool }

fn qmul(a: Quat, b: Quat) -> Quat {
  return Quat(a.w * b.w - dot(a.v, b.v), a.w * b.v + b.w * a.v + cross(a.v, b.v));
}
fn qconj(q: Quat) -> Quat { return Quat(q.w, -q.v); }
fn rotate(q: Quat, v: vec3<f32>) -> vec3<f32> {
  let t = cross(q.v, v) * 2.0;
  return v + t * q.w + cross(q.v, t);
}
fn inv_rotate(q: Quat, v: vec3<f32>) -> vec3<f32> { return rotate(qconj(q), v); }
fn normalize_q(q: Quat) -> Quat {
  let n = sqrt(q.w * q.w + dot(q.v, q.v));
  return Quat(q.w / n, q.v / n);
}
fn add_rotation(q: Quat, dth: vec3<f32>) -> Quat {
  let dq = qmul(Quat(0.0, dth), q);
  return normalize_q(Quat(q.w + 0.5 * dq.w, q.v + 0.5 * dq.v));
}
// length, direction, on = length > eps; lanes that are off keep v / 1 as the direction, as the oracle does
// (WGSL reserves the words "active" and "target": they are `on` and `goal` here)
fn norm_dir(v: vec3<f32>, eps: f32) -> NormDir {
  let s = dot(v, v);
  let on = s > eps * eps;
  let len = sqrt(select(1.0, s, on));
  return NormDir(select(0.0, len, on), v / len, on);
}
