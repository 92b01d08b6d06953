"""The contact plan: which geom pairs to test (once per step), the narrowphase's row layout, and the gathers and the
per-block pair-function call that the narrowphase stage (oracle/narrowphase.py), the contact solve and the
penetration checks below share.

Per step, `contact_plan` lists candidate pairs as fixed-shape blocks, one per pair of geom types (MJX's pair table):
plane pairs have static slots (every plane against every body geom), filled where the geom's AABB reaches the plane
(broadphase.plane_reach), the others come from the spatial hash (oracle/broadphase.py). Each block has P pair slots
and K contact slots per pair, so a scene always has the same C = sum(P K) contact slots and every kernel keeps its
shape. Which body each slot touches is a one-hot row per side
(a zero row is the static world): gathers and scatters are products with it, never data-dependent indexing.

Per substep, the narrowphase runs after integrate (M20 sec. 3.5: contacts are found on the predicted poses; the
K Jacobi iterations reuse them) and stores each contact in its bodies' frames, so the solve follows the bodies, as
a row of ROW floats (VALID, NORMAL, ... below; the WGSL kernel's contact slots take the same layout from them):
  [valid | n (world, a -> b) | ra (a's frame) | rb (b's frame) | friction | restitution | approach speed]
"""
from __future__ import annotations
from dataclasses import dataclass
from tinygrad import Tensor, dtypes
from oracle.broadphase import broadphase, plane_reach
from oracle.collide import NARROWPHASE, Contact, Geom
from oracle.math3 import V3, Quat, const
from oracle.types import GEOM_TYPES, WORLD

VALID, NORMAL, RA, RB, FRICTION, RESTITUTION, APPROACH = 0, slice(1, 4), slice(4, 7), slice(7, 10), 10, 11, 12
ROW = 13
# per pair side: [geom pos 3 | geom quat 4 | size 3 | friction | restitution] from the model, then the body's
# [inverse mass | inverse inertia 3 | 1 if the world]
GPOS, GQUAT, GSIZE, GFRIC, GREST, IM, II, ISWORLD = (slice(0, 3), slice(3, 7), slice(7, 10), 10, 11, 12,
                                                     slice(13, 16), 16)
SIDE = 17


@dataclass(frozen=True)
class Block:
  type_a: str
  type_b: str
  pairs: int       # P pair slots
  slots: int       # K contact slots per pair
  offset: int      # first pair slot of this block in the plan


@dataclass(frozen=True)
class ContactPlan:
  """Candidate pairs for one step. Tensors are realised; Ptot = sum of P over blocks, C = sum of P K."""
  blocks: tuple[Block, ...]
  pairs: Tensor          # (B, Ptot, 2) int32 model geom index of each pair side, -1 in empty slots
  pair_body: Tensor      # (B, Ptot, 2, nbody) one-hot body of each pair side (zero row: the world)
  pair_side: Tensor      # (B, Ptot, 2, SIDE) geom and body parameters per side
  pair_valid: Tensor     # (B, Ptot) 1.0 where the slot holds a pair
  contact_body: Tensor   # (B, C, 2, nbody) pair_body repeated for each of the pair's K contact slots
  contact_side: Tensor   # (B, C, 2, SIDE)
  overflow: Tensor       # (B,) int32 candidate pairs the broadphase could not keep this step


def plane_pairs(model) -> dict[tuple[str, str], list[tuple[int, int]]]:
  """Static (plane, geom) pairs per type: every world plane against every geom of a body."""
  if not model.contact_enabled: return {}
  planes = [g for g in model.geoms_of_type("plane") if model.geom_body[g] == WORLD]
  out: dict = {}
  for t in GEOM_TYPES[1:]:
    pairs = [(p, g) for p in planes for g in model.geoms_of_type(t) if model.geom_body[g] != WORLD]
    if pairs: out[("plane", t)] = pairs
  return out


def has_contacts(model) -> bool:
  return bool(plane_pairs(model)) or bool(model.pair_capacity)


def _geom_table(model) -> tuple[Tensor, Tensor]:
  """(ngeom, SIDE) per-geom parameters, body parameters appended (world geoms: zero inverse mass, flag 1), and the
  (ngeom, nbody) one-hot geom -> body (a zero row for world geoms)."""
  m = model
  body = const([float(g == b) for g in m.geom_body for b in range(m.nbody)], m.body_inv_mass).reshape(m.ngeom, m.nbody)
  world = const([float(b == WORLD) for b in m.geom_body], m.body_inv_mass).reshape(m.ngeom, 1)
  return Tensor.cat(m.geom_pos, m.geom_quat, m.geom_size, m.geom_friction.reshape(-1, 1),
                    m.geom_restitution.reshape(-1, 1), body @ m.body_inv_mass.reshape(-1, 1), body @ m.body_inv_inertia,
                    world, dim=-1), body


def plan_blocks(model) -> tuple[Block, ...]:
  """The scene's pair blocks, static: plane pairs by type, then the broadphase's type pairs (model.pair_capacity)."""
  blocks, off = [], 0
  for (ta, tb), pairs in plane_pairs(model).items():
    blocks.append(Block(ta, tb, len(pairs), NARROWPHASE[(ta, tb)][1], off))
    off += len(pairs)
  for ta, tb, cap in model.pair_capacity:
    blocks.append(Block(ta, tb, cap, NARROWPHASE[(ta, tb)][1], off))
    off += cap
  return tuple(blocks)


def find_pairs(model, packed: Tensor) -> tuple[Tensor, Tensor]:
  """This step's candidate pairs (B, Ptot, 2) int32 model geom indices (-1: empty slot), in plan_blocks order, and
  the broadphase's overflow count (B,) int32. Discrete: nothing differentiates through it."""
  B = packed.shape[0]
  overflow = Tensor.zeros(B, dtype=dtypes.int32, device=packed.device).contiguous()
  # plane pairs keep their static slots, empty (-1) where the geom's AABB does not reach the plane this step
  tables = [plane_reach(model, packed, pairs).unsqueeze(-1).where(
            const([g for p in pairs for g in p], overflow).reshape(1, len(pairs), 2), -1)
            for pairs in plane_pairs(model).values()]
  if model.pair_capacity:
    table = broadphase(model, packed)
    overflow = table.overflow
    tables += [table.pairs[(ta, tb)] for ta, tb, _ in model.pair_capacity]
  return (Tensor.cat(*tables, dim=1) if len(tables) > 1 else tables[0]), overflow


def contact_plan(model, packed: Tensor, realize: bool = True) -> ContactPlan:
  """Candidate pairs for the step starting at `packed` (B, nbody, 13). realize=False keeps the parameter rows lazy
  (a differentiable graph); the pair table itself is always realised (it is discrete)."""
  pairs, overflow = find_pairs(model, packed.detach())
  plan = plan_from_pairs(model, pairs.contiguous().realize(), overflow)
  if realize:
    Tensor.realize(plan.pair_body, plan.pair_side, plan.pair_valid, plan.contact_body, plan.contact_side, overflow)
  return plan


def plan_from_pairs(model, pairs: Tensor, overflow: Tensor | None = None) -> ContactPlan:
  """The plan's one-hot rows and per-side parameters from a pair table (B, Ptot, 2). Lazy: differentiable with
  respect to the model's geom and body parameters (friction, size, inverse mass...)."""
  blocks, dt = plan_blocks(model), model.body_inv_mass.dtype
  onehot = (pairs.unsqueeze(-1) == const(range(model.ngeom), pairs)).cast(dt)  # (B, Ptot, 2, ngeom)
  gtable, g2b = _geom_table(model)
  # an empty slot reads as the world on both sides (identity orientation, no mass), so it computes finite zeros
  empty = (pairs < 0).cast(dt).unsqueeze(-1) * const([float(i == ISWORLD) for i in range(SIDE)], gtable)
  pair_side, pair_body = (onehot @ gtable + empty).contiguous(), (onehot @ g2b).contiguous()
  pair_valid = (pairs[..., 0] >= 0).cast(dt).contiguous()
  def per_contact(t: Tensor) -> Tensor:   # (B, Ptot, ...) -> (B, C, ...): each pair's row once per contact slot
    B, rest = t.shape[0], t.shape[2:]
    parts = [t[:, b.offset:b.offset + b.pairs].unsqueeze(2).expand(B, b.pairs, b.slots, *rest)
             .reshape(B, b.pairs * b.slots, *rest) for b in blocks]
    return Tensor.cat(*parts, dim=1) if len(parts) > 1 else parts[0]
  if overflow is None: overflow = pairs[:, 0, 0] * 0
  return ContactPlan(blocks, pairs, pair_body, pair_side, pair_valid, per_contact(pair_body).contiguous(),
                     per_contact(pair_side).contiguous(), overflow)


def pair_sum(blocks: tuple[Block, ...], t: Tensor) -> Tensor:
  """(B, C) per contact slot -> (B, Ptot): the sum over each pair's K slots (a block's slots are pair-major)."""
  parts, at = [], 0
  for b in blocks:
    parts.append(t[:, at:at + b.pairs * b.slots].reshape(t.shape[0], b.pairs, b.slots).sum(2))
    at += b.pairs * b.slots
  return Tensor.cat(*parts, dim=1) if len(parts) > 1 else parts[0]


def side_rows(body: Tensor, state: Tensor) -> Tensor:
  """Gather each slot's body rows: body (B, N, 2, nbody) one-hot, state (B, nbody, W) -> (B, N, 2, W)."""
  B, N = body.shape[0], body.shape[1]
  return (body.reshape(B, N * 2, -1) @ state).reshape(B, N, 2, state.shape[-1])


def side_pose(rows: Tensor, side: Tensor, s: int) -> tuple[V3, Quat]:
  """Body pose of side s from gathered rows; the world (a zero row) gets the identity orientation."""
  r, p = rows[..., s, :], side[..., s, :]
  return V3(r[..., 0], r[..., 1], r[..., 2]), Quat(r[..., 3] + p[..., ISWORLD], r[..., 4], r[..., 5], r[..., 6])


def _geom(x: V3, q: Quat, p: Tensor) -> Geom:
  gq = Quat(p[..., 3], p[..., 4], p[..., 5], p[..., 6])
  return Geom(pos=x + q.rotate(V3(p[..., 0], p[..., 1], p[..., 2])), rot=q * gq,
              size=V3(p[..., 7], p[..., 8], p[..., 9]))


def block_contacts(plan: ContactPlan, blk: Block, rows: Tensor) -> tuple[list[Contact], tuple]:
  """Run one block's pair function on gathered body rows (B, Ptot, 2, W): contacts and the two sides' poses."""
  sl = slice(blk.offset, blk.offset + blk.pairs)
  r, s = rows[:, sl], plan.pair_side[:, sl]
  (xa, qa), (xb, qb) = side_pose(r, s, 0), side_pose(r, s, 1)
  fn, k = NARROWPHASE[(blk.type_a, blk.type_b)]
  contacts = fn(_geom(xa, qa, s[..., 0, :]), _geom(xb, qb, s[..., 1, :]))
  assert len(contacts) == k, f"{fn.__name__} returned {len(contacts)} contact slots, registered {k}"
  return contacts, (xa, qa, xb, qb, r, s, plan.pair_valid[:, sl] > 0)


def softplus(d: Tensor, beta: float) -> Tensor:
  """(1/beta) ln(1 + exp(beta d)), overflow-free: max(d, 0) + ln(1 + exp(-beta |d|)) / beta (DESIGN sec. 3)."""
  return d.maximum(0.0) + (-(d.abs() * beta)).exp().add(1.0).log() / beta


def penetration(model, packed: Tensor, beta: float | None = None) -> Tensor:
  """Sum over contacts of the penetration depth per env (B,) at the pose `packed` (B, nbody, 13): max(depth, 0), or
  its softplus with the scene's beta (or `beta`) when > 0, the smooth form to differentiate."""
  beta = model.contact_beta if beta is None else beta
  total = packed[:, 0, 0] * 0.0
  if not has_contacts(model): return total
  plan = contact_plan(model, packed, realize=False)
  rows = side_rows(plan.pair_body, packed)
  for blk in plan.blocks:
    contacts, (*_, pvalid) = block_contacts(plan, blk, rows)
    for c in contacts:
      d = c.depth()
      total = total + (c.valid & pvalid).where(softplus(d, beta) if beta > 0 else d.maximum(0.0), 0.0).sum(-1)
  return total


def max_penetration(model, packed: Tensor) -> Tensor:
  """Deepest penetration [m] per env (B,) over every contact at the pose `packed` (B, nbody, 13): a check, not
  part of the step (a resting contact settles at a few micrometres; a solver bug shows as millimetres). Realised
  stage by stage like the step (plan, gathered rows, one kernel per block): one lazy graph of the whole broadphase
  and narrowphase fuses into kernels that take clang minutes to compile."""
  packed = packed.detach().contiguous().realize()
  deepest = packed[:, 0, 0] * 0.0
  if not has_contacts(model): return deepest.realize()
  plan = contact_plan(model, packed, realize=True)
  rows = side_rows(plan.pair_body, packed).contiguous().realize()
  for blk in plan.blocks:
    contacts, (*_, pvalid) = block_contacts(plan, blk, rows)
    # the depths as one elementwise kernel, then the reduction: a reduction over the heavy narrowphase expression
    # itself gets it unrolled by tinygrad's heuristics, and clang then takes minutes per block (measured on pile)
    depth = Tensor.stack(*((c.valid & pvalid).where(c.depth(), 0.0) for c in contacts), dim=-1).contiguous()
    deepest = deepest.maximum(depth.max((-2, -1))).realize()
  return deepest
