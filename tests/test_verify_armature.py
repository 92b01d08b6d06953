"""oracle/armature.py's Newton step against bench/study_armature.py's numpy one
(armature_solve, "joint_all"), one substep from MuJoCo's kicked state, float64."""
from __future__ import annotations
import re
import sys
import warnings
from pathlib import Path
import numpy as np
import pytest
from tinygrad import Tensor, dtypes
from tests.helpers import packed_rows

mujoco = pytest.importorskip("mujoco")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
import study_armature as S  # noqa: E402


@pytest.mark.parametrize("name", ["double_arm", "cart_arm", "floating_arm", "ant_free"])
def test_verify_armature_step_matches_the_study(name, tmp_path):
  from engine.mjcf import MJCFWarning, bodies_from_mujoco, compile_mjcf, from_mjcf
  from engine.scene import load_scene, load_scene_dict
  from oracle.armature import armature_step, trees
  xml = S.MODELS[name]()
  work = tmp_path / f"{name}.xml"
  work.write_text(xml)
  m, d = compile_mjcf(work)
  stripped = tmp_path / f"{name}_0.xml"
  stripped.write_text(re.sub(r'armature="[^"]*"', 'armature="0"', xml))
  with warnings.catch_warnings():
    warnings.simplefilter("ignore", MJCFWarning)
    scene = load_scene_dict(from_mjcf(stripped))
  model = load_scene(scene, dtypes.float64, "CPU")
  ids = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, j["name"]) for j in scene["joints"]]
  arm = [float(m.dof_armature[m.jnt_dofadr[k]]) for k in ids]
  damping = [float(m.dof_damping[m.jnt_dofadr[k]]) for k in ids]
  rng = np.random.default_rng(0)
  d0 = mujoco.MjData(m)
  mujoco.mj_kinematics(m, d0)
  d.qvel[:] = rng.normal(0.0, 0.5, m.nv)
  mujoco.mj_forward(m, d)
  ref = bodies_from_mujoco(scene, m, d, d0)
  start = packed_rows(ref)
  h = scene["dt"] / scene["substeps"]
  # a working state some way into the substep: poses moved a little, D and TH accumulated, a prediction beside it
  P = np.concatenate([start, rng.normal(0, 1e-4, (model.nbody, 6))], axis=-1)
  P[:, 0:3] += P[:, 13:16]
  pred = P.copy()
  pred[:, 13:19] += rng.normal(0, 1e-5, (model.nbody, 6))
  tau = [float(rng.normal(0, 0.1)) if a else 0.0 for a in arm]
  tree = S.Tree(model)
  goal = []
  for par, chi, _, _ in tree.joints:
    c = slice(7, 10) if tree.kinds[len(goal)] == "slide" else slice(10, 13)
    a, _, _ = tree.direction(start, len(goal), False)
    goal.append(h * (start[chi, c] - (start[par, c] if par >= 0 else 0.0)) @ a)
  want = S.armature_solve(P.copy(), pred, tree, h, goal, arm, tau, True, True, damping)
  t = {k: Tensor(v[None], dtype=dtypes.float64, device="CPU") for k, v in (("P", P), ("pred", pred), ("s", start))}
  got = t["P"]
  for tr in trees(model):
    tt = Tensor([[tau[j] for j in tr.joints]], dtype=dtypes.float64, device="CPU")
    got = armature_step(model, tr, got, t["pred"], t["s"], h, arm, Tensor(damping, dtype=dtypes.float64), tt)
  got = got.numpy()[0]
  moved = np.abs(want - P).max()
  assert moved > 1e-8   # the step does something
  # the study moves bodies along the motions' tangents, the stage by the exact turns they integrate to: a turn by
  # theta moves a point at lever r off its tangent by at most theta^2 r / 2, and composed turns by their sum's square.
  # Every joint's theta is its child's minus its parent's accumulated rotation (TH), the floating rigid turn the root's
  turned = want[:, 16:19] - P[:, 16:19]
  theta = sum(np.linalg.norm(turned[chi] - (turned[par] if par >= 0 else 0.0)) for par, chi, _, _ in tree.joints)
  theta += np.abs(turned).max() * 3 ** 0.5
  lever = np.abs(P[:, None, 0:3] - P[None, :, 0:3]).max() * 3 ** 0.5 + 1.0   # [m] bodies to anchors, generously
  arc = theta ** 2 * lever / 2
  np.testing.assert_allclose(got[:, :3], want[:, :3], atol=1e-12 + 1e-6 * moved + arc)
  np.testing.assert_allclose(got[:, 13:16], want[:, 13:16], atol=1e-12 + 1e-6 * moved + arc)
  np.testing.assert_allclose(got[:, 16:19], want[:, 16:19], atol=1e-12 + 1e-6 * moved)
  np.testing.assert_allclose(np.abs((got[:, 3:7] * want[:, 3:7]).sum(-1)), 1.0, atol=1e-12)
