"""Tasks: a scene plus observation, reward and termination, as tensor functions over a batch of envs.

A task is a small class (one file each). The env (engine/env.py) owns stepping, auto-reset and statistics; a task
only says what the agent sees and is paid. Everything is a differentiable tinygrad expression of the packed state
(B, nbody, 13), so the functional env can be differentiated through (analytic policy gradients).

  init(model, u)                     u: (B, n_random) uniform [0, 1) -> qpos, qvel (B, njoint), task data (B, task_size)
  observe(model, packed, task)       -> (B, obs_size)
  reward(model, packed, task, ctrl)  -> (B,)   ctrl: the clipped controls applied in this step
  terminated(model, packed, task)    -> (B,) bool
"""
from __future__ import annotations
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


from engine.tasks.ant import Ant  # noqa: E402
from engine.tasks.cartpole import CartPole  # noqa: E402
from engine.tasks.pendulum import PendulumSwingup  # noqa: E402
from engine.tasks.reacher import Reacher  # noqa: E402

TASKS: dict[str, type[Task]] = {t.name: t for t in (CartPole, PendulumSwingup, Reacher, Ant)}
