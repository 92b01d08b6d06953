"""WGSL kernel vs oracle on every scene in scenes/ with contacts (the measure and the checks: test_parity_wgsl.py;
split from it so pytest-xdist runs the two halves on both cores)."""
import pytest
from test_parity_wgsl import check_scene, scene_params
from tests.helpers import wgsl_checked  # noqa: F401 (autouse)


@pytest.mark.parametrize("path", scene_params(contacts=True))
def test_parity_scene_contacts(path):
  check_scene(path)
