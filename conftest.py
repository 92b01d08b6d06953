"""Repo-root conftest: lets a bare `pytest` import engine/oracle/kernels without installing, points tinygrad's WEBGPU
backend at the Dawn library that dawn-python ships (unless WEBGPU_PATH is already set), and lays the suite out for
`--dist loadgroup` (the Makefile's `make test`)."""
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.abspath(__file__))
if ROOT not in sys.path: sys.path.insert(0, ROOT)

import engine  # noqa: E402,F401  (points WEBGPU_PATH at dawn-python's Dawn unless it is set: engine/__init__.py)

# The groups that take longest, longest first (worker-seconds in the cold-cache suite, `make test PYTEST_ARGS="-vv
# --durations=0"` 2026-11-27, each test's time from its worker's previous report: 159 s down to 41 s), so that
# pytest-xdist hands them out first and no worker runs a long group alone at the end; the rest keep pytest's order. A
# group is a scene or a shared object (tests marked xdist_group(name) share its compiles on one worker:
# tests/helpers.py) or, for a test without the mark, its file (as --dist loadfile would).
HEAVY_FIRST = ("armature_ant", "envs", "grad_stack10", "apg_reacher", "parity_grad", "stack10", "test_verify_muscle.py",
               "test_wgsl_bridge.py", "actuators", "pendulum_f64", "grad_chain", "grad_ant", "test_verify_pile.py",
               "test_verify_armature_mujoco.py", "test_grad_muscle.py", "double_pendulum_f64", "test_verify_stack.py",
               "test_parity_wgsl_stages.py", "mjcf_half_cheetah", "contact_grad_f64", "pile", "grad_pile",
               "test_grad_armature.py", "planar_half_cheetah", "mjcf_reacher", "test_verify_joints.py",
               "mjcf_planar_armed", "test_train_ppo.py")


def _group(item) -> str:
  mark = item.get_closest_marker("xdist_group")
  return str(mark.args[0]) if mark is not None and mark.args else item.path.name


def pytest_configure(config):
  """pytest-xdist (>= 3.6) reorders --dist loadgroup's groups by their number of tests unless told not to, which put
  test_scene_io.py's 40 quick tests first and HEAVY_FIRST's order nowhere (found 2026-11-27)."""
  if hasattr(config.option, "loadscopereorder"): config.option.loadscopereorder = False


@pytest.hookimpl(tryfirst=True)   # before pytest-xdist reads the marks (xdist/remote.py)
def pytest_collection_modifyitems(session, config, items):
  for item in items:
    if item.get_closest_marker("xdist_group") is None: item.add_marker(pytest.mark.xdist_group(item.path.name))
  rank = {name: i for i, name in enumerate(HEAVY_FIRST)}
  items.sort(key=lambda item: rank.get(_group(item), len(HEAVY_FIRST)))   # stable: file order kept otherwise


@pytest.hookimpl(optionalhook=True)   # a hook of pytest-xdist's: `-p no:xdist` runs without it
def pytest_xdist_node_collection_finished(node, ids):
  """Under --dist loadgroup, stop unless pytest-xdist grouped the tests: it tags each nodeid "<id>@<group>", and with
  an incompatible pytest (9.x for xdist 3.8) it silently schedules every test alone, so shared compiles are lost."""
  if node.config.getvalue("dist") == "loadgroup" and (bad := [i for i in ids if "@" not in i.rsplit("]", 1)[-1]]):
    raise pytest.UsageError(f"--dist loadgroup: pytest-xdist did not tag {bad[0]} with its group; this pytest is not "
                            "one it supports (use the versions pinned in pyproject.toml: make setup)")
