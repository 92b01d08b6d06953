"""Adjoint parity (issue 17, the backward kernel, in progress): each WGSL adjoint in kernels/adjoint/ against
tinygrad's autograd of the oracle function it mirrors, as vector-Jacobian products on random inputs.

One program (kernels/program.py adjoint_source: a step program, then the adjoints) gets one entry point per test;
invocation i reads case i's inputs and output gradient from `inp` and writes its input gradients to `outp`. The oracle
runs in float64 on the CPU device with the same inputs; the kernel in float32. Per gradient field, the relative
error norm-wise over the cases, |g_wgsl - g_oracle| / |g_oracle|, must stay within TOL, the issue's bound, and
within FLOOR_FACTOR of the float32 oracle's own error against float64 (the rounding floor), whichever is larger.
"""
from __future__ import annotations
from types import SimpleNamespace
import numpy as np
from tinygrad import Tensor, dtypes
import engine.wgsl as wgsl
from engine import load_scene
from kernels.program import adjoint_source
from oracle.integrate import integrate
from oracle.math3 import V3
from tests.helpers import SCENES, wgsl_checked  # noqa: F401 (autouse)

N = 512             # cases
TOL = 1e-4          # relative, norm-wise per field (issue 17)
FLOOR_FACTOR = 8.0  # the kernel may sit this far above the float32 oracle's rounding error
H = 0.01            # [s] a coarse substep, so that the second-order terms (gyroscopic, h^2) weigh in


def run_entry(body: str, name: str, ins: np.ndarray, width: int) -> np.ndarray:
  """Launch entry point `name` (its body: invocation i = gid.x) on N invocations over the (N, k) float32 inputs;
  returns the (N, width) outputs."""
  model = load_scene(SCENES / "pendulum.json", device="WEBGPU")
  src = adjoint_source(model) + f"""
fn rd3(o: u32) -> vec3<f32> {{ return vec3<f32>(inp[o], inp[o + 1u], inp[o + 2u]); }}
fn rdq(o: u32) -> Quat {{ return Quat(inp[o], rd3(o + 1u)); }}
fn wr3(o: u32, v: vec3<f32>) {{ outp[o] = v.x; outp[o + 1u] = v.y; outp[o + 2u] = v.z; }}
fn wrq(o: u32, q: Quat) {{ outp[o] = q.w; wr3(o + 1u, q.v); }}
@compute @workgroup_size(64)
fn {name}(@builtin(global_invocation_id) gid: vec3<u32>) {{
  if (gid.x >= {N}u) {{ return; }}
  let i = gid.x * {ins.shape[1]}u;
  let o = gid.x * {width}u;
{body}
}}
"""
  x = Tensor(ins.astype(np.float32), device="WEBGPU").realize()
  return wgsl.launch(src, name, (N, width), x, threads=N, workgroup=64).numpy().astype(np.float64)


def unit_quats(rng, n) -> np.ndarray:
  q = rng.normal(size=(n, 4))
  return q / np.linalg.norm(q, axis=1, keepdims=True)


def compare(got: dict[str, np.ndarray], ref64: dict[str, np.ndarray], ref32: dict[str, np.ndarray]) -> None:
  lines, bad = [], []
  for k, want in ref64.items():
    scale = max(np.linalg.norm(want), 1e-30)
    err, floor = np.linalg.norm(got[k] - want) / scale, np.linalg.norm(ref32[k] - want) / scale
    lines.append(f"{k}: {err:.2e} (float32 oracle {floor:.2e})")
    if not err <= max(TOL, FLOOR_FACTOR * floor): bad.append(k)
  print("\n" + "\n".join(lines))
  assert not bad, f"adjoints off for {bad}:\n" + "\n".join(lines)


# --- integrate (kernels/adjoint/integrate.wgsl integrate_body_adj; oracle/integrate.py integrate) ---

INTEGRATE_IN = {"pos": 3, "quat": 4, "vel": 3, "angvel": 3, "force": 3, "torque": 3, "inv_mass": 1,
                "inv_inertia": 3, "gravity": 3}
INTEGRATE_OUT = {"pos": 3, "quat": 4, "vel": 3, "angvel": 3, "disp": 3, "rot": 3}


def integrate_cases(seed: int = 0) -> tuple[dict[str, np.ndarray], np.ndarray]:
  """Random bodies, one in 8 static (zero inverse mass and inertia, which integrate leaves in place), the others with
  inverse inertias 0.2-5 per axis; and a random output gradient."""
  rng = np.random.default_rng(seed)
  static = rng.random(N) < 0.125
  x = {"pos": rng.normal(size=(N, 3)), "quat": unit_quats(rng, N), "vel": rng.normal(size=(N, 3)),
       "angvel": rng.normal(0, 3, size=(N, 3)), "force": rng.normal(0, 5, size=(N, 3)),
       "torque": rng.normal(0, 5, size=(N, 3)), "inv_mass": np.where(static, 0.0, rng.uniform(0.2, 2, N))[:, None],
       "inv_inertia": np.where(static[:, None], 0.0, rng.uniform(0.2, 5, (N, 3))),
       "gravity": rng.normal(0, 5, size=(N, 3))}
  return x, rng.normal(size=(N, sum(INTEGRATE_OUT.values())))


def integrate_oracle(x: dict[str, np.ndarray], g: np.ndarray, dtype) -> dict[str, np.ndarray]:
  t = {k: Tensor(v, dtype=dtype, device="CPU") for k, v in x.items()}
  packed = Tensor.cat(t["pos"], t["quat"], t["vel"], t["angvel"], dim=-1)[:, None]
  model = SimpleNamespace(body_inv_mass=t["inv_mass"], body_inv_inertia=t["inv_inertia"][:, None],
                          gravity=t["gravity"][:, None])
  out = integrate(model, packed, H, V3.of(t["force"][:, None]), V3.of(t["torque"][:, None]))
  loss = (out[:, 0] * Tensor(g, dtype=dtype, device="CPU")).sum()
  return {k: v.numpy().astype(np.float64) for k, v in zip(t, loss.gradient(*t.values()))}


def test_parity_adjoint_integrate():
  """integrate_body_adj against autograd of oracle/integrate.py integrate, per input: the packed state, the motor
  loads and the parameters (inverse mass and inertia, gravity)."""
  x, g = integrate_cases()
  ins = np.concatenate([*x.values(), g], axis=1)
  sizes = [*INTEGRATE_IN.values(), *INTEGRATE_OUT.values()]
  reads = [f"inp[i + {o}u]" if n == 1 else f"{'rdq' if n == 4 else 'rd3'}(i + {o}u)"
           for n, o in zip(sizes, np.cumsum([0, *sizes]))]
  body = f"""  let a = integrate_body_adj({", ".join(reads[:len(INTEGRATE_IN)])}, {H},
                              BodyWork({", ".join(reads[len(INTEGRATE_IN):])}));
  wr3(o, a.x); wrq(o + 3u, a.q); wr3(o + 7u, a.v); wr3(o + 10u, a.w); wr3(o + 13u, a.force); wr3(o + 16u, a.torque);
  outp[o + 19u] = a.im; wr3(o + 20u, a.ii); wr3(o + 23u, a.gravity);"""
  out = run_entry(body, "integrate_adj_parity", ins, 26)
  got = dict(zip(INTEGRATE_IN, np.split(out, np.cumsum(list(INTEGRATE_IN.values()))[:-1], axis=1)))
  compare(got, integrate_oracle(x, g, dtypes.float64), integrate_oracle(x, g, dtypes.float32))
