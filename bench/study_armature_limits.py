"""How the armature stage (oracle/armature.py) carries joint limits: two measurements, docs/mjcf.md "Armature".

  python bench/study_armature_limits.py pendulum   # armed pendulum vs the same with the armature as body inertia
  python bench/study_armature_limits.py ant [KICK] # Gymnasium's ant without its floor, inside its ranges, vs MuJoCo
  python bench/study_armature_limits.py drop       # Gymnasium's ant dropped onto its floor from rest, and MuJoCo's

pendulum: hinged to the world, range [-0.4, 0.3] rad, 1 kg, inertia 0.05 kg m^2, kicked at 3 rad/s into its upper
bound; with armature 0.04 on the hinge, and again with 0.04 added to its inertia about the axis instead (exact for a
still parent), both in this engine: the worst difference of the hinge angle over 1 s, with and without the range.
ant: ant.xml with its floor removed, ankles started at mid-range, qvel ~ N(0, KICK), against MuJoCo at a 20 times finer
timestep: the worst joint angle error so far every 0.2 s, and which MuJoCo joints came within 0.01 rad of a bound.
float64, CPU, oracle, batch 1.
"""
from __future__ import annotations
import json
import re
import sys
import warnings
from pathlib import Path
import numpy as np
from tinygrad import Tensor, dtypes
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
F64 = dict(dtype=dtypes.float64, device="CPU")


def pendulum(limited: bool) -> float:
  """[deg] the worst hinge-angle difference over 1 s between the armed pendulum and the inertia one."""
  from engine.parity import simulator
  from engine.scene import load_scene_dict
  from oracle.joints import joint_coords
  from oracle.packed import pack_state
  base = json.loads((ROOT / "scenes" / "pendulum.json").read_text())
  base["bodies"][0].update(mass=1.0, inertia=[0.05, 0.05, 0.05])
  if limited: base["joints"][0]["range"] = [-0.4, 0.3]
  armed, inert = json.loads(json.dumps(base)), json.loads(json.dumps(base))
  armed["joints"][0]["armature"] = 0.04
  inert["bodies"][0]["inertia"] = [0.05, 0.09, 0.05]   # the hinge's axis is y
  angles = []
  for scene in (armed, inert):
    sim = simulator(load_scene_dict(scene), "oracle", 1, **F64)
    state = sim.reset()
    w = np.array([0.0, 3.0, 0.0])
    v = np.cross(w, state.body_pos.numpy()[0, 0] - np.array(scene["joints"][0]["anchor"]))
    state = state.replace(body_angvel=Tensor(w.reshape(1, 1, 3), **F64), body_vel=Tensor(v.reshape(1, 1, 3), **F64))
    q = []
    for _ in range(int(round(1.0 / scene["dt"]))):
      state = sim.step(state)
      q.append(float(joint_coords(sim.model, pack_state(state, sim.model))[0].numpy()[0, 0]))
    angles.append(np.array(q))
  return float(np.degrees(np.abs(angles[0] - angles[1]).max()))


def ant(kick: float) -> None:
  import mujoco
  from engine.mjcf import bodies_from_mujoco, gym_asset
  from engine.npquat import quat_conj, quat_mul
  from engine.parity import simulator
  from tests.test_verify_mjcf import FINE, _angle, _state, converted
  src = gym_asset("ant").read_text()
  path = Path("/tmp/ant_nofloor.xml")
  path.write_text(re.sub(r'<geom[^>]*name="floor"[^>]*/>', "", src))
  scene, m, d, d0 = converted(path)
  for k in range(m.njnt):
    if m.jnt_limited[k]: d.qpos[m.jnt_qposadr[k]] = m.jnt_range[k].mean()
  d.qvel[:] = np.random.default_rng(0).normal(0.0, kick, m.nv)
  mujoco.mj_forward(m, d)
  sim = simulator(scene, "oracle", 1, **F64)
  state = _state(sim, bodies_from_mujoco(scene, m, d, d0))
  m.opt.timestep = scene["dt"] / FINE
  index = {b["name"]: i for i, b in enumerate(scene["bodies"])}
  worst, near = 0.0, set()
  for t in range(int(round(1.0 / scene["dt"]))):
    mujoco.mj_step(m, d, nstep=FINE)
    state = sim.step(state)
    ref, quat = bodies_from_mujoco(scene, m, d, d0), state.body_quat.numpy()[0]
    for j in scene["joints"]:
      c, p = index[j["child"]], index.get(j["parent"])
      ours = quat[c] if p is None else quat_mul(quat_conj(quat[p]), quat[c])
      theirs = ref["quat"][c] if p is None else quat_mul(quat_conj(ref["quat"][p]), ref["quat"][c])
      worst = max(worst, _angle(ours, theirs))
    near |= {mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, k) for k in range(m.njnt) if m.jnt_limited[k] and
             min(abs(d.qpos[m.jnt_qposadr[k]] - m.jnt_range[k])) < 0.01}
    if (t + 1) % 20 == 0: print(f"t = {(t + 1) * scene['dt']:.1f} s: worst {np.degrees(worst):.3f} deg; MuJoCo joints "
                                f"near a bound so far: {sorted(near)}", flush=True)


def drop() -> None:
  """Gymnasium's ant.xml with its floor, from its reference pose at rest (this engine: ankles at their nearest bound,
  Simulator.reset), 2 s: torso height, joint angles and the fastest body, beside MuJoCo's from its qpos0."""
  import mujoco
  from engine.mjcf import MJCFWarning, from_mjcf, gym_asset
  from engine.parity import simulator
  from engine.scene import load_scene_dict
  from oracle.joints import joint_coords
  from oracle.packed import pack_state
  path = gym_asset("ant")
  with warnings.catch_warnings():
    warnings.simplefilter("ignore", MJCFWarning)
    scene = load_scene_dict(from_mjcf(path))
  sim = simulator(scene, "oracle", 1, **F64)
  state = sim.rollout(sim.reset(), int(round(2.0 / scene["dt"])))
  q = joint_coords(sim.model, pack_state(state, sim.model))[0].numpy()[0]
  speed = np.linalg.norm(state.body_vel.numpy()[0], axis=-1).max()
  print(f"engine: torso {state.body_pos.numpy()[0, 0, 2]:.3f} m, joints {np.degrees(q).round(1)} deg, fastest body "
        f"{speed:.2g} m/s")
  m = mujoco.MjModel.from_xml_path(str(path))
  d = mujoco.MjData(m)
  mujoco.mj_step(m, d, nstep=int(round(2.0 / m.opt.timestep)))
  print(f"MuJoCo: torso {d.qpos[2]:.3f} m, joints {np.degrees(d.qpos[7:]).round(1)} deg, largest qvel "
        f"{np.abs(d.qvel).max():.2g}")


if __name__ == "__main__":
  what = sys.argv[1] if len(sys.argv) > 1 else "pendulum"
  if what == "pendulum":
    for limited in (False, True): print(f"range {'on' if limited else 'off'}: worst {pendulum(limited):.4f} deg")
  elif what == "drop": drop()
  else: ant(float(sys.argv[2]) if len(sys.argv) > 2 else 2.0)
