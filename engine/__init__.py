"""tinyxpbd: scene loading, the simulator, envs. Stepping (and choosing a backend) goes through engine/stepping.py."""
import importlib.util as _util
import os as _os
import platform as _platform

from engine.scene import SceneError  # noqa: F401
from engine.shipped import scene_names, scene_path  # noqa: F401
from oracle.types import Model, State  # noqa: F401


def load_scene(src, dtype=None, device=None) -> Model:
  """A scene (a shipped scene's name such as "pendulum": scene_names(); a path to a JSON or MJCF file; or a dict) as
  a Model whose tensors have `dtype` (default float32) on `device` (default: tinygrad's). Raises SceneError for any
  problem in the scene. engine.scene.load_scene is the same without the names."""
  from engine.scene import load_scene as load
  # a name or a path is looked up; anything else goes to the loader, which takes a dict and names what it expected
  return load(scene_path(src) if isinstance(src, (str, _os.PathLike)) else src, dtype, device)


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


def register_task(name: str, task: type, scene) -> None:
  """Add a task from your own code: `task` is its class (engine.tasks documents the protocol: observe, reward, ...),
  `scene` a path to its scene JSON file (or a scene dict). Then make_env(name) builds it and, when gymnasium is
  installed, gymnasium.make / make_vec("tinyxpbd/<Name>-v0") too (engine.gym.env_id: my_task -> tinyxpbd/MyTask-v0).
  Raises ValueError (bad or taken name, not a class, a missing method or count), FileNotFoundError (no scene file) or
  SceneError (an invalid scene), leaving both registries as they were."""
  from engine import tasks
  gym_env = _util.find_spec("gymnasium") is not None
  if gym_env:
    import gymnasium
    from engine.gym import env_id, register_env
    # a duplicate task name is tasks.register_task's error; this is another env holding the id (my__task -> MyTask)
    if isinstance(name, str) and name not in tasks.TASKS and env_id(name) in gymnasium.registry:
      raise ValueError(f"register_task({name!r}): Gymnasium already has an env {env_id(name)!r}")
  tasks.register_task(name, task, scene)
  if gym_env: register_env(name)


def unregister_task(name: str) -> None:
  """Undo register_task (the shipped tasks stay)."""
  from engine import tasks
  tasks.unregister_task(name)
  if _util.find_spec("gymnasium") is not None:
    from engine.gym import unregister_env
    unregister_env(name)


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
