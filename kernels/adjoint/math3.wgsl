// Adjoints of kernels/math3.wgsl (oracle/math3.py), for the backward kernel (issue 17). Each `<name>_adj` takes the
// forward function's inputs and the gradient g of its output, and returns the gradients of its inputs: the
// vector-Jacobian product of the exact forward formula (not of an idealisation: rotate_adj is not R(q)^T g, which
// holds only for a unit q). tests/test_parity_adjoint.py checks each against tinygrad's autograd of the oracle.

struct QuatAdj { q: Quat, v: vec3<f32> }      // gradients of (q, v)
struct QuatPairAdj { a: Quat, b: Quat }       // gradients of (a, b)
struct VecPairAdj { a: vec3<f32>, b: vec3<f32> }

fn qadd(a: Quat, b: Quat) -> Quat { return Quat(a.w + b.w, a.v + b.v); }
fn qscale(a: Quat, s: f32) -> Quat { return Quat(a.w * s, a.v * s); }

// cross(a, b): g.(a x b) = a.(b x g) = b.(g x a)
fn cross_adj(a: vec3<f32>, b: vec3<f32>, g: vec3<f32>) -> VecPairAdj { return VecPairAdj(cross(b, g), cross(g, a)); }

// [r]x, the matrix of r x (.), and r's gradient from that of its entries (g, column-major as WGSL's matrices)
fn cross_matrix(r: vec3<f32>) -> mat3x3<f32> {
  return mat3x3<f32>(vec3<f32>(0.0, r.z, -r.y), vec3<f32>(-r.z, 0.0, r.x), vec3<f32>(r.y, -r.x, 0.0));
}
fn cross_matrix_adj(g: mat3x3<f32>) -> vec3<f32> {
  return vec3<f32>(g[1][2] - g[2][1], g[2][0] - g[0][2], g[0][1] - g[1][0]);
}
fn outer(a: vec3<f32>, b: vec3<f32>) -> mat3x3<f32> { return mat3x3<f32>(a * b.x, a * b.y, a * b.z); }   // a b^T

// qmul(a, b) = (a.w b.w - a.v.b.v, a.w b.v + b.w a.v + a.v x b.v)
fn qmul_adj(a: Quat, b: Quat, g: Quat) -> QuatPairAdj {
  return QuatPairAdj(Quat(g.w * b.w + dot(g.v, b.v), -g.w * b.v + b.w * g.v + cross(b.v, g.v)),
                     Quat(g.w * a.w + dot(g.v, a.v), -g.w * a.v + a.w * g.v + cross(g.v, a.v)));
}

// rotate(q, v) = v + q.w t + q.v x t with t = 2 q.v x v
fn rotate_adj(q: Quat, v: vec3<f32>, g: vec3<f32>) -> QuatAdj {
  let t = cross(q.v, v) * 2.0;
  let gt = g * q.w + cross(g, q.v);                 // through q.w t and q.v x t
  let gu = cross(t, g) + cross(v, gt) * 2.0;        // q.v: in q.v x t, and in t
  return QuatAdj(Quat(dot(g, t), gu), g + cross(gt, q.v) * 2.0);
}

// inv_rotate(q, v) = rotate(conj(q), v)
fn inv_rotate_adj(q: Quat, v: vec3<f32>, g: vec3<f32>) -> QuatAdj {
  let r = rotate_adj(conj(q), v, g);
  return QuatAdj(conj(r.q), r.v);
}

// normalize_q(q) = q / |q|: the Jacobian (I - p p^T) / |q| with p = q / |q| (DESIGN.md sec. 5)
fn normalize_q_adj(q: Quat, g: Quat) -> Quat {
  let n = sqrt(q.w * q.w + dot(q.v, q.v));
  let p = Quat(q.w / n, q.v / n);
  let pg = p.w * g.w + dot(p.v, g.v);
  return Quat((g.w - p.w * pg) / n, (g.v - p.v * pg) / n);
}

// add_rotation(q, dth) = normalize_q(q + 0.5 qmul((0, dth), q))
fn add_rotation_adj(q: Quat, dth: vec3<f32>, g: Quat) -> QuatAdj {
  let dq = qmul(Quat(0.0, dth), q);
  let gr = normalize_q_adj(Quat(q.w + 0.5 * dq.w, q.v + 0.5 * dq.v), g);
  let m = qmul_adj(Quat(0.0, dth), q, qscale(gr, 0.5));
  return QuatAdj(qadd(gr, m.b), m.a.v);
}

// rotation_columns(q): the three columns' gradients g[0], g[1], g[2] back to q, through the formulas as written (not
// only for a unit q)
fn rotation_columns_adj(q: Quat, g: array<vec3<f32>, 3>) -> Quat {
  let w = q.w; let x = q.v.x; let y = q.v.y; let z = q.v.z;
  let a = g[0]; let b = g[1]; let c = g[2];
  return Quat(2.0 * (z * a.y - y * a.z - z * b.x + x * b.z + y * c.x - x * c.y),
              vec3<f32>(2.0 * (y * a.y + z * a.z + y * b.x - 2.0 * x * b.y + w * b.z + z * c.x - w * c.y - 2.0 * x * c.z),
                        2.0 * (-2.0 * y * a.x + x * a.y - w * a.z + x * b.x + z * b.z + w * c.x + z * c.y - 2.0 * y * c.z),
                        2.0 * (-2.0 * z * a.x + w * a.y + x * a.z - w * b.x - 2.0 * z * b.y + y * b.z + x * c.x + y * c.y)));
}

// norm_dir(v, eps) = (len, dir, on): where on, len = |v| and dir = v / |v| (the projection (I - dir dir^T) / |v|);
// where off, len is the constant 0 and dir = v / 1 (the oracle's double-where: no 0 * inf)
fn norm_dir_adj(v: vec3<f32>, eps: f32, glen: f32, gdir: vec3<f32>) -> vec3<f32> {
  let nd = norm_dir(v, eps);
  if (!nd.on) { return gdir; }
  return nd.dir * glen + (gdir - nd.dir * dot(nd.dir, gdir)) / nd.len;
}

// _atan01(r) = (1 - sqrt(1 - u) P(u) / A7) pi/2 with u = r / sqrt(1 + r^2) and P the polynomial MATH3_ASIN: the
// derivative of that polynomial form (not of the true arctangent), as the oracle's autograd takes it
fn _atan01_adj(r: f32, g: f32) -> f32 {
  let u = r / sqrt(1.0 + r * r);
  var p = 0.0;
  var dp = 0.0;
  for (var i = 0u; i < 8u; i++) { dp = dp * u + p; p = p * u + MATH3_ASIN[i]; }
  let s = sqrt(1.0 - u);   // u <= 1/sqrt(2): never 0
  let dadu = -(PI / 2.0) / MATH3_ASIN[7] * (s * dp - p / (2.0 * s));
  return g * dadu / ((1.0 + r * r) * sqrt(1.0 + r * r));
}

// atan2(y, x): the octant's reflections replayed; returns (g_y, g_x)
fn atan2_adj(y: f32, x: f32, g: f32) -> vec2<f32> {
  let o = octant(y, x);
  let d = select(o.den, 1.0, o.den == 0.0);
  let ga = g * o.sy * select(1.0, -1.0, x < 0.0) * select(1.0, -1.0, o.swap);   // of _atan01's value
  let gr = _atan01_adj(o.num / d, ga);
  let gnum = gr / d;
  let gden = select(-gr * o.num / (d * d), 0.0, o.den == 0.0);
  return vec2<f32>(select(gnum, gden, o.swap) * o.sy, select(gden, gnum, o.swap) * o.sx);
}
