"""A graph for tinygrad's CPU device: a captured TinyJit's kernels replayed by one C call instead of one Python launch
each.

Why: the pinned tinygrad 0.14.0 gives its CPU device no graph (its HCQ2 command rings are experimental and hung our
suite), so a JIT replay launches every kernel from Python through `exec_kernel`, ~40 us each. An oracle env-step is
~250 small kernels (drop: 10 substeps x 25), so a one-env rollout spends ~10 ms per step launching kernels that
compute for well under 1 ms (drop x1: 4.8 ms/step replayed, 0.5 ms with a command buffer). `CPUGraph` is what
tinygrad's JIT builds for a batch of kernels when the device has a graph class (engine/jit.py graph_split_rewrite):
here a small C driver that calls each compiled kernel's entry point with its buffer addresses, in the captured
order, exactly as `CPUProgram.__call__` would (uint64 arguments, one call per `core_id` of its global size).

Addresses that change between replays (the JIT's input buffers, symbolic values) are read from an array the driver
takes; every other address is baked into the driver. Same kernels, same order, same arguments: results are
bit-identical to the per-kernel replay (tests/test_simulator.py).
"""
from __future__ import annotations
import contextlib
import ctypes
import functools
import os
import shutil
import subprocess
import tempfile
import time
from tinygrad import Device
from tinygrad.device import Buffer
from tinygrad.engine.jit import GraphException, GraphRunner
from tinygrad.engine.realize import _resolve, get_call_arg_uops, get_runtime, run_linear
from tinygrad.uop.ops import Ops, UOp

CC = "clang"   # what tinygrad's CPU device compiles with (.ci/sysdeps installs it)
# Subnormal floats cost ~100x per operation on x86, and a noisy pendulum x4096 makes them (its hinge projects the
# out-of-plane parts down to ~1e-14, and their products go subnormal): 461k env-steps/s, 657k with them flushed. The
# driver sets flush-to-zero and denormals-are-zero (MXCSR bits 15 and 6) around its kernels and restores the caller's
# mode, so the caller's numpy is untouched. What is flushed is below 1.2e-38 (float32) or 2.2e-308 (float64); GPUs
# flush such values too. flush_subnormals() gives tinygrad's own replay the same mode (tests/test_simulator.py).
HEADER = """#include <stdint.h>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
unsigned int flush_begin(void) { unsigned int m = _mm_getcsr(); _mm_setcsr(m | 0x8040u); return m; }
void flush_end(unsigned int m) { _mm_setcsr(m); }
#else
unsigned int flush_begin(void) { return 0; }
void flush_end(unsigned int m) { (void)m; }
#endif
"""


class CPUGraph(GraphRunner):
  """One batch of a captured JIT's CPU kernels as one compiled C function (see the module docstring)."""

  def __init__(self, linear: UOp, input_uops: tuple[UOp, ...] = ()):
    super().__init__(linear, input_uops)
    self.dynamic: list = []    # per entry of the driver's input array: fn(input_uops, var_vals) -> uint64
    try: self._fn, self._lib = self._compile(self._driver())
    except GraphException: self._fn = None   # replay this batch kernel by kernel, as without a graph
    self._args = (ctypes.c_uint64 * max(1, len(self.dynamic)))()

  def _driver(self) -> list[str]:
    """The driver's lines: one launch (or a core_id loop of launches) per kernel, in the captured order."""
    lines = []
    for call in self.linear.src:
      ast = call.src[0]
      if ast.op is not Ops.PROGRAM: raise GraphException(f"CPUGraph: cannot graph a {ast.op} call")
      device = call.src[1].device
      if not isinstance(device, str): raise GraphException("CPUGraph: multi-device calls are not graphed")
      rt = get_runtime(device, ast)
      if getattr(rt, "lvp", False) or not hasattr(rt, "addr"): raise GraphException("CPUGraph: not a clang CPUProgram")
      args = get_call_arg_uops(call)
      words = [self._buffer_word(args[i], device) for i in ast.arg.globals]
      core = rt.runtimevars.get("core_id")
      for v in ast.arg.vars:
        if v.expr == "core_id": words.append("t")
        else: words.append(self._input_word(lambda _, vv, name=v.expr: vv[name]))
      if core is not None and words[core] != "t": raise GraphException("CPUGraph: core_id slot mismatch")
      sig = ", ".join(["uint64_t"] * len(words)) or "void"
      launch = f"((void (*)({sig})){rt.addr}ULL)({', '.join(words)});"
      # CPUProgram.__call__ launches global_size[0] times, passing the launch's index as core_id where it has one
      n = ast.arg.global_size[0]
      if not isinstance(n, int) or n < 1: raise GraphException("CPUGraph: symbolic or empty launch")
      lines.append(f"  for (uint64_t t = 0; t < {n}ULL; t++) {launch}" if n > 1 or core is not None else f"  {launch}")
    return lines

  def _input_word(self, fn) -> str:
    self.dynamic.append(fn)
    return f"in[{len(self.dynamic) - 1}]"

  def _buffer_word(self, uop: UOp, device: str) -> str:
    """A buffer argument: its address, or an entry of the input array when it depends on the JIT's inputs."""
    if any(u.op is Ops.PARAM for u in uop.toposort()):
      def address(inputs, _, u=uop) -> int: return _resolve(u, inputs).buffer.ensure_allocated().get_buf(device).va_addr
      return self._input_word(address)
    buf = uop.buffer
    if not isinstance(buf, Buffer): raise GraphException("CPUGraph: multi-buffer argument")
    return f"{buf.ensure_allocated().get_buf(device).va_addr}ULL"

  @staticmethod
  def _compile(lines: list[str]):
    src = HEADER + "void run(const uint64_t *in) {\n  unsigned int mode = flush_begin();\n" + "\n".join(lines) + \
      "\n  flush_end(mode);\n}\n"
    tmp = tempfile.mkdtemp(prefix="tinyxpbd_cpugraph_")
    try:
      with open(os.path.join(tmp, "g.c"), "w") as f: f.write(src)
      so = os.path.join(tmp, "g.so")
      done = subprocess.run([CC, "-O1", "-shared", "-fPIC", "-w", "-o", so, os.path.join(tmp, "g.c")],
                            capture_output=True, text=True)
      if done.returncode != 0: raise GraphException(f"CPUGraph: {CC} failed: {done.stderr[-500:]}")
      lib = ctypes.CDLL(so)
    finally: shutil.rmtree(tmp, ignore_errors=True)
    fn = lib.run
    fn.argtypes, fn.restype = [ctypes.c_void_p], None
    lib.flush_begin.restype, lib.flush_end.argtypes = ctypes.c_uint, [ctypes.c_uint]
    return fn, lib

  def __call__(self, input_uops: tuple[UOp, ...], var_vals: dict[str, int], wait: bool = False) -> float | None:
    if self._fn is None:
      run_linear(self.linear, var_vals, input_uops, jit=True)
      return None
    for i, f in enumerate(self.dynamic): self._args[i] = f(input_uops, var_vals)
    st = time.perf_counter()
    self._fn(ctypes.addressof(self._args))
    return time.perf_counter() - st if wait else None


_installed = False


@functools.cache
def _mode_switch():
  """The drivers' flush_begin/flush_end, compiled once (an empty driver)."""
  return CPUGraph._compile([])[1]


@contextlib.contextmanager
def flush_subnormals():
  """Run the block (in this thread) in the driver's float mode: subnormal inputs and results flushed to zero. For
  comparing tinygrad's kernel-by-kernel replay with the graph's bit for bit."""
  lib = _mode_switch()
  mode = lib.flush_begin()
  try: yield
  finally: lib.flush_end(mode)


def install() -> None:
  """Give tinygrad's CPU device this graph, once per process (a later `Device["CPU"].graph = None` stands), unless it
  already has one or TINYXPBD_CPU_GRAPH=0. TinyJits captured afterwards replay their CPU kernels through it."""
  global _installed
  if _installed: return
  _installed = True
  if os.environ.get("TINYXPBD_CPU_GRAPH", "1") == "0" or shutil.which(CC) is None: return
  dev = Device["CPU"]
  if dev.graph is None: dev.graph = CPUGraph


@contextlib.contextmanager
def graph_set_to(graph):
  """Run the block with tinygrad's CPU device given `graph` (CPUGraph, or None for kernel-by-kernel replay), then put
  back what it had: JITs captured inside keep the choice."""
  install()   # first, so that a later install() does not override the choice
  dev = Device["CPU"]
  old, dev.graph = dev.graph, graph
  try: yield
  finally: dev.graph = old


def graph_batches(jit) -> list[UOp]:
  """The graph calls among a captured TinyJit's calls."""
  return [c for c in jit.captured.linear.src if c.src[0].op is Ops.CUSTOM_FUNCTION and c.src[0].arg == "graph"]


def kernel_count(jit) -> int:
  """Kernels one call of a captured TinyJit launches, counting each kernel inside its graph batches (tinygrad's
  GlobalCounters.kernel_count counts a graph batch as one)."""
  graphed = graph_batches(jit)
  return len(jit.captured.linear.src) - len(graphed) + sum(len(c.src[0].src[0].src) for c in graphed)


def host_copies(jit) -> int:
  """Copies from host memory (Tensors made from Python values or numpy: tinygrad's PYTHON and NPY devices) among a
  captured TinyJit's calls. Each replays on every call, so the step realises its constants outside any capture
  (oracle/math3.py const)."""
  def host(u: UOp) -> bool: return str(u.device).split(":")[0] in ("PYTHON", "NPY")
  return sum(c.src[0].op is Ops.COPY and host(get_call_arg_uops(c)[1]) for c in jit.captured.linear.src)
