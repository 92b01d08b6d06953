"""--accurate (issue 19): advance a batch of this engine's States by one step through MuJoCo's C library (the `mujoco`
bindings), for the step where a researcher wants MuJoCo's answer rather than XPBD's. Gradients stop here: the result
is a new State built from numpy, with no graph behind it.

The scene's MuJoCo model is its MJCF file (a scene loaded from .xml) or the MJCF engine/mjcf_write.py writes for it,
whose timestep is the scene's dt; one call is one mj_step. State moves between the two descriptions (docs/mjcf.md):
- maximal -> generalised (`generalised`): each MuJoCo body moves rigidly with its scene body, from the offset it had at
  qpos0 (where the scene's poses were taken). A free joint's qpos is its body's frame; a hinge's angle, a slide's
  offset and a ball's quaternion are the child's pose relative to its parent's beyond their qpos0 relation (MuJoCo's
  mj_kinematics read backwards; two or three hinges on one body: the angles that compose that relative turn,
  engine.mjcf_state.hinge_group_angles). qvel is the least-squares solution of J qvel = (v, w) over every body
  (mj_jacBody): exact when the bodies' velocities respect the joints, their projection onto the joints' motions
  otherwise.
- generalised -> maximal: engine.mjcf.bodies_from_mujoco.
Muscle activations are MuJoCo's act (both in actuator order); controls are MuJoCo's ctrl.

The step itself runs in MuJoCo's C library env by env, or in MJX (`mujoco.mjx`, `pip install 'tinyxpbd[mjx]'`), the
whole batch in one jax.vmap'd, jitted mjx.step: backend="mjx", or "auto" (the default), which takes MJX when it is
installed and jax has an accelerator (on a CPU, MuJoCo's C step is the faster: MJX's first call compiles for seconds).
MJX computes in jax's precision (float32 unless jax_enable_x64 is set) and refuses what it does not implement
(mjx.put_model's NotImplementedError): "auto" then steps in C, "mjx" raises MJXUnavailable with MJX's reason. The
maps above run in C either way.
"""
from __future__ import annotations
import contextlib
import io
from pathlib import Path
import numpy as np
from tinygrad import Tensor
from tinygrad.dtype import _to_np_dtype
from engine.mjcf import FREE, HINGE, SLIDE, _mujoco, bodies_from_mujoco, body_index, compile_mjcf, from_mjcf, \
  model_frames
from engine.mjcf_state import hinge_group_angles
from engine.npquat import quat_conj, quat_mul, quat_rotate, quat_to_mat
from oracle.types import State


class MuJoCoStep:
  """`MuJoCoStep(scene)(state, ctrl)`: the State one env-step later, as MuJoCo steps it. scene: a path (.json or .xml)
  or a scene dict. backend: "c" (MuJoCo's C library), "mjx" or "auto" (module docstring); `self.backend` says which
  one steps."""

  def __init__(self, scene, backend: str = "auto"):
    if backend not in BACKENDS: raise ValueError(f"backend: expected one of {', '.join(BACKENDS)}, got {backend!r}")
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
    self.backend, self._mjx = "c", None
    if backend != "c": self._mjx = _mjx_step(m, required=backend == "mjx")
    if self._mjx is not None: self.backend = "mjx"

  def __call__(self, state: State, ctrl=None) -> State:
    mujoco, m, d = _mujoco(), self.m, self.d
    keys = ("body_pos", "body_quat", "body_vel", "body_angvel")
    arr = {k: getattr(state, k).numpy().astype(np.float64) for k in keys}
    act = None if state.act is None else state.act.numpy().astype(np.float64)
    u = None if ctrl is None else np.asarray(ctrl.numpy() if isinstance(ctrl, Tensor) else ctrl, np.float64)
    batch = arr["body_pos"].shape[0]
    if u is not None and u.shape != (batch, m.nu):
      raise ValueError(f"ctrl: expected shape ({batch}, {m.nu}) (batch, actuators), got {u.shape}")
    start = [self.generalised(*(arr[k][e] for k in keys)) for e in range(batch)]
    qpos, qvel = np.stack([q for q, _ in start]), np.stack([v for _, v in start])
    u = np.zeros((batch, m.nu)) if u is None else u
    a = np.zeros((batch, m.na)) if act is None else act
    qpos, qvel, a = (self._mjx or self._c_step)(qpos, qvel, u, a)
    out = {k: np.empty_like(v) for k, v in arr.items()}
    for e in range(batch):
      mujoco.mj_resetData(m, d)
      d.qpos[:], d.qvel[:] = qpos[e], qvel[e]
      mujoco.mj_forward(m, d)   # positions and velocities of the new state, for the maximal map
      bodies = bodies_from_mujoco(self.scene, m, d, self.d0, self.frames)
      for k in out: out[k][e] = bodies[k.removeprefix("body_")]
    like = state.body_pos
    def t(a): return Tensor(a.astype(_to_np_dtype(like.dtype)), dtype=like.dtype, device=like.device)
    return state.replace(**{k: t(v) for k, v in out.items()}, time=state.time.detach() + self.scene["dt"],
                         act=None if act is None else t(a))

  def _c_step(self, qpos, qvel, ctrl, act) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One mj_step per env, each from reset data (time 0, no warm start), as MJX's make_data gives."""
    mujoco, m, d = _mujoco(), self.m, self.d
    out = [np.empty_like(qpos), np.empty_like(qvel), np.empty_like(act)]
    for e in range(len(qpos)):
      mujoco.mj_resetData(m, d)
      d.qpos[:], d.qvel[:], d.ctrl[:] = qpos[e], qvel[e], ctrl[e]
      if act.shape[1]: d.act[:] = act[e]
      mujoco.mj_step(m, d)
      out[0][e], out[1][e], out[2][e] = d.qpos, d.qvel, d.act
    return out[0], out[1], out[2]

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
    several = [b for b in range(1, m.nbody) if m.body_jntnum[b] > 1]
    hinged = [b for b in several if all(m.jnt_type[j] == HINGE for j in range(m.njnt) if m.jnt_bodyid[j] == b)]
    planar = [b for b in several if b not in hinged]   # planar joints: two slides and a hinge, or two slides
    for b in hinged:   # two or three hinges: their angles at once (the converter's hinge groups)
      joints = [j for j in range(m.njnt) if m.jnt_bodyid[j] == b]
      frame = quat_mul(xquat[int(m.body_parentid[b])], m.body_quat[b])
      e = quat_to_mat(quat_mul(quat_conj(frame), xquat[b]))
      qpos[[m.jnt_qposadr[j] for j in joints]] += hinge_group_angles(m.jnt_axis[joints], e)
    for j in range(m.njnt):
      b, a = int(m.jnt_bodyid[j]), int(m.jnt_qposadr[j])
      # a group's hinges are set above; a planar body's slides below, once its hinge is set
      if b in hinged or (b in planar and m.jnt_type[j] == SLIDE): continue
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
    for b in planar:
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


BACKENDS = ("auto", "c", "mjx")


class MJXUnavailable(RuntimeError):
  """backend="mjx" where MJX is not installed or does not implement the model."""


def _mjx_step(m, required: bool):
  """The batch's step through MJX, (qpos, qvel, ctrl, act) -> the same one step later (numpy float64), or None where
  MJX is not installed, jax has no accelerator (unless `required`) or MJX does not implement the model (which
  `required` raises, with MJX's reason)."""
  try:
    import jax
    if not required and jax.default_backend() == "cpu": return None
    with contextlib.redirect_stdout(io.StringIO()):   # MJX prints that its optional Warp backend is missing
      from mujoco import mjx
  except ImportError:
    if required: raise MJXUnavailable("backend='mjx' needs MJX: pip install 'tinyxpbd[mjx]'") from None
    return None
  try:
    mx = mjx.put_model(m)
  except NotImplementedError as e:
    if required: raise MJXUnavailable(f"MJX cannot step this model: {e}") from None
    return None
  dx = mjx.make_data(mx)
  step = jax.jit(jax.vmap(lambda qpos, qvel, ctrl, act: mjx.step(mx, dx.replace(qpos=qpos, qvel=qvel, ctrl=ctrl,
                                                                                 act=act))))
  def run(qpos, qvel, ctrl, act):
    d = step(*(jax.numpy.asarray(x, dtype=dx.qpos.dtype) for x in (qpos, qvel, ctrl, act)))
    return tuple(np.asarray(x, np.float64) for x in (d.qpos, d.qvel, d.act))
  return run
