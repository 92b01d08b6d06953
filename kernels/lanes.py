"""How envs map onto invocations (kernels/xpbd_step.wgsl LANES): the lanes per env a scene and batch get
(default_lanes, check_lanes), the workgroup size, and the generated env_index, barrier and per-env buffer
declarations the kernel's source needs for that choice (lane_functions, env_buffers). docs/wgsl.md (Speed) has the
measurements behind the constants.
"""
from __future__ import annotations
from kernels.layout import adjoint_bytes, contact_tables, state_bytes
from oracle.types import Model

WORKGROUP = 64   # most invocations (envs) per workgroup when LANES == 1 (workgroup_size)
MIN_WORKGROUPS = 16   # workgroups a one-lane launch spans at least, down to SIMD_ENVS envs each: one per thread of a
                      # 16-core CPU (lavapipe runs a workgroup on one thread)
SIMD_ENVS = 8    # envs per SIMD instruction on lavapipe (8 float32 lanes of AVX2)
MAX_LANES = 256  # WebGPU's default maxComputeInvocationsPerWorkgroup
MAX_WORKGROUPS = 65535   # per dispatch dimension (WebGPU's maxComputeWorkgroupsPerDimension default)
# WebGPU's default maxComputeWorkgroupStorageSize [bytes]: with LANES > 1 the env's working state (state_bytes) lives in
# workgroup memory and must fit
WORKGROUP_BYTES = 16384
# envs from which one lane per env beats 32 on a CPU adapter (lavapipe: a workgroup runs on one thread, its
# invocations 8 to a SIMD instruction). stack10 on lavapipe, 32 lanes vs 1: x1 1.5-2x as fast, x2 1.2x, x4 0.6-0.7x,
# x64 0.45-0.5x
CPU_ONE_LANE_BATCH = 4
# [floats] the largest scratch row a one-lane env keeps in private memory (env_buffers): lavapipe's compile time
# grows with it (stack10's 8,609 floats: 19 -> 58 s for a 14 % faster step), while the ant's 1,436 compile as fast
PRIVATE_SCRATCH = 2048
# [floats] the longest parameter-gradient row the backward kernel sums in private memory (kernels/adjoint/xpbd_step.wgsl
# gprm): pendulum (59 floats) x4096 on lavapipe 1.26x as fast a backward; chain's 455 not measurably
PRIVATE_PARAMS = 512
# [ints] the longest contact tables (`tab`) the forward program reads from their storage buffer rather than from a
# private copy per env (env_buffers). Forward step program on lavapipe, storage against the copy, median env-steps/s
# (2026-11-30, bench/README.md): at one env-step a launch, the RL env's, pendulum x4096 (30 ints) +6 to +10 %, drop
# x256 (44) +28 %, chain x64 (66) +14 %, cradle x64 (128) +43 %, the ant x256 (213) +5 %; at 10 a launch +2 to +20 %.
# stack10 x64 (523) ran 4 % slower at 10 a launch and its trajectory 5 %: its copy is cheap beside its step, and a
# storage load at an index that differs across envs (a slot's kind) costs a bounds check per lane
STORAGE_TABLES = 256


def default_lanes(model: Model, batch: int, cpu: bool) -> int:
  """Invocations per env (kernels/xpbd_step.wgsl LANES) for `batch` envs of this scene on a CPU (lavapipe) or GPU
  adapter; docs/wgsl.md (Speed) has the measurements. One lane per env where an env has little to share (no contact
  slots: a joint scene's items are a few bodies and joints; chain x64 on lavapipe runs 2.8x faster on one lane than
  on 16), and on a CPU from CPU_ONE_LANE_BATCH envs, where 8 envs per SIMD instruction beat 8 items of one env.
  Otherwise 32, the better of 32 and 64 on lavapipe and a GPU's warp: stack10's 260 contact slots then run 9 per
  lane instead of 260 in one thread, and 64 envs occupy 64 workgroups instead of one (GPU speed not measured yet).
  Also 1 where one env's state overflows workgroup memory, or there are more envs than workgroups in a dispatch."""
  if contact_tables(model)[0]["NSLOT"] == 0 or not lanes_fit(model) or batch > MAX_WORKGROUPS: return 1
  return 1 if cpu and batch >= CPU_ONE_LANE_BATCH else 32


def shared_bytes(model: Model, backward: bool = False) -> int:
  """Bytes of workgroup memory an env takes with LANES > 1: its working state, and the backward's adjoint state."""
  return state_bytes(model) + (adjoint_bytes(model) if backward else 0)


def lanes_fit(model: Model, backward: bool = False) -> bool:
  """Whether the env's shared state (shared_bytes) fits workgroup memory, as LANES > 1 needs."""
  return shared_bytes(model, backward) <= WORKGROUP_BYTES


def check_lanes(model: Model, lanes: int, backward: bool = False) -> None:
  """lanes in range, and the env's shared state (shared_bytes) within workgroup memory."""
  if not 1 <= lanes <= MAX_LANES: raise ValueError(f"lanes={lanes}: expected 1 .. {MAX_LANES}")
  if lanes > 1 and not lanes_fit(model, backward):
    raise ValueError(f"{model.name}: lanes={lanes} keeps the env's {'adjoint ' if backward else ''}state in workgroup "
                     f"memory, {shared_bytes(model, backward)} bytes > WebGPU's {WORKGROUP_BYTES}; use lanes=1")


def workgroup_size(lanes: int, batch: int) -> int:
  """Invocations per workgroup: one env of `lanes` lanes, or with one lane per env up to WORKGROUP envs, fewer for a
  small batch so that it still spans MIN_WORKGROUPS workgroups (never under SIMD_ENVS). lavapipe runs a workgroup on
  one thread: stack10 x64 in one workgroup of 64 kept one of this machine's 2 cores idle, and ran 1.8x as fast in 8
  workgroups of 8 (5.3k -> 9.7k env-steps/s, S=10 K=1); drop x256 and pendulum x4096 are unchanged within noise
  (docs/wgsl.md, Speed). A GPU spreads workgroups over its multiprocessors the same way."""
  if lanes > 1: return lanes
  per_group = -(-batch // MIN_WORKGROUPS)
  return min(WORKGROUP, max(SIMD_ENVS, -(-per_group // SIMD_ENVS) * SIMD_ENVS))


def env_buffers(model: Model, lanes: int, backward: bool = False) -> str:
  """The declarations of kernels/xpbd_step.wgsl's parameters `prm`, tables `tab` and scratch `scr`, with env_in(e)
  (sets the env's rows sb and mb) and env_out(e). With LANES > 1 they are the storage buffers. With one lane per env,
  env_in copies the env's parameter row and the tables into private arrays, and the scratch row is private too when
  it has at most PRIVATE_SCRATCH floats (env_out writes it back for the host: the overflow count, engine.wgsl's
  contact_set): lavapipe checks the bounds of every storage access lane by lane (eight compares, branches and scalar
  loads per SIMD load where the index differs across envs, as a slot's or a body's index read from the scratch
  does), and a private array needs none. The ant x256 on lavapipe: 3.98 -> 3.25 ms a step (docs/wgsl.md, Speed).
  The forward program (backward False) reads tables of at most STORAGE_TABLES ints from storage instead: their copy
  is repeated at every launch, and every env reads a table at the same index more often than not. The backward keeps
  the copy: its launch runs a whole horizon, and its programs compiled up to a quarter slower with the tables in
  storage (armed_lander's, 32 -> 39 s) for no measured gain."""
  storage = ("@group(0) @binding(3) var<storage, read_write> {p} : array<f32>;\n"
             "@group(0) @binding(5) var<storage, read_write> {t} : array<i32>;\n"
             "@group(0) @binding(6) var<storage, read_write> {s} : array<f32>;\n")
  rows = "  mb = select(0u, e, MODEL_BATCHED) * NPARAM;\n"
  if lanes > 1:
    return (storage.format(p="prm", t="tab", s="scr") + f"fn env_in(e: u32) {{\n  sb = e * SCR;\n{rows}}}\n"
            "fn env_out(e: u32) {}\n")
  consts, flat = contact_tables(model)
  ntab, private = max(len(flat), 1), consts["SCR"] <= PRIVATE_SCRATCH
  copy = backward or ntab > STORAGE_TABLES   # the tables into a private array
  return (storage.format(p="prm_buf", t="tab_buf" if copy else "tab", s="scr_buf" if private else "scr") +
          "var<private> prm: array<f32, NPARAM>;\n" + (f"var<private> tab: array<i32, {ntab}>;\n" if copy else "") +
          ("var<private> scr: array<f32, SCR>;\n" if private else "") +
          f"fn env_in(e: u32) {{\n{rows}  for (var k = 0u; k < NPARAM; k++) {{ prm[k] = prm_buf[mb + k]; }}\n"
          "  mb = 0u;\n" +
          (f"  for (var k = 0u; k < {ntab}u; k++) {{ tab[k] = tab_buf[k]; }}\n" if copy else "") +
          f"  sb = {'0u' if private else 'e * SCR'};\n}}\n"
          "fn env_out(e: u32) {" + ("\n  for (var k = 0u; k < SCR; k++) { scr_buf[e * SCR + k] = scr[k]; }\n"
                                     if private else "") + "}\n")


def lane_functions(lanes: int) -> str:
  """env_index, barrier(), `lane` and set_lane(lid) of kernels/xpbd_step.wgsl for this LANES. A barrier must sit in
  control flow that is uniform across the workgroup: with one env per workgroup the env index comes from
  workgroup_id, so the kernel's early return for envs past BATCH is uniform; with WORKGROUP envs per workgroup it is
  not, and barrier() is empty.

  With one lane, `lane` is the constant 0 rather than a private variable the entry point sets. Every per-body,
  per-joint and per-muscle loop starts at `lane` (`for (var k = lane; k < NBODY; k += LANES)`), so with a constant
  start the compiler knows their trip counts and may unroll them, folding the indices into the private arrays (the
  working state, the backward's adjoint state and its parameter-gradient sums gprm) to constants. A private array
  indexed at run time lowers on lavapipe to a compare-and-select over all its elements per access (PRIVATE_PARAMS
  above). Pendulum x4096 on lavapipe, 10 env-steps, kernels alone (2026-11-30): forward 23.8 -> 12.7 ms,
  backward 81.2 -> 48.9 ms, bit-identical results (bench/README.md)."""
  if lanes == 1:
    return ("fn env_index(gid: vec3<u32>, wid: vec3<u32>) -> u32 { return gid.x; }\nfn barrier() {}\n"
            "const lane = 0u;\nfn set_lane(lid: vec3<u32>) {}\n")
  return ("fn env_index(gid: vec3<u32>, wid: vec3<u32>) -> u32 { return wid.x; }\n"
          "fn barrier() { storageBarrier(); workgroupBarrier(); }   // scr is storage, the state workgroup memory\n"
          "var<private> lane: u32;\nfn set_lane(lid: vec3<u32>) { lane = lid.x % LANES; }\n")
