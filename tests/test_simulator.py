"""The Simulator front door: jitted and lazy paths agree, returned states are independent, bad input is named."""
import contextlib
import warnings
import numpy as np
import pytest
import engine
from tinygrad import dtypes
from engine.scene import load_scene_dict
from tests.helpers import SCENES


@pytest.fixture(scope="module")
def sim():
  d = load_scene_dict(SCENES / "pendulum.json")
  d["joints"] = []                      # a free body: a tiny graph, compiles in seconds
  d["bodies"][0]["angvel"] = [0.0, 2.0, 1.0]
  return engine.Simulator(engine.load_scene(d), batch=3)


def test_simulator_jit_matches_lazy_step(sim):
  s0 = sim.reset(seed=0, noise=0.1)
  jitted = sim.step(sim.step(s0))
  lazy_sim = engine.Simulator(sim.model, batch=3, differentiable=True)
  lazy = lazy_sim.step(lazy_sim.step(s0))
  for name in ("body_pos", "body_quat", "body_vel", "body_angvel", "time"):
    np.testing.assert_allclose(getattr(jitted, name).numpy(), getattr(lazy, name).numpy(), rtol=0, atol=1e-6,
                               err_msg=name)


def test_simulator_states_are_independent(sim):
  """TinyJit reuses its output buffers: every returned State must be a copy (regression: states aliased)."""
  s0 = sim.reset()
  s1 = sim.step(s0)
  z1 = s1.body_pos.numpy().copy()
  s2 = sim.step(s1)
  sim.rollout(s2, 5)
  np.testing.assert_array_equal(s1.body_pos.numpy(), z1)
  assert not np.array_equal(s2.body_pos.numpy(), z1)


def test_simulator_takes_its_own_state_back(sim):
  """A State the Simulator returned goes into the next call as the packed buffers it was unpacked from
  (engine/buffers.py packed_of), not packed again: the same result as a State rebuilt from its numbers; and a State
  whose fields changed since (replaced, realised, assigned) is packed from what it now holds."""
  from dataclasses import replace
  from tinygrad import Tensor
  from engine.buffers import packed_of
  s1 = sim.rollout(sim.reset(seed=2, noise=0.3), 2)
  fields = ("body_pos", "body_quat", "body_vel", "body_angvel", "time")
  rebuilt = type(s1)(**{f: Tensor(getattr(s1, f).numpy()) for f in fields})
  assert packed_of(s1, sim.model)[0] is packed_of(s1, sim.model)[0]          # remembered
  assert packed_of(rebuilt, sim.model)[0] is not packed_of(rebuilt, sim.model)[0]   # packed at each call
  assert packed_of(s1, replace(sim.model))[0] is not packed_of(s1, sim.model)[0]     # another Model: its own rows
  a, b = sim.rollout(s1, 3), sim.rollout(rebuilt, 3)
  for f in fields: np.testing.assert_array_equal(getattr(a, f).numpy(), getattr(b, f).numpy(), err_msg=f)
  kicked = s1.replace(body_vel=s1.body_vel + 1.0)
  assigned = sim.rollout(s1, 1)
  assigned.body_vel.assign(assigned.body_vel + 1.0).realize()
  for state in (kicked, s1.realize(), assigned):
    want = sim.rollout(type(s1)(**{f: Tensor(getattr(state, f).numpy()) for f in fields}), 1)
    got = sim.rollout(state, 1)
    for f in fields: np.testing.assert_array_equal(getattr(got, f).numpy(), getattr(want, f).numpy(), err_msg=f)


def test_simulator_trajectory_records_states(sim):
  """rollout returns the final State; trajectory records the states along the way (numpy), the initial one first,
  and ends in the same State as a rollout of the same steps."""
  final = sim.rollout(sim.reset(), 10)
  assert isinstance(final, engine.State)
  last, rec = sim.trajectory(sim.reset(), 10, every=4)                  # after steps 0, 4, 8, 10
  assert rec["pos"].shape == (4, 3, 1, 3) and rec["quat"].shape == (4, 3, 1, 4) and rec["overflow"].shape == (4, 3)
  np.testing.assert_allclose(rec["t"], np.array([0, 4, 8, 10]) * sim.model.dt, rtol=1e-6)
  np.testing.assert_array_equal(rec["pos"][0], sim.reset().body_pos.numpy())
  np.testing.assert_array_equal(rec["vel"][1], sim.rollout(sim.reset(), 4).body_vel.numpy())
  for name, key in (("body_pos", "pos"), ("body_quat", "quat"), ("body_vel", "vel"), ("body_angvel", "angvel")):
    np.testing.assert_array_equal(getattr(last, name).numpy(), rec[key][-1], err_msg=name)
    np.testing.assert_array_equal(getattr(final, name).numpy(), rec[key][-1], err_msg=name)


def test_simulator_bad_input_is_named(sim):
  with pytest.raises(ValueError, match="backend"): engine.Simulator(sim.model, backend="cuda")
  with pytest.raises(ValueError, match="device='WEBGPU'"): engine.Simulator(sim.model, backend="wgsl")  # a CPU model
  with pytest.raises(ValueError, match="batch"): engine.Simulator(sim.model, batch=0)
  wrong = engine.Simulator(sim.model, batch=2).reset()
  with pytest.raises(ValueError, match=r"state.body_pos: expected shape \(3, 1, 3\)"): sim.step(wrong)
  with pytest.raises(ValueError, match="ctrl"): sim.step(sim.reset(), ctrl=np.zeros((3, 1)))
  s = sim.reset()
  with pytest.raises(ValueError, match=r"state.body_angvel: expected shape \(3, 1, 3\)"):
    sim.step(s.replace(body_angvel=s.body_angvel[..., :2]))
  with pytest.raises(ValueError, match="state.body_vel: expected a tensor on CPU, got one on PYTHON"):
    sim.trajectory(s.replace(body_vel=s.body_vel.to("PYTHON")), 1)
  with pytest.raises(ValueError, match="state.time: expected dtypes.float"):
    sim.rollout(s.replace(time=s.time.cast(dtypes.int32)), 1)
  for kw, what in ((dict(noise=-0.1), "noise"), (dict(noise=float("nan")), "noise"), (dict(seed=1.5), "seed"),
                   (dict(seed=-1), "seed"), (dict(seed=True), "seed")):
    with pytest.raises(ValueError, match=f"{what}: expected"): sim.reset(**kw)


CLUSTER = {"name": "cluster", "substeps": 4, "contact": {"pair_capacity": 2, "hash_slots": 64},
           "bodies": [{"name": f"s{k}", "pos": [0.15 * (k % 2), 0.15 * (k // 2), 0.12], "geoms": [{"type": "sphere",
                       "size": [0.1]}]} for k in range(4)], "world": {"geoms": [{"type": "plane"}]}}


def test_simulator_restitution_without_its_stage_is_named():
  """A model given restitution after it was built (contact_restitution False: its substeps skip the restitution
  stage, oracle/restitution.py) is refused at the front door rather than stepped without it; with the flag set it is
  accepted."""
  model = engine.load_scene(CLUSTER)
  assert not model.contact_restitution
  bouncy = model.replace(geom_restitution=model.geom_restitution + 0.5)
  with pytest.raises(ValueError, match=r"cluster: geom_restitution is non-zero .*replace\(contact_restitution=True\)"):
    engine.Simulator(bouncy)
  assert engine.Simulator(bouncy.replace(contact_restitution=True)).model.contact_restitution


@pytest.mark.parametrize("backend", ["oracle", "wgsl"])
def test_simulator_control_sequence_steps_each(backend, monkeypatch):
  """rollout and trajectory take a control per env-step ((steps, batch, nact) or a list, as rollout_grad does): the
  same states and times, bit for bit, as stepping one env-step at a time with each, on either backend (the kernel's in
  one launch, or in launches of 2 steps where a launch may keep only 3 states, or a JIT replay per step under
  SEQUENCE_STEPS; its recordings, with a held control too, from launches that keep every step); a sequence of the
  wrong length or a step of the wrong shape is named."""
  from engine import stepping
  from engine.stepping import DEFAULT_DEVICE
  from engine.tasks import SCENES as TASK_SCENES
  model = engine.load_scene(TASK_SCENES / "cartpole.json", device=DEFAULT_DEVICE.get(backend))
  sim = engine.Simulator(model, backend=backend, batch=2)
  seq = np.random.default_rng(0).uniform(-1, 1, (4, 2, 1)).astype(np.float32)
  s0 = sim.reset(seed=0, noise=0.1)
  each = [s0]   # the states stepping one env-step at a time
  for c in seq: each.append(sim.step(each[-1], c))
  s = each[-1]
  launches = []   # on the kernel a sequence runs in launches of several steps (Stepper._launches)
  if backend == "wgsl":
    from engine import wgsl
    real = wgsl.trajectory_overflow
    monkeypatch.setattr(wgsl, "trajectory_overflow", lambda *a: launches.append(a[3]) or real(*a))
    monkeypatch.setattr(stepping, "SEQUENCE_STEPS", 3)   # from 3 steps on; 2 replay a JIT per step
  rolled = sim.rollout(s0, 4, ctrl=seq)
  short = sim.rollout(s0, 2, ctrl=seq[:2])
  if backend == "wgsl":   # and in launches of 2 where the kept states would pass SEQUENCE_BYTES
    monkeypatch.setattr(stepping, "SEQUENCE_BYTES", 3 * 4 * 2 * model.nbody * 13)
    chunked = sim.rollout(s0, 4, ctrl=seq)
    assert launches == [4, 2, 2], launches
  # frames after steps 3 and 4; on the kernel (no broadphase: nothing dropped to count per frame) recorded from the
  # launches that keep every step (Stepper.record), here of 2 steps
  recorded, rec = sim.trajectory(s0, 4, every=3, ctrl=list(seq))
  assert backend == "oracle" or launches == [4, 2, 2, 2, 2], launches
  held = sim.rollout(s0, 4, ctrl=seq[0])
  _, rec_held = sim.trajectory(s0, 4, ctrl=seq[0])   # a held control, every step
  _, rec_two = sim.trajectory(s0, 5, every=2, ctrl=seq[0])   # every other step, then the last
  for f in ("body_pos", "body_quat", "body_vel", "body_angvel", "time"):
    np.testing.assert_array_equal(getattr(rolled, f).numpy(), getattr(s, f).numpy(), err_msg=f)
    np.testing.assert_array_equal(getattr(recorded, f).numpy(), getattr(s, f).numpy(), err_msg=f)
    np.testing.assert_array_equal(getattr(short, f).numpy(), getattr(each[2], f).numpy(), err_msg=f)
    if backend == "wgsl": np.testing.assert_array_equal(getattr(chunked, f).numpy(), getattr(s, f).numpy(), err_msg=f)
  for key, f in (("pos", "body_pos"), ("quat", "body_quat"), ("vel", "body_vel"), ("angvel", "body_angvel")):
    np.testing.assert_array_equal(rec[key], np.stack([getattr(each[k], f).numpy() for k in (0, 3, 4)]), err_msg=key)
  np.testing.assert_array_equal(rec["t"], [each[k].time.numpy()[0] for k in (0, 3, 4)])
  np.testing.assert_array_equal(rec["overflow"], np.zeros((3, 2), np.int32))
  np.testing.assert_array_equal(rec_held["pos"][-1], held.body_pos.numpy())
  assert rec_held["pos"].shape[0] == 5
  for key in ("pos", "quat", "vel", "angvel", "t"):
    np.testing.assert_array_equal(rec_two[key][:3], rec_held[key][[0, 2, 4]], err_msg=key)
  assert rec_two["t"].shape == (4,) and rec_two["t"][3] > rec_two["t"][2]
  assert np.abs(held.body_pos.numpy() - s.body_pos.numpy()).max() > 1e-4, "the controls must move the cart"
  with pytest.raises(ValueError, match=r"ctrl: expected 4 per-step controls \(one per env-step\), got 3"):
    sim.rollout(s0, 4, ctrl=seq[:3])
  with pytest.raises(ValueError, match=r"ctrl\[1\]: expected shape \(2, 1\) \(batch, nact: \['push'\]\), got \(1, 1\)"):
    sim.trajectory(s0, 2, ctrl=[seq[0], seq[1, :1]])


def _captured(sim) -> list:
  """A Simulator's captured JITs (both tiers)."""
  return [j for jits in sim.stepper.jits().values() for j in jits if j.captured is not None]


# reacher (1.3 min of the clean-clone suite, 2026-11-25, compiling its own tiers) is slow: cluster covers both tiers
@pytest.mark.parametrize("scene", ["cluster", pytest.param("reacher", marks=pytest.mark.slow)])
def test_verify_tiers_bit_identical(scene):
  """One computation, three ways to replay it: Stepper.run's substep tier (one substep's JIT replayed), a run that
  switches to the step tier (whole steps' JIT, steps_per_call 2 and a remainder step) after its first step, and that
  run without the CPU graph (engine/cpu_graph.py: tinygrad's kernel-by-kernel replay, in the graph's float mode:
  subnormals flushed) give bit-identical states, times and dropped-pair counts, with inputs that change between calls
  (the state, ctrl) and buffers shared between JITs (the substep tier's contact plan); and no JIT replays a copy from
  the host (the step's constants, the broadphase's tables). cluster: the broadphase (4 overlapping spheres, room for 2
  pairs: it drops some every step) and ground contacts; reacher: controls, motors and joint damping."""
  from engine.cpu_graph import CPUGraph, flush_subnormals, graph_batches, graph_set_to, host_copies
  from engine.tasks import SCENES as TASK_SCENES
  model = engine.load_scene(CLUSTER if scene == "cluster" else TASK_SCENES / "reacher.json")
  ctrl = np.random.default_rng(0).uniform(-1, 1, (2, model.nact)).astype(np.float32) if model.nact else None
  got = {}
  for tier_up, graph in ((10**9, CPUGraph), (2, CPUGraph), (2, None)):   # substep tier; step tier from call 2 on
    with graph_set_to(graph), warnings.catch_warnings(), \
         flush_subnormals() if graph is None else contextlib.nullcontext():
      warnings.simplefilter("ignore", RuntimeWarning)   # the cluster's dropped pairs, counted below
      sim = engine.Simulator(model, batch=2, steps_per_call=2, tier_up=tier_up)
      s = sim.rollout(sim.rollout(sim.reset(seed=1, noise=0.3), 1, ctrl=ctrl), 3, ctrl=ctrl)
    jits = _captured(sim)
    assert (sum(len(graph_batches(j)) for j in jits) > 0) == (graph is not None), \
      "the JITs must (only) replay through the graph"
    assert sum(host_copies(j) for j in jits) == 0, "a JIT replays a copy of a constant from the host on every call"
    got[tier_up, graph] = [getattr(s, f).numpy() for f in ("body_pos", "body_quat", "body_vel", "body_angvel", "time",
                                                           "contact_overflow")]
  if scene == "cluster": assert (got[2, None][-1] > 0).all(), "the scene must drop pairs to check their count"
  for run in ((2, CPUGraph), (2, None)):
    for a, b in zip(got[10**9, CPUGraph], got[run]): np.testing.assert_array_equal(a, b)


def test_verify_cpu_graph_flushes_subnormals():
  """The CPU graph's driver runs its kernels with subnormals flushed (engine/cpu_graph.py: they cost ~100x on x86)
  and gives the caller its float mode back; tinygrad's kernel-by-kernel replay keeps them, unless run inside
  flush_subnormals(). 1e-20 squared is 1e-40, a float32 subnormal."""
  from tinygrad import Tensor
  from engine.cpu_graph import CPUGraph, flush_subnormals, graph_set_to
  from engine.stepping import jit
  got = {}
  for graph, mode in ((CPUGraph, contextlib.nullcontext), (None, contextlib.nullcontext), (None, flush_subnormals)):
    with graph_set_to(graph), mode():
      square = jit(lambda x: ((x * x).contiguous().realize(), (x + 1).contiguous().realize()))   # 2 kernels: a batch
      for _ in range(2): out = square(Tensor([1e-20], dtype=dtypes.float32, device="CPU").contiguous().realize())
    got[graph, mode] = float(out[0].numpy()[0])
  assert got[CPUGraph, contextlib.nullcontext] == 0.0 == got[None, flush_subnormals]
  assert 0.0 < got[None, contextlib.nullcontext] < np.finfo(np.float32).tiny
  assert np.float32(1e-20) * np.float32(1e-20) > 0.0, "the caller's float mode must come back"


def test_verify_step_constants_are_not_replayed_copies():
  """oracle/math3.py const realises a constant made from Python values outside any TinyJit capture, so a JIT that
  first builds it does not record its copy from the host and replay it on every call (26 such copies in each replay of
  reacher's substep once took a quarter of its replay time). The counter sees the copy of a constant made in place."""
  from tinygrad import Tensor
  from engine.cpu_graph import host_copies
  from engine.stepping import jit   # captures on its first call
  from oracle.math3 import const
  x = Tensor.ones(3).contiguous().realize()
  values = (1 / 3, 2 / 7, 3 / 11)   # a key no other test creates, so the capture below creates it
  cached = jit(lambda t: (t * const(values, t)).realize())
  in_place = jit(lambda t: (t * Tensor(list(values))).realize())
  for _ in range(3): out = [cached(x).numpy(), in_place(x).numpy()]
  assert (host_copies(cached), host_copies(in_place)) == (0, 1)
  for o in out: np.testing.assert_array_equal(o, np.float32(values))
