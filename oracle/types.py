"""Model, State and Control: the data model shared by the oracle, the WGSL kernel and the front door.

Struct of arrays, batch first. Static topology (counts, types, parent/child indices) is plain Python so that
the oracle can build fixed-shape gathers at trace time; every physical parameter is a Tensor so gradients can
flow to it. Names follow `<object>_<field>` and are the same in the WGSL kernel (DESIGN.md sec. 2).
"""
from __future__ import annotations
from dataclasses import dataclass, fields, replace
from tinygrad import Tensor

GEOM_TYPES = ("plane", "sphere", "capsule", "box")
JOINT_TYPES = ("ball", "hinge", "fixed", "distance", "slide", "planar", "slide2", "hinge2", "hinge3")
ACTUATOR_TYPES = ("motor", "position", "velocity", "muscle")
WORLD = -1  # parent index of a joint attached to the world, body index of a world (static) geom


@dataclass(frozen=True)
class Model:
  """Static description of one scene. Parameters may carry a leading batch axis (domain randomisation)."""
  # --- static (Python) ---
  name: str
  nbody: int
  ngeom: int
  njoint: int
  body_name: tuple[str, ...]
  geom_type: tuple[str, ...]      # one of GEOM_TYPES
  geom_body: tuple[int, ...]      # owning body, WORLD for static geoms (the ground)
  jnt_name: tuple[str, ...]
  jnt_type: tuple[str, ...]       # one of JOINT_TYPES
  jnt_parent: tuple[int, ...]     # body index or WORLD
  jnt_child: tuple[int, ...]      # body index
  nact: int                       # actuators: one control each, ctrl (B, nact)
  act_name: tuple[str, ...]
  act_type: tuple[str, ...]       # one of ACTUATOR_TYPES
  act_joint: tuple[int, ...]      # the joint it drives (hinge; a motor may also drive a slide joint); WORLD: a muscle
  act_tendon: tuple[int, ...]     # the tendon a muscle pulls, -1 for the joint actuators
  nsite: int                      # sites: named points on bodies (or the world), the tendons' path points
  site_name: tuple[str, ...]
  site_body: tuple[int, ...]      # body index or WORLD
  ntendon: int                    # spatial tendons: paths of sites, length sum |p_k+1 - p_k| (DESIGN sec. 4)
  ten_name: tuple[str, ...]
  ten_site: tuple[tuple[int, ...], ...]  # each tendon's path, site indices, two or more
  dt: float                       # [s] one step
  substeps: int                   # XPBD substeps per step (M20 Alg. 2)
  iterations: int                 # Jacobi iterations per substep
  relaxation: float               # Jacobi averaging relaxation factor (1 = plain average)
  # --- collision (static) ---
  contact_enabled: bool           # False: bodies pass through each other and the ground (joint-only scenes)
  collide_exclude: frozenset      # body pairs (i, j), i < j (WORLD = -1 first), that never collide: joined by a joint
  pair_capacity: tuple            # ((type_a, type_b, capacity), ...): broadphase pair slots per env per type pair
  hash_slots: int                 # broadphase: geoms one hash bucket holds; more are counted as overflow
  contact_beta: float             # [1/m] softplus penetration sharpness (DESIGN sec. 3); 0 = exact max(depth, 0)
  contact_margin: float           # [m] broadphase AABBs grow by this beyond 2 dt (|v| + |w| rho)
  contact_depen: float            # [m/s] the fastest a contact pushes overlapping bodies apart beyond undoing their
                                  # approach (oracle/solve.py depenetration); 0 = no cap
  contact_restitution: bool       # some geom has restitution > 0: the substeps run the restitution stage
                                  # (oracle/restitution.py); from the scene, as geom_restitution was at load
  jnt_armature: tuple[float, ...]  # [kg m^2] (hinge) or [kg] (slide) rotor inertia in the joint's coordinate, 0 for
                                   # the others (oracle/armature.py)
  jnt_stiffness: tuple[float, ...]  # [N m/rad] or [N/m] a spring in the joint's coordinate (oracle/armature.py)
  jnt_springref: tuple[float, ...]  # [rad] or [m] the coordinate where that spring rests (0: the initial pose)
  jnt_range2: tuple[tuple[float, float], ...]  # [m] a slide2 joint's second coordinate's [lo, hi] ((0, 0) others)
  jnt_group: tuple[tuple[int, ...], ...]  # a hinge2 / hinge3 joint's group: the two or three hinges on the same
                                         # bodies, in turning order (oracle/constraints/hinges.py); () others
  # --- tensors ---
  gravity: Tensor                 # (3,) [m/s^2]
  body_inv_mass: Tensor           # (nbody,) [1/kg], 0 for a kinematic body
  body_inv_inertia: Tensor        # (nbody, 3) [1/(kg m^2)], principal axes: the body frame is the inertial frame
  geom_pos: Tensor                # (ngeom, 3) [m] in the body frame (world frame for WORLD geoms)
  geom_quat: Tensor               # (ngeom, 4) (w,x,y,z) in the body frame
  geom_size: Tensor               # (ngeom, 3) [m] sphere (r,0,0); capsule (r, half length along z, 0);
  #                                 box half extents; plane 0
  geom_friction: Tensor           # (ngeom,) Coulomb coefficient
  geom_restitution: Tensor        # (ngeom,) in [0, 1]
  geom_rgba: Tensor               # (ngeom, 4) colour for rendering
  jnt_anchor_parent: Tensor       # (njoint, 3) [m] attachment point in the parent frame (world frame for WORLD)
  jnt_anchor_child: Tensor        # (njoint, 3) [m] attachment point in the child frame
  jnt_axis_parent: Tensor         # (njoint, 3) unit hinge (or slide) axis in the parent frame
  jnt_axis_child: Tensor          # (njoint, 3) unit hinge axis in the child frame
  jnt_ref_parent: Tensor          # (njoint, 3) unit vector normal to the axis, parent frame; zero angle when aligned
  jnt_ref_child: Tensor           # (njoint, 3) the same vector in the child frame at the initial pose
  jnt_relquat: Tensor             # (njoint, 4) child orientation relative to the parent at rest (fixed joints)
  jnt_range: Tensor               # (njoint, 2) [rad] hinge angle limits, [m] slide position limits
  jnt_limited: Tensor             # (njoint,) 1.0 where the hinge limit is active, else 0.0
  jnt_compliance: Tensor          # (njoint,) [m/N] or [rad/(N m)] XPBD compliance alpha (0 = rigid)
  jnt_damping: Tensor             # (njoint,) [N m s/rad] angular damping about the joint (velocity pass)
  jnt_length: Tensor              # (njoint,) [m] rest length of distance joints
  act_gear: Tensor                # (nact,) motor: tau = gear clip(ctrl) [N m] (hinge) or force [N] (slide)
  act_ctrlrange: Tensor           # (nact, 2) ctrl is clipped to [lo, hi]: motor [1], position [rad], velocity [rad/s]
  act_kp: Tensor                  # (nact,) [N m/rad] position servo stiffness: XPBD compliance 1/kp (M20 sec. 3.4.1)
  act_kv: Tensor                  # (nact,) [N m s/rad] servo damping (position) or velocity gain (velocity)
  act_gainprm: Tensor             # (nact, 9) muscle: range0, range1, force, scale, lmin, lmax, vmax, fpmax, fvmax
  act_dynprm: Tensor              # (nact, 3) muscle: tau_act [s], tau_deact [s], tausmooth (oracle/muscle.py)
  act_lengthrange: Tensor         # (nact, 2) [m] muscle: the tendon lengths that map to gainprm's range
  act_acc0: Tensor                # (nact,) [m/s^2 / N] muscle: F0 = scale / acc0 when force < 0 (MuJoCo's acc0)
  site_pos: Tensor                # (nsite, 3) [m] in the body frame (world frame for WORLD sites)
  ten_stiffness: Tensor           # (ntendon,) [N/m] spring about ten_length
  ten_damping: Tensor             # (ntendon,) [N s/m] damping of the length's rate
  ten_length: Tensor              # (ntendon,) [m] rest length
  body_pos0: Tensor               # (nbody, 3) [m] initial centre of mass
  body_quat0: Tensor              # (nbody, 4) initial orientation of the inertial frame
  body_vel0: Tensor               # (nbody, 3) [m/s]
  body_angvel0: Tensor            # (nbody, 3) [rad/s] world frame

  def body_index(self, name: str) -> int: return _index(self.body_name, name, "body")
  def joint_index(self, name: str) -> int: return _index(self.jnt_name, name, "joint")
  def actuator_index(self, name: str) -> int: return _index(self.act_name, name, "actuator")
  def site_index(self, name: str) -> int: return _index(self.site_name, name, "site")
  def tendon_index(self, name: str) -> int: return _index(self.ten_name, name, "tendon")
  def joints_of_type(self, kind: str) -> tuple[int, ...]:
    return tuple(i for i, t in enumerate(self.jnt_type) if t == kind)
  def geoms_of_type(self, kind: str) -> tuple[int, ...]:
    return tuple(i for i, t in enumerate(self.geom_type) if t == kind)
  def tensors(self) -> dict[str, Tensor]:
    return {f.name: getattr(self, f.name) for f in fields(self) if isinstance(getattr(self, f.name), Tensor)}
  def replace(self, **kw) -> Model: return replace(self, **kw)


@dataclass(frozen=True)
class State:
  """Per-env dynamic state, batch first. Positions are centres of mass; orientations are of the inertial frame."""
  body_pos: Tensor                # (B, nbody, 3) [m]
  body_quat: Tensor               # (B, nbody, 4) (w,x,y,z), unit
  body_vel: Tensor                # (B, nbody, 3) [m/s]
  body_angvel: Tensor             # (B, nbody, 3) [rad/s] world frame
  time: Tensor                    # (B,) [s]
  act: Tensor | None = None       # (B, nmuscle) muscle activations in [0, 1], muscles in actuator order; None without
  contact_overflow: Tensor | None = None  # (B,) int32 contact pairs the broadphase dropped in the last step (capacity)

  def tensors(self) -> tuple[Tensor, ...]:
    return tuple(getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None)
  def realize(self) -> State:
    Tensor.realize(*self.tensors())
    return self
  def replace(self, **kw) -> State: return replace(self, **kw)


def _index(names: tuple[str, ...], name: str, kind: str) -> int:
  if name not in names: raise KeyError(f"no {kind} named {name!r}; {kind}s are {list(names)}")
  return names.index(name)
