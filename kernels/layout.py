"""The layouts the WGSL kernels share with the host: the Model tensors packed into one parameter row per env
(PARAMS, param_layout, pack_params), the packed state's rows (state_rows) and one env's working state in bytes
(state_bytes), and the contact plan as constants and flat tables (slot_layout, contact_tables), all generated from
the oracle's own layouts (oracle/contacts.py, oracle/solve.py, oracle/packed.py) so that no number is written twice.
"""
from __future__ import annotations
from tinygrad import Tensor, dtypes
from oracle import broadphase, contacts, packed, solve
from oracle.collide import NARROWPHASE
from oracle.constraints import NLAM
from oracle.types import GEOM_TYPES, WORLD, Model

# the Model tensors the kernel reads, in buffer order, with their rank without a batch axis (names as in
# oracle/types.py; the header gives each an offset constant OFF_<NAME>)
PARAMS = dict(gravity=1, body_inv_mass=1, body_inv_inertia=2, jnt_anchor_parent=2, jnt_anchor_child=2,
              jnt_axis_parent=2, jnt_axis_child=2, jnt_ref_parent=2, jnt_ref_child=2, jnt_relquat=2, jnt_range=2,
              jnt_limited=1, jnt_compliance=1, jnt_damping=1, jnt_length=1, act_gear=1, act_ctrlrange=2, act_kp=1,
              act_kv=1, geom_pos=2, geom_quat=2, geom_size=2, geom_friction=1, geom_restitution=1,
              site_pos=2, ten_stiffness=1, ten_damping=1, ten_length=1, act_gainprm=2, act_dynprm=2,
              act_lengthrange=2, act_acc0=1)


class Unsupported(NotImplementedError):
  """The scene uses a feature the WGSL kernel does not implement yet."""


def check_supported(model: Model) -> None:
  if dtypes.float32 != model.body_inv_mass.dtype:
    raise Unsupported(f"{model.name}: the WGSL kernel is float32 only, the model is {model.body_inv_mass.dtype}")
  from oracle.armature import armed_trees
  big = [t for t in armed_trees(model) if len(t.joints) > 32]
  if big:   # kernels/armature.wgsl ARM_SUB: a body's subtree membership is a 32-bit mask over its tree's joints
    raise Unsupported(f"{model.name}: the WGSL armature stage takes trees of at most 32 joints; joint "
                      f"'{model.jnt_name[big[0].joints[0]]}' roots one of {len(big[0].joints)}; use the oracle")


def model_batch(model: Model) -> int:
  """1, or B when domain randomisation gave some of the model's tensors a leading batch axis."""
  return max((getattr(model, n).shape[0] for n, r in PARAMS.items() if getattr(model, n).ndim > r), default=1)


def param_layout(model: Model) -> tuple[dict[str, int], int]:
  """Offset of each PARAMS field in one env's row, and the row length."""
  off, n = {}, 0
  for name, r in PARAMS.items():
    t = getattr(model, name)
    off[name], n = n, n + (t[0] if t.ndim > r else t).numel()
  return off, max(n, 1)


def pack_params(model: Model) -> Tensor:
  """(MB, NPARAM) float32: every PARAMS field flattened per env (MB = model_batch), on the model's device."""
  mb = model_batch(model)
  cols = [t.reshape(mb, -1) if t.ndim > r else t.reshape(1, -1).expand(mb, t.numel())
          for t, r in ((getattr(model, n), r) for n, r in PARAMS.items())]
  cols = [c for c in cols if c.shape[1] > 0]
  return Tensor.cat(*cols, dim=1).contiguous() if cols else Tensor.zeros(mb, 1, device=model.gravity.device)


def slot_layout() -> dict[str, int]:
  """Offsets SLOT_<FIELD> in a contact slot's floats of the kernel's scratch (kernels/contacts.wgsl), and its width
  SLOT_W: the narrowphase row as oracle/contacts.py lays it out (VALID, NORMAL, RA, RB, FRICTION, RESTITUTION,
  APPROACH; ROW floats from SLOT_ROW), then the contact solve's result row as oracle/solve.py lays it out
  (solve_contacts: the correction DX1, DTH1, DX2, DTH2, then LAMBDA_N, LAMBDA_T, TOUCHED, TOUCHING; CONTACT_W
  floats)."""
  def at(f): return f.start if isinstance(f, slice) else f
  row = {k: at(getattr(contacts, k)) for k in ("VALID", "NORMAL", "RA", "RB", "FRICTION", "RESTITUTION", "APPROACH")}
  res = {k: contacts.ROW + at(getattr(solve, k)) for k in ("DX1", "DTH1", "DX2", "DTH2", "LAMBDA_N", "LAMBDA_T",
                                                           "TOUCHED", "TOUCHING")}
  return {f"SLOT_{k}": v for k, v in {"ROW": 0, **row, **res, "W": contacts.ROW + solve.CONTACT_W}.items()}


PUSH_W = 12   # a pair's push in the restitution stage's rows: its Correction [dv1 | dw1 | dv2 | dw2]


def contact_tables(model: Model) -> tuple[dict[str, int], list[int]]:
  """The contact plan's static layout as WGSL constants (oracle/contacts.py plan_blocks, oracle/broadphase.py): plane
  pairs first, then one block per model.pair_capacity entry; each pair has its registered number of contact slots
  and its pair kind, the index of its type pair in oracle/collide NARROWPHASE (the order of the generated
  pair_contacts). The spatial hash (kernels/broadphase.wgsl) gets the hashed geoms (HASHED, model geom per hashed
  position), its table's size (NBUCKET buckets of HASH_SLOTS), the block of each (row type, column type)
  (BLOCK_OF, -1: none) and the excluded body pairs as a CSR over bodies (EXCL_START at body + 1, the world first;
  EXCL_LIST the partners with the higher index), which pair_allowed reads. Returns the u32 constants of the header
  (counts; the scratch row's layout: where the slots, the AABBs, the cells, the bucket table, the row counts, the
  live lists and the restitution stage's pushes (PUSH_W floats per pair, for a model with restitution) start, OVF,
  SCR its length, and slot_layout; each table's offset T_<NAME>) and the tables flattened into one int list (the
  kernel's `tab` buffer)."""
  from oracle.broadphase import HASH_PRIMES, hashed_geoms, table_size
  kinds_order = list(NARROWPHASE)
  blocks = contacts.plan_blocks(model)
  plane_pairs = contacts.plane_pairs(model)
  planes = [p for pairs in plane_pairs.values() for p in pairs]
  kinds, slots, slot0, slot_pair, n = [], [], [], [], 0
  for blk in blocks:
    for _ in range(blk.pairs):
      kinds.append(kinds_order.index((blk.type_a, blk.type_b)))
      slots.append(NARROWPHASE[(blk.type_a, blk.type_b)][1])
      slot0.append(n)
      slot_pair += [len(kinds) - 1] * slots[-1]
      n += slots[-1]
  geoms = hashed_geoms(model)   # every non-plane geom: its AABB serves the plane pairs and the hash
  nt = len(GEOM_TYPES)
  block_of = [-1] * (nt * nt)
  for t, (ta, tb, _) in enumerate(model.pair_capacity): block_of[nt * GEOM_TYPES.index(ta) + GEOM_TYPES.index(tb)] = t
  excl = [sorted(j for i, j in model.collide_exclude if i == b) for b in range(WORLD, model.nbody)]
  excl_start = [0]
  for e in excl: excl_start.append(excl_start[-1] + len(e))
  cap = [c for _, _, c in model.pair_capacity]
  pair0 = [blocks[len(plane_pairs) + t].offset for t in range(len(cap))]
  npair, slot, nbucket = len(kinds), slot_layout(), table_size(len(geoms))
  scr = {"SCR_SLOTS": 2 * npair}                 # the pair geoms come first
  scr["SCR_AABB"] = scr["SCR_SLOTS"] + slot["SLOT_W"] * n
  scr["SCR_CELL"] = scr["SCR_AABB"] + 6 * len(geoms)
  scr["SCR_BUCKET"] = scr["SCR_CELL"] + 5 * len(geoms)
  scr["SCR_ROW"] = scr["SCR_BUCKET"] + nbucket * model.hash_slots * bool(model.pair_capacity)
  scr["SCR_LIVE"] = scr["SCR_ROW"] + 2 * nt * len(geoms)
  scr["SCR_BODYP"] = scr["SCR_LIVE"] + 2 + npair + n
  # the restitution stage's push per pair (kernels/restitution.wgsl): its Correction
  scr["SCR_PUSH"] = scr["SCR_BODYP"] + 2 * model.nbody + 1 + 2 * npair
  scr["OVF"] = scr["SCR_PUSH"] + PUSH_W * npair * model.contact_restitution
  counts = {"NPAIR": npair, "NSLOT": n, "NPLANE_PAIR": len(planes), "NHASH": len(geoms), "NBUCKET": nbucket,
            "HASH_SLOTS": model.hash_slots, "NTYPE": nt, "NBLOCK": len(cap), "NBLOCK_ARR": max(len(cap), 1),
            **{f"HASH_P{k}": p for k, p in enumerate(HASH_PRIMES)}, **scr, "SCR": scr["OVF"] + 1,
            "PUSH_W": PUSH_W, **slot}
  tables = dict(PLANE_PAIRS=planes, PLANE_AT=[geoms.index(g) for _, g in planes],
                LOOP_BOUNDS=[len(broadphase.NEIGHBOURS), model.hash_slots, len(geoms), nt, npair, model.nbody],
                HASHED=geoms, BLOCK_OF=block_of, BLOCK_CAP=cap, BLOCK_PAIR0=pair0,
                EXCL_START=excl_start, EXCL_LIST=[j for e in excl for j in e], PAIR_KIND=kinds, PAIR_SLOTS=slots,
                PAIR_SLOT0=slot0, SLOT_PAIR=slot_pair, GEOM_BODY=list(model.geom_body),
                GEOM_TYPE=[GEOM_TYPES.index(t) for t in model.geom_type])
  flat, offsets = [], {}
  for k, v in tables.items():
    offsets[f"T_{k}"] = len(flat)
    flat += [int(x) for row in v for x in (row if isinstance(row, tuple) else (row,))]
  return {**counts, **offsets}, flat


def state_bytes(model: Model) -> int:
  """Bytes of one env's working state (the `var<env>` arrays of kernels/xpbd_step.wgsl and armature.wgsl) in WGSL's
  layout: seven vec3 arrays (stride 16) and a Quat array (stride 32) per body, a Correction (64), LAMW f32 and the
  armature stage's rate (4) per joint, an f32 per muscle."""
  return (max(model.nbody, 1) * (7 * 16 + 32) + max(model.njoint, 1) * (64 + 4 * max(NLAM.values()) + 4)
          + 4 * max(packed.nmuscle(model), 1))


def adjoint_bytes(model: Model) -> int:
  """Bytes of one env's adjoint state (kernels/adjoint/xpbd_step.wgsl's `var<env>` arrays), as state_bytes: nine vec3
  arrays and a Quat array per body, LAMW f32 per joint, an f32 per muscle."""
  return (max(model.nbody, 1) * (9 * 16 + 32) + max(model.njoint, 1) * 4 * max(NLAM.values())
          + 4 * max(packed.nmuscle(model), 1))


def state_rows(model: Model) -> int:
  """Rows of 13 floats per env in the kernel's state buffers: the bodies', then the muscles' (oracle/packed.py)."""
  return model.nbody + packed.muscle_rows(model)
