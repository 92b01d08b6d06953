"""Actuators on hinge and slide joints (DESIGN sec. 4): one control each, ctrl (B, nact), clipped to act_ctrlrange.

- motor: tau = gear clip(ctrl) about the hinge axis (a force along a slide axis): an external load in integrate,
  applied to the child and, reversed, to the parent, so momentum is conserved.
- position servo (hinge): the target angle clip(ctrl) is a compliant angle constraint of the hinge, compliance
  alpha = 1/kp, solved with the joint's other rows (M20 sec. 3.4.1); its damping kv acts in the velocity pass.
- velocity servo (hinge): the relative angular velocity about the axis is driven to clip(ctrl) with gain kv, an
  implicit impulse in the velocity pass (the same form as joint damping, M20 eq. 36, with a non-zero target).

Every gather reads the raw ctrl input and the model's tensors (realised) and clips afterwards: gathering from a lazy
clipped tensor would make tinygrad materialise it once per use.
"""
from __future__ import annotations
from tinygrad import Tensor
from oracle.math3 import V3, const, take
from oracle.types import WORLD


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


def motor_loads(model, packed: Tensor, ctrl: Tensor | None) -> tuple[V3 | None, V3 | None]:
  """World-frame (force [N], torque [N m]) per body (B, nbody) from every motor, or (None, None) when there are none.
  A hinge motor turns the child by +tau about the axis and the parent by -tau; a slide motor pushes the child by +F
  along the axis and the parent by -F at the same point (the child's centre), i.e. -F and (x_c - x_p) x (-F)."""
  from oracle.solve import gather_side  # solve imports the constraints, which import this module
  motors = tuple(a for a, t in enumerate(model.act_type) if t == "motor")
  if ctrl is None or not motors: return None, None
  jidx = tuple(model.act_joint[a] for a in motors)
  par, chi = tuple(model.jnt_parent[j] for j in jidx), tuple(model.jnt_child[j] for j in jidx)
  s1, s2 = gather_side(model, packed, par), gather_side(model, packed, chi)
  axis = s1.q.rotate(V3.of(take(model.jnt_axis_parent, jidx, axis=-2)))
  load = axis * (act_ctrl(model, ctrl, motors) * take(model.act_gear, motors))          # (B, M)
  slide = const([float(model.jnt_type[j] == "slide") for j in jidx], packed)
  f_child, t_child = load * slide, load * (1.0 - slide)
  f_par, t_par = -f_child, -t_child - (s2.x - s1.x).cross(f_child)
  # scatter to bodies with constant one-hot (M, nbody) matrices; a world side has an all-zero row
  def onehot(bodies): return const([float(b == i and b != WORLD) for b in bodies for i in range(model.nbody)],
                                   packed).reshape(len(bodies), model.nbody)
  to_child, to_par = onehot(chi), onehot(par)
  def scatter(vc: V3, vp: V3) -> V3: return V3(*(c @ to_child + p @ to_par for c, p in zip(
    (vc.x, vc.y, vc.z), (vp.x, vp.y, vp.z))))
  return scatter(f_child, f_par), scatter(t_child, t_par)
