"""PPO trainer (engine/train) on the numpy reference cart-pole (engine/train/refenv.py): the reference env keeps the
docs/env.md contract, a short training run measurably learns, weights round-trip exactly, the CLI writes its
outputs; non-finite values (NaN obs from the env, extreme log-ratios, NaN weights) are contained, counted and never
scored as success. One training run per module (the TinyJit compiles dominate the cost)."""
import json
import math

import numpy as np
import pytest
from PIL import Image
from tinygrad import Tensor, dtypes

from engine.train.common import LOG_STD_MIN, GuardedAdam, MLPPolicy, load_policy
from engine.train.ppo import _make_update, act, evaluate, evaluate_episodes, main, save_run, train_ppo
from engine.train.refenv import MAX_EPISODE_STEPS, RefCartPole

N_ENVS, ROLLOUT, ITERATIONS = 32, 64, 6


def _random_policy_length(seed: int, steps: int = 150) -> float:
  """Mean length of the episodes finished under uniform random actions in [-1, 1]."""
  env, rng, lengths = RefCartPole(N_ENVS, seed=seed), np.random.default_rng(seed), []
  env.reset(seed=seed)
  for _ in range(steps):
    *_, info = env.step(rng.uniform(-1, 1, (N_ENVS, 1)).astype(np.float32))
    done = info["done"].numpy()
    lengths += info["episode_length"].numpy()[done].tolist()
  return float(np.mean(lengths))


@pytest.fixture(scope="module")
def trained():
  lines = []
  policy, history = train_ppo(RefCartPole(N_ENVS, seed=0), ITERATIONS * N_ENVS * ROLLOUT, seed=0, log=lines.append,
                              rollout_steps=ROLLOUT, minibatches=8)
  return policy, history, lines


def test_train_refenv_contract():
  env = RefCartPole(4, seed=3)
  assert env.single_observation_space.shape == (4,) and env.single_action_space.shape == (1,)
  assert env.observation_space.shape == (4, 4) and env.action_space.shape == (4, 1)
  assert env.max_episode_steps == MAX_EPISODE_STEPS == 500
  obs, _ = env.reset(seed=3)
  assert obs.shape == (4, 4) and obs.dtype == dtypes.float32 and np.all(np.abs(obs.numpy()) <= 0.05)
  with pytest.raises(ValueError): env.step(np.zeros((4, 2), np.float32))
  with pytest.raises(ValueError): env.step(np.zeros((4, 1), np.int32))
  # truncation: shorten the limit; zero force keeps a near-upright pole alive for well over 10 steps
  env.max_episode_steps = 10
  for t in range(10):
    obs, rew, term, trunc, info = env.step(Tensor.zeros(4, 1))
  assert rew.dtype == dtypes.float32 and term.dtype == dtypes.bool and info["episode_length"].dtype == dtypes.int32
  assert not term.numpy().any() and trunc.numpy().all() and info["done"].numpy().all()
  assert np.all(info["episode_length"].numpy() == 10) and np.all(info["episode_return"].numpy() == 10.0)
  # auto-reset: the returned obs starts the new episode, the finished one's last obs is in final_obs
  assert np.all(np.abs(obs.numpy()) <= 0.05) and not np.allclose(info["final_obs"].numpy(), obs.numpy())
  # termination: a full push one way runs the pole past 0.2 rad; its final obs shows why it ended
  env.max_episode_steps = 500
  env.reset(seed=3)
  ended = np.zeros(4, bool)
  for _ in range(100):
    obs, rew, term, trunc, info = env.step(np.ones((4, 1), np.float32))
    term, final = term.numpy(), info["final_obs"].numpy()
    assert not trunc.numpy().any() and np.all(np.abs(final[term, 1]) > 0.2)
    assert np.all(info["episode_length"].numpy()[term] > 1) and np.all(info["episode_length"].numpy()[~term] == 0)
    ended |= term
  assert ended.all()


def test_train_ppo_learns(trained):
  _, history, lines = trained
  assert len(history) == len(lines) == ITERATIONS
  assert [r["env_steps"] for r in history] == [N_ENVS * ROLLOUT * (i + 1) for i in range(ITERATIONS)]
  assert all(np.isfinite([r["policy_loss"], r["value_loss"], r["entropy"], r["approx_kl"]]).all() for r in history)
  # measured baselines: the first iteration runs the freshly initialised (near zero-mean) policy, and uniform random
  # actions; PPO reached 144-158 after 6 iterations on seeds 0-2, against 22-25 in the first iteration
  random_length, first, last = _random_policy_length(0), history[0], history[-1]
  assert 15 < random_length < 40 and first["mean_episode_length"] < 40
  assert last["mean_episode_length"] > 3 * max(random_length, first["mean_episode_length"])


def test_train_ppo_save_load_roundtrip(trained, tmp_path):
  policy, history, _ = trained
  save_run(str(tmp_path), policy, history, {"task": "ref-cartpole"}, target=475)
  loaded = load_policy(str(tmp_path / "policy.safetensors"))
  assert loaded.hidden == policy.hidden
  a, b = policy.state_dict(), loaded.state_dict()
  assert a.keys() == b.keys() and {"log_std", "obs_mean", "obs_var"} <= a.keys()
  for k in a: assert np.array_equal(a[k].numpy(), b[k].numpy()), k
  obs = np.random.default_rng(0).standard_normal((N_ENVS, 4)).astype(np.float32)
  noise = np.random.default_rng(1).standard_normal((N_ENVS, 1)).astype(np.float32)
  assert np.array_equal(act(policy, obs, noise), act(loaded, obs, noise))
  # the curve and the history come with the weights
  with Image.open(tmp_path / "curve.png") as img: assert img.format == "PNG" and img.size == (720, 440)
  saved = json.loads((tmp_path / "history.json").read_text())
  assert saved["history"] == json.loads(json.dumps(history))


def test_train_ppo_cli(tmp_path, capsys):
  out = tmp_path / "run"
  # the fixture's shapes, so tinygrad reuses the kernels it already compiled
  main(["--task", "ref-cartpole", "--num-envs", str(N_ENVS), "--steps", str(2 * N_ENVS * ROLLOUT), "--rollout-steps",
        str(ROLLOUT), "--minibatches", "8", "--epochs", "2", "--eval-episodes", str(N_ENVS), "--out", str(out)])
  printed = capsys.readouterr().out
  assert printed.count("iter ") == 2 and "eval (mean action)" in printed
  assert {p.name for p in out.iterdir()} == {"policy.safetensors", "curve.png", "history.json"}
  assert len(json.loads((out / "history.json").read_text())["history"]) == 2
  main(["--task", "ref-cartpole", "--num-envs", str(N_ENVS), "--eval-episodes", str(N_ENVS),
        "--load", str(out / "policy.safetensors")])
  assert "mean episode length" in capsys.readouterr().out


def test_train_policy_init_is_seeded():
  a, b = MLPPolicy(4, 1, seed=7).state_dict(), MLPPolicy(4, 1, seed=7).state_dict()
  assert all(np.array_equal(a[k].numpy(), b[k].numpy()) for k in a)


class NaNObsCartPole(RefCartPole):
  """RefCartPole whose returned obs reads NaN in one entry of env 3 at a few steps while the state stays finite: what
  the reacher env did (a hinge angle near +-pi/2 read NaN through tinygrad's atan, so cos q and sin q were NaN)."""
  BAD_STEPS = (10, 75, 76)

  def step(self, action):
    self.calls = getattr(self, "calls", 0) + 1
    obs, rew, term, trunc, info = super().step(action)
    if self.calls in self.BAD_STEPS:
      o = obs.numpy().copy()
      o[3, 1] = np.nan
      obs = Tensor(o)
    return obs, rew, term, trunc, info


def test_train_ppo_nan_obs_is_contained():
  # before the fix the NaN obs made a NaN value, the advantage normalisation spread it over the batch and the first
  # minibatch step wrote NaN into every weight (the reacher run went NaN at iteration 50, the eval then scored 0.0)
  lines = []
  policy, history = train_ppo(NaNObsCartPole(N_ENVS, seed=0), 2 * N_ENVS * ROLLOUT, seed=0, log=lines.append,
                              rollout_steps=ROLLOUT, minibatches=8, epochs=2)
  assert [r["nonfinite_obs"] for r in history] == [1, 2]
  assert all(r["skipped_updates"] == 0 and r["nonfinite_episodes"] == 0 for r in history)
  assert all(np.isfinite([r["policy_loss"], r["value_loss"], r["approx_kl"], r["grad_norm"]]).all() for r in history)
  assert all(np.isfinite(t.numpy()).all() for t in policy.state_dict().values())
  assert "2 non-finite obs from the env" in lines[1]


def _minibatch(policy: MLPPolicy, rng: np.random.Generator, m: int = N_ENVS * ROLLOUT // 8) -> np.ndarray:
  """[obs, action, logp_old, adv, ret] (m, 4 + 1 + 3) with actions at the policy mean and positive advantages: the
  step raises log pi(a|s) there, so it pushes the log-std down. m: the fixture's minibatch, so kernels are shared."""
  obs = rng.standard_normal((m, 4)).astype(np.float32)
  mean = policy(Tensor(obs))[0].numpy()
  logp = policy.log_prob(Tensor(mean), Tensor(mean)).numpy()
  adv, ret = rng.uniform(0.5, 1.5, m), rng.standard_normal(m)
  return np.concatenate([obs, mean, np.stack([logp, adv, ret], axis=1)], axis=1).astype(np.float32)


def test_train_ppo_update_extreme_and_nonfinite_batches():
  policy = MLPPolicy(4, 1, init_log_std=LOG_STD_MIN + 1e-3, seed=0)
  opt = GuardedAdam(policy.parameters(), lr=1e-2, eps=1e-5, clamp=((policy.log_std, LOG_STD_MIN, 2.0),))
  update, rng = _make_update(policy, opt, clip=0.2, vf_coef=0.5, ent_coef=0.0), np.random.default_rng(0)
  weights = lambda: {k: v.numpy().copy() for k, v in policy.state_dict().items()}
  # log pi - log pi_old = 200: exp overflows float32 (unclipped, the loss was inf and every weight NaN after the step)
  mb = _minibatch(policy, rng)
  mb[:, 5] -= 200.0
  stats = update(Tensor(mb)).numpy()
  assert np.isfinite(stats).all() and stats[6] == 1.0
  assert all(np.isfinite(v).all() for v in weights().values())
  # an ordinary batch pushes the log-std down by ~lr; it is projected back onto its floor
  assert update(Tensor(_minibatch(policy, rng))).numpy()[6] == 1.0
  after = weights()
  assert after["log_std"][0] == LOG_STD_MIN
  # a NaN in the batch: the whole step is skipped (weights, moments and step count untouched) and reported
  for col in (0, 6):  # an obs, an advantage
    bad = _minibatch(policy, rng)
    bad[7, col] = np.nan
    stats = update(Tensor(bad)).numpy()
    assert stats[6] == 0.0 and not np.isfinite(stats[5])
    assert all(np.array_equal(after[k], v) for k, v in weights().items()) and opt.t.numpy()[0] == 2.0
  # and the next finite batch steps as usual
  assert update(Tensor(_minibatch(policy, rng))).numpy()[6] == 1.0 and opt.t.numpy()[0] == 3.0


def test_train_ppo_evaluate_fails_blown_up_policy():
  # NaN weights: NaN actions blow every episode up, cut at length 1; that must never read as a score
  policy = MLPPolicy(4, 1, seed=0)
  policy.actor[0].weight.assign(Tensor.full(policy.actor[0].weight.shape, math.nan)).realize()
  env = RefCartPole(N_ENVS, seed=0)
  ev = evaluate_episodes(env, policy, N_ENVS, seed=5)
  assert ev["nonfinite"].shape == (N_ENVS,) and ev["nonfinite"].all() and np.all(ev["length"] == 1)
  length, ret = evaluate(env, policy, N_ENVS, seed=5)
  assert math.isnan(length) and ret == -math.inf
  # a finite policy scores as before
  length, ret = evaluate(env, MLPPolicy(4, 1, seed=0), N_ENVS, seed=5)
  assert math.isfinite(length) and math.isfinite(ret) and length == ret  # cart-pole: reward 1 per step
