"""Gradients through muscles (issue 18): d (final hip angle) / d (each muscle's excitation, held) and d / d (each
muscle's F0) on leg2, by the oracle's reverse mode (engine.grad.rollout_grad) against float64 central differences,
within 1e-4 relative. The kernel's backward is held to the oracle's autograd on every scene, leg2 and muscle_hang
included, by tests/test_parity_grad.py.

The run: 20 env-steps (40 ms, 200 substeps) from leg2's hanging pose, the four muscles excited at 0.7, 0.2, 0.5 and
0.3, so every activation is rising or falling through the run. Step sizes: 1e-6 on an excitation, 1e-6 F0 on F0;
the central difference's truncation error is O(eps^2) and its rounding ~1e-16 |f| / eps, both far below 1e-4 of
these derivatives (measured agreement: within 5e-8 relative).
"""
from __future__ import annotations
import numpy as np
from tinygrad import Tensor, dtypes
from engine.grad import rollout_grad
from engine.scene import load_scene
from engine.simulator import Simulator
from tests.helpers import SCENES, reference

STEPS = 20
EXCITATION = np.array([0.7, 0.2, 0.5, 0.3])


def hip_angle(state) -> Tensor:
  """leg2's hip angle [rad] per env: the thigh's rotation about y, 2 atan(q_y / q_w) (|angle| < pi)."""
  q = state.body_quat[:, 0]
  return 2 * (q[:, 2] / q[:, 0]).atan()


def test_grad_muscle_leg2_excitation_and_force():
  model = load_scene(SCENES / "leg2.json", dtypes.float64, "CPU")
  m = model.nact
  start = Simulator(model, batch=1).reset()
  _, _, g = rollout_grad(model, start, STEPS, lambda s: hip_angle(s).sum(), wrt=("act_gainprm",),
                         ctrl=np.broadcast_to(EXCITATION, (STEPS, 1, m)).copy())
  d_exc = g["ctrl"].numpy().sum(0)[0]            # the excitation is held: the sum of the per-step gradients
  d_force = g["act_gainprm"].numpy()[:, 2]
  # central differences, all in one batched float64 rollout: env 2i +- excitation i, env 2m + 2i +- F0 i; a golden
  # file (tests/golden.py). The test took 86 s in the cold 2-worker suite before, 73 s after (2026-11-27): most of it
  # is rollout_grad's capture of leg2's float64 substep VJP
  eps_e, eps_f = 1e-6, 1e-6 * model.act_gainprm.numpy()[:, 2]
  def compute():
    B = 4 * m
    ctrl = np.tile(EXCITATION, (B, 1))
    prm = np.tile(model.act_gainprm.numpy(), (B, 1, 1))
    for i in range(m):
      ctrl[2 * i, i] += eps_e
      ctrl[2 * i + 1, i] -= eps_e
      prm[2 * m + 2 * i, i, 2] += eps_f[i]
      prm[2 * m + 2 * i + 1, i, 2] -= eps_f[i]
    batched = model.replace(act_gainprm=Tensor(prm, dtype=dtypes.float64, device="CPU"))
    sim = Simulator(batched, batch=B, tier_up=0)
    hip = hip_angle(sim.rollout(sim.reset(), STEPS, ctrl=ctrl)).numpy()
    return {"exc": (hip[0:2 * m:2] - hip[1:2 * m:2]) / (2 * eps_e),
            "force": (hip[2 * m::2] - hip[2 * m + 1::2]) / (2 * eps_f)}
  ref = reference("grad_muscle_leg2_fd", dict(scene="leg2", steps=STEPS, excitation=EXCITATION.tolist(), eps=1e-6),
                  compute)
  fd_exc, fd_force = ref["exc"], ref["force"]
  print(f"\nd hip / d excitation {d_exc} (central differences {fd_exc})\nd hip / d F0 {d_force} ({fd_force})")
  assert np.abs(fd_exc).min() > 1e-4 and np.abs(fd_force).min() > 1e-8   # every muscle moves the hip
  np.testing.assert_allclose(d_exc, fd_exc, rtol=1e-4)
  np.testing.assert_allclose(d_force, fd_force, rtol=1e-4)
