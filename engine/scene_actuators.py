"""The scene's "actuators" list (docs/scenes.md): validation and the Model's act_* arrays.

  {"name": "push", "joint": "rail", "type": "motor", "gear": 10.0, "ctrlrange": [-1, 1]}
  {"name": "elbow", "joint": "elbow", "type": "position", "kp": 50.0, "kv": 2.0, "ctrlrange": [-1.5, 1.5]}
  {"name": "wheel", "joint": "axle", "type": "velocity", "kv": 5.0, "ctrlrange": [-10, 10]}

A motor drives a hinge (torque gear * ctrl [N m]) or a slide joint (force [N]); servos drive hinges. One actuator
per joint. Controls are clipped to ctrlrange.
"""
from __future__ import annotations
import numpy as np
from engine.scene_schema import _fail, _keys, _list, _name, _num, _obj, _vec, show
from oracle.types import ACTUATOR_TYPES

_OWN = {"motor": ("gear",), "position": ("kp", "kv"), "velocity": ("kv",)}
_COMMON = ("name", "joint", "type", "ctrlrange")


def actuators(raw, joints: list[dict]) -> list[dict]:
  out, seen, driven = [], {}, {}
  kinds = {j["name"]: j["type"] for j in joints}
  for i, v in enumerate(_list(raw, "actuators", "a list of actuators", nonempty=False)):
    path = f"actuators[{i}]"
    a = _obj(v, path, "an actuator object {name, joint, type, ...}")
    if "type" not in a: _fail(f"{path}.type", "missing required field")
    kind = a["type"]
    if not isinstance(kind, str) or kind not in ACTUATOR_TYPES:
      _fail(f"{path}.type", f"expected one of {', '.join(map(repr, ACTUATOR_TYPES))}, got {show(kind)}")
    for k in a:
      if k not in _OWN[kind] and any(k in ks for ks in _OWN.values()):
        _fail(f"{path}.{k}", f"not allowed for a {kind} actuator (allowed: {', '.join(_COMMON + _OWN[kind])})")
    _keys(a, path, _COMMON + _OWN[kind], ("joint", "type") + {"motor": (), "position": ("kp",),
                                                                 "velocity": ("kv",)}[kind])
    name = _name(a.get("name", f"act{i}"), f"{path}.name")
    if name in seen: _fail(f"{path}.name", f"duplicate actuator name {name!r} (also {seen[name]})")
    joint = a["joint"]
    if not isinstance(joint, str) or joint not in kinds:
      _fail(f"{path}.joint", f"unknown joint {show(joint)} (joints: {show(list(kinds))})")
    allowed = ("hinge", "slide") if kind == "motor" else ("hinge",)
    if kinds[joint] not in allowed:
      _fail(f"{path}.joint", f"a {kind} actuator drives a {' or '.join(allowed)} joint; {joint!r} is a {kinds[joint]}")
    if joint in driven: _fail(f"{path}.joint", f"joint {joint!r} is already driven by {driven[joint]}")
    seen[name], driven[joint] = path, path
    rng = _vec(a.get("ctrlrange", [-1.0, 1.0]), f"{path}.ctrlrange", 2)
    if not rng[0] < rng[1]: _fail(f"{path}.ctrlrange", f"expected [lo, hi] with lo < hi, got {show(rng)}")
    act = {"name": name, "joint": joint, "type": kind, "ctrlrange": rng}
    if kind == "motor": act["gear"] = _num(a.get("gear", 1.0), f"{path}.gear")
    if kind == "position": act["kp"] = _num(a["kp"], f"{path}.kp", lo=0.0, lo_open=True, unit=" [N m/rad]")
    if kind in ("position", "velocity"):
      act["kv"] = _num(a.get("kv", 0.0), f"{path}.kv", lo=0.0, lo_open=kind == "velocity", unit=" [N m s/rad]")
    out.append(act)
  return out


def actuator_arrays(scene: dict) -> dict[str, np.ndarray]:
  """act_gear (nact,), act_ctrlrange (nact, 2), act_kp (nact,), act_kv (nact,), float64."""
  acts = scene["actuators"]
  def col(key, default): return np.array([a.get(key, default) for a in acts], np.float64).reshape(len(acts))
  return {"act_gear": col("gear", 1.0), "act_kp": col("kp", 0.0), "act_kv": col("kv", 0.0),
          "act_ctrlrange": np.array([a["ctrlrange"] for a in acts], np.float64).reshape(len(acts), 2)}
