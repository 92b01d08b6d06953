"""Actuators on hinge and slide joints (DESIGN sec. 4): one control each, ctrl (B, nact), clipped to act_ctrlrange.
This module holds the controls' gathers and the servo helpers the hinge and the velocity pass use.

- motor: tau = gear clip(ctrl) about the hinge axis (a force along a slide axis): an external load in integrate,
  applied to the child and, reversed, to the parent, so momentum is conserved (the motor_loads stage,
  oracle/motor_loads.py).
- position servo (hinge): the target angle clip(ctrl) is a compliant angle constraint of the hinge, compliance
  alpha = 1/kp, solved with the joint's other rows (M20 sec. 3.4.1); its damping kv acts in the velocity pass.
- velocity servo (hinge): the relative angular velocity about the axis is driven to clip(ctrl) with gain kv, an
  implicit impulse in the velocity pass (the same form as joint damping, M20 eq. 36, with a non-zero target).

Every gather reads the raw ctrl input and the model's tensors (realised) and clips afterwards: gathering from a lazy
clipped tensor would make tinygrad materialise it once per use.
"""
from __future__ import annotations
from tinygrad import Tensor
from oracle.math3 import const, take


def driver(model, joint: int, kind: str) -> int:
  """Index of the actuator of type `kind` on `joint`, or -1 (at most one actuator drives a joint)."""
  return next((a for a, (t, j) in enumerate(zip(model.act_type, model.act_joint)) if t == kind and j == joint), -1)


def act_ctrl(model, ctrl: Tensor, aidx: tuple[int, ...]) -> Tensor:
  """clip(ctrl[:, aidx], lo, hi): (B, len(aidx)); index -1 reads 0."""
  rng = take(model.act_ctrlrange, aidx, axis=-2)
  return take(ctrl, aidx).maximum(rng[..., 0]).minimum(rng[..., 1])


def servo_target(model, jidx: tuple[int, ...], ctrl: Tensor | None):
  """For the hinges jidx: (target angle (B, J) [rad], active mask (J,), compliance 1/kp (J,) or (B, J)), or None
  when none of them carries a position servo."""
  aidx = tuple(driver(model, j, "position") for j in jidx)
  if ctrl is None or all(a < 0 for a in aidx): return None
  on = const([float(a >= 0) for a in aidx], ctrl) > 0
  return act_ctrl(model, ctrl, aidx), on, 1.0 / take(model.act_kp, aidx, 1.0)


def velocity_drive(model, jidx: tuple[int, ...], ctrl: Tensor | None) -> tuple[Tensor, Tensor] | None:
  """For the hinges jidx: (extra damping [N m s/rad], target relative angular velocity [rad/s]), each (J,) or (B, J),
  from position servos (damping kv, target 0) and velocity servos (gain kv, target clip(ctrl)); None if neither."""
  pos = tuple(driver(model, j, "position") for j in jidx)
  vel = tuple(driver(model, j, "velocity") for j in jidx)
  if all(a < 0 for a in pos + vel): return None
  kv = take(model.act_kv, pos) + take(model.act_kv, vel)
  target = act_ctrl(model, ctrl, vel) if ctrl is not None and any(a >= 0 for a in vel) else 0.0
  return kv, target


def has_drive(model) -> bool:
  """Whether the velocity pass has servo work (static, read once per trace like has_damping)."""
  kv = model.act_kv.numpy().reshape(-1, model.nact) if model.nact else None
  return any(t == "velocity" or (t == "position" and (kv[:, a] > 0).any()) for a, t in enumerate(model.act_type))
