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
