"""The backward kernel's tape (kernels/adjoint/xpbd_step.wgsl): its layout per env (tape_layout) and the choice
between keeping every substep's iterations and replaying each substep (store_mode)."""
from __future__ import annotations
import os
from kernels.layout import contact_tables, param_layout, state_rows
from oracle import packed
from oracle.armature import staged
from oracle.constraints import NLAM
from oracle.types import Model

SLOTADJ_W = 14   # a contact slot's adjoint floats on the tape (kernels/adjoint/narrowphase.wgsl SA_*)
# floats of an item's record per body side with LANES > 1 (kernels/adjoint/xpbd_step.wgsl put_rec): x 3, q 4, im 1,
# ii 3, and the stage's vector pair (D, TH or v, w) 6
REC_W = 17
# [floats] the longest tape an invocation keeps in private memory rather than in its env's row of a storage buffer.
# lavapipe checks the bounds of every storage access lane by lane, and a row per env strides the lanes' accesses by
# the tape's width (a GPU's loads then do not coalesce), while a private array is indexed here by the substep and
# iteration alone, the same in every lane. Backward alone, store mode, on lavapipe (min of 7, 20 steps; identical
# gradients, 2026-11-26): pendulum x4096 207 -> 141 ms (then 640 floats), chain x64 65 -> 59 (6,400), drop x64
# 12.2 -> 9.3 (768). On a GPU a private array this long lives in per-thread local memory (PRIVATE_TAPE_GPU below
# for what an H200 measured). A long private tape costs compile time instead:
# lavapipe's compile of chain's backward program (7,200 floats; batch 2, cold shader cache, GALLIVM_PERF=nopt,
# pipeline and first launch, 2026-11-28) takes 85 s with it private and 57 s in storage, planar_arm's (4,212 floats)
# pipeline 12.1 s against 5.4. TINYXPBD_PRIVATE_TAPE overrides the limit: `make test`, which compiles each program
# once and runs it for a few steps, sets 2048 (the Makefile's TESTENV); the gradients are the same either way
# (tests/test_grad_kernel.py test_parity_private_storage_tape)
PRIVATE_TAPE = int(os.environ.get("TINYXPBD_PRIVATE_TAPE", "8192"))
# [floats] the same limit on a GPU adapter (the smaller of the two applies). NVIDIA's Vulkan driver (580.159, H200,
# 2026-11-30) refuses a compute pipeline with too much private memory ("CreatePipeline: failed to validate local
# memory", VK_ERROR_UNKNOWN). bench/gpu_probe.py there, the backward programs' private arrays in bytes (vec3 and Quat
# padded to 16 and 32): accepted double_pendulum's 10.7 kB (its 1,440-float tape private) and chain's 12.0 kB (its
# tape in storage); refused chain's 40.8 kB (its 7,200-float tape private) and 23.3 kB (replay mode, 2,830 floats).
# Where both compile, private pays there for a short tape only: the backward kernel alone, x4096, 20 steps, one run
# each (bench_grad.py --quick), private against storage: pendulum (720 floats) 7.6 and 8.0 ms against 12.5,
# double_pendulum (1,440) 17.3 against 10.5. The limit lies between the two (not measured nearer).
PRIVATE_TAPE_GPU = 1024
# whether the adapter is a GPU: engine.wgsl.require_webgpu sets it once it has opened the device (the kernels do not
# query the device themselves)
GPU_ADAPTER = False


def private_tape_limit() -> int:
  """The longest tape an invocation keeps in private memory on this adapter (PRIVATE_TAPE, PRIVATE_TAPE_GPU)."""
  return min(PRIVATE_TAPE, PRIVATE_TAPE_GPU) if GPU_ADAPTER else PRIVATE_TAPE


def tape_layout(model: Model, damping: bool, store: bool, lanes: int = 1) -> dict[str, int]:
  """The backward kernel's constants (kernels/adjoint/xpbd_step.wgsl): GRAD_W, the gradient row per env (state
  NROWS x 13, controls NCTRL, parameters NPARAM), and the tape per env (TAPE floats): each substep's start state
  (TAPE_STATE_W: 13 per body, one per muscle), then from TAPE_ITER each of a substep's TAPE_ITERS Jacobi iterations'
  inputs (the armature stage's contact pass the last; TAPE_ITER_W: 13
  per body, the joints' multipliers, from TAPE_CLAM within it the contact slots' lambda_n, lambda_t, and from
  TAPE_SOLVE the iteration's averaged rotation correction and scale per body, 4 floats), then from TAPE_DAMP the
  damping pass's input (13 per body), from TAPE_CVEL the contact velocity pass's input (13 per body), from
  TAPE_ARM the armature stage's input (19 per body: the pose, D, TH, v and w; models with armature or stiffness), from
  TAPE_SLOTADJ the contact slots' adjoint (SLOTADJ_W per slot: kernels/adjoint/narrowphase.wgsl), and from
  TAPE_SLOTS the contact slots' rows as a substep leaves them (SLOT_W per slot, store mode only). TAPE_STRIDE: the
  floats between two envs' rows in the tape's storage buffer, 0 where the tape is private to the invocation
  (private_tape_limit). store: keep the iterations', the velocity passes' inputs and the slots of every substep
  (TAPE_SUBSTEPS = SUBSTEPS), else of one substep, which the backward replays (TAPE_SUBSTEPS = 1).
  lanes > 1 (the env's lanes share the tape: a storage row always) adds from TAPE_REC the items' records, 2 REC_W
  per joint and per contact slot or pair (the larger), which each body's lane gathers, and from TAPE_GPRM each lane's
  partial sums of the control and parameter gradients (GPRM_W = NCTRL + NPARAM floats a lane)."""
  nb, nlam = 13 * model.nbody, max(model.njoint, 1) * max(NLAM.values())
  start = nb + packed.nmuscle(model)   # a substep's start: the bodies' state and the activations
  consts = contact_tables(model)[0]
  nslot = consts["NSLOT"]
  keep = model.substeps if store else 1
  it = nb + nlam + 2 * nslot + 4 * model.nbody
  # and where the armature stage runs in a scene with contacts, their last pass after it (kernels/xpbd_step.wgsl)
  iters = model.iterations + int(staged(model) and nslot > 0)
  out = dict(GRAD_W=13 * state_rows(model) + max(model.nact, 1) + param_layout(model)[1], TAPE_SUBSTEPS=keep,
             TAPE_STATE_W=start, TAPE_ITER=model.substeps * start, TAPE_ITER_W=it, TAPE_ITERS=iters,
             TAPE_CLAM=nb + nlam, TAPE_SOLVE=nb + nlam + 2 * nslot, SLOTADJ_W=SLOTADJ_W)
  out["TAPE_DAMP"] = out["TAPE_ITER"] + keep * iters * it
  out["TAPE_CVEL"] = out["TAPE_DAMP"] + (keep * nb if damping else 0)
  out["TAPE_ARM"] = out["TAPE_CVEL"] + (keep * nb if nslot else 0)
  out["TAPE_SLOTADJ"] = out["TAPE_ARM"] + (keep * 19 * model.nbody if staged(model) else 0)
  out["TAPE_SLOTS"] = out["TAPE_SLOTADJ"] + SLOTADJ_W * nslot
  out["TAPE"] = out["TAPE_SLOTS"] + (keep * nslot * consts["SLOT_W"] if store else 0)
  out["TAPE_REC"] = out["TAPE_GPRM"] = out["TAPE"]   # (unused with one lane)
  out["REC_W"], out["GPRM_W"] = REC_W, max(model.nact, 1) + param_layout(model)[1]
  if lanes > 1:
    out["TAPE_GPRM"] = out["TAPE_REC"] + 2 * REC_W * (model.njoint + max(nslot, consts["NPAIR"]))
    out["TAPE"] = out["TAPE_GPRM"] + lanes * out["GPRM_W"]
  out["TAPE_STRIDE"] = 0 if out["TAPE"] <= private_tape_limit() and lanes == 1 else out["TAPE"]
  return out


def tape_declaration(layout: dict[str, int]) -> str:
  """The WGSL declaration of the tape (kernels/adjoint/xpbd_step.wgsl): private, or binding 8 (B, TAPE_STRIDE)."""
  if layout["TAPE_STRIDE"] == 0: return "var<private> tape: array<f32, TAPE>;\n"
  return "@group(0) @binding(8) var<storage, read_write> tape : array<f32>;\n"


def tape_buffer(layout: dict[str, int], batch: int) -> tuple[int, int]:
  """The shape of the tape's storage buffer (binding 8): a float per env where the tape is private (unused)."""
  return batch, max(layout["TAPE_STRIDE"], 1)


STORE_BUDGET = 1 << 28   # bytes: the most tape storage buffer a backward launch may take in store mode


def store_mode(model: Model, batch: int, damping: bool, lanes: int = 1) -> bool:
  """Whether the backward kernel keeps every substep's iterations (store) rather than replaying each substep: store
  wherever its tape is private, or the batch's tape buffer fits in STORE_BUDGET. It skips the replay, a forward pass:
  backward alone on lavapipe, store vs replay (bench/bench_grad.py, 2026-11-26): pendulum x4096 600k vs 392k
  env-steps/s, chain x64 20.7k vs 13.1k, stack10 x64 1.98k vs 1.81k."""
  layout = tape_layout(model, damping, True, lanes)
  return layout["TAPE_STRIDE"] == 0 or 4 * batch * layout["TAPE"] <= STORE_BUDGET
