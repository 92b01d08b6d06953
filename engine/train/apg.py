"""Analytic policy gradients (APG): backpropagation through the simulator over short windows, in pure tinygrad.

Per iteration, B envs run a window of W env-steps with the deterministic policy (mean action, optionally plus a
fixed-scale noise); the loss is -mean over envs of the window's summed reward, differentiated w.r.t. the actor's
weights through observation, policy, action clip, every substep and the reward; then gradient-norm clipping and
Adam. Windows continue from the last state, detached (truncated backprop); all envs restart together every episode.

Why Jacobians: tinygrad's autograd of one XPBD substep is ~750 kernels (against 14 for the substep itself; measured
on reacher, CPU): a per-substep VJP replays them at ~0.1 s per call, ~8 s for a 10-step window at B = 32. A substep's
Jacobian depends only on its checkpointed input, not on the adjoint, so one jitted call differentiates every substep
of the window at once: rows (window, substep, env) each repeated D times with one-hot output seeds, giving the full
(D, D + nact) Jacobian per row (D = 13 nbody; 0.7 s for the same window). The chain rule across substeps, steps and
the policy is then a few batched (B, D) x (B, D, D) products in numpy. The reward gradient, the policy's Jacobian
w.r.t. the state and the weight gradient are jitted tinygrad VJPs over the window's rows too.

  python -m engine.train.apg --task reacher --num-envs 32 --iterations 300 --out out/apg_reacher
  python -m engine.train.apg --task reacher --load out/apg_reacher/policy.safetensors
"""
import argparse
import math
import os
import time

import numpy as np
from tinygrad import Tensor, dtypes
from tinygrad.helpers import Context
from tinygrad.nn.optim import Adam

from engine import rng
from engine.env import EnvCore
from engine.scene import load_scene
from engine.stepping import jit
from engine.tasks import scene_of
from engine.train import common
from engine.train.common import MLPPolicy, RunningMeanStd, Staging, load_policy, progress_line

DEFAULTS = dict(
  window=10,              # W: env-steps per backprop window (must divide the task's episode length)
  lr=1e-2,                # Adam step size
  anneal_lr=False,        # True: lr decays linearly to 0 (a fixed step keeps the return jumping by ~1)
  hidden=(64, 64),
  max_grad_norm=1.0,      # global gradient-norm clip
  noise_std=0.0,          # exploration noise added to the mean action (0: the deterministic policy)
  grad_dtype="float64",   # the gradient's arithmetic (the simulation stays float32), see APG
  grad_backend="oracle",  # the step's gradient: "oracle" (substep Jacobians) or "wgsl" (the backward kernel)
  eval_every=None,        # iterations between deterministic evaluations (default: once per training episode)
  target_return=None,     # stop at the first evaluation whose mean episode return reaches this
)
# the bar the project measures trainers against: mean return of the deterministic policy over one episode
BARS = {"reacher": -4.0}
EVAL_SEED_OFFSET = 7919   # the evaluation episodes' stream: fixed per seed, apart from the training stream


def _np_dtype(dtype): return np.float64 if dtype == dtypes.float64 else np.float32


def cast_policy(policy: MLPPolicy, dtype) -> MLPPolicy:
  """The policy's tensors in `dtype` (float64 for gradient checks), in place."""
  for lin in policy.actor + policy.critic:
    lin.weight, lin.bias = (t.cast(dtype).contiguous().realize() for t in (lin.weight, lin.bias))
  policy.log_std, policy.obs_mean, policy.obs_var = (t.cast(dtype).contiguous().realize()
                                                      for t in (policy.log_std, policy.obs_mean, policy.obs_var))
  return policy


class APG:
  """One task, a batch of envs and a policy; the jitted pieces of the forward window and its gradient.

  Shapes are fixed at construction (B envs, W steps), so each jitted function is captured once. The Jacobian call
  dominates the first iteration (~100 s to schedule and compile on a CPU); later iterations replay it.

  dtype: the simulation's (and the policy's weights'); grad_dtype: the Jacobians' and VJPs', on a copy of the model
  in that dtype, fed the upcast checkpoints. float64 by default: it was chosen when oracle.math3.atan2 still called
  tinygrad's atan on y / x, whose float32 value and backward were NaN for a hinge within ~1e-4 rad of +-90 degrees
  (40 % of reacher's 10-step windows were lost at B = 32). atan2 now keeps the ratio <= 1 and that NaN is gone; the
  learning curves in the issue-4 note were measured in float64 and float32 Jacobians have not been re-measured. In
  either dtype a window whose gradient is not finite is skipped."""

  def __init__(self, task: str, num_envs: int, *, window: int = DEFAULTS["window"], seed: int = 0,
               hidden=DEFAULTS["hidden"], lr: float = DEFAULTS["lr"], max_grad_norm: float = DEFAULTS["max_grad_norm"],
               noise_std: float = DEFAULTS["noise_std"], dtype=dtypes.float32, grad_dtype=dtypes.float64,
               policy: MLPPolicy | None = None, grad_backend: str = "oracle"):
    self.core = core = EnvCore(task, num_envs, dtype=dtype)
    self.model, self.task, self.B, self.W = core.model, core.task, num_envs, int(window)
    grad_dtype = getattr(dtypes, grad_dtype) if isinstance(grad_dtype, str) else grad_dtype
    self.gmodel = self.model if grad_dtype == dtype else load_scene(scene_of(task), dtype=grad_dtype)
    Tensor.realize(*self.gmodel.tensors().values())
    if core.stepper.contacts: raise NotImplementedError(f"{task}: APG here supports scenes without contacts")
    if self.model.nact == 0: raise ValueError(f"{task}: no actuators to control")
    if not (self.W >= 1 and self.task.max_episode_steps % self.W == 0):
      raise ValueError(f"window: must divide the episode length {self.task.max_episode_steps}, got {window!r}")
    if grad_backend not in ("oracle", "wgsl"):
      raise ValueError(f"grad_backend: expected 'oracle' or 'wgsl', got {grad_backend!r}")
    self.grad_backend, self._kernel, self.task_name = grad_backend, None, task
    m = self.model
    self.S, self.D, self.A, self.dtype, self.grad_dtype = m.substeps, m.nbody * 13, m.nact, dtype, grad_dtype
    self.noise_std, self.max_grad_norm = float(noise_std), float(max_grad_norm)
    self.policy = cast_policy(policy or MLPPolicy(self.task.obs_size, self.A, hidden, seed=seed), dtype)
    self.params = [t for lin in self.policy.actor for t in (lin.weight, lin.bias)]
    self.opt = Adam(self.params, lr=lr)
    self.obs_rms = RunningMeanStd(self.task.obs_size)
    # a task without data still carries a (B, 1) placeholder (engine/env.py)
    B, W, S, nb, A, k = self.B, self.W, self.S, m.nbody, self.A, max(self.task.task_size, 1)
    st, gt = (lambda *shape: Staging(shape, dtype=dtype)), (lambda *shape: Staging(shape, dtype=grad_dtype))
    # the Jacobians go in chunks of C steps: a fixed shape for windows of 5, 10, 25, 50 (one capture serves them
    # all) and a bounded working set (a row is ~300 B per intermediate; a 50-step window at B = 32 has 333k rows)
    self.C = C = math.gcd(W, 5)
    self._in = dict(packed=st(B, nb, 13), task=st(B, k), noise=st(B, A), ckpt=gt(C * S * B, nb, 13),
                    ctrl_c=gt(C * B, A), ctrl=gt(W * B, A), P=gt(W * B, nb, 13), Pn=gt(W * B, nb, 13),
                    taskw=gt(W * B, k), noisew=gt(W * B, A), G=gt(W * B, A))
    self._reset, self._step, self._jac = jit(self._reset_fn), jit(self._step_fn), jit(self._jac_fn)
    self._head, self._grads, self._apply = jit(self._head_fn), jit(self._grads_fn), jit(self._apply_fn)

  # --- the jitted pieces ---
  def _ctrl_of(self, packed: Tensor, task: Tensor, noise: Tensor) -> tuple[Tensor, Tensor]:
    """(clipped controls, obs): the policy's mean action on the observation, plus scaled noise, clipped. Computed in
    packed's dtype (the weights are cast, so gradients still reach them).

    A NaN observation reads 0 (oracle.math3.atan2 once gave NaN joint angles from finite states; the env now also
    flags non-finite observations): one NaN action would poison the state, the statistics and the weights. Its
    gradient stays NaN (0 * NaN through the guard), so such a window is skipped."""
    model, pol, dt = self.model if packed.dtype == self.dtype else self.gmodel, self.policy, packed.dtype
    obs = self.task.observe(model, packed, task)
    obs = obs.isnan().where(0.0, obs)
    x = ((obs - pol.obs_mean.cast(dt)) / (pol.obs_var.cast(dt) + 1e-8).sqrt()).clip(-10.0, 10.0)   # normalise()
    for i, lin in enumerate(pol.actor):
      x = x.linear(lin.weight.cast(dt).T, lin.bias.cast(dt))
      if i < len(pol.actor) - 1: x = x.tanh()
    return self.core.clip_action(x + self.noise_std * noise if self.noise_std else x), obs

  def _reset_fn(self, key: Tensor):
    st = self.core.reset(key)
    return st.packed.contiguous().realize(), st.task.contiguous().realize(), st.key.contiguous().realize()

  def _step_fn(self, packed: Tensor, task: Tensor, noise: Tensor):
    """One env-step: (next packed, the packed state before each substep (S, B, nbody, 13), ctrl, reward, obs)."""
    ctrl, obs = self._ctrl_of(packed, task, noise)
    ctrl = ctrl.contiguous().realize()
    ckpts, p = [], packed
    for _ in range(self.S):
      ckpts.append(p)
      p = self.core.stepper.substep(p, ctrl).realize()   # one small graph per substep
    reward = self.task.reward(self.model, p, task, ctrl)
    return p, Tensor.stack(*ckpts).realize(), ctrl, reward.contiguous().realize(), obs.contiguous().realize()

  def _jac_fn(self, ckpt: Tensor, ctrl: Tensor) -> Tensor:
    """Every substep's Jacobian: ckpt (C S B, nbody, 13) in (step, substep, env) order, ctrl (C B, nact) ->
    (C S B, D, D + nact), row i = d out_i / d [packed | ctrl]. Each row is repeated D times and seeded with one
    output direction; envs never interact, so one VJP of the repeated batch gives every row of every Jacobian."""
    n, nb, D, A = ckpt.shape[0], self.model.nbody, self.D, self.A
    p = ckpt.reshape(n, 1, nb, 13).expand(n, D, nb, 13).reshape(n * D, nb, 13).contiguous()
    c = ctrl.reshape(self.C, 1, self.B, A).expand(self.C, self.S, self.B, A).reshape(n, 1, A)
    c = c.expand(n, D, A).reshape(n * D, A).contiguous()
    out = self.core.stepper.substep(p, c, model=self.gmodel)
    seed = Tensor.eye(D, dtype=ckpt.dtype).to(ckpt.device).reshape(1, D, nb, 13).expand(n, D, nb, 13)
    gp, gc = out.gradient(p, c, gradient=seed.reshape(n * D, nb, 13))
    return gp.reshape(n, D, D).cat(gc.reshape(n, D, A), dim=2).realize()

  def _head_fn(self, P: Tensor, Pn: Tensor, task: Tensor, ctrl: Tensor, noise: Tensor):
    """Per row (step, env): d reward / d next packed (W B, D), d reward / d ctrl (W B, nact), and the Jacobian of the
    clipped controls w.r.t. the packed state they were computed from (W B, nact, D) (A seeded copies per row)."""
    M, D, A = P.shape[0], self.D, self.A
    Pn_, ctrl_ = Pn.contiguous(), ctrl.contiguous()
    r = self.task.reward(self.gmodel, Pn_, task, ctrl_)
    g_pn, g_c = r.gradient(Pn_, ctrl_, gradient=r.ones_like())   # rows are independent: per-row gradients
    rep = lambda t: t.reshape(M, 1, *t.shape[1:]).expand(M, A, *t.shape[1:]).reshape(M * A, *t.shape[1:])
    p = rep(P).contiguous()
    c, _ = self._ctrl_of(p, rep(task), rep(noise))
    seed = Tensor.eye(A, dtype=P.dtype).to(P.device).reshape(1, A, A).expand(M, A, A).reshape(M * A, A)
    (g_p,) = c.gradient(p, gradient=seed)
    return g_pn.reshape(M, D).realize(), g_c.realize(), g_p.reshape(M, A, D).realize()

  def _grads_fn(self, P: Tensor, task: Tensor, noise: Tensor, G: Tensor):
    """d loss / d actor weights given G = d loss / d ctrl per row (W B, nact), and their global norm."""
    c, _ = self._ctrl_of(P, task, noise)
    grads = c.gradient(*self.params, gradient=G)
    norm = sum(g.square().sum() for g in grads).sqrt()
    return (*(g.contiguous() for g in grads), norm.reshape(1).contiguous())

  def _apply_fn(self, *grads):
    norm = sum(g.square().sum() for g in grads).sqrt().reshape(1)
    scale = (self.max_grad_norm / (norm + 1e-6)).minimum(1.0)
    for p, g in zip(self.params, grads): p.grad = g * scale
    with Context(TRAINING=1): Tensor.realize(*self.opt.schedule_step())
    return norm * scale

  # --- the window ---
  def reset(self, key: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fresh episodes for every env: (packed, task data, next key) from a (B,) uint32 key."""
    packed, task, key = self._reset(Tensor(key.astype(np.uint32)))
    return packed.numpy(), task.numpy(), key.numpy()

  def keys(self, seed: int) -> np.ndarray:
    return rng.env_keys(seed, self.B, self.core.device).numpy()

  def step(self, packed: np.ndarray, task: np.ndarray, noise: np.ndarray | None = None) -> dict:
    """One env-step of the policy in every env (numpy in, numpy out)."""
    noise = np.zeros((self.B, self.A)) if noise is None else noise
    out = self._step(self._in["packed"].load(packed), self._in["task"].load(task), self._in["noise"].load(noise))
    return dict(zip(("packed", "ckpt", "ctrl", "reward", "obs"), (t.numpy() for t in out)))

  def rollout(self, packed: np.ndarray, task: np.ndarray, noise: np.ndarray | None = None) -> dict:
    """The forward window: W steps from packed. noise: (W, B, nact) or None. Returns the checkpoints the gradient
    needs (numpy, step first) and the rewards (W, B)."""
    noise = np.zeros((self.W, self.B, self.A)) if noise is None else noise
    P, steps = [packed], []
    for t in range(self.W):
      steps.append(self.step(P[-1], task, noise[t]))
      P.append(steps[-1]["packed"])
    cat = lambda k: np.stack([s[k] for s in steps])
    return dict(P=np.stack(P), ckpt=cat("ckpt"), ctrl=cat("ctrl"), reward=cat("reward"), obs=cat("obs"), task=task,
                noise=noise)

  def _kernel_vjp(self):
    """d <adj, step(packed, ctrl)> / d (packed, ctrl) through the WGSL backward kernel (engine.wgsl.step_vjp), on a
    float32 copy of the model on WEBGPU, built on first use; numpy in and out."""
    if self._kernel is None:
      from engine import wgsl
      from kernels.program import check_backward
      wgsl.require_webgpu()
      model = load_scene(scene_of(self.task_name), device="WEBGPU")
      check_backward(model)
      wgsl.prepare(model)
      wgsl.prepare_backward()
      f32 = lambda a: Tensor(np.ascontiguousarray(a, np.float32), device="WEBGPU")
      def vjp(packed, ctrl, adj):
        gp, gc, _ = wgsl.step_vjp(model, f32(packed), f32(ctrl), f32(adj.reshape(packed.shape)))
        return gp.numpy().reshape(len(packed), -1).astype(np.float64), gc.numpy()[:, :self.A].astype(np.float64)
      self._kernel = vjp
    return self._kernel

  def gradient(self, win: dict, backend: str | None = None) -> tuple[float, list[Tensor], float]:
    """(loss, d loss / d actor weights (jit output buffers: valid until the next call), their norm) for the window
    loss = -mean_envs sum_t r_t. backend: the simulation's gradient, "oracle" (every substep's Jacobian, the default
    grad_backend) or "wgsl" (one backward-kernel VJP per step, float32: kernels/adjoint/)."""
    W, B, S, D, A = self.W, self.B, self.S, self.D, self.A
    C = self.C
    kernel = (backend or self.grad_backend) == "wgsl"
    if kernel: vjp = self._kernel_vjp()
    else:
      J = np.concatenate([self._jac(self._in["ckpt"].load(win["ckpt"][t:t + C]), self._in["ctrl_c"].load(
        win["ctrl"][t:t + C])).numpy() for t in range(0, W, C)]).astype(np.float64).reshape(W, S, B, D, D + A)
    taskw = np.broadcast_to(win["task"], (W, *win["task"].shape))
    args = [self._in["P"].load(win["P"][:-1]), self._in["Pn"].load(win["P"][1:]), self._in["taskw"].load(taskw),
            self._in["ctrl"].load(win["ctrl"]), self._in["noisew"].load(win["noise"])]
    g_pn, g_c, g_pol = (t.numpy().astype(np.float64) for t in self._head(*args))
    g_pn, g_c, g_pol = g_pn.reshape(W, B, D), g_c.reshape(W, B, A), g_pol.reshape(W, B, A, D)
    # reverse sweep: adj = d loss / d packed (zero after the window: truncated backprop), G = d loss / d ctrl
    adj, G = np.zeros((B, D)), np.zeros((W, B, A))
    for t in reversed(range(W)):
      adj = adj - g_pn[t] / B
      g = -g_c[t] / B
      if kernel:   # the whole step's [d / d packed | d / d ctrl] at once
        adj, gk = vjp(win["P"][t], win["ctrl"][t], adj)
        g = g + gk
      for s in reversed(range(0 if kernel else S)):
        full = (adj[:, None, :] @ J[t, s])[:, 0]   # [d / d packed | d / d ctrl] of this substep's input
        adj, g = full[:, :D], g + full[:, D:]
      G[t] = g
      adj = adj + (g[:, None, :] @ g_pol[t])[:, 0]   # ctrl_t = policy(obs(packed_t))
    *grads, norm = self._grads(args[0], args[2], args[4], self._in["G"].load(G))
    return float(-win["reward"].sum() / B), grads, float(norm.numpy()[0])

  def update(self, grads: list[Tensor]) -> float:
    """Clip to max_grad_norm and take an Adam step; returns the applied gradient norm."""
    return float(self._apply(*grads).numpy()[0])

  def observe_stats(self, obs: np.ndarray):
    """Fold observations into the running statistics the policy normalises with (assigned in place: the JITs that
    captured the buffers see them)."""
    self.obs_rms.update(obs[np.isfinite(obs).all(axis=1)])
    dt = _np_dtype(self.dtype)
    self.policy.obs_mean.assign(Tensor(self.obs_rms.mean.astype(dt))).realize()
    self.policy.obs_var.assign(Tensor(self.obs_rms.var.astype(dt))).realize()

  def evaluate(self, seed: int) -> dict:
    """The deterministic policy over one full episode in every env, from the seed's fixed initial states: mean
    episode return and mean reward of the last step (reacher: about minus the final tip distance)."""
    packed, task, _ = self.reset(self.keys(seed))
    total = np.zeros(self.B)
    for _ in range(self.task.max_episode_steps):
      out = self.step(packed, task)
      packed, total = out["packed"], total + out["reward"]
    return dict(eval_return=float(total.mean()), eval_final_reward=float(out["reward"].mean()))


def train_apg(task: str, num_envs: int, iterations: int, *, window: int = DEFAULTS["window"],
              lr: float = DEFAULTS["lr"], seed: int = 0, log=print, dtype=dtypes.float32, agent: APG | None = None,
              **hparams):
  """Trains the actor of an MLPPolicy by analytic policy gradients for `iterations` windows.

  hparams override DEFAULTS (hidden, max_grad_norm, noise_std, grad_dtype, grad_backend, anneal_lr, eval_every,
  target_return).
  Returns (policy, history): one dict per iteration with env_steps (B x steps simulated in training, evaluations not
  counted), wall_s (evaluations included; eval_s is their share), loss (the window's), grad_norm (before clipping),
  episodes and train_episode_return (training episodes that ended in this iteration), and, on evaluation iterations,
  mean_episode_return (deterministic policy, fixed evaluation episodes) and eval_final_reward (None elsewhere).

  agent: an APG to train instead of a new one (its compiled JITs are reused; its policy is trained in place). It must
  have been built with the same task, num_envs, window, dtype and hyperparameters, else ValueError; lr is set, and
  seed still draws the noise and the episodes (the policy's initial weights are the agent's)."""
  if unknown := set(hparams) - set(DEFAULTS): raise TypeError(f"unknown APG hyperparameters {sorted(unknown)}")
  hp = {**DEFAULTS, **hparams, "window": window, "lr": lr}
  if agent is None:
    apg = APG(task, num_envs, window=window, seed=seed, hidden=hp["hidden"], lr=lr, max_grad_norm=hp["max_grad_norm"],
              noise_std=hp["noise_std"], dtype=dtype, grad_dtype=hp["grad_dtype"], grad_backend=hp["grad_backend"])
  else:
    apg = agent
    grad_dtype = getattr(dtypes, hp["grad_dtype"]) if isinstance(hp["grad_dtype"], str) else hp["grad_dtype"]
    want = dict(task=task, num_envs=num_envs, window=window, dtype=dtype, grad_dtype=grad_dtype,
                max_grad_norm=float(hp["max_grad_norm"]), noise_std=float(hp["noise_std"]), hidden=tuple(hp["hidden"]),
                grad_backend=hp["grad_backend"])
    have = dict(task=apg.task_name, num_envs=apg.B, window=apg.W, dtype=apg.dtype, grad_dtype=apg.grad_dtype,
                max_grad_norm=apg.max_grad_norm, noise_std=apg.noise_std, hidden=apg.policy.hidden,
                grad_backend=apg.grad_backend)
    if bad := [k for k in want if want[k] != have[k]]:
      raise ValueError(f"agent: built with {', '.join(f'{k}={have[k]!r}' for k in bad)}; this run asks for "
                       f"{', '.join(f'{k}={want[k]!r}' for k in bad)}")
    apg.opt.lr.assign(Tensor([lr], dtype=apg.opt.lr.dtype)).realize()
  episode_len = apg.task.max_episode_steps
  eval_every = hp["eval_every"] or episode_len // window
  noise_rng = np.random.default_rng(seed)
  key = apg.keys(seed)
  packed, task_data, key = apg.reset(key)
  ep_t, ep_ret, history, t0, eval_s, env_steps = 0, np.zeros(num_envs), [], time.perf_counter(), 0.0, 0
  for it in range(iterations):
    if hp["anneal_lr"]: apg.opt.lr.assign(Tensor([lr * (1.0 - it / iterations)], dtype=apg.opt.lr.dtype)).realize()
    noise = noise_rng.standard_normal((window, num_envs, apg.A)) if hp["noise_std"] else None
    win = apg.rollout(packed, task_data, noise)
    env_steps += window * num_envs
    loss, grads, norm = apg.gradient(win)
    if math.isfinite(norm): apg.update(grads)   # a blown-up window is skipped, not applied
    apg.observe_stats(win["obs"].reshape(-1, apg.task.obs_size))
    packed, ep_t, ep_ret = win["P"][-1], ep_t + window, ep_ret + win["reward"].sum(0)
    if not np.isfinite(packed).all():   # a blown-up state: every env starts over (its episode is not counted)
      packed, task_data, key = apg.reset(key)
      ep_t, ep_ret = 0, np.zeros(num_envs)
    sp = apg.core.single_action_space
    clipped = float(((win["ctrl"] <= sp.low) | (win["ctrl"] >= sp.high)).mean())   # no gradient through these
    row = dict(iteration=it, env_steps=env_steps, loss=loss, grad_norm=norm, clip_frac=clipped, episodes=0,
               train_episode_return=None, mean_episode_return=None, eval_final_reward=None)
    if ep_t == episode_len:   # every env ends its episode together: restart all with new targets
      row.update(episodes=num_envs, train_episode_return=float(ep_ret.mean()))
      packed, task_data, key = apg.reset(key)
      ep_t, ep_ret = 0, np.zeros(num_envs)
    if (it + 1) % eval_every == 0 or it == iterations - 1:
      te = time.perf_counter()
      ev = apg.evaluate(seed + EVAL_SEED_OFFSET)
      eval_s += time.perf_counter() - te
      row.update(mean_episode_return=ev["eval_return"], eval_final_reward=ev["eval_final_reward"])
    row.update(wall_s=time.perf_counter() - t0, eval_s=eval_s)
    history.append(row)
    if log is not None: log(progress_line(it, row, PROGRESS))
    target = hp["target_return"]
    if target is not None and row["mean_episode_return"] is not None and row["mean_episode_return"] >= target: break
  return apg.policy, history


# the progress line's columns after steps and wall time: (label, history key, format)
PROGRESS = (("loss", "loss", "+8.4f"), ("|g|", "grad_norm", "9.3f"), ("clip", "clip_frac", "4.2f"),
            ("train_return", "train_episode_return", "7.2f"), ("eval_return", "mean_episode_return", "7.2f"))


def save_run(out: str, policy: MLPPolicy, history: list[dict], meta: dict,
             target: float | None = None) -> list[str]:
  """Writes <out>/policy.safetensors (float32), <out>/curve.png (mean episode return; skipped with a warning without
  matplotlib) and <out>/history.json; returns the names written."""
  curve = ([r["env_steps"] for r in history], [r["mean_episode_return"] for r in history])
  return common.save_run(out, policy, history, meta, curve, title=f"APG {meta.get('task', '')}",
                         ylabel="mean episode return", target=target)


def main(argv=None):
  p = argparse.ArgumentParser(prog="python -m engine.train.apg", description=__doc__.split("\n\n")[0])
  p.add_argument("--task", default="reacher")
  p.add_argument("--num-envs", type=int, default=32)
  p.add_argument("--iterations", type=int, default=300)
  p.add_argument("--window", type=int, default=DEFAULTS["window"])
  p.add_argument("--lr", type=float, default=DEFAULTS["lr"])
  p.add_argument("--anneal", action="store_true", help="decay the step size linearly to 0")
  p.add_argument("--max-grad-norm", type=float, default=DEFAULTS["max_grad_norm"])
  p.add_argument("--noise-std", type=float, default=DEFAULTS["noise_std"])
  p.add_argument("--eval-every", type=int, default=None)
  p.add_argument("--seed", type=int, default=0)
  p.add_argument("--target-return", type=float, default=None, help="stop early here (default: the task's bar)")
  p.add_argument("--no-stop", action="store_true", help="run every iteration even past the bar")
  p.add_argument("--out", default=None, help="output folder (default out/apg_<task>)")
  p.add_argument("--load", default=None, help="evaluate these saved weights instead of training")
  p.add_argument("--grad-backend", choices=("oracle", "wgsl"), default=DEFAULTS["grad_backend"],
                 help="the step's gradient: substep Jacobians (oracle) or the WGSL backward kernel")
  args = p.parse_args(argv)
  bar = args.target_return if args.target_return is not None else BARS.get(args.task)
  if args.load:
    apg = APG(args.task, args.num_envs, window=args.window, policy=load_policy(args.load))
    ev = apg.evaluate(args.seed + EVAL_SEED_OFFSET)
    print(f"eval {args.load}: mean episode return {ev['eval_return']:.3f}, last-step reward "
          f"{ev['eval_final_reward']:.4f} ({args.num_envs} episodes)")
    return
  hp = dict(max_grad_norm=args.max_grad_norm, noise_std=args.noise_std, eval_every=args.eval_every,
            grad_backend=args.grad_backend, anneal_lr=args.anneal,
            target_return=None if args.no_stop else bar)
  policy, history = train_apg(args.task, args.num_envs, args.iterations, window=args.window, lr=args.lr,
                              seed=args.seed, **hp)
  out = args.out or os.path.join("out", f"apg_{args.task}")
  reached = next((r for r in history if bar is not None and (r["mean_episode_return"] or -math.inf) >= bar), None)
  meta = dict(task=args.task, num_envs=args.num_envs, seed=args.seed, hparams={**DEFAULTS, **hp, "window": args.window,
              "lr": args.lr}, bar=bar, bar_reached_at=None if reached is None else
              {k: reached[k] for k in ("iteration", "env_steps", "wall_s", "eval_s", "mean_episode_return")})
  written = save_run(out, policy, history, meta, target=bar)
  if reached: print(f"bar {bar} reached at {reached['env_steps']} env-steps, {reached['wall_s']:.1f} s")
  print(f"saved {out}/" + ", ".join(written))


if __name__ == "__main__":
  main()
