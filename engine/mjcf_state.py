"""The state between MuJoCo and the engine (docs/mjcf.md "State between MuJoCo and the engine"): which MuJoCo body is
behind each scene body of a converted scene, each scene body's Model frame, and a MuJoCo state in maximal coordinates.
engine/accurate.py goes the other way. Split out of engine/mjcf.py (the converter)."""
from __future__ import annotations
import numpy as np
from engine.npquat import quat_conj, quat_mul


def _mujoco():
  from engine.mjcf import _mujoco as load
  return load()


def body_index(m, scene: dict) -> list[int]:
  """The MuJoCo body behind each scene body of a converted scene (the root of its merged bodies, same name)."""
  mujoco = _mujoco()
  out = []
  for b in scene["bodies"]:
    k = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, b["name"])
    out.append(k if k >= 0 else int(b["name"][len("body"):]))
  return out


def model_frames(scene: dict) -> tuple[np.ndarray, np.ndarray]:
  """Each scene body's Model frame at the scene's pose: (pos (nbody, 3), quat (nbody, 4)), float64."""
  from engine.scene import _bodies_and_geoms, load_scene_dict   # float64 numpy, no tensors
  arrays, _ = _bodies_and_geoms(load_scene_dict(scene))
  return arrays["body_pos0"], arrays["body_quat0"]


def frame_offsets(scene: dict, m, d0, frames: tuple[np.ndarray, np.ndarray] | None = None
                  ) -> list[tuple[int, np.ndarray, np.ndarray]]:
  """Per scene body: its MuJoCo root body's index and the body's Model frame (centre of mass and principal axes) in
  that MuJoCo body's frame at d0 (qpos0, where the scene's poses were taken), (position, quaternion) float64. The
  offset is constant: each scene body moves rigidly with its MuJoCo root body. frames: model_frames(scene)."""
  frames = model_frames(scene) if frames is None else frames
  return [(b, d0.xmat[b].reshape(3, 3).T @ (pos0 - d0.xpos[b]), quat_mul(quat_conj(d0.xquat[b]), quat0))
          for b, pos0, quat0 in zip(body_index(m, scene), *frames)]


def bodies_from_mujoco(scene: dict, m, d, d0, frames: tuple[np.ndarray, np.ndarray] | None = None
                       ) -> dict[str, np.ndarray]:
  """The scene bodies' maximal coordinates for MuJoCo's state d (kinematics done, mj_forward or mj_kinematics with
  velocities): pos and quat of each scene body's Model frame (its centre of mass and principal axes) and vel (of the
  centre of mass) and angvel, world frame, (nbody, 3 or 4) float64. d0: MuJoCo at qpos0 (frame_offsets). frames:
  model_frames(scene), for a caller that converts many states."""
  mujoco = _mujoco()
  out = {k: [] for k in ("pos", "quat", "vel", "angvel")}
  for b, rel_pos, rel_q in frame_offsets(scene, m, d0, frames):
    pos = d.xpos[b] + d.xmat[b].reshape(3, 3) @ rel_pos
    res = np.zeros(6)
    mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_BODY, b, res, 0)   # [angular, linear at xipos], world
    out["pos"].append(pos)
    out["quat"].append(quat_mul(d.xquat[b], rel_q))
    out["angvel"].append(res[:3])
    out["vel"].append(res[3:] + np.cross(res[:3], pos - d.xipos[b]))
  return {k: np.array(v) for k, v in out.items()}


def hinge_group_angles(axes: np.ndarray, e: np.ndarray) -> np.ndarray:
  """MuJoCo's qpos - qpos0 of a body's two or three hinges through one point (oracle/constraints/hinges.py) from the
  body's rotation e (3, 3) relative to its frame at qpos0, in that frame; axes (k, 3) the hinges' jnt_axis: the t with
  e = exp(t1 a1) exp(t2 a2) [exp(t3 a3)], the root of t2 nearer 0 (bench/study_hinges.py, claim 2)."""
  axes = axes / np.linalg.norm(axes, axis=1, keepdims=True)
  def rot(k, t):
    x = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
    return np.eye(3) + np.sin(t) * x + (1.0 - np.cos(t)) * (x @ x)
  def about(k, a, b):
    a, b = a - k * (k @ a), b - k * (k @ b)
    return float(np.arctan2(k @ np.cross(a, b), a @ b))
  if len(axes) == 2:
    a1, a2 = axes
    return np.array([about(a1, a2, e @ a2), about(a2, e.T @ a1, a1)])
  a1, a2, a3 = axes
  r = (a1 @ a2) * (a2 @ a3)
  p, q = a1 @ a3 - r, a1 @ np.cross(a2, a3)
  off = np.arccos(np.clip((a1 @ e @ a3 - r) / np.hypot(p, q), -1.0, 1.0))
  roots = (np.arctan2(q, p) + np.array([off, -off]) + np.pi) % (2 * np.pi) - np.pi
  t2 = float(roots[np.argmin(np.abs(roots))])
  t1 = about(a1, rot(a2, t2) @ a3, e @ a3)
  return np.array([t1, t2, about(a3, a1, (rot(a1, t1) @ rot(a2, t2)).T @ e @ a1)])

