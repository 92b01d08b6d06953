"""Which kernels a GPU's driver accepts, and with what in private memory: for each scene, the forward step and the
backward step (batch 64, one step) built and launched once, first with the defaults, then, where the backward fails,
with each of its private arrays moved to storage in turn (kernels.tape.PRIVATE_TAPE, kernels.lanes.PRIVATE_PARAMS and
PRIVATE_SCRATCH), in replay rather than store mode, and on one lane or 32. One line per try: scene, what, ok or the
error's first line, seconds, and the bytes of the private arrays the program declares (private_bytes; the numbers in
kernels/tape.py). bench/gpu.sh runs it first on the device.

  DEV=WEBGPU python bench/gpu_probe.py [scene ...]

NVIDIA's Vulkan driver (580.159, H200, 2026-11-30) refused chain's backward program at pipeline creation ("failed to
validate local memory") with the defaults that lavapipe runs; this finds the limit."""
import re
import sys
import time
from pathlib import Path
from tinygrad import Tensor
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import engine.wgsl as W  # noqa: E402
import engine.wgsl_backward as WB  # noqa: E402
import kernels.lanes as KL  # noqa: E402
import kernels.program as KP  # noqa: E402
import kernels.tape as KT  # noqa: E402
from engine.scene import load_scene  # noqa: E402
from engine.simulator import Simulator  # noqa: E402
from kernels.layout import state_rows  # noqa: E402
from oracle.joint_damping import has_damping  # noqa: E402
from oracle.packed import pack_state  # noqa: E402

SCENES = ("chain", "pendulum", "double_pendulum", "drop", "bounce", "cradle", "leg2", "muscle_hang", "compliant_hang",
          "slide", "incline", "stack10")
B = 64
VARIANTS = {"tape in storage": {"tape": 0}, "tape private": {"tape": 1 << 20}, "params in storage": {"params": 0},
            "scratch in storage": {"scratch": 0}, "all in storage": {"tape": 0, "params": 0, "scratch": 0},
            "replay": {"store": False}, "replay, tape private": {"store": False, "tape": 1 << 20},
            "one lane": {"lanes": 1}, "32 lanes": {"lanes": 32}}


SIZES = {"f32": 4, "i32": 4, "u32": 4, "bool": 4, "vec2<f32>": 8, "vec3<f32>": 16, "vec4<f32>": 16}


def private_bytes(src: str) -> int:
  """The bytes of the private and function arrays the program declares, with WGSL's layout: vec3 and vec4 take 16
  bytes, a struct its fields aligned to the largest (Quat, a f32 and a vec3, 32). Local variables besides arrays,
  and what the compiler spills, are not counted."""
  consts = {k: int(v) for k, v in re.findall(r"const\s+(\w+)\s*(?::\s*\w+)?\s*=\s*(\d+)u?\s*;", src)}
  structs: dict[str, int] = {}
  for _ in range(8):   # structs of structs: until every size is known
    for name, body in re.findall(r"struct\s+(\w+)\s*\{([^}]*)\}", src):
      fields = re.findall(r"\w+\s*:\s*([\w<>]+)", body)
      if name in structs or not all(t in SIZES or t in structs for t in fields): continue
      size, align = 0, 4
      for t in fields:
        n = SIZES.get(t) or structs[t]
        a = 16 if n >= 12 else 4
        size, align = (size + a - 1) // a * a + n, max(align, a)
      structs[name] = (size + align - 1) // align * align
  total = 0
  for t, n in re.findall(r"\bvar(?:<private>|<function>)?\s+\w+\s*:\s*array<\s*([\w<>]+)\s*,\s*(\w+)\s*>", src):
    count = int(n) if n.isdigit() else consts.get(n, 0)
    total += count * (SIZES.get(t) or structs.get(t, 0))
  return total


DEFAULTS = {"tape": KT.PRIVATE_TAPE, "params": KP.PRIVATE_PARAMS, "scratch": KL.PRIVATE_SCRATCH}


def configure(**knobs) -> None:
  """The private-memory limits: DEFAULTS (the modules' own, as this process started), with knobs in their place."""
  k = {**DEFAULTS, **knobs}
  KT.PRIVATE_TAPE, KP.PRIVATE_PARAMS, KL.PRIVATE_SCRATCH = k["tape"], k["params"], k["scratch"]
  W._TEXTS.clear()   # the program texts are kept per model and arguments (engine.wgsl.program_text), not per knob


def attempt(what: str, fn) -> bool:
  t = time.perf_counter()
  try:
    size = fn()
    print(f"  {what:20s} ok    {time.perf_counter() - t:6.1f} s  private arrays {size / 1e3:.1f} kB", flush=True)
    return True
  except Exception as e:  # noqa: BLE001 (the driver's refusal is the measurement)
    msg = str(e).strip().splitlines()[0][:110]
    print(f"  {what:20s} FAIL  {time.perf_counter() - t:6.1f} s  {type(e).__name__}: {msg}", flush=True)
    return False


def main(names) -> int:
  W.require_webgpu()
  print(f"adapter: {W.adapter()}", flush=True)
  failed = 0
  for name in names:
    model = load_scene(f"scenes/{name}.json", device="WEBGPU")
    packed = pack_state(Simulator(model, B, backend="wgsl").reset(seed=1, noise=0.1), model).contiguous().realize()
    gout = Tensor.ones(B, state_rows(model), 13, device="WEBGPU").contiguous().realize()
    print(f"{name}:", flush=True)

    def forward():
      W.step(model, packed).realize()
      return private_bytes(KP.source(model, B, 1))

    def backward(lanes=None, store=None):
      def run():
        Tensor.realize(*WB.step_vjp(model, packed, None, gout, store=store, lanes=lanes))
        used, damping = WB.backward_lanes(model, B, lanes), has_damping(model)
        store_used = KT.store_mode(model, B, damping, used) if store is None else store
        return private_bytes(KP.backward_source(model, B, damping, store_used, lanes=used))
      return run

    attempt("forward", forward)
    if attempt("backward", backward()): continue
    failed += 1
    for what, knobs in VARIANTS.items():
      configure(**{k: v for k, v in knobs.items() if k not in ("lanes", "store")})
      attempt(what, backward(knobs.get("lanes"), knobs.get("store")))
      configure()
  return failed


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:] or SCENES))
