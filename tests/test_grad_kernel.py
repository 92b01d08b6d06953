"""The WGSL backward kernel (issue 17) beyond per-scene parity (tests/test_parity_grad.py): long horizons, a
dot-product test against the forward kernel's finite differences, NaN isolation between envs, and clear errors."""
from __future__ import annotations
import time
import numpy as np
import pytest
from tinygrad import Tensor, dtypes
import engine
import engine.wgsl as wgsl
import engine.wgsl_backward as wgsl_backward
from engine.grad import KernelRolloutGrad, RolloutGrad, grader, rollout_grad
from oracle.packed import pack_state, unpack_state
from tests.golden import PHYSICS, golden
from tests.helpers import SCENES, wgsl_checked  # noqa: F401 (autouse)
from tests.test_parity_grad import FLOOR_FACTOR, TOL, rel

pytestmark = pytest.mark.xdist_group("parity_grad")


def kicked(model, batch: int = 1) -> np.ndarray:
  return pack_state(engine.Simulator(model, batch=batch).reset(seed=1, noise=0.5)).numpy().astype(np.float32)


def oracle_vjp(scene: str, p: np.ndarray, u: np.ndarray, dtype) -> np.ndarray:
  """The oracle's d <u, step(p)> / d p for one env-step (RolloutGrad), in `dtype`."""
  model = engine.load_scene(SCENES / f"{scene}.json", dtype=dtype, device="CPU")
  rg = RolloutGrad(model)
  time0 = Tensor.zeros(p.shape[0], device="CPU").cast(dtype)
  _, cps = rg.forward(unpack_state(Tensor(p, device="CPU").cast(dtype), time0), 1)
  return rg.backward(cps, Tensor(u, device="CPU").cast(dtype))[0].numpy().astype(np.float64)


def long_horizon(scene: str, steps: int, batch: int = 1) -> None:
  """The scene's `steps`-step gradient from the kicked start through the kernel (rollout_grad: KernelRolloutGrad),
  of the last body's weighted position: finite, and each end's step adjoint equal to the oracle's. Over seconds a
  chain's swing or a falling stack is chaotic, so a float32 trajectory leaves the float64 one and the two
  whole-horizon gradients are incomparable; what is compared is the backward kernel's VJP at the first step (from
  the kicked start) and at the last (from the state the float64 oracle reaches after steps - 1), against the
  oracle's float64 VJP there, judged as tests/test_parity_grad.py judges (TOL, or FLOOR_FACTOR times the float32
  oracle's own error). The wall time is printed (docs/wgsl.md records it). batch: the kicked env repeated (1 or 2),
  so that the kernel's programs are those of another test of the scene at that batch (compiled once per worker)."""
  model = engine.load_scene(SCENES / f"{scene}.json", device="WEBGPU")
  p0 = kicked(model)
  t0 = time.perf_counter()
  start = unpack_state(Tensor(np.repeat(p0, batch, 0), device="WEBGPU"), Tensor.zeros(batch, device="WEBGPU"))
  loss, adj, _ = rollout_grad(model, start, steps,
                              lambda s: (s.body_pos[:, -1] * Tensor([0.3, -0.2, 1.0], device="WEBGPU")).sum())
  g = pack_state(adj).numpy()
  print(f"{scene} x{batch}, {steps} steps: loss {loss.item():.4f}, gradient in {time.perf_counter() - t0:.1f} s")
  assert np.isfinite(g).all() and np.abs(g).max() > 0
  u = np.random.default_rng(3).normal(size=p0.shape).astype(np.float32)

  def late_state():
    m64 = engine.load_scene(SCENES / f"{scene}.json", dtype=dtypes.float64, device="CPU")
    sim = engine.Simulator(m64, batch=1)
    s = sim.rollout(unpack_state(Tensor(p0, device="CPU").cast(dtypes.float64), Tensor.zeros(1, device="CPU")
                                 .cast(dtypes.float64)), steps - 1)
    return {"p": pack_state(s).numpy().astype(np.float32)}
  p_last = golden(f"grad_{scene}_state_{steps - 1}", dict(scene=scene, steps=steps - 1, seed=1, noise=0.5),
                  late_state, PHYSICS)["p"]
  ends = np.concatenate([p0, p_last])   # the two ends as a batch of two envs: one oracle capture per precision
  u2 = np.concatenate([u, u])
  ref = golden(f"grad_{scene}_vjp_ends", dict(scene=scene, p=ends.tobytes().hex(), u=3),
               lambda: {d: oracle_vjp(scene, ends, u2, t)
                        for d, t in (("f64", dtypes.float64), ("f32", dtypes.float32))}, PHYSICS)
  # `batch` envs a launch: the rollout's own backward program, not a second compile for another batch
  t = lambda a: Tensor(a, device="WEBGPU")
  got = np.concatenate([wgsl_backward.step_vjp(model, t(ends[k:k + batch]), None, t(u2[k:k + batch]))[0].numpy()
                        for k in range(0, 2, batch)])
  for k, name in enumerate(("first", "last")):
    err, floor = rel(got[k].astype(np.float64), ref["f64"][k]), rel(ref["f32"][k], ref["f64"][k])
    print(f"{scene} step VJP at the {name} step: kernel {err:.2e}, float32 oracle {floor:.2e}")
    assert err <= max(TOL, FLOOR_FACTOR * floor), (name, err, floor)


# in the default suite since 2026-11-26, in a group of its own so that it runs beside the others: 92 s alone on a cold
# shader cache (143 s in the cold-cache suite, beside the other worker), all but 12 s of it lavapipe compiling
# stack10's backward program (55 s alone) and step (10 s) once; its float64 references are golden files
# (tests/golden/grad_stack10_*). xdist names its group grad_stack10_parity_grad (the module's mark joins it);
# conftest.py ranks it by this, the closest mark
@pytest.mark.xdist_group("grad_stack10")
def test_grad_stack10_500_steps():
  """The ten-box stack's 500-step gradient (2.1 s, 10,000 substeps), kicked so that it topples: every contact stage
  (box-box and box-plane narrowphase, normal and friction solve, restitution) on the path. Measured 2026-11-26: the
  gradient in 12 s with warm caches, 92 s with a cold shader cache; the step VJPs at the ends 5.96e-3 and 5.63e-3
  from float64, where the float32 oracle is at 5.75e-3 and 4.78e-3."""
  long_horizon("stack10", 500)


def test_grad_dot_product_finite_difference():
  """<u, J d> by central differences of the forward kernel against <J^T u, d> from the backward kernel, one env-step
  of the kicked double pendulum, d over positions and velocities. In float32 the difference quotient's error is
  C eps^2 (truncation) + R / eps (the forward's rounding, amplified by the step), so a ladder of eps has a V-shaped
  error; measured 2026-11-24: 2.3e-2, 7.9e-3, 7.3e-4, 6.4e-3, 1.1e-2 at eps 1e-2 .. 1e-4. The test fits C at the
  largest eps and R at the smallest, and asserts the best rung within 1.5 times the optimum C eps*^2 + R / eps* that
  they predict (1.2e-3), and within 2e-3: a wrong adjoint misses by its own error at every rung."""
  model = engine.load_scene(SCENES / "double_pendulum.json", device="WEBGPU")
  p0 = kicked(model)
  rng = np.random.default_rng(0)
  mask = np.zeros_like(p0)
  mask[..., 0:3], mask[..., 7:13] = 1.0, 1.0
  d, u = rng.normal(size=p0.shape) * mask, rng.normal(size=p0.shape)
  eps = np.array([1e-2, 3e-3, 1e-3, 3e-4, 1e-4])
  # every launch at 2 envs, the batch of the group's other double-pendulum tests (test_parity_store_replay...), so that
  # the forward and backward programs compile once for all of them (a batch is a program; the envs do not interact)
  x = [np.concatenate([p0 + e * d, p0 - e * d]).astype(np.float32) for e in eps]
  out = np.concatenate([wgsl.step(model, Tensor(xk, device="WEBGPU"), None, 1).numpy() for xk in x]).astype(np.float64)
  two = lambda a: Tensor(np.concatenate([a, a]).astype(np.float32), device="WEBGPU")   # noqa: E731
  jtu = wgsl_backward.step_vjp(model, two(p0), None, two(u))[0].numpy()[:1]
  rhs = float((jtu.astype(np.float64) * d).sum())
  lhs = np.array([(u[0] * (out[2 * k] - out[2 * k + 1])).sum() / (2 * e) for k, e in enumerate(eps)])
  err = np.abs(lhs - rhs) / abs(rhs)
  c, r = err[0] / eps[0] ** 2, err[-1] * eps[-1]
  best = (r / (2 * c)) ** (1 / 3)
  predicted = c * best ** 2 + r / best
  print("eps", eps.tolist(), "relative error", err.tolist(), f"predicted optimum {predicted:.2e} at {best:.1e}")
  assert err.min() <= min(1.5 * predicted, 2e-3), (err, predicted)


def test_grad_nan_isolated_per_env():
  """A NaN in one env's output gradient reaches that env's gradients only: two envs, each poisoned in turn, so that a
  leak into the env after it and into the env before it are both seen. Two envs, not three: the batch of
  test_parity_store_replay, whose backward program this one then compiles for it (a batch is a program; 11 s of
  lavapipe compiling on a cold shader cache)."""
  model = engine.load_scene(SCENES / "double_pendulum.json", device="WEBGPU")
  p = kicked(model, 2)
  u = np.random.default_rng(3).normal(size=p.shape).astype(np.float32)
  def grads(u):
    gp, _, gprm = wgsl_backward.step_vjp(model, Tensor(p, device="WEBGPU"), None, Tensor(u, device="WEBGPU"))
    return gp.numpy(), gprm.numpy()
  clean = grads(u)
  for bad in range(2):
    poisoned = grads(np.where(np.arange(2)[:, None, None] == bad, np.nan, u).astype(np.float32))
    for a, b in zip(clean, poisoned):
      np.testing.assert_array_equal(b[1 - bad], a[1 - bad])
      assert np.isnan(b[bad]).any()


@pytest.mark.parametrize("lanes", [None, 2])
def test_grad_simulator_differentiable_wgsl(lanes, monkeypatch):
  """Simulator(backend="wgsl", differentiable=True): Tensor.gradient flows through the forward kernel's grad_fxn
  (engine.wgsl_backward.step_grad) to the packed state and a Model field, and gives what the backward kernel gives
  called directly (step_vjp, param_grads), bit for bit but for the batch sum of the shared field; the step is the
  non-differentiable one's. lanes=2: the forward on two lanes per env (the layout's result is the same), and the
  backward too (engine.wgsl_backward.backward_lanes follows LANES where the env's state fits workgroup memory, as the
  double pendulum's does): on a cold shader cache its program's first launch is ~57 s of this test (2026-11-28).
  Batch 2."""
  monkeypatch.setattr(wgsl, "LANES", lanes)
  model = engine.load_scene(SCENES / "double_pendulum.json", device="WEBGPU")
  p0 = kicked(model, 2)
  u = np.random.default_rng(6).normal(size=p0.shape).astype(np.float32)
  p = Tensor(p0, device="WEBGPU").contiguous().realize()
  start = unpack_state(p, Tensor.zeros(2, device="WEBGPU"), model)
  end = engine.Simulator(model, batch=2, backend="wgsl", differentiable=True).step(start)
  loss = (pack_state(end) * Tensor(u, device="WEBGPU")).sum()
  gp, gm = loss.gradient(p, model.body_inv_mass)   # before anything realises `end`, which would cut its graph
  plain = engine.Simulator(model, batch=2, backend="wgsl").step(start)
  for f in ("body_pos", "body_quat", "body_vel", "body_angvel"):
    np.testing.assert_array_equal(getattr(end, f).numpy(), getattr(plain, f).numpy())
  vp, _, vprm = wgsl_backward.step_vjp(model, Tensor(p0, device="WEBGPU"), None, Tensor(u, device="WEBGPU"))
  np.testing.assert_array_equal(gp.numpy(), vp.numpy())
  np.testing.assert_allclose(gm.numpy(), wgsl_backward.param_grads(model, vprm)["body_inv_mass"].numpy(), rtol=1e-6)
  assert np.abs(gp.numpy()).max() > 0 and np.abs(gm.numpy()).max() > 0


def test_grad_errors_name_what_is_missing():
  model = engine.load_scene(SCENES / "pendulum.json", device="WEBGPU")
  with pytest.raises(ValueError, match="'body_pos0'.*not a parameter the WGSL kernel differentiates"):
    KernelRolloutGrad(model, wrt=("body_pos0",))


def test_parity_store_replay(scene="double_pendulum"):
  """The backward kernel's two tape modes (kernels/tape.py tape_layout: keep every substep's iterations, or replay
  each substep) run the same arithmetic in the same order on the same inputs, so their gradients agree to float32
  rounding: measured equal to the bit on chain, double_pendulum, pendulum, cartpole, reacher, drop, bounce and incline
  (2026-11-25; bench/bench_grad.py records it per scene); 1e-6 relative allows a compiler's different contraction of
  the two programs. One scene here: each mode is a compile."""
  model = engine.load_scene(SCENES / f"{scene}.json", device="WEBGPU")
  p = Tensor(kicked(model, 2), device="WEBGPU")
  u = Tensor(np.random.default_rng(5).normal(size=p.shape).astype(np.float32), device="WEBGPU")
  store, replay = ([t.numpy() for t in wgsl_backward.step_vjp(model, p, None, u, store=mode)] for mode in (True, False))
  for a, b in zip(store, replay):
    assert rel(a, b) <= 1e-6


def test_parity_private_storage_tape(monkeypatch, scene="double_pendulum"):
  """The tape in the invocation's private memory (kernels/tape.py PRIVATE_TAPE: up to 8,192 floats, 2,048 under `make
  test`) and in a storage buffer row per env (longer tapes) hold the same records at the same offsets:
  the gradients agree as the two tape modes' do (1e-6 relative; measured equal to the bit on pendulum, chain, drop
  and stack10, 2026-11-26)."""
  import kernels.tape
  grads = []
  for limit in (kernels.tape.PRIVATE_TAPE, 0):
    monkeypatch.setattr(kernels.tape, "PRIVATE_TAPE", limit)
    model = engine.load_scene(SCENES / f"{scene}.json", device="WEBGPU")   # a new Model: its own program texts
    assert (kernels.tape.tape_layout(model, False, True)["TAPE_STRIDE"] == 0) == (limit > 0)
    p = Tensor(kicked(model, 2), device="WEBGPU")
    u = Tensor(np.random.default_rng(5).normal(size=p.shape).astype(np.float32), device="WEBGPU")
    grads.append([t.numpy() for t in wgsl_backward.step_vjp(model, p, None, u, store=True)])
  for a, b in zip(*grads):
    assert rel(a, b) <= 1e-6


def test_verify_private_tape_limit_on_a_gpu(monkeypatch):
  """On a GPU adapter the private tape is capped at kernels/tape.py PRIVATE_TAPE_GPU (measured on an H200): pendulum's
  720 floats stay private, double_pendulum's 1,440 (faster in storage there) and chain's 7,200 (a program NVIDIA's
  driver refused) go to storage; on lavapipe, which engine.wgsl.require_webgpu marks a CPU adapter, all stay
  private."""
  import kernels.tape
  from engine import wgsl
  wgsl.require_webgpu()
  assert not kernels.tape.GPU_ADAPTER   # the suite runs on lavapipe
  monkeypatch.setattr(kernels.tape, "PRIVATE_TAPE", 8192)
  for gpu in (False, True):
    monkeypatch.setattr(kernels.tape, "GPU_ADAPTER", gpu)
    tapes = {n: kernels.tape.tape_layout(engine.load_scene(SCENES / f"{n}.json"), False, True)
             for n in ("pendulum", "double_pendulum", "chain")}
    assert tapes["pendulum"]["TAPE"] == 720 and tapes["pendulum"]["TAPE_STRIDE"] == 0
    for n, floats in (("double_pendulum", 1440), ("chain", 7200)):
      assert tapes[n]["TAPE"] == floats and tapes[n]["TAPE_STRIDE"] == (floats if gpu else 0)


def test_grad_rollout_reuses_its_passes():
  """rollout_grad keeps one KernelRolloutGrad per model, batch and wrt (engine.grad.grader) and its jitted passes per
  horizon: a second call replays them, gives the gradient a fresh grader gives, and leaves the first call's results
  as they were (the captures' buffers are copied out before they are returned)."""
  model = engine.load_scene(SCENES / "double_pendulum.json", device="WEBGPU")
  loss_fn = lambda s: (s.body_pos[:, -1] * s.body_pos[:, -1]).sum()   # noqa: E731
  starts = [unpack_state(Tensor(kicked(model, 2) * k, device="WEBGPU"), Tensor.zeros(2, device="WEBGPU"))
            for k in (1.0, 1.1)]
  _, a1, p1 = rollout_grad(model, starts[0], 3, loss_fn, wrt=("body_inv_mass",))
  first = (pack_state(a1).numpy(), p1["body_inv_mass"].numpy())
  rg = grader(model, ("body_inv_mass",), 2)
  _, a2, p2 = rollout_grad(model, starts[1], 3, loss_fn, wrt=("body_inv_mass",))
  assert grader(model, ("body_inv_mass",), 2) is rg and len(rg._fwds) == len(rg._bwds) == 1
  np.testing.assert_array_equal(pack_state(a1).numpy(), first[0])
  np.testing.assert_array_equal(p1["body_inv_mass"].numpy(), first[1])
  fresh = KernelRolloutGrad(model, ("body_inv_mass",))
  final, cps = fresh.forward(starts[1], 3)
  packed = pack_state(final).contiguous().realize()
  (g,) = loss_fn(unpack_state(packed, final.time)).gradient(packed)
  adj, prm = fresh.backward(cps, g)
  np.testing.assert_array_equal(pack_state(a2).numpy(), adj.numpy())
  np.testing.assert_array_equal(p2["body_inv_mass"].numpy(), prm["body_inv_mass"].numpy())


@pytest.mark.parametrize("scene,lanes", [("muscle_hang", 1), ("drop", 1), ("muscle_hang", 2)])
def test_parity_trajectory(scene, lanes, monkeypatch):
  """engine.wgsl.trajectory, the reverse mode's checkpointed forward (every step in one launch, a control row per
  step, each step's state kept), against engine.wgsl.step one launch per step with the same controls: the same
  program but for where it stores, so equal bit for bit. muscle_hang: controls and activation rows; drop: contacts
  (its box, half a size 0.1 m, lands within the steps from the kicked start 0.12 m up at 2 m/s down). One program
  serves both horizons. Then the backward over the trajectory in one launch (engine.wgsl_backward.trajectory_vjp)
  against step_vjp a launch per step: the same state and control gradients bit for bit, and the parameters' summed
  over the steps (the launch adds them up in its own order: float32 rounding). lanes 2: the lanes' control sums per
  step."""
  monkeypatch.setattr(wgsl, "LANES", lanes)   # both kernels' invocations per env (2: the lanes' control sums)
  model = engine.load_scene(SCENES / f"{scene}.json", device="WEBGPU")
  p0 = pack_state(engine.Simulator(model, batch=3).reset(seed=1, noise=0.5), model).numpy()
  if scene == "drop": p0[:, 0, 2], p0[:, 0, 9] = 0.12, -2.0
  rng = np.random.default_rng(3)
  for steps in (4, 6):
    ctrls = rng.uniform(0, 1, size=(steps, 3, model.nact)).astype(np.float32) if model.nact else None
    ct = None if ctrls is None else Tensor(ctrls, device="WEBGPU")
    traj = wgsl.trajectory(model, Tensor(p0, device="WEBGPU"), ct, steps).numpy()
    np.testing.assert_array_equal(traj[0], p0)
    p = Tensor(p0, device="WEBGPU")
    for t in range(steps):
      p = wgsl.step(model, p, None if ctrls is None else Tensor(ctrls[t], device="WEBGPU")).realize()
      np.testing.assert_array_equal(traj[t + 1], p.numpy(), err_msg=f"step {t} of {steps}")
  if scene == "drop":   # the floor held every box above its free fall: they were in contact
    T = steps * model.dt
    assert (traj[-1, :, 0, 2] > p0[:, 0, 2] + p0[:, 0, 9] * T - 4.9 * T * T + 0.01).all()
  # the backward over the trajectory in one launch against step_vjp's chain, a launch per step
  steps = traj.shape[0] - 1
  u = Tensor(rng.normal(size=p0.shape).astype(np.float32), device="WEBGPU")
  tj = Tensor(traj, device="WEBGPU")
  adj, gc, gp = (t.numpy() for t in wgsl_backward.trajectory_vjp(model, tj, ct, u))
  a, gps = u, []
  for t in reversed(range(steps)):
    a, c, g = wgsl_backward.step_vjp(model, tj[t].contiguous(), None if ct is None else ct[t].contiguous(), a)
    a = a.realize()
    np.testing.assert_array_equal(gc[t], c.numpy(), err_msg=f"controls' gradient, step {t}")
    gps.append(g.numpy())
  np.testing.assert_array_equal(adj, a.numpy())
  # two float32 sums of the same `steps` terms in different orders: each within steps ulps of the terms' magnitudes
  bound = 2 * steps * np.finfo(np.float32).eps * np.sum(np.abs(gps), axis=0)
  assert (np.abs(gp - np.sum(gps, axis=0)) <= bound).all()
  assert np.abs(adj).max() > 0 and np.abs(gp).max() > 0
  if model.nact:
    with pytest.raises(ValueError, match="controls of shape"):
      wgsl.trajectory(model, Tensor(p0, device="WEBGPU"), Tensor.zeros(2, 3, 1, device="WEBGPU"), 3)
