"""Planar joint: the child turns about the axis (the plane's normal) and moves freely within the plane through the
anchor, three coordinates (MuJoCo's body with two slides across an axis and a hinge about it: the planar roots of
Gymnasium's hopper, walker2d and half_cheetah). Rows: the hinge's axis alignment (M20 eq. 20), then one positional
row along the normal (M20 eqs. 2-6), as the slide's limit row with the target 0 and the joint's compliance."""
from tinygrad import Tensor, dtypes
from oracle.constraints import register, alpha_tilde
from oracle.constraints.hinge import align_axes
from oracle.constraints.slide import slide_frame
from oracle.xpbd import apply, chain, positional


@register("planar", nlam=2)
def planar(model, jidx, s1, s2, lam, h, ctrl=None):
  # 1. align the normals: the turn about the parent's normal stays free
  align, l_align = align_axes(model, jidx, s1, s2, lam[0])
  s1, s2 = apply(s1, s2, align)
  # 2. the anchors may differ only within the plane: move the child along the normal a by -x, x = (p2 - p1).a
  a, r1, r2, x = slide_frame(model, jidx, s1, s2)
  on = Tensor.ones_like(x, dtype=dtypes.bool)
  normal, l_normal = positional(s1, s2, r1, r2, a, -x, on, lam[1], alpha_tilde(model, jidx, h))
  return chain(align, normal), (l_align, l_normal)
