"""Joint armature against MuJoCo (issue 19): a measured design for rotor inertia in a joint's coordinate, which the
engine does not have yet. Gymnasium's MuJoCo models put armature on nearly every joint (ant, hopper, reacher, humanoid:
1; half_cheetah 0.1; walker2d 0.01; swimmer 0.1; pusher 0.04), often far above the link's own inertia (reacher:
armature 1 on links of 4e-5 kg m^2), so without it none of them loads (engine/mjcf.py refuses what it cannot carry).

  python bench/study_armature.py                 # every model and variant (~1 h 30 min)
  python bench/study_armature.py --models reacher_arm --variants joint_all
  python bench/study_armature.py --models double_arm --variants joint --substeps 39 78 --iterations 4

MuJoCo's armature A adds A to the joint's diagonal entry of the mass matrix: kinetic energy (A/2) qdot^2 in the joint's
own coordinate q. Maximal coordinates have no body for it. The design that works ("joint_all", docs/mjcf.md
"Armature"): after the Jacobi iterations of the oracle's solve, one Newton step of the implicit-Euler objective over
every joint coordinate of the tree:
- D_j, joint j's coordinate moving at unit rate: the child's subtree turns rigidly about the hinge's axis through its
  anchor (translates along a slide's), which changes no other joint's coordinate or constraint, and, where the tree
  floats (no joint to the world), the whole tree also moves rigidly so that its linear and angular momentum are
  unchanged (a 6x6 solve with the tree's spatial inertia);
- (G + diag(A + c h)) d = A (h qdot0 - dq) - c h dq + h^2 tau - <D, x - x~>_M with G_ij = <D_i, D_j>_M, the bodies'
  inertia terms measured from the poses integrate predicted (x~), dq = q - q0 from the accumulated rotations TH
  (oracle/packed.py; displacements D for a slide), qdot0 at the substep's start, the motor torque tau of an armed
  joint (not loaded in integrate) and the joint's damping c as the term (c h / 2) dq^2 of the same objective; an
  unarmed joint enters with A = 0, its motor in integrate; then the bodies move by sum_j d_j D_j.

It matches MuJoCo within 0.12 deg on every model here, closer than the engine without armature is (variant
"unarmed"). Everything else is the oracle's step as it is (float64, CPU; the model converted by engine/mjcf.py with
its armature zeroed, A read from MuJoCo; the damping of joints outside the rows in the oracle's joint_damping). Numpy
per env, batch 1: a study, not an implementation.

Other variants, each a step towards it:
- "design": one row per armed hinge in sequence (root first), each the exact line search along its own D,
  d = (A (h qdot0 - dq) + h^2 tau - <D, x - x~>_M) / (<D, D>_M + A), with armed joints' damping applied after recover
  along the same D (damping_rows): holds where the armature dwarfs the links' inertia, fails for coupled links;
- "fixed_base": the row never moves the rest of a floating tree (momentum not conserved);
- "torque_in_integrate": motors load the bodies in integrate as the engine does now, not the row;
- "no_gap": the step without its <D, x - x~>_M term;
- "root_recoil": also the root's unarmed joint to the world (the cart's slide) moves along with D, so that D carries no
  momentum along it (cart_arm only);
- "joint": the armed rows solved at once ((G + diag(A)) d = rhs), damping still after recover along each D;
- "joint_all": every hinge and slide of the tree at once, damping in the objective (the design above);
- "unarmed": MuJoCo's armature zeroed too and no rows: the engine as it is, the baseline.
--substeps and --iterations override the converted scene's (rows record them).

Protocol as tests/test_verify_mjcf.py trajectory_errors: MuJoCo's qpos0 with qvel ~ N(0, 0.5) (seed 0), controls a
slow sinusoid at 2 % of each actuator's range, MuJoCo at a 20 times finer timestep (RK4) as the reference, 1 s.
Reported: the worst joint angle error (each hinge: the child's orientation relative to its parent's) and the worst
orientation error of a free body. Results: bench/results_armature.json (merged by model and variant).

Measured before these variants (2026-11-26, with patches to the oracle not kept; the numbers for the record):
- a row beside the others in the Jacobi solve, compliance 1/A toward q0 + h qdot0: no effect at one iteration (the
  row sees none of the motion the other rows give q in that iteration, and the next substep's qdot0 absorbs it);
- the same row after each iteration's average: a cart on a slide with two armed hinges below it 31 deg off (73 with
  the slide's armature too), 14 deg at 4 iterations; a rotor velocity kept as state instead of qdot0: 5.9 deg, and the
  reacher arm 178 deg. Such a row moves the child alone, which changes its children's coordinates and breaks the
  attachments that the other rows then restore. Those runs loaded the motors in integrate, which by itself fails the
  reacher here ("torque_in_integrate").
"""
from __future__ import annotations
import argparse
import importlib.metadata
import json
import re
import sys
import time
import warnings
from pathlib import Path
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
FINE = 20   # MuJoCo substeps per env-step in the reference (tests/test_verify_mjcf.py)
SECONDS = 1.0
RESULTS = ROOT / "bench" / "results_armature.json"

PENDULUM = """<mujoco model="pendulum_armature">
  <option timestep="0.004" integrator="RK4"><flag contact="disable"/></option>
  <worldbody><body name="arm" pos="0 0 2">
    <joint name="hinge" type="hinge" axis="0 1 0" armature="0.05"/>
    <geom type="capsule" fromto="0 0 0 0.3 0 -0.5" size="0.05"/>
  </body></worldbody>
</mujoco>"""
FLOATING = """<mujoco model="floating_arm">
  <option timestep="0.004" integrator="RK4" gravity="0 0 0"><flag contact="disable"/></option>
  <worldbody><body name="base" pos="0 0 1"><freejoint/><geom type="box" size="0.1 0.08 0.06" mass="1"/>
    <body name="arm" pos="0.1 0 0">
      <joint name="shoulder" type="hinge" axis="0 0 1" armature="0.05" damping="0.02"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.04"/>
      <body name="fore" pos="0.3 0 0">
        <joint name="elbow" type="hinge" axis="0 1 0" armature="0.02"/>
        <geom type="capsule" fromto="0 0 0 0.25 0 0" size="0.035"/>
      </body>
    </body>
  </body></worldbody>
  <actuator>
    <motor joint="shoulder" gear="1" ctrlrange="-1 1"/><motor joint="elbow" gear="1" ctrlrange="-1 1"/>
  </actuator>
</mujoco>"""


def reacher_arm() -> str:
  """Gymnasium's reacher.xml without its target (two slides on one body, which the engine cannot convert)."""
  from engine.mjcf import gym_asset
  xml = gym_asset("reacher").read_text()
  return re.sub(r'<body name="target".*?</body>', "", xml, flags=re.S)


def ant_free() -> str:
  """Gymnasium's ant.xml in free fall: no floor, contacts off, its joints' limits off (its ankles start outside their
  ranges, which MuJoCo's soft limits and this engine's hard ones resolve differently): a floating tree of eight armed
  hinges (armature 1 on legs of 1e-4 to 3e-3 kg m^2)."""
  from engine.mjcf import gym_asset
  xml = gym_asset("ant").read_text()
  xml = re.sub(r'<geom conaffinity="1"[^>]*name="floor"[^>]*/>', "", xml)
  xml = xml.replace('<option integrator="RK4" timestep="0.01"/>',
                    '<option integrator="RK4" timestep="0.01"><flag contact="disable"/></option>')
  return xml.replace('damping="1" limited="true"/>', 'damping="1" limited="false"/>')


CART = """<mujoco model="cart_arm">
  <option timestep="0.004" integrator="RK4"><flag contact="disable"/></option>
  <worldbody><body name="cart" pos="0 0 2">
    <joint name="rail" type="slide" axis="1 0 0" damping="0.3"/>
    <geom type="box" size="0.1 0.05 0.05" mass="0.2"/>
    <body name="upper">
      <joint name="shoulder" type="hinge" axis="0 1 0" armature="0.02" damping="0.05"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 -0.3" size="0.03"/>
      <body name="lower" pos="0.3 0 -0.3">
        <joint name="elbow" type="hinge" axis="0 1 0" armature="0.05"/>
        <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.03"/>
      </body>
    </body>
  </body></worldbody>
  <actuator><motor joint="elbow" gear="2" ctrlrange="-1 1"/><motor joint="rail" gear="5" ctrlrange="-1 1"/></actuator>
</mujoco>"""
# the cart's arm hinged to the world: a double pendulum under gravity
DOUBLE = re.sub(r'<joint name="rail"[^>]*/>\s*<geom type="box"[^>]*/>', "", CART).replace(
  '<motor joint="rail" gear="5" ctrlrange="-1 1"/>', "").replace("cart_arm", "double_arm")
MODELS = {"pendulum": lambda: PENDULUM, "reacher_arm": reacher_arm, "floating_arm": lambda: FLOATING,
          "cart_arm": lambda: CART, "double_arm": lambda: DOUBLE, "ant_free": ant_free}
VARIANTS = ("design", "fixed_base", "torque_in_integrate", "no_gap", "root_recoil", "joint", "joint_all", "unarmed")


class Tree:
  """The converted scene's joint tree, numpy: each hinge's parent, child, axis and anchor (parent frame), the child's
  subtree, the bodies of its whole tree and whether that tree floats; the bodies' masses and principal inertias."""

  def __init__(self, model):
    self.joints = list(zip(model.jnt_parent, model.jnt_child, model.jnt_axis_parent.numpy(),
                           model.jnt_anchor_parent.numpy()))
    self.mass, self.inertia = 1.0 / model.body_inv_mass.numpy(), 1.0 / model.body_inv_inertia.numpy()
    self.sub = [self.subtree(c) for _, c, _, _ in self.joints]
    roots = [self.root(c) for _, c, _, _ in self.joints]
    self.tree = [self.subtree(r) for r, _ in roots]
    self.floats = [f for _, f in roots]
    # the joint that joins each tree's root to the world (None: it floats), and whether rows let it recoil
    self.root_joint = [None if f else next(k for k, (p, c, _, _) in enumerate(self.joints) if c == r and p < 0)
                       for r, f in roots]
    self.recoil, self.kinds, self.arm = False, list(model.jnt_type), None

  def subtree(self, b: int) -> list[int]:
    return [b] + [x for p, c, _, _ in self.joints if p == b for x in self.subtree(c)]

  def root(self, b: int) -> tuple[int, bool]:
    """(the tree's root body, whether it floats: no joint joins it to the world)."""
    while True:
      up = [p for p, c, _, _ in self.joints if c == b]
      if not up: return b, True
      if up[0] < 0: return b, False
      b = up[0]

  def inner(self, P: np.ndarray, u: dict, v: dict) -> float:
    """<u, v>_M of two motions {body: (omega, v)} in the bodies' metric (inertia and mass)."""
    zero = (np.zeros(3), np.zeros(3))
    return sum(u[b][0] @ self.world_inertia(P, b) @ v.get(b, zero)[0] + self.mass[b] * u[b][1] @ v.get(b, zero)[1]
               for b in u)

  def offset(self, P: np.ndarray, pred: np.ndarray, mot: dict) -> float:
    """<mot, x - x~>_M: how far the other rows have moved the bodies along mot from their inertial path pred."""
    return self.inner(P, mot, {b: (P[b, 16:19] - pred[b, 16:19], P[b, 13:16] - pred[b, 13:16]) for b in mot})

  def relative(self, P: np.ndarray, j: int, a: np.ndarray, linear: slice, angular: slice) -> float:
    """Joint j's child minus parent (the world: zero) along the axis a, of P's columns `angular` for a hinge or
    `linear` for a slide."""
    par, chi, _, _ = self.joints[j]
    c = linear if self.kinds[j] == "slide" else angular
    return (P[chi, c] - (P[par, c] if par >= 0 else 0.0)) @ a

  def moved(self, P: np.ndarray, j: int, a: np.ndarray) -> float:
    """Joint j's coordinate change since the substep began, from the accumulated rotations TH (a slide's: from the
    accumulated displacements D)."""
    return self.relative(P, j, a, slice(13, 16), slice(16, 19))

  def rate(self, P: np.ndarray, j: int, a: np.ndarray) -> float:
    """Joint j's coordinate rate qdot from the bodies' velocities."""
    return self.relative(P, j, a, slice(7, 10), slice(10, 13))

  def axis(self, P: np.ndarray, j: int) -> tuple[np.ndarray, np.ndarray]:
    """Joint j's (axis, anchor) in the world at the poses P."""
    from engine.npquat import quat_to_mat
    par, _, axis, anchor = self.joints[j]
    rp = quat_to_mat(P[par, 3:7]) if par >= 0 else np.eye(3)
    return rp @ axis, (P[par, 0:3] if par >= 0 else np.zeros(3)) + rp @ anchor

  def world_inertia(self, P: np.ndarray, b: int) -> np.ndarray:
    from engine.npquat import quat_to_mat
    r = quat_to_mat(P[b, 3:7])
    return r @ np.diag(self.inertia[b]) @ r.T

  def direction(self, P: np.ndarray, j: int, floating: bool):
    """Joint j's coordinate moving at unit rate: (world axis, {body: (omega, v)}, inertia I of that motion)."""
    a, p = self.axis(P, j)
    if self.kinds[j] == "slide": mot = {b: (np.zeros(3), a.copy()) for b in self.sub[j]}   # the subtree translates
    else: mot = {b: (a.copy(), np.cross(a, P[b, 0:3] - p)) for b in self.sub[j]}
    if floating and self.floats[j]:   # the whole tree's rigid motion that cancels the momentum
      momentum, spatial = np.zeros(6), np.zeros((6, 6))
      for b in self.tree[j]:
        x, m, inertia = P[b, 0:3], self.mass[b], self.world_inertia(P, b)
        cx = np.array([[0, -x[2], x[1]], [x[2], 0, -x[0]], [-x[1], x[0], 0]])
        spatial += np.block([[inertia - m * cx @ cx, m * cx], [-m * cx, m * np.eye(3)]])
        if b in mot: momentum += np.concatenate([inertia @ mot[b][0] + m * np.cross(x, mot[b][1]), m * mot[b][1]])
      rigid = np.linalg.solve(spatial, -momentum)
      for b in self.tree[j]:
        w, v = mot.get(b, (np.zeros(3), np.zeros(3)))
        mot[b] = (w + rigid[:3], v + rigid[3:] + np.cross(rigid[:3], P[b, 0:3]))
    r = self.root_joint[j]
    if self.recoil and r is not None and r != j and not self.arm[r]:   # the unarmed root joint's freedom recoils
      _, _, e, pr = self.joints[r]   # the world is the root joint's parent: its frame is the world's
      basis = {b: ((np.zeros(3), e.copy()) if self.kinds[r] == "slide" else (e.copy(), np.cross(e, P[b, 0:3] - pr)))
               for b in self.tree[j]}
      c = -self.inner(P, mot, basis) / self.inner(P, basis, basis)
      for b, (w, v) in basis.items():
        w0, v0 = mot.get(b, (np.zeros(3), np.zeros(3)))
        mot[b] = (w0 + c * w, v0 + c * v)
    return a, mot, self.inner(P, mot, mot)


def move(P, mot: dict, d: float) -> None:
  """Moves the bodies of P along the motion mot by d (positions, orientations, D and TH)."""
  from engine.npquat import quat_mul
  for b, (w, v) in mot.items():
    P[b, 0:3] += d * v
    P[b, 13:16] += d * v
    P[b, 16:19] += d * w
    n = np.linalg.norm(d * w)
    if n > 0: P[b, 3:7] = quat_mul(np.array([np.cos(n / 2), *(np.sin(n / 2) * d * w / n)]), P[b, 3:7])


def armature_rows(P, pred, tree: Tree, h, goal, arm, tau, floating: bool, gap: bool):
  """The rows on one env's working state P (nbody, 19), in joint order (root first). pred: the state integrate
  predicted (its D and TH): the bodies' inertia term along the row's motion is measured from it (gap=False: not)."""
  for j in range(len(tree.joints)):
    if arm[j] == 0: continue
    a, mot, inertia = tree.direction(P, j, floating)
    off = tree.offset(P, pred, mot) if gap else 0.0
    move(P, mot, (arm[j] * (goal[j] - tree.moved(P, j, a)) + h * h * tau[j] - off) / (inertia + arm[j]))
  return P


def armature_solve(P, pred, tree: Tree, h, goal, arm, tau, floating: bool, every: bool = False, damping=None):
  """All armed rows at once ("joint" variant): the exact minimiser of the objective over the span of their motions,
  (G + diag(A)) d = rhs with G the motions' Gram matrix in the bodies' metric. every: the rows of every hinge and
  slide, armed or not (A = 0, their motors in integrate), a Newton step over all the tree's joint coordinates
  ("joint_all"). damping: the armed joints' damping c as a term of the same objective, (c h / 2)(q - q0)^2 (implicit
  Euler's damping force -c (q - q0) / h), instead of damping_rows after recover."""
  cdamp = [0.0] * len(tree.joints) if damping is None else damping
  rows = [j for j in range(len(tree.joints)) if arm[j] or (every and tree.kinds[j] in ("hinge", "slide"))]
  mots, rhs = [], []
  for j in rows:
    a, mot, _ = tree.direction(P, j, floating)
    mots.append(mot)
    # an unarmed joint's motor loads the bodies in integrate, so it adds no torque here
    q = tree.moved(P, j, a)
    rhs.append(arm[j] * (goal[j] - q) - cdamp[j] * h * q + (h * h * tau[j] if arm[j] else 0.0)
               - tree.offset(P, pred, mot))
  gram = np.array([[tree.inner(P, u, v) for v in mots] for u in mots])
  d = np.linalg.solve(gram + np.diag([arm[j] + cdamp[j] * h for j in rows]), np.array(rhs))
  total = {}
  for dk, mot in zip(d, mots):
    for b, (w, v) in mot.items():
      w0, v0 = total.get(b, (np.zeros(3), np.zeros(3)))
      total[b] = (w0 + dk * w, v0 + dk * v)
  move(P, total, 1.0)
  return P


def damping_rows(P, tree: Tree, h, arm, damping, floating: bool):
  for j in range(len(tree.joints)):
    if damping[j] == 0: continue
    a, mot, inertia = tree.direction(P, j, floating)
    change = -damping[j] * h * tree.rate(P, j, a) / (inertia + arm[j] + damping[j] * h)
    for b, (w, v) in mot.items():
      P[b, 10:13] += change * w
      P[b, 7:10] += change * v
  return P


def run(name: str, variant: str, substeps: int | None = None, iterations: int | None = None) -> dict:
  """One model and variant; substeps, iterations: override the converted scene's (engine/mjcf.py MAX_SUBSTEP)."""
  import mujoco
  from tinygrad import Tensor, TinyJit, dtypes
  import oracle.step as S
  from engine.mjcf import MJCFWarning, bodies_from_mujoco, compile_mjcf, from_mjcf
  from engine.npquat import quat_conj, quat_mul
  from engine.scene import load_scene, load_scene_dict
  work = Path("/tmp") / f"study_armature_{name}.xml"
  xml = MODELS[name]()
  work.write_text(xml)
  m, d = compile_mjcf(work)
  stripped = work.with_name(work.stem + "_converted.xml")   # the engine's scene: armature zeroed, damping here
  stripped.write_text(re.sub(r'armature="[^"]*"', 'armature="0"', xml))
  with warnings.catch_warnings():
    warnings.simplefilter("ignore", MJCFWarning)
    scene = load_scene_dict(from_mjcf(stripped))
  ids = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, j["name"]) for j in scene["joints"]]
  if variant == "unarmed": m.dof_armature[:] = 0.0   # the baseline: MuJoCo without armature, the engine as it is
  arm = [float(m.dof_armature[m.jnt_dofadr[k]]) for k in ids]
  if any(a and j["type"] != "hinge" for a, j in zip(arm, scene["joints"])):
    raise SystemExit(f"{name}: armature on hinges only in this study")
  # an armed joint's damping acts in damping_rows, with its armature (in "joint_all": every joint's, in the solve);
  # the others keep the engine's own (oracle/joint_damping.py)
  here = [bool(a) or variant == "joint_all" for a in arm]
  damping = [float(m.dof_damping[m.jnt_dofadr[k]]) if t else 0.0 for k, t in zip(ids, here)]
  for jd, t in zip(scene["joints"], here):
    if t: jd["damping"] = 0.0
  if substeps: scene["substeps"] = substeps
  if iterations: scene["iterations"] = iterations
  model = load_scene(scene, dtypes.float64, "CPU")
  tree = Tree(model)
  tree.arm, tree.recoil = arm, variant == "root_recoil"
  # the motors of armed joints act in the rows (unless torque_in_integrate), the others in integrate as always
  armed_motor = np.array([arm[ids.index(int(m.actuator_trnid[k, 0]))] > 0 for k in range(m.nu)], bool)
  d0 = mujoco.MjData(m)
  mujoco.mj_kinematics(m, d0)
  d.qvel[:] = np.random.default_rng(0).normal(0.0, 0.5, m.nv)
  mujoco.mj_forward(m, d)
  ref = bodies_from_mujoco(scene, m, d, d0)
  packed = np.concatenate([ref["pos"], ref["quat"], ref["vel"], ref["angvel"]], axis=-1)[None]
  m.opt.timestep = scene["dt"] / FINE
  h = scene["dt"] / scene["substeps"]
  def t64(x): return Tensor(x, dtype=dtypes.float64, device="CPU").realize()
  @TinyJit
  def predict(p, c):
    return S.integrate(model, p, h, *S.motor_loads(model, p, c if model.nact else None, None)).contiguous().realize()
  @TinyJit
  def solve(w, c):
    lam = S.init_lambda(model)
    for _ in range(model.iterations): w, lam, _ = S.solve(model, w, lam, h, ctrl=c if model.nact else None)
    return w.realize()
  damped = S.has_damping(model)
  @TinyJit
  def recover(w, c):   # and the engine's own damping of the joints whose damping stayed in the scene (unarmed)
    w = S.recover(w, h)
    if damped: w = S.joint_damping(model, w, h, c if model.nact else None)
    return w.contiguous().realize()
  index = {b["name"]: i for i, b in enumerate(scene["bodies"])}
  free = [i for i in range(model.nbody) if i not in model.jnt_child]
  worst_joint = worst_free = 0.0
  start = time.perf_counter()
  for step in range(int(round(SECONDS / scene["dt"]))):
    ctrl = 0.02 * np.sin(3.0 * np.arange(1, m.nu + 1) * step * scene["dt"]) * m.actuator_ctrlrange[:, 1]
    d.ctrl[:] = ctrl
    for _ in range(FINE): mujoco.mj_step(m, d)
    tau = np.zeros(len(ids))
    for k in range(m.nu): tau[ids.index(int(m.actuator_trnid[k, 0]))] = m.actuator_gear[k, 0] * ctrl[k]
    in_integrate = variant == "torque_in_integrate"
    for _ in range(scene["substeps"]):
      P0 = packed[0]
      goal = [h * tree.rate(P0, j, tree.axis(P0, j)[0]) for j in range(len(tree.joints))]   # h qdot0
      w = predict(t64(packed), t64(ctrl[None] if in_integrate else np.where(armed_motor, 0.0, ctrl)[None])).numpy()
      pred = w[0].copy()
      w = solve(t64(w), t64(ctrl[None])).numpy()
      if variant in ("joint", "joint_all"):
        w[0] = armature_solve(w[0].copy(), pred, tree, h, goal, arm, tau, True, variant == "joint_all",
                              damping if variant == "joint_all" else None)
      else: w[0] = armature_rows(w[0].copy(), pred, tree, h, goal, arm, 0.0 * tau if in_integrate else tau,
                                 variant != "fixed_base", variant != "no_gap")
      w = recover(t64(w), t64(ctrl[None])).numpy()
      if variant != "joint_all": w[0] = damping_rows(w[0].copy(), tree, h, arm, damping, variant != "fixed_base")
      packed = w
    theirs = bodies_from_mujoco(scene, m, d, d0)["quat"]
    quat = packed[0][:, 3:7]
    def angle(qa, qb):
      return 2.0 * float(np.degrees(np.arcsin(min(1.0, np.linalg.norm(quat_mul(quat_conj(qa), qb)[1:])))))
    for j in scene["joints"]:
      c, p = index[j["child"]], index.get(j["parent"])
      ours = quat[c] if p is None else quat_mul(quat_conj(quat[p]), quat[c])
      mj = theirs[c] if p is None else quat_mul(quat_conj(theirs[p]), theirs[c])
      worst_joint = max(worst_joint, angle(ours, mj))
    for b in free: worst_free = max(worst_free, angle(quat[b], theirs[b]))
  return {"model": name, "variant": variant, "worst_joint_angle_deg": round(worst_joint, 4),
          "worst_free_body_orientation_deg": round(worst_free, 4) if free else None,
          "armature": arm, "substeps": scene["substeps"], "iterations": scene["iterations"], "dt": scene["dt"],
          "seconds": round(time.perf_counter() - start, 1)}


def main():
  ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
  ap.add_argument("--models", nargs="+", choices=list(MODELS), default=list(MODELS))
  ap.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
  ap.add_argument("--substeps", type=int, nargs="+", default=[0],
                  help="substeps per env-step (0: the converted scene's, from engine/mjcf.py MAX_SUBSTEP)")
  ap.add_argument("--iterations", type=int, default=0, help="Jacobi iterations per substep (0: the scene's)")
  args = ap.parse_args()
  rows = []
  for name in args.models:
    for variant in args.variants:
      if variant == "fixed_base" and name != "floating_arm": continue   # the same as the design without a float
      if variant == "torque_in_integrate" and name == "pendulum": continue   # no motor
      if variant == "root_recoil" and name != "cart_arm": continue   # the only tree with an unarmed root joint
      for sub in args.substeps:
        rows.append(run(name, variant, sub, args.iterations))
        print(json.dumps(rows[-1]), flush=True)
  versions = {k: importlib.metadata.version(k) for k in ("mujoco", "tinygrad", "numpy")}
  for row in rows: row.update(date=time.strftime("%Y-%m-%d"), versions=versions)
  # merged by (model, variant, substeps, iterations) with what the file holds, so that a run of some keeps the others
  def key(r): return r["model"], r["variant"], r["substeps"], r["iterations"]
  kept = json.loads(RESULTS.read_text())["rows"] if RESULTS.exists() else []
  new = {key(r) for r in rows}
  rows = [r for r in kept if key(r) not in new] + rows
  RESULTS.write_text(json.dumps({"rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
  main()
