"""Renderer: analytic casts against signed distance functions, and what rendered frames show (hues, placement, shadows,
tiling, motion, GIF output, joints and strings). Scenes are built by hand as geom dicts, independent of the scene
loader, except the joint tests, which draw the shipped cradle, chain and compliant hang at their initial poses."""
import itertools
import math
import time
from types import SimpleNamespace

import imageio.v3 as iio
import numpy as np
import pytest

from engine.render import LIGHT, Camera, geom_arrays, render_frames, render_gif, render_model_frames, save_gif
from engine.render_geom import INF, cast, normal, quat_to_mat
from engine.render_lines import PIN, STRING, Lines
from engine.scene import load_scene, load_scene_dict
from engine.npquat import quat_rotate
from tests.helpers import SCENES

RED, GREEN, BLUE, GREY = (0.9, 0.15, 0.1, 1), (0.15, 0.75, 0.2, 1), (0.15, 0.3, 0.9, 1), (0.8, 0.8, 0.8, 1)


def scene(*geoms):
  """geoms: (type, body, pos, size, rgba[, quat]) -> geom dict."""
  return {"geom_type": tuple(g[0] for g in geoms), "geom_body": tuple(g[1] for g in geoms),
              "geom_pos": np.array([g[2] for g in geoms], float), "geom_size": np.array([g[3] for g in geoms], float),
              "geom_rgba": np.array([g[4] for g in geoms], float),
              "geom_quat": np.array([g[5] if len(g) > 5 else (1, 0, 0, 0) for g in geoms], float)}


def traj(pos, quat=None):
  """(T, B, nbody, 3) positions -> (pos, quat) with identity orientations unless given."""
  pos = np.asarray(pos, float)
  if quat is None:
    quat = np.zeros(pos.shape[:-1] + (4,))
    quat[..., 0] = 1
  return pos, quat


def axis_quat(axis, angle):
  axis = np.asarray(axis, float) / np.linalg.norm(axis)
  return np.concatenate([[math.cos(angle / 2)], math.sin(angle / 2) * axis])


def mask(img, rgba, tol=0.25):
  """Pixels whose chromaticity is close to that of `rgba` and that are clearly saturated."""
  f = img.astype(np.float32) / 255
  c = np.asarray(rgba[:3], np.float32)
  chroma = f / np.maximum(f.sum(-1, keepdims=True), 1e-6)
  hi = f.max(-1)
  return (np.abs(chroma - c / c.sum()).sum(-1) < tol) & (hi - f.min(-1) > 0.4 * hi) & (hi > 0.08)


PLANE = ("plane", -1, (0, 0, 0), (0, 0, 0), GREY)


# ---------------------------------------------------------------------------------------------------- ray casts


def _sdf(kind, c, R, size, p):
  q = (p - c) @ R  # local
  if kind == "sphere": return np.linalg.norm(q, axis=-1) - size[0]
  if kind == "capsule":
    q = q.copy()
    q[:, 2] -= np.clip(q[:, 2], -size[1], size[1])
    return np.linalg.norm(q, axis=-1) - size[0]
  d = np.abs(q) - size
  return np.linalg.norm(np.maximum(d, 0), axis=-1) + np.minimum(d.max(-1), 0)


@pytest.mark.parametrize("kind,size", [("sphere", (0.5, 0, 0)), ("capsule", (0.3, 0.6, 0)), ("box", (0.3, 0.5, 0.7))])
def test_render_cast_matches_sdf(kind, size):
  rng = np.random.default_rng(0)
  n = 4000
  c = np.array([0.2, -0.1, 0.3], np.float32)
  R = quat_to_mat(axis_quat([0.3, 1, 0.5], 0.9))
  size = np.array(size, np.float32)
  o = (rng.normal(size=(n, 3)) * 0.4 + [0, 0, 3]).astype(np.float32)
  d = (c + rng.normal(size=(n, 3)) * 0.6 - o).astype(np.float32)
  d /= np.linalg.norm(d, axis=1, keepdims=True)
  t = cast(kind, c, R, size, o.T, d.T)
  hit = t < INF
  assert 0.2 < hit.mean() < 0.95
  p = o + d * np.where(hit, t, 0)[:, None]
  assert np.abs(_sdf(kind, c, R, size, p[hit])).max() < 1e-4
  # the normal is the SDF gradient there
  nrm = normal(kind, c, R, size, p[hit].T).T
  eps = 1e-3
  grad = np.stack([_sdf(kind, c, R, size, p[hit] + eps * e) - _sdf(kind, c, R, size, p[hit] - eps * e)
                   for e in np.eye(3)], -1) / (2 * eps)
  assert np.median(np.abs(nrm - grad / np.linalg.norm(grad, axis=-1, keepdims=True)).sum(-1)) < 1e-3
  assert (np.abs(np.linalg.norm(nrm, axis=-1) - 1) < 1e-4).all()
  # misses stay clear of the shape all along the ray, and nothing is hit behind the origin
  ts = np.linspace(0, 6, 600, dtype=np.float32)
  samples = o[~hit, None] + d[~hit, None] * ts[:, None]
  assert _sdf(kind, c, R, size, samples.reshape(-1, 3)).min() > -1e-3
  # first hit: the SDF along the ray is positive before t
  before = o[hit, None] + d[hit, None] * (t[hit, None, None] * np.linspace(0, 0.999, 50)[:, None])
  assert _sdf(kind, c, R, size, before.reshape(-1, 3)).min() > -1e-4


def test_render_cast_plane_and_parallel_rays():
  R = np.eye(3, dtype=np.float32)
  c = np.zeros(3, np.float32)
  down = np.array([[0, 0, 0], [0, 0, 0], [-1, 1, 0]], np.float32)  # down, up, horizontal
  t = cast("plane", c, R, np.zeros(3, np.float32), np.array([0, 0, 2], np.float32)[:, None], down)
  assert t[0] == pytest.approx(2) and t[1] == INF and t[2] == INF
  # a ray along a capsule's axis hits the near cap; along a box face direction it hits the face
  o, d = np.array([0, 0, 5], np.float32), np.array([0, 0, -1], np.float32)
  assert cast("capsule", c, R, np.array([0.2, 1, 0], np.float32), o, d) == pytest.approx(5 - 1.2)
  assert cast("box", c, R, np.array([0.2, 0.3, 1], np.float32), o, d) == pytest.approx(4)


# ---------------------------------------------------------------------------------------------------- images


def test_render_sphere_above_plane():
  g = scene(PLANE, ("sphere", 0, (0, 0, 0), (0.3, 0, 0), RED))
  (img,) = render_frames(g, *traj([[[[0.5, -0.2, 0.6]]]]))
  assert img.shape == (240, 320, 3) and img.dtype == np.uint8
  red = mask(img, RED)
  # the automatic camera centres the only body
  assert red[110:130, 150:170].mean() > 0.8
  rows, cols = np.nonzero(red)
  assert abs((rows.min() + rows.max()) / 2 - 119.5) < 3 and abs((cols.min() + cols.max()) / 2 - 159.5) < 3
  # sky at the top, a bluish pale colour, and ground with a grid below it
  top, bottom = img[0].astype(int), img[-40:].astype(int)
  assert (top[:, 2] > top[:, 0]).all() and not mask(img[:1], RED).any()
  assert bottom.std() > 5  # checker and lines, not a flat colour
  # no plane: sky everywhere but the sphere
  (img2,) = render_frames(scene(("sphere", 0, (0, 0, 0), (0.3, 0, 0), RED)), *traj([[[[0, 0, 1]]]]))
  corners = img2[[0, 0, -1, -1], [0, -1, 0, -1]].astype(int)
  assert (corners[:, 2] > corners[:, 0]).all() and (corners[:2] != corners[2:]).any()  # a gradient, not flat
  assert mask(img2, RED)[100:140, 140:180].mean() > 0.8


def test_render_box_and_capsule_visible():
  tilt = axis_quat([1, 0, 0], math.pi / 2)  # capsule lying along y
  g = scene(PLANE, ("box", 0, (0, 0, 0), (0.3, 0.2, 0.15), GREEN), ("capsule", 1, (0, 0, 0), (0.1, 0.3, 0), BLUE, tilt))
  (img,) = render_frames(g, *traj([[[[-0.5, 0, 0.15], [0.6, 0, 0.1]]]]))
  green, blue = mask(img, GREEN), mask(img, BLUE)
  assert green.sum() > 300 and blue.sum() > 300
  # the box is left of the capsule as seen from the front-right automatic view (x points right-ish)
  assert np.nonzero(green)[1].mean() < np.nonzero(blue)[1].mean()
  # lit faces differ from unlit ones: shading, not flat colour
  assert img[green][:, 1].std() > 10


def test_render_orientation_and_perspective():
  # camera on -y looking at +y: world +x is to the right, +z up, farther is smaller
  cam = {"pos": [0, -6, 1], "target": [0, 0, 1], "fov": 40}
  g = scene(("sphere", 0, (0, 0, 0), (0.3, 0, 0), RED), ("sphere", 1, (0, 0, 0), (0.3, 0, 0), BLUE))
  (img,) = render_frames(g, *traj([[[[1, 0, 1], [-1, 4, 2]]]]), camera=cam)
  r, b = np.nonzero(mask(img, RED)), np.nonzero(mask(img, BLUE))
  assert r[1].mean() > 180 and b[1].mean() < 160  # red at +x right of centre, blue at -x left
  assert b[0].mean() < r[0].mean() - 20  # blue is higher
  assert len(b[0]) < 0.6 * len(r[0])  # and farther away
  # the camera module agrees with where things land
  row, col, z = Camera(cam["pos"], cam["target"], cam["fov"], 320, 240).project(np.array([1, 0, 1.0]))
  assert abs(row - (r[0].min() + r[0].max()) / 2) < 1.5 and abs(col - (r[1].min() + r[1].max()) / 2) < 1.5
  assert z == pytest.approx(6)


def test_render_shadow_darkens_ground():
  cam = {"pos": [3, -4, 3], "target": [0, 0, 0], "fov": 50}
  g = scene(PLANE, ("sphere", 0, (0, 0, 0), (0.4, 0, 0), RED))
  c = np.array([0, 0, 1.0])
  # frame 0 has the sphere above the origin, frame 1 has it far away
  frames = render_frames(g, *traj([[[c]], [[[50, 50, 1.0]]]]), camera=cam)
  shadow = c - LIGHT * (c[2] / LIGHT[2])  # where the light ray through the centre meets the ground
  row, col, _ = Camera(cam["pos"], cam["target"], cam["fov"], 320, 240).project(shadow)
  r, k = round(row), round(col)
  dark, bright = frames[0][r - 2:r + 3, k - 2:k + 3].mean(), frames[1][r - 2:r + 3, k - 2:k + 3].mean()
  assert dark < 0.7 * bright
  assert not mask(frames[0][r - 2:r + 3, k - 2:k + 3], RED).any()  # it is ground, not the sphere itself


def test_render_tiles_each_env():
  g = scene(PLANE, ("sphere", 0, (0, 0, 0), (0.3, 0, 0), RED))
  pos = np.array([[[[0, 0, 0.5]], [[3, 1, 0.8]], [[-2, 5, 0.3]], [[0, 0, 2]]]])  # (1, 4, 1, 3)
  (img,) = render_frames(g, *traj(pos))
  assert img.shape == (240, 320, 3)
  for b in range(4):
    tile = img[(b // 2) * 120:(b // 2 + 1) * 120, (b % 2) * 160:(b % 2 + 1) * 160]
    red = mask(tile, RED)
    assert red[50:70, 70:90].mean() > 0.8, b  # each env's own camera centres its sphere
  # per-env colours: parameters with a leading batch axis
  g2 = dict(g, geom_rgba=np.array([[GREY, RED], [GREY, GREEN]]))
  (img2,) = render_frames(g2, *traj(pos[:, :2]))
  assert mask(img2[:, :160], RED).sum() > 200 and mask(img2[:, 160:], GREEN).sum() > 200
  assert not mask(img2[:, :160], GREEN).any()


def test_render_frames_follow_motion():
  g = scene(PLANE, ("sphere", 0, (0, 0, 0), (0.2, 0, 0), RED))
  z = np.linspace(2, 0.2, 5)
  frames = render_frames(g, *traj(np.array([[[[0, 0, zi]]] for zi in z])))
  assert len(frames) == 5
  assert all(np.any(a != b) for a, b in itertools.pairwise(frames))
  # one camera for the whole clip: the falling sphere moves down the image
  rows = [np.nonzero(mask(f, RED))[0].mean() for f in frames]
  assert all(b > a + 5 for a, b in itertools.pairwise(rows))


def test_render_survives_odd_input():
  g = scene(PLANE, ("sphere", 0, (0, 0, 0), (0.2, 0, 0), RED), ("box", 1, (0, 0, 0), (0.2, 0.2, 0.2), GREEN))
  pos, quat = traj([[[[0, 0, 1], [np.nan, 0, 0]]], [[[0, 0, 1], [0, 0, 100]]]])  # blown up, behind the camera
  quat[..., 0] = 2  # unnormalised
  frames = render_frames(g, pos, quat, width=64, height=48, camera={"pos": [0, -3, 3], "target": [0, 0, 0.5]})
  assert len(frames) == 2 and frames[0].shape == (48, 64, 3) and mask(frames[0], RED).any()
  (img,) = render_frames(g, *traj([[[[0, 0, 1], [0, 0, 1]]]]), camera={"pos": [0, 0, 1], "target": [0, 1, 1]})
  assert img.shape == (240, 320, 3)  # camera inside both geoms
  with pytest.raises(ValueError, match="mesh"):
    render_frames(dict(g, geom_type=("plane", "sphere", "mesh")), *traj([[[[0, 0, 1], [0, 0, 1]]]]))


def _chain(T, n=10):
  g = scene(PLANE, *[("capsule", i, (0, 0, 0), (0.04, 0.15, 0), (0.9, 0.1 + 0.08 * i, 0.1, 1)) for i in range(n)])
  pos = np.zeros((T, 1, n, 3))
  quat = np.zeros((T, 1, n, 4))
  for t in range(T):
    top = np.array([0, 0, 3.5])
    for i in range(n):
      a = 0.8 * math.cos(0.2 * t + 0.3 * i)
      axis = np.array([math.sin(a), 0, -math.cos(a)])
      pos[t, 0, i] = top + 0.19 * axis
      quat[t, 0, i] = axis_quat([0, 1, 0], math.pi - a)  # local +z along -axis; a capsule is symmetric anyway
      top = top + 0.38 * axis
  return g, pos, quat


def test_render_short_chain():
  g, pos, quat = _chain(3)
  t0 = time.perf_counter()
  frames = render_frames(g, pos, quat)
  dt = time.perf_counter() - t0
  assert len(frames) == 3 and all(f.shape == (240, 320, 3) for f in frames)
  assert (np.stack(frames).astype(int).max(-1) - np.stack(frames).min(-1) > 100).sum(axis=(1, 2)).min() > 300
  print(f"3 chain frames in {dt * 1e3:.0f} ms")


def test_render_save_gif(tmp_path):
  g = scene(PLANE, ("sphere", 0, (0, 0, 0), (0.2, 0, 0), RED))
  frames = render_frames(g, *traj(np.array([[[[0.1 * i, 0, 0.5]]] for i in range(7)])), width=96, height=64)
  save_gif(frames, tmp_path / "a.gif", fps=20)
  back = iio.imread(tmp_path / "a.gif")
  assert back.shape[:3] == (7, 64, 96)
  assert np.abs(back[3, ..., :3].astype(int) - frames[3]).mean() < 6  # the palette keeps colours close
  assert mask(back[3, ..., :3], RED).sum() > 0.8 * mask(frames[3], RED).sum()
  meta = iio.immeta(tmp_path / "a.gif")
  assert meta.get("loop") == 0 and meta.get("duration") == pytest.approx(50, abs=10)


def test_render_geom_arrays_and_gif(tmp_path):
  class T:  # stands in for a tinygrad Tensor
    def __init__(self, a): self.a = np.asarray(a, np.float32)
    def numpy(self): return self.a
  g = scene(PLANE, ("box", 0, (0, 0, 0), (0.2, 0.2, 0.2), GREEN))
  model = SimpleNamespace(**{k: (T(v) if isinstance(v, np.ndarray) else v) for k, v in g.items()}, name="m",
                          ntendon=0, njoint=0)   # render_gif draws a Model's tendons and joints: this stand-in has none
  arrays = geom_arrays(model)
  assert arrays["geom_type"] == ("plane", "box") and arrays["geom_size"].dtype == np.float32
  pos, quat = traj([[[[0, 0, 0.2]]], [[[0, 0, 0.4]]]])
  dt = render_gif(model, pos, quat, tmp_path / "m.gif", width=80, height=60)
  assert dt > 0 and iio.imread(tmp_path / "m.gif").shape[:3] == (2, 60, 80)


# ---------------------------------------------------------------------------------------------------- joints


def _shipped(name, width=320, height=240):
  """A shipped scene at its initial pose through its own camera: (model, camera, frame with joints, frame without)."""
  model = load_scene(SCENES / f"{name}.json")
  cam = load_scene_dict(SCENES / f"{name}.json")["camera"]
  pos, quat = model.body_pos0.numpy()[None, None], model.body_quat0.numpy()[None, None]
  (lined,) = render_model_frames(model, pos, quat, width, height, cam)
  (plain,) = render_frames(geom_arrays(model), pos, quat, width, height, cam)
  return model, Camera(cam["pos"], cam["target"], cam["fov"], width, height), lined, plain


def _pixels(cam, a, b, s):
  """(rows, cols) of the pixels that the points a + s (b - a) project to."""
  row, col, _ = cam.project(np.asarray(a) + np.asarray(s)[:, None] * (np.asarray(b) - np.asarray(a)))
  return np.round(row).astype(int), np.round(col).astype(int)


def _is(img, rows, cols, rgb):
  return (img[rows, cols] == np.asarray(rgb, np.uint8)).all(-1)


def test_render_cradle_strings_and_pins():
  model, cam, lined, plain = _shipped("cradle")
  pivots, balls = model.jnt_anchor_parent.numpy(), model.body_pos0.numpy()  # world parents: anchors in world frame
  radius = model.geom_size.numpy()[1:, 0]
  for j in range(model.njoint):
    ball, pivot = balls[model.jnt_child[j]], pivots[j]
    length = np.linalg.norm(pivot - ball)
    # the string runs from the top of the ball to the pivot: outside the ball it is drawn over sky and ground
    rows, cols = _pixels(cam, ball, pivot, np.linspace(1.5 * radius[j] / length, 0.97, 40))
    assert _is(lined, rows, cols, STRING).all(), j
    ball_rgba = model.geom_rgba.numpy()[model.geoms_of_type("sphere")[j]]
    assert not _is(plain, rows, cols, STRING).any() and not mask(plain[rows, cols][None], ball_rgba).any(), j
    # the pivot carries the joint's pin; the string's part inside the ball is hidden by the ball (depth test)
    (r,), (c,) = _pixels(cam, pivot, pivot, [0.0])
    assert _is(lined, [r], [c], PIN).all() and not _is(plain, [r], [c], PIN).any()
    rows, cols = _pixels(cam, ball, pivot, np.linspace(0.0, 0.5 * radius[j] / length, 5))
    assert (lined[rows, cols] == plain[rows, cols]).all(), j


def test_render_chain_pins_where_links_overlap():
  model, cam, lined, plain = _shipped("chain")
  parent, child = model.jnt_parent, model.jnt_child
  pos, quat = model.body_pos0.numpy(), model.body_quat0.numpy()
  anchors = pos[list(child)] + quat_rotate(quat[list(child)], model.jnt_anchor_child.numpy())
  assert parent[0] < 0 and np.allclose(anchors[0], model.jnt_anchor_parent.numpy()[0], atol=1e-6)  # hung from world
  rows, cols = _pixels(cam, anchors, anchors, [0.0])
  rows, cols = rows[0], cols[0]
  # every joint's anchor lies inside two capsules (the first inside one): its pin shows through them
  assert _is(lined, rows, cols, PIN).all()
  assert not _is(plain, rows, cols, PIN).any()
  # between pins the capsules keep their colours: the links from centres of mass run inside them, hidden
  mid = np.round(np.array([cam.project(p)[:2] for p in pos])).astype(int)
  assert (lined[mid[:, 0], mid[:, 1]] == plain[mid[:, 0], mid[:, 1]]).all()
  assert mask(lined[mid[:3, 0], mid[:3, 1]][None], model.geom_rgba.numpy()[1]).any()  # there is a capsule there


def test_render_distance_joint_string():
  model, cam, lined, plain = _shipped("compliant_hang")
  top = model.jnt_anchor_parent.numpy()[0]
  bottom = model.body_pos0.numpy()[0] + model.jnt_anchor_child.numpy()[0]  # the box starts unrotated
  rows, cols = _pixels(cam, bottom, top, np.linspace(0.05, 1.0, 40))
  assert _is(lined, rows, cols, STRING).all() and not _is(plain, rows, cols, STRING).any()
  assert (lined != plain).any(-1).sum() < 3 * len(np.unique(rows))  # a 2 px string, no pin: nothing else drawn


def test_render_lines_depth_slack():
  """A dot behind a sphere shows only where its slack reaches past the sphere's front; a (seg, rgb) tuple, as
  tendons_of gives, is drawn on top."""
  cam = {"pos": [0, -5, 1], "target": [0, 0, 1], "fov": 40}
  g = scene(("sphere", 0, (0, 0, 0), (0.5, 0, 0), RED))
  pos, quat = traj([[[[0, 0, 1]]]])
  dot = np.array([0, 0.2, 1.0])  # 0.7 m behind the sphere's front (y = -0.5), seen through its centre
  seg = np.broadcast_to(dot, (1, 1, 3, 2, 3))  # (T, B, L, 2, 3): three dots at the same point
  rgb = np.array([[[[0, 0, 0], [0, 0, 255], [255, 255, 255]]]], np.uint8)
  slack, width = np.array([0.0, 0.6, 0.8]), np.array([3, 3, 3])
  r, c, _ = Camera(cam["pos"], cam["target"], cam["fov"], 320, 240).project(dot)
  r, c = round(r), round(c)
  (img,) = render_frames(g, pos, quat, camera=cam, lines=Lines(seg, rgb, slack, width))
  assert tuple(img[r, c]) == (255, 255, 255)  # slack 0.8 > 0.7: shown (drawn last)
  (hidden,) = render_frames(g, pos, quat, camera=cam, lines=Lines(seg[:, :, :2], rgb[:, :, :2], slack[:2], width[:2]))
  assert mask(hidden[r - 1:r + 2, c - 1:c + 2], RED).all()  # slack 0 and 0.6 < 0.7: both hidden by the sphere
  (on_top,) = render_frames(g, pos, quat, camera=cam, lines=(seg[:, :, :1], rgb[:, :, :1]))
  assert tuple(on_top[r, c]) == (0, 0, 0)
