"""The kernel's muscle curves (kernels/muscle.wgsl) against MuJoCo's own (mujoco.mju_muscleGain, mju_muscleBias,
mju_muscleDynamics), launched alone on the grids of tests/test_verify_muscle.py (every branch, its breakpoints and
1e-9 either side) in float32: forces within 1e-5 F0, rates within 1e-5 / tau (the issue's bounds). MuJoCo sees the
same float32-rounded inputs, in float64. Measured on lavapipe: forces within 1.5e-6 F0, rates within 3.5e-6 / tau.
The stepped muscles (tendons, activation, loads) are held to the oracle by tests/test_parity_wgsl.py on muscle_hang
and leg2, their gradients by tests/test_parity_grad.py."""
from __future__ import annotations
import numpy as np
import pytest
from tinygrad import Tensor, dtypes
from engine import wgsl
from engine.scene import load_scene
from kernels.program import source
from oracle.muscle import muscle_timescale
from tests.helpers import SCENES, wgsl_checked  # noqa: F401 (autouse)
from tests.test_verify_muscle import curve_grid, dynamics_grid

mujoco = pytest.importorskip("mujoco")

ENTRY = """
@compute @workgroup_size(64)
fn muscle_parity(@builtin(global_invocation_id) gid: vec3<u32>) {{
  if (gid.x >= {n}u) {{ return; }}
  let i = gid.x * {w}u;
{body}
}}
"""
CURVES = """  var prm: array<f32, 9>;
  for (var k = 0u; k < 9u; k++) { prm[k] = inp[i + 5u + k]; }
  let lr = vec2<f32>(inp[i + 2u], inp[i + 3u]);
  outp[gid.x * 2u] = muscle_gain(inp[i], inp[i + 1u], lr, inp[i + 4u], prm);
  outp[gid.x * 2u + 1u] = muscle_bias(inp[i], lr, inp[i + 4u], prm);"""
RATE = "  outp[gid.x] = muscle_dynamics(inp[i], inp[i + 1u], vec3<f32>(inp[i + 2u], inp[i + 3u], inp[i + 4u]));"


def run(body: str, rows: np.ndarray, width: int) -> np.ndarray:
  model = load_scene(SCENES / "muscle_hang.json", device="WEBGPU")
  src = source(model, 1, 1) + ENTRY.format(n=len(rows), w=rows.shape[1], body=body)
  ins = Tensor(rows.astype(np.float32), device="WEBGPU").realize()
  return wgsl.launch(src, "muscle_parity", (len(rows), width), ins, threads=len(rows), workgroup=64).numpy()


def test_parity_muscle_curves_mujoco():
  g = curve_grid()
  rows = np.concatenate([g["len"][:, None], g["vel"][:, None], g["lr"], g["acc0"][:, None], g["prm"]], 1)
  x = rows.astype(np.float32).astype(np.float64)   # MuJoCo sees the kernel's inputs
  got = run(CURVES, rows, 2).astype(np.float64)
  gain = np.array([mujoco.mju_muscleGain(r[0], r[1], r[2:4], r[4], r[5:]) for r in x])
  bias = np.array([mujoco.mju_muscleBias(r[0], r[2:4], r[4], r[5:]) for r in x])
  f0 = np.where(x[:, 7] < 0, x[:, 8] / x[:, 4], x[:, 7])
  err = np.abs(got - np.stack([gain, bias], 1)) / f0[:, None]
  print(f"\nkernel vs MuJoCo: gain within {err[:, 0].max():.1e} F0, bias within {err[:, 1].max():.1e} F0")
  assert err.max() < 1e-5


def test_parity_muscle_dynamics_mujoco():
  d = dynamics_grid()
  rows = np.concatenate([d["ctrl"][:, None], d["act"][:, None], d["prm"]], 1)
  x = rows.astype(np.float32).astype(np.float64)
  got = run(RATE, rows, 1)[:, 0].astype(np.float64)
  want = np.array([mujoco.mju_muscleDynamics(r[0], r[1], r[2:]) for r in x])
  t = lambda a: Tensor(a, dtype=dtypes.float64, device="CPU")   # noqa: E731
  tau = muscle_timescale(t(x[:, 0]), t(x[:, 1]), t(x[:, 2:])).numpy()
  err = np.abs(got - want) * tau
  print(f"\nkernel vs MuJoCo: activation rate within {err.max():.1e} / tau")
  assert err.max() < 1e-5
