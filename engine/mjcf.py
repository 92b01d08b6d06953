"""MJCF in (issue 19): MuJoCo's own compiler reads the file, and the compiled model at its reference pose (qpos0) is
converted into the scene format (docs/scenes.md). Default classes, childclass, frames (euler, axisangle, xyaxes,
fromto), `compiler angle`, inertiafromgeom and <include> therefore mean exactly what MuJoCo means: this module never
reads the XML itself. mujoco is an optional extra (`pip install 'tinyxpbd[mjcf]'`), imported on first use.

The mapping, from MuJoCo's generalised coordinates to this engine's maximal ones (docs/mjcf.md has the details):
- A body with one joint becomes a scene body joined to its parent's by that joint (hinge, slide, ball; anchor and
  axis at qpos0, in the world frame); a free joint makes it a free body; a body with no joint is welded to its parent
  and merged into it (its geoms and mass join the parent's), as MuJoCo itself treats welded bodies. A body with two
  or more joints has no counterpart (this engine joins two bodies by one joint) and is refused by name.
- Mass properties are MuJoCo's: each scene body gets its bodies' total mass and inertia (principal moments; the scene
  body keeps MuJoCo's body frame where the inertia is diagonal in it, else takes the principal frame closest to it),
  and each geom the density that gives its MuJoCo
  body its mass, so the scene's centre of mass (which the format takes from the geoms) is MuJoCo's; a body whose
  <inertial> centre is not its geoms' is refused by name. Armature (rotor inertia in a hinge's or slide's coordinate)
  becomes the joint's `armature` (oracle/armature.py, kernels/armature.wgsl and its adjoint); on a ball joint it is
  refused.
- Geoms: sphere, capsule, box and plane (world only) as they are; a cylinder becomes the capsule of the same radius
  and overall length, an ellipsoid the capsule along its longest axis (radius the larger other semi-axis), each with a
  warning; a mesh is refused unless meshes="box" (its bounding box, with a warning); height fields are refused.
- Collision filtering (contype/conaffinity, <exclude>, MuJoCo's parent filter): between two scene bodies either every
  pair of their geoms may touch or none may; none becomes an excluded pair (contact.exclude), or collide: false on the
  joint that joins them, and all a joint's `collide: true`. Anything finer is refused by name.
- Actuators on joints: motor (gear, ctrlrange), position (kp, kv) and velocity (kv) servos; muscles on spatial
  tendons through sites; a one-tendon equality becomes a distance joint, a <weld> a fixed joint and a <connect> a ball
  joint (engine/mjcf_tendons.py). Joint damping maps
  to joint damping; joint stiffness, friction loss, actuator force limits and other tendons and equalities are refused.
- Custom numerics named tinyxpbd:... (engine/mjcf_write.py, which writes scenes as MJCF) carry what MJCF has no
  attribute for.
- The timestep becomes dt, split into substeps of at most MAX_SUBSTEP; gravity is copied. Options, flags and contact
  parameters (condim, priority, margin) that change the physics: engine/mjcf_physics.py, engine/mjcf_contacts.py.
Everything dropped or approximated is said in an MJCFWarning; nothing is dropped silently.
"""
from __future__ import annotations
import math
import sys
import warnings
from pathlib import Path
import numpy as np
from engine.mass import geom_mass, principal_axes
from engine.npquat import mat_to_quat, quat_mul, quat_to_mat
from engine.mjcf_tendons import TRN_TENDON, apply_extras, equality_joints, muscle, read_extras, refuse_tendons, \
  sites_and_tendons
from engine.mjcf_contacts import collisions, contact_friction, geom_pairs
from engine.mjcf_physics import gravity, refuse_options
from engine.mjcf_state import bodies_from_mujoco, body_index, model_frames  # noqa: F401 (their home until now)
from engine.mjcf_write import PREFIX
from engine.scene_fields import SceneError
from engine.scene_joints import armed_tree_conflict

# mjtGeom, mjtJoint, mjtTrn, mjtGain, mjtBias, mjtDyn (mujoco/mjmodel.h)
PLANE, HFIELD, SPHERE, CAPSULE, ELLIPSOID, CYLINDER, BOX, MESH = range(8)
FREE, BALL, SLIDE, HINGE = range(4)
JOINT_KIND = {BALL: "ball", SLIDE: "slide", HINGE: "hinge"}
TOL = 1e-6   # [m] how far a body's inertial centre may sit from its geoms' centre (float rounding of the compile)
# [s] the longest substep a converted scene gets. MuJoCo's timestep becomes one env-step, and XPBD is first-order
# accurate in the substep: against MuJoCo over 1 s (tests/test_verify_mjcf.py), tests/mjcf/ball_chain.xml is off by
# 1.35 deg at 1/4800 s (the shipped scenes' substep), 0.70 at 1/9600 and 0.36 at 1/19200;
# inverted_double_pendulum (dt 0.01 s) by 1.7 deg at 20 substeps, 0.7 at 48, 0.4 at 80
MAX_SUBSTEP = 1.0 / 9600.0
ENGINE = Path(__file__).resolve().parent


def _float32(x) -> float:
  """The shortest decimal that reads back to float32 x (MuJoCo keeps colours in float32: 0.85 stays 0.85)."""
  return float(np.format_float_positional(np.float32(x), unique=True))


class MJCFWarning(UserWarning):
  """Something in an MJCF model approximated or dropped on conversion (named in the message)."""


def _mujoco():
  try:
    import mujoco
  except ImportError:
    raise SceneError("MJCF needs the mujoco package: pip install 'tinyxpbd[mjcf]' (or pip install mujoco==3.3.7)") \
      from None
  return mujoco


def gym_asset(name: str) -> Path:
  """Gymnasium's own MuJoCo model `name`.xml (gymnasium/envs/mujoco/assets: ant, half_cheetah, humanoid, reacher, ...),
  which the tasks, tests and benchmarks convert."""
  try:
    import gymnasium
  except ImportError:
    raise ImportError(f"Gymnasium's {name}.xml needs gymnasium: pip install 'tinyxpbd[gym,mjcf]'") from None
  return Path(gymnasium.__file__).parent / "envs" / "mujoco" / "assets" / f"{name}.xml"


def compile_mjcf(path):
  """(mujoco.MjModel, mujoco.MjData at qpos0 with its kinematics), or a SceneError carrying MuJoCo's message."""
  mujoco = _mujoco()
  path = Path(path)
  if not path.is_file(): raise SceneError(f"MJCF file '{path}': not found")
  try:
    m = mujoco.MjModel.from_xml_path(str(path))
  except ValueError as e:
    raise SceneError(f"MJCF file '{path}': {' '.join(str(e).split())}") from None   # MuJoCo's message, one line
  d = mujoco.MjData(m)
  mujoco.mj_kinematics(m, d)
  return m, d


def from_mjcf(path, meshes: str = "error") -> dict:
  """The scene dict (docs/scenes.md) of the MJCF model at `path`. meshes: "error" refuses mesh geoms, "box" stands
  each in for its bounding box. Raises SceneError naming the element and attribute a model needs that the engine
  does not have."""
  if meshes not in ("error", "box"): raise ValueError(f"meshes: expected 'error' or 'box', got {meshes!r}")
  m, d = compile_mjcf(path)
  return _Converter(m, d, Path(path), meshes).scene()


def index_map(path, scene: dict) -> dict[str, list[tuple[int, list[int | str]]]]:
  """Where each scene body, joint and actuator of from_mjcf(path) comes from: per kind, (scene index, [MuJoCo
  indices]); a scene body lists the MuJoCo bodies merged into it, root first; a joint from an equality (distance,
  fixed, a connect's ball) is ["equality N"]. Actuators keep MuJoCo's order."""
  m, d = compile_mjcf(path)
  mujoco = _mujoco()
  conv = _Converter(m, d, Path(path), "box")
  group, _ = conv.groups()
  roots = body_index(m, scene)
  obj = mujoco.mjtObj
  def joint(j: dict) -> list[int | str]:
    k = mujoco.mj_name2id(m, obj.mjOBJ_JOINT, j["name"])
    if k < 0: return [f"equality {mujoco.mj_name2id(m, obj.mjOBJ_EQUALITY, j['name'])}"]
    return conv.multi.get(int(m.jnt_bodyid[k]), [k])   # a planar or slide2 joint: its body's three or two joints
  return {"bodies": [(i, [b for b in range(m.nbody) if group[b] == r]) for i, r in enumerate(roots)],
          "joints": [(k, joint(j)) for k, j in enumerate(scene["joints"])],
          "actuators": [(a, [a]) for a in range(m.nu)]}


class _Converter:
  def __init__(self, m, d, path: Path, meshes: str):
    self.mj, self.m, self.d, self.path, self.meshes = _mujoco(), m, d, path, meshes
    self.where = f"MJCF file '{path.name}'"
    self.inert_tendons: set[int] = set()   # fixed tendons dropped with a warning (engine/mjcf_tendons.py)

  def name(self, kind: str, i: int) -> str:
    obj = getattr(self.mj.mjtObj, f"mjOBJ_{kind.upper()}")
    return self.mj.mj_id2name(self.m, obj, i) or f"{kind}{i}"

  def fail(self, what: str):
    raise SceneError(f"{self.where}: {what}")

  def warn(self, what: str):
    # attributed to the first caller outside the engine package (the user's load_scene or from_mjcf line)
    level, f = 1, sys._getframe(1)
    while f is not None and Path(f.f_code.co_filename).resolve().is_relative_to(ENGINE):
      f, level = f.f_back, level + 1
    warnings.warn(f"{self.where}: {what}", MJCFWarning, stacklevel=level + 1)

  # --- structure: which MuJoCo bodies make one scene body, and the joint that joins it to its parent ---
  def groups(self) -> tuple[list[int], dict[int, int]]:
    """The group (scene body) of each MuJoCo body: the body itself when it has a joint, its parent's group when it
    has none (welded; the world's group is 0), and the joint of each group's root."""
    m = self.m
    group, joint_of, self.multi, self.hinges = [0] * m.nbody, {}, {}, {}
    for b in range(1, m.nbody):
      joints = [j for j in range(m.njnt) if m.jnt_bodyid[j] == b]
      one = self.planar_hinge(b, joints) if len(joints) > 1 else None
      if one is None and len(joints) > 1: one = self.two_slides(b, joints)
      if one is not None:
        self.multi[b] = joints
        joints = [one]
      elif len(joints) > 1 and self.hinge_group(b, joints):   # scene joints of their own, "after" the one before
        self.hinges[b] = joints
        joints = joints[:1]
      if len(joints) > 1:
        kinds = ", ".join(f"{self.name('joint', j)} ({JOINT_KIND.get(int(m.jnt_type[j]), 'free')})" for j in joints)
        self.fail(f"body '{self.name('body', b)}': {len(joints)} joints ({kinds}); this engine joins two bodies by one "
                  "joint (a chain of bodies with one joint each converts, and so do two slides across a hinge's axis: "
                  "a planar joint, two orthogonal slides: a slide2 joint, and two or three hinges through one point "
                  "with independent axes)")
      if joints and m.jnt_type[joints[0]] == FREE and m.body_parentid[b] != 0:
        self.fail(f"body '{self.name('body', b)}': a free joint below another body")
      group[b] = b if joints else group[m.body_parentid[b]]
      if joints: joint_of[b] = joints[0]
    return group, joint_of

  def planar_hinge(self, b: int, joints: list[int]) -> int | None:
    """The hinge of a body's planar joint (two slides across a hinge's axis, in any order: the child then turns about
    the axis and moves in the plane across it, MuJoCo's planar root of hopper, walker2d, half_cheetah), or None when
    the joints are not one. Its three coordinates carry no range, damping, armature or actuator (refused by name)."""
    m, d = self.m, self.d
    kinds = sorted(int(m.jnt_type[j]) for j in joints)
    if kinds != sorted([SLIDE, SLIDE, HINGE]): return None
    hinge = next(j for j in joints if m.jnt_type[j] == HINGE)
    u, v = (d.xaxis[j] for j in joints if m.jnt_type[j] == SLIDE)
    n = d.xaxis[hinge]
    if abs(u @ n) > 1e-9 or abs(v @ n) > 1e-9 or np.linalg.norm(np.cross(u, v)) < 1e-6: return None
    self.refuse_coordinates(b, joints, "the planar joint", "two slides across a hinge", ranges=False)
    return hinge

  def hinge_group(self, b: int, joints: list[int]) -> bool:
    """Whether a body's joints are two or three hinges through one point with independent axes (the humanoid's
    waist, thighs, upper arms): each a scene hinge, the second and third "after" the one before (a hinge2 or hinge3
    group, oracle/constraints/hinges.py). Their ranges must hold the reference pose (refused by name); their armature
    and stiffness the armature stage carries (oracle/armature.py)."""
    m, d = self.m, self.d
    if len(joints) > 3 or any(m.jnt_type[j] != HINGE for j in joints): return False
    if any(np.abs(d.xanchor[j] - d.xanchor[joints[0]]).max() > 1e-9 for j in joints): return False
    axes = np.array([d.xaxis[j] for j in joints])
    if (abs(np.linalg.det(axes)) if len(joints) == 3 else np.linalg.norm(np.cross(*axes))) < 1e-6: return False
    for j in joints:
      lo, hi = m.jnt_range[j] - m.qpos0[m.jnt_qposadr[j]]
      if m.jnt_limited[j] and not lo <= 0.0 <= hi:
        self.fail(f"joint '{self.name('joint', j)}': one of {len(joints)} hinges on body '{self.name('body', b)}' "
                  f"with a range {[float(lo), float(hi)]} that leaves out its reference pose is not supported")
    return True

  def two_slides(self, b: int, joints: list[int]) -> int | None:
    """The first of a body's two slides with orthogonal axes (a slide2 joint: the child keeps its orientation and
    translates in their plane, the target of Gymnasium's reacher), or None when the joints are not two slides. Both
    coordinates are limited or neither; they carry no damping, armature, stiffness or actuator (refused by name)."""
    m, d = self.m, self.d
    if len(joints) != 2 or any(m.jnt_type[j] != SLIDE for j in joints): return None
    names = " and ".join(f"'{self.name('joint', j)}'" for j in joints)
    where = f"body '{self.name('body', b)}'"
    if abs(d.xaxis[joints[0]] @ d.xaxis[joints[1]]) > 1e-9:
      self.fail(f"{where}: slides {names} with axes not orthogonal are not supported")
    if m.jnt_limited[joints[0]] != m.jnt_limited[joints[1]]:
      self.fail(f"{where}: slides {names}, one limited and the other not, are not supported")
    self.refuse_coordinates(b, joints, "the slide2 joint", "two slides", ranges=True)
    return joints[0]

  def refuse_coordinates(self, b: int, joints: list[int], what: str, made_of: str, ranges: bool) -> None:
    """Named errors for what a planar or slide2 joint's coordinates do not carry (ranges only where `ranges`)."""
    m = self.m
    for j in joints:
      why = ("a range" if m.jnt_limited[j] and not ranges else "damping" if m.dof_damping[m.jnt_dofadr[j]] else
             "armature" if m.dof_armature[m.jnt_dofadr[j]] else "stiffness" if m.jnt_stiffness[j] else
             "an actuator" if any(m.actuator_trnid[a, 0] == j and m.actuator_trntype[a] != TRN_TENDON
                                  for a in range(m.nu)) else None)
      if why: self.fail(f"joint '{self.name('joint', j)}': {why} on a coordinate of {what} of body "
                        f"'{self.name('body', b)}' ({made_of}) is not supported")

  def scene(self) -> dict:
    m = self.m
    self.refuse()
    self.extras = read_extras(self)
    for key, n in (("geom_restitution", m.ngeom), ("geom_density", m.ngeom), ("body_given", m.nbody - 1)):
      if len(self.extras.get(key, [0] * n)) != n:
        self.fail(f"custom numeric '{PREFIX}{key}': expected {n} values, got {len(self.extras[key])}")
    group, joint_of = self.groups()
    pairs = geom_pairs(self, group, joint_of)   # the contact filter's, read once for friction and filtering
    self.friction = contact_friction(self, [(g1, g2) for g1, g2, _, _, touch in pairs if touch])
    roots = [b for b in range(1, m.nbody) if group[b] == b]
    names = {0: "world", **{b: self.name("body", b) for b in roots}}
    bodies, world_geoms = [], []
    for g in range(m.ngeom):   # the world's geoms and those welded to it: static
      if group[m.geom_bodyid[g]] == 0: world_geoms.append(self.geom(g, np.zeros(3), np.array([1.0, 0, 0, 0]), None))
    for b in roots:
      bodies.append(self.body(b, [k for k in range(m.nbody) if group[k] == b], joint_of.get(b)))
    joints = [{**self.joint(j, names[group[m.body_parentid[b]]], names[b]),
               **({"after": self.name("joint", self.hinges[b][k - 1])} if k else {})}
              for b in roots if m.jnt_type[joint_of[b]] != FREE
              for k, j in enumerate(self.hinges.get(b, [joint_of[b]]))]
    self.check_armed_trees(joints)
    equalities = equality_joints(self, group, names)
    joints += [j for j, _ in equalities]
    sites, tendons = sites_and_tendons(self, group, names, {t for _, t in equalities if t is not None})
    dt = float(m.opt.timestep)
    model = bytes(m.names).split(b"\0")[0].decode()   # <mujoco model=...>; MuJoCo's default is not a name
    scene = {"name": model if model and model != "MuJoCo Model" else self.path.stem,
             "gravity": gravity(self), "dt": dt,
             "substeps": max(1, math.ceil(dt / MAX_SUBSTEP - 1e-9)),
             "world": {"geoms": world_geoms}, "bodies": bodies, "joints": joints, "sites": sites, "tendons": tendons,
             "actuators": [self.actuator(a, joint_of) for a in range(m.nu)]}
    collisions(self, scene, pairs, names, joint_of, group, equalities)
    for k, j in enumerate(scene["joints"]):   # a group's hinges join their bodies as one joint
      if "after" in j and "collide" in scene["joints"][k - 1]: j["collide"] = scene["joints"][k - 1]["collide"]
    apply_extras(self, scene, self.extras)
    return scene

  def check_armed_trees(self, joints: list[dict]) -> None:
    """Armature needs a tree of hinges and slides (engine/scene_joints.py armed_tree_conflict): refused here, naming
    the joints, rather than when the scene is loaded."""
    if bad := armed_tree_conflict(joints): self.fail(bad[1])

  def refuse(self) -> None:
    """Named errors for what the conversion has no counterpart for."""
    m = self.m
    obj = self.mj.mjtObj
    for kind, n, what in ((obj.mjOBJ_PAIR, m.npair, "contact pair"), (obj.mjOBJ_FLEX, getattr(m, "nflex", 0), "flex")):
      if n:
        names = ", ".join(f"'{self.mj.mj_id2name(m, kind, i) or f'{what}{i}'}'" for i in range(n))
        self.fail(f"<{what}> {names}: not supported yet")
    refuse_tendons(self)
    refuse_options(self)
    for j in range(m.njnt):
      if m.jnt_stiffness[j] != 0 and m.jnt_type[j] in (FREE, BALL):
        self.fail(f"joint '{self.name('joint', j)}': stiffness {m.jnt_stiffness[j]:g} on a "
                  f"{'free' if m.jnt_type[j] == FREE else 'ball'} joint is not supported")
      dofs = [k for k in range(m.nv) if m.dof_jntid[k] == j]
      if any(m.dof_frictionloss[k] != 0 for k in dofs):
        self.fail(f"joint '{self.name('joint', j)}': frictionloss is not supported")
      if m.jnt_type[j] == BALL and m.jnt_limited[j]:
        self.fail(f"joint '{self.name('joint', j)}': a ball joint's range is not supported")
      if m.jnt_type[j] == HINGE and m.jnt_limited[j] and (m.jnt_range[j, 0] < -math.pi or m.jnt_range[j, 1] > math.pi):
        self.fail(f"joint '{self.name('joint', j)}': range {m.jnt_range[j].tolist()} rad exceeds [-pi, pi]")

  # --- bodies and geoms ---
  def body(self, root: int, members: list[int], joint: int | None) -> dict:
    """One scene body from MuJoCo bodies `members` (root first): MuJoCo's total mass and inertia, in the root's frame
    where they are diagonal there, else in their principal frame; the geoms at densities that carry each member's
    mass."""
    m, d = self.m, self.d
    mass = float(sum(m.body_mass[b] for b in members))
    if mass <= 0: self.fail(f"body '{self.name('body', root)}': no mass")
    com = sum(m.body_mass[b] * d.xipos[b] for b in members) / mass
    inertia = np.zeros((3, 3))
    for b in members:
      rot, r = d.ximat[b].reshape(3, 3), d.xipos[b] - com
      inertia += rot @ np.diag(m.body_inertia[b]) @ rot.T + m.body_mass[b] * (r @ r * np.eye(3) - np.outer(r, r))
    given = int(self.extras["body_given"][root - 1]) if "body_given" in self.extras else 2
    rot0 = d.xmat[root].reshape(3, 3)
    moments, q_local = principal_axes(rot0.T @ inertia @ rot0)   # the principal axes closest to MuJoCo's body axes
    # the scene body keeps MuJoCo's body frame as its user frame where its inertia is diagonal there, or where the
    # scene takes its inertia from its geoms (mjcf_write's files say so); else its frame is the principal one
    keep = given < 2 or np.array_equal(q_local, [1.0, 0.0, 0.0, 0.0])
    origin, q = (d.xpos[root], d.xquat[root]) if keep else (com, quat_mul(d.xquat[root], q_local))
    geoms, volume = [], {}
    # a file from mjcf_write has the scene's densities; MuJoCo's own spread each body's mass evenly over its geoms
    rel = self.extras.get("geom_density", np.ones(m.ngeom))
    for g in range(m.ngeom):
      b = int(m.geom_bodyid[g])
      if b in members:
        geoms.append((b, self.geom(g, origin, q, 1.0)))
        volume[b] = volume.get(b, 0.0) + rel[g] * geom_mass(geoms[-1][1]["type"], geoms[-1][1]["size"], 1.0)[0]
    for b in members:
      if m.body_mass[b] > 0 and b not in volume:
        self.fail(f"body '{self.name('body', b)}': mass {m.body_mass[b]:g} kg but no geoms to carry it (the scene "
                  "format takes a body's centre of mass from its geoms)")
    if not geoms: self.fail(f"body '{self.name('body', root)}': no geoms")
    for (b, geom), g in zip(geoms, [g for g in range(m.ngeom) if m.geom_bodyid[g] in members]):
      geom["density"] = float(rel[g]) if "geom_density" in self.extras else \
        float(rel[g] * m.body_mass[b] / volume[b]) if m.body_mass[b] > 0 else 1e-9
    self.check_centre(root, [g for _, g in geoms], quat_to_mat(q).T @ (com - origin))
    out = {"name": self.name("body", root), "pos": [float(x) for x in origin], "quat": [float(x) for x in q],
           "mass": mass, "inertia": [float(x) for x in moments], "geoms": [g for _, g in geoms]}
    if given < 2: del out["inertia"]   # the scene took them from its geoms (mjcf_write): so does this one
    if given < 1: del out["mass"]
    return out

  def check_centre(self, root: int, geoms: list[dict], expected: np.ndarray) -> None:
    """The scene's centre of mass (its geoms', at their densities) must be MuJoCo's (`expected`, in the body frame)."""
    from engine.mass import body_mass
    _, com, _ = body_mass((g["type"], g["size"], g["density"], g["pos"], g["quat"]) for g in geoms)
    if np.linalg.norm(com - expected) > TOL:
      self.fail(f"body '{self.name('body', root)}': its <inertial> centre of mass is "
                f"{1e3 * np.linalg.norm(com - expected):.3g} "
                "mm from its geoms' centre; the scene format takes the centre of mass from the geoms")

  def geom(self, g: int, origin: np.ndarray, frame: np.ndarray, density: float | None) -> dict:
    """Geom g in the frame at `origin` with orientation `frame` (world), its type mapped (module docstring)."""
    m, d = self.m, self.d
    kind, size, name = int(m.geom_type[g]), m.geom_size[g].astype(float), self.name("geom", g)
    rot = quat_to_mat(frame)
    pos = rot.T @ (d.geom_xpos[g] - origin)
    quat = quat_mul(np.array([frame[0], -frame[1], -frame[2], -frame[3]]), mat_to_quat(d.geom_xmat[g].reshape(3, 3)))
    if kind == PLANE:
      if density is not None: self.fail(f"geom '{name}': a plane on a moving body (planes are static)")
      out = {"type": "plane", "size": [float(size[0]), float(size[1])] if size[0] > 0 and size[1] > 0 else []}
    elif kind == SPHERE: out = {"type": "sphere", "size": [float(size[0])]}
    elif kind == CAPSULE: out = {"type": "capsule", "size": [float(size[0]), float(size[1])]}
    elif kind == BOX: out = {"type": "box", "size": [float(x) for x in size[:3]]}
    elif kind == CYLINDER:
      self.warn(f"geom '{name}': cylinder approximated by the capsule of the same radius and overall length")
      out = {"type": "capsule", "size": [float(size[0]), float(max(size[1] - size[0], 0.0))]}
    elif kind == ELLIPSOID:
      k = int(np.argmax(size[:3]))
      r = float(max(size[i] for i in range(3) if i != k))
      self.warn(f"geom '{name}': ellipsoid {size[:3].tolist()} approximated by a capsule along its longest axis")
      out = {"type": "capsule", "size": [r, float(max(size[k] - r, 0.0))]}
      s = math.sqrt(0.5)   # local z onto axis k: about y by +90 deg (x), about x by -90 deg (y)
      quat = quat_mul(quat, np.array([[s, 0.0, s, 0.0], [s, -s, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]][k]))
    elif kind == MESH and self.meshes == "box":
      self.warn(f"geom '{name}': mesh stood in for by its bounding box")
      centre, half = m.geom_aabb[g, :3], m.geom_aabb[g, 3:]
      pos = pos + quat_to_mat(quat) @ centre
      out = {"type": "box", "size": [float(x) for x in half]}
    else:
      what = {MESH: "a mesh (meshes='box' stands in its bounding box)", HFIELD: "a height field"}.get(kind, "this type")
      self.fail(f"geom '{name}': {what} is not supported")
    out.update(pos=[float(x) for x in pos], quat=[float(x) for x in quat / np.linalg.norm(quat)],
               friction=float(self.friction[g]), rgba=[_float32(min(max(x, 0.0), 1.0)) for x in m.geom_rgba[g]])
    if "geom_restitution" in self.extras: out["restitution"] = float(self.extras["geom_restitution"][g])
    if density is None and "geom_density" in self.extras: out["density"] = float(self.extras["geom_density"][g])
    if name != f"geom{g}": out["name"] = name
    return out

  # --- joints, actuators, collisions ---
  def joint(self, j: int, parent: str, child: str) -> dict:
    m, d = self.m, self.d
    kind = JOINT_KIND[int(m.jnt_type[j])]
    out = {"name": self.name("joint", j), "type": kind, "parent": parent, "child": child,
           "anchor": [float(x) for x in d.xanchor[j]]}
    def rng(j: int) -> list[float]:   # the scene's coordinate is 0 at the converted pose, qpos0, the joint's `ref`
      return [float(x) - float(m.qpos0[m.jnt_qposadr[j]]) for x in m.jnt_range[j]]   # MuJoCo's range is in qpos
    if (b := int(m.jnt_bodyid[j])) in self.multi and kind == "hinge":   # a planar joint's hinge: the plane's normal
      return {**out, "type": "planar", "axis": [float(x) for x in d.xaxis[j]]}   # and a point in it; nothing else
    if b in self.multi:   # slide2: the two slides' axes and ranges (two_slides refused the rest)
      j2 = self.multi[b][1]
      out.update(type="slide2", axis=[float(x) for x in d.xaxis[j]], axis2=[float(x) for x in d.xaxis[j2]])
      return {**out, "range": rng(j), "range2": rng(j2)} if m.jnt_limited[j] else out
    if kind != "ball": out["axis"] = [float(x) for x in d.xaxis[j]]
    ref = float(m.qpos0[m.jnt_qposadr[j]]) if kind != "ball" else 0.0
    if kind != "ball" and m.jnt_limited[j]: out["range"] = rng(j)
    damping = float(m.dof_damping[m.jnt_dofadr[j]])
    if kind == "ball" and len(set(m.dof_damping[m.jnt_dofadr[j]:m.jnt_dofadr[j] + 3])) > 1:
      self.fail(f"joint '{out['name']}': a ball joint's damping must be equal about its three axes")
    if damping: out["damping"] = damping
    armature = float(m.dof_armature[m.jnt_dofadr[j]])
    if armature and kind == "ball": self.fail(f"joint '{out['name']}': armature on a ball joint is not supported")
    if armature: out["armature"] = armature   # oracle/armature.py
    if m.jnt_stiffness[j]:   # a spring towards springref, a qpos: the scene's coordinate is qpos - qpos0
      out["stiffness"] = float(m.jnt_stiffness[j])
      out["springref"] = float(m.qpos_spring[m.jnt_qposadr[j]]) - ref
    return out

  def actuator(self, a: int, joint_of: dict[int, int]) -> dict:
    m, name = self.m, self.name("actuator", a)
    if m.actuator_trntype[a] == TRN_TENDON: return muscle(self, a)
    j = int(m.actuator_trnid[a, 0])
    if j not in joint_of.values() and not any(j in g for g in self.hinges.values()):
      self.fail(f"actuator '{name}': its joint is not converted")
    kind = JOINT_KIND.get(int(m.jnt_type[j]))
    if m.actuator_dyntype[a] != 0: self.fail(f"actuator '{name}': activation dynamics (dyntype) are not supported")
    if m.actuator_forcelimited[a]: self.fail(f"actuator '{name}': forcerange is not supported")
    if np.any(m.actuator_gear[a, 1:] != 0): self.fail(f"actuator '{name}': gear beyond its first entry")
    gain, bias, gear = m.actuator_gainprm[a], m.actuator_biasprm[a], float(m.actuator_gear[a, 0])
    out = {"name": name, "joint": self.name("joint", j)}
    lo, hi = m.actuator_ctrlrange[a] if m.actuator_ctrllimited[a] else (-1e9, 1e9)   # unlimited: no clip in effect
    out["ctrlrange"] = [float(lo), float(hi)]
    if m.actuator_gaintype[a] == 0 and m.actuator_biastype[a] == 0 and kind in ("hinge", "slide"):
      return {**out, "type": "motor", "gear": float(gain[0]) * gear}
    if m.actuator_gaintype[a] == 0 and m.actuator_biastype[a] == 1 and kind == "hinge" and gear == 1:
      kp, kv = float(gain[0]), -float(bias[2])
      if kp > 0 and bias[1] == -kp and bias[0] == 0:
        if m.qpos0[m.jnt_qposadr[j]] != 0:   # MuJoCo's target is a qpos, the scene's an angle from the converted pose
          self.fail(f"actuator '{name}': a position servo on joint '{self.name('joint', j)}', whose ref is not 0, "
                    "is not supported")
        return {**out, "type": "position", "kp": kp, "kv": kv}
      if kp > 0 and bias[1] == 0 and bias[0] == 0 and bias[2] == -kp: return {**out, "type": "velocity", "kv": kp}
    self.fail(f"actuator '{name}': only motors (hinge, slide) and position/velocity servos with gear 1 (hinge) are "
              "converted")

