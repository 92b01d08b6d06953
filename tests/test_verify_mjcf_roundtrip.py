"""JSON -> MJCF -> JSON (issue 19, engine/mjcf_write.py and engine/mjcf.py): the identity on every shipped and task
scene, indices stable, and what MJCF cannot hold refused by name.

Identity means: the validated scene dict comes back field for field, every number within 1e-12 relative (MuJoCo
composes the nested body frames in float64: the worst measured is 1.1e-15, chain's last body), a quaternion possibly
negated (the same rotation), contact.exclude as a set of unordered pairs; and the float64 Model built from it is the
same, array by array, within 1e-12 relative. Colours are float32 in MuJoCo; the reader takes the shortest decimal of
that float32, so a colour given to 7 digits comes back.
"""
from __future__ import annotations
import json
import math
import subprocess
import sys
from pathlib import Path
import numpy as np
import pytest
from tinygrad import dtypes
from engine.mjcf import from_mjcf
from engine.mjcf_write import equality_joints, mjcf_indices, to_mjcf
from engine.scene import SceneError, build_model, load_scene_dict

mujoco = pytest.importorskip("mujoco")
ROOT = Path(__file__).resolve().parent.parent
SHIPPED = sorted((ROOT / "scenes").glob("*.json")) + sorted((ROOT / "engine" / "tasks" / "scenes").glob("*.json"))
REL = 1e-12


def round_trip(scene, tmp_path: Path) -> dict:
  path = tmp_path / "scene.xml"
  path.write_text(to_mjcf(scene))
  return load_scene_dict(from_mjcf(path))


def differences(a, b, path: str = "") -> list[str]:
  """Where two scene dicts differ: numbers beyond REL relative, quaternions compared up to sign."""
  if isinstance(a, dict) and isinstance(b, dict):
    if set(a) != set(b): return [f"{path}: keys {sorted(set(a) ^ set(b))}"]
    if path == ".contact":   # excluded pairs are a set of unordered pairs
      a, b = ({**c, "exclude": sorted(sorted(p) for p in c.get("exclude", []))} for c in (a, b))
    return [x for k in a for x in differences(a[k], b[k], f"{path}.{k}")]
  if isinstance(a, list) and isinstance(b, list):
    if len(a) != len(b): return [f"{path}: {len(a)} != {len(b)} items"]
    if path.endswith("quat") and np.dot(a, b) < 0: b = [-x for x in b]
    return [x for i, (u, v) in enumerate(zip(a, b)) for x in differences(u, v, f"{path}[{i}]")]
  if isinstance(a, float) and isinstance(b, float):
    return [] if math.isclose(a, b, rel_tol=REL, abs_tol=REL) else [f"{path}: {a!r} != {b!r}"]
  return [] if a == b and type(a) is type(b) else [f"{path}: {a!r} != {b!r}"]


def model_differences(a: dict, b: dict) -> list[str]:
  ma, mb = build_model(a, dtypes.float64, "CPU"), build_model(b, dtypes.float64, "CPU")
  out = []
  for k, va in vars(ma).items():
    vb = getattr(mb, k)
    if hasattr(va, "numpy"):
      xa, xb = va.numpy(), vb.numpy()
      if xa.shape != xb.shape or not np.allclose(xa, xb, rtol=REL, atol=REL):
        out.append(f"Model.{k}: max |diff| {np.abs(xa - xb).max() if xa.shape == xb.shape else 'shape'}")
    elif va != vb: out.append(f"Model.{k}: {va!r} != {vb!r}")
  return out


@pytest.mark.parametrize("path", SHIPPED, ids=[f"{p.parent.name}/{p.stem}" for p in SHIPPED])
def test_verify_mjcf_round_trip_is_the_identity(path: Path, tmp_path):
  scene = load_scene_dict(path)
  back = round_trip(scene, tmp_path)
  assert differences(scene, back) == []
  assert model_differences(scene, back) == []


@pytest.mark.parametrize("path", SHIPPED, ids=[f"{p.parent.name}/{p.stem}" for p in SHIPPED])
def test_verify_mjcf_indices_are_stable(path: Path):
  """Every scene body, joint and actuator lands where mjcf_indices says, under its own name."""
  scene = load_scene_dict(path)
  m = mujoco.MjModel.from_xml_string(to_mjcf(scene))
  where = mjcf_indices(scene)
  obj = mujoco.mjtObj
  for kind, items, mj_kind in (("bodies", scene["bodies"], obj.mjOBJ_BODY), ("actuators", scene["actuators"],
                                                                              obj.mjOBJ_ACTUATOR)):
    assert [mujoco.mj_id2name(m, mj_kind, k) for k in where[kind]] == [x["name"] for x in items]
  eq = set(equality_joints(scene))
  joints = [mujoco.mj_id2name(m, obj.mjOBJ_EQUALITY if i in eq else obj.mjOBJ_JOINT, k)
            for i, k in enumerate(where["joints"])]
  assert joints == [j["name"] for j in scene["joints"]]


def everything_scene() -> dict:
  """One scene with what the shipped ones leave out: bodies listed children first, a hinge whose bodies collide
  (MuJoCo's parent filter then off), an excluded pair, a distance joint with damping and compliance between two
  bodies, a body of two geoms of different densities given no mass, initial velocities, restitution, a world box,
  softplus, depenetration and broadphase settings, sites and a tendon listed out of MuJoCo's order, a position servo."""
  box = {"type": "box", "size": [0.1, 0.1, 0.1]}
  return {
    "name": "everything", "dt": 0.005, "substeps": 7, "iterations": 2, "relaxation": 0.8,
    "contact": {"softplus_beta": 300.0, "margin": 0.02, "pair_capacity": 5, "hash_slots": 3, "max_depenetration": 0.4,
                "exclude": [["free", "lower"]]},
    "world": {"geoms": [{"type": "plane", "quat": [0.99, 0.141067, 0.0, 0.0]},
                        {"type": "box", "size": [0.2, 0.2, 0.2], "pos": [3.0, 0.0, 0.2]}]},
    "bodies": [
      {"name": "lower", "pos": [0.0, 0.0, 1.0], "geoms": [{"type": "capsule", "size": [0.05, 0.2]}]},
      {"name": "upper", "pos": [0.0, 0.0, 1.5], "quat": [0.8, 0.6, 0.0, 0.0], "mass": 2.0, "inertia": [0.1, 0.2, 0.25],
       "geoms": [{"type": "sphere", "size": [0.1], "restitution": 0.3}]},
      {"name": "free", "pos": [1.0, 0.0, 1.0], "vel": [0.1, 0.2, 0.3], "angvel": [1.0, 0.0, -1.0],
       "geoms": [dict(box, density=500.0), dict(box, pos=[0.2, 0.0, 0.0], density=2000.0, name="heavy")]}],
    "joints": [
      {"name": "knee", "type": "hinge", "parent": "upper", "child": "lower", "anchor": [0.0, 0.0, 1.25],
       "axis": [0.0, 1.0, 0.0], "range": [-1.0, 2.0], "collide": True, "damping": 0.1},
      {"name": "hip", "type": "ball", "parent": "world", "child": "upper", "anchor": [0.0, 0.0, 2.0],
       "compliance": 1e-6, "collide": True},
      {"name": "rope", "type": "distance", "parent": "upper", "child": "free", "anchor_parent": [0.0, 0.0, 1.5],
       "anchor_child": [1.0, 0.0, 1.1], "length": 1.2, "damping": 0.5, "compliance": 1e-4}],
    "sites": [{"name": "b", "body": "lower", "pos": [0.05, 0.0, 0.9]}, {"name": "a", "body": "world",
                                                                         "pos": [0.0, 0.5, 2.0]}],
    "tendons": [{"name": "t", "sites": ["a", "b"], "stiffness": 10.0, "damping": 1.0}],
    "actuators": [{"name": "servo", "type": "position", "joint": "knee", "kp": 20.0, "kv": 1.0,
                   "ctrlrange": [-1.0, 1.0]},
                  {"name": "pull", "type": "muscle", "tendon": "t", "force": -1.0, "acc0": 2.0,
                   "lengthrange": [1.0, 1.5]}],
  }


def test_verify_mjcf_round_trip_keeps_what_mjcf_has_no_attribute_for(tmp_path):
  scene = load_scene_dict(everything_scene())
  back = round_trip(scene, tmp_path)
  # the one change: MuJoCo takes a muscle's F0 as a number, so force < 0 (F0 = scale / acc0) comes back resolved
  assert back["actuators"][1]["force"] == pytest.approx(scene["actuators"][1]["scale"] / 2.0, rel=REL)
  back["actuators"][1]["force"] = scene["actuators"][1]["force"]
  assert differences(scene, back) == []
  assert model_differences(scene, back) == []
  xml = to_mjcf(scene)
  assert 'filterparent="disable"' in xml and "<exclude" in xml and 'polycoef="' in xml


def test_verify_mjcf_round_trip_keeps_armature(tmp_path):
  """Two hinges' armature and springs (oracle/armature.py) go out as MJCF's `armature`, `stiffness` and `springref`
  and come back."""
  scene = json.loads((ROOT / "scenes" / "double_pendulum.json").read_text())
  for j, a in zip(scene["joints"], (0.05, 0.02)): j["armature"] = a
  scene["joints"][1].update(stiffness=3.0, springref=-0.25)
  scene = load_scene_dict(scene)
  back = round_trip(scene, tmp_path)
  assert [j.get("armature") for j in back["joints"]] == [0.05, 0.02]
  assert [(j["stiffness"], j["springref"]) for j in back["joints"]] == [(0.0, 0.0), (3.0, -0.25)]
  assert differences(scene, back) == [] and model_differences(scene, back) == []


def test_verify_mjcf_round_trip_keeps_planar(tmp_path):
  """A planar joint (a tilted plane, its hinge off the body's origin) goes out as two slides and a hinge named after
  it, comes back the same joint, and mjcf_indices names the hinge."""
  scene = load_scene_dict(from_mjcf(ROOT / "tests" / "mjcf" / "planar_arm.xml"))
  assert scene["joints"][0]["type"] == "planar"
  back = round_trip(scene, tmp_path)
  assert differences(scene, back) == [] and model_differences(scene, back) == []
  m = mujoco.MjModel.from_xml_string(to_mjcf(scene))
  names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, k) for k in mjcf_indices(scene)["joints"]]
  assert names == [j["name"] for j in scene["joints"]]


def test_verify_mjcf_round_trip_keeps_slide2(tmp_path):
  """A slide2 joint (two slides in a tilted plane, the second's ref off 0, both limited) goes out as two slides, NAME
  and NAME:2, comes back the same joint with its ranges, and mjcf_indices names the first slide."""
  scene = load_scene_dict(from_mjcf(ROOT / "tests" / "mjcf" / "slide2_arm.xml"))
  j = scene["joints"][0]
  assert (j["type"], j["name"], j["range"], j["range2"]) == ("slide2", "carriage_u", [-3.0, 3.0], [-3.2, 2.8])
  back = round_trip(scene, tmp_path)
  assert differences(scene, back) == [] and model_differences(scene, back) == []
  m = mujoco.MjModel.from_xml_string(to_mjcf(scene))
  names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, k) for k in mjcf_indices(scene)["joints"]]
  assert names == [j["name"] for j in scene["joints"]]


def test_verify_mjcf_round_trip_keeps_hinge_groups(tmp_path):
  """Three hinges on one body and two on another (tests/mjcf/hip.xml: hinge3, hinge2 groups) go out as the body's
  joints in turning order and come back the same joints, "after" and all; mjcf_indices names each hinge."""
  scene = load_scene_dict(from_mjcf(ROOT / "tests" / "mjcf" / "hip.xml"))
  assert [j.get("after") for j in scene["joints"]] == [None, "hip_x", "hip_z", None, None, "shoulder1"]
  back = round_trip(scene, tmp_path)
  assert differences(scene, back) == [] and model_differences(scene, back) == []
  m = mujoco.MjModel.from_xml_string(to_mjcf(scene))
  names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, k) for k in mjcf_indices(scene)["joints"]]
  assert names == [j["name"] for j in scene["joints"]]


def test_verify_mjcf_round_trip_keeps_welds_and_loops(tmp_path):
  """A fixed joint becomes a <weld> and a ball joint that closes a loop a <connect>; both come back as they were, their
  bodies bodies of their own, and mjcf_indices names the equalities."""
  scene = everything_scene()
  scene["bodies"].append({"name": "plate", "pos": [0.3, 0.0, 1.5], "quat": [0.6, 0.0, 0.8, 0.0],
                          "geoms": [{"type": "box", "size": [0.1, 0.05, 0.02]}]})
  scene["joints"] += [{"name": "bolt", "type": "fixed", "parent": "upper", "child": "plate", "anchor": [0.2, 0.0, 1.5]},
                      {"name": "strap", "type": "ball", "parent": "world", "child": "lower", "anchor": [0.0, 0.0, 0.8],
                       "collide": True}]
  scene = load_scene_dict(scene)
  text = to_mjcf(scene)
  assert '<weld name="bolt" body1="upper" body2="plate"' in text and '<connect name="strap" body1="world"' in text
  back = round_trip(scene, tmp_path)
  back["actuators"][1]["force"] = scene["actuators"][1]["force"]   # F0 comes back resolved, as above
  assert differences(scene, back) == []
  assert model_differences(scene, back) == []
  assert [scene["joints"][k]["name"] for k in equality_joints(scene)] == ["rope", "bolt", "strap"]
  m = mujoco.MjModel.from_xml_string(text)
  names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_EQUALITY, mjcf_indices(scene)["joints"][k]) for k in (2, 3, 4)]
  assert names == ["rope", "bolt", "strap"]


@pytest.mark.parametrize("edit, expected", [
  (lambda s: s["joints"].append({"name": "weld", "type": "hinge", "parent": "world", "child": "lower",
                                 "anchor": [0.0, 0.0, 0.8], "axis": [1.0, 0.0, 0.0]}),
   "joints[3] 'weld': body 'lower' is already the child of joint 'knee'; an MJCF body hangs from one parent, and only "
   "a ball joint (<connect>) or a fixed one (<weld>)"),
  (lambda s: s["joints"].append({"name": "second", "type": "hinge", "parent": "world", "child": "lower",
                                 "anchor": [0.0, 0.0, 1.0], "axis": [1.0, 0.0, 0.0]}),
   "joints[3] 'second': body 'lower' is already the child of joint 'knee'"),
  (lambda s: s["joints"].__setitem__(1, {"name": "hip", "type": "hinge", "parent": "lower", "child": "upper",
                                         "anchor": [0.0, 0.0, 1.25], "axis": [1.0, 0.0, 0.0]}),
   "the joints form a loop"),
  (lambda s: s["contact"]["exclude"].append(["world", "free"]), "contact.exclude[1]: MJCF cannot exclude a body"),
  (lambda s: s["joints"][1].__setitem__("collide", False), "joints[1] 'hip': keeps body 'upper' off the world's boxes"),
])
def test_verify_mjcf_out_refuses_by_name(edit, expected):
  scene = everything_scene()
  edit(scene)
  with pytest.raises(SceneError) as e: to_mjcf(scene)
  assert str(e.value).startswith("MJCF out: ") and expected in str(e.value), str(e.value)


def test_cli_convert_both_ways(tmp_path):
  xml, back = tmp_path / "double_pendulum.xml", tmp_path / "double_pendulum.json"
  def run(*args):
    return subprocess.run([sys.executable, "-m", "engine", "convert", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT)
  out = run(ROOT / "scenes" / "double_pendulum.json", "-o", xml)
  assert out.returncode == 0, out.stderr
  assert "  body 1 'link2' -> 2\n" in out.stdout and "  joint 1 'elbow' -> 1\n" in out.stdout, out.stdout
  out = run(xml, "-o", back)
  assert out.returncode == 0, out.stderr
  assert differences(load_scene_dict(ROOT / "scenes" / "double_pendulum.json"), load_scene_dict(back)) == []
