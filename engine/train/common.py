"""Pieces shared by the trainers: a small Gaussian MLP policy with a value head, running observation statistics, an
Adam that skips non-finite steps, weight save/load (safetensors), a progress line and the run's outputs (the
learning-curve PNG comes from engine.train.plot, with matplotlib when it is installed)."""
import json
import math
import os
import warnings

import numpy as np
from tinygrad import Tensor, dtypes, nn
from tinygrad.device import Buffer
from tinygrad.nn.state import get_state_dict, load_state_dict, safe_load, safe_save

from engine.train.plot import PlotUnavailable, write_curve_png

LOG_2PI = math.log(2.0 * math.pi)
# bounds on the policy's log-std, kept by projection after every optimiser step (as SAC and rl_games clamp it): std
# in [0.0067, 7.4] covers any useful exploration for actions in [-1, 1], and the floor keeps 1/std, and so the
# log-densities and the PPO ratio, bounded however long the entropy keeps falling
LOG_STD_MIN, LOG_STD_MAX = -5.0, 2.0


def _orthogonal(rng: np.random.Generator, fan_out: int, fan_in: int, gain: float) -> np.ndarray:
  # orthogonal init (Saxe et al. 2014), the PPO default: keeps activations well scaled through tanh layers
  q, r = np.linalg.qr(rng.standard_normal((max(fan_out, fan_in), min(fan_out, fan_in))))
  q = q * np.sign(np.diag(r))  # makes the decomposition unique, so the draw is uniform over orthogonal matrices
  return (gain * (q if fan_out >= fan_in else q.T)).astype(np.float32)


def _mlp(rng: np.random.Generator, sizes: list[int], out_gain: float) -> list[nn.Linear]:
  layers = []
  for i, (fan_in, fan_out) in enumerate(zip(sizes[:-1], sizes[1:])):
    lin = nn.Linear(fan_in, fan_out)
    gain = out_gain if i == len(sizes) - 2 else math.sqrt(2.0)
    lin.weight = Tensor(_orthogonal(rng, fan_out, fan_in, gain))
    lin.bias = Tensor.zeros(fan_out).contiguous()
    layers.append(lin)
  return layers


def _run(layers: list[nn.Linear], x: Tensor) -> Tensor:
  for lin in layers[:-1]: x = lin(x).tanh()
  return layers[-1](x)


class MLPPolicy:
  """Gaussian policy mean(obs) with a state-independent log-std, and a separate value network V(obs).

  Observations are normalised inside the policy with running statistics (obs_mean, obs_var), so saved weights are
  self-contained. Separate actor and critic networks keep the (large) return-scale value gradients out of the actor.
  Fields: actor / critic: lists of nn.Linear; log_std: (act_dim,); obs_mean, obs_var: (obs_dim,).
  """
  def __init__(self, obs_dim: int, act_dim: int, hidden: tuple[int, ...] = (64, 64), init_log_std: float = 0.0,
               seed: int = 0):
    rng = np.random.default_rng(seed)
    self.obs_dim, self.act_dim, self.hidden = obs_dim, act_dim, tuple(hidden)
    # small last actor layer: the initial policy is ~zero-mean whatever the obs, so early exploration is unbiased
    self.actor = _mlp(rng, [obs_dim, *hidden, act_dim], out_gain=0.01)
    self.critic = _mlp(rng, [obs_dim, *hidden, 1], out_gain=1.0)
    self.log_std = Tensor.full((act_dim,), float(init_log_std)).contiguous()
    self.obs_mean = Tensor.zeros(obs_dim).contiguous()
    self.obs_var = Tensor.ones(obs_dim).contiguous()
    Tensor.realize(*self.state_dict().values())

  def parameters(self) -> list[Tensor]:
    """The trainable tensors (the observation statistics are not trained, they are measured)."""
    return [t for lin in self.actor + self.critic for t in (lin.weight, lin.bias)] + [self.log_std]

  def state_dict(self) -> dict[str, Tensor]:
    return get_state_dict({"actor": self.actor, "critic": self.critic, "log_std": self.log_std,
                           "obs_mean": self.obs_mean, "obs_var": self.obs_var})

  def normalise(self, obs: Tensor) -> Tensor:
    # clipped at 10 sigma so a rare wild state cannot saturate every tanh unit
    return ((obs - self.obs_mean) / (self.obs_var + 1e-8).sqrt()).clip(-10.0, 10.0)

  def __call__(self, obs: Tensor) -> tuple[Tensor, Tensor]:
    """obs (B, obs_dim) -> (action mean (B, act_dim), value (B,))."""
    x = self.normalise(obs)
    return _run(self.actor, x), _run(self.critic, x)[:, 0]

  def log_prob(self, mean: Tensor, action: Tensor) -> Tensor:
    """Diagonal Gaussian log-density of action (B, act_dim) -> (B,)."""
    z = (action - mean) / self.log_std.exp()
    return (-0.5 * z * z - self.log_std - 0.5 * LOG_2PI).sum(axis=1)

  def entropy(self) -> Tensor:
    """Entropy of the diagonal Gaussian (scalar; it does not depend on the state)."""
    return (self.log_std + 0.5 * (LOG_2PI + 1.0)).sum()


class GuardedAdam:
  """Adam (Kingma & Ba 2015, Alg. 1) whose whole step is skipped, inside the graph, when `ok` is false.

  One non-finite minibatch would otherwise write NaN into every parameter and both moments at once, and Adam never
  recovers from that. A skipped step leaves parameters, moments and the step count as they were, so the bias
  correction still matches the number of steps taken. Same update and state as tinygrad's Adam otherwise; lr is a
  (1,) Tensor so it can be annealed by assign without recompiling. clamp: (param, lo, hi) bounds projected onto after
  the step (the policy's log-std)."""
  def __init__(self, params: list[Tensor], lr: float, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8,
               clamp: tuple[tuple[Tensor, float, float], ...] = ()):
    self.params, self.b1, self.b2, self.eps, self.clamp = params, b1, b2, eps, clamp
    self.lr = Tensor([lr]).contiguous().realize()
    self.t = Tensor.zeros(1).contiguous().realize()
    self.m = [Tensor.zeros(*p.shape).contiguous().realize() for p in params]
    self.v = [Tensor.zeros(*p.shape).contiguous().realize() for p in params]

  def zero_grad(self):
    for p in self.params: p.grad = None

  def grad_norm(self) -> Tensor:
    """Global L2 norm of the gradients (1,): non-finite when any gradient element is (or when it overflows)."""
    return sum((p.grad * p.grad).sum() for p in self.params).sqrt().reshape(1)

  def schedule_step(self, ok: Tensor) -> list[Tensor]:
    """Assigns of the step (realise them, with anything that must read the old values): ok (1,) bool."""
    t = self.t + ok.float()
    # a skipped first step leaves t = 0 and a 0/0 bias correction: the where below never selects it
    c1, c2 = 1.0 - Tensor(self.b1) ** t, 1.0 - Tensor(self.b2) ** t
    out = [self.t.assign(t)]
    for p, m, v in zip(self.params, self.m, self.v):
      g = ok.where(p.grad, 0.0)
      m_new, v_new = self.b1 * m + (1.0 - self.b1) * g, self.b2 * v + (1.0 - self.b2) * g * g
      p_new = p.detach() - self.lr * (m_new / c1) / ((v_new / c2).sqrt() + self.eps)
      for c, lo, hi in self.clamp:
        if c is p: p_new = p_new.clip(lo, hi)
      out += [m.assign(ok.where(m_new, m)), v.assign(ok.where(v_new, v)), p.assign(ok.where(p_new, p.detach()))]
    return out


class RunningMeanStd:
  """Running mean/variance over batches (Chan et al. parallel update), in float64 numpy."""
  def __init__(self, dim: int):
    self.mean, self.var, self.count = np.zeros(dim), np.ones(dim), 1e-4

  def update(self, x: np.ndarray):
    """x (..., dim); rows with a non-finite entry are left out (one NaN would poison the statistics for good)."""
    x = x.reshape(-1, self.mean.shape[0]).astype(np.float64)
    x = x[np.isfinite(x).all(axis=1)]
    if x.shape[0] == 0: return
    n, mean, var = x.shape[0], x.mean(axis=0), x.var(axis=0)
    delta, total = mean - self.mean, self.count + n
    m2 = self.var * self.count + var * n + delta**2 * self.count * n / total
    self.mean, self.var, self.count = self.mean + delta * n / total, m2 / total, total

  def copy_to(self, policy: MLPPolicy):
    # assign keeps the buffers, so jitted forwards that captured them see the new statistics
    policy.obs_mean.assign(Tensor(self.mean.astype(np.float32))).realize()
    policy.obs_var.assign(Tensor(self.var.astype(np.float32))).realize()


class Staging:
  """A fixed-shape, realised Tensor (float32 or float64) refilled from numpy in place.

  Tensor(ndarray) schedules and realises a new buffer (~2 ms per call on CPU in tinygrad 0.14, more with many live
  Tensors); a plain buffer copy into an existing Tensor costs ~0.2 ms. The Tensor keeps its buffer, so it can be
  passed to a TinyJit on every call. load() takes any array of the same size (a window's (W, B, ...) rows fill a
  (W B, ...) buffer)."""
  def __init__(self, shape: tuple[int, ...], device: str | None = None, dtype=dtypes.float32):
    self.np_dtype = np.float64 if dtype == dtypes.float64 else np.float32
    self.tensor = Tensor.zeros(*shape, device=device, dtype=dtype).contiguous().realize()

  def load(self, x: np.ndarray) -> Tensor:
    x = np.ascontiguousarray(x, self.np_dtype)
    if x.size != self.tensor.numel(): raise ValueError(f"expected shape {self.tensor.shape}, got {x.shape}")
    buf = self.tensor.uop.buffer
    buf.copy_from(Buffer("PYTHON", buf.size, buf.dtype, opaque=memoryview(x).cast("B")))
    return self.tensor


def save_policy(policy: MLPPolicy, path: str):
  """float32 on disk whatever the training dtype (load_policy builds a float32 policy); the policy is not touched."""
  safe_save({k: v.cast(dtypes.float32).contiguous() for k, v in policy.state_dict().items()}, path)


def load_policy(path: str) -> MLPPolicy:
  """Rebuilds the policy from a safetensors file; sizes are read from the stored shapes."""
  state = safe_load(path)
  obs_dim, act_dim = state["obs_mean"].shape[0], state["log_std"].shape[0]
  n_actor = len([k for k in state if k.startswith("actor.") and k.endswith(".weight")])
  hidden = tuple(state[f"actor.{i}.weight"].shape[0] for i in range(n_actor - 1))
  policy = MLPPolicy(obs_dim, act_dim, hidden)
  load_state_dict(policy.state_dict(), state, verbose=False)
  return policy


# counters of things that went wrong in an iteration: (history key, what the progress line calls it)
_TROUBLE = (("skipped_updates", "updates skipped (non-finite loss or gradient)"),
            ("nonfinite_obs", "non-finite obs from the env (replaced by the obs mean)"),
            ("nonfinite_episodes", "episodes ended by a non-finite env state"))


def progress_line(it: int, row: dict, fields: tuple[tuple[str, str, str], ...]) -> str:
  """One line per iteration: env-steps and wall time, then each (label, history key, format) of `fields` ("-" where
  the value is None); any non-zero trouble counter (skipped updates, non-finite obs or episodes) is appended so it
  cannot go unseen."""
  def fmt(v, spec): return "-".rjust(len(format(0.0, spec))) if v is None else format(v, spec)
  trouble = "; ".join(f"{row[k]} {what}" for k, what in _TROUBLE if row.get(k))
  return (f"iter {it:4d}  steps {row['env_steps']:8d}  wall {row['wall_s']:7.1f}s  "
          + "  ".join(f"{label} {fmt(row[key], spec)}" for label, key, spec in fields)
          + (f"  !! {trouble}" if trouble else ""))


def save_run(out: str, policy: MLPPolicy, history: list[dict], meta: dict, curve: tuple[list, list], *,
             title: str, ylabel: str, target: float | None = None) -> list[str]:
  """Writes <out>/policy.safetensors (float32), <out>/curve.png (curve = (xs, ys); engine.train.plot) and
  <out>/history.json, and returns the names written. Without matplotlib the curve is skipped with a warning that says
  what to install: the run's results are the weights and the history, and the history holds every plotted number."""
  os.makedirs(out, exist_ok=True)
  save_policy(policy, os.path.join(out, "policy.safetensors"))
  with open(os.path.join(out, "history.json"), "w") as f: json.dump({**meta, "history": history}, f, indent=1)
  try:
    write_curve_png(os.path.join(out, "curve.png"), *curve, title=title, ylabel=ylabel, target=target)
  except PlotUnavailable as e:
    warnings.warn(f"{out}/curve.png not written: {e}", stacklevel=2)
    return ["policy.safetensors", "history.json"]
  return ["policy.safetensors", "curve.png", "history.json"]
