"""The bridge between tinygrad 0.14 and the hand-written WGSL step kernel (DESIGN.md sec. 6).

Everything that touches tinygrad's alpha custom-kernel API or its WebGPU runtime lives in this file:
- `step(model, packed, ctrl, steps)`: a lazy Tensor op that runs the step kernel (kernels/xpbd_step.wgsl and the
  files kernels/program.py joins to it) on tinygrad's WEBGPU device via `Tensor.custom_kernel`, so it composes with
  TinyJit and other tensor ops and rollouts stay on the device;
- a per-program pipeline cache: stock tinygrad builds the bind group layout, pipeline layout and compute pipeline on
  every launch (~1-2 ms on lavapipe, a shader compile on some drivers);
- `CHECK`: when true (the tests set it), every launch runs inside a WebGPU validation error scope and raises on an
  error, and outputs are poisoned with NaN before the launch. Dawn's dispatch-time validation errors are otherwise
  silent: the output would keep whatever the buffer held.
- `LANES`: invocations per env for every step launch (None: kernels.lanes.default_lanes per scene, batch and
  adapter; the tests and the bench force 1 or more to compare layouts). Environment variable TINYXPBD_WGSL_LANES.
"""
from __future__ import annotations
import os
import warnings
from collections import OrderedDict
from functools import lru_cache
from tinygrad import Device, Tensor, dtypes
from tinygrad.uop.ops import KernelInfo, Ops, ProgramInfo, UOp
from kernels.lanes import MAX_WORKGROUPS, WORKGROUP, default_lanes, workgroup_size
from kernels.layout import check_supported, contact_tables, model_batch, pack_params, state_rows
from kernels.program import source
from oracle.types import Model

CHECK = os.environ.get("TINYXPBD_WGSL_CHECK", "0") == "1"
LANES: int | None = int(os.environ.get("TINYXPBD_WGSL_LANES", "0")) or None
ENTRY = "xpbd_step"


class WebGPUUnavailable(RuntimeError):
  pass


NEEDS = ("It needs Dawn (pip install dawn-python; `make setup` does this and sets WEBGPU_PATH to its libwebgpu_dawn) "
         "and a Vulkan adapter: a GPU driver, or Mesa's CPU driver lavapipe (Debian/Ubuntu: apt-get install "
         "mesa-vulkan-drivers libvulkan1).")


def require_webgpu() -> None:
  """Open tinygrad's WEBGPU device, or raise WebGPUUnavailable saying how to get one."""
  from tinygrad.runtime.autogen import webgpu as wg
  try:
    Device["WEBGPU"]
  except Exception as e:  # noqa: BLE001 (tinygrad raises several kinds: missing library, no adapter)
    raise WebGPUUnavailable(f"the wgsl backend needs tinygrad's WEBGPU device, which failed to open "
                            f"({type(e).__name__}: {e}). {NEEDS}") from None
  # Dawn without a Vulkan driver (no vulkan loader ICD, e.g. VK_ICD_FILENAMES pointing nowhere) opens its Null
  # adapter, which runs no kernel: every output would keep whatever its buffer held (the parity table read 1e38)
  info = _device_adapter_info()
  if info.backendType == wg.WGPUBackendType_Null:
    raise WebGPUUnavailable(f"the wgsl backend needs a WebGPU adapter; Dawn found none but its Null adapter, which "
                            f"runs no kernels. {NEEDS}")
  _install_pipeline_cache()
  _install_transfer()
  import kernels.tape   # the backward's private-tape limit depends on the adapter's kind (kernels/tape.py)
  kernels.tape.GPU_ADAPTER = info.adapterType != wg.WGPUAdapterType_CPU


def _install_transfer() -> None:
  """A copy between two WEBGPU buffers as a copy command on the device's queue (tinygrad's allocator has none, so its
  copies, engine/buffers.py copy_of's among them, read the source back to the host: a wait for the queue)."""
  from tinygrad.runtime import ops_webgpu as w
  if hasattr(w.WebGpuAllocator, "_transfer"): return
  wg = w.webgpu

  def transfer(self, dest, src, sz: int, src_dev, dest_dev):
    dev = self.dev
    enc = wg.wgpuDeviceCreateCommandEncoder(dev.device_res, wg.WGPUCommandEncoderDescriptor())
    wg.wgpuCommandEncoderCopyBufferToBuffer(enc, src, 0, dest, 0, (sz + 3) // 4 * 4)   # buffers are 4-byte padded
    cmd = wg.wgpuCommandEncoderFinish(enc, wg.WGPUCommandBufferDescriptor())
    wg.wgpuQueueSubmit(dev.queue, 1, (wg.WGPUCommandBuffer * 1)(cmd))
    wg.wgpuCommandEncoderRelease(enc)
    wg.wgpuCommandBufferRelease(cmd)

  w.WebGpuAllocator._transfer = transfer


def _device_adapter_info():
  from tinygrad.runtime.autogen import webgpu as wg
  info = wg.WGPUAdapterInfo()
  wg.wgpuDeviceGetAdapterInfo(Device["WEBGPU"].device_res, info)
  return info


def _adapter_info():
  require_webgpu()
  return _device_adapter_info()


def adapter() -> str:
  """The WEBGPU device's adapter as Dawn describes it, e.g. 'llvmpipe (LLVM 15.0.6, 256 bits): llvmpipe: Mesa 22.3.6
  (LLVM 15.0.6) 0.0.1' (for bench records and for the driver check below)."""
  import ctypes
  info = _adapter_info()
  def text(v): return ctypes.string_at(v.data, v.length).decode(errors="replace") if v.data and v.length else ""
  return f"{text(info.device)}: {text(info.description)}"


@lru_cache(maxsize=None)
def cpu_adapter() -> bool:
  """Whether the adapter is a CPU (lavapipe), which favours one lane per env (kernels.lanes.default_lanes)."""
  from tinygrad.runtime.autogen import webgpu as wg
  return _adapter_info().adapterType == wg.WGPUAdapterType_CPU


def mesa_version() -> tuple[int, int] | None:
  """(major, minor) of the Mesa driver behind the adapter (lavapipe on a CPU machine), None for other drivers."""
  import re
  m = re.search(r"Mesa (\d+)\.(\d+)", adapter())
  return (int(m.group(1)), int(m.group(2))) if m else None


# lavapipe before this Mesa miscompiles the step kernel for scenes with many box-box contact slots (stack10, pile:
# a loop over 8 bodies ran once; velocities off by up to 2 rad/s). Measured bad: 22.3.6 (Debian 12); measured good:
# 25.0.7 (bookworm-backports, same LLVM 15.0.6), and the NVIDIA H100 driver. .ci/sysdeps installs a good one.
MESA_GOOD = (25, 0)
MISCOMPILE_SLOTS = 64   # contact slots above which check_model warns (the scenes that pass on 22.3 have <= 15)


def known_miscompile() -> str | None:
  """Why this adapter is known to run the kernel wrongly for contact-heavy scenes, or None."""
  v = mesa_version()
  if v is not None and v < MESA_GOOD:
    return (f"Mesa {v[0]}.{v[1]} lavapipe miscompiles the step kernel for contact-heavy scenes; Mesa >= "
            f"{MESA_GOOD[0]}.{MESA_GOOD[1]} runs it right (Debian 12: mesa-vulkan-drivers from bookworm-backports, "
            "which .ci/sysdeps installs as root)")
  return None


# --- the pipeline cache ---

# per (program text, entry point, storage buffers): the shader module, and its bind group layout, pipeline layout and
# compute pipeline. tinygrad makes a new WebGPUProgram for the same text whenever its own caches miss (a kernel
# launched outside a TinyJit, a second Simulator of one scene and batch, a test's fresh capture), and each would parse
# the text again (Tint: 0.2-0.6 s for a backward program) and build its pipeline again: lavapipe runs its NIR passes
# at every pipeline creation, and LLVM too unless Mesa's disk cache has the shader (backward programs' first
# step_vjp in a new process, GALLIVM_PERF=nopt, 2026-11-26: stack10 x1 62 s with the cache off, 2.7 s on a hit;
# cradle x2 44 s and 5.3 s; chain x1 12 s either way).
_MODULES: dict = {}
_PIPELINES: dict = {}


class ProgramRefused(RuntimeError):
  """A WebGPU driver refused to build a compute pipeline from a program that parsed."""


def _refused(program, e: Exception) -> str:
  """What ProgramRefused says: the program (its first line names the scene), the driver and its error, and what to
  change. NVIDIA's driver refused chain's backward for its private memory (kernels/tape.py PRIVATE_TAPE_GPU)."""
  text = program[0] if program else b""
  text = text.decode(errors="replace") if isinstance(text, (bytes, bytearray)) else str(text)
  # tinygrad puts its prelude before the program; the program's own first line is a comment naming its scene
  head = next((f" ({line.lstrip('/ ')})" for line in text.splitlines() if line.startswith("//")), "")
  entry = program[1] if program else "a program"
  return (f"the WebGPU driver ({adapter()}) refused the pipeline of {entry}{head}: {str(e).strip().splitlines()[0]}. "
          "A GPU driver limits a program's private memory: TINYXPBD_PRIVATE_TAPE=0 moves the backward kernel's tape "
          "to storage, and bench/gpu_probe.py finds what a driver accepts")


def _install_pipeline_cache() -> None:
  from tinygrad.runtime import ops_webgpu as w
  if getattr(w.WebGPUProgram, "_tinyxpbd_cached", False): return
  wg, stock, stock_init = w.webgpu, w.WebGPUProgram.__call__, w.WebGPUProgram.__init__

  def init(self, dev, obj):
    self._tinyxpbd_key = (obj.lib, obj.name)
    if self._tinyxpbd_key not in _MODULES:
      stock_init(self, dev, obj)
      _MODULES[self._tinyxpbd_key] = self.prg
    self.dev, self.name, self.prg = dev, w.to_wgpu_str(obj.name), _MODULES[self._tinyxpbd_key]
    wg.wgpuShaderModuleAddRef(self.prg)   # the cache's reference: each program's __del__ releases its own

  def call(self, *bufs, global_size=(1, 1, 1), local_size=(1, 1, 1), vals=(), wait=False, **kw):
    if wait or vals:  # timing queries and scalar uniforms: tinygrad's own path
      return stock(self, *bufs, global_size=global_size, local_size=local_size, vals=vals, wait=wait, **kw)
    dev = self.dev
    key = len(bufs)
    # a program made before this patch (none in the engine: require_webgpu installs it first) keeps its own
    program = getattr(self, "_tinyxpbd_key", None)
    cache = _PIPELINES.setdefault(program, {}) if program else self.__dict__.setdefault("_pipelines", {})
    if key not in cache:
      def entry(n, ty): return wg.WGPUBindGroupLayoutEntry(binding=n, visibility=wg.WGPUShaderStage_Compute,
                                                           buffer=wg.WGPUBufferBindingLayout(type=ty))
      storage = (entry(i + 1, wg.WGPUBufferBindingType_Storage) for i in range(key))
      entries = (wg.WGPUBindGroupLayoutEntry * (1 + key))(entry(0, wg.WGPUBufferBindingType_Uniform), *storage)
      wg.wgpuDevicePushErrorScope(dev.device_res, wg.WGPUErrorFilter_Validation)
      layout = wg.wgpuDeviceCreateBindGroupLayout(dev.device_res, wg.WGPUBindGroupLayoutDescriptor(entryCount=1 + key,
                                                                                                    entries=entries))
      playout = wg.wgpuDeviceCreatePipelineLayout(dev.device_res, wg.WGPUPipelineLayoutDescriptor(
        bindGroupLayoutCount=1, bindGroupLayouts=(wg.WGPUBindGroupLayout * 1)(layout)))
      if err := dev.pop_error(): raise RuntimeError(f"WebGPU pipeline layout: {err}")
      try:
        pipeline = w.DeviceCreateComputePipeline(dev.device_res, wg.WGPUComputePipelineDescriptor(
          layout=playout, compute=wg.WGPUComputeState(module=self.prg, entryPoint=self.name)))
      except RuntimeError as e:
        raise ProgramRefused(_refused(program, e)) from None
      if not hasattr(dev, "_tinyxpbd_inf"): dev._tinyxpbd_inf = dev.create_uniform(float("inf"))
      cache[key] = (layout, playout, pipeline)
    layout, _, pipeline = cache[key]
    def bg(n, buf): return wg.WGPUBindGroupEntry(binding=n, buffer=buf, offset=0, size=wg.wgpuBufferGetSize(buf))
    binds = (wg.WGPUBindGroupEntry * (1 + key))(bg(0, dev._tinyxpbd_inf), *(bg(i + 1, b) for i, b in enumerate(bufs)))
    if CHECK: wg.wgpuDevicePushErrorScope(dev.device_res, wg.WGPUErrorFilter_Validation)
    group = wg.wgpuDeviceCreateBindGroup(dev.device_res, wg.WGPUBindGroupDescriptor(layout=layout, entryCount=1 + key,
                                                                                    entries=binds))
    enc = wg.wgpuDeviceCreateCommandEncoder(dev.device_res, wg.WGPUCommandEncoderDescriptor())
    cpass = wg.wgpuCommandEncoderBeginComputePass(enc, wg.WGPUComputePassDescriptor())
    wg.wgpuComputePassEncoderSetPipeline(cpass, pipeline)
    wg.wgpuComputePassEncoderSetBindGroup(cpass, 0, group, 0, None)
    wg.wgpuComputePassEncoderDispatchWorkgroups(cpass, *global_size)
    wg.wgpuComputePassEncoderEnd(cpass)
    cmd = wg.wgpuCommandEncoderFinish(enc, wg.WGPUCommandBufferDescriptor())
    wg.wgpuQueueSubmit(dev.queue, 1, (wg.WGPUCommandBuffer * 1)(cmd))
    for release, obj in ((wg.wgpuBindGroupRelease, group), (wg.wgpuCommandEncoderRelease, enc),
                         (wg.wgpuComputePassEncoderRelease, cpass), (wg.wgpuCommandBufferRelease, cmd)): release(obj)
    if CHECK and (err := dev.pop_error()): raise RuntimeError(f"WebGPU dispatch of {self.name}: {err}")
    return None

  w.WebGPUProgram.__init__, w.WebGPUProgram.__call__, w.WebGPUProgram._tinyxpbd_cached = init, call, True


# --- the step as a custom kernel ---

def _program(src: str, entry: str, threads: int, workgroup: int, nargs: int, outs: tuple[int, ...] = (0,)):
  groups = (threads + workgroup - 1) // workgroup
  if groups > MAX_WORKGROUPS:
    raise ValueError(f"{threads} invocations in workgroups of {workgroup}: at most {MAX_WORKGROUPS} workgroups per "
                     "launch")
  def fxn(*params):
    sink = UOp.sink(*params, arg=KernelInfo(name=entry))
    return UOp(Ops.PROGRAM, src=(sink, UOp(Ops.LINEAR, src=params), UOp(Ops.SOURCE, arg=src)),
               arg=ProgramInfo(name=entry, global_size=(groups, 1, 1), local_size=(workgroup, 1, 1),
                               globals=tuple(range(nargs)), outs=outs,
                               ins=tuple(i for i in range(nargs) if i not in outs)))
  return fxn


def launch(src: str, entry: str, out_shape: tuple[int, ...], *ins: Tensor, threads: int,
           scratch: tuple[int, ...] | None = None, workgroup: int = WORKGROUP,
           grad_fxn=None) -> Tensor | tuple[Tensor, Tensor]:
  """Run WGSL `src`'s entry point (declared @workgroup_size(workgroup)) on `threads` invocations as a lazy tensor op:
  binding 1 is a fresh float32 output of out_shape (NaN-filled when CHECK), bindings 2.. the inputs `ins`, then, if
  `scratch` is a shape, a float32 scratch buffer the kernel writes and reads (at most 10 storage buffers in all:
  Dawn's limit). Returns the output, and the scratch buffer as the kernel left it when there is one.
  grad_fxn(grad_out, call): the backward, tinygrad's custom-kernel hook (one gradient UOp or None per argument of
  `call`: out, ins, scratch). Realise the two together (Tensor.realize(out, scratch)): each realize that reaches the
  kernel launches it, so realising them one at a time runs it twice (engine/stepping.py runner did until
  2026-11-24)."""
  extra = () if scratch is None else (Tensor.empty(*scratch, device="WEBGPU"),)
  if len(ins) + len(extra) > 9: raise ValueError(f"{len(ins) + len(extra) + 1} buffers: at most 10 per kernel")
  out = (Tensor.full(out_shape, float("nan"), device="WEBGPU") if CHECK else Tensor.empty(*out_shape, device="WEBGPU"))
  args = (out.contiguous(), *(t.contiguous() for t in ins), *extra)
  outs = (0,) + ((len(args) - 1,) if extra else ())
  res = Tensor.custom_kernel(*args, fxn=_program(src, entry, threads, workgroup, len(args), outs), grad_fxn=grad_fxn)
  return res[0] if scratch is None else (res[0], res[-1])


_PARAMS: dict = {}


def params(model: Model) -> Tensor:
  """The model's packed parameter buffer: built once per Model object when its parameters are shared by every env,
  lazily per call when they carry a batch axis (domain randomisation redraws them at reset)."""
  if model_batch(model) > 1: return pack_params(model)
  key = id(model)
  if key not in _PARAMS or _PARAMS[key][0] is not model: _PARAMS[key] = (model, pack_params(model).realize())
  return _PARAMS[key][1]


_IDLE: dict = {}


def idle_ctrl(batch: int) -> Tensor:
  """A (batch, 1) zero control buffer for a model without actuators (the kernel binds one, and never reads it), built
  once per batch size."""
  if batch not in _IDLE: _IDLE[batch] = Tensor.zeros(batch, 1, device="WEBGPU").contiguous().realize()
  return _IDLE[batch]


def prepare(model: Model) -> None:
  """Build the model's parameter buffer and its tables now (the idle control buffer: idle_ctrl). Call it before a
  TinyJit captures the step: what the capture builds, it rebuilds at every replay (three small kernels and a copy per
  launch, ~0.6 ms each on lavapipe; tests/test_wgsl_bridge.py counts the launches)."""
  params(model)
  tables(model)


_TABLES: dict = {}


def tables(model: Model) -> tuple[Tensor, dict[str, int]]:
  """The scene's static contact tables as an int32 buffer on WEBGPU (built once per topology), and the header's
  constants (kernels.layout.contact_tables: SCR floats of scratch per env, the overflow count at OVF)."""
  consts, flat = contact_tables(model)
  key = tuple(flat)
  if key not in _TABLES: _TABLES[key] = Tensor(flat or [0], dtype=dtypes.int32, device="WEBGPU").realize()
  return _TABLES[key], consts


_TEXTS: OrderedDict = OrderedDict()
# programs' texts remembered: a Model per env-step (an env's randomised parameters make one) must not grow it
TEXTS_KEPT = 64


def program_text(make, model: Model, *args) -> str:
  """kernels.program's `make` (source, backward_source) for this Model object and arguments, generated once: a few ms
  of Python per launch otherwise (chain's backward text 3 ms, its step's 4 ms), paid at every step of an uncaptured
  rollout. Keyed on the object, which is frozen, and kept with it so that its id is not reused."""
  key = (id(model), make.__name__, args)
  hit = _TEXTS.get(key)
  if hit is None or hit[0] is not model:
    hit = _TEXTS[key] = (model, make(model, *args))
    if len(_TEXTS) > TEXTS_KEPT: _TEXTS.popitem(last=False)
  _TEXTS.move_to_end(key)
  return hit[1]


def check_model(model: Model) -> None:
  """A clear error when the kernel cannot run this model: contacts, float64, a model off the WEBGPU device."""
  check_supported(model)
  if model.body_inv_mass.device != "WEBGPU":
    raise ValueError(f"backend='wgsl': the model lives on {model.body_inv_mass.device}; load it with "
                     "engine.load_scene(..., device='WEBGPU')")
  if contact_tables(model)[0]["NSLOT"] > MISCOMPILE_SLOTS and (why := known_miscompile()):
    warnings.warn(f"{model.name}: results may be wrong on this adapter: {why}", RuntimeWarning, stacklevel=3)


def step_scratch(model: Model, packed: Tensor, ctrl: Tensor | None = None, steps: int = 1,
                 damping: bool | None = None, lanes: int | None = None) -> tuple[Tensor, Tensor]:
  """`steps` env-steps of every env by the WGSL kernel: packed (B, nbody, 13) float32 on WEBGPU -> the same shape,
  and the (B, SCR) scratch rows as the launch left them (contact_set and step_overflow read them).
  ctrl: (B, nact) or None (zeros). damping: see kernels.program.source. lanes: invocations per env (None: LANES, else
  kernels.lanes.default_lanes for this adapter). Lazy, like any tensor op; realise it or call it inside a
  TinyJit."""
  B = packed.shape[0]
  if packed.device != "WEBGPU" or packed.dtype != dtypes.float32:
    raise ValueError(f"wgsl step: expected a float32 state on WEBGPU, got {packed.dtype} on {packed.device}")
  if ctrl is None or model.nact == 0: ctrl = idle_ctrl(B)
  tab, consts = tables(model)
  lanes = lanes or LANES or default_lanes(model, B, cpu_adapter())
  return launch(program_text(source, model, B, steps, damping, lanes), ENTRY, (B, state_rows(model), 13), packed,
                params(model), ctrl, tab, threads=B * lanes, scratch=(B, consts["SCR"]),
                workgroup=workgroup_size(lanes, B))


def trajectory(model: Model, packed: Tensor, ctrls: Tensor | None, steps: int, damping: bool | None = None) -> Tensor:
  """trajectory_overflow's states alone (the reverse mode's checkpoints)."""
  return trajectory_overflow(model, packed, ctrls, steps, damping)[0]


def trajectory_overflow(model: Model, packed: Tensor, ctrls: Tensor | None, steps: int, damping: bool | None = None
                        ) -> tuple[Tensor, Tensor]:
  """`steps` env-steps of every env in one launch, keeping each: packed (B, NROWS, 13) float32 on WEBGPU and ctrls
  (steps, B, nact) or None (zeros) -> (steps + 1, B, NROWS, 13), the start and the state after each step
  (kernels.program.source bound to a trajectory), which trajectory_vjp reads as its checkpoints. The reverse mode's
  checkpointed forward (engine/grad_kernel.py): a launch per step cost it 0.2 to 0.6 forward steps (bench/README.md).
  And (B,) int32, the pairs the broadphase dropped over the steps (step_overflow's count). Lazy, like step(): realise
  the two together (launch)."""
  B = packed.shape[0]
  if steps < 1: raise ValueError(f"wgsl trajectory: steps must be at least 1, got {steps}")
  if ctrls is None or model.nact == 0: ctrls = idle_ctrl(B)   # read by no actuator
  elif ctrls.shape != (steps, B, model.nact):
    raise ValueError(f"wgsl trajectory: controls of shape {ctrls.shape}, expected ({steps}, {B}, {model.nact})")
  tab, consts = tables(model)
  lanes = LANES or default_lanes(model, B, cpu_adapter())
  # step()'s program at one step: it reads a trajectory's step count from the output's length
  out, scratch = launch(program_text(source, model, B, 1, damping, lanes), ENTRY,
                        (steps + 1, B, state_rows(model), 13),
                        packed, params(model), ctrls, tab, threads=B * lanes, scratch=(B, consts["SCR"]),
                        workgroup=workgroup_size(lanes, B))
  return out, scratch[:, consts["OVF"]].cast(dtypes.int32)


def step_overflow(model: Model, packed: Tensor, ctrl: Tensor | None = None, steps: int = 1,
                  damping: bool | None = None, lanes: int | None = None) -> tuple[Tensor, Tensor]:
  """step_scratch's state and (B,) int32: the candidate pairs the broadphase dropped for want of capacity and the
  geoms that did not fit their hash bucket, summed over the steps (the oracle's PairTable.overflow: the kernel runs
  the same spatial hash, kernels/broadphase.wgsl)."""
  out, scratch = step_scratch(model, packed, ctrl, steps, damping, lanes)
  return out, scratch[:, tables(model)[1]["OVF"]].cast(dtypes.int32)


def contact_set(model: Model, scratch: Tensor) -> tuple[Tensor, Tensor]:
  """The last step's pair table (B, NPAIR, 2) int32 (geom indices, -1 in empty slots; oracle ContactPlan.pairs) and
  the last substep's contacts (B, NSLOT, ROW) in the oracle's narrowphase row layout (oracle/contacts.py) and slot
  order, from step_scratch's scratch rows, read by the layout the kernel's header has (kernels/program.py
  contact_tables and slot_layout: the pairs first, SLOT_W floats per slot from SCR_SLOTS, the row from SLOT_ROW).
  Slots of empty pairs hold stale values: the kernel never reads them, and neither should a caller."""
  from oracle.contacts import ROW
  c = tables(model)[1]
  B, npair, nslot, w = scratch.shape[0], c["NPAIR"], c["NSLOT"], c["SLOT_W"]
  slots = scratch[:, c["SCR_SLOTS"]:c["SCR_SLOTS"] + w * nslot].reshape(B, nslot, w)
  return scratch[:, :2 * npair].reshape(B, npair, 2).cast(dtypes.int32), slots[..., c["SLOT_ROW"]:c["SLOT_ROW"] + ROW]


def step(model: Model, packed: Tensor, ctrl: Tensor | None = None, steps: int = 1, damping: bool | None = None,
         lanes: int | None = None) -> Tensor:
  """step_overflow's state alone."""
  return step_overflow(model, packed, ctrl, steps, damping, lanes)[0]


# the backward kernel's launches are engine/wgsl_backward.py's; engine/stepping.py (step_grad) and the APG trainer
# (step_vjp) reach them through this module, loaded on first use (PEP 562: importing it here would be circular). Those
# two files are in the golden files' code fingerprints (tests/golden.py SOURCES, ENVS): an edit to their calls would
# stale every reference, which takes an hour to recompute on 2 cores
BACKWARD = ("step_grad", "step_vjp", "prepare_backward")   # what those two files call; the rest: wgsl_backward


def __getattr__(name: str):
  if name in BACKWARD:
    from engine import wgsl_backward
    return getattr(wgsl_backward, name)
  raise AttributeError(f"module 'engine.wgsl' has no attribute {name!r}")


__all__ = ["step", "trajectory", "step_overflow", "step_scratch", "contact_set", "launch",
           "prepare", "idle_ctrl", "require_webgpu", "check_model", "WebGPUUnavailable", "CHECK", "LANES"]
