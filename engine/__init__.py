"""tinyxpbd: scene loading, the simulator, envs. Stepping (and choosing a backend) goes through engine/stepping.py."""
from engine.scene import SceneError, load_scene  # noqa: F401
from oracle.types import Model, State  # noqa: F401


def __getattr__(name):
  # heavy pieces load on first use so `import engine` stays cheap
  if name == "Simulator":
    from engine.simulator import Simulator
    return Simulator
  if name in ("make_env", "EnvCore", "VecEnv"):
    import engine.env
    return getattr(engine.env, name)
  raise AttributeError(f"module 'engine' has no attribute {name!r}")
