"""Gradient parity (issue 17) for the planar and slide2 joints (oracle/constraints/planar.py, slide2.py; their
adjoints planar_adj and slide2_adj in kernels/adjoint/constraints.wgsl): the WGSL backward kernel against the float64
oracle's autograd, as tests/test_parity_grad.py does for the shipped scenes (same inputs, horizons, fields and
bounds; golden references).

planar_arm: a box on a tilted planar joint carrying a two-link arm (tests/mjcf/planar_arm.xml); the kicked start
leaves the plane, which the joint's rows restore. slide2_arm: a carriage on two slides carrying an arm that swings
out of their plane (tests/mjcf/slide2_arm.xml; its ranges, 3 m, are not reached in 10 steps). slide2_arm_limits: the
same with each coordinate's range 1 mm wide around its start, so that the kicks cross both limits within the first
step and every row of the slide2 joint fires; after 1 step only.

Why not 10 steps at the limits: the carriage then stays pressed on a bound, each substep's prediction crossing it by
at most g h^2 (1.0e-7 m, h = 0.004 s / 39 substeps), below float32's resolution of a position near 2 m (2.4e-7 m).
Whether the limit's row fires is then decided by rounding, and float32 and float64 may take different branches,
whose gradients differ (held at the bound or free). Measured
2026-11-27, slide2_arm_limits x10: the kernel 4.2e-2 from float64 on act_gear where the float32 oracle is 1.5e-4, but
on jnt_range the float32 oracle 5.3e-2 where the kernel is 9e-5: each float32 run left float64's branch somewhere.
After 1 step both are within their bounds (state 5.6e-5 and 5.4e-5)."""
from __future__ import annotations
from pathlib import Path
import pytest
from tests.test_parity_grad import check_parity
from tests.helpers import wgsl_checked  # noqa: F401 (autouse)

pytest.importorskip("mujoco")
HERE = Path(__file__).resolve().parent / "mjcf"


def source(name: str) -> dict:
  """The scene dict of tests/mjcf/<name>.xml; a name ending in _limits narrows the ranges to 1 mm around each
  coordinate's start (tests/test_parity_wgsl_planar.py narrow_slide2_ranges)."""
  import tempfile
  from tests.test_parity_wgsl_armature import scene_from
  from tests.test_parity_wgsl_planar import narrow_slide2_ranges
  xml = (HERE / f"{name.removesuffix('_limits')}.xml").read_text()
  if name.endswith("_limits"): xml = narrow_slide2_ranges(xml)
  with tempfile.TemporaryDirectory() as d:
    (path := Path(d) / f"{name}.xml").write_text(xml)
    return scene_from(path)


CASES = [("planar_arm", 1), ("planar_arm", 10), ("slide2_arm_limits", 1), ("slide2_arm", 10)]


@pytest.mark.parametrize("name, steps", [pytest.param(n, k, marks=pytest.mark.xdist_group(f"grad_{n}"))
                                         for n, k in CASES])
def test_parity_grad_planar(name: str, steps: int):
  check_parity(name, steps, source(name))
