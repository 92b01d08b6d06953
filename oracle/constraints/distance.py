"""Distance joint (tendon/rope): C = |p1 - p2| - L with compliance (M20 sec. 3.3.1, XPBD eq. 18)."""
from oracle.constraints import register, jvec, jscalar, alpha_tilde
from oracle.xpbd import EPS, positional


@register("distance", nlam=1)
def distance(model, jidx, s1, s2, lam, h, ctrl=None):
  r1 = s1.q.rotate(jvec(model, "jnt_anchor_parent", jidx))
  r2 = s2.q.rotate(jvec(model, "jnt_anchor_child", jidx))
  d, n, active = ((s1.x + r1) - (s2.x + r2)).norm_dir(EPS)
  c = d - jscalar(model, "jnt_length", jidx)
  corr, l0 = positional(s1, s2, r1, r2, n, c, active, lam[0], alpha_tilde(model, jidx, h))
  return corr, (l0,)
