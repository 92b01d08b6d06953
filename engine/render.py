"""CPU renderer for trajectories: analytic ray casting in float32 numpy, tiled over envs, written out as GIFs.

One primary ray per pixel is cast against every geom, but only over the screen rectangle that the geom's bounding
box projects to, so the cost follows the pixels a geom covers rather than pixels x geoms. Hard shadows cast one ray per
lit pixel towards a directional light, again only against geoms whose bounding sphere the ray can pass through.
Shading is Lambert + hemisphere ambient + Blinn specular, with distance fog into a sky gradient; the ground plane gets
a 1 m checker with thin grid lines, filtered by the pixel footprint so it fades instead of aliasing far away.
"""
from __future__ import annotations

import math
import time

import numpy as np

from engine.render_geom import INF, as_trajectory, bound_extent, cast, normal, quat_to_mat
# joints_of, overlays_of and tendons_of are re-exported: callers take every drawing function from engine.render
from engine.render_lines import Lines, as_lines, draw_lines, joints_of, overlays_of, tendons_of  # noqa: F401

GEOM_KEYS = ("geom_type", "geom_body", "geom_pos", "geom_quat", "geom_size", "geom_rgba")
LIGHT = np.array([-0.45, -0.6, 1.0], np.float32) / np.float32(math.sqrt(0.45**2 + 0.6**2 + 1.0))  # towards the sun
SKY_ZENITH = np.array([0.42, 0.60, 0.86], np.float32)
SKY_HORIZON = np.array([0.86, 0.90, 0.95], np.float32)
BORDER = 30  # grey between and around tiles
AZIMUTH, ELEVATION, FOV = math.radians(-60.0), math.radians(24.0), 45.0  # automatic 3/4 view, front right


def geom_arrays(model) -> dict:
  """The geometry the renderer needs from an oracle.types.Model, as numpy arrays (static tuples as they are)."""
  return {k: (v.numpy() if hasattr(v, "numpy") else v) for k in GEOM_KEYS for v in [getattr(model, k)]}


def _unit(v):
  v = np.asarray(v, np.float32)
  return v / np.float32(max(float(np.linalg.norm(v)), 1e-12))


def _dot(a, b):
  """Dot product over the leading component axis; a (3,) constant broadcasts against (3, ...) arrays."""
  if a.ndim == 1: a = a.reshape((3,) + (1,) * (b.ndim - 1))
  if b.ndim == 1: b = b.reshape((3,) + (1,) * (a.ndim - 1))
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _per_env(x, B: int, G: int) -> np.ndarray:
  """(G, k) or (B|1, G, k) parameters -> (B, G, k) float32 (parameters may be randomised per env)."""
  a = np.asarray(x.numpy() if hasattr(x, "numpy") else x, np.float32)
  if a.ndim == 2: a = a[None]
  if a.shape[0] not in (1, B) or a.shape[1] != G: raise ValueError(f"geom parameter shape {a.shape} for B={B}, G={G}")
  return np.broadcast_to(a, (B,) + a.shape[1:])


def _geom_poses(bp, bq, gbody, gpos, gquat):
  """World centres (T, B, G, 3) and rotations (T, B, G, 3, 3) of every geom in every frame."""
  T, B = bp.shape[:2]
  G = len(gbody)
  Rg = np.broadcast_to(quat_to_mat(gquat), (T, B, G, 3, 3))
  C = np.broadcast_to(gpos, (T, B, G, 3)).copy()
  R = Rg.copy()
  att = np.flatnonzero(gbody >= 0)
  if att.size:
    Rb = quat_to_mat(bq[:, :, gbody[att]])
    C[:, :, att] = bp[:, :, gbody[att]] + np.einsum("tbgij,tbgj->tbgi", Rb, C[:, :, att])
    R[:, :, att] = Rb @ Rg[:, :, att]
  return C, R


class Camera:
  """Pinhole camera; `f` is the focal length in pixels for a tile of th rows."""
  def __init__(self, pos, target, fov: float, tw: int, th: int):
    self.pos = np.asarray(pos, np.float32)
    self.fwd = _unit(np.asarray(target, np.float32) - self.pos)
    right = np.cross(self.fwd, [0, 0, 1])
    if np.linalg.norm(right) < 1e-6: right = np.cross(self.fwd, [0, 1, 0])  # looking straight up or down
    self.right = _unit(right)
    self.up = np.cross(self.right, self.fwd).astype(np.float32)
    self.tw, self.th = tw, th
    self.f = np.float32(0.5 * th / math.tan(math.radians(fov) / 2))
    self.dist = float(np.linalg.norm(np.asarray(target, np.float32) - self.pos))

  def rays(self) -> np.ndarray:
    """Unit directions (3, th, tw) through the pixel centres, row 0 at the top."""
    x = (np.arange(self.tw, dtype=np.float32) + 0.5 - self.tw / 2) / self.f
    y = (self.th / 2 - np.arange(self.th, dtype=np.float32) - 0.5) / self.f
    d = (self.fwd[:, None, None] + self.right[:, None, None] * x[None, None, :]
         + self.up[:, None, None] * y[None, :, None])
    return (d / np.linalg.norm(d, axis=0, keepdims=True)).astype(np.float32)

  def project(self, P) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """World points (..., 3) -> (row, col, depth): fractional pixel coordinates in the tile (pixel centres are
    whole numbers, row 0 at the top) and the distance along the view axis (<= 0 behind the camera)."""
    rel = np.asarray(P, np.float32) - self.pos
    z = rel @ self.fwd
    with np.errstate(all="ignore"):
      return self.th / 2 - 0.5 - self.f * (rel @ self.up) / z, self.f * (rel @ self.right) / z + self.tw / 2 - 0.5, z

  def rects(self, C, R, ext) -> np.ndarray:
    """Pixel rectangles (..., 4) = (y0, y1, x0, x1) that contain each geom's projected bounding box.

    C (..., G, 3), R (..., G, 3, 3), ext (G, 3) half extents with NaN rows for planes (whole tile)."""
    signs = np.array([[i, j, k] for i in (-1, 1) for j in (-1, 1) for k in (-1, 1)], np.float32)
    corners = C[..., None, :] + np.einsum("...gij,gcj->...gci", R, signs[None] * ext[:, None])  # (..., G, 8, 3)
    row, col, z = self.project(corners)
    out = np.stack([np.floor(row.min(-1)), np.ceil(row.max(-1)) + 1,
                    np.floor(col.min(-1)), np.ceil(col.max(-1)) + 1], -1)
    out = np.nan_to_num(out, nan=0, posinf=1e6, neginf=-1e6)
    # a box reaching behind the camera projects unboundedly: test it against the whole tile (unless wholly behind)
    full = ((z.min(-1) < 1e-3) & (z.max(-1) > 0)) | np.isnan(ext[:, 0])
    out = np.where(full[..., None], [0, self.th, 0, self.tw], out)
    out = np.where((np.isfinite(C).all(-1) & (full | (z.min(-1) >= 1e-3)))[..., None], out, 0)  # blown up / behind
    return np.clip(out, 0, [self.th, self.th, self.tw, self.tw]).astype(np.int64)


def _auto_camera(bp, C, ext, plane, tw: int, th: int, extra=None, fov: float = FOV) -> Camera:
  """A 3/4 elevated view whose field of view holds the bounding sphere of everything (bodies, geoms, `extra` points
  (..., 3) such as the ends of the lines drawn) over the whole trajectory."""
  rad = np.linalg.norm(np.nan_to_num(ext), axis=-1)
  pts = np.concatenate([bp.reshape(-1, 3), C[:, ~plane].reshape(-1, 3)]
                       + ([] if extra is None else [np.asarray(extra, np.float32).reshape(-1, 3)]))
  pts = pts[np.isfinite(pts).all(-1)]
  if len(pts) == 0: pts = np.zeros((1, 3), np.float32)
  lo, hi = pts.min(0), pts.max(0)
  centre = (lo + hi) / 2
  r = float(np.linalg.norm(hi - lo) / 2 + (rad[~plane].max() if (~plane).any() else 0.0))
  r = max(1.2 * r, 1.0)  # some room around a single small object, so the ground and its shadow show too
  half = math.radians(fov) / 2
  fit = min(half, math.atan(math.tan(half) * tw / th))
  d = r / math.sin(fit)
  eye = centre + d * np.array([math.cos(ELEVATION) * math.cos(AZIMUTH), math.cos(ELEVATION) * math.sin(AZIMUTH),
                               math.sin(ELEVATION)], np.float32)
  return Camera(eye, centre, fov, tw, th)


def _sky(d: np.ndarray) -> np.ndarray:
  """Sky colour (3, ...) per ray direction: zenith blue to a pale horizon, a little darker below the horizon."""
  z = d[2][None]
  shape = (3,) + (1,) * (d.ndim - 1)
  c = SKY_HORIZON.reshape(shape) + (SKY_ZENITH - SKY_HORIZON).reshape(shape) * np.sqrt(np.clip(z, 0, 1))
  return (c * (1 - 0.25 * np.sqrt(np.clip(-z, 0, 1)))).astype(np.float32)


class Batch:
  """Renders one frame of all B envs at once into (B, th, tw) tiles, each env with its own fixed camera.

  Envs are an array axis rather than a Python loop, so 16 small tiles cost about what one big one does."""
  def __init__(self, kinds, size, rgba, ext, cams: list[Camera]):
    self.kinds, self.B, self.th, self.tw = kinds, len(cams), cams[0].th, cams[0].tw
    self.pos = np.stack([c.pos for c in cams], 1)[:, :, None, None]                    # (3, B, 1, 1)
    self.rd = np.stack([c.rays() for c in cams], 1)                                      # (3, B, th, tw)
    self.f = np.array([c.f for c in cams], np.float32)[:, None, None]                   # (B, 1, 1)
    # haze starts behind the target, so the scene keeps its colours and only the far ground fades into the sky
    self.fog0 = np.array([c.dist for c in cams], np.float32)[:, None, None]
    self.fog = np.array([max(3.0 * c.dist, 8.0) for c in cams], np.float32)[:, None, None]
    self.sky = _sky(self.rd)
    self.size = np.ascontiguousarray(size.transpose(1, 2, 0))[..., None, None]          # (G, 3, B, 1, 1)
    self.rgba = np.ascontiguousarray(rgba[..., :3].transpose(1, 2, 0))[..., None, None]  # (G, 3, B, 1, 1)
    self.rad = np.linalg.norm(np.nan_to_num(ext), axis=-1).T.astype(np.float32)         # (G, B)
    self.tbuf = np.empty((self.B, self.th, self.tw), np.float32)
    self.gid = np.empty((self.B, self.th, self.tw), np.int32)
    # a basis of the plane normal to the light, for culling shadow rays by bounding spheres
    self.e1 = _unit(np.cross(LIGHT, [1, 0, 0]))
    self.e2 = np.cross(LIGHT, self.e1).astype(np.float32)
    self.occluders = [g for g, k in enumerate(kinds) if k != "plane"]

  def render(self, C, R, rects) -> np.ndarray:
    """C (G, 3, B, 1, 1), R (G, 3, 3, B, 1, 1), rects (G, 4) union over envs -> (B, th, tw, 3) uint8."""
    tb, gid = self.tbuf, self.gid
    tb.fill(INF)
    gid.fill(-1)
    for g, kind in enumerate(self.kinds):
      y0, y1, x0, x1 = rects[g]
      if y0 >= y1 or x0 >= x1: continue
      t = cast(kind, C[g], R[g], self.size[g], self.pos, self.rd[:, :, y0:y1, x0:x1])
      tv = tb[:, y0:y1, x0:x1]
      m = t < tv
      np.copyto(tv, t, where=m)
      np.copyto(gid[:, y0:y1, x0:x1], g, where=m)
    hit = gid >= 0
    t = np.where(hit, tb, np.float32(0))
    D = self.rd
    P = self.pos + D * t
    N = np.zeros_like(P)
    base = np.zeros_like(P)
    shiny = np.full(t.shape, 0.35, np.float32)
    for g in np.flatnonzero(np.bincount(gid.ravel() + 1, minlength=len(self.kinds) + 1)[1:]):
      y0, y1, x0, x1 = rects[g]
      sl = (slice(None), slice(None), slice(y0, y1), slice(x0, x1))
      m = gid[sl[1:]] == g
      kind = self.kinds[g]
      np.copyto(N[sl], normal(kind, C[g], R[g], self.size[g], P[sl]), where=m)
      col = self.rgba[g]
      if kind == "plane":
        col = col * self._ground(P[sl], D[sl], t[sl[1:]], C[g], R[g])
        np.copyto(shiny[sl[1:]], 0.08, where=m)
      np.copyto(base[sl], col, where=m)
    N *= np.where(_dot(N, D) > 0, np.float32(-1), np.float32(1))  # face the viewer (planes seen from below)
    ndl = np.maximum(_dot(LIGHT, N), 0)
    lit = self._lit(P + N * np.float32(2e-3), hit & (ndl > 0), C, R)
    H = LIGHT[:, None, None, None] - D
    H /= np.sqrt(_dot(H, H))
    spec = np.maximum(_dot(N, H), 0)
    for _ in range(5): spec *= spec  # ^32
    amb = 0.30 + 0.12 * N[2]
    col = base * (amb + 0.75 * ndl * lit) + shiny * spec * lit
    fog = 1 - np.exp(-(np.maximum(t - self.fog0, 0) / self.fog) ** 2)
    col += (self.sky - col) * fog
    np.copyto(col, self.sky, where=~hit)
    _smooth_edges(col, gid)
    return (np.clip(col.transpose(1, 2, 3, 0), 0, 1) * 255 + 0.5).astype(np.uint8)

  def _ground(self, P, D, t, c, R) -> np.ndarray:
    """Brightness of a 1 m checker with thin lines on a plane, faded by the ground footprint of one pixel."""
    q = P - c
    u, v = _dot(R[:, 0], q), _dot(R[:, 1], q)
    fp = t / self.f / np.maximum(np.abs(_dot(R[:, 2], D)), 0.05)  # [m] along the ground, worst direction
    half = (np.floor(u) + np.floor(v)) * 0.5
    checker = 2 * (half - np.floor(half))  # 0 or 1
    tone = 1 + 0.07 * (1 - 2 * checker) * np.clip(1 - fp / 0.35, 0, 1)
    lw = 0.012  # [m] half width of a grid line
    dist = np.minimum(np.abs(u - np.round(u)), np.abs(v - np.round(v)))
    cover = np.minimum(np.clip((lw + fp / 2 - dist) / fp, 0, 1), 2 * lw / fp)
    return tone * (1 - 0.5 * cover)

  def _lit(self, O, cand, C, R) -> np.ndarray:
    """1 where the light reaches surface points O (3, B, th, tw), 0 in shadow; only `cand` points are tested."""
    O = O.reshape(3, self.B, -1)
    u, v, w = _dot(self.e1, O), _dot(self.e2, O), _dot(LIGHT, O)
    shadow = ~cand.reshape(self.B, -1)
    flat, Of = shadow.reshape(-1), O.reshape(3, -1)
    for g in self.occluders:
      c, r = C[g][..., 0, 0], self.rad[g]
      # a ray towards the light can only hit the geom if it passes within its bounding sphere
      cu, cv, cw = (_dot(e, c)[:, None] for e in (self.e1, self.e2, LIGHT))
      m = ~shadow & ((u - cu) ** 2 + (v - cv) ** 2 < (r * r)[:, None]) & (w < cw + r[:, None])
      sub = np.flatnonzero(m)
      if sub.size == 0: continue
      e = sub // u.shape[1]
      t = cast(self.kinds[g], c[:, e], R[g][..., 0, 0][:, :, e], self.size[g][..., 0, 0][:, e], Of[:, sub], LIGHT, 1e-3)
      flat[sub[t < INF]] = True
    return np.where(shadow & cand.reshape(self.B, -1), np.float32(0), np.float32(1)).reshape(cand.shape)


def _smooth_edges(col, gid) -> None:
  """Cheap anti-aliasing: blur (1-2-1 in x and y) the pixels on either side of a change of geom, in place."""
  edge = np.zeros(gid.shape, bool)
  dx, dy = gid[:, :, 1:] != gid[:, :, :-1], gid[:, 1:] != gid[:, :-1]
  edge[:, :, 1:] |= dx
  edge[:, :, :-1] |= dx
  edge[:, 1:] |= dy
  edge[:, :-1] |= dy
  blur = col.copy()
  blur[..., 1:-1] = 0.5 * col[..., 1:-1] + 0.25 * (col[..., 2:] + col[..., :-2])
  tmp = blur.copy()
  blur[..., 1:-1, :] = 0.5 * tmp[..., 1:-1, :] + 0.25 * (tmp[..., 2:, :] + tmp[..., :-2, :])
  np.copyto(col, blur, where=edge)


def render_frames(geom: dict, body_pos: np.ndarray, body_quat: np.ndarray, width: int = 320, height: int = 240,
                  camera: dict | None = None, lines: Lines | tuple | None = None) -> list[np.ndarray]:
  """T frames (height, width, 3) uint8 of a (T, B, nbody, .) trajectory; B envs tiled in a near-square grid.
  lines: drawn over the geoms: engine.render_lines.Lines (overlays_of: joints and tendons, depth-tested or on top per
  line), or a (segments (T, B, L, 2, 3) world points, colours (T, B, L, 3) uint8) tuple drawn on top (tendons_of).

  Each env gets its own tile and camera: the given {"pos", "target", "fov" (vertical, degrees; default 45)} or an
  automatic 3/4 view that keeps every geom of that env in frame over the whole trajectory (fixed over time, so motion
  shows). Geom parameters may carry a leading env axis (B or 1)."""
  bp, bq = as_trajectory(body_pos, 3), as_trajectory(body_quat, 4)
  T, B = bp.shape[:2]
  kinds = tuple(geom["geom_type"])
  G = len(kinds)
  bad = sorted(set(kinds) - {"plane", "sphere", "capsule", "box"})
  if bad: raise ValueError(f"cannot render geom types {bad}")
  gbody = np.asarray(geom["geom_body"], np.int64).reshape(G)
  gpos, gquat, gsize, grgba = (_per_env(geom[k], B, G) for k in ("geom_pos", "geom_quat", "geom_size", "geom_rgba"))
  C, R = _geom_poses(bp, bq, gbody, gpos, gquat)
  plane = np.array([k == "plane" for k in kinds], bool)
  cols = math.ceil(math.sqrt(B))
  rows = math.ceil(B / cols)
  tw, th = width // cols, height // rows
  if min(tw, th) < 8: raise ValueError(f"{B} envs do not fit a {width}x{height} image; render a subset of them")
  ext = np.array([[bound_extent(k, s) if k != "plane" else np.full(3, np.nan) for k, s in zip(kinds, gsize[b])]
                  for b in range(B)], np.float32).reshape(B, G, 3)
  lines = as_lines(lines)
  if lines is not None and lines.seg.shape[:2] != (T, B):
    raise ValueError(f"lines for {lines.seg.shape[:2]} (frames, envs), trajectory has {(T, B)}")
  if camera is None:  # the lines' ends count too: a string's pivot above the balls stays in frame
    ends = None if lines is None else lines.seg.reshape(T, B, -1, 3)
    cams = [_auto_camera(bp[:, b], C[:, b], ext[b], plane, tw, th, None if ends is None else ends[:, b])
            for b in range(B)]
  else: cams = [Camera(camera["pos"], camera["target"], float(camera.get("fov") or FOV), tw, th)] * B
  batch = Batch(kinds, gsize, grgba, ext, cams)
  rects = np.stack([cams[b].rects(C[:, b], R[:, b], ext[b]) for b in range(B)], 1)  # (T, B, G, 4)
  empty = (rects[..., 0] >= rects[..., 1]) | (rects[..., 2] >= rects[..., 3])
  rects = np.where(empty[..., None], [th, 0, tw, 0], rects)
  rects = np.concatenate([rects[..., ::2].min(1), rects[..., 1::2].max(1)], -1)[..., [0, 2, 1, 3]]  # union over envs
  Ct = np.ascontiguousarray(C.transpose(0, 2, 3, 1))[..., None, None]         # (T, G, 3, B, 1, 1)
  Rt = np.ascontiguousarray(R.transpose(0, 2, 3, 4, 1))[..., None, None]      # (T, G, 3, 3, B, 1, 1)
  frames = np.full((T, height, width, 3), BORDER, np.uint8)
  with np.errstate(all="ignore"):
    for f in range(T):
      tiles = batch.render(Ct[f], Rt[f], rects[f])
      if lines is not None: draw_lines(tiles, cams, lines.seg[f], lines.rgb[f], lines, batch.tbuf)
      for b in range(B):
        y0, x0 = (b // cols) * th, (b % cols) * tw
        frames[f, y0:y0 + th, x0:x0 + tw] = tiles[b]
  if B > 1:  # thin separators so neighbouring skies do not merge
    for b in range(B):
      y0, x0 = (b // cols) * th, (b % cols) * tw
      frames[:, y0:y0 + th, x0 + tw - 1] = BORDER
      frames[:, y0 + th - 1, x0:x0 + tw] = BORDER
  return list(frames)


def save_gif(frames: list[np.ndarray], path, fps: float = 30) -> None:
  """Write an endlessly looping GIF of uint8 (H, W, 3) frames. Consecutive identical frames are merged into one longer
  frame by the encoder (Pillow), so a clip that stands still reads back with fewer frames but the same duration."""
  from PIL import Image
  frames = [np.ascontiguousarray(f[..., :3], np.uint8) for f in frames]
  # One palette for the whole clip: stable colours let the encoder store only what changed between frames (files
  # ~10x smaller, encoding ~5x faster than a palette per frame). It is cut from a few frames plus every distinct
  # (5-bit) colour in them, so small objects keep their hue instead of losing the vote to sky and ground.
  picks = np.linspace(0, len(frames) - 1, min(6, len(frames))).astype(int)
  px = np.concatenate([frames[i] for i in picks]).reshape(-1, 3)
  q = np.unique((px >> 3).astype(np.int32) @ np.array([1024, 32, 1], np.int32))
  distinct = (np.stack([q >> 10, (q >> 5) & 31, q & 31], -1) * 8 + 4).astype(np.uint8)
  sample = np.concatenate([px, np.resize(distinct, (max(len(px) // 2, 1), 3))])[None]
  pal = Image.fromarray(sample).quantize(256, method=Image.Quantize.MEDIANCUT)
  ims = [Image.fromarray(f).quantize(palette=pal, dither=Image.Dither.NONE) for f in frames]
  # GIF delays are whole centiseconds: alternate them (30, 30, 40 ms at 30 fps) so the clip plays in real time
  ends = np.round(np.arange(1, len(ims) + 1) * 100.0 / fps) * 10
  ims[0].save(path, format="GIF", save_all=True, append_images=ims[1:], duration=np.diff(ends, prepend=0).tolist(),
              loop=0)


def record(model, batch: int, seconds: float, fps: float, seed: int = 0,
           ctrl=None) -> tuple[np.ndarray, np.ndarray, dict]:
  """Roll out `batch` envs for `seconds` and record one state per frame: (T, B, nbody, 3), (T, B, nbody, 4) and info
  (frames, steps per frame, simulated seconds, wall time, and act (T, B, nmuscle) or None). Envs get slightly different
  initial velocities (noise 0.05) when batch > 1 so the tiles differ. ctrl: None (zeros), or a function of the time t
  [s] at a frame's start giving the (batch, nact) controls held over that frame."""
  from engine.simulator import Simulator
  every = max(1, round(1.0 / (fps * model.dt)))  # env-steps per frame
  nframes = max(1, round(seconds * fps))
  sim = Simulator(model, batch=batch, steps_per_call=1)
  state = sim.reset(seed=seed, noise=0.05 if batch > 1 else 0.0)
  t0 = time.perf_counter()
  # one trajectory call (1-step JIT calls) for the whole run, or one per frame when the controls change per frame
  runs = [(nframes * every, None)] if ctrl is None else [(every, ctrl(k / fps)) for k in range(nframes)]
  recs = []
  for steps, u in runs:
    state, rec = sim.trajectory(state, steps, every=every, ctrl=u)
    recs.append({k: v[1:] for k, v in rec.items()})
  rec = {k: np.concatenate([r[k] for r in recs]) for k in recs[0]}
  info = {"frames": nframes, "steps_per_frame": every, "sim_seconds": nframes * every * model.dt,
          "wall_s": time.perf_counter() - t0, "act": rec.get("act")}
  return rec["pos"], rec["quat"], info


def render_gif(model, body_pos, body_quat, path, fps: float = 30, width: int = 320, height: int = 240,
               camera: dict | None = None, act: np.ndarray | None = None) -> float:
  """Render a trajectory of `model` and save it as a GIF (render_model_frames: joints and tendons drawn); returns the
  wall seconds spent (render + encode)."""
  t0 = time.perf_counter()
  save_gif(render_model_frames(model, body_pos, body_quat, width, height, camera, act), path, fps)
  return time.perf_counter() - t0


def render_model_frames(model, body_pos, body_quat, width: int = 320, height: int = 240, camera: dict | None = None,
                        act: np.ndarray | None = None) -> list[np.ndarray]:
  """render_frames for a Model's (T, B, nbody, .) trajectory with everything it draws over its geoms: strings of
  distance joints, links and pins of the other joints, and tendons (coloured by the muscles' activations act
  (T, B, nmuscle) when given)."""
  return render_frames(geom_arrays(model), body_pos, body_quat, width, height, camera,
                       overlays_of(model, body_pos, body_quat, act))
