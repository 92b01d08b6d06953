"""Repo-root conftest: lets a bare `pytest` import engine/oracle/kernels without installing, and points tinygrad's
WEBGPU backend at the Dawn library that dawn-python ships (unless WEBGPU_PATH is already set)."""
import importlib.util
import os
import platform
import sys

ROOT = os.path.dirname(os.path.abspath(__file__))
if ROOT not in sys.path: sys.path.insert(0, ROOT)

_spec = importlib.util.find_spec("pydawn")
if _spec is not None and _spec.submodule_search_locations:
  _lib = os.path.join(list(_spec.submodule_search_locations)[0], "lib", f"libwebgpu_dawn_{platform.machine()}.so")
  if os.path.isfile(_lib): os.environ.setdefault("WEBGPU_PATH", _lib)

# The longest test files first (cold-cache seconds on 2 cores, measured 2026-11-23), so pytest-xdist's loadfile
# scheduler does not leave one worker running a long file alone at the end; the rest keep pytest's order.
HEAVY_FIRST = ("test_parity_wgsl_contacts.py",  # ~470 s: stack10, pile and cradle compile the oracle twice
               "test_env.py", "test_train_apg.py", "test_parity_wgsl.py", "test_verify_actuators.py",  # ~200 s each
               "test_gym.py", "test_grad_double_pendulum.py", "test_verify_pile.py", "test_grad_contact.py")


def pytest_collection_modifyitems(session, config, items):
  rank = {name: i for i, name in enumerate(HEAVY_FIRST)}
  items.sort(key=lambda item: rank.get(item.path.name, len(HEAVY_FIRST)))   # stable: file order kept otherwise
