"""Cart-pole balance (Barto, Sutton & Anderson 1983; Gymnasium's CartPole-v1 with a continuous force).

A 1 kg cart on a slide joint pushed by a motor of gear 10 N, a 0.1 kg, 1 m pole on a hinge. Reward 1 per step alive,
terminated when the pole leans more than 0.2 rad or the cart leaves |x| <= 2.4 m, truncated after 500 steps.
obs = [x, theta, x_dot, theta_dot] with theta = 0 upright, positive when the pole leans towards +x.
"""
from __future__ import annotations
from tinygrad import Tensor
from engine.tasks import Task, uniform
from oracle.joints import joint_coords

ANGLE_LIMIT, X_LIMIT = 0.2, 2.4


class CartPole(Task):
  name, scene, max_episode_steps, obs_size, n_random = "cartpole", "cartpole.json", 500, 4, 4

  def init(self, model, u):
    q = uniform(u, -0.05, 0.05)             # Gymnasium's initial state: every coordinate in U(-0.05, 0.05)
    return q[:, 0:2], q[:, 2:4], q[:, 0:0]

  def observe(self, model, packed, task):
    qpos, qvel = joint_coords(model, packed)
    # the hinge axis is +y: a rotation by +phi about it tips the pole towards +x, so theta = +phi
    return Tensor.stack(qpos[:, 0], qpos[:, 1], qvel[:, 0], qvel[:, 1], dim=-1)

  def reward(self, model, packed, task, ctrl):
    return packed[:, 0, 0] * 0.0 + 1.0

  def terminated(self, model, packed, task):
    obs = self.observe(model, packed, task)
    return (obs[:, 1].abs() > ANGLE_LIMIT) | (obs[:, 0].abs() > X_LIMIT)
