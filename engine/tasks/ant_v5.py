"""Ant-v5 on Gymnasium's own ant.xml (gymnasium/envs/mujoco/assets/ant.xml through the MJCF converter, engine/mjcf.py:
needs `tinyxpbd[gym,mjcf]`). Its 0.01 s MuJoCo step runs FRAME_SKIP = 5 times per env-step, as Ant-v5's frame_skip
does: one env-step is 0.05 s, 480 substeps of the converter's 1/9600 s, with the joints' armature of 1
(oracle/armature.py). engine/tasks/ant.py is the engine's own ant (its scene file, heavier legs with inflated
inertia, 0.02 s steps on 10 substeps): far cheaper. Both are differentiable through the WGSL kernel (this one's
armature through kernels/adjoint/armature.wgsl).

As Ant-v5 (gymnasium/envs/mujoco/ant_v5.py, default arguments):
- obs (27) = MuJoCo's qpos[2:] then qvel: torso height and quaternion (the torso body's frame, not its principal
  axes), the 8 hinge angles; the torso's velocity (world frame) and angular velocity (the torso's frame, as MuJoCo's
  free joint), the 8 hinge rates. Hinges in ant.xml's order (hip_1, ankle_1, .. hip_4, ankle_4);
- reward = healthy 1 + forward velocity - 0.5 |u|^2, ctrl in [-1, 1] (ant.xml's gear 150);
- terminated when the torso leaves healthy_z_range [0.2, 1]; 1000 steps.
Where it differs, and why:
- ant.xml's contact margin (0.01 m) is dropped, and the converter says so (engine/mjcf_contacts.py): MuJoCo holds
  touching surfaces that far apart, this engine lets them touch. MuJoCo's own ant stands 13 mm taller for it (its
  torso at rest after 3 s: 0.543 m, 0.530 m with the margin zeroed; MuJoCo 3.3.7);
- no contact forces in obs and no contact cost (include_cfrc_ext_in_observation, contact_cost_weight 5e-4): the XPBD
  contacts do not produce MuJoCo's cfrc_ext;
- the forward velocity is the torso's x velocity at the step's end; Ant-v5 divides the step's displacement by dt (a
  task sees the state a step ends in, not where it began);
- reset noise on the hinges only: angles uniform in +-0.1 rad, rates uniform with Ant-v5's standard deviation 0.1
  (+-0.1 sqrt 3; Ant-v5 draws them normal). The torso starts at its reference pose, at rest (the env draws joint
  coordinates, and the free root is a body). Each angle is then clipped into its joint's range: the ankles' range
  [30, 70] deg excludes the reference angle 0, which MuJoCo's soft limit pushes back over a few steps and this
  engine's hard limit would project in one substep (engine.kinematics.start_pose does the same for a Simulator).
"""
from __future__ import annotations
import math
from pathlib import Path
import numpy as np
from tinygrad import Tensor
from engine.npquat import quat_conj, quat_rotate
from engine.tasks import Task, uniform
from oracle.joints import joint_coords
from oracle.math3 import V3, Quat, const
from oracle.packed import ANGVEL, POS, QUAT, VEL

FRAME_SKIP = 5           # MuJoCo steps per env-step (Ant-v5's frame_skip)
Z_RANGE = (0.2, 1.0)     # [m] healthy torso heights (Ant-v5's healthy_z_range)
RESET_NOISE = 0.1        # Ant-v5's reset_noise_scale: qpos uniform +-0.1, qvel with standard deviation 0.1
CTRL_COST = 0.5          # Ant-v5's ctrl_cost_weight


def ant_xml() -> Path:
  from engine.mjcf import gym_asset
  return gym_asset("ant")


class AntV5(Task):
  name, max_episode_steps, obs_size, n_random = "ant_v5", 1000, 27, 16

  @classmethod
  def scene_source(cls) -> dict:
    from engine.mjcf import from_mjcf
    scene = from_mjcf(ant_xml())
    scene["name"], scene["dt"], scene["substeps"] = "ant_v5", scene["dt"] * FRAME_SKIP, scene["substeps"] * FRAME_SKIP
    return scene

  def __init__(self, model):
    super().__init__(model)
    from engine.mjcf import compile_mjcf
    from engine.mjcf_state import frame_offsets
    m, d0 = compile_mjcf(ant_xml())
    b = model.body_index("torso")
    # the torso body's frame in its Model frame (the inverse of frame_offsets'): q_body = q_model * q_rel, the body's
    # origin at x_model + R(q_model) r_rel
    _, rel_pos, rel_q = frame_offsets(self.scene_source(), m, d0)[b]
    self.q_rel = quat_conj(rel_q)
    self.r_rel = -quat_rotate(self.q_rel, rel_pos)
    rng, limited = model.jnt_range.numpy().astype(np.float64), model.jnt_limited.numpy().astype(bool)
    self.body, self.lo, self.hi = b, np.where(limited, rng[:, 0], -np.inf).tolist(), \
      np.where(limited, rng[:, 1], np.inf).tolist()

  def init(self, model, u):
    qpos = uniform(u[:, 0:8], -RESET_NOISE, RESET_NOISE)
    qpos = qpos.maximum(const(self.lo, u)).minimum(const(self.hi, u))
    qvel = uniform(u[:, 8:16], -math.sqrt(3) * RESET_NOISE, math.sqrt(3) * RESET_NOISE)
    return qpos, qvel, u[:, 0:0]

  def torso_coords(self, packed: Tensor) -> tuple[V3, Quat, V3, V3]:
    """The torso body's origin, frame quaternion, the origin's velocity (world) and the angular velocity in the
    torso's frame: MuJoCo's free-joint qpos and qvel."""
    t = packed[:, self.body]
    x, q, v, w = V3.of(t[:, POS]), Quat.of(t[:, QUAT]), V3.of(t[:, VEL]), V3.of(t[:, ANGVEL])
    r = q.rotate(V3(*(float(c) for c in self.r_rel)))
    q_body = q * Quat(*(float(c) for c in self.q_rel))
    return x + r, q_body, v + w.cross(r), q_body.inv_rotate(w)

  def observe(self, model, packed, task):
    qpos, qvel = joint_coords(model, packed)
    x, q, v, w = self.torso_coords(packed)
    return Tensor.cat(x.z.unsqueeze(-1), q.stack(), qpos, v.stack(), w.stack(), qvel, dim=-1)

  def healthy(self, packed) -> Tensor:
    z = self.torso_coords(packed)[0].z
    return (z >= Z_RANGE[0]) & (z <= Z_RANGE[1])

  def reward(self, model, packed, task, ctrl):
    forward = self.torso_coords(packed)[2].x
    return forward + self.healthy(packed).where(1.0, 0.0) - CTRL_COST * ctrl.square().sum(-1)

  def terminated(self, model, packed, task):
    return ~self.healthy(packed)
