"""Fixed joint: ball attachment plus full relative orientation (M20 sec. 3.3.2, dq = 2 vec(q1 q2^-1))."""
from oracle.constraints import register
from oracle.constraints.ball import attach
from oracle.math3 import Quat, take
from oracle.xpbd import EPS, angular_lock, apply, chain


def lock_orientation(model, jidx, s1, s2, lam):
  """The child keeps its rest orientation relative to the parent (shared by fixed and slide joints)."""
  # target child orientation according to the parent; body 2 turns about +n towards it, body 1 the other way
  rel = Quat.of(take(model.jnt_relquat, jidx, axis=-2))
  dq = (s1.q * rel) * s2.q.conj()
  sign = (dq.w < 0).where(-1.0, 1.0)  # shortest arc: q and -q are the same rotation
  theta, n, active = (dq.vec * (2.0 * sign)).norm_dir(EPS)
  return angular_lock(s1, s2, n, theta, active, lam)  # one 3-vector solve (xpbd.angular_lock), rigid


@register("fixed", nlam=4)
def fixed(model, jidx, s1, s2, lam, h, ctrl=None):
  orient, l_orient = lock_orientation(model, jidx, s1, s2, lam[0])
  s1, s2 = apply(s1, s2, orient)
  pos, l_pos = attach(model, jidx, s1, s2, lam[1:4], h)
  return chain(orient, pos), (l_orient, *l_pos)

