"""Lines drawn over the ray-cast geoms: tendons, the strings of distance joints, the links of the other joints and
their pins, rasterised in numpy over envs, lines and samples at once.

A set of lines is a `Lines`: world segments per frame and env, their colours, and per line how far behind the nearest
geom it still shows (0: depth-tested against the frame's depth buffer, so a string ends where it enters a ball and a
link buried in a capsule is not drawn over it; a pin shows through the few centimetres of the bodies it joins, so the
chain's joints show where its capsules overlap but an ant's far hips stay hidden behind its torso; inf: on top of
everything, as tendons are) and its width in pixels. A segment whose two ends are equal is a dot.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from engine.render_geom import as_trajectory

STRING = np.array([45, 45, 50], np.uint8)  # distance joints, and links from a body's centre of mass to its joints
PIN = np.array([15, 15, 15], np.uint8)     # the anchor of a ball, hinge, slide or fixed joint
PIN_WIDTH = 3  # [px] at most: a pin is as wide as 1.5 times its bodies' thinnest geom thickness looks, 1 px at least


class Lines(NamedTuple):
  """World segments drawn over the geoms; a plain (seg, rgb) tuple means tendon-style lines, 2 px, on top."""
  seg: np.ndarray                    # (T, B, L, 2, 3) [m] world end points; a NaN end: not drawn
  rgb: np.ndarray                    # (T, B, L, 3) uint8
  slack: np.ndarray | None = None    # (L,) [m] hidden where a geom is nearer the camera by more; inf (None): on top
  width: np.ndarray | None = None    # (L,) int [px]; None: 2
  size: np.ndarray | None = None     # (L,) [m] world width: drawn as wide as it looks, 1 px to width; NaN: width


def as_lines(lines) -> Lines | None:
  """Lines with every field filled in, from Lines, a (seg, rgb) tuple (tendons_of's) or None."""
  if lines is None: return None
  seg, rgb, slack, width, size = (tuple(lines) + (None,) * 3)[:5]
  seg = np.asarray(seg, np.float64)
  L = seg.shape[2]
  return Lines(seg, np.broadcast_to(np.asarray(rgb, np.uint8), seg.shape[:3] + (3,)),
               np.full(L, np.inf) if slack is None else np.asarray(slack, np.float64).reshape(L),
               np.full(L, 2, np.int64) if width is None else np.asarray(width, np.int64).reshape(L),
               np.full(L, np.nan) if size is None else np.asarray(size, np.float64).reshape(L))


def concat_lines(*parts) -> Lines | None:
  """One Lines from several (None parts skipped); later lines are drawn over earlier ones."""
  parts = [as_lines(p) for p in parts if p is not None]
  if not parts: return None
  axes = (2, 2, 0, 0, 0)  # the line axis of each field
  return Lines(*(np.concatenate([p[k] for p in parts], axes[k]) for k in range(5)))


def _cameras(cams) -> tuple[np.ndarray, ...]:
  """Per-env camera parameters stacked: pos, fwd, right, up (B, 3) and the focal length f (B, 1) [px]."""
  return tuple(np.stack([np.reshape(getattr(c, k), -1) for c in cams]).astype(np.float64)
               for k in ("pos", "fwd", "right", "up", "f"))


def _project(cam, P: np.ndarray, th: int, tw: int):
  """World points P (B, ..., 3) through each env's camera -> (row, col, depth along the view axis) as in
  Camera.project."""
  pos, fwd, right, up, f = (a.reshape(a.shape[:1] + (1,) * (P.ndim - 2) + a.shape[1:]) for a in cam)
  rel = P - pos
  z = (rel * fwd).sum(-1)
  with np.errstate(all="ignore"):
    return th / 2 - 0.5 - f[..., 0] * (rel * up).sum(-1) / z, f[..., 0] * (rel * right).sum(-1) / z + tw / 2 - 0.5, z


def draw_lines(tiles: np.ndarray, cams, seg: np.ndarray, rgb: np.ndarray, lines: Lines,
               tbuf: np.ndarray | None = None) -> None:
  """Rasterise one frame's segments seg (B, L, 2, 3) in colours rgb (B, L, 3) onto tiles (B, th, tw, 3), in place;
  `lines` gives the per-line slack, width and size, tbuf (B, th, tw) the frame's ray distance to the geom each pixel
  shows (inf for sky; None: everything on top).

  Each segment is sampled finely enough to leave no gaps on screen; a sample is kept where it is no farther from the
  camera than the geom its pixel shows plus the line's slack."""
  B, th, tw = tiles.shape[:3]
  if seg.shape[1] == 0: return
  cam = _cameras(cams)
  row, col, zend = _project(cam, seg, th, tw)  # (B, L, 2): the ends, for the samples the longest line needs on screen
  span = np.hypot(row[..., 1] - row[..., 0], col[..., 1] - col[..., 0])
  span = span[np.isfinite(span)]
  n = int(np.clip(2 * (span.max() if span.size else 0) + 2, 2, 4 * (th + tw)))
  s = np.linspace(0.0, 1.0, n)[:, None]
  P = seg[:, :, None, 0] + s * (seg[:, :, None, 1] - seg[:, :, None, 0])  # (B, L, n, 3)
  row, col, z = _project(cam, P, th, tw)
  dist = np.linalg.norm(P - cam[0][:, None, None], axis=-1)
  ok = np.isfinite(row) & np.isfinite(col) & (z > 0)
  row, col = np.where(ok, row, -10), np.where(ok, col, -10)
  b = np.broadcast_to(np.arange(B)[:, None, None], ok.shape)
  # a line with a world size is as wide as that looks at its first end (a pin no wider than the links it joins)
  with np.errstate(all="ignore"):
    looks = np.round(lines.size * cam[4] / zend[..., 0])
  width = np.where(np.isfinite(looks), np.clip(looks, 1, lines.width), lines.width).astype(np.int64)  # (B, L)
  slack = np.broadcast_to(lines.slack, width.shape)
  for w in np.unique(width):  # wider lines (pins) last, over the thinner ones
    sel = width == w  # (B, L): these lines in these envs
    # an odd width centres on the pixel a sample falls in, an even one on the pixel corner nearest to it: either way
    # the footprint holds the pixel of every point within half a pixel of a sample, so the line has no gaps
    snap = np.round if w % 2 else np.floor
    r0, q0 = snap(row[sel]).astype(np.int64), snap(col[sel]).astype(np.int64)  # (K, n)
    lo = -((int(w) - 1) // 2)
    for dr in range(lo, lo + int(w)):
      for dq in range(lo, lo + int(w)):
        r, q = r0 + dr, q0 + dq
        keep = ok[sel] & (r >= 0) & (r < th) & (q >= 0) & (q < tw)
        r, q, bb = np.where(keep, r, 0), np.where(keep, q, 0), b[sel]
        if tbuf is not None:
          # a little more slack for every line: the sample lies near, not on, the ray through the pixel centre
          keep &= dist[sel] <= tbuf[bb, r, q] * 1.002 + 1e-3 + slack[sel][:, None]
        tiles[bb[keep], r[keep], q[keep]] = np.broadcast_to(rgb[sel][:, None], keep.shape + (3,))[keep]


def _body_points(body: np.ndarray, local: np.ndarray, bp: np.ndarray, bq: np.ndarray) -> np.ndarray:
  """World points (T, B, n, 3) of points `local` (n, 3) fixed in bodies `body` (n,) (world frame where < 0)."""
  from engine.npquat import quat_rotate
  world = np.broadcast_to(local, (*bp.shape[:2], *local.shape)).copy()
  on = body >= 0
  world[:, :, on] = bp[:, :, body[on]] + quat_rotate(bq[:, :, body[on]], local[on])
  return world


def tendons_of(model, body_pos: np.ndarray, body_quat: np.ndarray, act: np.ndarray | None = None) -> tuple | None:
  """The tendons' segments over a (T, B, nbody, .) trajectory and their colours: a muscle's tendon from grey (act 0)
  to red (act 1) by its activation (T, B, nmuscle), any other tendon white. None for a model without tendons."""
  if not model.ntendon: return None
  from oracle.muscle import muscles
  from oracle.tendon import segments
  bp, bq = as_trajectory(body_pos, 3).astype(np.float64), as_trajectory(body_quat, 4).astype(np.float64)
  world = _body_points(np.array(model.site_body), model.site_pos.numpy().astype(np.float64), bp, bq)
  ten, sa, sb = segments(model)
  seg = np.stack([world[:, :, list(sa)], world[:, :, list(sb)]], -2)            # (T, B, L, 2, 3)
  level = np.zeros((*bp.shape[:2], model.ntendon))
  if act is not None:
    for k, a in enumerate(muscles(model)): level[..., model.act_tendon[a]] = np.clip(act[..., k], 0, 1)
  grey, red, white = np.array([120, 120, 120]), np.array([220, 30, 30]), np.array([245, 245, 245])
  muscle_tendons = np.isin(np.arange(model.ntendon), [model.act_tendon[a] for a in muscles(model)])
  colour = np.where(muscle_tendons[:, None], grey + level[..., None] * (red - grey), white)  # (T, B, ntendon, 3)
  return seg, colour[:, :, list(ten)].astype(np.uint8)


def joints_of(model, body_pos: np.ndarray, body_quat: np.ndarray) -> Lines | None:
  """The joints over a (T, B, nbody, .) trajectory, depth-tested; None for a model without joints.

  A distance joint is a string between its two anchors. A ball, hinge, slide or fixed joint is a link from each
  body's centre of mass to its anchor (the cradle's strings, a pendulum's rod; hidden where it runs inside the body),
  a link between the two anchors (a slide's travel; a dot otherwise) and a pin at the child's anchor, as wide as 1.5
  times the thickness of the thinnest geom of the bodies it joins and showing through that much of them (a joint where
  two capsules overlap)."""
  if not model.njoint: return None
  bp, bq = as_trajectory(body_pos, 3).astype(np.float64), as_trajectory(body_quat, 4).astype(np.float64)
  par, chi = np.array(model.jnt_parent, np.int64), np.array(model.jnt_child, np.int64)
  local_p, local_c = (np.asarray(a.numpy(), np.float64).reshape(len(par), 3)
                      for a in (model.jnt_anchor_parent, model.jnt_anchor_child))
  wp, wc = _body_points(par, local_p, bp, bq), _body_points(chi, local_c, bp, bq)  # (T, B, J, 3) world anchors
  com_p = np.where((par >= 0)[:, None], bp[:, :, np.maximum(par, 0)], np.nan)  # the world has no centre of mass
  com_c = bp[:, :, chi]
  dist = np.array([t == "distance" for t in model.jnt_type])
  rigid = ~dist
  r = rigid
  pairs = [(wp[:, :, dist], wc[:, :, dist]),                          # strings
           (com_c[:, :, r], wc[:, :, r]), (com_p[:, :, r], wp[:, :, r]),  # links from each centre of mass
           (wp[:, :, r], wc[:, :, r]),                                 # anchor to anchor (a slide's travel)
           (wc[:, :, r], wc[:, :, r])]                                 # pins
  seg = np.concatenate([np.stack(p, -2) for p in pairs], 2)  # (T, B, L, 2, 3)
  nd, nr = int(dist.sum()), int(rigid.sum())
  L = nd + 4 * nr
  rgb = np.broadcast_to(np.concatenate([np.broadcast_to(STRING, (L - nr, 3)), np.broadcast_to(PIN, (nr, 3))]),
                        seg.shape[:3] + (3,))
  thick = _thickness(model)
  pin = 1.5 * np.minimum(thick[chi[rigid]], np.where(par[rigid] >= 0, thick[par[rigid]], np.inf))
  pin[~np.isfinite(pin)] = np.nan  # bodies without geoms: no slack, the widest pin
  slack, width, size = np.zeros(L), np.full(L, 2, np.int64), np.full(L, np.nan)
  slack[L - nr:], width[L - nr:], size[L - nr:] = np.nan_to_num(pin), PIN_WIDTH, pin
  return Lines(seg, rgb, slack, width, size)


def _thickness(model) -> np.ndarray:
  """(nbody,) [m] the thinnest dimension of each body's geoms (radius of a sphere or capsule, smallest half extent
  of a box), inf for a body without geoms; per-env geom sizes count at their smallest."""
  size = np.asarray(model.geom_size.numpy(), np.float64).reshape(-1, model.ngeom, 3).min(0)
  thin = np.array([s[0] if k in ("sphere", "capsule") else s.min() if k == "box" else np.inf
                   for k, s in zip(model.geom_type, size)])
  out = np.full(model.nbody, np.inf)
  body = np.array(model.geom_body, np.int64)
  np.minimum.at(out, body[body >= 0], thin[body >= 0])
  return out


def overlays_of(model, body_pos: np.ndarray, body_quat: np.ndarray, act: np.ndarray | None = None) -> Lines | None:
  """Everything a Model draws over its geoms (render_frames' `lines`): its joints, then its tendons on top."""
  return concat_lines(joints_of(model, body_pos, body_quat), tendons_of(model, body_pos, body_quat, act))
