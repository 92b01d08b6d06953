"""Tasks: a scene plus observation, reward and termination, as tensor functions over a batch of envs.

A task is a small class (one file each). The env (engine/env.py) owns stepping, auto-reset and statistics; a task
only says what the agent sees and is paid. Everything is a differentiable tinygrad expression of the packed state
(B, nbody, 13), so the functional env can be differentiated through (analytic policy gradients).

The protocol: the env builds one instance per model it loads, `task_cls(model)`, and reads from it

  max_episode_steps: int >= 1       episodes are truncated after this many env-steps
  obs_size: int >= 1                observe() gives (B, obs_size)
  task_size: int >= 0               per-env data drawn at reset (e.g. a target position), (B, task_size)
  n_random: int >= 0                uniforms init() consumes per env
  init(model, u)                    u: (B, n_random) uniform [0, 1) -> qpos, qvel (B, k <= njoint: the first k joints'
                                    coordinates, the rest at rest), task data (B, task_size)
  observe(model, packed, task)      -> (B, obs_size)
  reward(model, packed, task, ctrl) -> (B,)   ctrl: the clipped controls applied in this step
  terminated(model, packed, task)   -> (B,) bool   (a Task subclass inherits: never)

Subclassing Task gives the defaults. The shipped tasks name a scene file in engine/tasks/scenes (`scene`), or build
their scene in scene_source() (ant_v5 converts Gymnasium's ant.xml); a task from your own code comes with its scene
through register_task(name, cls, scene=path), without editing this package.
"""
from __future__ import annotations
import copy
import re
from pathlib import Path
from tinygrad import Tensor

SCENES = Path(__file__).parent / "scenes"


class Task:
  name: str = ""
  scene: str = ""              # file name in engine/tasks/scenes
  max_episode_steps: int = 1000
  obs_size: int = 0
  task_size: int = 0           # per-env data sampled at reset (e.g. a target position)
  n_random: int = 0            # uniforms init() consumes per env

  def __init__(self, model): self.model = model
  @classmethod
  def scene_source(cls) -> Path | dict: return SCENES / cls.scene   # the scene file, or a scene dict
  def init(self, model, u: Tensor) -> tuple[Tensor, Tensor, Tensor]: raise NotImplementedError
  def observe(self, model, packed: Tensor, task: Tensor) -> Tensor: raise NotImplementedError
  def reward(self, model, packed: Tensor, task: Tensor, ctrl: Tensor) -> Tensor: raise NotImplementedError
  def terminated(self, model, packed: Tensor, task: Tensor) -> Tensor:
    return packed[:, 0, 0] != packed[:, 0, 0]  # never (all False): NaN states are caught by the env itself


def uniform(u: Tensor, lo, hi) -> Tensor:
  """Map uniforms in [0, 1) to [lo, hi)."""
  return u * (hi - lo) + lo


def task_names() -> tuple[str, ...]:
  return tuple(sorted(TASKS))


def get_task(name: str) -> type[Task]:
  if not isinstance(name, str) or name not in TASKS:
    raise ValueError(f"task: expected one of {list(task_names())}, got {name!r}")
  return TASKS[name]


def scene_of(name: str) -> Path | dict:
  """The scene a task runs on: a path to its JSON file, or the scene dict it was registered with."""
  cls = get_task(name)
  return copy.deepcopy(_REGISTERED[name]) if name in _REGISTERED else cls.scene_source()


# the protocol's counts and their least values; its methods (terminated has Task's default)
SIZES = {"max_episode_steps": 1, "obs_size": 1, "task_size": 0, "n_random": 0}
METHODS = ("init", "observe", "reward", "terminated")
_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")   # snake case: engine.gym.env_id turns it into a Gymnasium id (MyTask)


def register_task(name: str, task: type, scene: str | Path | dict) -> None:
  """Add a task from your own code to the registry: make_env(name) and EnvCore(name) then build it, on `scene` (a path
  to a scene JSON file, or a scene dict; validated here). `task` is the class (a Task subclass, or any class with the
  protocol in this module's docstring); the env builds one instance per model with task(model). engine.register_task
  also registers it with Gymnasium. Raises ValueError (bad name, already registered, not a class, a missing method or
  count), FileNotFoundError (no scene file) or engine.SceneError (an invalid scene)."""
  from engine.scene import load_scene_dict
  from engine.scene_schema import SceneError
  where = f"register_task({name!r})"
  if not (isinstance(name, str) and _NAME.match(name)):
    raise ValueError(f"register_task: name must be snake case ([a-z][a-z0-9_]*), got {name!r}")
  if name in TASKS: raise ValueError(f"{where}: a task of that name is already registered ({TASKS[name].__name__})")
  _check_protocol(where, task)
  if isinstance(scene, dict): src = scene
  elif isinstance(scene, (str, Path)):
    src = Path(scene).expanduser().resolve()   # relative to the current directory now, not when an env is made
    if not src.is_file(): raise FileNotFoundError(f"{where}: scene file {src} does not exist")
  else: raise ValueError(f"{where}: scene must be a path to a scene JSON file or a scene dict, got {scene!r}")
  try: checked = load_scene_dict(src)
  except SceneError as e: raise SceneError(f"{where}: scene {src if isinstance(src, Path) else '(dict)'}: {e}") from e
  if not checked.get("actuators"): raise ValueError(f"{where}: the scene has no actuators, so no action would act")
  TASKS[name], _REGISTERED[name] = task, (src if isinstance(src, Path) else checked)


def unregister_task(name: str) -> None:
  """Remove a task that register_task added (the shipped tasks stay)."""
  if name not in _REGISTERED: raise ValueError(f"unregister_task: {name!r} was not added by register_task")
  del TASKS[name], _REGISTERED[name]


def _check_protocol(where: str, task) -> None:
  if not isinstance(task, type):
    raise ValueError(f"{where}: expected the task's class (the env builds one instance per model: task(model)), "
                     f"got {task!r}")
  missing = [m for m in METHODS if not callable(getattr(task, m, None))
             or (m != "terminated" and getattr(task, m) is getattr(Task, m))]
  if missing: raise ValueError(f"{where}: {task.__name__} does not define {', '.join(missing)} (see engine.tasks)")
  for k, least in SIZES.items():
    v = getattr(task, k, None)
    if not (isinstance(v, int) and not isinstance(v, bool) and v >= least):
      raise ValueError(f"{where}: {task.__name__}.{k} must be an int >= {least}, got {v!r}")


from engine.tasks.ant import Ant  # noqa: E402
from engine.tasks.ant_v5 import AntV5  # noqa: E402
from engine.tasks.cartpole import CartPole  # noqa: E402
from engine.tasks.pendulum import PendulumSwingup  # noqa: E402
from engine.tasks.reacher import Reacher  # noqa: E402

TASKS: dict[str, type[Task]] = {t.name: t for t in (CartPole, PendulumSwingup, Reacher, Ant, AntV5)}
_REGISTERED: dict[str, Path | dict] = {}   # tasks added by register_task: their scene
