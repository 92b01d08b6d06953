"""The depenetration cap (contact.max_depenetration, oracle/solve.py depenetration): a contact may undo what its
points approached in the substep plus max_depenetration * h, never more. Bodies that start overlapping then separate
at that rate instead of being thrown apart in one substep; contacts that only meet their own approach (at rest, or
landing) are untouched. Float64 oracle on the CPU device; the kernel's parity is in tests/test_parity_wgsl_contacts.py
and tests/test_parity_grad_contact.py."""
import numpy as np
import pytest
from tinygrad import Tensor
import engine
from engine.grad import rollout_grad
from tests.helpers import EPS, F64, sunk_pair

G = 9.81
DEPEN = 0.5     # [m/s]
SINK = 0.02     # [m] the ball's initial overlap with the floor

pytestmark = pytest.mark.xdist_group("depenetration")


def sunk_ball(depen: float) -> dict:
  """A 10 cm ball SINK into the floor, no gravity: nothing but the overlap moves it."""
  return {"name": "sunk_ball", "gravity": [0.0, 0.0, 0.0], "dt": 1 / 240, "substeps": 5, "iterations": 1,
          "contact": {"max_depenetration": depen} if depen else {},
          "world": {"geoms": [{"name": "floor", "type": "plane", "size": [3.0, 3.0]}]},
          "bodies": [{"name": "ball", "pos": [0.0, 0.0, 0.1 - SINK], "mass": 1.0,
                      "geoms": [{"type": "sphere", "size": [0.1]}]}]}


def test_verify_depenetration_rate():
  """Capped, the overlap shrinks at exactly max_depenetration (DEPEN * h a substep) until it is gone, and the ball
  gains no speed: every substep's push is a position change only (its recovered velocity is removed by the velocity
  pass, restitution 0 from rest). Uncapped, one substep removes it all."""
  for depen in (DEPEN, 0.0):
    sim = engine.Simulator(engine.load_scene(sunk_ball(depen), **F64))
    _, out = sim.trajectory(sim.reset(), 12)
    overlap = 0.1 - out["pos"][:, 0, 0, 2]
    want = np.maximum(SINK - depen * out["t"], 0.0) if depen else np.r_[SINK, np.zeros(len(overlap) - 1)]
    np.testing.assert_allclose(overlap, want, rtol=0, atol=1e-9)
    assert np.abs(out["vel"][:, 0, 0]).max() < 1e-9


def test_verify_depenetration_jointed_pair():
  """Two hinged boxes 30 mm into the floor, gravity on. Uncapped, the first substeps' pushes fight the hinge and throw
  the pair up at many m/s (the converted humanoidstandup flew ~10 m up so). Capped at DEPEN: no body moves faster than
  DEPEN, the centre of mass rises at most DEPEN^2 / (2 g) above where it rests (what a body leaving the floor at DEPEN
  could climb), and after 0.5 s the pair rests on the floor, not in it."""
  sim = engine.Simulator(engine.load_scene(sunk_pair(0.0), **F64))
  _, out = sim.trajectory(sim.reset(), 6)
  assert np.abs(out["vel"][:, 0]).max() > 5.0, "the uncapped pair should be thrown out (the defect the cap fixes)"

  sim = engine.Simulator(engine.load_scene(sunk_pair(DEPEN), **F64))
  _, out = sim.trajectory(sim.reset(), 120)
  com = out["pos"][:, 0, :, 2].mean(-1)
  speed = np.linalg.norm(out["vel"][:, 0], axis=-1).max()
  print(f"capped: max speed {speed:.3f} m/s, COM overshoot {1e3 * (com.max() - 0.05):.2f} mm, rests at "
        f"{1e3 * com[-1]:.3f} mm")
  assert speed < DEPEN
  assert com.max() - 0.05 < DEPEN ** 2 / (2 * G)
  assert abs(com[-1] - 0.05) < 1e-4, "rests on the floor, not in it"
  assert np.abs(out["vel"][-1]).max() < 1e-3 and np.abs(out["angvel"][-1]).max() < 1e-2


@pytest.mark.parametrize("depen,want", [(DEPEN, 1.0), (0.0, 0.0)], ids=["capped", "uncapped"])
def test_grad_depenetration(depen: float, want: float):
  """d z_T / d z_0 of the sunk ball after 2 steps (still overlapping when capped): 1 capped (each push is DEPEN * h
  whatever the depth, so the ball keeps its offset), 0 uncapped (the push puts it on the floor whatever the depth).
  Autograd through the float64 oracle against the central difference and the value the rule says."""
  model = engine.load_scene(sunk_ball(depen), **F64)
  sim = engine.Simulator(model, batch=2)
  s = sim.reset()
  pos = s.body_pos.numpy().copy()
  pos[:, 0, 2] += [EPS, -EPS]
  z = sim.rollout(s.replace(body_pos=Tensor(pos, **F64)), 2).body_pos.numpy()[:, 0, 2]
  fd = (z[0] - z[1]) / (2 * EPS)
  _, adj, _ = rollout_grad(model, engine.Simulator(model).reset(), 2, lambda st: st.body_pos[0, 0, 2])
  g = float(adj.body_pos.numpy()[0, 0, 2])
  print(f"{'capped' if depen else 'uncapped'}: autograd {g:.12f}, central difference {fd:.12f}")
  assert abs(g - want) < 1e-9 and abs(fd - want) < 1e-6
