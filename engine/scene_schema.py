"""Scene JSON validation: turns a user's scene (file or dict) into a checked dict with every default filled in.

Every problem raises SceneError whose message starts with the field path (`bodies[3].geoms[0].size: expected ...`),
says what was expected and shows what was found, so a typo in a hand-written scene is a one-line fix. The format
is documented in docs/scenes.md; keep the two in step.
"""
from __future__ import annotations

import json
import math
import numbers
import os
import re
from pathlib import Path

import numpy as np

GEOM_KINDS = ("sphere", "capsule", "box", "plane")
JOINT_KINDS = ("ball", "hinge", "fixed", "distance", "slide", "planar", "slide2")
DEFAULTS = {"gravity": [0.0, 0.0, -9.81], "dt": 1.0 / 240.0, "substeps": 20, "iterations": 1, "relaxation": 1.0}
# tab10-like colours: distinct, readable on a light ground; body geoms take the colour of their body
PALETTE = ((0.12, 0.47, 0.71, 1.0), (1.0, 0.5, 0.05, 1.0), (0.17, 0.63, 0.17, 1.0), (0.84, 0.15, 0.16, 1.0),
           (0.58, 0.4, 0.74, 1.0), (0.55, 0.34, 0.29, 1.0), (0.89, 0.47, 0.76, 1.0), (0.74, 0.74, 0.13, 1.0),
           (0.09, 0.75, 0.81, 1.0), (0.5, 0.5, 0.5, 1.0))
GROUND_RGBA, STATIC_RGBA = (0.85, 0.85, 0.85, 1.0), (0.6, 0.6, 0.6, 1.0)
QUAT_TOL = 1e-6
# [m] broadphase AABB growth beyond 2 dt |v|: a body at rest that is hit mid-step starts moving before the next
# broadphase (a Newton's cradle's balls 1 mm apart), so pairs this close are kept as candidates
DEFAULT_MARGIN = 0.01  # a quaternion further than this from unit norm is a mistake, not rounding

_TOP_KEYS = ("name", "gravity", "dt", "substeps", "iterations", "relaxation", "contact", "camera", "world", "bodies",
             "joints", "sites", "tendons", "actuators")
_CONTACT_KEYS = ("enabled", "pair_capacity", "hash_slots", "softplus_beta", "margin", "exclude")
_BODY_KEYS = ("name", "pos", "quat", "vel", "angvel", "mass", "inertia", "geoms")
_GEOM_KEYS = ("type", "size", "pos", "quat", "density", "friction", "restitution", "rgba", "name")
_JOINT_COMMON = ("name", "type", "parent", "child", "compliance", "damping", "collide")
_JOINT_KEYS = {"ball": ("anchor",), "fixed": ("anchor",),
               "hinge": ("anchor", "axis", "range", "armature", "stiffness", "springref"),
               "distance": ("anchor_parent", "anchor_child", "length"),
               "slide": ("anchor", "axis", "range", "armature", "stiffness", "springref"), "planar": ("anchor", "axis"),
               "slide2": ("anchor", "axis", "axis2", "range", "range2")}
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class SceneError(ValueError):
  """A scene that does not match the format (docs/scenes.md). The message starts with the offending field's path."""


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
  c = _obj(v, path, "an object {enabled, pair_capacity, hash_slots, softplus_beta, margin, exclude}")
  _keys(c, path, _CONTACT_KEYS, ())
  enabled = c.get("enabled", True)
  if not isinstance(enabled, bool): _fail(f"{path}.enabled", f"expected true or false, got {show(enabled)}")
  out = {"enabled": enabled}
  for k in ("pair_capacity", "hash_slots"):
    if k in c: out[k] = _int(c[k], f"{path}.{k}", 1)
  out["softplus_beta"] = _num(c.get("softplus_beta", 0.0), f"{path}.softplus_beta", lo=0.0, unit=" [1/m]")
  out["margin"] = _num(c.get("margin", DEFAULT_MARGIN), f"{path}.margin", lo=0.0, unit=" [m]")
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


def _joint(v, path, index, bodies: list[str]) -> dict:
  jd = _obj(v, path, "a joint object")
  if "type" not in jd: _fail(f"{path}.type", "missing required field")
  kind = jd["type"]
  if not isinstance(kind, str) or kind not in JOINT_KINDS:
    _fail(f"{path}.type", f"expected one of {', '.join(map(repr, JOINT_KINDS))}, got {show(kind)}")
  own = _JOINT_KEYS[kind]
  for k in jd:  # a key valid for another joint type gets a pointed message
    if k not in own and any(k in ks for ks in _JOINT_KEYS.values()):
      _fail(f"{path}.{k}", f"not allowed for a {kind} joint (allowed: {', '.join(_JOINT_COMMON + own)})")
  required = ("type", "parent", "child") + {"ball": ("anchor",), "fixed": ("anchor",), "hinge": ("anchor", "axis"),
                                            "distance": ("anchor_parent", "anchor_child"),
                                            "slide": ("anchor", "axis"), "planar": ("anchor", "axis"),
                                            "slide2": ("anchor", "axis", "axis2")}[kind]
  _keys(jd, path, _JOINT_COMMON + own, required)
  out = {"name": _name(jd.get("name", f"joint{index}"), f"{path}.name"), "type": kind}
  for side in ("parent", "child"):
    name = jd[side]
    if not isinstance(name, str): _fail(f"{path}.{side}", f"expected a body name (string), got {show(name)}")
    if name == "world" and side == "child": _fail(f"{path}.child", "cannot be 'world' (the child must be a body)")
    if name != "world" and name not in bodies:
      shown = show(bodies) if len(bodies) <= 20 else f"{len(bodies)} bodies, e.g. {show(bodies[:5])}"
      _fail(f"{path}.{side}", f"unknown body {show(name)} (bodies: {shown})")
    out[side] = name
  if out["parent"] == out["child"]: _fail(f"{path}.child", f"same body as the parent ({out['child']!r})")
  if kind == "distance":
    out["anchor_parent"] = _vec(jd["anchor_parent"], f"{path}.anchor_parent", 3)
    out["anchor_child"] = _vec(jd["anchor_child"], f"{path}.anchor_child", 3)
    if "length" in jd:
      out["length"] = _num(jd["length"], f"{path}.length", lo=0.0, unit=" [m]")
    else:
      with np.errstate(all="ignore"):
        length = float(np.linalg.norm(np.subtract(out["anchor_child"], out["anchor_parent"])))
      if not math.isfinite(length): _fail(f"{path}.anchor_child", "too far from anchor_parent to give a finite length")
      out["length"] = length
  else:
    out["anchor"] = _vec(jd["anchor"], f"{path}.anchor", 3)
  if kind == "planar":   # the plane's normal, about which the child turns (oracle/constraints/planar.py)
    out["axis"] = _unit(jd["axis"], f"{path}.axis")
  if kind == "slide2":   # two slides: the plane's axes, orthogonal (oracle/constraints/slide2.py)
    out.update(_slide2_axes(jd, path))
  if kind in ("hinge", "slide"):
    out["axis"] = _unit(jd["axis"], f"{path}.axis")
    if "range" in jd:
      rng = _vec(jd["range"], f"{path}.range", 2)
      if kind == "hinge" and not -math.pi <= rng[0] < rng[1] <= math.pi:
        _fail(f"{path}.range", f"expected [lo, hi] [rad] with -pi <= lo < hi <= pi, got {show(rng)}")
      if kind == "slide" and not rng[0] < rng[1]:
        _fail(f"{path}.range", f"expected [lo, hi] [m] with lo < hi, got {show(rng)}")
      out["range"] = rng
    # rotor inertia in the joint's own coordinate, MuJoCo's armature (oracle/armature.py)
    out["armature"] = _num(jd.get("armature", 0.0), f"{path}.armature", lo=0.0,
                           unit=" [kg]" if kind == "slide" else " [kg m^2]")
    # a spring in the joint's coordinate towards springref (0: the initial pose), MuJoCo's stiffness; both carried by
    # the armature stage, like armature
    out["stiffness"] = _num(jd.get("stiffness", 0.0), f"{path}.stiffness", lo=0.0,
                            unit=" [N/m]" if kind == "slide" else " [N m/rad]")
    out["springref"] = _num(jd.get("springref", 0.0), f"{path}.springref", unit=" [m]" if kind == "slide" else " [rad]")
  out["compliance"] = _num(jd.get("compliance", 0.0), f"{path}.compliance", lo=0.0)
  unit = " [N s/m]" if kind == "slide" else " [N m s/rad]"
  out["damping"] = _num(jd.get("damping", 0.0), f"{path}.damping", lo=0.0, unit=unit)
  if kind in ("planar", "slide2") and out["damping"]:
    _fail(f"{path}.damping", f"a {kind} joint carries no damping (expected 0)")
  collide = jd.get("collide", False)
  if not isinstance(collide, bool): _fail(f"{path}.collide", f"expected true or false, got {show(collide)}")
  out["collide"] = collide
  return out


def _slide2_axes(jd: dict, path: str) -> dict:
  """A slide2 joint's axis and axis2 (unit, orthogonal within 1e-6, axis2 then made exactly orthogonal) and its
  ranges [m], range and range2 given together (one limited flag holds both)."""
  out = {"axis": _unit(jd["axis"], f"{path}.axis")}
  a2 = np.array(_unit(jd["axis2"], f"{path}.axis2"))
  if abs(a2 @ out["axis"]) > 1e-6:
    _fail(f"{path}.axis2", f"expected a unit vector orthogonal to axis {show(out['axis'])}, got {show(jd['axis2'])}")
  a2 = a2 - (a2 @ out["axis"]) * np.array(out["axis"])
  out["axis2"] = (a2 / np.linalg.norm(a2)).tolist()
  for key, other in (("range", "range2"), ("range2", "range")):
    if key in jd and other not in jd: _fail(f"{path}.{other}", f"required with {key} (both coordinates are limited)")
    if key in jd:
      out[key] = _vec(jd[key], f"{path}.{key}", 2)
      if not out[key][0] < out[key][1]:
        _fail(f"{path}.{key}", f"expected [lo, hi] [m] with lo < hi, got {show(jd[key])}")
  return out


def armed_tree_conflict(joints: list[dict]) -> tuple[int, str] | None:
  """(index, message) of the first joint with armature whose tree (the bodies its joints connect, the world apart) is
  not one of hinges and slides, each body hanging from at most one joint, its root free or on a planar joint to the
  world: the armature stage's step moves the tree in those joints' coordinates (oracle/armature.py trees). None when
  every armed tree is."""
  up = {}   # body -> the body it hangs from, for the union of the joints' bodies
  def root(b: str) -> str:
    while b in up: b = up[b]
    return b
  for j in joints:
    a, b = root(j["parent"]), root(j["child"])
    if j["parent"] != "world" and a != b: up[b] = a
  for k, armed in enumerate(joints):
    if not (armed.get("armature") or armed.get("stiffness")): continue
    what = "armature" if armed.get("armature") else "stiffness"
    tree = [j for j in joints if root(j["child"]) == root(armed["child"])]
    root_planar = {"type": "planar", "parent": "world"}
    if bad := next((j for j in tree if j["type"] not in ("hinge", "slide") and
                    {key: j[key] for key in root_planar} != root_planar), None):
      where = " below a body" if bad["type"] == "planar" else ""
      return k, (f"joint '{armed['name']}': {what} needs a tree of hinges and slides; joint '{bad['name']}' in its "
                 f"tree is a {bad['type']} joint{where}")
    children = [j["child"] for j in tree]
    if twice := next((c for c in children if children.count(c) > 1), None):
      return k, (f"joint '{armed['name']}': {what} needs a tree of hinges and slides; body '{twice}' in its tree "
                 "hangs from two joints")
  return None


# --- leaf checks: each returns a plain Python value or raises SceneError naming the path ---

def _fail(path: str, msg: str):
  raise SceneError(f"{path or 'scene'}: {msg}")


def _obj(v, path, what) -> dict:
  if not isinstance(v, dict): _fail(path, f"expected {what}, got {show(v)}")
  return v


def _list(v, path, what, nonempty: bool) -> list:
  if not isinstance(v, (list, tuple)) or (nonempty and len(v) == 0): _fail(path, f"expected {what}, got {show(v)}")
  return list(v)


def _keys(d: dict, path: str, allowed, required):
  for k in d:
    if k not in allowed:
      if isinstance(k, str) and _IDENT.fullmatch(k):
        _fail(f"{path}.{k}" if path else k, f"unknown key (allowed: {', '.join(allowed)})")
      _fail(path, f"unknown key {show(k)} (allowed: {', '.join(allowed)})")
  for k in required:
    if k not in d: _fail(f"{path}.{k}" if path else k, "missing required field")


def _name(v, path) -> str:
  if not isinstance(v, str) or not v.strip(): _fail(path, f"expected a non-empty string, got {show(v)}")
  return v


def _is_finite(v) -> bool:
  if not isinstance(v, numbers.Real) or isinstance(v, (bool, np.bool_)): return False  # bools are not numbers
  try:
    return math.isfinite(float(v))
  except (OverflowError, ValueError, TypeError):  # ints too large for a float
    return False


def _num(v, path, lo=None, hi=None, lo_open=False, hi_open=False, unit="") -> float:
  if _is_finite(v):
    f = float(v)
    if (lo is None or (f > lo if lo_open else f >= lo)) and (hi is None or (f < hi if hi_open else f <= hi)): return f
  if lo is not None and hi is not None:
    expect = f"a number in {'(' if lo_open else '['}{lo:g}, {hi:g}{')' if hi_open else ']'}"
  elif lo is not None: expect = f"a number {'>' if lo_open else '>='} {lo:g}"
  else: expect = "a finite number"
  _fail(path, f"expected {expect}{unit}, got {show(v)}")


def _int(v, path, lo: int) -> int:
  if not isinstance(v, numbers.Integral) or isinstance(v, (bool, np.bool_)) or v < lo:
    _fail(path, f"expected an integer >= {lo}, got {show(v)}")
  return int(v)


def _vec(v, path, n) -> list[float]:
  if not isinstance(v, (list, tuple)) or len(v) != n or not all(_is_finite(x) for x in v):
    _fail(path, f"expected {n} finite numbers, got {show(v)}")
  return [float(x) for x in v]


def _unit(v, path) -> list[float]:
  a = np.array(_vec(v, path, 3))
  scale = np.abs(a).max()  # scale first so huge or tiny components neither overflow nor underflow the norm
  if scale == 0: _fail(path, f"expected a nonzero 3-vector, got {show(v)}")
  a = a / scale
  return (a / np.linalg.norm(a)).tolist()


def _quat(v, path) -> list[float]:
  if not isinstance(v, (list, tuple)) or len(v) != 4 or not all(_is_finite(x) for x in v):
    _fail(path, f"expected a unit quaternion [w, x, y, z] (4 finite numbers), got {show(v)}")
  with np.errstate(all="ignore"):
    norm = float(np.linalg.norm(np.array(v, np.float64)))
  if norm == 0: _fail(path, f"expected a unit quaternion [w, x, y, z], got {show(v)} (zero)")
  if not abs(norm - 1.0) <= QUAT_TOL: _fail(path, f"{show(v)} is not unit (norm={norm:.9g}); normalise it")
  # unit to a few ulps already: keep it, so that validating a validated scene is the identity (dividing by a norm
  # that rounds to 1 - 1 ulp changed the last digit on one machine's numpy, 2026-11-25)
  if abs(norm - 1.0) <= 1e-15: return [float(x) for x in v]
  return [float(x) / norm for x in v]


def show(v, depth: int = 0) -> str:
  """Short, safe rendering of any value for an error message (never raises, never prints a huge value in full)."""
  if isinstance(v, (bool, np.bool_)) or v is None: return repr(v) if not isinstance(v, np.bool_) else repr(bool(v))
  if isinstance(v, numbers.Integral):
    try:
      return str(int(v)) if abs(int(v)) < 10 ** 15 else f"{float(v):.6g}"
    except OverflowError:
      return "<an integer too large for a float>"
  if isinstance(v, numbers.Real):
    return repr(float(v))
  if isinstance(v, str): return repr(v) if len(v) <= 40 else repr(v[:37]) + "..."
  if isinstance(v, (list, tuple)):
    if depth >= 2: return "[...]"
    items = [show(x, depth + 1) for x in v[:6]]
    return "[" + ", ".join(items + (["..."] if len(v) > 6 else [])) + "]"
  if isinstance(v, dict):
    if depth >= 2: return "{...}"
    items = [f"{show(k, depth + 1)}: {show(x, depth + 1)}" for k, x in list(v.items())[:4]]
    return "{" + ", ".join(items + (["..."] if len(v) > 4 else [])) + "}"
  return f"<{type(v).__name__}>"
