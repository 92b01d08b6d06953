"""The backward kernel on LANES > 1 invocations per env (issue 17: keep the forward's layout options) against one lane:
the same step's gradients with respect to the state, the controls and the parameter row, from a state in contact
(the contact stages are where the lanes share work: the solve's joints and slots, the contact velocity pass's slots
and the narrowphase's pairs run on their lanes and each body's lane gathers their records).

The state and control gradients add up in the one-lane order on every body's lane: measured 2026-11-27 in contact,
bounce and armed_lander equal bit for bit, cradle 1.9e-9 relative, stack10 x1 1.6e-7 to 9.0e-7 (two states), float32
rounding where a body's slots gather in another order than the one lane's. The parameter gradients are per-lane
partial sums added in lane order at the end, which reassociates float32 sums: up to 2.0e-7 relative (stack10 x1,
armed_lander 1.7e-7). REL = 1e-6 is a few float32 roundings of a sum: a lost or doubled record is off by a contact's
whole share (bounce's one contact carries all of its impact's gradient), orders of magnitude more. A case must be in
contact in its step (a geom parameter has a gradient), or the contact stages' lanes would go unchecked: cradle's
balls touch at its start, bounce lands in step 111, armed_lander's feet in step 81.

Each case compiles a 32-lane backward program (lavapipe: 45 s to 5 min), so the default suite runs one contact scene,
a box bouncing on its corners (the narrowphase's, the contact passes' and the restitution stage's lanes: equal bit for
bit, 2026-11-29), and `make test-slow` the ball's bounce, joints with contacts (cradle), the armature stage with
contacts (armed_lander) and muscles on tendons without contacts (leg2: state 2.3e-7, controls equal, parameters
1.5e-8).
"""
from __future__ import annotations
import numpy as np
import pytest
from tinygrad import Tensor
import engine
from engine import wgsl_backward
from engine.simulator import Simulator
from oracle.packed import pack_state
from tests.helpers import SCENES, box_bounce, wgsl_checked  # noqa: F401 (autouse)

REL = 1e-6
# scene, batch, env-steps from its kicked start to a state in contact (bounce: the step of its first impact), and the
# tape's mode (None: store where it fits, kernels/tape.py store_mode; False: replay each substep)
CASES = [pytest.param("bounce", 2, 110, None, id="bounce", marks=pytest.mark.slow),
         pytest.param("bounce", 2, 110, False, id="bounce-replay", marks=pytest.mark.slow),
         pytest.param("cradle", 2, 0, None, id="cradle", marks=pytest.mark.slow),
         # the restitution stage's pairs on their lanes: a box's first corner strikes in step 26 (env 0)
         pytest.param("box_bounce", 2, 25, None, id="box_bounce"),
         # the armature stage (lane 0's) with contacts: a free box standing on two armed legs; 5 min to compile
         pytest.param("armed_lander", 2, 80, None, id="armed_lander", marks=pytest.mark.slow),
         # muscles, tendons and the activations (lane 0's), on joints without contacts
         pytest.param("leg2", 2, 5, None, id="leg2", marks=pytest.mark.slow)]
SOURCES = {"armed_lander": SCENES.parent / "tests" / "mjcf" / "armed_lander.xml", "box_bounce": box_bounce()}


def rel(a: np.ndarray, b: np.ndarray) -> float:
  return float(np.linalg.norm(a - b) / max(np.linalg.norm(a), 1e-30))


@pytest.mark.parametrize("name,batch,steps,store", CASES)
def test_parity_grad_lanes(name: str, batch: int, steps: int, store: bool | None):
  model = engine.load_scene(SOURCES.get(name, SCENES / f"{name}.json"), device="WEBGPU")
  sim = Simulator(model, batch, backend="wgsl")
  state = sim.reset(seed=1, noise=0.3)
  for _ in range(steps): state = sim.step(state)
  packed = pack_state(state, model).contiguous().realize()
  rng = np.random.default_rng(0)
  gout = Tensor(rng.normal(size=packed.shape).astype(np.float32), device="WEBGPU").realize()
  ctrl = Tensor(rng.normal(size=(batch, model.nact)).astype(np.float32), device="WEBGPU") if model.nact else None
  one, many = ([g.numpy() for g in wgsl_backward.step_vjp(model, packed, ctrl, gout, store=store, lanes=lanes)]
               for lanes in (1, 32))
  if name != "leg2":   # a contact in this step: its geoms' parameters have a gradient
    geom = wgsl_backward.param_grads(model, Tensor(one[2]))
    touch = {k: float(np.abs(geom[k].numpy()).max()) for k in ("geom_size", "geom_friction", "geom_restitution")}
    print(f"{name}: largest geom parameter gradients {touch}")
    assert max(touch.values()) > 0, "no contact in this step: the lanes' contact stages would go untested"
  for field, a, b in zip(("state", "ctrl", "params"), one, many):
    assert np.isfinite(b).all(), field
    print(f"{name} x{batch}, 32 lanes against 1, {field}: relative {rel(a, b):.2e}, equal {np.array_equal(a, b)}")
    assert rel(a, b) <= REL, (field, rel(a, b))


def test_parity_grad_lanes_too_many_is_named():
  """Asked for lanes whose shared state overflows workgroup memory, the backward names the bytes instead of falling
  back silently (pile200: 200 bodies); LANES and the default fall back to one lane."""
  model = engine.load_scene(SCENES / "pile200.json", device="WEBGPU")
  packed = Tensor.zeros(1, model.nbody, 13, device="WEBGPU")
  with pytest.raises(ValueError, match="workgroup memory"):
    wgsl_backward.step_vjp(model, packed, None, packed, lanes=32)
  assert wgsl_backward.backward_lanes(model, 1) == 1

