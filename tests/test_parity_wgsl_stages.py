"""Stage parity: the kernel's contact set against the oracle's broadphase and narrowphase, from identical states.

With one substep per step, the scratch rows a one-step launch leaves (engine.wgsl.contact_set) hold the pair table
its broadphase built from the input state and the contacts its narrowphase found at the poses `integrate` predicted
from it: exactly oracle contact_plan -> motor_loads -> integrate -> narrowphase on the same float32 input. Both lay
pairs and contact slots out in the plan's canonical order (plane pairs, then each type-pair block in the broadphase's
(column 0, column 1) order), so they compare slot by slot: the pair tables must be identical, every contact of a
live pair must have the same valid flag, and the valid contacts' rows (normal, ra, rb in the bodies' frames,
friction, restitution, approach speed) must agree within TOL. The narrowphase pair functions alone, on random pairs
with degenerate cases, are in test_parity_narrowphase.py.
"""
from __future__ import annotations
import numpy as np
import pytest
from tinygrad import Tensor
import engine.wgsl as wgsl
from engine.parity import kicked_states
from engine.scene import build_model, load_scene_dict
from kernels.program import contact_tables
from oracle.actuators import motor_loads
from oracle.contacts import ROW, VALID, contact_plan, narrowphase
from oracle.integrate import integrate
from test_parity_wgsl import scene_params, skip_if_miscompiled
from tests.helpers import wgsl_checked  # noqa: F401 (autouse)

BATCH, NOISE = 16, 0.5
# [m] for ra, rb; [-] for n; [m/s] for the approach speed. Measured max over the scenes on lavapipe (Mesa 25): see
# the printed line of each scene (pytest -s)
TOL = 1e-5


def oracle_contacts(model, p32: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
  """The oracle's pair table (B, NPAIR, 2) and contacts (B, NSLOT, ROW) for one substep of dt from p32."""
  packed = Tensor(p32).contiguous().realize()
  plan = contact_plan(model, packed)
  force, torque = motor_loads(model, packed, None)
  work = integrate(model, packed, model.dt, force, torque).contiguous().realize()
  return plan.pairs.numpy(), narrowphase(model, plan, work).numpy()


def kernel_contacts(model, p32: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
  _, scratch = wgsl.step_scratch(model, Tensor(p32, device="WEBGPU"))
  pairs, rows = wgsl.contact_set(model, scratch)
  return pairs.numpy(), rows.numpy()


@pytest.mark.parametrize("path", scene_params(contacts=True))
def test_parity_contact_set(path):
  skip_if_miscompiled(path.stem)
  scene = {**load_scene_dict(path), "substeps": 1}
  cpu, gpu = build_model(scene), build_model(scene, device="WEBGPU")
  p32 = kicked_states(cpu, BATCH, seed=0, noise=NOISE)[0].astype(np.float32)
  want_pairs, want = oracle_contacts(cpu, p32)
  got_pairs, got = kernel_contacts(gpu, p32)
  np.testing.assert_array_equal(got_pairs, want_pairs, err_msg=f"{path.stem}: pair tables differ")
  # each contact slot's pair (the plan repeats a pair's row once per slot: contact_tables' SLOT_PAIR)
  consts, flat = contact_tables(cpu)
  slot_pair = np.array(flat[consts["T_SLOT_PAIR"]:consts["T_SLOT_PAIR"] + consts["NSLOT"]])
  live = want_pairs[:, slot_pair, 0] >= 0                        # (B, NSLOT): the slot belongs to a candidate pair
  assert live.any(), f"{path.stem}: no candidate pairs at all, nothing compared"
  flips = live & ((got[..., VALID] > 0.5) != (want[..., VALID] > 0.5))
  assert not flips.any(), f"{path.stem}: valid flags differ at (env, slot) {np.argwhere(flips)[:5].tolist()}"
  both = live & (want[..., VALID] > 0.5)
  err = np.abs(got - want)[both].max(0) if both.any() else np.zeros(ROW)
  print(f"\n{path.stem}: {int(live.sum())} live slots, {int(both.sum())} valid; max |diff| n {err[1:4].max():.2e}, "
        f"ra {err[4:7].max():.2e}, rb {err[7:10].max():.2e}, friction/restitution {err[10:12].max():.2e}, "
        f"approach {err[12]:.2e}")
  assert both.any(), f"{path.stem}: no valid contacts, nothing compared"
  assert err.max() < TOL, f"{path.stem}: contact rows differ by {err.max():.3e} (per column {err.tolist()})"
