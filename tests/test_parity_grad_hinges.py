"""Gradient parity (issue 17) for two or three hinges on one body (oracle/constraints/hinges.py; their adjoints in
kernels/adjoint/hinges.wgsl: group_adj in the solve, group_row_adj under the groups' motors and damping): the WGSL
backward kernel against the float64 oracle's autograd, as tests/test_parity_grad.py does for the shipped scenes (same
inputs, horizons, fields and bounds; golden references).

hip: tests/mjcf/hip.xml, a leg on three hinges (hinge3) with a knee and an arm on two (hinge2), damping on both
groups and a motor on each, no contacts; its ranges are not reached from the kicked start. hip_limits: the same with
every hinge of a group limited to 1 mrad around its start (tests/test_parity_wgsl_hinges.py narrow_group_ranges), so
that the kicks cross every group limit within the first step; after 1 step only, for the reason
tests/test_parity_grad_planar.py gives for slide2_arm_limits (held on a bound, whether a limit fires in a later step is
decided by rounding).

armed_thigh, armed_arm: tests/mjcf/hip_armed.xml (the humanoid's armature and springs on both groups) cut into its
thigh alone (three hinges, no knee) and its upper arm alone (two), so that the armature stage carries a group's hinges
(arm_axis_adj and hinge_angles_grad in kernels/adjoint/armature.wgsl: each hinge's world axis w_i and rate row n_i,
its coordinate under a spring). Cut, because the float64 oracle's autograd of the whole model's substep did not fit
this 23 GB machine (killed for memory at 24 GB, 2026-11-29, as was thigh and arm without the shin at 22 GB), where
the thigh alone takes ~6 GB and the arm alone under 1 GB. Both are chaotic at float32 rounding (the arm's kernel
body_inv_mass gradient ranges 2.6e-4 .. 3.4e-3 from the float64 one over ulp-moved starts, either side of it), so, as
for tests/test_parity_grad_armature.py's 10 steps, the kernel runs from RUNS starts and each field's best run is
judged against the float32 oracle's one (check_best_parity). With the group's path in arm_axis_adj cut out, the arm
misses by 0.62 (jnt_axis_parent) after 1 step and 0.22 after 10.

Measured 2026-11-29 on lavapipe (kernel / float32 oracle, relative to float64, norm-wise): hip x1 state 6.8e-4 / 9.5e-4,
jnt_axis_parent 4.6e-4 / 2.3e-4, jnt_anchor_child 9.2e-3 / 1.1e-2, jnt_damping 4.1e-4 / 5.7e-4, act_gear 2.6e-5 /
2.7e-5; hip x10 state 4.1e-4 / 1.4e-3, jnt_anchor_child 2.9e-2 / 1.7e-2; hip_limits x1 state 1.9e-5 / 1.8e-5,
jnt_range 4.6e-6 / 2.3e-6. The free hip's float32 errors are large in both backends (its kicked start is a
sensitive pose of the three-hinge group); with the groups held at their limits they fall to 1e-5. Best of 6 against
the float32 oracle: armed_thigh x1 state 5.2e-4 / 4.8e-4, jnt_axis_parent 3.0e-5 / 1.8e-5, body_inv_mass 1.5e-4 /
5.8e-4; x10 state 9.2e-5 / 7.0e-4; armed_arm x1 state 1.7e-3 / 4.3e-3, jnt_axis_parent 3.9e-3 / 1.0e-2,
body_inv_mass 2.6e-4 / 9.1e-5; x10 state 7.4e-4 / 3.9e-3."""
from __future__ import annotations
from pathlib import Path
import numpy as np
import pytest
from tests.test_parity_grad import check_best_parity, check_parity
from tests.helpers import wgsl_checked  # noqa: F401 (autouse)

pytest.importorskip("mujoco")
HERE = Path(__file__).resolve().parent / "mjcf"


def source(name: str) -> dict:
  """The scene dict of tests/mjcf/hip.xml, its groups' ranges narrowed for hip_limits; for armed_thigh and armed_arm,
  tests/mjcf/hip_armed.xml's thigh without its shin and its upper arm, each alone (the module's docstring says why)."""
  import tempfile
  from tests.test_parity_wgsl_armature import scene_from
  from tests.test_parity_wgsl_hinges import narrow_group_ranges
  xml = (HERE / "hip.xml").read_text()
  if name.startswith("armed_"):
    drop = {"armed_thigh": ("shin", "upper_arm", "shoulder2"), "armed_arm": ("thigh", "hip_y")}[name]
    xml = without(HERE / "hip_armed.xml", *drop)
  if name.endswith("_limits"): xml = narrow_group_ranges(xml)
  with tempfile.TemporaryDirectory() as d:
    (path := Path(d) / f"{name}.xml").write_text(xml)
    return scene_from(path)


def without(path: Path, *names: str) -> str:
  """The MJCF text of `path` without the bodies (and what they hold) and the motors named."""
  import re
  xml = path.read_text()
  for n in names:
    xml, k = re.subn(rf'\n( *)<body name="{n}".*?\n\1</body>|\n *<motor joint="{n}"[^>]*/>', "", xml, count=1,
                     flags=re.S)
    assert k == 1, f"{path.name}: no body or motor {n!r}"
  return xml


RUNS = 6   # the armed cases' and the humanoid's starts: the first and 5 moved by at most an ulp
CASES = [("hip", 1), ("hip", 10), ("hip_limits", 1), ("armed_thigh", 1), ("armed_thigh", 10), ("armed_arm", 1),
         ("armed_arm", 10)]


# one xdist group per program: hip and hip_limits differ in parameter values only, so their programs are the same text
# and compile once
@pytest.mark.parametrize("name, steps", [
  pytest.param(n, k, marks=pytest.mark.xdist_group(f"grad_{n.removesuffix('_limits')}")) for n, k in CASES])
def test_parity_grad_hinges(name: str, steps: int):
  if name.startswith("armed_"): return check_best_parity(name, steps, source(name), RUNS)   # the module's docstring
  check_parity(name, steps, source(name))


HUMANOID_LIFT = 0.5   # m: in the air for the step, so that no contact starts or ends within the differences' steps
HUMANOID_EPS = 1e-6   # float64 central differences: at 1e-5 and 1e-6 they agree within 1e-7 relative (2026-11-29)


def humanoid(device: str = "WEBGPU", dtype=None):
  """Gymnasium's humanoid.xml as a Model (scene_from: its conversion's warnings silenced)."""
  gym = pytest.importorskip("gymnasium")
  import engine
  from tinygrad import dtypes
  from tests.test_parity_wgsl_armature import scene_from
  scene = scene_from(Path(gym.__file__).parent / "envs" / "mujoco" / "assets" / "humanoid.xml")
  return engine.load_scene(scene, dtype=dtype or dtypes.float32, device=device)


def humanoid_case() -> tuple[np.ndarray, np.ndarray, list[np.ndarray], np.ndarray]:
  """The humanoid's kicked start (float64, HUMANOID_LIFT up), the output gradient u, three directions d over
  positions and velocities, and <u, J d> by float64 central differences of the oracle's forward (golden; ~19 GB)."""
  import engine
  from tinygrad import Tensor, dtypes
  from engine.grad_oracle import RolloutGrad
  from oracle.packed import pack_state, unpack_state
  from tests.golden import golden, physics_of
  m64 = humanoid("CPU", dtypes.float64)
  p0 = pack_state(engine.Simulator(m64, batch=1).reset(seed=1, noise=0.3)).numpy()
  p0[..., 2] += HUMANOID_LIFT
  u = np.random.default_rng(5).normal(size=p0.shape)
  mask = np.zeros_like(p0)
  mask[..., 0:3], mask[..., 7:13] = 1.0, 1.0
  ds = [np.random.default_rng(s).normal(size=p0.shape) * mask for s in range(3)]
  def differences():
    x = np.concatenate([p0 + s * HUMANOID_EPS * d for d in ds for s in (1, -1)])
    zero = Tensor.zeros(x.shape[0], dtype=dtypes.float64, device="CPU")
    out = pack_state(RolloutGrad(m64).forward(unpack_state(Tensor(x, device="CPU"), zero, m64), 1)[0]).numpy()
    return {"jd": np.array([(u[0] * (out[2 * k] - out[2 * k + 1])).sum() / (2 * HUMANOID_EPS) for k in range(3)])}
  want = golden("grad_fd_humanoid_float64", dict(scene="gym:humanoid", lift=HUMANOID_LIFT, eps=HUMANOID_EPS,
                                                 seeds=(1, 5, 0, 1, 2)), differences, physics_of(m64))["jd"]
  return p0, u, ds, want


@pytest.mark.slow   # lavapipe compiles the humanoid's backward program in ~5 min
def test_grad_humanoid_against_float64_differences():
  """Gymnasium's humanoid.xml (its waist, thighs and upper arms on two or three hinges, armature on every joint):
  the kernel's one-step VJP <J^T u, d> along three directions d over positions and velocities, against float64
  central differences of the oracle's forward (humanoid_case; the oracle's autograd of this model's substep does not
  fit this machine's 23 GB, see the module's docstring). Judged as check_parity judges a field: within TOL, or
  FLOOR_FACTOR times the float32 rounding floor, here the spread of the kernel's own results over starts moved by at
  most an ulp (spread_starts). Measured 2026-11-29: 1.7e-5, 3.4e-5, 9.5e-5."""
  pytest.importorskip("mujoco")
  import engine.wgsl_backward as wgsl_backward
  from tinygrad import Tensor
  from tests.test_parity_grad import FLOOR_FACTOR, TOL, spread_starts
  p0, u, ds, want = humanoid_case()
  model = humanoid()
  starts = spread_starts(p0.astype(np.float32), RUNS)
  two = lambda a: Tensor(np.concatenate(a).astype(np.float32), device="WEBGPU")   # noqa: E731
  runs = np.concatenate([wgsl_backward.step_vjp(model, two(starts[i:i + 2]), None, two([u, u]))[0].numpy()
                         for i in range(0, RUNS, 2)]).astype(np.float64)
  got = np.array([[(r * d[0]).sum() for d in ds] for r in runs])   # (start, direction)
  assert np.isfinite(got).all()
  err = np.abs(got[0] - want) / np.abs(want)
  spread = (got.max(0) - got.min(0)) / np.abs(want)
  print("humanoid <J^T u, d>: kernel", got[0], "float64 differences", want, "error", err, "spread", spread)
  assert (err <= np.maximum(TOL, FLOOR_FACTOR * spread)).all(), (err, spread)
