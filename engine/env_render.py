"""Frames of a VecEnv's envs, drawn by engine/render.py's ray caster (render_frames): uint8 numpy on the host.

Every env is seen from one fixed camera: the task scene's "camera", or, for a scene without one, render's automatic 3/4
view fitted to the scene's rest pose. It stays put over time so that motion shows (render_frames' own automatic
camera, fitted to each one-frame call, would follow the bodies and hide it); a body that walks out of that view
leaves the frame.
"""
from __future__ import annotations
import math
import numpy as np
from engine.render import FOV, _auto_camera, _geom_poses, geom_arrays, overlays_of, render_frames
from engine.render_geom import bound_extent

SIZE = (320, 240)   # [px] width, height of one env's view (~30 ms each on one core)
GRID_ENVS = 4       # how many envs VecEnv.render() shows when it is not told which


def check_size(size) -> tuple[int, int]:
  """(width, height) [px] of one env's view; render_frames needs tiles of at least 8 x 8."""
  if not (isinstance(size, (tuple, list)) and len(size) == 2
          and all(isinstance(v, int) and not isinstance(v, bool) and v >= 8 for v in size)):
    raise ValueError(f"render_size: expected (width, height), ints >= 8 [px], got {size!r}")
  return int(size[0]), int(size[1])


class EnvRenderer:
  """Views of one model's envs. camera: {"pos", "target", "fov"} (a scene's "camera") or None (fitted at rest)."""

  def __init__(self, model, camera: dict | None, size=SIZE):
    self.model, self.geom, self.size = model, geom_arrays(model), check_size(size)
    self.camera = dict(camera) if camera else rest_camera(model, self.geom, *self.size)

  def views(self, pos: np.ndarray, quat: np.ndarray) -> list[np.ndarray]:
    """One (height, width, 3) frame per env of pos (k, nbody, 3), quat (k, nbody, 4)."""
    w, h = self.size
    return [self._draw(pos[i:i + 1], quat[i:i + 1], w, h) for i in range(len(pos))]

  def grid(self, pos: np.ndarray, quat: np.ndarray) -> np.ndarray:
    """The k envs' views in one (rows * height, cols * width, 3) image, row by row in a near-square grid
    (render_frames' layout, a thin grey line closing each tile when k > 1)."""
    cols = math.ceil(math.sqrt(len(pos)))
    w, h = self.size
    return self._draw(pos, quat, cols * w, math.ceil(len(pos) / cols) * h)

  def _draw(self, pos, quat, width: int, height: int) -> np.ndarray:
    pos, quat = pos[None], quat[None]   # one frame of a (T, B, nbody, .) trajectory
    # the joints' strings, links and pins and the tendons, as render_model_frames draws them (with the geom arrays
    # built once per renderer rather than per frame)
    return render_frames(self.geom, pos, quat, width, height, self.camera, overlays_of(self.model, pos, quat))[0]


def rest_camera(model, geom: dict, width: int, height: int) -> dict:
  """render's automatic 3/4 view of the scene at rest (body_pos0, body_quat0) for a (width, height) view, as a camera
  dict for render_frames."""
  bp, bq = model.body_pos0.numpy()[None, None], model.body_quat0.numpy()[None, None]   # (T=1, B=1, nbody, .)
  kinds = tuple(geom["geom_type"])
  gbody = np.asarray(geom["geom_body"], np.int64).reshape(len(kinds))
  C, _ = _geom_poses(bp, bq, gbody, np.asarray(geom["geom_pos"], np.float32)[None],
                     np.asarray(geom["geom_quat"], np.float32)[None])
  plane = np.array([k == "plane" for k in kinds], bool)
  ext = np.array([bound_extent(k, s) if k != "plane" else np.full(3, np.nan)
                  for k, s in zip(kinds, np.asarray(geom["geom_size"], np.float32))], np.float32).reshape(-1, 3)
  cam = _auto_camera(bp[:, 0], C[:, 0], ext, plane, width, height)
  return {"pos": cam.pos.tolist(), "target": (cam.pos + cam.fwd * cam.dist).tolist(), "fov": FOV}
