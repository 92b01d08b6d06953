"""The WGSL step kernel for one Model: its source (the kernels/*.wgsl files behind a generated header) and the Model's
tensors packed into the one parameter buffer the kernel reads.

Topology (counts, joint types, parents, children, actuator wiring) is static in the oracle too, so it becomes WGSL
constants here and the kernel is compiled once per scene, batch and step count, like the oracle's jitted step. The
header also carries everything the kernel shares with the oracle, generated from the oracle's modules so that no
number is written twice: the contact slot layout (slot_layout), the packed state's layout, the narrowphase's
tolerances and math3's polynomial (oracle_constants), EPS, and the pair-kind dispatch in NARROWPHASE's order
(collide_header).
"""
from __future__ import annotations
import os
import re
from functools import lru_cache
from tinygrad import Tensor, dtypes
from oracle import broadphase, contacts, math3, muscle, packed, solve
from oracle.collide import NARROWPHASE, box, box_box, primitives
from oracle.constraints import CONSTRAINTS, NLAM
from oracle.joint_damping import has_damping
from oracle.solve import joint_counts
from oracle.tendon import segments
from oracle.types import GEOM_TYPES, JOINT_TYPES, WORLD, Model
from oracle.xpbd import EPS

# the Model tensors the kernel reads, in buffer order, with their rank without a batch axis (names as in
# oracle/types.py; the header gives each an offset constant OFF_<NAME>)
PARAMS = dict(gravity=1, body_inv_mass=1, body_inv_inertia=2, jnt_anchor_parent=2, jnt_anchor_child=2,
              jnt_axis_parent=2, jnt_axis_child=2, jnt_ref_parent=2, jnt_ref_child=2, jnt_relquat=2, jnt_range=2,
              jnt_limited=1, jnt_compliance=1, jnt_damping=1, jnt_length=1, act_gear=1, act_ctrlrange=2, act_kp=1,
              act_kv=1, geom_pos=2, geom_quat=2, geom_size=2, geom_friction=1, geom_restitution=1,
              site_pos=2, ten_stiffness=1, ten_damping=1, ten_length=1, act_gainprm=2, act_dynprm=2,
              act_lengthrange=2, act_acc0=1)
WORKGROUP = 64   # most invocations (envs) per workgroup when LANES == 1 (workgroup_size)
MIN_WORKGROUPS = 16   # workgroups a one-lane launch spans at least, down to SIMD_ENVS envs each: one per thread of a
                      # 16-core CPU (lavapipe runs a workgroup on one thread)
SIMD_ENVS = 8    # envs per SIMD instruction on lavapipe (8 float32 lanes of AVX2)
MAX_LANES = 256  # WebGPU's default maxComputeInvocationsPerWorkgroup
MAX_WORKGROUPS = 65535   # per dispatch dimension (WebGPU's maxComputeWorkgroupsPerDimension default)
# WebGPU's default maxComputeWorkgroupStorageSize [bytes]: with LANES > 1 the env's working state (state_bytes) lives in
# workgroup memory and must fit
WORKGROUP_BYTES = 16384
# the kernel's source files, concatenated into one program (WGSL resolves names module-wide, in any order): the step's
# buffers, entry point and substep, the contact plan's storage, the XPBD corrections and the constraints, one file
# per stage of oracle/step.py STAGES (each defining `fn <stage>`), then the pair functions (COLLIDE_FILES, which also
# make a program of their own: collide_source). tests/test_wgsl_bridge.py checks this list against the oracle's files.
STEP_FILES = ("xpbd_step.wgsl", "contacts.wgsl", "xpbd.wgsl", "constraints.wgsl", "broadphase.wgsl", "motor_loads.wgsl",
              "integrate.wgsl", "narrowphase.wgsl", "solve.wgsl", "recover.wgsl", "contact_velocity.wgsl",
              "joint_damping.wgsl", "activation.wgsl", "muscle.wgsl", "tendon.wgsl")
COLLIDE_FILES = ("math3.wgsl", "collide.wgsl", "primitives.wgsl", "box.wgsl", "box_box.wgsl")
SOURCES = tuple(os.path.join(os.path.dirname(__file__), f) for f in STEP_FILES + COLLIDE_FILES)
# the backward kernel's adjoints (issue 17, in progress): `<name>_adj` per forward function, in files named as the
# forward's; tests/test_parity_adjoint.py launches them behind a step program (adjoint_source). BACKWARD_FILES add the
# stages' adjoints and the backward entry point (backward_source)
ADJOINT_FILES = ("adjoint/math3.wgsl", "adjoint/xpbd.wgsl", "adjoint/constraints.wgsl", "adjoint/integrate.wgsl",
                 "adjoint/collide.wgsl", "adjoint/primitives.wgsl", "adjoint/box.wgsl", "adjoint/box_box.wgsl",
                 "adjoint/muscle.wgsl", "adjoint/tendon.wgsl")
BACKWARD_FILES = ("adjoint/xpbd_step.wgsl", "adjoint/motor_loads.wgsl", "adjoint/narrowphase.wgsl",
                  "adjoint/solve.wgsl", "adjoint/recover.wgsl", "adjoint/contact_velocity.wgsl",
                  "adjoint/joint_damping.wgsl", "adjoint/activation.wgsl")
BACKWARD_ENTRY = "xpbd_step_adj"
SLOTADJ_W = 14   # a contact slot's adjoint floats on the tape (kernels/adjoint/narrowphase.wgsl SA_*)
# the oracle modules whose constants the kernel uses, each emitted as <MODULE>_<NAME> (oracle_constants)
CONSTANT_MODULES = (math3, packed, broadphase, primitives, box, box_box, muscle)


class Unsupported(NotImplementedError):
  """The scene uses a feature the WGSL kernel does not implement yet."""


def check_supported(model: Model) -> None:
  if dtypes.float32 != model.body_inv_mass.dtype:
    raise Unsupported(f"{model.name}: the WGSL kernel is float32 only, the model is {model.body_inv_mass.dtype}")


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


def _arr(kind: str, values: list) -> str:
  """A WGSL array value; kind u32, i32, f32, or vec2<i32> / vec3<i32> with tuples as values. Only the small
  per-joint tables are WGSL arrays; the contact tables, which grow with the scene, go to the `tab` buffer (lavapipe
  compiles a dynamically indexed array into a select over every element)."""
  if kind.startswith("vec"):
    n = int(kind[3])
    vals = [f"{kind}({', '.join(str(int(x)) for x in v)})" for v in values] or [f"{kind}({', '.join(['0'] * n)})"]
  else:
    vals = [str(v) + ("u" if kind == "u32" else "") for v in values] or ["0" + ("u" if kind == "u32" else "")]
  return f"array<{kind}, {len(vals)}>({', '.join(vals)})"


def _table(name: str, kind: str, values: list) -> str:
  arr = _arr(kind, values)
  return f"var<private> {name}: {arr[:arr.index('>(') + 1]} = {arr};"


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


def contact_tables(model: Model) -> tuple[dict[str, int], list[int]]:
  """The contact plan's static layout as WGSL constants (oracle/contacts.py plan_blocks, oracle/broadphase.py): plane
  pairs first, then one block per model.pair_capacity entry; each pair has its registered number of contact slots
  and its pair kind, the index of its type pair in oracle/collide NARROWPHASE (the order of the generated
  pair_contacts). The spatial hash (kernels/broadphase.wgsl) gets the hashed geoms (HASHED, model geom per hashed
  position), its table's size (NBUCKET buckets of HASH_SLOTS), the block of each (row type, column type)
  (BLOCK_OF, -1: none) and the excluded body pairs as a CSR over bodies (EXCL_START at body + 1, the world first;
  EXCL_LIST the partners with the higher index), which pair_allowed reads. Returns the u32 constants of the header
  (counts; the scratch row's layout: where the slots, the AABBs, the cells, the bucket table and the row counts
  start, OVF, SCR its length, and slot_layout; each table's offset T_<NAME>) and the tables flattened into one int
  list (the kernel's `tab` buffer)."""
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
  scr["OVF"] = scr["SCR_BODYP"] + 2 * model.nbody + 1 + 2 * npair
  counts = {"NPAIR": npair, "NSLOT": n, "NPLANE_PAIR": len(planes), "NHASH": len(geoms), "NBUCKET": nbucket,
            "HASH_SLOTS": model.hash_slots, "NTYPE": nt, "NBLOCK": len(cap), "NBLOCK_ARR": max(len(cap), 1),
            **{f"HASH_P{k}": p for k, p in enumerate(HASH_PRIMES)}, **scr, "SCR": scr["OVF"] + 1, **slot}
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


def _wgsl_value(v) -> str:
  """A module constant as a WGSL value: an offset (slice start) or a number untyped (abstract), like a Python
  number, so products of constants such as SUPPORT_SIN * SUPPORT_SIN round to f32 once, as tinygrad's constants do;
  a tuple of numbers as an f32 array."""
  if isinstance(v, slice): v = v.start
  if isinstance(v, tuple): return f"array<f32, {len(v)}>({', '.join(repr(float(x)) for x in v)})"
  return repr(v)


def oracle_constants() -> list[str]:
  """Every upper-case number, slice (its start) or tuple of numbers of the CONSTANT_MODULES as a WGSL constant named
  <MODULE>_<NAME>, a leading _ dropped: box_box.MARGIN is BOX_BOX_MARGIN, packed.VEL (slice(7, 10)) PACKED_VEL = 7,
  math3._ASIN the array MATH3_ASIN. The prefix keeps names the modules share (EPS, PARALLEL_SIN) apart."""
  def kept(v): return (isinstance(v, (int, float, slice)) and not isinstance(v, bool)) or (
    isinstance(v, tuple) and v and all(isinstance(x, float) for x in v))
  out = []
  for mod in CONSTANT_MODULES:
    prefix = mod.__name__.rsplit(".", 1)[-1].upper()
    for name, v in vars(mod).items():
      if name.lstrip("_").isupper() and kept(v): out.append(f"const {prefix}_{name.lstrip('_')} = {_wgsl_value(v)};")
  return out


def collide_header() -> str:
  """The generated part every program with the pair functions needs (kernels/collide.wgsl): the oracle's constants,
  MAX_SLOTS (the most contact slots a pair function fills) and pair_contacts, which runs pair kind k, the k-th
  entry of oracle/collide NARROWPHASE (its registration order; contact_tables numbers the pairs' kinds the same)."""
  cases = "\n".join(f"    case {k}u: {{ {fn.__name__}(a, b); }}" for k, (fn, _) in enumerate(NARROWPHASE.values()))
  return "\n".join([*oracle_constants(), f"const MAX_SLOTS = {max(k for _, k in NARROWPHASE.values())}u;",
                    "fn pair_contacts(kind: u32, a: Geom, b: Geom) {", "  switch kind {", cases,
                    "    default: {}", "  }", "}"]) + "\n"


def collide_source() -> str:
  """A program of the pair functions alone, without the step's buffers or a scene: collide_header, then
  COLLIDE_FILES. Add an entry point to run it (tests/test_parity_narrowphase.py)."""
  return collide_header() + "\n".join(_read(f) for f in COLLIDE_FILES)


def _f(x: float) -> str: return repr(float(x))


def state_bytes(model: Model) -> int:
  """Bytes of one env's working state (the `var<env>` arrays of kernels/xpbd_step.wgsl) in WGSL's layout: seven
  vec3 arrays (stride 16) and a Quat array (stride 32) per body, a Correction (64) and LAMW f32 per joint, an f32
  per muscle."""
  return (max(model.nbody, 1) * (7 * 16 + 32) + max(model.njoint, 1) * (64 + 4 * max(NLAM.values()))
          + 4 * max(packed.nmuscle(model), 1))


def state_rows(model: Model) -> int:
  """Rows of 13 floats per env in the kernel's state buffers: the bodies', then the muscles' (oracle/packed.py)."""
  return model.nbody + packed.muscle_rows(model)


# envs from which one lane per env beats 32 on a CPU adapter (lavapipe: a workgroup runs on one thread, its
# invocations 8 to a SIMD instruction). stack10 on lavapipe, 32 lanes vs 1: x1 1.5-2x as fast, x2 1.2x, x4 0.6-0.7x,
# x64 0.45-0.5x
CPU_ONE_LANE_BATCH = 4
# [floats] the largest scratch row a one-lane env keeps in private memory (env_buffers): lavapipe's compile time
# grows with it (stack10's 8,609 floats: 19 -> 58 s for a 14 % faster step), while the ant's 1,436 compile as fast
PRIVATE_SCRATCH = 2048


def default_lanes(model: Model, batch: int, cpu: bool) -> int:
  """Invocations per env (kernels/xpbd_step.wgsl LANES) for `batch` envs of this scene on a CPU (lavapipe) or GPU
  adapter; docs/wgsl.md (Speed) has the measurements. One lane per env where an env has little to share (no contact
  slots: a joint scene's items are a few bodies and joints; chain x64 on lavapipe runs 2.8x faster on one lane than
  on 16), and on a CPU from CPU_ONE_LANE_BATCH envs, where 8 envs per SIMD instruction beat 8 items of one env.
  Otherwise 32, the better of 32 and 64 on lavapipe and a GPU's warp: stack10's 260 contact slots then run 9 per
  lane instead of 260 in one thread, and 64 envs occupy 64 workgroups instead of one (GPU speed not measured yet).
  Also 1 where one env's state overflows workgroup memory, or there are more envs than workgroups in a dispatch."""
  if contact_tables(model)[0]["NSLOT"] == 0 or state_bytes(model) > WORKGROUP_BYTES or batch > MAX_WORKGROUPS: return 1
  return 1 if cpu and batch >= CPU_ONE_LANE_BATCH else 32


def check_lanes(model: Model, lanes: int) -> None:
  if not 1 <= lanes <= MAX_LANES: raise ValueError(f"lanes={lanes}: expected 1 .. {MAX_LANES}")
  if lanes > 1 and state_bytes(model) > WORKGROUP_BYTES:
    raise ValueError(f"{model.name}: lanes={lanes} keeps the env's state in workgroup memory, {state_bytes(model)} "
                     f"bytes > WebGPU's {WORKGROUP_BYTES}; use lanes=1")


def workgroup_size(lanes: int, batch: int) -> int:
  """Invocations per workgroup: one env of `lanes` lanes, or with one lane per env up to WORKGROUP envs, fewer for a
  small batch so that it still spans MIN_WORKGROUPS workgroups (never under SIMD_ENVS). lavapipe runs a workgroup on
  one thread: stack10 x64 in one workgroup of 64 kept one of this machine's 2 cores idle, and ran 1.8x as fast in 8
  workgroups of 8 (5.3k -> 9.7k env-steps/s, S=10 K=1); drop x256 and pendulum x4096 are unchanged within noise
  (docs/wgsl.md, Speed). A GPU spreads workgroups over its multiprocessors the same way."""
  if lanes > 1: return lanes
  per_group = -(-batch // MIN_WORKGROUPS)
  return min(WORKGROUP, max(SIMD_ENVS, -(-per_group // SIMD_ENVS) * SIMD_ENVS))


def env_buffers(model: Model, lanes: int) -> str:
  """The declarations of kernels/xpbd_step.wgsl's parameters `prm`, tables `tab` and scratch `scr`, with env_in(e)
  (sets the env's rows sb and mb) and env_out(e). With LANES > 1 they are the storage buffers. With one lane per env,
  env_in copies the env's parameter row and the tables into private arrays, and the scratch row is private too when
  it has at most PRIVATE_SCRATCH floats (env_out writes it back for the host: the overflow count, engine.wgsl's
  contact_set): lavapipe checks the bounds of every storage access lane by lane (eight compares, branches and scalar
  loads per SIMD load where the index differs across envs, as a slot's or a body's index read from the scratch
  does), and a private array needs none. The ant x256 on lavapipe: 3.98 -> 3.25 ms a step (docs/wgsl.md, Speed)."""
  storage = ("@group(0) @binding(3) var<storage, read_write> {p} : array<f32>;\n"
             "@group(0) @binding(5) var<storage, read_write> {t} : array<i32>;\n"
             "@group(0) @binding(6) var<storage, read_write> {s} : array<f32>;\n")
  rows = "  mb = select(0u, e, MODEL_BATCHED) * NPARAM;\n"
  if lanes > 1:
    return (storage.format(p="prm", t="tab", s="scr") + f"fn env_in(e: u32) {{\n  sb = e * SCR;\n{rows}}}\n"
            "fn env_out(e: u32) {}\n")
  consts, flat = contact_tables(model)
  ntab, private = max(len(flat), 1), consts["SCR"] <= PRIVATE_SCRATCH
  return (storage.format(p="prm_buf", t="tab_buf", s="scr_buf" if private else "scr") +
          f"var<private> prm: array<f32, NPARAM>;\nvar<private> tab: array<i32, {ntab}>;\n" +
          ("var<private> scr: array<f32, SCR>;\n" if private else "") +
          f"fn env_in(e: u32) {{\n{rows}  for (var k = 0u; k < NPARAM; k++) {{ prm[k] = prm_buf[mb + k]; }}\n"
          f"  mb = 0u;\n  for (var k = 0u; k < {ntab}u; k++) {{ tab[k] = tab_buf[k]; }}\n"
          f"  sb = {'0u' if private else 'e * SCR'};\n}}\n"
          "fn env_out(e: u32) {" + ("\n  for (var k = 0u; k < SCR; k++) { scr_buf[e * SCR + k] = scr[k]; }\n"
                                     if private else "") + "}\n")


def lane_functions(lanes: int) -> str:
  """env_index and barrier() of kernels/xpbd_step.wgsl for this LANES. A barrier must sit in control flow that is
  uniform across the workgroup: with one env per workgroup the env index comes from workgroup_id, so the kernel's
  early return for envs past BATCH is uniform; with WORKGROUP envs per workgroup it is not, and barrier() is empty."""
  if lanes == 1:
    return "fn env_index(gid: vec3<u32>, wid: vec3<u32>) -> u32 { return gid.x; }\nfn barrier() {}\n"
  return ("fn env_index(gid: vec3<u32>, wid: vec3<u32>) -> u32 { return wid.x; }\n"
          "fn barrier() { storageBarrier(); workgroupBarrier(); }   // scr is storage, the state workgroup memory\n")


def tape_layout(model: Model, damping: bool, store: bool) -> dict[str, int]:
  """The backward kernel's constants (kernels/adjoint/xpbd_step.wgsl): GRAD_W, the gradient row per env (state
  NROWS x 13, controls NCTRL, parameters NPARAM), and the tape per env (TAPE floats): each substep's start state
  (TAPE_STATE_W: 13 per body, one per muscle), then from TAPE_ITER each Jacobi iteration's input (TAPE_ITER_W: 13
  per body, the joints' multipliers, and from TAPE_CLAM within it the contact slots' lambda_n, lambda_t), then from
  TAPE_DAMP the damping pass's input
  (13 per body), from TAPE_CVEL the contact velocity pass's input (13 per body), from TAPE_SLOTADJ the contact
  slots' adjoint (SLOTADJ_W per slot: kernels/adjoint/narrowphase.wgsl), and from TAPE_SLOTS the contact slots' rows
  as a substep leaves them (SLOT_W per slot, store mode only). store: keep the iterations', the velocity passes'
  inputs and the slots of every substep (TAPE_SUBSTEPS = SUBSTEPS), else of one substep, which the backward replays
  (TAPE_SUBSTEPS = 1)."""
  nb, nlam = 13 * model.nbody, max(model.njoint, 1) * max(NLAM.values())
  start = nb + packed.nmuscle(model)   # a substep's start: the bodies' state and the activations
  consts = contact_tables(model)[0]
  nslot = consts["NSLOT"]
  keep = model.substeps if store else 1
  it = nb + nlam + 2 * nslot
  out = dict(GRAD_W=13 * state_rows(model) + max(model.nact, 1) + param_layout(model)[1], TAPE_SUBSTEPS=keep,
             TAPE_STATE_W=start, TAPE_ITER=model.substeps * start, TAPE_ITER_W=it, TAPE_CLAM=nb + nlam,
             SLOTADJ_W=SLOTADJ_W)
  out["TAPE_DAMP"] = out["TAPE_ITER"] + keep * model.iterations * it
  out["TAPE_CVEL"] = out["TAPE_DAMP"] + (keep * nb if damping else 0)
  out["TAPE_SLOTADJ"] = out["TAPE_CVEL"] + (keep * nb if nslot else 0)
  out["TAPE_SLOTS"] = out["TAPE_SLOTADJ"] + SLOTADJ_W * nslot
  out["TAPE"] = out["TAPE_SLOTS"] + (keep * nslot * consts["SLOT_W"] if store else 0)
  return out


STORE_BUDGET = 1 << 28   # bytes: the most tape a backward launch may take in store mode


def store_mode(model: Model, batch: int, damping: bool) -> bool:
  """Whether the backward kernel keeps every substep's iterations (store) rather than replaying each substep: store
  wherever the batch's tape fits in STORE_BUDGET. It skips the replay, a forward pass: pendulum x4096 9.2 vs 11.5-17
  ms a step on lavapipe (bench/bench_grad.py backward_store/replay)."""
  return 4 * batch * tape_layout(model, damping, True)["TAPE"] <= STORE_BUDGET


@lru_cache(maxsize=None)
def pair_adjoints() -> dict[tuple[str, str], str]:
  """The pair kinds of oracle/collide NARROWPHASE whose pair function has its `<name>_adj` in kernels/adjoint/ (once
  per process, as _read: check_backward and backward_source ask at every step_vjp call)."""
  text = "".join(_read(f) for f in ADJOINT_FILES)
  return {k: fn.__name__ for k, (fn, _) in NARROWPHASE.items() if re.search(rf"\bfn {fn.__name__}_adj\(", text)}


def pair_contacts_adj(model: Model) -> str:
  """The dispatch over pair kinds for the narrowphase's adjoint, as collide_header's pair_contacts, with a case for
  each kind the scene's plan has (the others' adjoints, box_box_adj above all, are then dead code the compiler
  drops: lavapipe's compile of stack10's backward took minutes with them all). A kind without an adjoint returns
  zero gradients; check_backward keeps such scenes out."""
  adj = pair_adjoints()
  used = {(blk.type_a, blk.type_b) for blk in contacts.plan_blocks(model) if blk.pairs}
  cases = "\n".join(f"    case {k}u: {{ return {fn.__name__}_adj(a, b); }}" for k, (key, (fn, _))
                    in enumerate(NARROWPHASE.items()) if key in adj and key in used)
  return "\n".join(["fn pair_contacts_adj(kind: u32, a: Geom, b: Geom) -> GeomPairAdj {", "  switch kind {", cases,
                    "    default: {}", "  }", "  return GeomPairAdj(geom_adj_zero(), geom_adj_zero());", "}"]) + "\n"


def check_backward(model: Model) -> None:
  """An Unsupported error naming what the backward kernel cannot differentiate yet."""
  check_supported(model)
  why = []
  adj = pair_adjoints()
  missing = sorted({f"{blk.type_a}-{blk.type_b}" for blk in contacts.plan_blocks(model)
                    if blk.pairs and (blk.type_a, blk.type_b) not in adj})
  if missing: why.append(f"contacts between {', '.join(missing)} (their pair functions' adjoints)")
  if model.nbody == 0: why.append("no bodies")
  if why: raise Unsupported(f"{model.name}: the WGSL backward kernel does not differentiate {', '.join(why)} yet; "
                            "use the oracle backend for this scene's gradients")


def header(model: Model, batch: int, steps: int, damping: bool, lanes: int = 1, tape: dict | None = None) -> str:
  off, nparam = param_layout(model)
  order = [j for kind in CONSTRAINTS for j in model.joints_of_type(kind)]
  counts = joint_counts(model)
  def servo(kind): return [next((a for a, (t, jj) in enumerate(zip(model.act_type, model.act_joint))
                                 if t == kind and jj == j), -1) for j in range(model.njoint)]
  motors = [a for a, t in enumerate(model.act_type) if t == "motor"]
  mus = muscle.muscles(model)
  seg_ten, seg_a, seg_b = segments(model)
  lines = [f"const {k}: u32 = {v}u;" for k, v in dict(
    NMUSCLE=len(mus), NMUSCLE_ARR=max(len(mus), 1), MROWS=packed.muscle_rows(model), NROWS=state_rows(model),
    NSITE=model.nsite, NTENDON=model.ntendon, NTENDON_ARR=max(model.ntendon, 1), NSEG=len(seg_ten),
    NSEG_ARR=max(len(seg_ten), 1),
    NBODY=model.nbody, NJOINT=model.njoint, NBODY_ARR=max(model.nbody, 1), NJOINT_ARR=max(model.njoint, 1),
    LAMW=max(NLAM.values()), NLAM_ARR=max(model.njoint, 1) * max(NLAM.values()), NMOTOR=len(motors),
    NPARAM=nparam, NCTRL=max(model.nact, 1), BATCH=batch, NSTEPS=steps, SUBSTEPS=model.substeps,
    ITERATIONS=model.iterations, LANES=lanes, WORKGROUP=workgroup_size(lanes, batch),
    **{n.upper(): i for i, n in enumerate(JOINT_TYPES)},
    **{f"OFF_{n.upper()}": o for n, o in off.items()}).items()]
  lines += [f"const H: f32 = {_f(model.dt / model.substeps)};", f"const RELAXATION: f32 = {_f(model.relaxation)};",
            f"const EPS: f32 = {_f(EPS)};", f"const DAMPING: bool = {str(damping).lower()};",
            f"const MODEL_BATCHED: bool = {str(model_batch(model) > 1).lower()};",
            # a hinge position servo anywhere: the oracle then runs the servo stage of every hinge (oracle/actuators.py)
            f"const POS_SERVOS: bool = {str('position' in model.act_type).lower()};",
            _table("JNT_TYPE", "u32", [JOINT_TYPES.index(t) for t in model.jnt_type]),
            _table("JNT_PARENT", "i32", list(model.jnt_parent)), _table("JNT_CHILD", "i32", list(model.jnt_child)),
            _table("JOINT_ORDER", "u32", order),
            _table("COUNTS", "f32", [_f(n) for n in counts]), _table("JNT_POS_SERVO", "i32", servo("position")),
            _table("JNT_VEL_SERVO", "i32", servo("velocity")), _table("ACT_JOINT", "i32", list(model.act_joint)),
            _table("MOTORS", "u32", motors),
            _table("MUSCLES", "u32", list(mus)), _table("MUS_TENDON", "u32", [model.act_tendon[a] for a in mus]),
            _table("SITE_BODY", "i32", list(model.site_body)), _table("SEG_TENDON", "u32", list(seg_ten)),
            _table("SEG_A", "u32", list(seg_a)), _table("SEG_B", "u32", list(seg_b)),
            f"const DT: f32 = {_f(model.dt)};", f"const MARGIN: f32 = {_f(model.contact_margin)};",
            f"const CONTACT_BETA: f32 = {_f(model.contact_beta)};",
            *(f"const {n.upper()}_G: u32 = {i}u;" for i, n in enumerate(GEOM_TYPES)),
            *(f"const {k} = {v}u;" for k, v in contact_tables(model)[0].items())]
  # the forward's tape hooks (kernels/xpbd_step.wgsl substep) record nothing; the backward's record (tape_layout)
  hooks = ("fn tape_iteration(it: u32) {}\nfn tape_damping() {}\nfn tape_contact_velocity() {}\n" if tape is None else
           "".join(f"const {k}: u32 = {v}u;\n" for k, v in tape.items()))
  return "\n".join(lines) + "\n" + collide_header() + lane_functions(lanes) + env_buffers(model, lanes) + hooks


@lru_cache(maxsize=None)
def _read(name: str) -> str:
  with open(os.path.join(os.path.dirname(__file__), name)) as f: return f"// ---- {name} ----\n" + f.read()


def kernel_body() -> str:
  return "\n".join(_read(os.path.basename(path)) for path in SOURCES)


def adjoint_source(model: Model) -> str:
  """The backward program of `model` (one env): the step program, ADJOINT_FILES and BACKWARD_FILES, so the adjoints
  with the forward functions they differentiate. Add an entry point to run them (tests/test_parity_adjoint.py)."""
  return backward_source(model, 1, damping=False)


def backward_source(model: Model, batch: int, damping: bool | None = None, store: bool = False) -> str:
  """The backward kernel for `batch` envs of `model`: one env-step's adjoint, entry BACKWARD_ENTRY, one invocation
  per env in workgroups of workgroup_size(1, batch). Its buffers are the step's (outp: the (B, GRAD_W) gradients),
  then the output gradient (binding 7) and the tape (binding 8: (B, TAPE)); tape_layout(store) gives both widths."""
  check_backward(model)
  damping = has_damping(model) if damping is None else damping
  body = re.sub(r"^var<env>", "var<private>", kernel_body(), flags=re.M)
  tape = tape_layout(model, damping, store)
  return (f"// backward kernel generated for scene {model.name!r}\n" + header(model, batch, 1, damping, 1, tape) + body
          + "\n".join(_read(f) for f in ADJOINT_FILES + BACKWARD_FILES) + pair_contacts_adj(model))


def source(model: Model, batch: int, steps: int, damping: bool | None = None, lanes: int = 1) -> str:
  """The complete WGSL program for `batch` envs of `model`, advancing `steps` env-steps per launch. damping: whether
  the velocity pass runs (oracle.joint_damping.has_damping, which reads tensors: pass it in under a JIT capture). lanes:
  invocations per env (engine/wgsl.py picks them with default_lanes); launch the program on batch * lanes
  invocations in workgroups of workgroup_size(lanes, batch)."""
  check_supported(model)
  damping = has_damping(model) if damping is None else damping
  check_lanes(model, lanes)
  body = re.sub(r"^var<env>", "var<private>" if lanes == 1 else "var<workgroup>", kernel_body(), flags=re.M)
  head = f"// generated for scene {model.name!r}, {lanes} lane(s) per env\n"
  return head + header(model, batch, steps, damping, lanes) + body
