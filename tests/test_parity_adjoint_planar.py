"""Adjoint parity of the planar and slide2 joints (kernels/adjoint/constraints.wgsl planar_adj, slide2_adj) against
tinygrad's autograd of oracle/constraints/planar.py planar and slide2.py slide2, with tests/test_parity_adjoint.py's
harness (its docstring has the judgement): the gradients of both sides, every differentiated parameter and the
multipliers, from random gradients of the joint's correction and updated multipliers.

Random poses leave both joints far from satisfied, so every row corrects. slide2's first axis and reference are
orthogonal, as the scene loader makes them; its first range is drawn per case, [-U(0, 1), U(0, 1)] m, limited in half
the cases, and the second is the static table [-0.5, 0.5] m (Model.jnt_range2, not differentiated). At the drawn
poses (before the joint's first rows move them) the first coordinate is outside its range in 74 of the 120 limited
cases and the second in 89 (seed 0), so both limit rows are checked firing and idle.

Measured 2026-11-27: every gradient within 7.6e-7 of float64 autograd (the bound is 1e-4).
"""
from __future__ import annotations
import hashlib
from pathlib import Path
import numpy as np
import pytest
from oracle.constraints import planar, slide2
from oracle.math3 import V3, Quat
from tests.test_parity_adjoint import H, N, SIDE_GRADS, Case, col, flat, joint_draw, run_case, unit, unit_quats
from tests.helpers import wgsl_checked  # noqa: F401 (autouse)

SOURCE_HASH = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()
RANGE2 = (-0.5, 0.5)
FIELDS = {"axis_p": "jnt_axis_parent", "axis_c": "jnt_axis_child", "ref_p": "jnt_ref_parent",
          "anchor_p": "jnt_anchor_parent", "anchor_c": "jnt_anchor_child", "relquat": "jnt_relquat",
          "compliance": "jnt_compliance", "limited": "jnt_limited"}


def oracle(fn, s1, s2, lams, **prm):
  """fn on one joint per case, its parameters per case (a batch axis): [correction, each updated multiplier]."""
  rng = {"jnt_range": flat((prm.pop("lo"), prm.pop("hi")))[:, None]} if "lo" in prm else {}
  fields = {FIELDS[k]: (flat(v) if isinstance(v, (V3, Quat)) else v)[:, None] for k, v in prm.items()}
  model = type("M", (), {**rng, "jnt_range2": (RANGE2,), **fields})
  corr, new = fn(model, (0,), col(s1), col(s2), tuple(t[:, None] for t in lams), H)
  return [corr, *new]


def orthogonal(rng, a: np.ndarray) -> np.ndarray:
  """Unit vectors orthogonal to the unit vectors a."""
  v = rng.normal(size=a.shape)
  v = v - a * (v * a).sum(1, keepdims=True)
  return v / np.linalg.norm(v, axis=1, keepdims=True)


def planar_draw(rng):
  d = joint_draw(rng)
  return {**d, "axis_p": unit(rng), "axis_c": unit(rng), "lam0": d["lam"], "lam1": rng.normal(0, 0.01, (N, 1))}


def slide2_draw(rng):
  d, a = joint_draw(rng), unit(rng)
  return {**d, "axis_p": a, "ref_p": orthogonal(rng, a), "relquat": unit_quats(rng),
          "limited": (rng.random((N, 1)) < 0.5).astype(np.float64), "lo": -rng.uniform(0, 1, (N, 1)),
          "hi": rng.uniform(0, 1, (N, 1)), "lam": rng.normal(0, 0.01, (N, 4))}


FRAME = ("axis_p", "anchor_p", "anchor_c")
CASES = {
  "planar": Case(
    [("s1", "side"), ("s2", "side"), *((k, "v") for k in (*FRAME, "axis_c")), ("compliance", "s"), ("lam0", "s"),
     ("lam1", "s")], [("corr", "corr"), ("lam_new0", "s"), ("lam_new1", "s")],
    "planar_adj({s1}, {s2}, SlideParams({axis_p}, {anchor_p}, {anchor_c}, Quat(1.0, vec3<f32>(0.0)), {compliance}, "
    f"0.0, 0.0, 0.0), {{axis_c}}, vec2<f32>({{lam0}}, {{lam1}}), {H}, {{g_corr}}, "
    "vec2<f32>({g_lam_new0}, {g_lam_new1}))",
    [*SIDE_GRADS, *((k, "v", f"prm.{k}") for k in FRAME), ("axis_c", "v", "axis_c"),
     ("compliance", "s", "prm.compliance"), ("lam0", "s", "lam.x"), ("lam1", "s", "lam.y")],
    lambda s1, s2, lam0, lam1, **prm: oracle(planar.planar, s1, s2, (lam0, lam1), **prm), planar_draw),
  "slide2": Case(
    [("s1", "side"), ("s2", "side"), *((k, "v") for k in FRAME), ("relquat", "q"), ("compliance", "s"),
     ("limited", "s"), ("lo", "s"), ("hi", "s"), ("ref_p", "v"), ("lam", "l4")],
    [("corr", "corr"), ("lam_new", "l4")],
    "slide2_adj({s1}, {s2}, SlideParams({axis_p}, {anchor_p}, {anchor_c}, {relquat}, {compliance}, {limited}, {lo}, "
    f"{{hi}}), {{ref_p}}, vec2<f32>({RANGE2[0]}, {RANGE2[1]}), {{lam}}, {H}, {{g_corr}}, {{g_lam_new}})",
    [*SIDE_GRADS, *((k, "v", f"prm.{k}") for k in FRAME), ("relquat", "q", "prm.relquat"),
     ("compliance", "s", "prm.compliance"), ("lo", "s", "prm.lo"), ("hi", "s", "prm.hi"), ("ref_p", "v", "ref_p"),
     ("lam", "l4", "lam")],
    lambda s1, s2, lam, **prm: (lambda out: [out[0], tuple(out[1:])])(oracle(slide2.slide2, s1, s2, lam, **prm)),
    slide2_draw),
}


@pytest.mark.parametrize("name", [pytest.param(k, marks=pytest.mark.xdist_group(f"adjoint_{k}")) for k in CASES])
def test_parity_adjoint_planar(name):
  run_case(name, CASES[name], source_hash=SOURCE_HASH)
