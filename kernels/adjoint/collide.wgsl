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
