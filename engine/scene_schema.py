"""Scene JSON validation: turns a user's scene (file or dict) into a checked dict with every default filled in.

Every problem raises SceneError whose message starts with the field path (`bodies[3].geoms[0].size: expected ...`),
says what was expected and shows what was found, so a typo in a hand-written scene is a one-line fix. The format
is documented in docs/scenes.md; keep the two in step.
"""
from __future__ import annotations

import json
import os
from pathlib import Path


from engine.scene_fields import SceneError, _fail, _int, _is_finite, _keys, _list, _name, _num, _obj, _quat, _vec, show
from engine.scene_joints import _joint, armed_tree_conflict, hinge_groups

GEOM_KINDS = ("sphere", "capsule", "box", "plane")
DEFAULTS = {"gravity": [0.0, 0.0, -9.81], "dt": 1.0 / 240.0, "substeps": 20, "iterations": 1, "relaxation": 1.0}
# tab10-like colours: distinct, readable on a light ground; body geoms take the colour of their body
PALETTE = ((0.12, 0.47, 0.71, 1.0), (1.0, 0.5, 0.05, 1.0), (0.17, 0.63, 0.17, 1.0), (0.84, 0.15, 0.16, 1.0),
           (0.58, 0.4, 0.74, 1.0), (0.55, 0.34, 0.29, 1.0), (0.89, 0.47, 0.76, 1.0), (0.74, 0.74, 0.13, 1.0),
           (0.09, 0.75, 0.81, 1.0), (0.5, 0.5, 0.5, 1.0))
GROUND_RGBA, STATIC_RGBA = (0.85, 0.85, 0.85, 1.0), (0.6, 0.6, 0.6, 1.0)
# [m] broadphase AABB growth beyond 2 dt |v|: a body at rest that is hit mid-step starts moving before the next
# broadphase (a Newton's cradle's balls 1 mm apart), so pairs this close are kept as candidates
DEFAULT_MARGIN = 0.01

_TOP_KEYS = ("name", "gravity", "dt", "substeps", "iterations", "relaxation", "contact", "camera", "world", "bodies",
             "joints", "sites", "tendons", "actuators")
_CONTACT_KEYS = ("enabled", "pair_capacity", "hash_slots", "softplus_beta", "margin", "max_depenetration", "exclude")
_BODY_KEYS = ("name", "pos", "quat", "vel", "angvel", "mass", "inertia", "geoms")
_GEOM_KEYS = ("type", "size", "pos", "quat", "density", "friction", "restitution", "rgba", "name")



def read_scene(src) -> tuple[object, str]:
  """The raw scene and its default name: parse a JSON file (path), convert an MJCF file (.xml), or pass a dict
  through."""
  if isinstance(src, dict): return src, "scene"
  if not isinstance(src, (str, os.PathLike)):
    raise SceneError(f"scene: expected a path to a JSON file or a dict, got {show(src)}")
  path = Path(src)
  if path.suffix.lower() == ".xml":   # MJCF, through MuJoCo's compiler (engine/mjcf.py)
    from engine.mjcf import from_mjcf
    return from_mjcf(path), path.stem
  try:
    text = path.read_text(encoding="utf-8")
  except FileNotFoundError:
    raise SceneError(f"scene file '{path}': not found") from None
  except (OSError, UnicodeDecodeError, ValueError) as e:
    raise SceneError(f"scene file '{path}': cannot be read ({e})") from None
  try:
    return json.loads(text, object_pairs_hook=_no_duplicates), path.stem
  except json.JSONDecodeError as e:
    raise SceneError(f"scene file '{path}', line {e.lineno} column {e.colno}: invalid JSON: {e.msg}") from None
  except _DuplicateKey as e:
    raise SceneError(f"scene file '{path}': duplicate key {e.args[0]!r} in a JSON object") from None
  except (RecursionError, ValueError) as e:  # nesting too deep, an integer literal too long to convert...
    raise SceneError(f"scene file '{path}': invalid JSON: {type(e).__name__}: {str(e)[:200]}") from None


class _DuplicateKey(Exception): pass


def _no_duplicates(pairs):
  # json.loads would keep the last of two equal keys silently; a duplicated key in a scene is always a mistake
  d = {}
  for k, v in pairs:
    if k in d: raise _DuplicateKey(k)
    d[k] = v
  return d


def validate(raw, default_name: str = "scene") -> dict:
  """Check a parsed scene and return a new dict with all defaults filled (JSON-serialisable, the input is untouched)."""
  top = _obj(raw, "", "a JSON object")
  _keys(top, "", _TOP_KEYS, ("bodies",))
  out = {"name": _name(top.get("name", default_name), "name")}
  out["gravity"] = _vec(top.get("gravity", DEFAULTS["gravity"]), "gravity", 3)
  out["dt"] = _num(top.get("dt", DEFAULTS["dt"]), "dt", lo=0.0, lo_open=True)
  out["substeps"] = _int(top.get("substeps", DEFAULTS["substeps"]), "substeps", 1)
  out["iterations"] = _int(top.get("iterations", DEFAULTS["iterations"]), "iterations", 1)
  out["relaxation"] = _num(top.get("relaxation", DEFAULTS["relaxation"]), "relaxation", 0.0, 2.0, lo_open=True)
  out["contact"] = _contact(top.get("contact", {}), "contact")
  if "camera" in top: out["camera"] = _camera(top["camera"], "camera")
  world = _obj(top.get("world", {}), "world", "an object")
  _keys(world, "world", ("geoms",), ())
  wgeoms = _list(world.get("geoms", []), "world.geoms", "a list of geoms", nonempty=False)
  out["world"] = {"geoms": [_geom(g, f"world.geoms[{k}]", None) for k, g in enumerate(wgeoms)]}
  bodies = _list(top["bodies"], "bodies", "a non-empty list of bodies", nonempty=True)
  out["bodies"], seen = [], {}
  for i, b in enumerate(bodies):
    body = _body(b, f"bodies[{i}]", i)
    if body["name"] in seen:
      _fail(f"bodies[{i}].name", f"duplicate body name {body['name']!r} (also {seen[body['name']]}.name)")
    seen[body["name"]] = f"bodies[{i}]"
    out["bodies"].append(body)
  joints = _list(top.get("joints", []), "joints", "a list of joints", nonempty=False)
  names = [b["name"] for b in out["bodies"]]
  _exclude(out["contact"], names)
  out["joints"], seen = [], {}
  for j, jd in enumerate(joints):
    joint = _joint(jd, f"joints[{j}]", j, names)
    if joint["name"] in seen:
      _fail(f"joints[{j}].name", f"duplicate joint name {joint['name']!r} (also {seen[joint['name']]})")
    seen[joint["name"]] = f"joints[{j}]"
    out["joints"].append(joint)
  hinge_groups(out["joints"])
  if bad := armed_tree_conflict(out["joints"]):
    _fail(f"joints[{bad[0]}].{'armature' if out['joints'][bad[0]].get('armature') else 'stiffness'}", bad[1])
  # the site, tendon and actuator checks live in their own files (they use this file's leaf checks)
  from engine.scene_actuators import actuators
  from engine.scene_tendons import sites, tendons
  out["sites"] = sites(top.get("sites", []), names)
  out["tendons"] = tendons(top.get("tendons", []), out["sites"])
  out["actuators"] = actuators(top.get("actuators", []), out["joints"], out["tendons"])
  return out


def _contact(v, path) -> dict:
  """Collision settings; absent fields are derived from the scene by engine/scene.py (docs/scenes.md)."""
  c = _obj(v, path, "an object {enabled, pair_capacity, hash_slots, softplus_beta, margin, max_depenetration, "
           "exclude}")
  _keys(c, path, _CONTACT_KEYS, ())
  enabled = c.get("enabled", True)
  if not isinstance(enabled, bool): _fail(f"{path}.enabled", f"expected true or false, got {show(enabled)}")
  out = {"enabled": enabled}
  for k in ("pair_capacity", "hash_slots"):
    if k in c: out[k] = _int(c[k], f"{path}.{k}", 1)
  out["softplus_beta"] = _num(c.get("softplus_beta", 0.0), f"{path}.softplus_beta", lo=0.0, unit=" [1/m]")
  out["margin"] = _num(c.get("margin", DEFAULT_MARGIN), f"{path}.margin", lo=0.0, unit=" [m]")
  out["max_depenetration"] = _num(c.get("max_depenetration", 0.0), f"{path}.max_depenetration", lo=0.0,
                                  unit=" [m/s]")
  if "exclude" in c:   # the names are checked against the bodies by _exclude once they are known
    pairs = _list(c["exclude"], f"{path}.exclude", "a list of [body, body] name pairs", nonempty=False)
    for i, p in enumerate(pairs):
      if not (isinstance(p, list) and len(p) == 2 and all(isinstance(n, str) for n in p)):
        _fail(f"{path}.exclude[{i}]", f"expected a pair of body names [a, b], got {show(p)}")
    out["exclude"] = [list(p) for p in pairs]
  return out


def _exclude(contact: dict, names: list[str], path: str = "contact.exclude") -> None:
  """Each excluded pair names two different bodies (or "world")."""
  for i, (a, b) in enumerate(contact.get("exclude", [])):
    for k, n in enumerate((a, b)):
      if n != "world" and n not in names: _fail(f"{path}[{i}][{k}]", f"unknown body {n!r} (bodies: {names})")
    if a == b: _fail(f"{path}[{i}]", f"a body excluded from itself ({a!r})")


def _camera(v, path) -> dict:
  cam = _obj(v, path, "an object {pos, target, fov}")
  _keys(cam, path, ("pos", "target", "fov"), ("pos", "target"))
  out = {"pos": _vec(cam["pos"], f"{path}.pos", 3), "target": _vec(cam["target"], f"{path}.target", 3)}
  if out["pos"] == out["target"]: _fail(f"{path}.target", f"must differ from camera.pos, got {show(out['target'])}")
  out["fov"] = _num(cam.get("fov", 45.0), f"{path}.fov", 0.0, 180.0, lo_open=True, hi_open=True, unit=" [deg]")
  return out


def _geom(v, path, body: int | None) -> dict:
  """One geom; body is the owning body's index (None for a world geom)."""
  g = _obj(v, path, "a geom object")
  _keys(g, path, _GEOM_KEYS, ("type",))
  kind = g["type"]
  if not isinstance(kind, str) or kind not in GEOM_KINDS:
    _fail(f"{path}.type", f"expected one of {', '.join(map(repr, GEOM_KINDS))}, got {show(kind)}")
  if kind == "plane" and body is not None:
    _fail(f"{path}.type", "a plane is static: put it in world.geoms, not on a body")
  out = {"type": kind}
  if kind != "plane" and "size" not in g: _fail(f"{path}.size", f"missing required field for a {kind}")
  out["size"] = _size(kind, g.get("size", []), f"{path}.size")
  out["pos"] = _vec(g.get("pos", [0.0, 0.0, 0.0]), f"{path}.pos", 3)
  out["quat"] = _quat(g.get("quat", [1.0, 0.0, 0.0, 0.0]), f"{path}.quat")
  out["density"] = _num(g.get("density", 1000.0), f"{path}.density", lo=0.0, lo_open=True, unit=" [kg/m^3]")
  out["friction"] = _num(g.get("friction", 0.5), f"{path}.friction", lo=0.0)
  out["restitution"] = _num(g.get("restitution", 0.0), f"{path}.restitution", 0.0, 1.0)
  default_rgba = PALETTE[body % len(PALETTE)] if body is not None else GROUND_RGBA if kind == "plane" else STATIC_RGBA
  rgba = _vec(g.get("rgba", list(default_rgba)), f"{path}.rgba", 4)
  if not all(0.0 <= c <= 1.0 for c in rgba): _fail(f"{path}.rgba", f"expected 4 numbers in [0, 1], got {show(rgba)}")
  out["rgba"] = rgba
  if "name" in g: out["name"] = _name(g["name"], f"{path}.name")
  return out


def _size(kind, v, path) -> list[float]:
  expect = {"sphere": "1 positive number [radius] for a sphere",
            "capsule": "2 numbers [radius > 0, half_length >= 0] for a capsule",
            "box": "3 positive numbers [hx, hy, hz] (half extents) for a box",
            "plane": "[] or 2 positive numbers [hx, hy] (render half extents) for a plane"}[kind]
  ok = isinstance(v, (list, tuple)) and all(_is_finite(x) for x in v)
  if ok and kind == "sphere": ok = len(v) == 1 and v[0] > 0
  if ok and kind == "capsule": ok = len(v) == 2 and v[0] > 0 and v[1] >= 0
  if ok and kind == "box": ok = len(v) == 3 and min(v) > 0
  if ok and kind == "plane": ok = len(v) == 0 or (len(v) == 2 and min(v) > 0)
  if not ok: _fail(path, f"expected {expect}, got {show(v)}")
  return [float(x) for x in v]


def _body(v, path, index) -> dict:
  b = _obj(v, path, "a body object")
  _keys(b, path, _BODY_KEYS, ("name", "pos", "geoms"))
  out = {"name": _name(b["name"], f"{path}.name")}
  if out["name"] == "world": _fail(f"{path}.name", "'world' is reserved for the static world; pick another name")
  out["pos"] = _vec(b["pos"], f"{path}.pos", 3)
  out["quat"] = _quat(b.get("quat", [1.0, 0.0, 0.0, 0.0]), f"{path}.quat")
  out["vel"] = _vec(b.get("vel", [0.0, 0.0, 0.0]), f"{path}.vel", 3)
  out["angvel"] = _vec(b.get("angvel", [0.0, 0.0, 0.0]), f"{path}.angvel", 3)
  if "mass" in b: out["mass"] = _num(b["mass"], f"{path}.mass", lo=0.0, lo_open=True, unit=" [kg]")
  if "inertia" in b:
    inertia = _vec(b["inertia"], f"{path}.inertia", 3)
    if min(inertia) <= 0:
      _fail(f"{path}.inertia", f"expected 3 positive numbers [ixx, iyy, izz] [kg m^2], got {show(inertia)}")
    # a real body's principal moments obey a + b >= c; breaking it means a typo, and the solver would misbehave
    if any(2 * c > sum(inertia) * (1 + 1e-9) for c in inertia):
      _fail(f"{path}.inertia", f"principal moments must satisfy ixx + iyy >= izz (and permutations), "
                               f"got {show(inertia)}")
    if "mass" not in b: _fail(f"{path}.inertia", "requires \"mass\" too (the inertia is not scaled from density)")
    out["inertia"] = inertia
  geoms = _list(b["geoms"], f"{path}.geoms", "a non-empty list of geoms", nonempty=True)
  out["geoms"] = [_geom(g, f"{path}.geoms[{k}]", index) for k, g in enumerate(geoms)]
  return out
