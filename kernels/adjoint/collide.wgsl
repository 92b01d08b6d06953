// Adjoints of the narrowphase's pair functions (kernels/collide.wgsl, oracle/collide/): the types they share. A pair
// function writes its contact slots to nc[0..K); its adjoint `<pair>_adj(a, b)` reads the gradients of those slots'
// pa, pb and n from gnc[0..K) (a slot's `valid` is a discrete choice: no gradient), replays the forward's choices
// (norm_dir's `on`, the clamps, the separating axis) from the same inputs, and returns the gradients of the two
// world-frame geoms. kernels/adjoint/primitives.wgsl, box.wgsl and box_box.wgsl hold them, with the forward's module
// split; kernels/adjoint/narrowphase.wgsl takes the geoms' gradients back to the bodies and the geom parameters.

struct GeomAdj { pos: vec3<f32>, rot: Quat, size: vec3<f32> }   // gradients of a Geom's fields
struct GeomPairAdj { a: GeomAdj, b: GeomAdj }
struct ContactAdj { pa: vec3<f32>, pb: vec3<f32>, n: vec3<f32> }   // gradients of a Contact's pa, pb, n
var<private> gnc: array<ContactAdj, MAX_SLOTS>;   // the gradients of nc, read by the pair adjoints

fn geom_adj_zero() -> GeomAdj { return GeomAdj(vec3<f32>(0.0), Quat(0.0, vec3<f32>(0.0)), vec3<f32>(0.0)); }
fn geom_adj_add(a: GeomAdj, b: GeomAdj) -> GeomAdj { return GeomAdj(a.pos + b.pos, qadd(a.rot, b.rot), a.size + b.size); }

// tinygrad's gradients of the oracle's clamps, ties included (the pair adjoints and the narrowphase's).
// a.maximum(b), a.minimum(b): to the larger (smaller), half to each at a tie; returns (g_a, g_b)
fn grad_max(a: f32, b: f32, g: f32) -> vec2<f32> {
  return g * vec2<f32>(select(select(0.0, 0.5, a == b), 1.0, a > b), select(select(0.0, 0.5, a == b), 1.0, b > a));
}
fn grad_min(a: f32, b: f32, g: f32) -> vec2<f32> { return grad_max(-a, -b, g); }
// x.clip(lo, hi) is two wheres, (x < lo).where(lo, x) then (. > hi).where(hi, .): a bound takes the gradient only
// where x is strictly beyond it (at a tie x keeps it); returns (g_x, g_lo, g_hi)
fn grad_clip(x: f32, lo: f32, hi: f32, g: f32) -> vec3<f32> {
  let m = select(x, lo, x < lo);
  let gm = select(g, 0.0, m > hi);
  return vec3<f32>(select(gm, 0.0, x < lo), select(0.0, gm, x < lo), select(0.0, g, m > hi));
}
