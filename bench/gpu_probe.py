"""Which kernels a GPU's driver accepts, and with what in private memory: for each scene, the forward step and the
backward step (batch 64, one step) built and launched once, first with the defaults, then, where the backward fails,
with each of its private arrays moved to storage in turn (kernels.tape.PRIVATE_TAPE, kernels.lanes.PRIVATE_PARAMS and
PRIVATE_SCRATCH), in replay rather than store mode, and on one lane or 32. One line per try: scene, what, ok or the
error's first line, seconds, and the private floats the program declares. bench/gpu.sh runs it first on the device.

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


def private_floats(src: str) -> int:
  """The floats of the private and function arrays the program declares (their sizes as constants or literals)."""
  consts = dict(re.findall(r"const\s+(\w+)\s*(?::\s*\w+)?\s*=\s*(\d+)u?\s*;", src))
  sizes = re.findall(r"var(?:<private>|<function>)?\s+\w+\s*:\s*array<\s*\w+\s*,\s*(\w+)\s*>", src)
  return sum(int(consts.get(s, s)) for s in sizes if s.isdigit() or s in consts)


def configure(tape=8192, params=512, scratch=2048) -> None:
  KT.PRIVATE_TAPE, KP.PRIVATE_PARAMS, KL.PRIVATE_SCRATCH = tape, params, scratch
  W._TEXTS.clear()   # the program texts are kept per model and arguments (engine.wgsl.program_text), not per knob


def attempt(what: str, fn) -> bool:
  t = time.perf_counter()
  try:
    floats = fn()
    print(f"  {what:20s} ok    {time.perf_counter() - t:6.1f} s  private ~{floats} floats", flush=True)
    return True
  except Exception as e:  # noqa: BLE001 (the driver's refusal is the measurement)
    msg = str(e).strip().splitlines()[0][:110]
    print(f"  {what:20s} FAIL  {time.perf_counter() - t:6.1f} s  {type(e).__name__}: {msg}", flush=True)
    return False


def main(names) -> int:
  W.require_webgpu()
  print(f"adapter: {W.adapter()}", flush=True)
  defaults = (KT.PRIVATE_TAPE, KP.PRIVATE_PARAMS, KL.PRIVATE_SCRATCH)
  failed = 0
  for name in names:
    model = load_scene(f"scenes/{name}.json", device="WEBGPU")
    packed = pack_state(Simulator(model, B, backend="wgsl").reset(seed=1, noise=0.1), model).contiguous().realize()
    gout = Tensor.ones(B, state_rows(model), 13, device="WEBGPU").contiguous().realize()
    print(f"{name}:", flush=True)

    def forward():
      W.step(model, packed).realize()
      return private_floats(KP.source(model, B, 1))

    def backward(lanes=None, store=None):
      def run():
        Tensor.realize(*WB.step_vjp(model, packed, None, gout, store=store, lanes=lanes))
        used, damping = WB.backward_lanes(model, B, lanes), has_damping(model)
        store_used = KT.store_mode(model, B, damping, used) if store is None else store
        return private_floats(KP.backward_source(model, B, damping, store_used, lanes=used))
      return run

    attempt("forward", forward)
    if attempt("backward", backward()): continue
    failed += 1
    for what, knobs in VARIANTS.items():
      configure(**{k: v for k, v in knobs.items() if k not in ("lanes", "store")})
      attempt(what, backward(knobs.get("lanes"), knobs.get("store")))
      configure(*defaults)
  return failed


if __name__ == "__main__":
  sys.exit(main(sys.argv[1:] or SCENES))
