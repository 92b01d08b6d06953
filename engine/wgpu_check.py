"""A second WebGPU implementation for the WGSL kernels: wgpu-py (wgpu-native, whose WGSL front end and validator is
naga: Firefox's WebGPU stack) beside tinygrad's WEBGPU device (Dawn and Tint: Chrome's). It is a check, not a
backend (engine/wgsl.py stays the one that steps): Dawn accepting a program says little about the next WebGPU, so
every program the engine generates is also validated by naga (programs, validate), and the step kernel runs here
with the buffers engine/wgsl.py binds (step), for tests/test_parity_wgpu.py to compare with Dawn's results.

wgpu is an optional dependency (`pip install tinyxpbd[wgpu]`), imported inside the functions that use it. The device
asks for WebGPU's default limits (LIMITS), not the adapter's as tinygrad does of Dawn, so that a pipeline needing more
than every WebGPU offers fails here.
"""
from __future__ import annotations
from functools import lru_cache
import numpy as np
from oracle.types import Model


# WebGPU's default limits (the spec's limits table) for what the programs use: kernels/lanes.py assumes the same
# (MAX_LANES, WORKGROUP_BYTES, MAX_WORKGROUPS). wgpu-py, like tinygrad, would otherwise ask for the adapter's, which on
# lavapipe allow 48 storage buffers, 1024 invocations and 32 KiB of workgroup memory. wgpu-native checks the
# invocations and the storage buffers when it builds a pipeline, but not the workgroup memory (measured: 32 KiB passed
# under this 16 KiB limit); kernels.lanes.check_lanes does.
LIMITS = {"max-storage-buffers-per-shader-stage": 8, "max-compute-invocations-per-workgroup": 256,
          "max-compute-workgroup-size-x": 256, "max-compute-workgroup-storage-size": 16384,
          "max-compute-workgroups-per-dimension": 65535, "max-storage-buffer-binding-size": 134217728,
          "max-buffer-size": 268435456, "max-uniform-buffer-binding-size": 65536, "max-bind-groups": 4,
          "max-bindings-per-bind-group": 1000}


def _wgpu():
  try:
    import wgpu
  except ImportError:
    raise ImportError("engine.wgpu_check needs wgpu-py: pip install 'tinyxpbd[wgpu]' (or pip install wgpu==0.32.0)") \
      from None
  return wgpu


@lru_cache(maxsize=None)
def device():
  """wgpu-py's device on the first adapter the Vulkan loader offers (lavapipe on a CPU machine), with LIMITS."""
  adapter = _wgpu().gpu.request_adapter_sync(power_preference="high-performance")
  return adapter.request_device_sync(required_limits=LIMITS)


def adapter() -> str:
  """The adapter as wgpu-native describes it, e.g. 'llvmpipe (LLVM 15.0.6, 256 bits): Mesa 25.0.7 ...'."""
  info = device().adapter.info
  return f"{info['device']}: {info['description']}"


def validate(code: str):
  """naga parses and validates `code` (types, uniformity, address spaces): returns the shader module, or raises
  wgpu.GPUValidationError with naga's diagnostic. 10-40 ms a program on lavapipe's machine: no driver compile happens
  here. wgpu-native hands the program to the driver when a pipeline is created (lavapipe, cold Mesa cache: pendulum's
  step 0.2 s, pile200's 68 s, its backward 166 s; every scene's programs ~9 min) and lavapipe compiles more at the
  first launch (pendulum 1.5 s, drop with 32 lanes 43 s)."""
  return device().create_shader_module(code=code)


def programs(model: Model, batch: int = 64) -> dict[str, str]:
  """Every program kernels/program.py generates for this scene, by name: the step with one lane per env ('step'),
  with the env's state in workgroup memory where the scene allows it ('step_lanes': check_lanes; engine.wgsl.LANES
  can force it on any scene, default_lanes picks 32 for contact scenes), and the backward where check_backward
  allows it, replaying each substep ('backward') and with the stored tape ('backward_store'). The step count,
  damping and per-env parameters change only constants of these texts, so they are not separate variants."""
  from kernels.lanes import check_lanes
  from kernels.layout import Unsupported
  from kernels.program import backward_source, check_backward, source
  out = {"step": source(model, batch, 1, lanes=1)}
  try:
    check_lanes(model, 32)
    out["step_lanes"] = source(model, batch, 1, lanes=32)
  except ValueError:
    pass
  try:
    check_backward(model)
  except Unsupported:
    return out
  return out | {"backward": backward_source(model, batch, store=False),
                "backward_store": backward_source(model, batch, store=True)}


def _layout(nstorage: int):
  """engine/wgsl.py's binding layout: binding 0 tinygrad's INFINITY uniform, 1 .. nstorage storage buffers."""
  wgpu = _wgpu()
  dev = device()
  def entry(n, kind): return {"binding": n, "visibility": wgpu.ShaderStage.COMPUTE, "buffer": {"type": kind}}
  group = dev.create_bind_group_layout(entries=[entry(0, wgpu.BufferBindingType.uniform),
                                                *(entry(n, wgpu.BufferBindingType.storage)
                                                  for n in range(1, nstorage + 1))])
  return group, dev.create_pipeline_layout(bind_group_layouts=[group])


@lru_cache(maxsize=8)
def pipeline(code: str, entry: str, nstorage: int):
  """The compute pipeline of `code`'s `entry` with engine/wgsl.py's layout, and its bind group layout (built once per
  program: this is the driver's compile)."""
  group, layout = _layout(nstorage)
  pipe = device().create_compute_pipeline(layout=layout, compute={"module": validate(code), "entry_point": entry})
  return pipe, group


def _buffer(a: np.ndarray):
  wgpu = _wgpu()
  usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
  return device().create_buffer_with_data(data=np.ascontiguousarray(a), usage=usage)


def _run(code: str, entry: str, nstorage: int, groups: int, launches: list[list]) -> None:
  """Launch `code`'s `entry` on `groups` workgroups once per list of storage buffers in `launches` (bindings 1 ..
  nstorage; binding 0 is INFINITY), in order, in one submission."""
  wgpu = _wgpu()
  dev = device()
  pipe, group = pipeline(code, entry, nstorage)
  inf = dev.create_buffer_with_data(data=np.array([np.inf], np.float32), usage=wgpu.BufferUsage.UNIFORM)
  enc = dev.create_command_encoder()
  for bufs in launches:
    assert len(bufs) == nstorage
    bind = dev.create_bind_group(layout=group, entries=[
      {"binding": n, "resource": {"buffer": b, "offset": 0, "size": b.size}} for n, b in enumerate([inf, *bufs])])
    cpass = enc.begin_compute_pass()
    cpass.set_pipeline(pipe)
    cpass.set_bind_group(0, bind)
    cpass.dispatch_workgroups(groups, 1, 1)
    cpass.end()
  dev.queue.submit([enc.finish()])


def _read(buf, shape: tuple[int, ...]) -> np.ndarray:
  return np.frombuffer(device().queue.read_buffer(buf), np.float32).reshape(shape).copy()


def step(model: Model, packed: np.ndarray, ctrl: np.ndarray, params: np.ndarray, tables: np.ndarray, steps: int,
         lanes: int, damping: bool) -> np.ndarray:
  """`steps` env-steps by the step kernel on wgpu-py, as engine.wgsl.step launches them: one launch of
  source(model, B, 1, damping, lanes) per env-step on B * lanes invocations, bindings 1 .. 6 the output state, the
  input state, the packed parameters, ctrl (B, max(nact, 1)), the contact tables (int32) and the (B, SCR) scratch;
  the state ping-pongs between two buffers. packed: (B, NROWS, 13) float32. params, tables: engine.wgsl.params and
  engine.wgsl.tables' buffers as numpy (the Dawn path's own). The output starts as NaN, so a launch that did not run
  cannot pass for one that did (wgpu-py has no error scopes to report it). Returns (B, NROWS, 13) float32."""
  from engine.wgsl import ENTRY
  from kernels.lanes import workgroup_size
  from kernels.layout import contact_tables
  from kernels.program import source
  B = packed.shape[0]
  state = [_buffer(packed.astype(np.float32)), _buffer(np.full(packed.shape, np.nan, np.float32))]
  rest = [_buffer(params.astype(np.float32)), _buffer(ctrl.astype(np.float32)), _buffer(tables.astype(np.int32)),
          _buffer(np.zeros((B, contact_tables(model)[0]["SCR"]), np.float32))]
  _run(source(model, B, 1, damping, lanes), ENTRY, 6, -(-B * lanes // workgroup_size(lanes, B)),
       [[state[(k + 1) % 2], state[k % 2], *rest] for k in range(steps)])
  return _read(state[steps % 2], packed.shape)


def step_vjp(model: Model, packed: np.ndarray, ctrl: np.ndarray, gout: np.ndarray, params: np.ndarray,
             tables: np.ndarray, damping: bool, store: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
  """engine.wgsl_backward.step_vjp on wgpu-py: the backward kernel (kernels.program.backward_source) on B invocations,
  bindings 1 .. 8 the (B, GRAD_W) gradients (NaN first), the state, the parameters, ctrl, the tables, the step's
  scratch (one float where the kernel keeps it private, engine.wgsl_backward._step_scratch), gout (B, NROWS, 13) and the
  tape (kernels.tape.tape_buffer, likewise). Returns (d/d packed (B, NROWS, 13), d/d ctrl (B, max(nact, 1)), d/d the
  parameter row (B, NPARAM)), float32."""
  from kernels.lanes import PRIVATE_SCRATCH, workgroup_size
  from kernels.layout import contact_tables, param_layout
  from kernels.program import BACKWARD_ENTRY, backward_source
  from kernels.tape import tape_buffer, tape_layout
  B, nrows = packed.shape[0], packed.shape[1]
  tape, scr = tape_layout(model, damping, store), contact_tables(model)[0]["SCR"]
  out = _buffer(np.full((B, tape["GRAD_W"]), np.nan, np.float32))
  bufs = [out, _buffer(packed.astype(np.float32)), _buffer(params.astype(np.float32)), _buffer(ctrl.astype(np.float32)),
          _buffer(tables.astype(np.int32)), _buffer(np.zeros(1 if scr <= PRIVATE_SCRATCH else (B, scr), np.float32)),
          _buffer(gout.astype(np.float32)), _buffer(np.zeros(tape_buffer(tape, B), np.float32))]
  _run(backward_source(model, B, damping, store), BACKWARD_ENTRY, 8, -(-B // workgroup_size(1, B)), [bufs])
  g = _read(out, (B, tape["GRAD_W"]))
  nb, nc = nrows * 13, max(model.nact, 1)
  return g[:, :nb].reshape(B, nrows, 13), g[:, nb:nb + nc], g[:, nb + nc:nb + nc + param_layout(model)[1]]
