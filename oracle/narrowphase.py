"""Narrowphase stage (M20 sec. 3.5): every candidate pair's contacts at the substep's predicted poses, one kernel per
pair block, stored as rows in the layout of oracle/contacts.py (VALID, NORMAL, RA, RB, ...) with each point in its
body's frame, so the K Jacobi iterations that reuse the rows follow the bodies."""
from __future__ import annotations
from tinygrad import Tensor
from oracle.contacts import GFRIC, GREST, ROW, ContactPlan, block_contacts, side_rows
from oracle.math3 import V3


def narrowphase(model, plan: ContactPlan, work: Tensor) -> Tensor:
  """Contacts of every candidate pair at the substep's predicted poses: (B, C, ROW), one kernel per block."""
  rows = side_rows(plan.pair_body, work).contiguous()
  out = []
  for blk in plan.blocks:
    contacts, (xa, qa, xb, qb, r, s, pvalid) = block_contacts(plan, blk, rows)
    va, wa, vb, wb = (V3(r[..., i, c], r[..., i, c + 1], r[..., i, c + 2]) for i in (0, 1) for c in (7, 10))
    fric = s[..., 0, GFRIC].maximum(s[..., 1, GFRIC])   # the rougher / bouncier geom wins (MuJoCo takes the max)
    rest = s[..., 0, GREST].maximum(s[..., 1, GREST])
    cols = []
    for c in contacts:
      oa, ob = c.pa - xa, c.pb - xb
      vrel = (va + wa.cross(oa)) - (vb + wb.cross(ob))
      ra, rb = qa.inv_rotate(oa), qb.inv_rotate(ob)
      valid = (c.valid & pvalid).where(1.0, 0.0)
      cols.append(Tensor.stack(valid, c.n.x, c.n.y, c.n.z, ra.x, ra.y, ra.z, rb.x, rb.y, rb.z, fric, rest,
                               vrel.dot(c.n), dim=-1))
    out.append(Tensor.stack(*cols, dim=2).reshape(work.shape[0], blk.pairs * blk.slots, ROW).contiguous())
  return Tensor.cat(*out, dim=1) if len(out) > 1 else out[0]
