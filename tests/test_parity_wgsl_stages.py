"""Stage parity: the kernel's contact set against the oracle's broadphase and narrowphase, from identical states.

engine.parity.compare_contacts explains the measure: with one substep, the pair table the kernel's broadphase built
and the contacts its narrowphase found at the poses `integrate` predicted, against the oracle's contact_plan ->
integrate -> narrowphase from the same float32 states, slot by slot in the plan's canonical order. The pair tables
and the valid flags must be identical, and the valid contacts' rows within TOL. Measured on lavapipe (Mesa 25), 16
envs kicked by 0.5: largest difference 6e-7 (pile's normals), stack10 9e-10 in n. Before box_box preferred a's face
over b's by a bias, stack10's normals differed by 6e-4 (two stacked boxes' face separations 3e-8 m apart, which
float32 rounding ordered differently in the two backends). The pair functions alone, on random pairs with degenerate
cases, are in test_parity_narrowphase.py.
"""
from __future__ import annotations
import pytest
from engine.parity import compare_contacts
from test_parity_wgsl import scene_params, skip_if_miscompiled
from tests.helpers import wgsl_checked  # noqa: F401 (autouse)

TOL = 1e-5   # [-] for n; [m] for ra, rb (body frames); [m/s] for the approach speed


@pytest.mark.parametrize("path", scene_params(contacts=True))
def test_parity_contact_set(path):
  skip_if_miscompiled(path.stem)
  c = compare_contacts(path)
  print(f"\n{path.stem}: {c}")
  assert c["live"] and c["valid"], f"{path.stem}: no candidate pairs or no valid contacts, nothing compared"
  assert c["pairs_differ"] == 0 and c["flips"] == 0, f"{path.stem}: pair tables or valid flags differ: {c}"
  assert max(c[k] for k in ("n", "ra", "rb", "material", "approach")) < TOL, f"{path.stem}: {c}"
