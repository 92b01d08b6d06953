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
import numpy as np
import pytest
from engine.parity import compare_contacts
from test_parity_wgsl import scene_params, skip_if_miscompiled
from tests.helpers import cached_simulator, wgsl_checked  # noqa: F401 (autouse)

TOL = 1e-5   # [-] for n; [m] for ra, rb (body frames); [m/s] for the approach speed


# env-steps to let the bodies of the scenes that start in the air come down to the ground first (0.8 m and 1.1 m
# drops: ~0.4 s), so that the plane pairs are live and touch
SETTLE = {"drop": 96, "bounce": 110}


# pile200 (2.5 min of the clean-clone suite, 2026-11-25) is slow: pile runs the same stages on 36 bodies
@pytest.mark.parametrize("path", [pytest.param(*p.values, id=p.id, marks=[*p.marks, pytest.mark.slow])
                                  if p.id == "pile200" else p for p in scene_params(contacts=True)])
def test_parity_contact_set(path):
  skip_if_miscompiled(path.stem)
  c = compare_contacts(path, settle=SETTLE.get(path.stem, 0), simulator=cached_simulator)
  print(f"\n{path.stem}: {c}")
  assert c["live"] and c["valid"], f"{path.stem}: no candidate pairs or no valid contacts, nothing compared"
  assert c["pairs_differ"] == 0 and c["flips"] == 0, f"{path.stem}: pair tables or valid flags differ: {c}"
  assert max(c[k] for k in ("n", "ra", "rb", "material", "approach")) < TOL, f"{path.stem}: {c}"


def test_parity_broadphase_overflow():
  """The kernel's spatial hash against the oracle's, where both overflow: test_broadphase.py's random layout (13
  hashed spheres, capsules and boxes of 10 bodies and the world, an excluded and a colliding joint) with room for 2
  pairs per type pair and 2 geoms per hash bucket, from 3 random draws of 4 envs each (poses, velocities, geom
  sizes), clustered (pairs and buckets overflow) to spread out (nothing lost). The pair tables (which pairs, in
  which slots) and the overflow counts must be identical."""
  from engine import load_scene, wgsl
  from oracle.contacts import find_pairs
  from test_broadphase import random_inputs, random_scene
  scene = random_scene({"pair_capacity": 2, "hash_slots": 2})
  model, gpu = load_scene(scene), load_scene(scene, device="WEBGPU")
  seen = []
  for seed, spread, scale in ((1, 0.2, 3.0), (3, 0.5, 1.0), (5, 2.0, 0.5)):
    packed, size = random_inputs(model, seed, spread, 0.5, scale, 0.0)
    want_pairs, want_over = (t.numpy() for t in find_pairs(model.replace(geom_size=size), packed))
    g = gpu.replace(geom_size=size.to("WEBGPU").realize())
    out, scratch = wgsl.step_scratch(g, packed.to("WEBGPU").realize())
    scratch = scratch.realize()
    got_pairs = wgsl.contact_set(g, scratch)[0].numpy()
    got_over = scratch[:, wgsl.tables(g)[1]["OVF"]].numpy().astype(np.int32)
    np.testing.assert_array_equal(got_pairs, want_pairs, err_msg=f"draw {seed}")
    np.testing.assert_array_equal(got_over, want_over, err_msg=f"draw {seed}")
    seen += list(want_over)
  assert min(seen) == 0 and max(seen) > 0, seen   # both regimes exercised


def test_parity_broadphase_buckets_across_steps():
  """A launch of several env-steps clears only the hash buckets its last step filled (kernels/broadphase.wgsl
  hash_fresh; all of them at its first step). The pile's 36 bodies, kicked by 2 m/s so that geoms change cells, run
  STEPS env-steps in one launch and in STEPS one-step launches (each clears every bucket): the states, the bucket
  tables the last step's broadphase left, the pair tables and the overflow counts must be bit-identical. The bucket
  tables must also differ from those of the first step's, or nothing moved and nothing was tested."""
  from engine import load_scene, wgsl
  from engine.parity import kicked_states
  from tests.helpers import SCENES
  from tinygrad import Tensor
  steps = 6
  model = load_scene(SCENES / "pile.json", device="WEBGPU")
  c = wgsl.tables(model)[1]
  buckets = slice(c["SCR_BUCKET"], c["SCR_ROW"])
  start = Tensor(kicked_states(model, 4, seed=0, noise=2.0)[0].astype(np.float32), device="WEBGPU").realize()
  def launch(packed, k):
    out, scratch = wgsl.step_scratch(model, packed, steps=k)
    Tensor.realize(out, scratch)
    return out, scratch.numpy()
  fused, fused_scr = launch(start, steps)
  split, first_scr = launch(start, 1)
  dropped = first_scr[:, c["OVF"]].copy()
  for _ in range(steps - 1):
    split, split_scr = launch(split, 1)
    dropped += split_scr[:, c["OVF"]]
  np.testing.assert_array_equal(fused.numpy(), split.numpy())
  np.testing.assert_array_equal(fused_scr[:, buckets], split_scr[:, buckets])
  np.testing.assert_array_equal(fused_scr[:, :2 * c["NPAIR"]], split_scr[:, :2 * c["NPAIR"]])   # the pair tables
  np.testing.assert_array_equal(fused_scr[:, c["OVF"]], dropped)   # summed over the launch's steps
  assert (first_scr[:, buckets] != split_scr[:, buckets]).any(), "no geom changed bucket: the test saw no clearing"
