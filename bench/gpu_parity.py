"""WGSL kernel vs oracle on a machine without clang (the GPU box): run `python bench/gpu_parity.py dump` where the
oracle runs (writes .gl/parity_ref.npz: kicked inputs, float32 and float64 oracle results), carry .gl there and run
`python bench/gpu_parity.py` with WEBGPU on the GPU. Measured on an NVIDIA H100 (Vulkan via Dawn), one step from the
kicked states of tests/test_parity_wgsl.py: stack10 pos 4.3e-7, quat 1.4e-6, vel 2.1e-4 (oracle's own float32 error
1.5e-3), angvel 1.5e-3 (4.8e-3); pile pos 0, angvel 1.1e-5. On lavapipe (Mesa 22.3) the same kernel gives wrong
velocities on these scenes: a miscompile, see docs/wgsl.md."""
import sys
import numpy as np
from tinygrad import Tensor, dtypes
import engine.wgsl as W
from engine.scene import load_scene
SCENES = ("stack10", "pile")


def dump():
  from engine.parity import kicked_states, run
  from engine.scene import build_model, load_scene_dict
  out = {}
  for name in SCENES:
    d = load_scene_dict(f"scenes/{name}.json")
    p, c = kicked_states(build_model(d), 4, 0, 0.5)
    out[f"{name}_in"], out[f"{name}_ref"] = p, run(d, "oracle", [(p, c, 1)])[0]
    out[f"{name}_truth"] = run(d, "oracle", [(p, c, 1)], dtype=dtypes.float64)[0]
  np.savez(".gl/parity_ref.npz", **out)


def check():
  W.CHECK = True
  W.require_webgpu()
  ref = np.load(".gl/parity_ref.npz")
  for name in SCENES:
    m = load_scene(f"scenes/{name}.json", device="WEBGPU")
    got = W.step(m, Tensor(ref[f"{name}_in"].astype(np.float32), device="WEBGPU")).numpy().astype(np.float64)
    for f, sl in (("pos", slice(0, 3)), ("quat", slice(3, 7)), ("vel", slice(7, 10)), ("angvel", slice(10, 13))):
      d = np.abs(got[..., sl] - ref[f"{name}_ref"][..., sl]).max()
      o = np.abs(ref[f"{name}_ref"][..., sl] - ref[f"{name}_truth"][..., sl]).max()
      w = np.abs(got[..., sl] - ref[f"{name}_truth"][..., sl]).max()
      print(f"{name} {f}: |wgsl-oracle| {d:.3e}  oracle32 err {o:.3e}  wgsl err {w:.3e}", flush=True)


if __name__ == "__main__":
  dump() if sys.argv[1:] == ["dump"] else check()
