"""Scene loading: shipped scenes, mass properties against hand calculations, error messages, fuzzed bad scenes."""
import copy
import glob
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tinygrad import dtypes

import engine
from engine.npquat import quat_mul, quat_rotate, quat_to_mat
from engine.scene import SceneError, load_scene, load_scene_dict

ROOT = Path(__file__).resolve().parents[1]
SCENES = sorted(glob.glob(str(ROOT / "scenes" / "*.json")))
# a field path (`bodies[3].geoms[0].size`, `scene`) followed by ": "
PATH_PREFIX = re.compile(r"^[A-Za-z_]\w*(\[\d+\])*(\.[A-Za-z_]\w*(\[\d+\])*)*: ")


def f64(src):
  return load_scene(src, dtype=dtypes.float64, device="CPU")


def arrays(model) -> dict:
  return {k: t.numpy() for k, t in model.tensors().items()}


def one_body(*geoms, **body) -> dict:
  """A scene with one free body made of `geoms` (no world, no joints)."""
  return {"bodies": [{"name": "b", "pos": [0.0, 0.0, 1.0], "geoms": list(geoms), **body}]}


def world_points(a: dict, model, side: str, field: str) -> np.ndarray:
  """jnt_<field>_<side> mapped to the world with the initial poses (WORLD parents use the identity)."""
  idx = model.jnt_parent if side == "parent" else model.jnt_child
  out = []
  for j, i in enumerate(idx):
    pos, quat = (np.zeros(3), np.array([1.0, 0, 0, 0])) if i < 0 else (a["body_pos0"][i], a["body_quat0"][i])
    v = quat_rotate(quat, a[f"jnt_{field}_{side}"][j])
    out.append(v + pos if field == "anchor" else v)
  return np.array(out).reshape(-1, 3)


def check_geoms_in_world(scene: dict, a: dict):
  """Each body geom, placed by the inertial-frame pose and its re-expressed offset, lands where the scene put it."""
  k = len(scene["world"]["geoms"])
  for i, b in enumerate(scene["bodies"]):
    for g in b["geoms"]:
      got = a["body_pos0"][i] + quat_rotate(a["body_quat0"][i], a["geom_pos"][k])
      np.testing.assert_allclose(got, np.array(b["pos"]) + quat_rotate(b["quat"], g["pos"]), atol=1e-12)
      got = quat_to_mat(quat_mul(a["body_quat0"][i], a["geom_quat"][k]))
      np.testing.assert_allclose(got, quat_to_mat(quat_mul(b["quat"], g["quat"])), atol=1e-12)
      k += 1


def lowest_points(model, a: dict) -> np.ndarray:
  """World height [m] of the lowest point of every body geom at the initial pose: the centre minus its extent along
  world z (sphere r; capsule r + |axis_z| half length; box the half extents projected on z)."""
  out = []
  for g, (kind, b) in enumerate(zip(model.geom_type, model.geom_body)):
    if b < 0: continue
    q = quat_mul(a["body_quat0"][b], a["geom_quat"][g])
    z = (a["body_pos0"][b] + quat_rotate(a["body_quat0"][b], a["geom_pos"][g]))[2]
    r = quat_to_mat(q)[2]          # the world z row: local axis i reaches r[i] per unit length
    size = a["geom_size"][g]
    reach = {"sphere": size[0], "capsule": size[0] + abs(r[2]) * size[1], "box": np.abs(r) @ size}[kind]
    out.append(z - reach)
  return np.array(out)


# --- shipped scenes ---

@pytest.mark.parametrize("path", SCENES, ids=[Path(p).stem for p in SCENES])
def test_scene_io_shipped_scene_loads(path):
  model = f64(path)
  a = arrays(model)
  assert model.name == Path(path).stem and model.nbody >= 1 and model.ngeom >= model.nbody
  assert len(model.geom_type) == model.ngeom == a["geom_pos"].shape[0] and a["body_pos0"].shape == (model.nbody, 3)
  assert len(model.jnt_type) == model.njoint == a["jnt_anchor_parent"].shape[0]
  assert all(t.dtype == dtypes.float64 for t in model.tensors().values())
  assert (a["body_inv_mass"] > 0).all() and (a["body_inv_inertia"] > 0).all()
  for q in ("body_quat0", "geom_quat", "jnt_relquat"):
    np.testing.assert_allclose(np.linalg.norm(a[q], axis=-1), 1.0, atol=1e-12, err_msg=q)
  # the ground plane, and every body geom on or above it at the start (resting scenes start exactly touching)
  assert model.geom_type[0] == "plane" and model.geom_body[0] == -1 and a["geom_pos"][0, 2] == 0.0
  lowest = lowest_points(model, a)
  assert (lowest >= -1e-9).all(), f"geoms start below the ground: lowest points {lowest}"
  # each joint's two anchors are the same world point, except distance joints (their own pair of points)
  anchor_p, anchor_c = world_points(a, model, "parent", "anchor"), world_points(a, model, "child", "anchor")
  scene = load_scene_dict(path)
  check_geoms_in_world(scene, a)
  for j, jd in enumerate(scene["joints"]):
    np.testing.assert_allclose(anchor_p[j], jd.get("anchor", jd.get("anchor_parent")), atol=1e-9)
    np.testing.assert_allclose(anchor_c[j], jd.get("anchor", jd.get("anchor_child")), atol=1e-9)
  # hinge axes and references: unit, perpendicular, and the same world vector from both sides
  for field in ("axis", "ref"):
    wp, wc = world_points(a, model, "parent", field), world_points(a, model, "child", field)
    np.testing.assert_allclose(wp, wc, atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(wp, axis=-1), 1.0, atol=1e-12)
  np.testing.assert_allclose(np.sum(a["jnt_axis_parent"] * a["jnt_ref_parent"], -1), 0.0, atol=1e-12)
  # relquat: parent orientation * relquat = child orientation at the initial pose
  for j, (p, c) in enumerate(zip(model.jnt_parent, model.jnt_child)):
    qp = np.array([1.0, 0, 0, 0]) if p < 0 else a["body_quat0"][p]
    np.testing.assert_allclose(quat_to_mat(quat_mul(qp, a["jnt_relquat"][j])), quat_to_mat(a["body_quat0"][c]),
                               atol=1e-12)


@pytest.mark.parametrize("path", SCENES, ids=[Path(p).stem for p in SCENES])
def test_scene_io_defaults_filled_and_idempotent(path):
  scene = load_scene_dict(path)
  assert load_scene_dict(json.loads(json.dumps(scene))) == scene
  assert {"gravity", "dt", "substeps", "iterations", "relaxation", "world", "bodies", "joints"} <= scene.keys()
  assert all({"pos", "quat", "density", "friction", "restitution", "rgba"} <= g.keys()
             for b in scene["bodies"] for g in b["geoms"])


def test_scene_io_physical_setup():
  pend = arrays(f64(ROOT / "scenes" / "pendulum.json"))
  arm = pend["body_pos0"][0] - np.array([0.0, 0.0, 2.0])
  assert np.linalg.norm(arm) == pytest.approx(1.0, abs=1e-12)
  assert math.degrees(math.atan2(arm[0], -arm[2])) == pytest.approx(10.0, abs=1e-9)
  hang_model = f64(ROOT / "scenes" / "compliant_hang.json")
  hang = arrays(hang_model)
  assert hang["body_inv_mass"][0] == pytest.approx(1.0) and hang["jnt_compliance"][0] == pytest.approx(1e-3)
  # unstretched at the start: the anchors are exactly the rest length apart
  gap = world_points(hang, hang_model, "child", "anchor")[0] - world_points(hang, hang_model, "parent", "anchor")[0]
  assert np.linalg.norm(gap) == pytest.approx(hang["jnt_length"][0], abs=1e-12) and hang["jnt_length"][0] == 0.5
  chain_model = f64(ROOT / "scenes" / "chain.json")
  assert chain_model.nbody == 10 and set(chain_model.jnt_type) == {"ball"} and chain_model.jnt_parent[0] == -1
  assert load_scene_dict(ROOT / "scenes" / "pendulum.json")["camera"]["fov"] == 45


def test_scene_io_dtype_and_device():
  m32 = load_scene(str(ROOT / "scenes" / "pendulum.json"), device="CPU")
  m64 = f64(ROOT / "scenes" / "pendulum.json")
  assert all(t.dtype == dtypes.float32 for t in m32.tensors().values())
  assert all(t.dtype == dtypes.float64 and t.device == "CPU" for t in m64.tensors().values())
  np.testing.assert_allclose(m32.body_pos0.numpy(), m64.body_pos0.numpy(), rtol=1e-7)
  assert m64.dt == pytest.approx(1 / 240) and (m64.substeps, m64.iterations, m64.relaxation) == (20, 1, 1.0)
  assert load_scene(str(ROOT / "scenes" / "pendulum.json"), dtype="float64").body_pos0.dtype == dtypes.float64
  for bad in (dtypes.float16, "float16", dtypes.int32, 5):   # the engine computes in float32 or float64 only
    with pytest.raises(ValueError, match=r"dtype: expected dtypes.float32 or dtypes.float64 .* got"):
      load_scene(str(ROOT / "scenes" / "pendulum.json"), dtype=bad)


# --- mass properties against hand calculations ---

def test_scene_io_mass_sphere():
  a = arrays(f64(one_body({"type": "sphere", "size": [0.1], "density": 500.0})))
  m = 500.0 * 4 / 3 * math.pi * 0.1 ** 3
  assert 1 / a["body_inv_mass"][0] == pytest.approx(m, rel=1e-12)
  np.testing.assert_allclose(1 / a["body_inv_inertia"][0], [0.4 * m * 0.01] * 3, rtol=1e-12)


def test_scene_io_mass_box():
  a = arrays(f64(one_body({"type": "box", "size": [0.1, 0.2, 0.3], "density": 500.0})))
  m = 500.0 * 0.2 * 0.4 * 0.6
  assert 1 / a["body_inv_mass"][0] == pytest.approx(m, rel=1e-12)
  # axis-aligned box: the user axes are already principal, so they are kept in order
  np.testing.assert_allclose(1 / a["body_inv_inertia"][0], [m / 3 * (0.04 + 0.09), m / 3 * (0.01 + 0.09),
                                                            m / 3 * (0.01 + 0.04)], rtol=1e-12)
  np.testing.assert_allclose(a["body_quat0"][0], [1, 0, 0, 0], atol=1e-15)


def test_scene_io_mass_capsule():
  r, h, rho = 0.05, 0.2, 1000.0
  a = arrays(f64(one_body({"type": "capsule", "size": [r, h], "density": rho})))
  # by hand: cylinder plus two hemispheres, each with its own centroidal inertia 83/320 m r^2 moved by h + 3r/8
  m_cyl, m_hemi = rho * math.pi * r * r * 2 * h, rho * 2 / 3 * math.pi * r ** 3
  i_axis = m_cyl * r * r / 2 + 2 * (0.4 * m_hemi * r * r)
  i_trans = m_cyl * (3 * r * r + (2 * h) ** 2) / 12 + 2 * (83 / 320 * m_hemi * r * r + m_hemi * (h + 3 * r / 8) ** 2)
  assert 1 / a["body_inv_mass"][0] == pytest.approx(m_cyl + 2 * m_hemi, rel=1e-12)
  np.testing.assert_allclose(1 / a["body_inv_inertia"][0], [i_trans, i_trans, i_axis], rtol=1e-12)


def test_scene_io_mass_two_geoms():
  # two spheres at x = -0.3 and x = +0.3, the second 8x heavier, in a body rotated about z
  scene = one_body({"type": "sphere", "size": [0.05], "pos": [-0.3, 0, 0]},
                   {"type": "sphere", "size": [0.1], "pos": [0.3, 0, 0]}, quat=[math.cos(0.2), 0, 0, math.sin(0.2)])
  a = arrays(f64(scene))
  m1, m2 = 1000 * 4 / 3 * math.pi * 0.05 ** 3, 1000 * 4 / 3 * math.pi * 0.1 ** 3
  com_x = (-0.3 * m1 + 0.3 * m2) / (m1 + m2)
  rot = quat_to_mat([math.cos(0.2), 0, 0, math.sin(0.2)])
  np.testing.assert_allclose(a["body_pos0"][0], np.array([0, 0, 1.0]) + rot @ [com_x, 0, 0], atol=1e-12)
  i_x = 0.4 * m1 * 0.05 ** 2 + 0.4 * m2 * 0.1 ** 2
  i_yz = i_x + m1 * (-0.3 - com_x) ** 2 + m2 * (0.3 - com_x) ** 2  # parallel-axis theorem
  np.testing.assert_allclose(1 / a["body_inv_inertia"][0], [i_x, i_yz, i_yz], rtol=1e-12)
  np.testing.assert_allclose(a["geom_pos"][:, 0], [-0.3 - com_x, 0.3 - com_x], atol=1e-12)  # relative to the COM
  check_geoms_in_world(load_scene_dict(scene), a)


def test_scene_io_mass_rotated_box():
  q = np.array([0.9, 0.3, -0.2, 0.25])
  q = (q / np.linalg.norm(q)).tolist()
  size, rho = [0.1, 0.2, 0.3], 800.0
  scene = one_body({"type": "box", "size": size, "density": rho, "pos": [0.1, 0.2, 0.3], "quat": q})
  a = arrays(f64(scene))
  check_geoms_in_world(load_scene_dict(scene), a)
  m = rho * 8 * 0.006
  moments = m / 3 * np.array([0.04 + 0.09, 0.01 + 0.09, 0.01 + 0.04])
  np.testing.assert_allclose(np.sort(1 / a["body_inv_inertia"][0]), np.sort(moments), rtol=1e-10)
  # the world-frame inertia tensor is the same whichever frame it was diagonalised in
  rb, rg = quat_to_mat(a["body_quat0"][0]), quat_to_mat(q)
  np.testing.assert_allclose(rb @ np.diag(1 / a["body_inv_inertia"][0]) @ rb.T, rg @ np.diag(moments) @ rg.T,
                             atol=1e-12)
  np.testing.assert_allclose(a["body_pos0"][0], [0.1, 0.2, 1.3], atol=1e-12)
  np.testing.assert_allclose(a["geom_pos"][0], 0.0, atol=1e-12)
  # the geom's axes are the principal axes: it sits in the inertial frame as an axis permutation
  np.testing.assert_allclose(np.abs(quat_to_mat(a["geom_quat"][0])).round(9) @ np.ones(3), np.ones(3))
  assert np.linalg.det(rb) == pytest.approx(1.0) and a["body_quat0"][0][0] >= 0


def test_scene_io_principal_axes_repeated_moments(monkeypatch):
  """A tilted capsule's inertia has two equal moments: eigh may return any basis of their plane (which one varies
  with the CPU's LAPACK kernel), and principal_axes must give the same frame from each, diagonalising the tensor."""
  from engine.mass import principal_axes
  q = np.array([0.9, 0.3, -0.2, 0.25])
  r = quat_to_mat(q / np.linalg.norm(q))
  inertia = r @ np.diag([0.002, 0.03, 0.03]) @ r.T   # symmetric about the capsule's axis r[:, 0]
  eigh = np.linalg.eigh
  frames = []
  for turn in (0.0, 0.4, 2.0, -1.1):   # eigh's plane basis turned by `turn` about the distinct axis, and flipped
    def turned(a, turn=turn):
      w, v = eigh(a)
      c, s = math.cos(turn), math.sin(turn)
      v = v.copy()
      v[:, 1], v[:, 2] = c * v[:, 1] + s * v[:, 2], -(-s * v[:, 1] + c * v[:, 2])
      return w, v
    monkeypatch.setattr(np.linalg, "eigh", turned)
    moments, quat = principal_axes(inertia)
    rb = quat_to_mat(quat)
    np.testing.assert_allclose(rb @ np.diag(moments) @ rb.T, inertia, atol=1e-15)
    frames.append(quat)
  np.testing.assert_allclose(frames, np.broadcast_to(frames[0], (len(frames), 4)), atol=1e-14)


def test_scene_io_validation_is_idempotent_for_axes():
  """Loading a loaded scene changes nothing: an axis normalised once is kept as it is (normalising again moved the
  last digit of about a quarter of them; tests/test_scene_io.py's fuzz found one, 2026-11-28)."""
  scene = one_body({"type": "sphere", "size": [0.1]})
  scene["joints"] = [{"type": "hinge", "parent": "world", "child": "b", "anchor": [0.0, 0.0, 2.0],
                     "axis": [1.0, 0.5, 0.5295681197194138]}]
  filled = load_scene_dict(scene)
  assert load_scene_dict(filled) == filled
  axis = filled["joints"][0]["axis"]
  assert abs(np.linalg.norm(axis) - 1.0) < 1e-15 and np.allclose(np.cross(axis, [1.0, 0.5, 0.5295681197194138]), 0.0)


def test_scene_io_mass_and_inertia_overrides():
  geom = {"type": "box", "size": [0.1, 0.2, 0.3]}
  base = arrays(f64(one_body(geom)))
  scaled = arrays(f64(one_body(geom, mass=2.0)))
  assert scaled["body_inv_mass"][0] == pytest.approx(0.5)
  # the inertia scales with the mass: inv_inertia * (m_base / 2)
  np.testing.assert_allclose(scaled["body_inv_inertia"][0], base["body_inv_inertia"][0] / base["body_inv_mass"][0] / 2)
  q = [math.cos(0.3), math.sin(0.3), 0, 0]
  given_i = arrays(f64(one_body(geom, mass=2.0, inertia=[0.1, 0.2, 0.25], quat=q)))
  np.testing.assert_allclose(given_i["body_inv_inertia"][0], [10, 5, 4])
  np.testing.assert_allclose(given_i["body_quat0"][0], q, atol=1e-15)


def test_scene_io_joint_frames_hinge():
  scene = {"bodies": [{"name": "a", "pos": [0, 0, 1], "quat": [math.cos(0.4), 0, math.sin(0.4), 0],
                       "geoms": [{"type": "box", "size": [0.1, 0.2, 0.3], "pos": [0.05, 0, 0]}]},
                      {"name": "b", "pos": [1, 0, 1], "geoms": [{"type": "capsule", "size": [0.05, 0.2]}]}],
           "joints": [{"type": "hinge", "parent": "a", "child": "b", "anchor": [0.5, 0.1, 1.0], "axis": [0, 0, 2],
                       "range": [-1, 0.5], "damping": 0.1}]}
  model = f64(scene)
  a = arrays(model)
  check_geoms_in_world(load_scene_dict(scene), a)
  assert model.jnt_name == ("joint0",) and model.jnt_parent == (0,) and model.jnt_child == (1,)
  np.testing.assert_allclose(world_points(a, model, "parent", "anchor"), [[0.5, 0.1, 1.0]], atol=1e-12)
  np.testing.assert_allclose(world_points(a, model, "child", "anchor"), [[0.5, 0.1, 1.0]], atol=1e-12)
  np.testing.assert_allclose(world_points(a, model, "parent", "axis"), [[0, 0, 1]], atol=1e-12)
  np.testing.assert_allclose(world_points(a, model, "child", "ref"), [[1, 0, 0]], atol=1e-12)
  np.testing.assert_allclose(a["jnt_range"], [[-1, 0.5]])
  assert a["jnt_limited"][0] == 1.0 and a["jnt_damping"][0] == pytest.approx(0.1)


def test_scene_io_distance_default_length():
  scene = {"bodies": [{"name": "b", "pos": [0, 0, 1], "geoms": [{"type": "sphere", "size": [0.1]}]}],
           "joints": [{"type": "distance", "parent": "world", "child": "b", "anchor_parent": [0, 0, 2],
                       "anchor_child": [0.3, 0, 1.6]}]}
  assert arrays(f64(scene))["jnt_length"][0] == pytest.approx(0.5)


# --- error messages ---

def _valid() -> dict:
  return {"world": {"geoms": [{"type": "plane"}]},
          "bodies": [{"name": "bob", "pos": [0, 0, 1], "geoms": [{"type": "sphere", "size": [0.1]}]},
                     {"name": "arm", "pos": [1, 0, 1], "geoms": [{"type": "box", "size": [0.1, 0.1, 0.1]}]}],
          "joints": [{"type": "hinge", "parent": "world", "child": "bob", "anchor": [0, 0, 2], "axis": [0, 1, 0]},
                     {"type": "ball", "parent": "bob", "child": "arm", "anchor": [0.5, 0, 1]}]}


_DEL = object()
B0, B1, G00, J0, J1 = ["bodies", 0], ["bodies", 1], ["bodies", 0, "geoms", 0], ["joints", 0], ["joints", 1]
# (id, where to set, value (_DEL deletes), the message's path, a fragment of the rest of the message)
BAD = [
  ("box size", [*B1, "geoms", 0, "size"], [0.1, -1], "bodies[1].geoms[0].size",
   "expected 3 positive numbers [hx, hy, hz] (half extents) for a box, got [0.1, -1]"),
  ("sphere size", [*G00, "size"], [0.1, 0.2], "bodies[0].geoms[0].size", "for a sphere, got [0.1, 0.2]"),
  ("negative mass", [*B0, "mass"], -1.0, "bodies[0].mass", "expected a number > 0 [kg], got -1.0"),
  ("unknown key", [*B1, "colour"], "red", "bodies[1].colour", "unknown key (allowed: name, pos, quat, vel"),
  ("unknown top key", ["gravty"], [0, 0, -9.81], "gravty", "unknown key (allowed: name, gravity, dt"),
  ("odd key", [*B0, "a b"], 1, "bodies[0]", "unknown key 'a b' (allowed: name"),
  ("unknown body", [*J0, "child"], "bobb", "joints[0].child", "unknown body 'bobb' (bodies: ['bob', 'arm'])"),
  ("world child", [*J0, "child"], "world", "joints[0].child", "cannot be 'world'"),
  ("self joint", [*J1, "child"], "bob", "joints[1].child", "same body as the parent ('bob')"),
  ("non-unit quat", [*B0, "quat"], [1, 0.1, 0, 0], "bodies[0].quat", "is not unit (norm=1.00498756); normalise it"),
  ("zero quat", [*G00, "quat"], [0, 0, 0, 0], "bodies[0].geoms[0].quat", "expected a unit quaternion"),
  ("missing bodies", ["bodies"], _DEL, "bodies", "missing required field"),
  ("empty bodies", ["bodies"], [], "bodies", "expected a non-empty list of bodies, got []"),
  ("plane on body", G00, {"type": "plane"}, "bodies[0].geoms[0].type", "a plane is static"),
  ("hinge without axis", [*J0, "axis"], _DEL, "joints[0].axis", "missing required field"),
  ("axis on ball", [*J1, "axis"], [0, 0, 1], "joints[1].axis", "not allowed for a ball joint"),
  ("zero axis", [*J0, "axis"], [0, 0, 0], "joints[0].axis", "expected a nonzero 3-vector, got [0, 0, 0]"),
  ("bad range", [*J0, "range"], [1.0, -1.0], "joints[0].range", "expected [lo, hi] [rad] with -pi <= lo < hi <= pi"),
  ("duplicate body", [*B1, "name"], "bob", "bodies[1].name", "duplicate body name 'bob' (also bodies[0].name)"),
  ("duplicate joint", [*J1, "name"], "joint0", "joints[1].name", "duplicate joint name 'joint0' (also joints[0])"),
  ("world body", [*B1, "name"], "world", "bodies[1].name", "'world' is reserved"),
  ("bodies dict", ["bodies"], {"bob": {}}, "bodies", "expected a non-empty list of bodies, got {'bob': {}}"),
  ("bodies string", ["bodies"], "bob", "bodies", "expected a non-empty list of bodies, got 'bob'"),
  ("geoms number", [*B0, "geoms"], 3, "bodies[0].geoms", "expected a non-empty list of geoms, got 3"),
  ("body None", B0, None, "bodies[0]", "expected a body object, got None"),
  ("nested None", [*G00, "size"], [None], "bodies[0].geoms[0].size", "got [None]"),
  ("nan", [*B0, "pos"], [0, float("nan"), 1], "bodies[0].pos", "expected 3 finite numbers, got [0, nan, 1]"),
  ("bool", ["dt"], True, "dt", "expected a number > 0, got True"),
  ("float substeps", ["substeps"], 2.5, "substeps", "expected an integer >= 1, got 2.5"),
  ("relaxation", ["relaxation"], 2.5, "relaxation", "expected a number in (0, 2], got 2.5"),
  ("geom type", [*G00, "type"], "cylinder", "bodies[0].geoms[0].type", "expected one of 'sphere', 'capsule'"),
  ("joint type", [*J0, "type"], "slider", "joints[0].type", "expected one of 'ball', 'hinge'"),
  ("inertia without mass", [*B0, "inertia"], [1, 1, 1], "bodies[0].inertia", 'requires "mass"'),
  ("bad inertia", [*B0, "inertia"], [1, 1, 3], "bodies[0].inertia", "principal moments must satisfy"),
  ("huge int", ["gravity"], [0, 0, 10 ** 400], "gravity", "got [0, 0, <an integer too large for a float>]"),
  ("rgba", [*G00, "rgba"], [1, 0, 0, 2], "bodies[0].geoms[0].rgba", "expected 4 numbers in [0, 1]"),
  ("camera", ["camera"], {"pos": [0, 0, 1]}, "camera.target", "missing required field"),
  ("overflow", [*G00, "size"], [1e300], "bodies[0]", "mass properties are not finite"),
  ("underflow", [*G00, "size"], [1e-200], "bodies[0]", "mass properties are not finite"),
  ("float32 overflow", [*B0, "pos"], [1e300, 0, 0], "bodies[0]", "body_pos0 = [1e+300, 0.0, 0.0] does not fit in"),
  ("exclude unknown", ["contact"], {"exclude": [["bob", "bobb"]]}, "contact.exclude[0][1]", "unknown body 'bobb'"),
  ("exclude self", ["contact"], {"exclude": [["arm", "arm"]]}, "contact.exclude[0]", "excluded from itself"),
  ("exclude shape", ["contact"], {"exclude": [["bob"]]}, "contact.exclude[0]", "expected a pair of body names"),
  ("armed ball", [*J0, "armature"], 0.1, "joints[0].armature", "joint 'joint0': armature needs a tree of hinges "
   "and slides; joint 'joint1' in its tree is a ball joint"),
  ("armed loop", ["joints"], [{"type": "hinge", "parent": "world", "child": "bob", "anchor": [0, 0, 2],
                               "axis": [0, 1, 0]},
                              {"type": "slide", "parent": "world", "child": "arm", "anchor": [1, 0, 1],
                               "axis": [1, 0, 0]},
                              {"type": "hinge", "parent": "bob", "child": "arm", "anchor": [1, 0, 1],
                               "axis": [0, 1, 0], "armature": 0.1}],
   "joints[2].armature", "joint 'joint2': armature needs a tree of hinges and slides; body 'arm' in its tree hangs "
   "from two joints"),
  ("planar damping", ["joints"], [{"type": "planar", "parent": "world", "child": "bob", "anchor": [0, 0, 2],
                                   "axis": [0, 1, 0], "damping": 0.5}],
   "joints[0].damping", "a planar joint carries no damping"),
  ("planar range", ["joints"], [{"type": "planar", "parent": "world", "child": "bob", "anchor": [0, 0, 2],
                                 "axis": [0, 1, 0], "range": [-1, 1]}],
   "joints[0].range", "not allowed for a planar joint"),
  ("armed below planar", ["joints"], [{"type": "hinge", "parent": "world", "child": "bob", "anchor": [0, 0, 2],
                                       "axis": [0, 1, 0], "armature": 0.1},
                                      {"type": "planar", "parent": "bob", "child": "arm", "anchor": [1, 0, 1],
                                       "axis": [0, 1, 0]}],
   "joints[0].armature", "joint 'joint0': armature needs a tree of hinges and slides; joint 'joint1' in its tree is a "
   "planar joint below a body"),
  ("slide2 axes", ["joints"], [{"type": "slide2", "parent": "world", "child": "bob", "anchor": [0, 0, 2],
                                "axis": [1, 0, 0], "axis2": [0.1, 1, 0]}],
   "joints[0].axis2", "expected a unit vector orthogonal to axis [1.0, 0.0, 0.0]"),
  ("slide2 one range", ["joints"], [{"type": "slide2", "parent": "world", "child": "bob", "anchor": [0, 0, 2],
                                     "axis": [1, 0, 0], "axis2": [0, 1, 0], "range": [-1, 1]}],
   "joints[0].range2", "required with range (both coordinates are limited)"),
  ("slide2 damping", ["joints"], [{"type": "slide2", "parent": "world", "child": "bob", "anchor": [0, 0, 2],
                                   "axis": [1, 0, 0], "axis2": [0, 1, 0], "damping": 0.5}],
   "joints[0].damping", "a slide2 joint carries no damping"),
  ("slide2 armature", ["joints"], [{"type": "slide2", "parent": "world", "child": "bob", "anchor": [0, 0, 2],
                                    "axis": [1, 0, 0], "axis2": [0, 1, 0], "armature": 0.5}],
   "joints[0].armature", "not allowed for a slide2 joint"),
  ("sprung ball", [*J1, "stiffness"], 2.0, "joints[1].stiffness", "not allowed for a ball joint"),
  ("sprung tree of a ball", [*J0, "stiffness"], 2.0, "joints[0].stiffness", "joint 'joint0': stiffness needs a tree "
   "of hinges and slides; joint 'joint1' in its tree is a ball joint"),
]


def test_scene_io_contact_exclude():
  """contact.exclude adds body pairs that never collide (besides joined bodies): Model.collide_exclude."""
  scene = _valid()
  base = load_scene(copy.deepcopy(scene), device="CPU").collide_exclude
  scene["contact"] = {"exclude": [["arm", "world"], ["bob", "arm"]]}
  model = load_scene(scene, device="CPU")
  assert model.collide_exclude == base | {(-1, 1), (0, 1)}


@pytest.mark.parametrize("where,value,path,fragment", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_scene_io_error_messages(where, value, path, fragment):
  scene = _valid()
  load_scene(copy.deepcopy(scene), device="CPU")  # the base scene is valid
  node = scene
  for k in where[:-1]: node = node[k]
  if value is _DEL: del node[where[-1]]
  else: node[where[-1]] = value
  with pytest.raises(SceneError) as e:
    load_scene(scene, device="CPU")
  msg = str(e.value)
  assert msg.startswith(path + ": ") and fragment in msg, msg


def test_scene_io_file_errors(tmp_path):
  with pytest.raises(SceneError, match=r"^scene file '.*nope\.json': not found$"):
    load_scene(tmp_path / "nope.json")
  bad = tmp_path / "bad.json"
  bad.write_text('{\n  "bodies": [\n    {"name": "b",,}\n  ]\n}\n')
  with pytest.raises(SceneError, match=r"^scene file '.*bad\.json', line 3 column 18: invalid JSON: "):
    load_scene(bad)
  dup = tmp_path / "dup.json"
  dup.write_text('{"bodies": [], "bodies": []}')
  with pytest.raises(SceneError, match=r"^scene file '.*dup\.json': duplicate key 'bodies'"):
    load_scene(dup)
  top = tmp_path / "list.json"
  top.write_text("[1, 2]")
  with pytest.raises(SceneError, match=r"^scene: expected a JSON object, got \[1, 2\]"):
    load_scene(top)
  with pytest.raises(SceneError, match=r"^scene: expected a path to a JSON file or a dict, got 3"):
    load_scene(3)
  with pytest.raises(SceneError, match=r"^scene: expected a path to a JSON file or a dict, got 3"):
    engine.load_scene(3)   # the front door, which also takes shipped scenes' names
  with pytest.raises(SceneError, match=r"^scene file .*: cannot be read"):
    load_scene(tmp_path)  # a directory


def test_scene_io_input_untouched_and_names():
  scene = _valid()
  before = copy.deepcopy(scene)
  model = load_scene(scene, device="CPU")
  assert scene == before and model.name == "scene" and model.jnt_name == ("joint0", "joint1")
  assert model.geom_body == (-1, 0, 1) and model.geom_type == ("plane", "sphere", "box")


# --- fuzzing: any malformed scene gives SceneError with a path, never another exception ---

_leaf = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.integers(), st.floats(), st.text(max_size=6),
                  st.sampled_from([-1.0, 0.0, 1e308, -1e308, 1e-320, 10 ** 400, "world", "bob", "arm", "hinge"]))
_junk = st.recursive(_leaf, lambda c: st.lists(c, max_size=5) | st.dictionaries(st.text(max_size=6), c, max_size=3),
                     max_leaves=8)
_value = st.one_of(_junk, st.lists(st.floats(-2, 2), max_size=5), st.lists(st.integers(-2, 2), min_size=3, max_size=4))


def _paths(node, prefix=()):
  yield prefix
  items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
  for k, v in items: yield from _paths(v, prefix + (k,))


def _rich() -> dict:
  scene = _valid()
  scene.update(camera={"pos": [0, -3, 1], "target": [0, 0, 1]}, dt=0.01, substeps=4)
  scene["bodies"][1].update(mass=2.0, inertia=[0.1, 0.1, 0.1], quat=[1, 0, 0, 0], vel=[1, 0, 0])
  scene["bodies"][1]["geoms"].append({"type": "capsule", "size": [0.05, 0.1], "pos": [0, 0, 0.2], "rgba": [1, 0, 0, 1]})
  scene["joints"].append({"type": "distance", "parent": "world", "child": "arm", "anchor_parent": [1, 0, 2],
                          "anchor_child": [1, 0, 1.1], "compliance": 1e-3})
  scene["joints"][0]["range"] = [-1.0, 1.0]
  return scene


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_scene_io_fuzz_malformed(data):
  scene = _rich()
  for _ in range(data.draw(st.integers(1, 3), label="mutations")):
    path = data.draw(st.sampled_from(list(_paths(scene))), label="path")
    parent = scene
    for k in path[:-1]: parent = parent[k]
    node = parent[path[-1]] if path else scene
    op = data.draw(st.sampled_from(["delete", "insert", "replace"]), label="op")
    if op == "insert" and isinstance(node, dict):
      node[data.draw(st.text(max_size=8), label="key")] = data.draw(_value, label="value")
    elif op == "delete" and path:
      del parent[path[-1]]
    elif path:
      parent[path[-1]] = data.draw(_value, label="value")
  try:
    model = load_scene(scene, dtype=dtypes.float32, device="CPU")
  except SceneError as e:
    assert PATH_PREFIX.match(str(e)), f"message without a path: {e}"
    return
  filled = load_scene_dict(scene)
  assert load_scene_dict(filled) == filled and model.nbody == len(filled["bodies"])
