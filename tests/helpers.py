"""Shared test helpers: joint errors in numpy, pendulum initial states, exact periods, the gradient tests' loss and
finite differences, and the worker-level caches that let tests share compiles (the suite runs with --dist loadgroup:
tests that share a scene or an object are marked with the same xdist_group)."""
from __future__ import annotations
import functools
import hashlib
import inspect
import json
import math
import numpy as np
import pytest
from tinygrad import Tensor, dtypes
from engine.npquat import quat_mul, quat_rotate
from oracle.joints import joint_coords
from oracle.packed import ANGVEL, POS, QUAT, VEL
from tests.golden import SOURCES, digest, golden, rounded

SCENES = __import__("pathlib").Path(__file__).resolve().parent.parent / "scenes"


@pytest.fixture(autouse=True, scope="module")
def wgsl_checked():
  """For a module that imports it: a WEBGPU device (or a clear error), and engine.wgsl.CHECK on (validation errors
  raise, outputs start as NaN) for the module's tests."""
  import engine.wgsl as wgsl
  wgsl.require_webgpu()
  old, wgsl.CHECK = wgsl.CHECK, True
  yield
  wgsl.CHECK = old


@functools.cache
def _simulator(scene_json: str, backend: str, batch: int, dtype_name: str, device: str | None, lanes: int | None):
  from tinygrad import dtypes
  from engine.parity import simulator
  return simulator(json.loads(scene_json), backend, batch, getattr(dtypes, dtype_name), device)


def cached_simulator(scene: dict, backend: str, batch: int, dtype=None, device: str | None = None):
  """engine.parity.simulator, one per (scene, backend, batch, dtype, device) in this worker: a Simulator is compiled
  on its first call and keeps its JITs, so the tests that share it compile once. The kernel's layout (engine.wgsl.LANES,
  which tests may force) is part of the key."""
  import engine.wgsl as wgsl
  from tinygrad import dtypes
  dtype = dtype or dtypes.float32
  return _simulator(json.dumps(scene, sort_keys=True), backend, batch, dtype.name, device,
                    wgsl.LANES if backend == "wgsl" else None)


def _digest(a) -> str | None:   # the digest of the golden files' names before they were rounded (legacy)
  return None if a is None else hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()[:16]


def golden_reference(scene: dict, runs: list, sources: tuple[str, ...] = SOURCES) -> list[np.ndarray]:
  """engine.parity.float64_reference from a golden file (tests/golden.py): the float64 oracle's states after run()'s
  cases (packed, ctrl, steps), keyed by the scene and a digest of the cases. sources: the code it depends on."""
  from engine.parity import float64_reference
  def named(inputs: dict) -> tuple[str, dict]:
    key = hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()[:10]
    return f"parity_{scene.get('name', 'scene')}_{key}", inputs
  name, inputs = named({"scene": rounded(scene), "runs": [(digest(p)[:16], digest(c)[:16], n) for p, c, n in runs]})
  legacy = named({"scene": scene, "runs": [(_digest(p), _digest(c), n) for p, c, n in runs]})
  out = golden(name, inputs,
               lambda: {f"case{i}": a for i, a in enumerate(float64_reference(scene, runs, cached_simulator))},
               sources, legacy)
  return [out[f"case{i}"] for i in range(len(runs))]


def anchor_errors(model, pos: np.ndarray, quat: np.ndarray) -> np.ndarray:
  """|p_parent - p_child| [m] per env and joint for ball/hinge/fixed joints: (B, njoint) (0 for distance joints)."""
  ap, ac = model.jnt_anchor_parent.numpy().astype(np.float64), model.jnt_anchor_child.numpy().astype(np.float64)
  errs = np.zeros((pos.shape[0], model.njoint))
  for j, (p, c, kind) in enumerate(zip(model.jnt_parent, model.jnt_child, model.jnt_type)):
    if kind == "distance": continue
    w1 = ap[j] if p < 0 else pos[:, p] + quat_rotate(quat[:, p], np.broadcast_to(ap[j], pos[:, p].shape))
    w2 = pos[:, c] + quat_rotate(quat[:, c], np.broadcast_to(ac[j], pos[:, c].shape))
    errs[:, j] = np.linalg.norm(w1 - w2, axis=-1)
  return errs


def packed_rows(rec: dict) -> np.ndarray:
  """A record's pos, quat, vel and angvel (Simulator.trajectory's, bodies_from_mujoco's) as packed state rows
  (..., nbody, 13), in oracle/packed.py's layout."""
  out = np.empty((*rec["pos"].shape[:-1], 13), rec["pos"].dtype)
  for key, cols in (("pos", POS), ("quat", QUAT), ("vel", VEL), ("angvel", ANGVEL)): out[..., cols] = rec[key]
  return out


def frame_coords(model, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
  """Joint coordinates and rates (T, B, njoint) of recorded packed rows (T, B, nbody, 13): every frame in one call,
  the frames folded into the batch (joint_coords is per env), so one graph to schedule rather than one per frame
  (250 frames took ~35 s one at a time; a hinge group's 120 steps 69 s of the cold suite)."""
  t = Tensor(rows.reshape(-1, *rows.shape[2:]), dtype=model.body_pos0.dtype, device=model.body_pos0.device)
  return tuple(c.numpy().reshape(*rows.shape[:2], -1) for c in joint_coords(model, t))


def axis_angle(axis, angle: float) -> np.ndarray:
  a = np.asarray(axis, np.float64) / np.linalg.norm(axis)
  return np.concatenate([[math.cos(angle / 2)], a * math.sin(angle / 2)])


def swing_to(model, angle: float, anchor=(0.0, 0.0, 2.0), axis=(0.0, 1.0, 0.0)) -> tuple[np.ndarray, np.ndarray]:
  """Pose (pos, quat) of a one-body pendulum's bob rotated rigidly about the hinge so its COM makes `angle` [rad] with
  the downward vertical (positive towards +x), joint satisfied exactly."""
  anchor = np.asarray(anchor, np.float64)
  p0, q0 = model.body_pos0.numpy()[0].astype(np.float64), model.body_quat0.numpy()[0].astype(np.float64)
  angle0 = math.atan2(p0[0] - anchor[0], anchor[2] - p0[2])
  dq = axis_angle(axis, -(angle - angle0))  # a positive turn about +y carries +z towards +x, lowering the angle
  return anchor + quat_rotate(dq, p0 - anchor), quat_mul(dq, q0)


def elliptic_period(small_period: float, amplitude: float) -> float:
  """Exact period of a pendulum of small-angle period T0 at amplitude theta0: T = T0 * 2 K(sin(theta0/2)) / pi,
  with K the complete elliptic integral of the first kind by the arithmetic-geometric mean."""
  a, b = 1.0, math.cos(amplitude / 2)
  for _ in range(30): a, b = (a + b) / 2, math.sqrt(a * b)
  return small_period / a


def crossing_times(t: np.ndarray, y: np.ndarray, level: float = 0.0) -> np.ndarray:
  """Times where y crosses `level` (either direction), linearly interpolated between samples."""
  s = np.sign(y - level)
  i = np.nonzero(s[:-1] * s[1:] < 0)[0]
  return t[i] + (level - y[i]) * (t[i + 1] - t[i]) / (y[i + 1] - y[i])


def two_body_scene(joint: dict, gravity=(0.0, 0.0, 0.0)) -> dict:
  """Two unequal boxes joined by `joint` (type and its fields; anchors in world frame at this pose)."""
  return {"name": "pair", "gravity": list(gravity), "substeps": 10,
          "bodies": [{"name": "a", "pos": [0.0, 0.0, 1.0], "geoms": [{"type": "box", "size": [0.1, 0.15, 0.2]}]},
                     {"name": "b", "pos": [0.5, 0.1, 1.0], "geoms": [{"type": "box", "size": [0.2, 0.1, 0.05],
                                                                          "density": 3000.0}]}],
          "joints": [dict(parent="a", child="b", **joint)]}


def solve_once(joint: dict, kick_pos, kick_rot, error_fn, iterations: int = 1):
  """Perturb body b's pose, run Jacobi iterations (float64; multipliers carried, as in a substep). Returns (error
  before, after, |linear momentum change|, |angular momentum change about the origin|, |impulse on body b|)."""
  from tinygrad import Tensor, dtypes
  import engine
  from oracle.packed import WORK_WIDTH, pack_state
  from oracle.solve import init_lambda, solve
  model = engine.load_scene(two_body_scene(joint), dtype=dtypes.float64, device="CPU")
  p = pack_state(engine.Simulator(model).reset()).numpy()
  p[0, 1, 0:3] += kick_pos
  angle = float(np.linalg.norm(kick_rot))
  if angle > 0: p[0, 1, 3:7] = quat_mul(axis_angle(kick_rot, angle), p[0, 1, 3:7])
  work = np.concatenate([p, np.zeros(p.shape[:-1] + (WORK_WIDTH - p.shape[-1],))], -1)
  out, lam = Tensor(work, dtype=dtypes.float64, device="CPU").contiguous().realize(), init_lambda(model)
  for _ in range(iterations): out, lam, _ = solve(model, out, lam, model.dt / model.substeps)
  o = out.numpy()
  m = 1.0 / model.body_inv_mass.numpy()
  inertia = 1.0 / model.body_inv_inertia.numpy()
  dx = o[0, :, 13:16]       # accumulated displacement and rotation of the solve
  dth = o[0, :, 16:19]
  lin = (m[:, None] * dx).sum(0)
  # angular momentum of the corrections about the origin: m x cross dx + I_world dth
  def spin(b):  # I_world dth = R I R^T dth
    return quat_rotate(p[0, b, 3:7], inertia[b] * quat_rotate(p[0, b, 3:7] * [1, -1, -1, -1], dth[b]))
  ang = sum(np.cross(p[0, b, 0:3], m[b] * dx[b]) + spin(b) for b in range(2))
  impulse = m[1] * np.linalg.norm(dx[1])
  return error_fn(model, p), error_fn(model, o[..., :13]), np.abs(lin).max(), np.abs(ang).max(), impulse


def impulse_pair_bound(gap: float, impulse: float) -> float:
  """Equal and opposite impulses +-P applied at two anchor points a distance `gap` apart change the angular momentum
  by gap x P: second order in the error. A vector point constraint's P is not parallel to the gap (a scalar
  constraint's is, and conserves it exactly)."""
  return gap * impulse * (1 + 1e-9) + 1e-12


def point_error(model, p) -> float:
  return float(anchor_errors(model, p[..., 0:3], p[..., 3:7]).max())


def record(scene, steps: int, batch: int = 1, edit=None) -> dict:
  """Roll a scene (a name in scenes/ or a dict) forward `steps` env-steps from its initial state, sampling every
  step. edit(sim, state) -> state may change the initial state. Returns numpy arrays t (T,), pos/vel/angvel
  (T, B, nbody, 3), quat (T, B, nbody, 4), the model and the initial state's arrays as index 0."""
  import engine
  model = engine.load_scene(SCENES / f"{scene}.json" if isinstance(scene, str) else scene)
  sim = engine.Simulator(model, batch=batch)
  s0 = sim.reset()
  if edit is not None: s0 = edit(sim, s0)
  _, out = sim.trajectory(s0, steps)
  out["model"] = model
  return out


def peaks(y: np.ndarray) -> np.ndarray:
  """Indices of strict local maxima of a 1-D series."""
  return np.nonzero((y[1:-1] >= y[:-2]) & (y[1:-1] > y[2:]))[0] + 1


def box_bounce(tilt: float = 0.0) -> dict:
  """drop.json's 20 cm box with restitution 1 on box and floor, its lowest point 5 cm up, turned `tilt` rad about x
  (0: it lands flat, on four corners at once): the restitution stage's scene (oracle/restitution.py)."""
  from engine.scene import load_scene_dict
  d = load_scene_dict(SCENES / "drop.json")
  body = d["bodies"][0]
  body["pos"], body["quat"] = [0.0, 0.0, 0.15 + 0.1 * tilt], [math.cos(tilt / 2), math.sin(tilt / 2), 0.0, 0.0]
  body["geoms"][0]["restitution"] = d["world"]["geoms"][0]["restitution"] = 1.0
  return {**d, "name": "box_bounce"}


def sunk_pair(depen: float, sink: float = 0.03, armature: float = 0.0) -> dict:
  """Two 40 x 20 x 10 cm boxes hinged edge to edge, flat, `sink` [m] into the floor: the depenetration cap's scene
  (contact.max_depenetration = depen [m/s], 0: none; armature [kg m^2] on the hinge: the armature stage's path)."""
  box = {"type": "box", "size": [0.2, 0.1, 0.05], "friction": 0.8}
  z = 0.05 - sink
  return {"name": "sunk_pair_armed" if armature else "sunk_pair", "dt": 1 / 240, "substeps": 10, "iterations": 2,
          "contact": {"max_depenetration": depen} if depen else {},
          "world": {"geoms": [{"name": "floor", "type": "plane", "size": [3.0, 3.0], "friction": 0.8}]},
          "bodies": [{"name": "a", "pos": [-0.2, 0.0, z], "geoms": [box]},
                     {"name": "b", "pos": [0.2, 0.0, z], "geoms": [box]}],
          "joints": [{"type": "hinge", "parent": "a", "child": "b", "anchor": [0.0, 0.0, z], "axis": [0.0, 1.0, 0.0],
                      **({"armature": armature} if armature else {})}]}


# --- gradients (tests/test_grad_*.py): float64 on the CPU device, loss = W . final position of the last body ---
F64 = dict(dtype=dtypes.float64, device="CPU")
EPS = 1e-6
W = np.array([1.0, 0.3, 0.5])


def loss_np(state) -> np.ndarray:
  return state.body_pos.numpy()[:, -1] @ W


def loss_t(state) -> Tensor:
  return (state.body_pos[0, -1] * Tensor(W, **F64)).sum()


def dot_product_case(model, seed: int = 1, noise: float = 0.5):
  """The dot-product test's inputs, <u, J d> = <J^T u, d> for one step (tests/test_grad_*.py): (s0, p0, d, u, rg),
  the kicked initial state and its packed array, d random over the positions and velocities, u over everything
  (numpy's rng 0), and engine.grad.RolloutGrad(model)."""
  import engine
  from engine.grad import RolloutGrad
  from oracle.packed import pack_state
  s0 = engine.Simulator(model, batch=1).reset(seed=seed, noise=noise)
  rng = np.random.default_rng(0)
  p0 = pack_state(s0).numpy()
  mask = np.zeros_like(p0)
  mask[..., 0:3], mask[..., 7:13] = 1.0, 1.0
  return s0, p0, rng.normal(size=p0.shape) * mask, rng.normal(size=p0.shape), RolloutGrad(model)


def reference(name: str, inputs: dict, compute, sources: tuple[str, ...] = SOURCES) -> dict[str, np.ndarray]:
  """golden() (tests/golden.py) with compute()'s own source among the inputs: the file is recomputed when the test's
  reference code changes, not only the physics (sources: the code it depends on, tests/golden.py SOURCES or ENVS)."""
  return golden(name, {**inputs, "source": inspect.getsource(compute)}, compute, sources)


def fd_batch(name: str, scene: str, steps: int, perturb, **inputs) -> float:
  """Central difference of loss_np after `steps` env-steps of scenes/<scene>.json (float64), from a batch of 2 envs
  (+eps, -eps): perturb(model, state) -> (model, state) applies them. A golden file (tests/golden/<name>.npz): inputs
  name whatever perturb reads besides its own source (an index, say)."""
  def compute():
    import engine
    model = engine.load_scene(SCENES / f"{scene}.json", **F64)
    m2, s2 = perturb(model, engine.Simulator(model, batch=2).reset())
    l = loss_np(engine.Simulator(m2, batch=2).rollout(s2, steps))
    return {"fd": (l[0] - l[1]) / (2 * EPS)}
  inputs = dict(inputs, scene=scene, steps=steps, eps=EPS, w=W.tolist(), perturb=inspect.getsource(perturb))
  return float(reference(name, inputs, compute)["fd"])


# --- envs (tests/test_env.py, tests/test_gym.py: the xdist group "envs") ---
# An env compiles for its batch size: one size per task, so tests whose checks hold at any size share one compile per
# worker. cartpole: 4 (test_env's NaN isolation watches 3 untouched envs beside the poisoned one); the others 1, so
# tests/test_gym.py's one-env views (check_env needs num_envs=1) and tests/test_task_ant.py share them.
ENV_BATCH = {"cartpole": 4}


def env_batch(task: str) -> int:
  return ENV_BATCH.get(task, 1)


@functools.cache
def env_for(task: str):
  """engine.make_env(task, env_batch(task)), built once per worker and shared: reset it with a seed before use."""
  import engine
  return engine.make_env(task, num_envs=env_batch(task))
