"""The XPBD step (M20 Alg. 2), composed from its stages, one file each in oracle/ and one function of the same name
in kernels/<stage>.wgsl (STAGES, in the order a step runs them):

- broadphase (oracle/broadphase.py), once per step (M20 sec. 3.5): the candidate geom pairs, wrapped here by
  contact_plan (oracle/contacts.py) into the step's ContactPlan;
then S substeps of h = dt / S, each:
- motor_loads (oracle/motor_loads.py): the motors' forces and torques from the controls, the tendons' springs and the
  muscles' forces (oracle/tendon.py, oracle/muscle.py);
- integrate (oracle/integrate.py): semi-implicit Euler with those loads, gravity and the gyroscopic term;
- narrowphase (oracle/narrowphase.py): the candidate pairs' contacts at the predicted poses;
- solve (oracle/solve.py), K times: one Jacobi iteration over every joint and contact;
- armature (oracle/armature.py), for a model with armature: one Newton step over the armed trees' joint coordinates,
  then a last Jacobi pass over the contacts alone;
- recover (oracle/recover.py): velocities from the substep's motion;
- contact_velocity (oracle/contact_velocity.py): dynamic friction and restitution, per contact;
- restitution (oracle/restitution.py): restitution per contact pair (skipped unless model.contact_restitution);
- joint_damping (oracle/joint_damping.py): joint damping and velocity drives (skipped unless has_damping);
- activation (oracle/activation.py): the muscles' activations one substep on (their forces in motor_loads used the
  ones the substep started from; skipped without muscles).

Each stage is one small kernel over a realised packed state (oracle/packed.py): a substep is 3 + K (types + 1)
kernels whatever the scene's size, each compiled once per scene and replayed every substep; contacts add a gather,
one narrowphase kernel per pair type, a gather, a kernel and a scatter per iteration, and three for the velocity pass.

The front door (engine/) imports from here only: STAGES, substep, step_packed and the stages and predicates below.
"""
from __future__ import annotations
from typing import Callable
from tinygrad import Tensor
from oracle.activation import activation
from oracle.armature import armature, staged
from oracle.contact_velocity import contact_velocity
from oracle.contacts import ContactPlan, contact_plan, find_pairs, has_contacts, plan_from_pairs  # noqa: F401
from oracle.integrate import integrate
from oracle.joint_damping import has_damping, joint_damping  # noqa: F401
from oracle.motor_loads import motor_loads
from oracle.narrowphase import narrowphase
from oracle.packed import join_act, split_act
from oracle.recover import recover
from oracle.restitution import restitution
from oracle.solve import init_lambda, solve
from oracle.types import Model

# one file per stage in oracle/ and in kernels/, each defining a function of its name (tests/test_wgsl_bridge.py)
STAGES = ("broadphase", "motor_loads", "integrate", "narrowphase", "solve", "armature", "recover", "contact_velocity",
          "restitution", "joint_damping", "activation")


def substep(model: Model, packed: Tensor, h: float, damping: bool, plan: ContactPlan | None = None,
            ctrl: Tensor | None = None, cut: Callable[[Tensor], Tensor] | None = None) -> Tensor:
  """One XPBD substep on the packed (B, nbody, 13) state (M20 Alg. 2, lines 4-17). plan: this step's candidate
  contact pairs (oracle/contacts.py), None when the scene has none. ctrl: (B, nact) actuator controls or None.
  cut: called on every tensor a stage hands to the next (in this order, the same every substep), which continues
  with what it returns; None is the identity. A segmented reverse mode (engine/grad_oracle.py) uses it to
  differentiate the substep one stage at a time."""
  cut = cut or (lambda t: t)
  def cuts(state: tuple) -> tuple:   # solve's (packed, joint multipliers per type, contact result)
    packed, lam, clam = state
    return cut(packed), {k: tuple(cut(t) for t in v) for k, v in lam.items()}, None if clam is None else cut(clam)
  packed, act = split_act(model, packed)   # the muscles' activations ride in the packed state's last rows
  start = packed
  force, torque = motor_loads(model, packed, ctrl, act)
  packed = cut(integrate(model, packed, h, force, torque).contiguous())
  pred = packed
  contacts = cut(narrowphase(model, plan, packed)) if plan is not None else None
  lam, clam = init_lambda(model), None
  late = staged(model)   # then only the contacts' last pass may push out beyond the approach (solve.depenetration)
  for _ in range(model.iterations):
    packed, lam, clam = cuts(solve(model, packed, lam, h, plan, contacts, clam, ctrl, depen=not late))
  if late:
    packed = cut(armature(model, packed, pred, start, h, ctrl).contiguous())
    # the contacts get the last word: the step, which sees inertia and the limits but not the contacts, may have moved
    # bodies into them (the joints it keeps exactly; a second pass over them would apply the servos twice)
    if plan is not None:
      packed, lam, clam = cuts(solve(model, packed, lam, h, plan, contacts, clam, ctrl, joints=False))
  packed = cut(recover(packed, h).contiguous())
  if plan is not None: packed = cut(contact_velocity(model, plan, contacts, clam, packed, h))
  if plan is not None and model.contact_restitution: packed = cut(restitution(model, plan, contacts, clam, packed, h))
  if damping: packed = cut(joint_damping(model, packed, h, ctrl))
  return packed if act is None else join_act(model, packed, activation(model, act, ctrl, h))


def step_packed(model: Model, packed: Tensor, damping: bool, eager: bool = False, ctrl: Tensor | None = None
                ) -> tuple[Tensor, ContactPlan | None]:
  """Advance the packed (B, nbody, 13) state by model.dt; also returns the step's contact plan (its `overflow` counts
  the pairs the broadphase dropped), None without contacts. eager=True realises every substep: identical substep
  graphs then hit tinygrad's schedule cache (a fast first call under TinyJit) but the result is cut from autograd;
  eager=False keeps one lazy graph for Tensor.gradient (short horizons: the graph grows with S * steps)."""
  h = model.dt / model.substeps
  plan = contact_plan(model, packed, realize=eager) if has_contacts(model) else None
  for _ in range(model.substeps):
    packed = substep(model, packed, h, damping, plan, ctrl)
    if eager: packed = packed.realize()
  return packed, plan
