// The narrowphase's conventions and types (oracle/collide/__init__.py): one function per registered pair, in
// kernels/primitives.wgsl, box.wgsl and box_box.wgsl with the oracle's module split and names, writing its fixed
// contact slots into nc[0..K) in the oracle's list order. n is the unit a->b normal, pa is a's point deepest inside
// b, pb b's point deepest inside a, depth = (pa - pb).n (negative apart); `valid` marks the slots that hold a
// contact. The oracle computes both sides of every `where`; here a select (or an index) keeps the picked side, the
// same value. The header generates the oracle modules' constants as <MODULE>_<NAME> (BOX_BOX_MARGIN is
// box_box.MARGIN), MAX_SLOTS (the most slots a pair function fills) and pair_contacts, the dispatch over the
// registry's pair kinds (kernels/program.py collide_header); these files need only kernels/math3.wgsl besides.

struct Geom { pos: vec3<f32>, rot: Quat, size: vec3<f32> }
struct Contact { pa: vec3<f32>, pb: vec3<f32>, n: vec3<f32>, valid: bool }
var<private> nc: array<Contact, MAX_SLOTS>;   // the slots of the last pair function called
