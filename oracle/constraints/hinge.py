"""Hinge joint: ball attachment, axis alignment, optional angle limits and position servo (M20 sec. 3.4.1, Alg. 3)."""
from oracle.actuators import servo_target
from oracle.constraints import register, jvec, jscalar
from oracle.constraints.ball import attach
from oracle.math3 import atan2, take
from oracle.xpbd import EPS, angular, angular_align, apply, chain


def hinge_angle(model, jidx, s1, s2):
  """Signed angle [rad] of the child about the hinge axis, from the parent's reference vector to the child's."""
  a = s1.q.rotate(jvec(model, "jnt_axis_parent", jidx))
  n1 = s1.q.rotate(jvec(model, "jnt_ref_parent", jidx))
  n2 = s2.q.rotate(jvec(model, "jnt_ref_child", jidx))
  return atan2(n1.cross(n2).dot(a), n1.dot(n2)), a


def wrap(angle):
  """angle mapped to [-pi, pi]: the shortest way to a target."""
  return atan2(angle.sin(), angle.cos())


def align_axes(model, jidx, s1, s2, lam):
  """Body 2 turns about a2 x a1, which carries its axis a2 onto the parent's a1 (M20 eq. 20); always rigid. A 2-dof
  solve (xpbd.angular_align): the turn about a1 stays free. Step 1 of the hinge and of the planar joint."""
  a1 = s1.q.rotate(jvec(model, "jnt_axis_parent", jidx))
  a2 = s2.q.rotate(jvec(model, "jnt_axis_child", jidx))
  theta, n, active = a2.cross(a1).norm_dir(EPS)
  return angular_align(s1, s2, a1, n, theta, active, lam)


@register("hinge", nlam=6)
def hinge(model, jidx, s1, s2, lam, h, ctrl=None):
  # 1. align the axes; the turn about the parent's axis stays free, as for the limit and servo below
  align, l_align = align_axes(model, jidx, s1, s2, lam[0])
  s1, s2 = apply(s1, s2, align)
  # 2. limits (M20 Alg. 3): when the angle leaves [lo, hi], turn body 2 about the axis by (target - angle)
  phi, axis = hinge_angle(model, jidx, s1, s2)
  rng = take(model.jnt_range, jidx, axis=-2)
  lo, hi = rng[..., 0], rng[..., 1]
  target = phi.maximum(lo).minimum(hi)
  violated = (jscalar(model, "jnt_limited", jidx) > 0) & ((phi < lo) | (phi > hi))
  limit, l_limit = angular(s1, s2, axis, target - phi, violated, lam[1], 0.0)
  s1, s2 = apply(s1, s2, limit)
  # 3. position servo: a target angle with compliance 1/kp, i.e. a torsional spring of stiffness kp (M20 sec. 3.4.1)
  servo, l_servo, parts = None, lam[5], (align, limit)
  if (drive := servo_target(model, jidx, ctrl)) is not None:
    goal, on, alpha = drive
    phi, axis = hinge_angle(model, jidx, s1, s2)
    servo, l_servo = angular(s1, s2, axis, wrap(goal - phi), on, lam[5], alpha / (h * h))
    s1, s2 = apply(s1, s2, servo)
    parts = parts + (servo,)
  # 4. attach the anchors
  pos, l_pos = attach(model, jidx, s1, s2, lam[2:5], h)
  return chain(*parts, pos), (l_align, l_limit, *l_pos, l_servo)

