"""Pendulum swing-up (Gymnasium's Pendulum-v1 on the XPBD hinge): a 1 kg, 1 m rod on a hinge, a motor of at most
2 N m (action u in [-1, 1], gear 2), less than the 4.9 N m gravity can exert, so it must swing up. theta = 0
upright. reward = -(theta^2 + 0.1 theta_dot^2 + 0.001 tau^2), tau = 2 u; 200 steps of 0.05 s, never terminated.
obs = [cos theta, sin theta, theta_dot]."""
from __future__ import annotations
import math
from tinygrad import Tensor
from engine.tasks import Task, uniform
from oracle.joints import joint_coords


class PendulumSwingup(Task):
  name, scene, max_episode_steps, obs_size, n_random = "pendulum_swingup", "pendulum_swingup.json", 200, 3, 2

  def init(self, model, u):
    return uniform(u[:, 0:1], -math.pi, math.pi), uniform(u[:, 1:2], -1.0, 1.0), u[:, 0:0]

  def observe(self, model, packed, task):
    qpos, qvel = joint_coords(model, packed)
    return Tensor.stack(qpos[:, 0].cos(), qpos[:, 0].sin(), qvel[:, 0], dim=-1)

  def reward(self, model, packed, task, ctrl):
    qpos, qvel = joint_coords(model, packed)
    return -(qpos[:, 0].square() + 0.1 * qvel[:, 0].square() + 0.004 * ctrl[:, 0].square())
