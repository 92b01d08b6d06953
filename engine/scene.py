"""Scene loading: JSON file or dict -> validated dict -> Model (docs/scenes.md describes the format).

Everything is computed in float64 numpy and converted to Tensors once at the end. The scene gives each body's
pose in a user frame of its choice; the Model's body frame is the inertial frame (centre of mass, principal axes),
so geom poses, joint anchors and axes are re-expressed here, once, and the solver never sees the user frame.
"""
from __future__ import annotations

import math

import numpy as np
from tinygrad import Tensor, dtypes
from tinygrad.dtype import DType, _to_np_dtype

from engine.mass import body_mass, principal_axes
from engine.scene_actuators import actuator_arrays
from engine.npquat import mat_to_quat, quat_canon, quat_conj, quat_mul, quat_rotate, quat_to_mat
from engine.scene_fields import SceneError, show
from engine.scene_joints import hinge_groups
from engine.scene_schema import read_scene, validate
from engine.scene_tendons import site_arrays
from oracle.broadphase import pair_allowed
from oracle.types import GEOM_TYPES, WORLD, Model

__all__ = ["SceneError", "load_scene", "load_scene_dict", "mat_to_quat", "quat_conj", "quat_mul", "quat_to_mat"]


def load_scene_dict(src) -> dict:
  """Validate a scene (path to a JSON file, or an already parsed dict) and return it with every default filled in.

  The result is a fresh JSON-serialisable dict in the same format (validating it again gives the same dict). It
  carries what the Model has no field for, such as "camera" (absent when the scene sets none) and geom names.
  Raises SceneError for any problem; the message starts with the field path.
  """
  raw, default_name = read_scene(src)
  return validate(raw, default_name)


def load_scene(src, dtype: DType | None = None, device: str | None = None) -> Model:
  """Load a scene (path to a JSON file, or a dict) into a Model whose tensors have `dtype` (default float32) on
  `device` (default: tinygrad's default device). Raises SceneError for any problem in the scene."""
  return build_model(load_scene_dict(src), dtypes.float32 if dtype is None else dtype, device)


def _float_dtype(dtype) -> DType:
  """dtype as the engine's float type: dtypes.float32 or dtypes.float64, or their names; anything else is an error
  that names it (float16 cannot hold a substep's gravity step, g h^2 ~ 1e-5 of a metre, next to a pose)."""
  got = getattr(dtypes, dtype, None) if isinstance(dtype, str) else dtype
  if got not in (dtypes.float32, dtypes.float64):
    raise ValueError(f"dtype: expected dtypes.float32 or dtypes.float64 (or 'float32', 'float64'), got {dtype!r}")
  return got


def build_model(scene: dict, dtype: DType = dtypes.float32, device: str | None = None) -> Model:
  """Model from a dict returned by load_scene_dict."""
  dtype = _float_dtype(dtype)
  with np.errstate(all="ignore"):  # overflow from absurd but finite inputs is reported by _check_finite instead
    arrays, geom_paths = _bodies_and_geoms(scene)
    arrays.update(_joints(scene, arrays["body_pos0"], arrays["body_quat0"]))
    arrays["gravity"] = np.array(scene["gravity"])
    arrays.update(actuator_arrays(scene))
    arrays.update(site_arrays(scene, arrays["body_pos0"], arrays["body_quat0"]))
  bodies, joints, sites, tendons = scene["bodies"], scene["joints"], scene["sites"], scene["tendons"]
  np_dtype = _to_np_dtype(dtype)
  _check_finite(arrays, np_dtype, geom_paths)
  tensors = {k: Tensor(np.ascontiguousarray(a, dtype=np_dtype), dtype=dtype, device=device) for k, a in arrays.items()}
  group = [()] * len(joints)   # two or three hinges on one body: hinge2 or hinge3 joints (oracle/constraints/hinges.py)
  for g in hinge_groups(joints):
    for k in g: group[k] = tuple(g)
  kinds = tuple(f"hinge{len(group[k])}" if group[k] else j["type"] for k, j in enumerate(joints))
  return Model(
    name=scene["name"], nbody=len(bodies), ngeom=len(geom_paths), njoint=len(joints),
    body_name=tuple(b["name"] for b in bodies),
    geom_type=tuple(g["type"] for g in scene["world"]["geoms"]) + tuple(g["type"] for b in bodies for g in b["geoms"]),
    geom_body=(WORLD,) * len(scene["world"]["geoms"]) + tuple(i for i, b in enumerate(bodies) for _ in b["geoms"]),
    jnt_name=tuple(j["name"] for j in joints), jnt_type=kinds, jnt_group=tuple(group),
    jnt_parent=tuple(WORLD if j["parent"] == "world" else _body_index(bodies, j["parent"]) for j in joints),
    jnt_child=tuple(_body_index(bodies, j["child"]) for j in joints),
    nact=len(scene["actuators"]), act_name=tuple(a["name"] for a in scene["actuators"]),
    act_type=tuple(a["type"] for a in scene["actuators"]),
    act_joint=tuple(next((i for i, j in enumerate(joints) if j["name"] == a.get("joint")), WORLD)
                    for a in scene["actuators"]),
    act_tendon=tuple(next((i for i, t in enumerate(tendons) if t["name"] == a.get("tendon")), -1)
                     for a in scene["actuators"]),
    nsite=len(sites), site_name=tuple(s["name"] for s in sites),
    site_body=tuple(WORLD if s["body"] == "world" else _body_index(bodies, s["body"]) for s in sites),
    ntendon=len(tendons), ten_name=tuple(t["name"] for t in tendons),
    ten_site=tuple(tuple(next(k for k, s in enumerate(sites) if s["name"] == n) for n in t["sites"]) for t in tendons),
    dt=scene["dt"], substeps=scene["substeps"], iterations=scene["iterations"], relaxation=scene["relaxation"],
    jnt_armature=tuple(float(j.get("armature", 0.0)) for j in joints),
    jnt_stiffness=tuple(float(j.get("stiffness", 0.0)) for j in joints),
    jnt_springref=tuple(float(j.get("springref", 0.0)) for j in joints),
    jnt_range2=tuple(tuple(j.get("range2", (0.0, 0.0))) for j in joints), **_collision(scene), **tensors)


def _collision(scene) -> dict:
  """Static collision settings: excluded body pairs, broadphase capacities (derived from the scene unless given)."""
  bodies, on = scene["bodies"], scene["contact"]["enabled"]
  index = {b["name"]: i for i, b in enumerate(bodies)} | {"world": WORLD}
  exclude = frozenset([tuple(sorted((index[j["parent"]], index[j["child"]]))) for j in scene["joints"]
                       if not j["collide"]] + [tuple(sorted((index[a], index[b])))
                                               for a, b in scene["contact"].get("exclude", [])])
  # every non-plane geom goes through the spatial hash (planes pair with every body geom statically)
  hashed = [(g["type"], WORLD) for g in scene["world"]["geoms"] if g["type"] != "plane"] if on else []
  hashed += [(g["type"], i) for i, b in enumerate(bodies) for g in b["geoms"]] if on else []
  counts: dict = {}
  for i, (ta, ba) in enumerate(hashed):
    for tb, bb in hashed[i + 1:]:
      if not pair_allowed(ba, bb, exclude): continue
      key = tuple(sorted((ta, tb), key=GEOM_TYPES.index))
      counts[key] = counts.get(key, 0) + 1
  want = scene["contact"].get("pair_capacity")
  per_type = {t: sum(1 for tt, _ in hashed if tt == t) for t in GEOM_TYPES}
  # default: every possible pair, up to 8 per geom of the pair's types (a dense pile touches ~6 neighbours each)
  capacity = tuple((a, b, min(n, want if want else 8 * (per_type[a] + per_type[b]))) for (a, b), n in
                   sorted(counts.items(), key=lambda kv: (GEOM_TYPES.index(kv[0][0]), GEOM_TYPES.index(kv[0][1]))))
  slots = scene["contact"].get("hash_slots", max(1, min(len(hashed), 16)))
  return {"contact_enabled": on, "collide_exclude": exclude, "pair_capacity": capacity, "hash_slots": slots,
          "contact_beta": scene["contact"]["softplus_beta"], "contact_margin": scene["contact"]["margin"],
          "contact_depen": scene["contact"]["max_depenetration"],
          "contact_restitution": on and any(g["restitution"] > 0 for g in scene["world"]["geoms"] +
                                            [g for b in bodies for g in b["geoms"]])}


def _body_index(bodies, name) -> int:
  return next(i for i, b in enumerate(bodies) if b["name"] == name)


def _geom_size(g) -> list[float]:
  # the Model's size row: sphere (r,0,0), capsule (r,h,0), box (hx,hy,hz); a plane is infinite (extent: render only)
  return [0.0, 0.0, 0.0] if g["type"] == "plane" else (g["size"] + [0.0, 0.0])[:3]


def _bodies_and_geoms(scene) -> tuple[dict[str, np.ndarray], list[str]]:
  """Body inertial frames and mass properties, and every geom re-expressed in its body's inertial frame.

  Geom order: world geoms first, then each body's geoms in body order."""
  pos0, quat0, inv_mass, inv_inertia = [], [], [], []
  g_pos, g_quat, g_size, g_fric, g_rest, g_rgba, paths = [], [], [], [], [], [], []

  def add_geom(g, pos, quat, path):
    g_pos.append(pos), g_quat.append(quat), g_size.append(_geom_size(g)), paths.append(path)
    g_fric.append(g["friction"]), g_rest.append(g["restitution"]), g_rgba.append(g["rgba"])

  for k, g in enumerate(scene["world"]["geoms"]):  # static geoms stay in the world frame
    add_geom(g, g["pos"], g["quat"], f"world.geoms[{k}]")
  for i, b in enumerate(scene["bodies"]):
    path = f"bodies[{i}]"
    mass, com, inertia = body_mass((g["type"], g["size"], g["density"], g["pos"], g["quat"]) for g in b["geoms"])
    if "mass" in b:  # the total mass overrides the density-derived one; the shape of the distribution is kept
      inertia, mass = inertia * (b["mass"] / mass), b["mass"]
    if not (math.isfinite(mass) and mass > 0 and np.isfinite(com).all() and np.isfinite(inertia).all()):
      raise SceneError(f"{path}: mass properties are not finite and positive (mass={mass:.6g} kg, centre of mass "
                       f"{show(com.tolist())}); check the geom sizes, densities and \"mass\"")
    if "inertia" in b:  # given principal moments about the centre of mass, in the user axes: no rotation needed
      moments, q_principal = np.array(b["inertia"]), np.array([1.0, 0.0, 0.0, 0.0])
    else:
      moments, q_principal = principal_axes(inertia)
    if not (np.isfinite(moments).all() and moments.min() > 0):
      raise SceneError(f"{path}: principal moments of inertia {show(moments.tolist())} kg m^2 are not positive; "
                       "check the geom sizes, densities and \"mass\"")
    q_user = np.array(b["quat"])
    pos0.append(np.array(b["pos"]) + quat_rotate(q_user, com))
    quat0.append(quat_canon(quat_mul(q_user, q_principal)))
    inv_mass.append(1.0 / mass), inv_inertia.append(1.0 / moments)
    q_inv = quat_conj(q_principal)  # user frame -> inertial frame
    for k, g in enumerate(b["geoms"]):
      add_geom(g, quat_rotate(q_inv, np.array(g["pos"]) - com), quat_canon(quat_mul(q_inv, g["quat"])),
               f"{path}.geoms[{k}]")
  arrays = {"body_inv_mass": (inv_mass, 0), "body_inv_inertia": (inv_inertia, 3), "body_pos0": (pos0, 3),
            "body_quat0": (quat0, 4), "body_vel0": ([b["vel"] for b in scene["bodies"]], 3),
            "body_angvel0": ([b["angvel"] for b in scene["bodies"]], 3), "geom_pos": (g_pos, 3),
            "geom_quat": (g_quat, 4), "geom_size": (g_size, 3), "geom_friction": (g_fric, 0),
            "geom_restitution": (g_rest, 0), "geom_rgba": (g_rgba, 4)}
  out = {k: _stack(v, width) for k, (v, width) in arrays.items()}
  return out, paths


def _perpendicular(axis: np.ndarray) -> np.ndarray:
  """A fixed unit vector normal to a unit axis: the least aligned basis vector, Gram-Schmidt projected. Components
  equal to 1e-9 tie, the first winning, so that an axis read back from MJCF with rounding keeps its reference."""
  e = np.eye(3)[int(np.argmin(np.round(np.abs(axis), 9)))]
  ref = e - (e @ axis) * axis
  return ref / np.linalg.norm(ref)


def _joints(scene, body_pos0: np.ndarray, body_quat0: np.ndarray) -> dict[str, np.ndarray]:
  """Joint frames in each body's inertial frame, from world-frame anchors and axes at the initial pose."""
  names = [b["name"] for b in scene["bodies"]]
  rows: dict[str, list] = {k: [] for k in ("jnt_anchor_parent", "jnt_anchor_child", "jnt_axis_parent",
                                           "jnt_axis_child", "jnt_ref_parent", "jnt_ref_child", "jnt_relquat",
                                           "jnt_range", "jnt_limited", "jnt_compliance", "jnt_damping", "jnt_length")}

  def frame(name):  # (position, orientation) of a joint side's frame at the initial pose
    if name == "world": return np.zeros(3), np.array([1.0, 0.0, 0.0, 0.0])
    i = names.index(name)
    return body_pos0[i], body_quat0[i]

  for j in scene["joints"]:
    (p_pos, p_quat), (c_pos, c_quat) = frame(j["parent"]), frame(j["child"])
    p_inv, c_inv = quat_conj(p_quat), quat_conj(c_quat)
    if j["type"] == "distance":
      a_par, a_chi, length = np.array(j["anchor_parent"]), np.array(j["anchor_child"]), j["length"]
    else:
      a_par = a_chi = np.array(j["anchor"])
      length = 0.0
    # hinge, slide, planar: its axis (and a reference normal to it); slide2: its two axes (the second the reference);
    # other types: a harmless fixed frame, so every joint row has the same layout
    axial = j["type"] in ("hinge", "slide", "planar", "slide2")
    axis = np.array(j["axis"]) if axial else np.array([0.0, 0.0, 1.0])
    ref = np.array(j["axis2"]) if j["type"] == "slide2" else _perpendicular(axis) if axial else np.array([1.0, 0, 0])
    rows["jnt_anchor_parent"].append(quat_rotate(p_inv, a_par - p_pos))
    rows["jnt_anchor_child"].append(quat_rotate(c_inv, a_chi - c_pos))
    rows["jnt_axis_parent"].append(quat_rotate(p_inv, axis)), rows["jnt_axis_child"].append(quat_rotate(c_inv, axis))
    rows["jnt_ref_parent"].append(quat_rotate(p_inv, ref)), rows["jnt_ref_child"].append(quat_rotate(c_inv, ref))
    rows["jnt_relquat"].append(quat_canon(quat_mul(p_inv, c_quat)))
    rows["jnt_range"].append(j.get("range", [-math.pi, math.pi]))
    rows["jnt_limited"].append(1.0 if "range" in j else 0.0)
    rows["jnt_compliance"].append(j["compliance"]), rows["jnt_damping"].append(j["damping"])
    rows["jnt_length"].append(length)
  width = {"jnt_relquat": 4, "jnt_range": 2, "jnt_limited": 0, "jnt_compliance": 0, "jnt_damping": 0, "jnt_length": 0}
  return {k: _stack(v, width.get(k, 3)) for k, v in rows.items()}


def _stack(rows: list, width: int) -> np.ndarray:
  """(n, width) float64 array, (n,) for width 0; keeps the shape when there are no rows."""
  return np.array(rows, np.float64).reshape((len(rows), width) if width else (len(rows),))


def _check_finite(arrays: dict[str, np.ndarray], np_dtype, geom_paths: list[str]):
  """Every value must be finite in the target dtype, else name the scene element it came from."""
  for k, a in arrays.items():
    with np.errstate(all="ignore"):
      bad = ~np.isfinite(a.astype(np_dtype))
    if not bad.any(): continue
    row = int(np.argwhere(bad)[0][0]) if bad.ndim else 0
    where = (k if k == "gravity" else f"bodies[{row}]" if k.startswith("body_") else
             geom_paths[row] if k.startswith("geom_") else f"actuators[{row}]" if k.startswith("act_") else
             f"joints[{row}]")
    raise SceneError(f"{where}: {k} = {show(a[row].tolist() if a.ndim else float(a))} does not fit in "
                     f"{np.dtype(np_dtype).name}; the scene's numbers are too large or too small")
