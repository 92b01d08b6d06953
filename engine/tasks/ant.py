"""Ant (Gymnasium's Ant-v5 layout on XPBD contacts): a free 0.25 m sphere torso (2.5 kg) with four legs at 45, 135,
225 and 315 deg, each a thigh capsule (0.3 m, 1 kg) on a yaw hip (z axis, +-0.5 rad) and a shin capsule (0.6 m,
1.5 kg) on a knee about the horizontal axis z x leg; a positive knee angle turns the shin down. Motors of gear 15 N m
on all eight hinges, ctrl in [-1, 1]. 1000 steps of 0.02 s.

The rest pose (qpos = 0) stands the ant on its feet, 0.5 mm above the ground, with the knees bent 0.502 rad, just
inside their 0.5 rad lower limit: with no torque the load turns each knee onto that limit, which then carries the
body (as MuJoCo's ant rests on its ankle limits), so the ant stands with zero action. Knee range [0.5, 1.2] rad of
bend, i.e. [-0.002, 0.698] from the rest pose. A knee at full torque lifts 23 % of the ant's weight from the rest pose
(12.5 kg, feet 0.527 m out from the knees): all four lift the body, a diagonal pair cannot, and an open-loop trot walks
at ~0.3 m/s. The torso (0.1 kg m^2) and the legs (0.1 and 0.3 kg m^2) carry isotropic inertia above their solid
values, like MuJoCo's joint armature: the hinge's axis alignment is one scalar correction along the error, which on a
rod with a small inertia about its own axis overshoots every substep (with the capsules' own inertia the thighs
rock about their axes at ~15 rad/s and the torso sinks 5 cm); the larger inertia also cuts the joints' static error
under the body's weight (XPBD Jacobi, one iteration), so the torso settles 7.5 mm below its start.
contact.pair_capacity = 4 per geom-type pair: the torso can meet its 4 shins, and leg-leg capsule pairs came up once
in 2,000 random-action env-steps (the default, all 24 pairs of 2 slots, made a 64-env step ~30 % slower).

reward = v_x + 1 (while healthy) - 0.5 |u|^2 (Ant-v5 without the contact cost; v_x is the torso's velocity).
terminated: torso height outside [0.26, 1] m (0.25 m is the torso lying on the ground) or the torso upside down.
obs = [z (1), torso quaternion (4), torso velocity (3), torso angular velocity (3), qpos (8), qvel (8)], hinges in
scene order (hip, knee per leg: front left, back left, back right, front right).
"""
from __future__ import annotations
from tinygrad import Tensor
from engine.tasks import Task, uniform
from oracle.joints import joint_coords
from oracle.math3 import const
from oracle.packed import ANGVEL, POS, QUAT, VEL

Z_RANGE = (0.26, 1.0)   # [m] healthy torso heights
HIP_NOISE = 0.1         # [rad] reset noise on the hip angles (Ant-v5's reset_noise_scale)
QVEL_NOISE = 0.1        # [rad/s] reset noise on every hinge rate
# the knees start at their rest angle: the torso keeps its scene pose at reset, so a knee offset would push the foot
# into the ground or lift it (0.53 mm per mrad), and the ant would drop that much on landing


class Ant(Task):
  name, scene, max_episode_steps, obs_size, n_random = "ant", "ant.json", 1000, 27, 16

  def __init__(self, model):
    super().__init__(model)
    self.torso = model.body_index("torso")
    self.hip_mask = [float(n.endswith("_hip")) for n in model.jnt_name]

  def init(self, model, u):
    qpos = uniform(u[:, 0:8], -HIP_NOISE, HIP_NOISE) * const(self.hip_mask, u)
    return qpos, uniform(u[:, 8:16], -QVEL_NOISE, QVEL_NOISE), u[:, 0:0]

  def observe(self, model, packed, task):
    qpos, qvel = joint_coords(model, packed)
    t = packed[:, self.torso]
    return Tensor.cat(t[:, POS][:, 2:3], t[:, QUAT], t[:, VEL], t[:, ANGVEL], qpos, qvel, dim=-1)

  def healthy(self, packed) -> Tensor:
    t = packed[:, self.torso]
    z, q = t[:, 2], t[:, QUAT]
    up = 1.0 - 2.0 * (q[:, 1].square() + q[:, 2].square())   # world z component of the torso's z axis
    return (z >= Z_RANGE[0]) & (z <= Z_RANGE[1]) & (up >= 0.0)

  def reward(self, model, packed, task, ctrl):
    forward = packed[:, self.torso, VEL][:, 0]
    return forward + self.healthy(packed).where(1.0, 0.0) - 0.5 * ctrl.square().sum(-1)

  def terminated(self, model, packed, task):
    return ~self.healthy(packed)
