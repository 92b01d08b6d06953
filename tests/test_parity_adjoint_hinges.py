"""Adjoint parity of the hinge groups (kernels/adjoint/hinges.wgsl group_adj: hinge2, two hinges on one body, and
hinge3, three) against tinygrad's autograd of oracle/constraints/hinges.py group, with tests/test_parity_adjoint.py's
harness (its docstring has the judgement): the gradients of both sides, every member's axes and range, the anchors, the
compliance and the six multipliers, from random gradients of the group's correction and updated multipliers.

The members' axes are a random frame's axes tilted by N(0, 0.3^2) (MuJoCo's groups are mostly orthogonal; tilted, the
triple's t2 equation has p, r != 0), and the child's are the same axes in a random rest rotation of the child, as the
scene loader makes them. Random poses (away from the singular ones: singular) leave the group far from satisfied and
its angles anywhere, so the anchors and the Hooke row always correct. Each member's range is up to 0.6 rad wide with
its middle within 0.3 rad of the pose's angle (limited in half the cases, firing in about half the limited cases, by
up to ~0.3 rad), as one substep's limit meets its coordinate: with ranges drawn apart from the pose (a first run,
[-U(0, 1), U(0, 1)]), some limits fired by over 2 rad, whose correction moved the pose that the later rows see as
far, and three cases of 256 carried O(1) errors of the first two parent axes' gradients in both float32 backends
(kernel 2.3e-2 norm-wise, float32 oracle 1.1e-2; the rest within 1.7e-6).

Measured 2026-11-29 on lavapipe: every gradient within 5.0e-7 of float64 autograd for hinge2, 5.9e-7 for hinge3."""
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


def angles(n: int, s1: np.ndarray, s2: np.ndarray, axes: np.ndarray, child: np.ndarray) -> np.ndarray:
  """The group's angles (oracle/constraints/hinges.py hinge_angles) per case, in float64 numpy: (N, 3), a pair's
  third 0."""
  def rot(s, v): return quat_rotate(s[:, 3:7], v)
  def dot(a, b): return (a * b).sum(-1)
  def about(axis, a, b): return np.arctan2(dot(axis, np.cross(a, b)), dot(a, b) - dot(axis, a) * dot(axis, b))
  def turn(k, v, t): return v * np.cos(t)[:, None] + np.cross(k, v) * np.sin(t)[:, None] \
      + k * (dot(k, v) * (1 - np.cos(t)))[:, None]
  w1 = rot(s1, axes[:, 0])
  if n == 2:
    w2 = rot(s2, child[:, 1])
    return np.stack([about(w1, rot(s1, axes[:, 1]), w2), about(w2, w1, rot(s2, child[:, 0])), 0 * w1[:, 0]], 1)
  a1, a2, a3, w3 = axes[:, 0], axes[:, 1], axes[:, 2], rot(s2, child[:, 2])
  r = dot(a1, a2) * dot(a2, a3)
  p, q = dot(a1, a3) - r, dot(a1, np.cross(a2, a3))
  c = np.clip((dot(w1, w3) - r) / np.hypot(p, q), -1, 1)
  off, phase = np.arctan2(np.sqrt(np.maximum(1 - c * c, 1e-30)), c), np.arctan2(q, p)
  up, down = np.angle(np.exp(1j * (phase + off))), np.angle(np.exp(1j * (phase - off)))
  t2 = np.where(np.abs(up) <= np.abs(down), up, down)
  t1 = about(w1, rot(s1, turn(a2, a3, t2)), w3)
  return np.stack([t1, t2, about(w3, w1, rot(s2, turn(child[:, 1], child[:, 0], -t2)))], 1)


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
  out = {**d, "lam": rng.normal(0, 0.01, (N, 6)), "limited": (rng.random((N, 3)) < 0.5).astype(np.float64)}
  while (near := singular(n, out["s1"], out["s2"], axes, child)).any():
    out["s2"][near, 3:7] = unit_quats(rng, int(near.sum()))
  # each range about 0.3 rad wide, its middle within 0.3 rad of the pose's angle: about half fire, by up to ~0.3 rad
  mid, half = angles(n, out["s1"], out["s2"], axes, child) + rng.uniform(-0.3, 0.3, (N, 3)), rng.uniform(0, 0.3, (N, 3))
  out |= {"lo": mid - half, "hi": mid + half}
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
