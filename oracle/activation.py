"""Activation (DESIGN sec. 4): the muscles' activation filter, one substep at a time.

MuJoCo's rate law d act/dt = (e - act) / tau(e, act) (mju_muscleDynamics, e the excitation clip(ctrl, 0, 1)) is
integrated over each substep with tau frozen at its start, exactly: act + (e - act)(1 - exp(-h / tau)). MuJoCo
itself takes an Euler step of dt (mj_nextActivation), which overshoots for dt > tau and diverges past 2 tau; the
exact step is monotone for any h, so act stays between its start and e, and it is first order in how tau changes
within a substep only (the 63 % rise time of a 0 -> 1 step: 1.0 % early at h = 0.2 ms, against 2.0 % for Euler steps
of h; tests/test_verify_muscle.py). For small h both are MuJoCo's law. ctrl is clipped to the actuator's ctrlrange
first (MuJoCo's ctrllimited). The forces of a substep use the activation at its start, as MuJoCo's use the step's.
"""
from __future__ import annotations
from tinygrad import Tensor
from oracle.actuators import act_ctrl
from oracle.math3 import take
from oracle.muscle import muscle_timescale, muscles


def activation(model, act: Tensor, ctrl: Tensor | None, h: float) -> Tensor:
  """The activations (B, nmuscle) after one substep of h from act with the controls ctrl (B, nact) (None: zero)."""
  midx = muscles(model)
  excitation = act_ctrl(model, ctrl, midx) if ctrl is not None else act * 0.0
  tau = muscle_timescale(excitation, act, take(model.act_dynprm, midx, axis=-2))
  return act + (excitation.clip(0, 1) - act) * (1 - (-h / tau).exp())
