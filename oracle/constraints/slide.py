"""Slide (prismatic) joint: the child keeps its orientation relative to the parent and its anchor moves only along
the axis, optionally within [lo, hi] [m] (M20 sec. 3.3: positional rows on the two directions normal to the axis)."""
from oracle.constraints import register, jvec, jscalar, alpha_tilde
from oracle.constraints.fixed import lock_orientation
from oracle.math3 import take
from oracle.xpbd import EPS, apply, chain, positional


def slide_frame(model, jidx, s1, s2):
  """World axis a (parent frame), anchor offsets r1, r2 and the child's position along the axis x = (p2 - p1).a [m]
  (0 at the initial pose, where the anchors coincide)."""
  a = s1.q.rotate(jvec(model, "jnt_axis_parent", jidx))
  r1 = s1.q.rotate(jvec(model, "jnt_anchor_parent", jidx))
  r2 = s2.q.rotate(jvec(model, "jnt_anchor_child", jidx))
  return a, r1, r2, ((s2.x + r2) - (s1.x + r1)).dot(a)


@register("slide", nlam=3)
def slide(model, jidx, s1, s2, lam, h, ctrl=None):
  # 1. lock the relative orientation (as a fixed joint)
  orient, l_orient = lock_orientation(model, jidx, s1, s2, lam[0])
  s1, s2 = apply(s1, s2, orient)
  # 2. the anchors may differ only along the axis: remove the normal part d - (d.a) a, d = p1 - p2 (M20 eqs. 2-6)
  a, r1, r2, x = slide_frame(model, jidx, s1, s2)
  d = (s1.x + r1) - (s2.x + r2)
  c, n, active = (d - a * d.dot(a)).norm_dir(EPS)
  normal, l_normal = positional(s1, s2, r1, r2, n, c, active, lam[1], alpha_tilde(model, jidx, h))
  s1, s2 = apply(s1, s2, normal)
  # 3. limits
  a, r1, r2, x = slide_frame(model, jidx, s1, s2)
  limited = jscalar(model, "jnt_limited", jidx) > 0
  limit, l_limit = axis_limit(s1, s2, r1, r2, a, x, take(model.jnt_range, jidx, axis=-2), limited, lam[2])
  return chain(orient, normal, limit), (l_orient, l_normal, l_limit)


def axis_limit(s1, s2, r1, r2, a, x, rng, limited, lam):
  """A coordinate x along the world axis a kept within rng [lo, hi]: when it leaves, the child moves along a by
  (target - x), the nearer bound, rigidly (body 2 moves along +n, n = a). The slide's and the slide2's limit row."""
  target = x.maximum(rng[..., 0]).minimum(rng[..., 1])
  violated = limited & ((x < rng[..., 0]) | (x > rng[..., 1]))
  return positional(s1, s2, r1, r2, a, target - x, violated, lam, 0.0)
