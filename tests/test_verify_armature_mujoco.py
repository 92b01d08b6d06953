"""Scenes converted with their armature (engine/mjcf.py -> oracle/armature.py)
move as MuJoCo moves them, by the protocol of tests/test_verify_mjcf.py (1 deg over 1 s)."""
from __future__ import annotations
import sys
from pathlib import Path
import numpy as np
import pytest

pytest.importorskip("mujoco")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import study_armature as S  # noqa: E402
from tests.test_verify_mjcf import ASSETS, trajectory_errors  # noqa: E402


# the double arm (armature 0.02 and 0.05 on two hinges, one the other's parent) in the default suite; the one-hinge
# pendulum and the reacher's arm (27 s and 25 s in the 2-worker suite, 2026-11-27) in `make test-slow`
@pytest.mark.parametrize("name", [pytest.param("pendulum", marks=pytest.mark.slow), "double_arm",
                                  pytest.param("reacher_arm", marks=pytest.mark.slow)])
def test_verify_armature_trajectory_against_mujoco(name, tmp_path):
  path = tmp_path / f"{name}.xml"
  path.write_text(S.MODELS[name]())
  angle, slide = trajectory_errors(path)
  print(f"{name}: worst joint angle error {np.degrees(angle):.4f} deg")
  assert np.degrees(angle) < 1.0 and slide < 0.01


def test_verify_armature_reacher_loads():
  from engine.mjcf import from_mjcf
  import re
  xml = (ASSETS / "reacher.xml").read_text()
  assert re.search(r'armature="1"', xml)
  try:
    from_mjcf(ASSETS / "reacher.xml")
  except Exception as e:   # its target still has two slides on one body
    assert "target" in str(e), e
