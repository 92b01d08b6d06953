"""Two-slide joint: the child keeps its orientation relative to the parent and its anchor moves within the plane of
two orthogonal axes through the parent's anchor, two coordinates (MuJoCo's body with two slide joints and no hinge:
the target of Gymnasium's reacher). The first axis is jnt_axis_parent, the second jnt_ref_parent (the reference
normal a hinge measures its angle from). Rows: the orientation lock (as a fixed joint), one positional row along the
plane's normal with the joint's compliance (M20 eqs. 2-6), then each coordinate's limit row, as the slide's."""
from tinygrad import Tensor, dtypes
from oracle.constraints import register, jvec, jscalar, alpha_tilde
from oracle.constraints.fixed import lock_orientation
from oracle.constraints.slide import axis_limit, slide_frame
from oracle.math3 import const, take
from oracle.xpbd import apply, chain, positional


def slide2_frame(model, jidx, s1, s2):
  """World axes a1, a2, anchor offsets r1, r2 and the child's coordinates x1 = d.a1, x2 = d.a2 [m], d = (p2 + r2) -
  (p1 + r1) (both 0 at the initial pose)."""
  a1, r1, r2, x1 = slide_frame(model, jidx, s1, s2)
  a2 = s1.q.rotate(jvec(model, "jnt_ref_parent", jidx))
  return a1, a2, r1, r2, x1, ((s2.x + r2) - (s1.x + r1)).dot(a2)


def range2(model, jidx, like: Tensor) -> Tensor:
  """(J, 2) the second coordinate's [lo, hi] [m] (a static table: ranges are not differentiated)."""
  return const([x for j in jidx for x in model.jnt_range2[j]], like).reshape(len(jidx), 2)


@register("slide2", nlam=4)
def slide2(model, jidx, s1, s2, lam, h, ctrl=None):
  # 1. lock the relative orientation (as a fixed joint)
  orient, l_orient = lock_orientation(model, jidx, s1, s2, lam[0])
  s1, s2 = apply(s1, s2, orient)
  # 2. the anchors may differ only within the plane: move the child along the normal n = a1 x a2 by -(d.n)
  a1, a2, r1, r2, _, _ = slide2_frame(model, jidx, s1, s2)
  n = a1.cross(a2)
  x = ((s2.x + r2) - (s1.x + r1)).dot(n)
  on = Tensor.ones_like(x, dtype=dtypes.bool)
  normal, l_normal = positional(s1, s2, r1, r2, n, -x, on, lam[1], alpha_tilde(model, jidx, h))
  s1, s2 = apply(s1, s2, normal)
  # 3. each coordinate's limits, the first, then the second from where the first left the bodies
  limited = jscalar(model, "jnt_limited", jidx) > 0
  a1, _, r1, r2, x1, _ = slide2_frame(model, jidx, s1, s2)
  limit1, l_limit1 = axis_limit(s1, s2, r1, r2, a1, x1, take(model.jnt_range, jidx, axis=-2), limited, lam[2])
  s1, s2 = apply(s1, s2, limit1)
  _, a2, r1, r2, _, x2 = slide2_frame(model, jidx, s1, s2)
  limit2, l_limit2 = axis_limit(s1, s2, r1, r2, a2, x2, range2(model, jidx, x2), limited, lam[3])
  return chain(orient, normal, limit1, limit2), (l_orient, l_normal, l_limit1, l_limit2)
