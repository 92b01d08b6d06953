"""The vector env contract (engine/env.py): spaces, step outputs, auto-reset, episode statistics, seeding, NaN
isolation, action checks, domain randomisation, and the differentiable functional core."""
import numpy as np
import pytest
from tinygrad import Tensor, dtypes
import engine
from engine.buffers import copy_of
from engine.env import EnvCore, VecEnv
from engine.tasks import TASKS, task_names
from tests.golden import ENVS
from tests.helpers import env_for, reference

# the envs come from tests.helpers.env_for, shared with tests/test_gym.py in one worker
pytestmark = pytest.mark.xdist_group("envs")
N = 4


@pytest.fixture(scope="module")
def cartpole():
  env = env_for("cartpole")
  assert env.num_envs == N
  return env


def run(env, actions, seed):
  obs, _ = env.reset(seed=seed)
  rows = [obs.numpy()]
  for a in actions:
    obs, r, term, trunc, info = env.step(a)
    rows.append(np.concatenate([obs.numpy(), r.numpy()[:, None], term.numpy()[:, None], info["final_obs"].numpy()], 1))
  return rows


def test_env_spaces_and_outputs(cartpole):
  env = cartpole
  assert env.single_observation_space.shape == (4,) and env.single_action_space.shape == (1,)
  assert env.observation_space.shape == (N, 4) and env.action_space.shape == (N, 1)
  assert np.all(env.single_action_space.low == -1) and np.all(env.single_action_space.high == 1)
  obs, info = env.reset(seed=1)
  assert obs.shape == (N, 4) and obs.dtype == dtypes.float32 and info == {}
  assert np.all(np.abs(obs.numpy()) <= 0.05 + 1e-6)          # Gymnasium's U(-0.05, 0.05) start
  obs, r, term, trunc, info = env.step(np.zeros((N, 1), np.float32))
  assert obs.shape == (N, 4) and r.shape == (N,) and term.dtype == dtypes.bool and trunc.dtype == dtypes.bool
  assert set(info) == {"final_obs", "episode_return", "episode_length", "done", "nonfinite"}
  assert info["episode_length"].dtype == dtypes.int32
  np.testing.assert_array_equal(r.numpy(), 1.0)


def test_env_seeding_reproducible(cartpole):
  rng = np.random.default_rng(0)
  actions = [rng.uniform(-1, 1, (N, 1)).astype(np.float32) for _ in range(30)]
  a, b, c = run(cartpole, actions, 7), run(cartpole, actions, 7), run(cartpole, actions, 8)
  for x, y in zip(a, b): np.testing.assert_array_equal(x, y)
  assert not np.array_equal(a[0], c[0])
  assert len({tuple(row) for row in a[0]}) == N            # envs start from different states


def test_env_reset_continues_stream(cartpole):
  """reset() without a seed carries on each env's random stream: after the same seeded reset it gives the same new
  episodes (Gymnasium's reset(seed) determinism), different from the seeded ones."""
  env = cartpole
  a = [env.reset(seed=7)[0].numpy(), env.reset()[0].numpy(), env.reset()[0].numpy()]
  b = [env.reset(seed=7)[0].numpy(), env.reset()[0].numpy(), env.reset()[0].numpy()]
  for x, y in zip(a, b): np.testing.assert_array_equal(x, y)
  assert not np.array_equal(a[0], a[1]) and not np.array_equal(a[1], a[2])


def test_env_autoreset_and_statistics(cartpole):
  """A constant full push ends every episode (the pole falls back or the cart leaves the track); the step that ends
  it reports the true last obs and the episode's length and return, and the env starts over."""
  env = cartpole
  env.reset(seed=3)
  push = np.ones((N, 1), np.float32)
  ended = np.zeros(N, bool)
  for t in range(1, 200):
    obs, r, term, trunc, info = env.step(push)
    done, final = term.numpy(), info["final_obs"].numpy()
    for e in np.flatnonzero(done & ~ended):
      assert abs(final[e, 1]) > 0.2 or abs(final[e, 0]) > 2.4, final[e]
      assert np.all(np.abs(obs.numpy()[e]) <= 0.05 + 1e-6)   # the new episode's first obs
      assert info["episode_length"].numpy()[e] == t and info["episode_return"].numpy()[e] == t
      ended[e] = True
    assert np.all(info["episode_length"].numpy()[~done] == 0)
    if ended.all(): break
  assert ended.all() and not trunc.numpy().any()


def test_env_truncation():
  env = env_for("pendulum_swingup")
  env.reset(seed=0)
  for t in range(env.max_episode_steps):
    obs, r, term, trunc, info = env.step(np.zeros((env.num_envs, 1), np.float32))
    assert not term.numpy().any()
    assert trunc.numpy().all() == (t == env.max_episode_steps - 1)
  np.testing.assert_array_equal(info["episode_length"].numpy(), env.max_episode_steps)
  assert np.all(info["episode_return"].numpy() < 0)


def test_env_nan_isolated(cartpole):
  """A NaN injected into env 1's state: env 1 is terminated, flagged nonfinite and reset; the others are bit-identical
  to a run without the injection."""
  env = cartpole
  a = np.full((N, 1), 0.3, np.float32)
  ref = run(env, [a] * 3, 5)
  env.reset(seed=5)
  env.step(a)
  poisoned = env.state.packed.numpy()
  poisoned[1, 0, 0] = np.nan
  env._bufs[0].assign(Tensor(poisoned)).realize()
  obs, r, term, trunc, info = env.step(a)
  nonfinite = info["nonfinite"].numpy()
  assert nonfinite.tolist() == [False, True, False, False]
  assert term.numpy()[1] and r.numpy()[1] == 0.0 and np.isfinite(info["final_obs"].numpy()).all()
  assert np.isfinite(obs.numpy()).all() and np.all(np.abs(obs.numpy()[1]) <= 0.05 + 1e-6)
  keep = [0, 2, 3]
  np.testing.assert_array_equal(obs.numpy()[keep], ref[2][keep, :4])
  obs, *_ = env.step(a)
  np.testing.assert_array_equal(obs.numpy()[keep], ref[3][keep, :4])


def test_env_action_checks(cartpole):
  env = cartpole
  env.reset(seed=0)
  with pytest.raises(ValueError, match=r"action: expected shape \(4, 1\)"): env.step(np.zeros((N,), np.float32))
  with pytest.raises(ValueError, match="action: expected a float"): env.step(np.zeros((N, 1), np.int32))
  with pytest.raises(ValueError, match="task: expected one of"): engine.make_env("nope")
  with pytest.raises(ValueError, match="num_envs"): engine.make_env("cartpole", num_envs=0)
  with pytest.raises(ValueError, match="randomize.mass"): engine.make_env("cartpole", randomize={"mass": (0, 1)})


def test_env_step_outputs_are_copies(cartpole):
  """What step() returns is its own copy of the step JIT's output (engine/buffers.py copy_of), still the same after
  later steps overwrite that output, and a numpy action (copied into the env's input buffer, engine.buffers.upload)
  steps as the same action given as a Tensor."""
  env = cartpole
  rng = np.random.default_rng(3)
  acts = [rng.uniform(-1, 1, (N, 1)).astype(np.float32) for _ in range(3)]
  env.reset(seed=5)
  kept = [env.step(a) for a in acts]   # read after all three steps
  env.reset(seed=5)
  now = [[t.numpy() for t in env.step(a)[:2]] for a in acts]   # read at once
  assert not np.array_equal(now[0][0], now[2][0])
  for (obs, r, *_), (o, rr) in zip(kept, now):
    np.testing.assert_array_equal(obs.numpy(), o)
    np.testing.assert_array_equal(r.numpy(), rr)
  env.reset(seed=5)
  for a, (o, _) in zip(acts, now):
    np.testing.assert_array_equal(env.step(Tensor(a, device=env.core.device))[0].numpy(), o)
  # copy_of's own buffer (a whole buffer) and its fallback (a slice, cloned), both untouched by a write to the source
  t = Tensor([[0, 1, 2], [3, 4, 5]], dtype=dtypes.float32, device=env.core.device).contiguous().realize()
  whole, part = copy_of(t), copy_of(t[:, 1:])
  t.assign(t * 0).realize()
  assert whole.tolist() == [[0, 1, 2], [3, 4, 5]] and part.tolist() == [[1, 2], [4, 5]] and t.tolist()[1] == [0, 0, 0]


def test_env_render(cartpole):
  """render() draws the envs' states from the scene's camera: by default the first min(N, 4) in a grid, or one frame
  per env. final=True draws the states the last step ended in, before the auto-reset: the state info["final_obs"]
  observes (checked through the task's observe on it), which differs from the current state only where done."""
  env = cartpole
  assert env.metadata == {"render_modes": ["rgb_array"], "render_fps": 50} and env.render_mode == "rgb_array"
  env.reset(seed=3)
  for _ in range(60):
    obs, r, term, trunc, info = env.step(np.ones((N, 1), np.float32))
    done = info["done"].numpy()
    if done.any() and not done.all(): break
  assert done.any() and not done.all()
  core = env.core
  seen = core.task.observe(core.model, env._final, env.state.task).numpy()
  np.testing.assert_allclose(seen, info["final_obs"].numpy(), rtol=1e-6, atol=1e-6)
  assert not np.allclose(env._final.numpy()[done], env.state.packed.numpy()[done])
  np.testing.assert_array_equal(env._final.numpy()[~done], env.state.packed.numpy()[~done])
  now, final = env.render(tiled=False, envs=range(N)), env.render(tiled=False, envs=range(N), final=True)
  assert all(f.shape == (240, 320, 3) and f.dtype == np.uint8 for f in now + final)
  assert [not np.array_equal(a, b) for a, b in zip(now, final)] == done.tolist()
  assert env.render().shape == (480, 640, 3) and env.render(envs=[2]).shape == (240, 320, 3)
  with pytest.raises(ValueError, match=r"envs must be indices in \[0, 4\)"): env.render(envs=[4])


def test_env_close():
  """close() drops the env's buffers and compiled step: reset, step and render raise afterwards; closing twice is
  fine. (A fresh env that never steps: nothing compiles.)"""
  env = engine.make_env("pendulum_swingup", render_size=(64, 48))
  env.reset(seed=0)
  assert env.render().shape == (48, 64, 3)
  env.close()
  env.close()
  assert env.closed
  for call in (lambda: env.reset(seed=0), lambda: env.step(np.zeros((1, 1), np.float32)), env.render):
    with pytest.raises(RuntimeError, match="closed"): call()
  with pytest.raises(ValueError, match="render_size"): engine.make_env("cartpole", render_size=(4, 4))


def test_env_actions_clipped(cartpole):
  """Out-of-range actions saturate: 50 gives exactly what 1 gives."""
  one = run(cartpole, [np.ones((N, 1), np.float32)] * 3, 2)
  big = run(cartpole, [np.full((N, 1), 50.0, np.float32)] * 3, 2)
  for x, y in zip(one, big): np.testing.assert_array_equal(x, y)


def test_env_domain_randomisation():
  core = EnvCore("reacher", 3, randomize={"mass": (0.5, 2.0), "gear": (0.8, 1.2), "damping": (0.5, 1.5)})
  env = VecEnv(core, seed=0)
  env.reset()
  names = core.param_names
  inv_mass = env.state.params[names.index("body_inv_mass")].numpy()
  gear = env.state.params[names.index("act_gear")].numpy()
  base_m, base_g = core.model.body_inv_mass.numpy(), core.model.act_gear.numpy()
  assert inv_mass.shape == (3, 2) and gear.shape == (3, 2)
  assert np.all((inv_mass >= base_m / 2.0 - 1e-6) & (inv_mass <= base_m / 0.5 + 1e-6))
  assert np.all((gear >= base_g * 0.8 - 1e-7) & (gear <= base_g * 1.2 + 1e-7))
  assert len({tuple(r) for r in inv_mass}) == 3                    # every env its own draw
  for _ in range(env.max_episode_steps): env.step(np.zeros((3, 2), np.float32))   # all truncate and resample
  assert not np.allclose(env.state.params[names.index("body_inv_mass")].numpy(), inv_mass)


def test_env_reward_differentiable():
  """Rewards and observations are differentiable functions of the state and controls (reacher, float64, against
  central differences). Gradients through the physics come from engine.grad's checkpointed VJPs (the APG trainer,
  tests/test_train_apg.py): a lazy graph over a whole env-step is far too slow to differentiate in tinygrad 0.14."""
  core = EnvCore("reacher", 2, dtype=dtypes.float64)
  s0 = core.reset(3)
  packed0, ctrl0 = s0.packed.numpy(), np.array([[0.3, -0.2], [0.1, 0.5]])
  def total(p, c): return (core.task.reward(core.model, p, s0.task, c) + core.task.observe(core.model, p, s0.task)
                           .sum(-1)).sum()
  p, c = Tensor(packed0), Tensor(ctrl0)
  gp, gc = (g.numpy() for g in total(p, c).gradient(p, c))
  eps = 1e-6
  entries = [(0, 1, 0), (1, 1, 1), (0, 0, 4), (1, 1, 12)]   # lower link x, y; upper link quat; lower link angvel
  def compute():   # central differences: the golden file (tests/golden.py)
    fd = []
    for idx in entries:
      d = np.zeros_like(packed0); d[idx] = eps
      fd.append((total(Tensor(packed0 + d), c).item() - total(Tensor(packed0 - d), c).item()) / (2 * eps))
    return {"fd": np.array(fd)}
  inputs = dict(task="reacher", num_envs=2, seed=3, ctrl=ctrl0.tolist(), eps=eps, entries=entries)
  for idx, fd in zip(entries, reference("env_reward_differentiable", inputs, compute, ENVS)["fd"]):
    assert abs(gp[idx] - fd) <= 1e-5 * abs(fd) + 1e-8, (idx, gp[idx], fd)
  np.testing.assert_allclose(gc, -0.2 * ctrl0, rtol=1e-12)


# ant: tests/test_task_ant.py; ant_v5 (480 substeps an env-step): tests/test_task_ant_v5.py, on the WGSL kernel
@pytest.mark.parametrize("task", [t for t in task_names() if t not in ("ant", "ant_v5")])
def test_env_every_task_steps(task):
  env = env_for(task)
  obs, _ = env.reset(seed=0)
  assert obs.shape == (env.num_envs, TASKS[task].obs_size)
  rng = np.random.default_rng(0)
  for _ in range(3):
    obs, r, term, trunc, info = env.step(env.action_space.sample(rng))
  assert np.isfinite(obs.numpy()).all() and np.isfinite(r.numpy()).all() and not info["nonfinite"].numpy().any()
