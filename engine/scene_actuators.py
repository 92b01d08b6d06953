"""The scene's "actuators" list (docs/scenes.md): validation and the Model's act_* arrays.

  {"name": "push", "joint": "rail", "type": "motor", "gear": 10.0, "ctrlrange": [-1, 1]}
  {"name": "elbow", "joint": "elbow", "type": "position", "kp": 50.0, "kv": 2.0, "ctrlrange": [-1.5, 1.5]}
  {"name": "wheel", "joint": "axle", "type": "velocity", "kv": 5.0, "ctrlrange": [-10, 10]}
  {"name": "biceps", "tendon": "biceps", "type": "muscle", "force": 1000, "lengthrange": [0.25, 0.35]}

A motor drives a hinge (torque gear * ctrl [N m]) or a slide joint (force [N]); servos drive hinges. One actuator
per joint. Controls are clipped to ctrlrange. A muscle pulls on a tendon (engine/scene_tendons.py) with MuJoCo's
Hill model (oracle/muscle.py), its parameters and defaults MuJoCo's (MUSCLE_DEFAULTS); ctrl is its excitation.
"""
from __future__ import annotations
import numpy as np
from engine.scene_fields import _fail, _keys, _list, _name, _num, _obj, _vec, show
from oracle.muscle import PRM_DEFAULT, TAU_ACT, TAU_DEACT
from oracle.types import ACTUATOR_TYPES

# MuJoCo's <muscle> attributes and defaults: gainprm (range, force, scale, lmin, lmax, vmax, fpmax, fvmax) and
# dynprm (timeconst, tausmooth)
MUSCLE_DEFAULTS = {"range": list(PRM_DEFAULT[0:2]), "force": PRM_DEFAULT[2], "scale": PRM_DEFAULT[3],
                   "lmin": PRM_DEFAULT[4], "lmax": PRM_DEFAULT[5], "vmax": PRM_DEFAULT[6], "fpmax": PRM_DEFAULT[7],
                   "fvmax": PRM_DEFAULT[8], "timeconst": [TAU_ACT, TAU_DEACT], "tausmooth": 0.0}
_OWN = {"motor": ("joint", "gear"), "position": ("joint", "kp", "kv"), "velocity": ("joint", "kv"),
        "muscle": ("tendon", *MUSCLE_DEFAULTS, "lengthrange", "acc0")}
_COMMON = ("name", "type", "ctrlrange")


def actuators(raw, joints: list[dict], tendons: list[dict] = ()) -> list[dict]:
  out, seen, driven = [], {}, {}
  kinds = {j["name"]: j["type"] for j in joints}
  grouped = {j["name"] for j in joints if "after" in j} | {j["after"] for j in joints if "after" in j}
  tendon_names = [t["name"] for t in tendons]
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
    _keys(a, path, _COMMON + _OWN[kind], ("type",) + {"motor": ("joint",), "position": ("joint", "kp"),
                                                     "velocity": ("joint", "kv"), "muscle": ("tendon",)}[kind])
    name = _name(a.get("name", f"act{i}"), f"{path}.name")
    if name in seen: _fail(f"{path}.name", f"duplicate actuator name {name!r} (also {seen[name]})")
    seen[name] = path
    if kind == "muscle":
      out.append(_muscle(a, path, name, tendon_names))
      continue
    joint = a["joint"]
    if not isinstance(joint, str) or joint not in kinds:
      _fail(f"{path}.joint", f"unknown joint {show(joint)} (joints: {show(list(kinds))})")
    allowed = ("hinge", "slide") if kind == "motor" else ("hinge",)
    if kinds[joint] not in allowed:
      _fail(f"{path}.joint", f"a {kind} actuator drives a {' or '.join(allowed)} joint; {joint!r} is a {kinds[joint]}")
    if kind != "motor" and joint in grouped:   # a servo's target is a hinge's angle about its own axis
      _fail(f"{path}.joint", f"a {kind} actuator drives a hinge alone on its body; {joint!r} is one of two or three "
            "hinges on one body (a motor may drive it)")
    if joint in driven: _fail(f"{path}.joint", f"joint {joint!r} is already driven by {driven[joint]}")
    driven[joint] = path
    rng = _vec(a.get("ctrlrange", [-1.0, 1.0]), f"{path}.ctrlrange", 2)
    if not rng[0] < rng[1]: _fail(f"{path}.ctrlrange", f"expected [lo, hi] with lo < hi, got {show(rng)}")
    act = {"name": name, "joint": joint, "type": kind, "ctrlrange": rng}
    if kind == "motor": act["gear"] = _num(a.get("gear", 1.0), f"{path}.gear")
    if kind == "position": act["kp"] = _num(a["kp"], f"{path}.kp", lo=0.0, lo_open=True, unit=" [N m/rad]")
    if kind in ("position", "velocity"):
      act["kv"] = _num(a.get("kv", 0.0), f"{path}.kv", lo=0.0, lo_open=kind == "velocity", unit=" [N m s/rad]")
    out.append(act)
  return out


def _muscle(a: dict, path: str, name: str, tendon_names: list[str]) -> dict:
  """A muscle actuator with every MuJoCo parameter filled, or a SceneError naming the field."""
  tendon = a["tendon"]
  if not isinstance(tendon, str) or tendon not in tendon_names:
    _fail(f"{path}.tendon", f"unknown tendon {show(tendon)} (tendons: {show(tendon_names)})")
  m = {"name": name, "tendon": tendon, "type": "muscle"}
  rng = _vec(a.get("ctrlrange", [0.0, 1.0]), f"{path}.ctrlrange", 2)
  if not rng[0] < rng[1]: _fail(f"{path}.ctrlrange", f"expected [lo, hi] with lo < hi, got {show(rng)}")
  m["ctrlrange"] = rng
  for k, d in MUSCLE_DEFAULTS.items():
    m[k] = _vec(a.get(k, d), f"{path}.{k}", 2) if isinstance(d, list) else _num(a.get(k, d), f"{path}.{k}")
  if not 0 < m["range"][0] < m["range"][1]:
    _fail(f"{path}.range", f"expected an increasing [lo, hi] with 0 < lo < hi (normalised lengths), "
                           f"got {show(m['range'])}")
  if not m["lmin"] < m["lmax"]:
    _fail(f"{path}.lmax", f"expected lmin < lmax, got lmin {m['lmin']:g} >= lmax {m['lmax']:g}")
  if not 0 < m["lmin"] < 1: _fail(f"{path}.lmin", f"expected a number in (0, 1) (normalised length), got {m['lmin']:g}")
  if not m["lmax"] > 1: _fail(f"{path}.lmax", f"expected a number > 1 (normalised length), got {m['lmax']:g}")
  for k, lo, unit in (("scale", 0.0, ""), ("vmax", 0.0, " [L0/s]"), ("fvmax", 1.0, "")):
    if not m[k] > lo: _fail(f"{path}.{k}", f"expected a number > {lo:g}{unit}, got {m[k]:g}")
  for k in ("fpmax", "tausmooth"):
    if m[k] < 0: _fail(f"{path}.{k}", f"expected a number >= 0, got {m[k]:g}")
  if min(m["timeconst"]) <= 0:
    _fail(f"{path}.timeconst", f"expected [tau_act, tau_deact] [s], both > 0, got {show(m['timeconst'])}")
  if "lengthrange" not in a:
    _fail(f"{path}.lengthrange", "missing required field: [lo, hi] [m], the tendon lengths that map to the "
                                 "normalised range (MuJoCo's actuator lengthrange)")
  lr = _vec(a["lengthrange"], f"{path}.lengthrange", 2)
  if not 0 <= lr[0] < lr[1]: _fail(f"{path}.lengthrange", f"expected [lo, hi] [m] with 0 <= lo < hi, got {show(lr)}")
  m["lengthrange"] = lr
  if m["force"] < 0:   # F0 = scale / acc0: acc0 comes from MuJoCo's generalised mass matrix, which this engine lacks
    if "acc0" not in a:
      _fail(f"{path}.acc0", "missing: a muscle with force < 0 (F0 = scale / acc0) needs acc0 [m/s^2 per N] "
                            "(MuJoCo's actuator_acc0); or give force [N] > 0")
    m["acc0"] = _num(a["acc0"], f"{path}.acc0", lo=0.0, lo_open=True)
  else:
    if m["force"] == 0: _fail(f"{path}.force", "expected F0 [N] > 0, or < 0 for scale / acc0, got 0")
    m["acc0"] = _num(a.get("acc0", 1.0), f"{path}.acc0", lo=0.0, lo_open=True)
  return m


def actuator_arrays(scene: dict) -> dict[str, np.ndarray]:
  """act_gear (nact,), act_ctrlrange (nact, 2), act_kp (nact,), act_kv (nact,), and the muscles' act_gainprm (nact, 9)
  (range0, range1, force, scale, lmin, lmax, vmax, fpmax, fvmax), act_dynprm (nact, 3) (tau_act, tau_deact,
  tausmooth), act_lengthrange (nact, 2) and act_acc0 (nact,) (MuJoCo's defaults on other actuators), float64."""
  acts = scene["actuators"]
  def col(key, default): return np.array([a.get(key, default) for a in acts], np.float64).reshape(len(acts))
  def gain(a): return [*a.get("range", PRM_DEFAULT[:2])] + [a.get(k, d) for k, d in zip(
    ("force", "scale", "lmin", "lmax", "vmax", "fpmax", "fvmax"), PRM_DEFAULT[2:])]
  return {"act_gear": col("gear", 1.0), "act_kp": col("kp", 0.0), "act_kv": col("kv", 0.0),
          "act_ctrlrange": np.array([a["ctrlrange"] for a in acts], np.float64).reshape(len(acts), 2),
          "act_gainprm": np.array([gain(a) for a in acts], np.float64).reshape(len(acts), 9),
          "act_dynprm": np.array([[*a.get("timeconst", (TAU_ACT, TAU_DEACT)), a.get("tausmooth", 0.0)] for a in acts],
                                 np.float64).reshape(len(acts), 3),
          "act_lengthrange": np.array([a.get("lengthrange", (0.0, 1.0)) for a in acts],
                                      np.float64).reshape(len(acts), 2),
          "act_acc0": col("acc0", 1.0)}
