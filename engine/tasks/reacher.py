"""Reacher (Gymnasium's Reacher-v5 layout): a two-link planar arm (0.1 m and 0.11 m, hinges about z, no gravity)
moves its fingertip to a random target within 0.2 m of the base. reward = -|tip - target| - 0.1 |u|^2 (Gymnasium
weighs the control term 1 with gear 200; here the gear is 0.05 N m, so u is the same [-1, 1] command).
50 steps of 0.02 s, never terminated. obs = [cos q (2), sin q (2), target (2), q_dot (2), tip - target (2)]."""
from __future__ import annotations
import math
import numpy as np
from tinygrad import Tensor
from engine.npquat import quat_conj, quat_rotate
from engine.tasks import Task
from oracle.joints import joint_coords
from oracle.math3 import V3, Quat
from oracle.packed import POS, QUAT

TIP = (0.21, 0.0, 0.0)   # [m] fingertip in the world at the initial pose (end of the lower link)
RADIUS = 0.2             # [m] targets are uniform in this disc


class Reacher(Task):
  name, scene, max_episode_steps, obs_size, task_size, n_random = "reacher", "reacher.json", 50, 10, 2, 6

  def __init__(self, model):
    super().__init__(model)
    b = model.body_index("lower")
    pos0, quat0 = model.body_pos0.numpy()[b].astype(np.float64), model.body_quat0.numpy()[b].astype(np.float64)
    self.lower, self.tip_local = b, quat_rotate(quat_conj(quat0), np.array(TIP) - pos0)

  def init(self, model, u):
    r, a = RADIUS * u[:, 0].sqrt(), 2 * math.pi * u[:, 1]   # uniform over the disc's area
    target = Tensor.stack(r * a.cos(), r * a.sin(), dim=-1)
    return (u[:, 2:4] - 0.5) * 0.2, (u[:, 4:6] - 0.5) * 0.01, target

  def tip(self, packed) -> tuple[Tensor, Tensor]:
    x, q = packed[:, self.lower, POS], packed[:, self.lower, QUAT]
    t = V3.of(x) + Quat.of(q).rotate(V3(*(x[:, 0] * 0.0 + float(c) for c in self.tip_local)))
    return t.x, t.y

  def observe(self, model, packed, task):
    qpos, qvel = joint_coords(model, packed)
    tx, ty = self.tip(packed)
    return Tensor.stack(qpos[:, 0].cos(), qpos[:, 1].cos(), qpos[:, 0].sin(), qpos[:, 1].sin(), task[:, 0], task[:, 1],
                        qvel[:, 0], qvel[:, 1], tx - task[:, 0], ty - task[:, 1], dim=-1)

  def reward(self, model, packed, task, ctrl):
    tx, ty = self.tip(packed)
    dist = ((tx - task[:, 0]).square() + (ty - task[:, 1]).square() + 1e-12).sqrt()
    return -dist - 0.1 * ctrl.square().sum(-1)
