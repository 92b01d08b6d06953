"""PPO (Schulman et al. 2017) for continuous actions, in pure tinygrad, against the vector-env contract of
docs/env.md.

Rollouts of `rollout_steps` x num_envs transitions; GAE(lambda) advantages with time-limit truncation bootstrapped
from V(info["final_obs"]); clipped surrogate + value loss + entropy bonus; several epochs of shuffled minibatches
with Adam. The minibatch update and the acting forward are TinyJit-compiled. Observations are normalised inside the
policy (running mean/var), advantages per rollout.

Non-finite values are contained and counted, never silently absorbed: a non-finite obs from the env is replaced by
the running obs mean before the policy sees it (counted per iteration); the log-std is kept in [LOG_STD_MIN,
LOG_STD_MAX] and the ratio is formed from a clipped log-ratio; a minibatch step with a non-finite loss or gradient is
skipped whole (counted). The counts are in the history and on the progress line, and evaluate() scores any episode
that blew up as -inf.

  python -m engine.train.ppo --task cartpole --num-envs 64 --steps 300000 --out out/ppo_cartpole
  python -m engine.train.ppo --task ref-cartpole --load out/ppo_cartpole/policy.safetensors
"""
import argparse
import math
import os
import time

import numpy as np
from tinygrad import Tensor, TinyJit
from tinygrad.helpers import Context

from engine.train.common import LOG_2PI, LOG_STD_MAX, LOG_STD_MIN, GuardedAdam, MLPPolicy, RunningMeanStd, Staging
from engine.train import common
from engine.train.common import load_policy, progress_line

DEFAULTS = dict(
  rollout_steps=64,       # T: steps per env per iteration (batch = T * num_envs)
  epochs=10,              # passes over each rollout
  minibatches=16,         # minibatches per epoch: many small Adam steps per rollout (4 got stuck drifting off track)
  lr=1e-3, anneal_lr=True,  # Adam step size, decayed linearly to 0 over total_steps
  gamma=0.99, gae_lambda=0.95,
  clip=0.2,               # PPO ratio clip epsilon
  vf_coef=0.5, ent_coef=0.0,
  hidden=(64, 64), init_log_std=0.0,
  target_length=None,     # stop once the mean episode length over the last target_window iterations reaches this
  target_window=3,
)
# |log pi - log pi_old| beyond this is clipped before exp: e^20 ~ 5e8 keeps the ratio and its products finite in
# float32, and such a sample is far outside the clip range, where the surrogate's gradient is wrong anyway
MAX_LOG_RATIO = 20.0


def _np(x) -> np.ndarray:
  return x.numpy() if isinstance(x, Tensor) else np.asarray(x)


def finite_obs(obs: np.ndarray, fill: np.ndarray) -> tuple[np.ndarray, int]:
  """obs (B, obs_dim) with non-finite entries replaced by fill (obs_dim,), and how many rows had one.

  The env flags blown-up physics states, but an observation can be NaN while the state is finite (tinygrad 0.14's
  atan gives NaN for |y/x| ~> 4e3, so a hinge angle near +-pi/2 reads NaN): one NaN obs would make a NaN action,
  value and advantage, and the advantage normalisation would spread it over the whole batch."""
  bad = ~np.isfinite(obs)
  if not bad.any(): return obs, 0
  return np.where(bad, fill.astype(obs.dtype), obs), int(bad.any(axis=1).sum())


def act(policy: MLPPolicy, obs: np.ndarray, noise: np.ndarray) -> np.ndarray:
  """One jitted policy forward. obs (B, obs_dim), noise (B, act_dim) standard normal (zeros: the mean action)
  -> (B, act_dim + 2): [action = mean + std * noise, log-prob of that action, value]."""
  # one TinyJit and input buffer per batch size (jitted shapes are fixed); obs and noise travel as one upload
  cache = policy.__dict__.setdefault("_act_jits", {})
  if (entry := cache.get(obs.shape[0])) is None:
    def forward(x: Tensor) -> Tensor:
      o, z = x[:, :policy.obs_dim], x[:, policy.obs_dim:]
      mean, value = policy(o)
      logp = (-0.5 * z * z - policy.log_std - 0.5 * LOG_2PI).sum(axis=1)  # log N(mean + std z; mean, std)
      return (mean + policy.log_std.exp() * z).cat(logp[:, None], value[:, None], dim=1).realize()
    entry = cache[obs.shape[0]] = (TinyJit(forward), Staging((obs.shape[0], policy.obs_dim + policy.act_dim)))
  fn, staging = entry
  return fn(staging.load(np.concatenate([obs, noise], axis=1))).numpy()


def _make_update(policy: MLPPolicy, opt: GuardedAdam, clip: float, vf_coef: float, ent_coef: float):
  """The jitted minibatch step: one (M, D + A + 3) Tensor with columns [obs, action, logp_old, adv, ret] -> stats (7,):
  [policy loss, value loss, entropy, approx KL, clip fraction, gradient norm, applied (1) or skipped (0)]. The step is
  skipped when the loss or the gradient is non-finite (then the losses it reports may be non-finite too)."""
  d, a = policy.obs_dim, policy.act_dim
  @TinyJit
  def update(mb: Tensor) -> Tensor:
    obs, action, logp_old, adv, ret = mb[:, :d], mb[:, d:d + a], mb[:, d + a], mb[:, d + a + 1], mb[:, d + a + 2]
    with Context(TRAINING=1):
      opt.zero_grad()
      mean, value = policy(obs)
      logp = policy.log_prob(mean, action)
      log_ratio = (logp - logp_old).clip(-MAX_LOG_RATIO, MAX_LOG_RATIO)
      ratio = log_ratio.exp()
      # clipped surrogate objective (PPO eq. 7), negated for descent
      policy_loss = -(ratio * adv).minimum(ratio.clip(1.0 - clip, 1.0 + clip) * adv).mean()
      value_loss = 0.5 * ((value - ret) ** 2).mean()
      entropy = policy.entropy()
      loss = policy_loss + vf_coef * value_loss - ent_coef * entropy
      loss.backward()
      grad_norm = opt.grad_norm()
      ok = loss.isfinite().reshape(1) & grad_norm.isfinite()
      # low-variance KL estimator k3 = (r - 1) - log r (Schulman 2020), for the log only
      approx_kl = ((ratio - 1.0) - log_ratio).mean()
      clip_frac = ((ratio - 1.0).abs() > clip).float().mean()
      stats = Tensor.stack(policy_loss, value_loss, entropy, approx_kl, clip_frac, grad_norm[0], ok[0].float())
      # one realize: the stats must read the parameters before the step's assigns overwrite them
      Tensor.realize(stats, *opt.schedule_step(ok))
    return stats
  return update


def _gae(rew, val, done, last_val, gamma: float, lam: float) -> tuple[np.ndarray, np.ndarray]:
  """GAE(lambda) (Schulman et al. 2016, eq. 16). rew/val/done (T, N), last_val (N,) -> (adv, returns) (T, N).
  rew already holds the truncation bootstrap gamma * V(final_obs), so a done step never looks at val[t + 1]
  (which, after the auto-reset, belongs to the next episode)."""
  adv, carry = np.zeros_like(rew), np.zeros_like(last_val)
  for t in reversed(range(rew.shape[0])):
    next_val, alive = (val[t + 1] if t + 1 < rew.shape[0] else last_val), 1.0 - done[t]
    delta = rew[t] + gamma * next_val * alive - val[t]
    carry = delta + gamma * lam * alive * carry
    adv[t] = carry
  return adv, adv + val


def train_ppo(env, total_steps: int, *, seed: int = 0, log=print, **hparams):
  """Trains a Gaussian MLP policy on a vector env for about total_steps env steps (all envs counted).

  hparams override DEFAULTS. Returns (policy, history): history holds one dict per iteration with env_steps,
  wall_s, episodes, mean_episode_length and mean_episode_return (over the episodes that ended in that iteration,
  None if none did; episodes that ended by a non-finite env state are left out of the means and counted in
  nonfinite_episodes), the mean losses and gradient norm of its last epoch's applied updates (NaN if all were
  skipped), skipped_updates (over all epochs) and nonfinite_obs (obs rows from the env, final_obs included, that held
  a non-finite value and were replaced by the running obs mean).
  """
  if unknown := set(hparams) - set(DEFAULTS): raise TypeError(f"unknown PPO hyperparameters {sorted(unknown)}")
  hp = {**DEFAULTS, **hparams}
  n, t_len = env.num_envs, hp["rollout_steps"]
  obs_dim, act_dim = env.single_observation_space.shape[0], env.single_action_space.shape[0]
  batch = n * t_len
  mb_size = batch // hp["minibatches"]
  if mb_size < 1: raise ValueError(f"batch {batch} is smaller than minibatches={hp['minibatches']}")
  iterations = max(1, total_steps // batch)

  rng = np.random.default_rng(seed)
  Tensor.manual_seed(seed)
  policy = MLPPolicy(obs_dim, act_dim, hp["hidden"], hp["init_log_std"], seed=seed)
  opt = GuardedAdam(policy.parameters(), lr=hp["lr"], eps=1e-5, clamp=((policy.log_std, LOG_STD_MIN, LOG_STD_MAX),))
  update = _make_update(policy, opt, hp["clip"], hp["vf_coef"], hp["ent_coef"])
  mb_staging = Staging((mb_size, obs_dim + act_dim + 3))
  obs_rms = RunningMeanStd(obs_dim)
  gamma = hp["gamma"]

  buf_obs = np.zeros((t_len, n, obs_dim), np.float32)
  buf_act = np.zeros((t_len, n, act_dim), np.float32)
  buf_logp, buf_val, buf_rew, buf_done = (np.zeros((t_len, n), np.float32) for _ in range(4))
  zeros = np.zeros((n, act_dim), np.float32)

  obs, bad_obs = finite_obs(_np(env.reset(seed=seed)[0]), obs_rms.mean)
  history, t0, env_steps = [], time.perf_counter(), 0
  for it in range(iterations):
    if hp["anneal_lr"]:
      opt.lr.assign(Tensor([hp["lr"] * (1.0 - it / iterations)], dtype=opt.lr.dtype)).realize()
    ep_len, ep_ret, bad_eps = [], [], 0
    # rollout with the current policy and current (frozen) observation statistics
    for t in range(t_len):
      out = act(policy, obs, rng.standard_normal((n, act_dim)).astype(np.float32))
      action = out[:, :act_dim]
      next_obs, rew, term, trunc, info = env.step(action)
      rew, term, trunc = _np(rew).astype(np.float32), _np(term).astype(bool), _np(trunc).astype(bool)
      # a time-limit cut is not a real end: its value is bootstrapped from the obs the episode ended in
      boot = trunc & ~term
      if boot.any():
        final = _np(info["final_obs"])
        bad_obs += int((boot & ~np.isfinite(final).all(axis=1)).sum())  # the other rows' final_obs is not used
        final_val = act(policy, finite_obs(final, obs_rms.mean)[0], zeros)[:, act_dim + 1]
        rew = rew + gamma * np.where(boot, final_val, 0.0)
      done = term | trunc
      buf_obs[t], buf_act[t], buf_logp[t], buf_val[t] = obs, action, out[:, act_dim], out[:, act_dim + 1]
      buf_rew[t], buf_done[t] = rew, done
      if done.any():
        # an episode cut short by a blow-up has a meaningless length and return: count it, keep it out of the means
        ok = done & ~_np(info["nonfinite"]).astype(bool)
        bad_eps += int(done.sum() - ok.sum())
        ep_len += _np(info["episode_length"])[ok].tolist()
        ep_ret += _np(info["episode_return"])[ok].tolist()
      obs, bad = finite_obs(_np(next_obs), obs_rms.mean)
      bad_obs += bad
    env_steps += batch
    adv, ret = _gae(buf_rew, buf_val, buf_done, act(policy, obs, zeros)[:, act_dim + 1], gamma, hp["gae_lambda"])
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)

    flat = np.concatenate([buf_obs.reshape(batch, obs_dim), buf_act.reshape(batch, act_dim),
                           np.stack([buf_logp, adv, ret], axis=-1).reshape(batch, 3)], axis=1).astype(np.float32)
    skipped = 0
    for _ in range(hp["epochs"]):
      perm, stats = rng.permutation(batch), []
      for k in range(hp["minibatches"]):
        stats.append(update(mb_staging.load(flat[perm[k * mb_size:(k + 1) * mb_size]])).numpy())
      skipped += sum(s[6] < 0.5 for s in stats)
    # the losses of skipped steps are non-finite by definition: average the applied ones (NaN if none was)
    applied = [s for s in stats if s[6] > 0.5]
    stats = np.mean(applied, axis=0) if applied else np.full(7, np.nan)
    # statistics change only between iterations, so rollout and update of one iteration see the same policy
    obs_rms.update(buf_obs)
    obs_rms.copy_to(policy)

    row = dict(iteration=it, env_steps=env_steps, wall_s=time.perf_counter() - t0, episodes=len(ep_len),
               mean_episode_length=float(np.mean(ep_len)) if ep_len else None,
               mean_episode_return=float(np.mean(ep_ret)) if ep_ret else None,
               policy_loss=float(stats[0]), value_loss=float(stats[1]), entropy=float(stats[2]),
               approx_kl=float(stats[3]), clip_frac=float(stats[4]), grad_norm=float(stats[5]),
               skipped_updates=int(skipped), nonfinite_obs=bad_obs, nonfinite_episodes=bad_eps)
    history.append(row)
    bad_obs = 0
    if log is not None: log(progress_line(it, row, PROGRESS))
    if hp["target_length"] is not None and recent_length(history, hp["target_window"]) >= hp["target_length"]: break
  return policy, history


def recent_length(history: list[dict], window: int) -> float:
  """Mean length of all episodes that ended in the last `window` iterations (0 if fewer iterations or none)."""
  rows = [r for r in history[-window:] if r["episodes"]]
  if len(history) < window or not rows: return 0.0
  return sum(r["mean_episode_length"] * r["episodes"] for r in rows) / sum(r["episodes"] for r in rows)


def evaluate_episodes(env, policy: MLPPolicy, episodes: int, seed: int | None = None) -> dict:
  """Runs the deterministic (mean) action. Each env contributes its first ceil(episodes / num_envs) episodes, so
  short episodes are not over-counted (taking the first `episodes` to finish would favour them).

  Returns {"length": (E,) int, "return": (E,) float, "nonfinite": (E,) bool, "nonfinite_obs": int}: an episode is
  nonfinite when the env flagged a blown-up state in it (info["nonfinite"]) or the policy gave a non-finite action in
  it; nonfinite_obs counts obs rows that came back non-finite from the env and were replaced by the policy's obs mean
  (as in training), which is the env's fault, not the policy's."""
  n = env.num_envs
  quota = math.ceil(episodes / n)
  act_dim = env.single_action_space.shape[0]
  zeros = np.zeros((n, act_dim), np.float32)
  fill = policy.obs_mean.numpy()
  counts, tainted, lengths, returns, broken = np.zeros(n, np.int64), np.zeros(n, bool), [], [], []
  obs, bad_obs = finite_obs(_np(env.reset(seed=seed)[0]), fill)
  # the time limit bounds every episode; the cap only guards against an env without one
  for _ in range(quota * getattr(env, "max_episode_steps", 100_000)):
    if counts.min() >= quota: break
    action = act(policy, obs, zeros)[:, :act_dim]
    # a NaN action need not blow the env up (a clip may swallow it), so it taints the episode here as well
    tainted |= ~np.isfinite(action).all(axis=1)
    obs, _, term, trunc, info = env.step(action)
    (obs, bad), done = finite_obs(_np(obs), fill), _np(term).astype(bool) | _np(trunc).astype(bool)
    bad_obs += bad
    tainted |= _np(info["nonfinite"]).astype(bool)
    take = done & (counts < quota)
    if take.any():
      lengths += _np(info["episode_length"])[take].tolist()
      returns += _np(info["episode_return"])[take].tolist()
      broken += tainted[take].tolist()
    counts += done
    tainted &= ~done
  return {"length": np.array(lengths), "return": np.array(returns), "nonfinite": np.array(broken, bool),
          "nonfinite_obs": bad_obs}


def evaluate(env, policy: MLPPolicy, episodes: int, seed: int | None = None) -> tuple[float, float]:
  """Mean (episode length, episode return) of the deterministic (mean) action over evaluate_episodes' episodes.

  If any of them was nonfinite (the env state blew up, or the policy gave a NaN action) the result is (NaN, -inf):
  a blown-up episode is cut short and scores a meaningless return (0 on reacher, the best possible), so it must fail
  every bar; -inf rather than NaN because it orders below any threshold whichever way the comparison is written, and
  the length has no worst value common to all tasks, so it is undefined. evaluate_episodes gives the details."""
  ev = evaluate_episodes(env, policy, episodes, seed)
  if ev["nonfinite"].any(): return math.nan, -math.inf
  return float(np.mean(ev["length"])), float(np.mean(ev["return"]))


def make_env(task: str, num_envs: int, seed: int, backend: str | None = None):
  """`ref-cartpole` is the numpy reference env (engine/train/refenv.py); any other task comes from engine.make_env."""
  if task == "ref-cartpole":
    from engine.train.refenv import RefCartPole
    return RefCartPole(num_envs=num_envs, seed=seed)
  import engine
  if not hasattr(engine, "make_env"): raise SystemExit("engine.make_env is not available; try --task ref-cartpole")
  return engine.make_env(task, num_envs=num_envs, seed=seed, **({"backend": backend} if backend else {}))


# the progress line's columns after steps and wall time: (label, history key, format)
PROGRESS = (("ep_len", "mean_episode_length", "6.1f"), ("return", "mean_episode_return", "7.1f"),
            ("pi", "policy_loss", "+.4f"), ("v", "value_loss", "8.3f"), ("ent", "entropy", "5.2f"),
            ("kl", "approx_kl", ".4f"))


def save_run(out: str, policy: MLPPolicy, history: list[dict], meta: dict,
             target: float | None = None) -> list[str]:
  """Writes <out>/policy.safetensors, <out>/curve.png (mean episode length; skipped with a warning without
  matplotlib) and <out>/history.json; returns the names written."""
  return common.save_run(out, policy, history, meta, ([r["env_steps"] for r in history],
                         [r["mean_episode_length"] for r in history]), title=f"PPO {meta.get('task', '')}",
                         ylabel="mean episode length", target=target)


def main(argv=None):
  p = argparse.ArgumentParser(prog="python -m engine.train.ppo", description=__doc__.split("\n\n")[0])
  p.add_argument("--task", default="cartpole", help="engine.make_env task, or ref-cartpole (numpy reference env)")
  p.add_argument("--num-envs", type=int, default=64)
  p.add_argument("--steps", type=int, default=300_000, help="env-step budget (all envs counted)")
  p.add_argument("--seed", type=int, default=0)
  p.add_argument("--backend", default=None, help="passed to engine.make_env when given")
  p.add_argument("--out", default=None, help="output folder (default out/ppo_<task>)")
  p.add_argument("--target-length", type=float, default=475.0, help="stop early at this mean episode length")
  p.add_argument("--target-window", type=int, default=DEFAULTS["target_window"])
  p.add_argument("--load", default=None, help="evaluate these saved weights instead of training")
  p.add_argument("--eval-episodes", type=int, default=64)
  for name in ("rollout_steps", "epochs", "minibatches", "lr", "gamma", "gae_lambda", "clip", "vf_coef", "ent_coef"):
    p.add_argument("--" + name.replace("_", "-"), type=type(DEFAULTS[name]), default=DEFAULTS[name])
  args = p.parse_args(argv)
  env = make_env(args.task, args.num_envs, args.seed, args.backend)

  if args.load:
    length, ret = evaluate(env, load_policy(args.load), args.eval_episodes, seed=args.seed)
    print(f"eval {args.load}: mean episode length {length:.1f}, return {ret:.1f} ({args.eval_episodes} episodes)"
          + ("  (episodes blew up: see evaluate_episodes)" if math.isinf(ret) else ""))
    return
  hp = {k: getattr(args, k) for k in ("rollout_steps", "epochs", "minibatches", "lr", "gamma", "gae_lambda", "clip",
                                      "vf_coef", "ent_coef")}
  policy, history = train_ppo(env, args.steps, seed=args.seed, target_length=args.target_length,
                              target_window=args.target_window, **hp)
  length, ret = evaluate(env, policy, args.eval_episodes, seed=args.seed + 1)
  print(f"eval (mean action): mean episode length {length:.1f}, return {ret:.1f} ({args.eval_episodes} episodes)"
        + ("  (episodes blew up: see evaluate_episodes)" if math.isinf(ret) else ""))
  out = args.out or os.path.join("out", f"ppo_{args.task}")
  meta = dict(task=args.task, num_envs=args.num_envs, seed=args.seed, hparams={**DEFAULTS, **hp},
              eval_mean_episode_length=length, eval_mean_episode_return=ret)
  written = save_run(out, policy, history, meta, target=args.target_length)
  print(f"saved {out}/" + ", ".join(written))


if __name__ == "__main__":
  main()
