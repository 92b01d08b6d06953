"""Adjoint parity of the hinge groups (kernels/adjoint/hinges.wgsl group_adj: hinge2, two hinges on one body, and
hinge3, three) against tinygrad's autograd of oracle/constraints/hinges.py group, with tests/test_parity_adjoint.py's
harness (its docstring has the judgement): the gradients of both sides, every member's axes and range, the anchors, the
compliance and the six multipliers, from random gradients of the group's correction and updated multipliers.

The members' axes are a random frame's axes tilted by N(0, 0.3^2) (MuJoCo's groups are mostly orthogonal; tilted, the
triple's t2 equation has p, r != 0), and the child's are the same axes in a random rest rotation of the child, as the
scene loader makes them. Random poses (away from the singular ones: singular) leave the group far from satisfied and its
angles anywhere, so the anchors and the Hooke row always correct, and each member's limit [-U(0, 1), U(0, 1)] rad
(limited in half the cases) fires in about half the limited cases.

Measured 2026-11-29 on lavapipe: hinge2's gradients within 7.0e-7 of float64 autograd, hinge3's within 1.7e-6 but for
the first two members' parent axes, ap0 2.3e-2 and ap1 3.7e-3 (the float32 oracle's own errors 1.1e-2 and 4.5e-3):
three cases of 256 carry them, each with its first limit violated by 1.3 to 2.6 rad, whose correction moves the
pose the later rows see by as much; without those three, ap0's and ap1's errors are 1.2e-6 and 1.6e-6."""
from __future__ import annotations
from pathlib import Path
import numpy as np
import pytest
from tinygrad import Tensor
from oracle.constraints import hinges
from tests.test_parity_adjoint import H, N, SIDE_GRADS, Case, col, flat, joint_draw, run_case, unit_quats
from tests.golden import source_fingerprint
from tests.helpers import wgsl_checked  # noqa: F401 (autouse)
from engine.npquat import quat_rotate

SOURCE_HASH = source_fingerprint(Path(__file__))   # its prose can change without staling the references
AXES = ("ap0", "ap1", "ap2", "ac0", "ac1", "ac2")


def oracle(n: int, s1, s2, lam, ap0, ap1, ap2, ac0, ac1, ac2, anchor_p, anchor_c, compliance, limited, lo, hi):
  """group on one group of n hinges per case (joints 0 .. n-1, the first the leader), its parameters per case."""
  def per_joint(*vs): return Tensor.stack(*(flat(v) for v in vs[:n]), dim=1)   # (N, n, 3)
  def comps(v): return Tensor.stack(v.x, v.y, v.z, dim=1)[:, :n]             # (N, n)
  zero = Tensor.zeros_like(flat(anchor_p))
  members = tuple(range(n))
  model = type("M", (), dict(
    jnt_type=("hinge2" if n == 2 else "hinge3",) * n, jnt_group=(members,) * n,
    jnt_axis_parent=per_joint(ap0, ap1, ap2), jnt_axis_child=per_joint(ac0, ac1, ac2),
    jnt_anchor_parent=Tensor.stack(flat(anchor_p), *(zero,) * (n - 1), dim=1),
    jnt_anchor_child=Tensor.stack(flat(anchor_c), *(zero,) * (n - 1), dim=1),
    jnt_compliance=Tensor.stack(compliance, *(compliance * 0,) * (n - 1), dim=1),
    jnt_limited=comps(limited), jnt_range=Tensor.stack(comps(lo), comps(hi), dim=-1)))
  corr, new = hinges.group(model, (0,), col(s1), col(s2), tuple(t[:, None] for t in lam), H)
  return [corr, new]


def singular(n: int, s1: np.ndarray, s2: np.ndarray, axes: np.ndarray, child: np.ndarray) -> np.ndarray:
  """Cases near the group's singular poses, where the limit rows [w1 w2 w3]^-1 blow up (float32 then reaches inf,
  whose n * 0 is NaN in either backend): a pair's w1 . w2 = +-1; a triple's t2 equation at or beyond its extremes
  (|w1 . w3 - r| / sqrt(p^2 + q^2) = 1: gimbal lock, or, with tilted axes, a pose the group cannot reach)."""
  w1 = quat_rotate(s1[:, 3:7], axes[:, 0])
  if n == 2: return np.abs((w1 * quat_rotate(s2[:, 3:7], child[:, 1])).sum(1)) > 0.9
  a1, a2, a3 = axes[:, 0], axes[:, 1], axes[:, 2]
  r = (a1 * a2).sum(1) * (a2 * a3).sum(1)
  p, q = (a1 * a3).sum(1) - r, (a1 * np.cross(a2, a3)).sum(1)
  return np.abs(((w1 * quat_rotate(s2[:, 3:7], child[:, 2])).sum(1) - r) / np.hypot(p, q)) > 0.9


def draw(rng, n: int):
  """The module's docstring: tilted frames, the child's axes in its rest rotation, poses and limits at random; the
  child turned again where the pose is near singular (singular)."""
  d = joint_draw(rng)
  q = unit_quats(rng)
  frame = np.stack([quat_rotate(q, np.broadcast_to(e, (N, 3))) for e in np.eye(3)], axis=1)   # (N, 3 members, 3)
  axes = frame + rng.normal(0, 0.3, frame.shape)
  axes /= np.linalg.norm(axes, axis=-1, keepdims=True)
  rest = unit_quats(rng)[:, None].repeat(3, 1) * np.array([1, -1, -1, -1])
  child = quat_rotate(rest, axes)   # the same axes in the child's rest frame
  out = {**d, "lam": rng.normal(0, 0.01, (N, 6)), "limited": (rng.random((N, 3)) < 0.5).astype(np.float64),
         "lo": -rng.uniform(0, 1, (N, 3)), "hi": rng.uniform(0, 1, (N, 3))}
  while (near := singular(n, out["s1"], out["s2"], axes, child)).any():
    out["s2"][near, 3:7] = unit_quats(rng, int(near.sum()))
  return out | {f"ap{i}": axes[:, i] for i in range(3)} | {f"ac{i}": child[:, i] for i in range(3)}


def case(n: int) -> Case:
  ins = [("s1", "side"), ("s2", "side"), *((k, "v") for k in AXES), ("anchor_p", "v"), ("anchor_c", "v"),
         ("compliance", "s"), ("limited", "v"), ("lo", "v"), ("hi", "v"), ("lam", "l6")]
  args = ", ".join(f"{{{k}}}" for k, _ in ins[2:-1])
  axes = AXES if n == 3 else ("ap0", "ap1", "ac0", "ac1")   # a pair's third member is its second again (unused)
  return Case(
    ins, [("corr", "corr"), ("lam_new", "l6")],
    f"group_adj({{s1}}, {{s2}}, GroupParams({args}, {'true' if n == 2 else 'false'}), {{lam}}, {H}, {{g_corr}}, "
    "{g_lam_new})",
    [*SIDE_GRADS, *((k, "v", f"prm.{k}") for k in axes), ("anchor_p", "v", "prm.anchor_p"),
     ("anchor_c", "v", "prm.anchor_c"), ("compliance", "s", "prm.compliance"), ("lo", "v", "prm.lo"),
     ("hi", "v", "prm.hi"), ("lam", "l6", "lam")],
    lambda **kw: oracle(n, **kw), lambda rng: draw(rng, n))


CASES = {"hinge2": case(2), "hinge3": case(3)}


@pytest.mark.parametrize("name", [pytest.param(k, marks=pytest.mark.xdist_group(f"adjoint_{k}")) for k in CASES])
def test_parity_adjoint_hinges(name):
  run_case(name, CASES[name], source_hash=SOURCE_HASH)
