"""--accurate (issue 19, engine/accurate.py): one env-step through MuJoCo for a batch of this engine's States.

- The state maps: a MuJoCo state (random qpos about qpos0, qvel ~ N(0, 0.5)) taken to maximal coordinates
  (engine.mjcf.bodies_from_mujoco) and back (MuJoCoStep.generalised) is the same qpos and qvel, to float64 rounding.
- The step is MuJoCo's: MuJoCoStep from that maximal state lands where mj_step from the qpos/qvel lands, controls and
  muscle activations included, env by env.
- And it is the same physics as this engine's: from such a state one step apart by less than XPBD's first-order error.
- Through MJX (backend="mjx"), the batch lands where the C library's step lands, to float32 rounding.
"""
from __future__ import annotations
import subprocess
import sys
from pathlib import Path
import numpy as np
import pytest
from tinygrad import Tensor, dtypes
from engine.accurate import MuJoCoStep
from engine.mjcf import BALL, FREE, bodies_from_mujoco
from engine.simulator import Simulator
import engine

mujoco = pytest.importorskip("mujoco")
ROOT = Path(__file__).resolve().parent.parent
SCENES = [ROOT / "scenes" / f"{n}.json" for n in ("pendulum", "double_pendulum", "chain", "cradle", "compliant_hang",
                                                   "muscle_hang", "leg2", "drop")]
SCENES += [ROOT / "engine" / "tasks" / "scenes" / "ant.json", ROOT / "tests" / "mjcf" / "double_pendulum.xml",
           ROOT / "tests" / "mjcf" / "planar_arm.xml",   # a planar joint with its hinge off the body's origin
           ROOT / "tests" / "mjcf" / "slide2_arm.xml",   # a slide2 joint, its second slide's ref off 0
           ROOT / "tests" / "mjcf" / "four_bar.xml",   # a loop closed by a <connect> (a ball joint in the scene)
           ROOT / "tests" / "mjcf" / "hip.xml"]   # three hinges on one body, and two (hinge3, hinge2 groups)
IDS = [p.stem if p.suffix == ".json" else f"{p.stem}.xml" for p in SCENES]


def random_state(mj: MuJoCoStep, rng) -> tuple[np.ndarray, np.ndarray]:
  """qpos about qpos0 (hinges and slides +- 0.3, balls and free bodies turned by up to ~0.3 rad, free bodies moved
  +- 0.1 m) and qvel ~ N(0, 0.5)."""
  m, qpos = mj.m, mj.m.qpos0.copy()
  for j in range(m.njnt):
    a, kind = m.jnt_qposadr[j], int(m.jnt_type[j])
    if kind in (FREE, BALL):
      k = a + 3 if kind == FREE else a
      if kind == FREE: qpos[a:a + 3] += rng.uniform(-0.1, 0.1, 3)
      q = np.concatenate([[1.0], rng.uniform(-0.15, 0.15, 3)])
      w, v = qpos[k], qpos[k + 1:k + 4]   # q0 * q
      qpos[k:k + 4] = [w * q[0] - v @ q[1:], *(w * q[1:] + q[0] * v + np.cross(v, q[1:]))]
      qpos[k:k + 4] /= np.linalg.norm(qpos[k:k + 4])
    else: qpos[a] += rng.uniform(-0.3, 0.3)
  return qpos, rng.normal(0.0, 0.5, m.nv)


def maximal(mj: MuJoCoStep, qpos, qvel) -> dict[str, np.ndarray]:
  d = mujoco.MjData(mj.m)
  d.qpos[:], d.qvel[:] = qpos, qvel
  mujoco.mj_forward(mj.m, d)
  return bodies_from_mujoco(mj.scene, mj.m, d, mj.d0)


def same_qpos(m, a, b) -> float:
  """Largest difference of two qpos, a quaternion compared up to sign."""
  err = 0.0
  for j in range(m.njnt):
    adr, kind = m.jnt_qposadr[j], int(m.jnt_type[j])
    n = {FREE: 7, BALL: 4}.get(kind, 1)
    x, y = a[adr:adr + n], b[adr:adr + n]
    if n > 1 and np.dot(x[-4:], y[-4:]) < 0: y = np.concatenate([y[:-4], -y[-4:]])
    err = max(err, float(np.abs(x - y).max()))
  return err


@pytest.mark.parametrize("path", SCENES, ids=IDS)
def test_verify_accurate_state_maps_round_trip(path: Path):
  mj = MuJoCoStep(path)
  rng = np.random.default_rng(0)
  for _ in range(3):
    qpos, qvel = random_state(mj, rng)
    body = maximal(mj, qpos, qvel)
    back_pos, back_vel = mj.generalised(body["pos"], body["quat"], body["vel"], body["angvel"])
    assert same_qpos(mj.m, qpos, back_pos) < 1e-9
    assert np.abs(back_vel - qvel).max() < 1e-9


def _state(mj: MuJoCoStep, bodies: list[dict], act=None) -> engine.State:
  def t(k): return Tensor(np.stack([b[k] for b in bodies]), dtype=dtypes.float64, device="CPU")
  return engine.State(body_pos=t("pos"), body_quat=t("quat"), body_vel=t("vel"), body_angvel=t("angvel"),
                      time=Tensor.zeros(len(bodies), dtype=dtypes.float64, device="CPU"),
                      act=None if act is None else Tensor(act, dtype=dtypes.float64, device="CPU"))


@pytest.mark.parametrize("path", [ROOT / "scenes" / "leg2.json", ROOT / "engine" / "tasks" / "scenes" / "ant.json"],
                         ids=["leg2", "ant"])
def test_verify_accurate_step_is_mujocos(path: Path):
  """Two envs from different states with different controls (and leg2's muscle activations): each lands where
  mj_step lands."""
  mj = MuJoCoStep(path)
  m, rng = mj.m, np.random.default_rng(1)
  starts = [random_state(mj, rng) for _ in range(2)]
  ctrl = rng.uniform(m.actuator_ctrlrange[:, 0], m.actuator_ctrlrange[:, 1], (2, m.nu))
  act = rng.uniform(0.0, 1.0, (2, m.na)) if m.na else None
  out = mj(_state(mj, [maximal(mj, *s) for s in starts], act), ctrl)
  for e, (qpos, qvel) in enumerate(starts):
    d = mujoco.MjData(m)
    d.qpos[:], d.qvel[:], d.ctrl[:] = qpos, qvel, ctrl[e]
    if act is not None: d.act[:] = act[e]
    mujoco.mj_step(m, d)
    mujoco.mj_forward(m, d)
    want = bodies_from_mujoco(mj.scene, m, d, mj.d0)
    for k in ("pos", "vel", "angvel"):
      assert np.abs(getattr(out, f"body_{k}").numpy()[e] - want[k]).max() < 1e-9, k
    if act is not None: assert np.abs(out.act.numpy()[e] - d.act).max() < 1e-12
  assert out.time.numpy() == pytest.approx([mj.scene["dt"]] * 2)
  with pytest.raises(ValueError, match=r"ctrl: expected shape \(2, "): mj(out, ctrl[:, :1])


def test_verify_accurate_step_is_this_engines_physics():
  """double_pendulum from a consistent state: one step of MuJoCo and of this engine end within 0.1 mm and 1 % of the
  velocities. Both are first-order in time: MuJoCo's Euler step at h = 1/240 s is off by O(h^2 |a|) ~ 0.2 mm in
  position per step at this swing, XPBD at 20 substeps by 1/20 of that. Measured 2026-11-25: 0.084 mm and 7.5e-5 of
  the velocities (they part over a second, see test_verify_mjcf.py)."""
  path = ROOT / "scenes" / "double_pendulum.json"
  mj = MuJoCoStep(path)
  start = _state(mj, [maximal(mj, *random_state(mj, np.random.default_rng(2)))])
  sim = Simulator(engine.load_scene(path, dtypes.float64, "CPU"))
  ours, theirs = sim.step(start), mj(start)
  assert np.abs(ours.body_pos.numpy() - theirs.body_pos.numpy()).max() < 1e-4
  v = np.abs(theirs.body_vel.numpy()).max()
  assert np.abs(ours.body_vel.numpy() - theirs.body_vel.numpy()).max() < 0.01 * v


# MJX (float32, jax's default) against MuJoCo's C step (float64), one step from the same states, each field's worst
# difference over its largest value. Measured 2026-11-27 (mujoco-mjx 3.3.7, jax 0.10.2, CPU): leg2 1.9e-8 (angvel),
# double_pendulum 1.9e-7, ant 1.8e-6: float32's 6e-8 rounding through a step's solve; 1e-5 is 5x the largest
MJX_TOL = 1e-5


@pytest.mark.parametrize("name", ["leg2", pytest.param("double_pendulum", marks=pytest.mark.slow)])
def test_verify_accurate_mjx_is_mujocos(name):
  """leg2 (two muscles on tendons: controls and activations through MJX) in the default suite, 5 s of MJX compile;
  the backends choose as documented."""
  pytest.importorskip("mujoco.mjx", reason="MJX is not installed: pip install 'tinyxpbd[mjx]'")
  from engine.accurate import MJXUnavailable
  path = ROOT / "scenes" / f"{name}.json"
  c, x = MuJoCoStep(path, backend="c"), MuJoCoStep(path, backend="mjx")
  assert (c.backend, x.backend) == ("c", "mjx")
  import jax
  assert MuJoCoStep(path).backend == ("c" if jax.default_backend() == "cpu" else "mjx")
  m, rng = c.m, np.random.default_rng(3)
  start = _state(c, [maximal(c, *random_state(c, rng)) for _ in range(3)],
                 rng.uniform(0.0, 1.0, (3, m.na)) if m.na else None)
  ctrl = rng.uniform(m.actuator_ctrlrange[:, 0], m.actuator_ctrlrange[:, 1], (3, m.nu))
  want, got = c(start, ctrl), x(start, ctrl)
  for k in ("body_pos", "body_vel", "body_angvel", "act"):
    if getattr(want, k) is None: continue
    a, b = getattr(want, k).numpy(), getattr(got, k).numpy()
    assert np.abs(a - b).max() <= MJX_TOL * np.abs(a).max(), k
  with pytest.raises(ValueError, match="backend: expected one of auto, c, mjx"): MuJoCoStep(path, backend="jax")
  assert issubclass(MJXUnavailable, RuntimeError)


def test_cli_step_accurate():
  run = subprocess.run([sys.executable, "-m", "engine", "step", "--accurate", "scenes/pendulum.json", "--steps", "2",
                        "--mujoco", "c"], capture_output=True, text=True, cwd=ROOT)
  assert run.returncode == 0, run.stderr
  assert "(engine | MuJoCo | apart [mm])" in run.stdout and "bob" in run.stdout
  bad = subprocess.run([sys.executable, "-m", "engine", "step", "--steps", "0", "scenes/pendulum.json"],
                       capture_output=True, text=True, cwd=ROOT)
  assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr
