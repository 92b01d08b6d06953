"""Gradients through rollouts vs central finite differences in float64 on the CPU device (DESIGN sec. 5).

Reverse mode is engine.grad.rollout_grad (tinygrad autograd per substep, chained); finite differences perturb the
same inputs in a batch of envs (model parameters with a leading batch axis), so both see the same function."""
import numpy as np
import pytest
import engine
from tinygrad import Tensor
from engine.grad import rollout_grad
from engine.scene import load_scene_dict
from tests.helpers import EPS, F64, SCENES, fd_batch, loss_t

# the pendulum fixture is this module's: its tests share one worker under --dist loadgroup
pytestmark = pytest.mark.xdist_group("pendulum_f64")


@pytest.fixture(scope="module")
def pendulum():
  model = engine.load_scene(SCENES / "pendulum.json", **F64)
  # 0.25 s (60 steps, 1,200 substep VJPs): long enough for a swing's worth of nonlinearity; each substep VJP costs
  # ~40 ms on 2 CPU cores, so 1 s took ~4 min of the suite
  steps = int(round(0.25 / model.dt))
  loss, adj, params = rollout_grad(model, engine.Simulator(model).reset(), steps, loss_t, wrt=("jnt_anchor_child",))
  return model, steps, loss, adj, params


@pytest.mark.parametrize("c", [0, 2])
def test_grad_final_position_wrt_initial_velocity(pendulum, c):
  model, steps, _, adj, _ = pendulum
  def perturb(m, s):
    v = s.body_vel.numpy().copy()
    v[0, 0, c] += EPS
    v[1, 0, c] -= EPS
    return m, s.replace(body_vel=Tensor(v, **F64))
  fd = fd_batch(f"grad_pendulum_vel{c}", "pendulum", steps, perturb, c=c)
  g = adj.body_vel.numpy()[0, 0, c]
  assert abs(g - fd) <= 1e-4 * max(abs(fd), 1e-3), (g, fd)
  assert np.sign(g) == np.sign(fd)


def test_grad_final_position_wrt_link_length(pendulum):
  """The link length L scales the bob's joint anchor: d loss / dL = grad(anchor) . anchor / L."""
  model, steps, _, _, params = pendulum
  a = model.jnt_anchor_child.numpy()
  g = float((params["jnt_anchor_child"].numpy() * a).sum())   # directional derivative along anchor * (1 + s)
  def perturb(m, s):
    anchor = m.jnt_anchor_child.numpy()
    return m.replace(jnt_anchor_child=Tensor(np.stack([anchor * (1 + EPS), anchor * (1 - EPS)]), **F64)), s
  fd = fd_batch("grad_pendulum_link_length", "pendulum", steps, perturb)
  assert abs(g - fd) <= 1e-4 * max(abs(fd), 1e-3), (g, fd)


def test_grad_sign_free_fall():
  """d z(T) / d vz(0) = T exactly for a free body: magnitude and sign."""
  d = load_scene_dict(SCENES / "pendulum.json")
  d["joints"] = []
  model = engine.load_scene(d, **F64)
  # 12 steps (240 substep VJPs, 12 checkpointed steps): the identity is exact at any horizon, and 48 spent ~6 s more
  # replaying VJPs (~8 ms each) for nothing the check sees
  steps = 12
  _, adj, _ = rollout_grad(model, engine.Simulator(model).reset(), steps, lambda s: s.body_pos[0, 0, 2])
  assert abs(adj.body_vel.numpy()[0, 0, 2] - steps * model.dt) < 1e-9
  assert abs(adj.body_pos.numpy()[0, 0, 2] - 1.0) < 1e-9


@pytest.mark.slow   # 2.5 min of the clean-clone suite (2026-11-25), all of it compiling pendulum_swingup's float32 VJP,
                   # which no other test shares
def test_grad_ctrl_forms_share_one_jit():
  """The controls may come as a numpy sequence, a Tensor sequence, a list mixing both or one held (B, nact) array, in
  any order through one cached grader: each gives the loss of stepping the Simulator with the same controls (a JIT fed
  a control in another view used to refuse it, or could read a stale buffer)."""
  model = engine.load_scene(SCENES.parent / "engine" / "tasks" / "scenes" / "pendulum_swingup.json")
  sim = engine.Simulator(model, batch=2)
  start = sim.reset(seed=1)
  c = np.random.default_rng(0).uniform(-1, 1, (3, 2, model.nact)).astype(np.float32)
  def stepped(seq):
    state = start
    for u in seq: state = sim.step(state, u)
    return float(state.body_pos.sum().numpy())
  for steps, ctrl, seq in ((3, c, c), (1, c[:1], c[:1]), (1, Tensor(c[0]), c[:1]), (3, Tensor(c), c),
                           (2, [Tensor(c[0]), c[1]], c[:2]), (3, c[0], [c[0]] * 3)):
    loss, _, params = rollout_grad(model, start, steps, lambda s: s.body_pos.sum(), ctrl=ctrl)
    assert params["ctrl"].shape == (steps, 2, model.nact)
    np.testing.assert_allclose(float(loss.numpy()), stepped(seq), rtol=1e-6, err_msg=f"{steps} steps, {type(ctrl)}")
