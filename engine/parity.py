"""Backend parity: the WGSL kernel against the oracle from identical states (`python -m engine parity`, the tests).

Both backends start from the same kicked states (the scene's initial pose, every body's velocity and angular velocity
plus N(0, noise^2)) and the same random controls, and take the same number of steps. The oracle runs on the CPU
device in float32 (the reference) and in float64 (the truth that judges float32 noise).

Why velocities get a float64 judge: a substep's velocity is its accumulated correction divided by h (M20 Alg. 2 line
13), so a rounding difference of one ulp in a position (~1e-8 m near 1 m) reads as ~1e-8 / h ~ 1e-4 m/s at h ~ 1e-4 s.
Two float32 implementations that evaluate the same formulas in a different order (FMA contraction, sqrt, atan2)
differ by that much, and so does the oracle with itself across devices (measured: pendulum, oracle on CPU against
the oracle on WEBGPU, 1.2e-5 m/s and 7e-5 rad/s after one step; the kernel against the oracle on WEBGPU: 2.4e-7 and
5.8e-7). `excess` is therefore how much further the kernel is from float64 than the float32 oracle is.
"""
from __future__ import annotations
import numpy as np
from tinygrad import Tensor, dtypes
from engine.scene import build_model, load_scene_dict
from engine.simulator import Simulator
from engine.stepping import Stepper
from kernels.program import check_supported
from oracle.packed import ANGVEL, POS, QUAT, VEL, WIDTH, muscle_rows, nmuscle, pack_state, unpack_state

FIELDS = {"body_pos": POS, "body_quat": QUAT, "body_vel": VEL, "body_angvel": ANGVEL}


def kicked_states(model, batch: int, seed: int, noise: float) -> tuple[np.ndarray, np.ndarray | None]:
  """(packed (B, rows, 13) float64, ctrl (B, nact) float64 or None): the initial pose, kicked velocities, controls
  uniform over each actuator's ctrlrange widened by 20 % (so clipping is exercised), and activations uniform in
  [0, 1] in the muscle rows (oracle/packed.py) of a model with muscles."""
  rng = np.random.default_rng(seed)
  p = np.concatenate([model.body_pos0.numpy(), model.body_quat0.numpy(), model.body_vel0.numpy(),
                      model.body_angvel0.numpy()], axis=-1).astype(np.float64)
  p = np.broadcast_to(p, (batch, *p.shape)).copy()
  p[..., 7:13] += rng.normal(0.0, noise, size=p[..., 7:13].shape)
  if not model.nact: return p, None
  lo, hi = model.act_ctrlrange.numpy().astype(np.float64).T
  mid, half = (lo + hi) / 2, (hi - lo) / 2 * 1.2
  ctrl = rng.uniform(mid - half, mid + half, size=(batch, model.nact))
  if n := nmuscle(model):
    rows = np.zeros((batch, muscle_rows(model) * WIDTH))
    rows[:, :n] = rng.uniform(0.0, 1.0, size=(batch, n))
    p = np.concatenate([p, rows.reshape(batch, -1, WIDTH)], axis=1)
  return p, ctrl


def simulator(scene: dict, backend: str, batch: int, dtype=dtypes.float32, device: str | None = None) -> Simulator:
  """A fresh Simulator of the scene (the default of run's `simulator`; the tests pass a cached one)."""
  return Simulator(build_model(scene, dtype, device), batch, backend=backend)


def run(scene: dict, backend: str, cases: list[tuple[np.ndarray, np.ndarray | None, int]], dtype=dtypes.float32,
        device: str | None = None, simulator=simulator) -> list[np.ndarray]:
  """Per case (packed, ctrl, steps), the packed state after `steps` env-steps (float64 numpy). One Simulator serves
  every case, so the step is compiled once; simulator(scene, backend, batch, dtype, device) makes it."""
  np_dt = np.float32 if dtype == dtypes.float32 else np.float64
  sim = simulator(scene, backend, cases[0][0].shape[0], dtype, device)
  out = []
  for packed, ctrl, steps in cases:
    state = unpack_state(Tensor(packed.astype(np_dt), device=sim.device),
                         Tensor(np.zeros(packed.shape[0], np_dt), device=sim.device), sim.model)
    u = None if ctrl is None else Tensor(ctrl.astype(np_dt), device=sim.device)
    end = sim.rollout(state, steps, ctrl=u)
    out.append(pack_state(end, sim.model).numpy().astype(np.float64))
  return out


def float64_reference(scene: dict, runs: list, simulator=simulator) -> list[np.ndarray]:
  """The float64 oracle's states for run()'s cases: the truth that judges float32 noise."""
  return run(scene, "oracle", runs, dtype=dtypes.float64, simulator=simulator)


Result = dict[str, dict[str, float]]
JUDGE_BELOW = 1e-5   # differences (m, m/s, rad/s) that need no float64 judge
# envs per comparison. The float32 oracle's distance from float64 is the noise floor the kernel is judged against, a
# max over envs of a noisy sample: incline with 4 envs has 2 touching the ramp and the kernel read 5.8x the oracle's
# error; with 16 envs the ratio was 0.6-1.6 over seeds 0 and 1, with 64 envs 0.7-1.5
BATCH = 16


def compare_cases(src, cases: list[tuple[int, float]], batch: int = BATCH, seed: int = 0, judge: bool = True,
                  simulator=simulator, reference=float64_reference, states: list | None = None) -> list[Result]:
  """Per case (steps, noise), per state field: max |wgsl - oracle32| ("diff"), max |oracle32 - oracle64|
  ("oracle_err"), max |wgsl - oracle64| ("wgsl_err") and wgsl_err - oracle_err ("excess"), after `steps` env-steps
  from kicked_states(noise). Every backend and dtype compiles once for all cases. src: a scene path or dict.
  judge=False runs the float64 oracle only when some field differs by more than JUDGE_BELOW (the tests: it is the
  most expensive compile); otherwise oracle_err and wgsl_err read NaN. simulator: as in run(); reference(scene,
  runs): the float64 truth (the tests read it from a golden file). states: per case, the (packed, ctrl) to start
  from instead of the kicked states (its noise then unused)."""
  scene = load_scene_dict(src)
  model = build_model(scene)
  check_supported(model)   # before the oracle's compiles: a scene the kernel cannot run fails at once
  runs = [(*(states[i] if states else kicked_states(model, batch, seed, noise)), steps)
          for i, (steps, noise) in enumerate(cases)]
  ref = run(scene, "oracle", runs, simulator=simulator)
  got = run(scene, "wgsl", runs, device="WEBGPU", simulator=simulator)
  if judge or any(np.abs(g - r).max() > JUDGE_BELOW for g, r in zip(got, ref)):
    truth = reference(scene, runs)
  else:
    truth = [np.full_like(r, np.nan) for r in ref]
  out = []
  for g, r, t in zip(got, ref, truth):
    res = {}
    views = {name: (lambda a, sl=sl: a[:, :model.nbody, sl]) for name, sl in FIELDS.items()}
    if nmuscle(model): views["act"] = lambda a: a[:, model.nbody:].reshape(a.shape[0], -1)[:, :nmuscle(model)]
    for name, view in views.items():
      diff, oerr, werr = (float(np.abs(view(a) - view(b)).max()) for a, b in ((g, r), (r, t), (g, t)))
      res[name] = {"diff": diff, "oracle_err": oerr, "wgsl_err": werr, "excess": werr - oerr}
    out.append(res)
  return out


def compare(src, steps: int = 1, batch: int = BATCH, seed: int = 0, noise: float = 0.5, judge: bool = True,
            **kw) -> Result:
  """compare_cases for one case."""
  return compare_cases(src, [(steps, noise)], batch, seed, judge, **kw)[0]


def compare_contacts(src, batch: int = BATCH, seed: int = 0, noise: float = 0.5, settle: int = 0,
                     simulator=simulator) -> dict | None:
  """Contact-set parity (None for a scene without contacts). With one substep, a one-step launch leaves in its
  scratch rows the pair table its broadphase built and the contacts its narrowphase found at the poses `integrate`
  predicted (engine.wgsl.contact_set), in the oracle's canonical order (plane pairs, then each type-pair block in the
  broadphase's order), so both compare slot by slot from the same kicked float32 states. Returns the slot counts
  (live: slots of a candidate pair, valid: valid in the oracle), pairs_differ (env, pair) entries, flips (live slots
  whose valid flag differs) and the max |diff| over the oracle's valid slots of n, ra, rb, material (friction,
  restitution) and approach (speed along n). settle: env-steps of the float32 oracle from the kicked states first,
  for a scene whose bodies start in the air (the broadphase gives them no plane pair until they come near);
  simulator: as run's."""
  from kernels.program import contact_tables
  from oracle.contacts import APPROACH, FRICTION, NORMAL, RA, RB, RESTITUTION, VALID
  scene = {**load_scene_dict(src), "substeps": 1}
  model = build_model(scene)
  oracle = Stepper(model)
  if not oracle.contacts: return None
  p32 = kicked_states(model, batch, seed, noise)[0]
  if settle: p32 = run(scene, "oracle", [(p32, None, settle)], simulator=simulator)[0]
  p32 = p32.astype(np.float32)
  want_pairs, want = (t.numpy() for t in oracle.contact_set(Tensor(p32)))
  got_pairs, got = (t.numpy() for t in Stepper(build_model(scene, device="WEBGPU"), "wgsl").contact_set(
    Tensor(p32, device="WEBGPU")))
  consts, flat = contact_tables(model)
  slot_pair = np.array(flat[consts["T_SLOT_PAIR"]:consts["T_SLOT_PAIR"] + consts["NSLOT"]], dtype=np.int64)
  live = want_pairs[:, slot_pair, 0] >= 0   # (B, NSLOT): the slot belongs to a candidate pair
  valid = live & (want[..., VALID] > 0.5)
  def err(cols) -> float:
    return float(np.abs(got[..., cols] - want[..., cols])[valid].max()) if valid.any() else 0.0
  return {"live": int(live.sum()), "valid": int(valid.sum()),
          "pairs_differ": int((got_pairs != want_pairs).any(-1).sum()),
          "flips": int((live & ((got[..., VALID] > 0.5) != (want[..., VALID] > 0.5))).sum()),
          "n": err(NORMAL), "ra": err(RA), "rb": err(RB), "material": err([FRICTION, RESTITUTION]),
          "approach": err([APPROACH])}


def main(scenes: list[str], steps: tuple[int, ...] = (1, 100)) -> None:
  """Print the parity table of `python -m engine parity [SCENE...]`."""
  print(f"{'scene':24s} {'steps':>5s} {'field':12s} {'|wgsl-oracle|':>14s} {'oracle32 err':>13s} {'wgsl err':>10s}")
  for path in scenes:
    try:
      results = compare_cases(path, [(n, 0.5) for n in steps])
    except NotImplementedError as e:
      print(f"{str(path):24s} skipped: {e}")
      continue
    for n, res in zip(steps, results):
      for field, r in res.items():
        print(f"{str(path):24s} {n:5d} {field:12s} {r['diff']:14.3e} {r['oracle_err']:13.3e} {r['wgsl_err']:10.3e}")
    if (c := compare_contacts(path)) is not None:
      print(f"{str(path):24s} contacts after 1 step of 1 substep: {c['live']} live slots, {c['valid']} valid, "
            f"{c['pairs_differ']} pairs and {c['flips']} valid flags differ; max |diff| n {c['n']:.2e}, "
            f"ra {c['ra']:.2e}, rb {c['rb']:.2e}, friction/restitution {c['material']:.2e}, "
            f"approach {c['approach']:.2e}")
