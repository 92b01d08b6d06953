"""tinyxpbd: scene loading, the simulator, envs. Stepping (and choosing a backend) goes through engine/stepping.py."""
import importlib.util as _util
import os as _os
import platform as _platform

from engine.scene import SceneError, load_scene  # noqa: F401
from oracle.types import Model, State  # noqa: F401


def _find_dawn() -> None:
  """Point tinygrad's WEBGPU backend at the Dawn library that dawn-python ships, unless WEBGPU_PATH is already set, so
  the wgsl backend works without setup (tinygrad reads it when the device first opens)."""
  spec = _util.find_spec("pydawn")
  if spec is None or not spec.submodule_search_locations: return
  lib = _os.path.join(list(spec.submodule_search_locations)[0], "lib", f"libwebgpu_dawn_{_platform.machine()}.so")
  if _os.path.isfile(lib): _os.environ.setdefault("WEBGPU_PATH", lib)


def _register_gymnasium() -> None:
  """Every task as a Gymnasium env (tinyxpbd/Cartpole-v0, ...: engine/gym.py register_envs) when gymnasium is
  installed; gymnasium stays optional."""
  if _util.find_spec("gymnasium") is None: return
  from engine.gym import register_envs
  register_envs()


_find_dawn()
_register_gymnasium()


def __getattr__(name):
  # heavy pieces load on first use so `import engine` stays cheap
  if name == "Simulator":
    from engine.simulator import Simulator
    return Simulator
  if name in ("make_env", "EnvCore", "VecEnv"):
    import engine.env
    return getattr(engine.env, name)
  raise AttributeError(f"module 'engine' has no attribute {name!r}")
