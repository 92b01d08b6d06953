"""WGSL kernel vs oracle on every scene in scenes/ with contacts (the measure and the checks: test_parity_wgsl.py;
split from it so pytest-xdist runs the two halves on both cores)."""
import pytest
from engine.parity import compare_cases
from test_parity_wgsl import SHARED, check, check_scene, scene_params
from tests.helpers import SCENES, box_bounce, sunk_pair, wgsl_checked  # noqa: F401 (autouse)


# the full step's parity is left to the scenes of the same stages at a smaller size: pile200's step costs 33 s in the
# suite, mostly the oracle's compile (measured at 16 envs and at 4 alike); its broadphase, pair table and contacts are
# compared with the kernel's in test_parity_wgsl_stages.py, and pile (36 bodies) runs the same stages here
FULL_STEP_ELSEWHERE = {"pile200"}


@pytest.mark.parametrize("path", [p for p in scene_params(contacts=True)
                                  if p.values[0].stem not in FULL_STEP_ELSEWHERE])
def test_parity_scene_contacts(path):
  check_scene(path)


@pytest.mark.xdist_group("bounce")
def test_parity_bounce_two_iterations():
  """Two Jacobi iterations a substep: the kernel's velocity pass restitutes the contacts that touched in any
  iteration, as the oracle's does (oracle/solve.py TOUCHED), through the first impact (~step 108 of 130 from rest) and
  the bounce: within 1e-4 of the oracle, or the float64 floor."""
  from engine.scene import load_scene_dict
  scene = {**load_scene_dict(SCENES / "bounce.json"), "name": "bounce_k2", "iterations": 2}
  check(compare_cases(scene, [(130, 0.0)], batch=4, judge=False, **SHARED)[0], tol=1e-4)


@pytest.mark.parametrize("armature", [pytest.param(a, marks=pytest.mark.xdist_group(f"depen_{a}"))
                                      for a in (0.0, 0.01)], ids=["plain", "armed"])
def test_parity_depenetration(armature: float):
  """The depenetration cap (contact.max_depenetration 0.5 m/s; tests/test_verify_depenetration.py) on two hinged
  boxes 30 mm into the floor, through the 0.06 s the cap takes to lift them out, from rest and kicked; armed: armature
  on the hinge, whose Jacobi passes may only undo the approach and whose contacts' last pass pushes (kernels/solve.wgsl
  depenetration). Within 1e-4 of the oracle, or the float64 floor."""
  for res in compare_cases(sunk_pair(0.5, armature=armature), [(30, 0.0), (10, 0.5)], batch=4, judge=False, **SHARED):
    check(res, tol=1e-4)


@pytest.mark.xdist_group("box_bounce")
def test_parity_box_bounce():
  """The restitution stage (kernels/restitution.wgsl): drop.json's box with e = 1 dropped 5 cm, through its landing
  (~step 24) and rebound, its four corners on the floor at once (unkicked) and one by one (kicked 0.3): within 1e-4 of
  the oracle, or the float64 floor."""
  for res in compare_cases(box_bounce(), [(40, 0.0), (40, 0.3)], batch=4, judge=False, **SHARED):
    check(res, tol=1e-4)
