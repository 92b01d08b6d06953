"""Scene validation of the joints: each joint's fields (_joint), the groups of two or three hinges on one body
(hinge_groups) and the trees the armature stage moves (armed_tree_conflict). engine/scene_schema.py calls them."""
from __future__ import annotations

import math

import numpy as np

from engine.scene_fields import _fail, _keys, _name, _num, _obj, _unit, _vec, show

JOINT_KINDS = ("ball", "hinge", "fixed", "distance", "slide", "planar", "slide2")
_JOINT_COMMON = ("name", "type", "parent", "child", "compliance", "damping", "collide")
_JOINT_KEYS = {"ball": ("anchor",), "fixed": ("anchor",),
               "hinge": ("anchor", "axis", "range", "armature", "stiffness", "springref", "after"),
               "distance": ("anchor_parent", "anchor_child", "length"),
               "slide": ("anchor", "axis", "range", "armature", "stiffness", "springref"), "planar": ("anchor", "axis"),
               "slide2": ("anchor", "axis", "axis2", "range", "range2")}


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
  if "after" in jd:   # one of two or three hinges on one body, turning after the hinge named (hinge_groups)
    if not isinstance(jd["after"], str):
      _fail(f"{path}.after", f"expected a joint name (string), got {show(jd['after'])}")
    out["after"] = jd["after"]
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


def hinge_groups(joints: list[dict]) -> list[list[int]]:
  """The groups of two or three hinges on one body (MuJoCo's multi-joint body; oracle/constraints/hinges.py), as
  joint indices in turning order: a hinge with "after" turns the child further after the hinge just before it in the
  list, which joins the same parent and child at the same anchor. Raises SceneError naming the field that breaks it."""
  groups = []
  for k, j in enumerate(joints):
    if "after" not in j: continue
    path, prev = f"joints[{k}]", joints[k - 1] if k else None
    if prev is None or prev["name"] != j["after"]:
      _fail(f"{path}.after", f"expected the name of the joint just before it in the list, a hinge on the same bodies "
            f"({show(prev['name']) if prev else 'none: it is the first joint'}), got {show(j['after'])}")
    if prev["type"] != "hinge": _fail(f"{path}.after", f"{prev['name']!r} is a {prev['type']} joint, not a hinge")
    for key in ("parent", "child", "compliance", "collide"):
      if j[key] != prev[key]:
        _fail(f"{path}.{key}", f"expected {show(prev[key])}, as the hinge it turns after ({prev['name']!r}): the "
              "hinges of one body join the same bodies as one joint")
    if not np.allclose(j["anchor"], prev["anchor"], rtol=0.0, atol=1e-9):
      _fail(f"{path}.anchor", f"expected {show(prev['anchor'])}, the anchor of the hinge it turns after "
            f"({prev['name']!r})")
    if "after" in prev: groups[-1].append(k)
    else: groups.append([k - 1, k])
    if len(groups[-1]) > 3: _fail(f"{path}.after", "at most three hinges turn one body (a fourth adds no freedom)")
  for g in groups:
    axes = np.array([joints[k]["axis"] for k in g])
    size = abs(np.linalg.det(axes)) if len(g) == 3 else float(np.linalg.norm(np.cross(*axes)))
    if size < 1e-6:
      _fail(f"joints[{g[-1]}].axis", f"the axes of the hinges {[joints[k]['name'] for k in g]} are dependent "
            f"({'coplanar' if len(g) == 3 else 'parallel'}); each hinge must add a direction of turn")
    for k in g:   # Simulator.reset starts every joint at its initial pose (engine/kinematics.py start_pose)
      if "range" in joints[k] and not joints[k]["range"][0] <= 0.0 <= joints[k]["range"][1]:
        _fail(f"joints[{k}].range", f"a hinge of a group must start within its range: expected lo <= 0 <= hi, got "
              f"{show(joints[k]['range'])}")
  return groups


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
    children = [j["child"] for j in tree if "after" not in j]   # a group of hinges holds its body once
    if twice := next((c for c in children if children.count(c) > 1), None):
      return k, (f"joint '{armed['name']}': {what} needs a tree of hinges and slides; body '{twice}' in its tree "
                 "hangs from two joints")
  return None
