"""Two or three hinges on one body (oracle/constraints/hinges.py, kernels/hinges.wgsl): the kernel against the oracle,
one step from the same kicked states, with the bounds of tests/test_parity_wgsl.py (every field within 1e-5 of the
float32 oracle, or no further from the float64 oracle than the float32 oracle is). tests/mjcf/hip.xml: a leg on three
hinges with a knee, an arm on two (axes (2 1 1) and (0 -1 1)), damping on both groups and a motor on each (their torques
along the groups' limit rows); and the same with every group range narrowed to 2 mm around the start, so that one step's
kicks cross the limits. The backward kernel's parity for the groups: tests/test_parity_grad_hinges.py and
tests/test_parity_adjoint_hinges.py (it refuses them in an armed tree by name: tests/test_verify_hinges.py).
tests/mjcf/hip_armed.xml: the same model with armature on every joint and springs on three of the groups' hinges, so
that the armature stage (kernels/armature.wgsl arm_axis) carries the groups' coordinates. The free cases are in `make
test-slow`: each limits case runs the same stages, and the limits too."""
from __future__ import annotations
import re
from pathlib import Path
import pytest
from tests.test_parity_wgsl_armature import check_cases, scene_from
from tests.helpers import wgsl_checked  # noqa: F401 (autouse)

pytest.importorskip("mujoco")
HERE = Path(__file__).resolve().parent / "mjcf"


def narrow_group_ranges(xml: str) -> str:
  """tests/mjcf/hip.xml (or hip_armed.xml) with every hinge of a group limited to 0.001 rad (about 0.06 deg) each side
  of the start, so that one step's kicks cross the limits (also tests/test_parity_grad_hinges.py's hip_limits)."""
  return re.sub(r'(name="(hip_[xyz]|shoulder[12])"[^>]*?)range="[^"]*"', r'\1range="-0.0573 0.0573"', xml)


@pytest.mark.parametrize("model,narrow", [
  pytest.param("hip", False, id="free", marks=[pytest.mark.xdist_group("hinges_hip"), pytest.mark.slow]),
  pytest.param("hip", True, id="limits", marks=pytest.mark.xdist_group("hinges_hip")),
  pytest.param("hip_armed", False, id="armed_free", marks=[pytest.mark.xdist_group("hinges_hip_armed"),
                                                            pytest.mark.slow]),
  pytest.param("hip_armed", True, id="armed_limits", marks=pytest.mark.xdist_group("hinges_hip_armed"))])
def test_parity_hinges_hip(model, narrow, tmp_path):
  text = (HERE / f"{model}.xml").read_text()
  if narrow: text = narrow_group_ranges(text)
  path = tmp_path / "hip.xml"
  path.write_text(text)
  scene = scene_from(path)
  groups = [j for j in scene["joints"] if j["name"].startswith(("hip_", "shoulder"))]
  assert len(groups) == 5 and all(("range" in j) for j in groups)
  if narrow: assert all(j["range"] == pytest.approx([-1e-3, 1e-3], rel=1e-3) for j in groups), groups
  check_cases(scene, None)
