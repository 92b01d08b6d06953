"""The scene's "sites" and "tendons" lists (docs/scenes.md): validation and the Model's site_* and ten_* arrays.

  "sites":   [{"name": "hip_a", "body": "thigh", "pos": [0.05, 0, 0.9]}]          pos: world frame, initial pose
  "tendons": [{"name": "flexor", "sites": ["hip_a", "knee_a"], "stiffness": 0, "damping": 0, "length": 0.3}]

A spatial tendon is a path of two or more sites, its length the sum of the straight segments between consecutive
sites (DESIGN sec. 4); a site on "world" is fixed. stiffness [N/m] and damping [N s/m] make it a spring about its rest
`length` (default: its length at the initial pose, as MuJoCo's springlength -1). Length limits are not part of the
format yet (a two-site limit is a distance joint).
"""
from __future__ import annotations
import numpy as np
from engine.npquat import quat_conj, quat_rotate
from engine.scene_fields import _fail, _keys, _list, _name, _num, _obj, _vec, show


def sites(raw, bodies: list[str]) -> list[dict]:
  out, seen = [], {}
  for i, v in enumerate(_list(raw, "sites", "a list of sites", nonempty=False)):
    path = f"sites[{i}]"
    s = _obj(v, path, "a site object {name, body, pos}")
    _keys(s, path, ("name", "body", "pos"), ("name", "body", "pos"))
    name = _name(s["name"], f"{path}.name")
    if name in seen: _fail(f"{path}.name", f"duplicate site name {name!r} (also {seen[name]})")
    body = s["body"]
    if not isinstance(body, str) or (body != "world" and body not in bodies):
      _fail(f"{path}.body", f"unknown body {show(body)} (bodies: {show(['world', *bodies])})")
    seen[name] = path
    out.append({"name": name, "body": body, "pos": _vec(s["pos"], f"{path}.pos", 3)})
  return out


def tendons(raw, site_list: list[dict]) -> list[dict]:
  pos = {s["name"]: np.array(s["pos"]) for s in site_list}
  out, seen = [], {}
  for i, v in enumerate(_list(raw, "tendons", "a list of tendons", nonempty=False)):
    path = f"tendons[{i}]"
    t = _obj(v, path, "a tendon object {name, sites, ...}")
    _keys(t, path, ("name", "sites", "stiffness", "damping", "length"), ("sites",))
    name = _name(t.get("name", f"tendon{i}"), f"{path}.name")
    if name in seen: _fail(f"{path}.name", f"duplicate tendon name {name!r} (also {seen[name]})")
    path_sites = t["sites"]
    if not isinstance(path_sites, list) or len(path_sites) < 2:
      _fail(f"{path}.sites", f"expected a path of two or more site names, got {show(path_sites)}")
    for k, s in enumerate(path_sites):
      if not isinstance(s, str) or s not in pos:
        _fail(f"{path}.sites[{k}]", f"unknown site {show(s)} (sites: {show(list(pos))})")
    seen[name] = path
    ten = {"name": name, "sites": list(path_sites),
           "stiffness": _num(t.get("stiffness", 0.0), f"{path}.stiffness", lo=0.0, unit=" [N/m]"),
           "damping": _num(t.get("damping", 0.0), f"{path}.damping", lo=0.0, unit=" [N s/m]")}
    rest = sum(float(np.linalg.norm(pos[b] - pos[a])) for a, b in zip(path_sites, path_sites[1:]))
    ten["length"] = _num(t["length"], f"{path}.length", lo=0.0, unit=" [m]") if "length" in t else rest
    out.append(ten)
  return out


def site_arrays(scene: dict, body_pos0: np.ndarray, body_quat0: np.ndarray) -> dict[str, np.ndarray]:
  """site_pos (nsite, 3): each site in its body's inertial frame (the world frame for world sites); the tendons'
  ten_stiffness, ten_damping and ten_length (ntendon,)."""
  names = [b["name"] for b in scene["bodies"]]
  rows = []
  for s in scene["sites"]:
    p = np.array(s["pos"])
    if s["body"] != "world":
      b = names.index(s["body"])
      p = quat_rotate(quat_conj(body_quat0[b]), p - body_pos0[b])
    rows.append(p)
  ts = scene["tendons"]
  def col(key): return np.array([t[key] for t in ts], np.float64).reshape(len(ts))
  return {"site_pos": np.array(rows, np.float64).reshape(len(rows), 3), "ten_stiffness": col("stiffness"),
          "ten_damping": col("damping"), "ten_length": col("length")}
