"""--accurate (issue 19): advance a batch of this engine's States by one step through MuJoCo's C library (the `mujoco`
bindings), for the step where a researcher wants MuJoCo's answer rather than XPBD's. Gradients stop here: the result
is a new State built from numpy, with no graph behind it.

The scene's MuJoCo model is its MJCF file (a scene loaded from .xml) or the MJCF engine/mjcf_write.py writes for it,
whose timestep is the scene's dt; one call is one mj_step. State moves between the two descriptions (docs/mjcf.md):
- maximal -> generalised (`generalised`): each MuJoCo body moves rigidly with its scene body, from the offset it had at
  qpos0 (where the scene's poses were taken). A free joint's qpos is its body's frame; a hinge's angle, a slide's
  offset and a ball's quaternion are the child's pose relative to its parent's beyond their qpos0 relation (MuJoCo's
  mj_kinematics read backwards). qvel is the least-squares solution of J qvel = (v, w) over every body (mj_jacBody):
  exact when the bodies' velocities respect the joints, their projection onto the joints' motions otherwise.
- generalised -> maximal: engine.mjcf.bodies_from_mujoco.
Muscle activations are MuJoCo's act (both in actuator order); controls are MuJoCo's ctrl.
"""
from __future__ import annotations
from pathlib import Path
import numpy as np
from tinygrad import Tensor
from tinygrad.dtype import _to_np_dtype
from engine.mjcf import FREE, HINGE, SLIDE, _mujoco, bodies_from_mujoco, body_index, compile_mjcf, from_mjcf, \
  model_frames
from engine.npquat import quat_conj, quat_mul, quat_rotate
from oracle.types import State


class MuJoCoStep:
  """`MuJoCoStep(scene)(state, ctrl)`: the State one env-step later, as MuJoCo steps it. scene: a path (.json or .xml)
  or a scene dict."""

  def __init__(self, scene):
    from engine.scene import load_scene_dict
    mujoco = _mujoco()
    if isinstance(scene, (str, Path)) and Path(scene).suffix.lower() == ".xml":
      self.m, _ = compile_mjcf(scene)
      self.scene = load_scene_dict(from_mjcf(scene))
    else:
      from engine.mjcf_write import to_mjcf
      self.scene = load_scene_dict(scene)
      self.m = mujoco.MjModel.from_xml_string(to_mjcf(self.scene))
    m = self.m
    self.d0, self.d = mujoco.MjData(m), mujoco.MjData(m)
    mujoco.mj_kinematics(m, self.d0)
    self.frames = model_frames(self.scene)
    pos0, quat0 = self.frames
    # each MuJoCo body's frame relative to its scene body's Model frame at qpos0 (rigid ever after)
    roots = {r: s + 1 for s, r in enumerate(body_index(m, self.scene))}
    self.group = [0] * m.nbody   # 1 + the scene body of each MuJoCo body (a welded one's is its parent's); world 0
    for b in range(1, m.nbody): self.group[b] = roots.get(b, self.group[m.body_parentid[b]])
    self.offset = [(np.zeros(3), np.array([1.0, 0.0, 0.0, 0.0]))]
    for b in range(1, m.nbody):
      s = self.group[b] - 1
      inv = quat_conj(quat0[s])
      self.offset.append((quat_rotate(inv, self.d0.xpos[b] - pos0[s]), quat_mul(inv, self.d0.xquat[b])))

  def __call__(self, state: State, ctrl=None) -> State:
    mujoco, m, d = _mujoco(), self.m, self.d
    keys = ("body_pos", "body_quat", "body_vel", "body_angvel")
    arr = {k: getattr(state, k).numpy().astype(np.float64) for k in keys}
    act = None if state.act is None else state.act.numpy().astype(np.float64)
    u = None if ctrl is None else np.asarray(ctrl.numpy() if isinstance(ctrl, Tensor) else ctrl, np.float64)
    batch = arr["body_pos"].shape[0]
    if u is not None and u.shape != (batch, m.nu):
      raise ValueError(f"ctrl: expected shape ({batch}, {m.nu}) (batch, actuators), got {u.shape}")
    out = {k: np.empty_like(v) for k, v in arr.items()}
    act_out = None if act is None else np.empty_like(act)
    for e in range(batch):
      mujoco.mj_resetData(m, d)
      d.qpos[:], d.qvel[:] = self.generalised(*(arr[k][e] for k in keys))
      if u is not None: d.ctrl[:] = u[e]
      if act is not None: d.act[:] = act[e]
      mujoco.mj_step(m, d)
      mujoco.mj_forward(m, d)   # positions and velocities of the new state, for the maximal map
      bodies = bodies_from_mujoco(self.scene, m, d, self.d0, self.frames)
      for k in out: out[k][e] = bodies[k.removeprefix("body_")]
      if act is not None: act_out[e] = d.act
    like = state.body_pos
    def t(a): return Tensor(a.astype(_to_np_dtype(like.dtype)), dtype=like.dtype, device=like.device)
    return state.replace(**{k: t(v) for k, v in out.items()}, time=state.time.detach() + self.scene["dt"],
                         act=None if act is None else t(act_out))

  def generalised(self, pos, quat, vel, angvel) -> tuple[np.ndarray, np.ndarray]:
    """(qpos, qvel) of one env's maximal state (Model frames: pos/quat of each scene body's centre of mass and
    principal axes, vel of its centre of mass, angvel, world frame)."""
    mujoco, m, d = _mujoco(), self.m, self.d
    xpos, xquat = [np.zeros(3)], [np.array([1.0, 0.0, 0.0, 0.0])]
    for b in range(1, m.nbody):   # every MuJoCo body's frame, carried by its scene body
      s, (rel_pos, rel_q) = self.group[b] - 1, self.offset[b]
      xpos.append(pos[s] + quat_rotate(quat[s], rel_pos))
      xquat.append(quat_mul(quat[s], rel_q))
    qpos = m.qpos0.copy()
    several = [b for b in range(1, m.nbody) if m.body_jntnum[b] > 1]   # planar joints: two slides and a hinge
    for j in range(m.njnt):
      b, a = int(m.jnt_bodyid[j]), int(m.jnt_qposadr[j])
      if b in several and m.jnt_type[j] == SLIDE: continue   # below, once the hinge is set
      p = int(m.body_parentid[b])
      kind, frame = int(m.jnt_type[j]), quat_mul(xquat[p], m.body_quat[b])   # the child's frame at qpos = qpos0
      if kind == FREE:
        qpos[a:a + 3], qpos[a + 3:a + 7] = xpos[b], xquat[b]
      elif kind == HINGE:
        r = quat_mul(quat_conj(frame), xquat[b])
        qpos[a] += 2.0 * np.arctan2(r[1:] @ m.jnt_axis[j], r[0])
      elif kind == SLIDE:
        rest = xpos[p] + quat_rotate(xquat[p], m.body_pos[b])
        qpos[a] += (xpos[b] - rest) @ quat_rotate(frame, m.jnt_axis[j])
      else:   # ball: the child's rotation relative to its qpos0 frame
        r = quat_mul(quat_conj(frame), xquat[b])
        qpos[a:a + 4] = r / np.linalg.norm(r)
    # parents first (MuJoCo's body order): the slides move the body frame by sum q_k xaxis_k, exactly
    for b in several:
      d.qpos[:] = qpos
      mujoco.mj_kinematics(m, d)
      slides = [j for j in range(m.njnt) if m.jnt_bodyid[j] == b and m.jnt_type[j] == SLIDE]
      delta = np.linalg.lstsq(d.xaxis[slides].T, xpos[b] - d.xpos[b], rcond=None)[0]
      for j, dq in zip(slides, delta): qpos[m.jnt_qposadr[j]] += dq
    d.qpos[:] = qpos
    mujoco.mj_kinematics(m, d)
    mujoco.mj_comPos(m, d)
    rows, target = [], []
    for b in range(1, m.nbody):
      s = self.group[b] - 1
      jacp, jacr = np.zeros((3, m.nv)), np.zeros((3, m.nv))
      mujoco.mj_jacBody(m, d, jacp, jacr, b)   # at the body frame's origin xpos
      rows += [jacp, jacr]
      target += [vel[s] + np.cross(angvel[s], d.xpos[b] - pos[s]), angvel[s]]
    qvel = np.linalg.lstsq(np.concatenate(rows), np.concatenate(target), rcond=None)[0] if m.nv else np.zeros(0)
    return qpos, qvel
