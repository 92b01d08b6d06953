"""Ball joint: the two anchor points coincide (M20 sec. 3.3.1, solved as one 3-vector constraint: see xpbd.point)."""
from oracle.constraints import register, jvec, alpha_tilde
from oracle.xpbd import point


def attach(model, jidx, s1, s2, lam, h):
  """Shared point attachment of ball, hinge and fixed joints; lam: its 3 multipliers."""
  r1 = s1.q.rotate(jvec(model, "jnt_anchor_parent", jidx))
  r2 = s2.q.rotate(jvec(model, "jnt_anchor_child", jidx))
  return point(s1, s2, r1, r2, (s1.x + r1) - (s2.x + r2), lam, alpha_tilde(model, jidx, h))


@register("ball", nlam=3)
def ball(model, jidx, s1, s2, lam, h, ctrl=None):
  return attach(model, jidx, s1, s2, lam, h)
