"""The WGSL programs for one Model: the step kernel's source (the kernels/*.wgsl files behind a generated header) and
the backward kernel's (the adjoints in kernels/adjoint/). The header's layouts come from kernels/layout.py (the
parameter row, the state rows, the contact tables), kernels/lanes.py (envs onto invocations) and kernels/tape.py (the
backward's tape).

Topology (counts, joint types, parents, children, actuator wiring) is static in the oracle too, so it becomes WGSL
constants here and the kernel is compiled once per scene, batch and step count, like the oracle's jitted step. The
header also carries everything the kernel shares with the oracle, generated from the oracle's modules so that no
number is written twice: the contact slot layout (slot_layout), the packed state's layout, the narrowphase's
tolerances and math3's polynomial (oracle_constants), EPS, and the pair-kind dispatch in NARROWPHASE's order
(collide_header).
"""
from __future__ import annotations
import os
import re
from functools import lru_cache
from kernels.lanes import PRIVATE_PARAMS, check_lanes, env_buffers, lane_functions, workgroup_size
from kernels.layout import (Unsupported, check_supported, contact_tables, model_batch, param_layout,
                            state_rows)
from kernels.tape import tape_declaration, tape_layout
from oracle import broadphase, contacts, math3, muscle, packed
from oracle.armature import armed_joints, armed_trees, staged
from oracle.collide import NARROWPHASE, box, box_box, primitives
from oracle.constraints import CONSTRAINTS, NLAM
from oracle.joint_damping import has_damping
from oracle.solve import joint_counts
from oracle.tendon import segments
from oracle.types import GEOM_TYPES, JOINT_TYPES, Model
from oracle.xpbd import EPS

# the kernel's source files, concatenated into one program (WGSL resolves names module-wide, in any order): the step's
# buffers, entry point and substep, the contact plan's storage, the XPBD corrections and the constraints (the slide
# family's in slides.wgsl), one file per stage of oracle/step.py STAGES (each defining `fn <stage>`; the armature
# stage's system in armature_system.wgsl), then the pair functions (COLLIDE_FILES, which also make a program of their
# own: collide_source). tests/test_wgsl_bridge.py checks this list against the oracle's files.
STEP_FILES = ("xpbd_step.wgsl", "contacts.wgsl", "xpbd.wgsl", "constraints.wgsl", "slides.wgsl", "hinges.wgsl",
              "broadphase.wgsl", "motor_loads.wgsl", "integrate.wgsl", "narrowphase.wgsl", "solve.wgsl",
              "armature.wgsl", "armature_system.wgsl", "recover.wgsl", "contact_velocity.wgsl", "restitution.wgsl",
              "joint_damping.wgsl", "activation.wgsl", "muscle.wgsl", "tendon.wgsl")
COLLIDE_FILES = ("math3.wgsl", "collide.wgsl", "primitives.wgsl", "box.wgsl", "box_box.wgsl")
SOURCES = tuple(os.path.join(os.path.dirname(__file__), f) for f in STEP_FILES + COLLIDE_FILES)
# the backward kernel's adjoints (issue 17, in progress): `<name>_adj` per forward function, in files named as the
# forward's; tests/test_parity_adjoint.py launches them behind a step program (adjoint_source). BACKWARD_FILES add the
# stages' adjoints and the backward entry point (backward_source)
ADJOINT_FILES = ("adjoint/math3.wgsl", "adjoint/xpbd.wgsl", "adjoint/constraints.wgsl", "adjoint/slides.wgsl",
                 "adjoint/hinges.wgsl",
                 "adjoint/integrate.wgsl", "adjoint/collide.wgsl", "adjoint/primitives.wgsl", "adjoint/box.wgsl",
                 "adjoint/box_box.wgsl", "adjoint/muscle.wgsl", "adjoint/tendon.wgsl")
BACKWARD_FILES = ("adjoint/xpbd_step.wgsl", "adjoint/motor_loads.wgsl", "adjoint/narrowphase.wgsl",
                  "adjoint/solve.wgsl", "adjoint/recover.wgsl", "adjoint/contact_velocity.wgsl",
                  "adjoint/restitution.wgsl", "adjoint/joint_damping.wgsl", "adjoint/activation.wgsl",
                  "adjoint/armature.wgsl", "adjoint/armature_system.wgsl")
BACKWARD_ENTRY = "xpbd_step_adj"
# the oracle modules whose constants the kernel uses, each emitted as <MODULE>_<NAME> (oracle_constants)
CONSTANT_MODULES = (math3, packed, broadphase, primitives, box, box_box, muscle)


def _arr(kind: str, values: list) -> str:
  """A WGSL array value; kind u32, i32, f32, or vec2<i32> / vec3<i32> with tuples as values. Only the small
  per-joint tables are WGSL arrays; the contact tables, which grow with the scene, go to the `tab` buffer (lavapipe
  compiles a dynamically indexed array into a select over every element)."""
  if kind.startswith("vec"):
    n = int(kind[3])
    vals = [f"{kind}({', '.join(str(int(x)) for x in v)})" for v in values] or [f"{kind}({', '.join(['0'] * n)})"]
  else:
    vals = [str(v) + ("u" if kind == "u32" else "") for v in values] or ["0" + ("u" if kind == "u32" else "")]
  return f"array<{kind}, {len(vals)}>({', '.join(vals)})"


def _table(name: str, kind: str, values: list) -> str:
  arr = _arr(kind, values)
  return f"var<private> {name}: {arr[:arr.index('>(') + 1]} = {arr};"


def _wgsl_value(v) -> str:
  """A module constant as a WGSL value: an offset (slice start) or a number untyped (abstract), like a Python
  number, so products of constants such as SUPPORT_SIN * SUPPORT_SIN round to f32 once, as tinygrad's constants do;
  a tuple of numbers as an f32 array."""
  if isinstance(v, slice): v = v.start
  if isinstance(v, tuple): return f"array<f32, {len(v)}>({', '.join(repr(float(x)) for x in v)})"
  return repr(v)


def oracle_constants() -> list[str]:
  """Every upper-case number, slice (its start) or tuple of numbers of the CONSTANT_MODULES as a WGSL constant named
  <MODULE>_<NAME>, a leading _ dropped: box_box.MARGIN is BOX_BOX_MARGIN, packed.VEL (slice(7, 10)) PACKED_VEL = 7,
  math3._ASIN the array MATH3_ASIN. The prefix keeps names the modules share (EPS, PARALLEL_SIN) apart."""
  def kept(v): return (isinstance(v, (int, float, slice)) and not isinstance(v, bool)) or (
    isinstance(v, tuple) and v and all(isinstance(x, float) for x in v))
  out = []
  for mod in CONSTANT_MODULES:
    prefix = mod.__name__.rsplit(".", 1)[-1].upper()
    for name, v in vars(mod).items():
      if name.lstrip("_").isupper() and kept(v): out.append(f"const {prefix}_{name.lstrip('_')} = {_wgsl_value(v)};")
  return out


def collide_header(model: Model | None = None) -> str:
  """The generated part every program with the pair functions needs (kernels/collide.wgsl): the oracle's constants,
  MAX_SLOTS (the most contact slots a pair function fills) and pair_contacts, which runs pair kind k, the k-th
  entry of oracle/collide NARROWPHASE (its registration order; contact_tables numbers the pairs' kinds the same).
  Given a model, only the kinds its plan has get a case (used_pairs), so the others' functions are dead code."""
  used = NARROWPHASE.keys() if model is None else used_pairs(model)
  cases = "\n".join(f"    case {k}u: {{ {fn.__name__}(a, b); }}" for k, (key, (fn, _)) in enumerate(NARROWPHASE.items())
                    if key in used)
  return "\n".join([*oracle_constants(), f"const MAX_SLOTS = {max(k for _, k in NARROWPHASE.values())}u;",
                    "fn pair_contacts(kind: u32, a: Geom, b: Geom) {", "  switch kind {", cases,
                    "    default: {}", "  }", "}"]) + "\n"


def collide_source() -> str:
  """A program of the pair functions alone, without the step's buffers or a scene: collide_header, then
  COLLIDE_FILES. Add an entry point to run it (tests/test_parity_narrowphase.py)."""
  return collide_header() + "\n".join(_read(f) for f in COLLIDE_FILES)


def _f(x: float) -> str: return repr(float(x))


@lru_cache(maxsize=None)
def pair_adjoints() -> dict[tuple[str, str], str]:
  """The pair kinds of oracle/collide NARROWPHASE whose pair function has its `<name>_adj` in kernels/adjoint/ (once
  per process, as _read: check_backward and backward_source ask at every step_vjp call)."""
  text = "".join(_read(f) for f in ADJOINT_FILES)
  return {k: fn.__name__ for k, (fn, _) in NARROWPHASE.items() if re.search(rf"\bfn {fn.__name__}_adj\(", text)}


def used_pairs(model: Model) -> set[tuple[str, str]]:
  """The pair kinds (type_a, type_b) the scene's contact plan can hand the narrowphase."""
  return {(blk.type_a, blk.type_b) for blk in contacts.plan_blocks(model) if blk.pairs}


def pair_contacts_adj(model: Model) -> str:
  """The dispatch over pair kinds for the narrowphase's adjoint, as collide_header's pair_contacts, with a case for
  each kind the scene's plan has (the others' adjoints, box_box_adj above all, are then dead code the compiler
  drops: lavapipe's compile of stack10's backward took minutes with them all). A kind without an adjoint returns
  zero gradients; check_backward keeps such scenes out."""
  adj = pair_adjoints()
  used = used_pairs(model)
  cases = "\n".join(f"    case {k}u: {{ return {fn.__name__}_adj(a, b); }}" for k, (key, (fn, _))
                    in enumerate(NARROWPHASE.items()) if key in adj and key in used)
  return "\n".join(["fn pair_contacts_adj(kind: u32, a: Geom, b: Geom) -> GeomPairAdj {", "  switch kind {", cases,
                    "    default: {}", "  }", "  return GeomPairAdj(geom_adj_zero(), geom_adj_zero());", "}"]) + "\n"


def check_backward(model: Model) -> None:
  """An Unsupported error naming what the backward kernel cannot differentiate yet."""
  check_supported(model)
  why = []
  adj = pair_adjoints()
  missing = sorted({f"{blk.type_a}-{blk.type_b}" for blk in contacts.plan_blocks(model)
                    if blk.pairs and (blk.type_a, blk.type_b) not in adj})
  if missing: why.append(f"contacts between {', '.join(missing)} (their pair functions' adjoints)")
  if model.nbody == 0: why.append("no bodies")
  if why: raise Unsupported(f"{model.name}: the WGSL backward kernel does not differentiate {', '.join(why)} yet; "
                            "use the oracle backend for this scene's gradients")


def armature_tables(model: Model) -> list[str]:
  """The armature stage's constants (kernels/armature.wgsl and armature_system.wgsl, from armed_trees): the armed trees'
  joints and bodies as CSR tables, whether each floats (and the planar joint holding its root, or -1), per body the
  bit mask of its tree's joints whose subtree holds it, each joint's armature, stiffness and springref (static, as in
  the Model) and whether its tree is armed (joint_damping leaves those to the stage), and the motors on armed joints
  (motor_loads leaves them to the stage too)."""
  tr = armed_trees(model)
  n = max((len(t.joints) for t in tr), default=1)
  sub = [0] * model.nbody
  for t in tr:
    for k, s in enumerate(t.subtree):
      for b in s: sub[b] |= 1 << k
  jstart, bstart = [0], [0]
  for t in tr: jstart.append(jstart[-1] + len(t.joints)); bstart.append(bstart[-1] + len(t.bodies))
  armed = armed_joints(model)
  motors = [a for a, t in enumerate(model.act_type) if t == "motor" and model.jnt_armature[model.act_joint[a]]]
  return [f"const {k}: u32 = {v}u;" for k, v in dict(NARMTREE=len(tr), ARM_MAX=n, ARM_R=max(n, 6),
                                                     ARM_W=max(n, 6) + n, NARM_MOTOR=len(motors)).items()] + [
    f"const ARM_ANY_FLOATS: bool = {str(any(t.floats for t in tr)).lower()};",   # else the floating part is dead code
    _table("ARM_JSTART", "u32", jstart), _table("ARM_JOINTS", "u32", [j for t in tr for j in t.joints]),
    _table("ARM_BSTART", "u32", bstart), _table("ARM_BODIES", "u32", [b for t in tr for b in t.bodies]),
    _table("ARM_FLOATS", "u32", [int(t.floats) for t in tr]), _table("ARM_PLANE", "i32", [t.plane for t in tr]),
    _table("ARM_SUB", "u32", sub),
    _table("JNT_ARMATURE", "f32", [_f(a) for a in model.jnt_armature]),
    _table("JNT_STIFFNESS", "f32", [_f(k) for k in model.jnt_stiffness]),
    _table("JNT_SPRINGREF", "f32", [_f(s) for s in model.jnt_springref]),
    _table("JNT_UNARMED", "f32", [_f(j not in armed) for j in range(model.njoint)]),
    _table("ARM_MOTORS", "u32", motors)]


def header(model: Model, batch: int, steps: int, damping: bool, lanes: int = 1, tape: dict | None = None) -> str:
  off, nparam = param_layout(model)
  order = [j for kind in CONSTRAINTS for j in model.joints_of_type(kind)]
  counts = joint_counts(model)
  def servo(kind): return [next((a for a, (t, jj) in enumerate(zip(model.act_type, model.act_joint))
                                 if t == kind and jj == j), -1) for j in range(model.njoint)]
  # an armed joint's motor loads its coordinate in the armature stage instead (oracle/motor_loads.py)
  motors = [a for a, t in enumerate(model.act_type) if t == "motor" and not model.jnt_armature[model.act_joint[a]]]
  mus = muscle.muscles(model)
  seg_ten, seg_a, seg_b = segments(model)
  lines = [f"const {k}: u32 = {v}u;" for k, v in dict(
    NMUSCLE=len(mus), NMUSCLE_ARR=max(len(mus), 1), MROWS=packed.muscle_rows(model), NROWS=state_rows(model),
    NSITE=model.nsite, NTENDON=model.ntendon, NTENDON_ARR=max(model.ntendon, 1), NSEG=len(seg_ten),
    NSEG_ARR=max(len(seg_ten), 1),
    NBODY=model.nbody, NJOINT=model.njoint, NBODY_ARR=max(model.nbody, 1), NJOINT_ARR=max(model.njoint, 1),
    LAMW=max(NLAM.values()), NLAM_ARR=max(model.njoint, 1) * max(NLAM.values()), NMOTOR=len(motors),
    NPARAM=nparam, NCTRL=max(model.nact, 1), BATCH=batch, NSTEPS=steps, SUBSTEPS=model.substeps,
    ITERATIONS=model.iterations, LANES=lanes, WORKGROUP=workgroup_size(lanes, batch),
    **{n.upper(): i for i, n in enumerate(JOINT_TYPES)},
    **{f"OFF_{n.upper()}": o for n, o in off.items()}).items()]
  lines += [f"const H: f32 = {_f(model.dt / model.substeps)};", f"const RELAXATION: f32 = {_f(model.relaxation)};",
            f"const EPS: f32 = {_f(EPS)};", f"const DAMPING: bool = {str(damping).lower()};",
            f"const RESTITUTION: bool = {str(model.contact_restitution).lower()};",
            f"const MODEL_BATCHED: bool = {str(model_batch(model) > 1).lower()};",
            # a hinge position servo anywhere: the oracle then runs the servo stage of every hinge (oracle/actuators.py)
            f"const POS_SERVOS: bool = {str('position' in model.act_type).lower()};",
            # which joint types the scene has: the solve's branches for the others are dead code the compiler drops
            # (the chain's backward compiled in 18 s rather than 28, cold, 2026-11-29)
            *(f"const HAS_{n.upper()}: bool = {str(n in model.jnt_type).lower()};" for n in JOINT_TYPES),
            # two or three hinges on one body anywhere (engine/scene.py types a group's hinges hinge2 or hinge3); false
            # makes the groups' branches dead code (the backward's adjoints of the groups are long)
            "const GROUPS: bool = HAS_HINGE2 || HAS_HINGE3;",
            _table("JNT_TYPE", "u32", [JOINT_TYPES.index(t) for t in model.jnt_type]),
            _table("JNT_PARENT", "i32", list(model.jnt_parent)), _table("JNT_CHILD", "i32", list(model.jnt_child)),
            _table("JOINT_ORDER", "u32", order),
            _table("COUNTS", "f32", [_f(n) for n in counts]), _table("JNT_POS_SERVO", "i32", servo("position")),
            _table("JNT_VEL_SERVO", "i32", servo("velocity")), _table("ACT_JOINT", "i32", list(model.act_joint)),
            _table("JNT_RANGE2", "f32", [_f(x) for r in model.jnt_range2 for x in r]),
            # each joint's group of hinges on one body (kernels/hinges.wgsl members), padded to three
            _table("JNT_GROUP", "u32", [k for j, g in enumerate(model.jnt_group) for k in (*g, *g[-1:], j, j, j)[:3]]),
            _table("JNT_GINDEX", "u32", [g.index(j) if g else 0 for j, g in enumerate(model.jnt_group)]),
            _table("MOTORS", "u32", motors), *armature_tables(model),
            _table("MUSCLES", "u32", list(mus)), _table("MUS_TENDON", "u32", [model.act_tendon[a] for a in mus]),
            _table("SITE_BODY", "i32", list(model.site_body)), _table("SEG_TENDON", "u32", list(seg_ten)),
            _table("SEG_A", "u32", list(seg_a)), _table("SEG_B", "u32", list(seg_b)),
            f"const DT: f32 = {_f(model.dt)};", f"const MARGIN: f32 = {_f(model.contact_margin)};",
            f"const CONTACT_BETA: f32 = {_f(model.contact_beta)};",
            f"const DEPEN: f32 = {_f(model.contact_depen * (model.dt / model.substeps))};",
            *(f"const {n.upper()}_G: u32 = {i}u;" for i, n in enumerate(GEOM_TYPES)),
            *(f"const {k} = {v}u;" for k, v in contact_tables(model)[0].items())]
  # the forward's tape hooks (kernels/xpbd_step.wgsl substep) record nothing; the backward's record (tape_layout)
  hooks = ("fn tape_iteration(it: u32) {}\nfn tape_solve(b: u32, dth: vec3<f32>, scale: f32) {}\n"
           "fn tape_damping() {}\nfn tape_contact_velocity() {}\nfn tape_armature() {}\n" if tape is None else
           "".join(f"const {k}: u32 = {v}u;\n" for k, v in tape.items()))
  return ("\n".join(lines) + "\n" + collide_header(model) + lane_functions(lanes)
          + env_buffers(model, lanes, tape is not None) + hooks)


@lru_cache(maxsize=None)
def _read(name: str) -> str:
  with open(os.path.join(os.path.dirname(__file__), name)) as f: return f"// ---- {name} ----\n" + f.read()


# what a model without armature gets in place of kernels/armature.wgsl: its two entry points, empty, so that the
# stage's solver (private arrays, dense solves) is not compiled into every program (lavapipe compiles it even where
# NARMTREE == 0 makes the calls dead)
NO_ARMATURE = "fn armature_start() {}\nfn armature(h: f32) {}\n"
# and in place of kernels/adjoint/armature.wgsl, its entry points (kernels/adjoint/xpbd_step.wgsl substep_adj)
NO_ARMATURE_ADJ = "fn armature_adj(h: f32) {}\nfn armature_start_adj() {}\n"
# the armature stage's files and what an unarmed model's program has in their place (the system's files, whose only
# callers are the stage's, nothing: they read the armed trees' tables, ARM_JSTART and the like)
UNARMED = {"armature.wgsl": NO_ARMATURE, "armature_system.wgsl": "", "adjoint/armature.wgsl": NO_ARMATURE_ADJ,
           "adjoint/armature_system.wgsl": ""}


def _part(name: str, armed: bool) -> str:
  """Source file `name` (relative to kernels/) of the program, or for an unarmed model its UNARMED stand-in."""
  return _read(name) if armed or name not in UNARMED else UNARMED[name]


def kernel_body(armed: bool = True) -> str:
  return "\n".join(_part(os.path.basename(path), armed) for path in SOURCES)


def adjoint_source(model: Model) -> str:
  """The backward program of `model` (one env): the step program, ADJOINT_FILES and BACKWARD_FILES, so the adjoints
  with the forward functions they differentiate. Add an entry point to run them (tests/test_parity_adjoint.py): the
  parameter gradients accumulate in outp's row 0 directly."""
  return backward_source(model, 1, damping=False, private_params=False)


def backward_source(model: Model, batch: int, damping: bool | None = None, store: bool = False,
                    private_params: bool | None = None, lanes: int = 1) -> str:
  """The backward kernel for `batch` envs of `model`: one env-step's adjoint, entry BACKWARD_ENTRY, on `lanes`
  invocations per env in workgroups of workgroup_size(lanes, batch), as the step program's layout. Its buffers are
  the step's (outp: the (B, GRAD_W) gradients), then the output gradient (binding 7) and the tape (binding 8:
  kernels.tape.tape_buffer, unused where the tape is private); tape_layout(store, lanes) gives the widths.
  private_params: sum the parameter gradients in private memory (None: where the row has at most PRIVATE_PARAMS and
  the env has one lane). Bound to a trajectory (engine.wgsl_backward.trajectory_vjp) it runs the adjoint of every step
  in one launch (kernels/adjoint/xpbd_step.wgsl)."""
  check_backward(model)
  damping = has_damping(model) if damping is None else damping
  check_lanes(model, lanes, backward=True)
  nparam = param_layout(model)[1]
  private = lanes == 1 and (nparam <= PRIVATE_PARAMS if private_params is None else private_params)
  body = kernel_body(staged(model)) + "\n".join(_part(f, staged(model)) for f in ADJOINT_FILES + BACKWARD_FILES)
  body = _env_space(body, lanes)
  tape = {**tape_layout(model, damping, store, lanes), "GPRM_ARR": nparam if private else 1}
  return (f"// backward kernel generated for scene {model.name!r}, {lanes} lane(s) per env\n" +
          header(model, batch, 1, damping, lanes, tape) + f"const GPRM_PRIVATE: bool = {str(private).lower()};\n" +
          tape_declaration(tape) + body + pair_contacts_adj(model))


def _env_space(body: str, lanes: int) -> str:
  """`var<env>` and `ptr<env, ...>` (not WGSL) in the address space of the env's working state: private with one lane,
  workgroup memory shared by the env's lanes otherwise."""
  space = "private" if lanes == 1 else "workgroup"
  return re.sub(r"ptr<env,", f"ptr<{space},", re.sub(r"^var<env>", f"var<{space}>", body, flags=re.M))


def source(model: Model, batch: int, steps: int, damping: bool | None = None, lanes: int = 1) -> str:
  """The complete WGSL program for `batch` envs of `model`, advancing `steps` env-steps per launch. damping: whether
  the velocity pass runs (oracle.joint_damping.has_damping, which reads tensors: pass it in under a JIT capture). lanes:
  invocations per env (engine/wgsl.py picks them with default_lanes); launch the program on batch * lanes
  invocations in workgroups of workgroup_size(lanes, batch). Bound to an output of more than one state, a trajectory
  (engine.wgsl.trajectory), it runs as many steps as follow the start there, keeping each, with a control row per
  step, and `steps` is left unused."""
  check_supported(model)
  damping = has_damping(model) if damping is None else damping
  check_lanes(model, lanes)
  body = _env_space(kernel_body(staged(model)), lanes)
  head = f"// generated for scene {model.name!r}, {lanes} lane(s) per env\n"
  return head + header(model, batch, steps, damping, lanes) + body
