"""Hill-type muscle curves (DESIGN sec. 4), MuJoCo's model exactly (engine_util_misc.c: mju_muscleGain,
mju_muscleBias, mju_muscleDynamics; the MuJoCo docs, "Muscles"). Elementwise over broadcastable tensors, piecewise
by masks, so one function serves a batch of muscles and autograd; kernels/muscle.wgsl mirrors each function by name.

prm = (range0, range1, force, scale, lmin, lmax, vmax, fpmax, fvmax) (PRM_DEFAULT: MuJoCo's defaults):
- F0 = force, or scale / acc0 when force < 0 (acc0: the actuator's acceleration per unit force at qpos0);
- the optimal length L0 = (lengthrange1 - lengthrange0) / (range1 - range0), and the normalised length and velocity
  L = range0 + (len - lengthrange0) / L0, V = vel / (L0 vmax);
- active force -F0 FL(L) FV(V) (gain, times the activation), passive force -F0 FP(L) (bias): negative = pulling.
Activation: d act/dt = (clip(ctrl, 0, 1) - act) / tau, tau_act = prm0 (0.5 + 1.5 act), tau_deact = prm1 /
(0.5 + 1.5 act) (Millard et al. 2013), switched by the sign of ctrl - act, or blended by a quintic sigmoid of width
prm2 (MuJoCo's tausmooth). Every denominator is floored at MINVAL as MuJoCo's mjMAX(mjMINVAL, .) does.
"""
from __future__ import annotations
from tinygrad import Tensor

MINVAL = 1e-15                          # mjMINVAL
PRM_DEFAULT = (0.75, 1.05, -1.0, 200.0, 0.5, 1.6, 1.5, 1.3, 1.2)
TAU_ACT, TAU_DEACT = 0.01, 0.04         # [s] MuJoCo's muscle timeconst defaults (dynprm0, dynprm1)
PRM_NAMES = ("range", "range", "force", "scale", "lmin", "lmax", "vmax", "fpmax", "fvmax")


def _floor(x): return x.maximum(MINVAL) if isinstance(x, Tensor) else max(x, MINVAL)


def _prm(prm: Tensor) -> tuple[Tensor, ...]: return tuple(prm[..., k] for k in range(prm.shape[-1]))


def muscle_force_scale(force: Tensor, scale: Tensor, acc0: Tensor) -> Tensor:
  """F0 [N]: force, or scale / acc0 when force < 0."""
  return (force < 0).where(scale / _floor(acc0), force)


def muscle_normalised(length: Tensor, lengthrange: Tensor, range0: Tensor, range1: Tensor) -> tuple[Tensor, Tensor]:
  """(L0 [m], L [-]): the optimal length and the normalised length."""
  lo, hi = lengthrange[..., 0], lengthrange[..., 1]
  l0 = (hi - lo) / _floor(range1 - range0)
  return l0, range0 + (length - lo) / _floor(l0)


def muscle_gain_length(length: Tensor, lmin: Tensor, lmax: Tensor) -> Tensor:
  """FL(L): four half-quadratics through (lmin, 0), (a, 0.5), (1, 1), (b, 0.5), (lmax, 0), zero outside."""
  a, b = 0.5 * (lmin + 1), 0.5 * (1 + lmax)
  x1 = (length - lmin) / _floor(a - lmin)
  x2 = (1 - length) / _floor(1 - a)
  x3 = (length - 1) / _floor(b - 1)
  x4 = (lmax - length) / _floor(lmax - b)
  fl = (length <= a).where(0.5 * x1 * x1, (length <= 1).where(1 - 0.5 * x2 * x2, (length <= b).where(
    1 - 0.5 * x3 * x3, 0.5 * x4 * x4)))
  return ((lmin <= length) & (length <= lmax)).where(fl, 0.0)


def muscle_gain_velocity(v: Tensor, fvmax: Tensor) -> Tensor:
  """FV(V): 0 below -1 (shortening at vmax), (V + 1)^2 up to 0, a half-quadratic to fvmax at V = fvmax - 1."""
  y = fvmax - 1
  return (v <= -1).where(0.0, (v <= 0).where((v + 1) * (v + 1), (v <= y).where(
    fvmax - (y - v) * (y - v) / _floor(y), fvmax)))


def muscle_gain(length: Tensor, vel: Tensor, lengthrange: Tensor, acc0: Tensor, prm: Tensor) -> Tensor:
  """mju_muscleGain: the active force per unit activation, -F0 FL(L) FV(V) [N]. lengthrange (..., 2), prm (..., 9)."""
  range0, range1, force, scale, lmin, lmax, vmax, _, fvmax = _prm(prm)
  l0, big_l = muscle_normalised(length, lengthrange, range0, range1)
  v = vel / _floor(l0 * vmax)
  return -muscle_force_scale(force, scale, acc0) * muscle_gain_length(big_l, lmin, lmax) * \
    muscle_gain_velocity(v, fvmax)


def muscle_bias(length: Tensor, lengthrange: Tensor, acc0: Tensor, prm: Tensor) -> Tensor:
  """mju_muscleBias: the passive force -F0 FP(L) [N]: 0 up to L = 1, a half-quadratic to b = (1 + lmax) / 2 where it
  reaches fpmax / 2, linear beyond with slope fpmax / (b - 1)."""
  range0, range1, force, scale, _, lmax, _, fpmax, _ = _prm(prm)
  _, big_l = muscle_normalised(length, lengthrange, range0, range1)
  b = 0.5 * (1 + lmax)
  x1 = (big_l - 1) / _floor(b - 1)
  x2 = (big_l - b) / _floor(b - 1)
  f0 = muscle_force_scale(force, scale, acc0)
  return (big_l <= 1).where(0.0, (big_l <= b).where(-f0 * fpmax * 0.5 * x1 * x1, -f0 * fpmax * (0.5 + x2)))


def sigmoid5(x: Tensor) -> Tensor:
  """mju_sigmoid: the quintic smoothstep 6x^5 - 15x^4 + 10x^3 on [0, 1], 0 below, 1 above."""
  return (x <= 0).where(0.0, (x >= 1).where(1.0, x * x * x * (3 * x * (2 * x - 5) + 10)))


def muscle_timescale(ctrl: Tensor, act: Tensor, prm: Tensor) -> Tensor:
  """The activation filter's time constant tau [s] (mju_muscleDynamics before its division), prm (..., 3)."""
  actclamp = act.clip(0, 1)
  tau_act = prm[..., 0] * (0.5 + 1.5 * actclamp)
  tau_deact = prm[..., 1] / (0.5 + 1.5 * actclamp)
  width = prm[..., 2]
  dctrl = ctrl.clip(0, 1) - act
  hard = (dctrl > 0).where(tau_act, tau_deact)
  smooth_on = width >= MINVAL
  # the smooth branch divides by the width: a zero width there would put 0 * inf into the gradient
  smooth = tau_deact + (tau_act - tau_deact) * sigmoid5(dctrl / smooth_on.where(width, 1.0) + 0.5)
  return _floor(smooth_on.where(smooth, hard))


def muscle_dynamics(ctrl: Tensor, act: Tensor, prm: Tensor) -> Tensor:
  """mju_muscleDynamics: d act/dt [1/s] for prm = (tau_act, tau_deact, tausmooth) (..., 3)."""
  return (ctrl.clip(0, 1) - act) / muscle_timescale(ctrl, act, prm)


def muscles(model) -> tuple[int, ...]:
  """The muscle actuators' indices, in actuator order (the order of State.act)."""
  return tuple(a for a, t in enumerate(model.act_type) if t == "muscle")


def muscle_force(model, act: Tensor, length: Tensor, rate: Tensor) -> Tensor:
  """Each tendon's muscle tension (B, ntendon) [N], negative (pulling): the sum over the muscles on it of MuJoCo's
  actuator force gain(L, dL/dt) act + bias(L), from the activations act (B, nmuscle) and the tendons' length and rate
  (B, ntendon) (oracle/tendon.py). The muscle's length is its tendon's (MuJoCo's gear 1)."""
  from oracle.math3 import const, take
  midx = muscles(model)
  tidx = tuple(model.act_tendon[a] for a in midx)
  ln, vel = take(length, tidx), take(rate, tidx)
  lr, acc0, prm = (take(getattr(model, f), midx, axis=-2 if f != "act_acc0" else -1)
                   for f in ("act_lengthrange", "act_acc0", "act_gainprm"))
  force = muscle_gain(ln, vel, lr, acc0, prm) * act + muscle_bias(ln, lr, acc0, prm)
  onehot = const([float(t == k) for t in tidx for k in range(model.ntendon)], force).reshape(len(tidx), model.ntendon)
  return force @ onehot
