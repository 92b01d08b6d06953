"""Two or three hinges on one body (hinge2, hinge3: oracle/constraints/hinges.py; the design and its checks against
MuJoCo in bench/study_hinges.py). The trajectory against MuJoCo is tests/test_verify_mjcf.py's (tests/mjcf/hip.xml, in
TRAJECTORIES); here: the coordinates against MuJoCo's qpos and qvel, the limits under a hard kick, the gradient by the
dot-product test (with armature and springs too: tests/mjcf/hip_armed.xml, whose trajectory test_verify_mjcf.py has
as well), and the named errors of the scene format, the converter and the WGSL backward kernel (the forward kernel's
parity: tests/test_parity_wgsl_hinges.py)."""
import copy
import functools
import json
import warnings
from pathlib import Path
import numpy as np
import pytest
from tinygrad import Tensor, dtypes
import engine
from engine.scene import SceneError, build_model, load_scene_dict
from oracle.joints import joint_coords
from oracle.packed import pack_state, unpack_state
from tests.helpers import F64, anchor_errors, dot_product_case, frame_coords, packed_rows

mujoco = pytest.importorskip("mujoco")
from engine.mjcf import MJCFWarning, bodies_from_mujoco, compile_mjcf, from_mjcf  # noqa: E402

HIP = Path(__file__).resolve().parent / "mjcf" / "hip.xml"


def _scene(path: Path = HIP) -> dict:
  with warnings.catch_warnings():
    warnings.simplefilter("ignore", MJCFWarning)
    return load_scene_dict(from_mjcf(path))


def test_verify_hinges_coordinates_against_mujoco():
  """joint_coords of the maximal state that MuJoCo's state maps to (bodies_from_mujoco) against MuJoCo's own qpos and
  qvel, at 50 random poses within the ranges and random rates: the hinges' angles (Davenport angles for the hip's
  three, study claim 2) and their rates (n_i . relative angular velocity, claims 3 and 5). Both maps are exact, so the
  bound is the error of the oracle's atan2 (oracle/math3.py, a polynomial: 4.3e-8 rad in float64, measured here), of
  which a hip angle chains up to four (t2's phase and arccos, then t1 and t3 from t2); a rate takes that error
  through its axes times the rate (|t2| stays 10 deg or more from the hip's singular 90)."""
  scene = _scene()
  model = build_model(scene, dtypes.float64, "CPU")
  m, d = compile_mjcf(HIP)
  d0 = mujoco.MjData(m)
  mujoco.mj_kinematics(m, d0)
  rng = np.random.default_rng(0)
  names = [j["name"] for j in scene["joints"]]
  adr = [m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, n)] for n in names]
  vadr = [m.jnt_dofadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, n)] for n in names]
  worst_q = worst_v = worst_rate = 0.0
  for _ in range(50):
    d.qpos[:] = [rng.uniform(*(0.95 * m.jnt_range[j])) for j in range(m.njnt)]
    d.qvel[:] = rng.normal(0.0, 1.0, m.nv)
    mujoco.mj_forward(m, d)
    arrays = bodies_from_mujoco(scene, m, d, d0)
    q, qd = (t.numpy()[0] for t in joint_coords(model, Tensor(packed_rows(arrays)[None], **F64)))
    worst_q = max(worst_q, float(np.abs(q - d.qpos[adr]).max()))
    worst_v = max(worst_v, float(np.abs(qd - d.qvel[vadr]).max()))
    worst_rate = max(worst_rate, float(np.abs(d.qvel).max()))
  from oracle.math3 import atan2
  a = np.linspace(-np.pi, np.pi, 100001)
  err = float(np.abs(atan2(Tensor(np.sin(a), **F64), Tensor(np.cos(a), **F64)).numpy() - a).max())
  print(f"worst angle {worst_q:.2e} rad, rate {worst_v:.2e} rad/s; atan2's error {err:.2e}")
  assert worst_q < 4 * err and worst_v < 4 * err * (1.0 + worst_rate)


def _limited(kind: str) -> dict:
  """The hip's thigh (three hinges) or the shoulder's arm (two) alone, with narrow ranges; and for comparison one
  hinge with the first's range."""
  scene = copy.deepcopy(_scene())
  keep = {"h3": ("hip_x", "hip_z", "hip_y"), "h2": ("shoulder1", "shoulder2"), "h1": ("hip_x",)}[kind]
  body = scene["joints"][[j["name"] for j in scene["joints"]].index(keep[0])]["child"]
  scene["bodies"] = [b for b in scene["bodies"] if b["name"] == body]
  scene["joints"] = [j for j in scene["joints"] if j["name"] in keep]
  scene["actuators"] = []
  for j, r in zip(scene["joints"], ([-0.4, 0.1], [-0.6, 0.5], [-0.7, 0.3])): j["range"] = r
  return scene


@functools.cache
def overshoot(kind: str) -> tuple[float, float, float]:
  """(worst overshoot past a range [rad], 3 h max|t'| [rad], worst anchor error [m]) of _limited(kind), 8 envs kicked
  at 3 rad/s, over 0.5 s (the kick reaches the bounds within 0.1 s)."""
  model = build_model(load_scene_dict(_limited(kind)), dtypes.float64, "CPU")
  sim = engine.Simulator(model, 8)
  _, run = sim.trajectory(sim.reset(seed=0, noise=3.0), int(round(0.5 / model.dt)))
  q, qd = frame_coords(model, packed_rows(run)[1:])   # every step's state, the start's left out
  lo, hi = model.jnt_range.numpy().T
  over, rate = float(np.maximum(lo - q, q - hi).max()), float(np.abs(qd).max())
  anchor = float(anchor_errors(model, run["pos"][1:].reshape(-1, model.nbody, 3),
                               run["quat"][1:].reshape(-1, model.nbody, 4)).max())
  return over, 3.0 * (model.dt / model.substeps) * rate, anchor


@pytest.mark.xdist_group("hinges_limits")   # one worker: h1's run is shared
@pytest.mark.parametrize("kind", [pytest.param("h2", marks=pytest.mark.slow), "h3"])   # h2: 44 s, make test-slow
def test_verify_hinges_limits_hold(kind):
  """8 envs kicked at 3 rad/s (noise) into narrow ranges for 0.5 s: every hinge stays within its range but for what the
  motion of a few substeps carries past it before the next limit row (one Jacobi iteration per substep, and each
  hinge's row moves the group's other angles too): bound 3 h max|t'| (h the substep); and no more than twice what a lone
  hinge on the same body overshoots by under the same kick (h1: the group's rows must hold as a hinge's does).
  Measured 2026-11-27: 4.5e-4 rad (two hinges) and 5.6e-4 (three), the lone hinge 5.3e-4, the first bound 1.1e-2.
  The anchor stays within 1e-6 m (measured 1.5e-8 and 7.6e-8)."""
  worst = {k: overshoot(k) for k in ("h1", kind)}
  print({k: f"overshoot {o:.2e} rad, bound {b:.2e}, anchor {a:.1e} m" for k, (o, b, a) in worst.items()})
  over, bound, anchor = worst[kind]
  assert over > 0.0 or bound == 0.0   # the kick reaches the bounds (else the test says nothing)
  assert over < min(bound, 2.0 * worst["h1"][0]) and anchor < 1e-6


@pytest.mark.slow   # 111 s in the 2-worker suite (2026-11-28), most of it the float64 graph's compile (1 step: 88 s)
@pytest.mark.parametrize("path", [pytest.param(HIP, id="hip"),
                                  pytest.param(HIP.with_name("hip_armed.xml"), id="hip_armed")])
def test_grad_hinges_dot_product(path):
  """<u, J d> = <J^T u, d> through the oracle's autograd for two env-steps of the hip model (both groups, damping and
  motors on), random u and d over the positions and velocities, against float64 central differences. eps = 1e-6 by
  measured convergence (2026-11-27): relative gaps 2.4e-6 at eps = 1e-5 (the quotient's O(eps^2) error), 8.8e-9 at
  1e-6, 1.6e-6 at 1e-7, where the oracle's atan2 (a polynomial per octant, continuous only to its 4e-8 error)
  steps by up to ~1e-8 where a difference straddles an octant switch (the two hinges alone: 6.4e-7 there).
  hip_armed (armature and springs, so the armature stage carries the groups): 3.0e-7 at 1e-5, 4.6e-8 at 1e-6, 7.4e-7
  at 1e-7 (2026-11-28). Both in `make test-slow`: the default suite's 20 minutes."""
  model = build_model(_scene(path), dtypes.float64, "CPU")
  s0, p0, d, u, rg = dot_product_case(model, seed=3, noise=0.5)
  ctrl = Tensor(np.full((1, model.nact), 0.5), **F64)
  def run(p):
    final, _ = rg.forward(unpack_state(Tensor(p, **F64), s0.time), 2, ctrl)
    return pack_state(final).numpy()
  eps = 1e-6
  jd = (run(p0 + eps * d) - run(p0 - eps * d)) / (2 * eps)
  _, checkpoints = rg.forward(s0, 2, ctrl)
  jtu, _ = rg.backward(checkpoints, Tensor(u, **F64))
  lhs, rhs = float((u * jd).sum()), float((jtu.numpy() * d).sum())
  print(f"<u, J d> {lhs:.10g}, <J^T u, d> {rhs:.10g}, relative {abs(lhs - rhs) / abs(lhs):.2g}")
  assert np.isfinite(jtu.numpy()).all()
  assert abs(lhs - rhs) <= 1e-6 * max(abs(lhs), 1.0), (lhs, rhs)


def _edit(f) -> dict:
  scene = json.loads(json.dumps(_scene()))
  f(scene["joints"])
  return scene


@pytest.mark.parametrize("edit,path,says", [
  (lambda js: js[1].update(after="knee"), "joints[1].after", "just before it"),
  (lambda js: js[4].update(after="hip_y"), "joints[4].after", "just before it"),
  (lambda js: js[2].update(anchor=[0.0, 0.0, 1.9]), "joints[2].anchor", "anchor of the hinge"),
  (lambda js: js[2].update(compliance=1e-6), "joints[2].compliance", "as the hinge it turns after"),
  (lambda js: js[2].update(axis=[1.0, 0.0, 0.0]), "joints[2].axis", "dependent"),
  (lambda js: js[2].update(range=[0.1, 0.5]), "joints[2].range", "lo <= 0 <= hi"),
  (lambda js: js[1].update(after=3), "joints[1].after", "joint name"),
])
def test_verify_hinges_named_errors(edit, path, says):
  """A group that breaks a rule names the field (engine/scene_joints.py hinge_groups)."""
  with pytest.raises(SceneError) as e:
    load_scene_dict(_edit(edit))
  assert str(e.value).startswith(f"{path}: ") and says in str(e.value), str(e.value)


def test_verify_hinges_servo_named_and_backward_carries_groups():
  """A servo on a hinge of a group refuses by name; the WGSL backward kernel takes a group, in a tree with armature and
  springs too (tests/test_parity_grad_hinges.py checks both against the oracle)."""
  scene = _scene()
  scene["actuators"] = [dict(name="s", joint="hip_z", type="position", kp=10.0)]
  with pytest.raises(SceneError, match=r"^actuators\[0\]\.joint: .*'hip_z' is one of two or three hinges"):
    load_scene_dict(scene)
  from kernels.program import check_backward
  check_backward(engine.load_scene(HIP))
  check_backward(engine.load_scene(HIP.with_name("hip_armed.xml")))
