"""What MuJoCo's options do to a model's physics, for the MJCF reader (engine/mjcf.py): each one is mapped, refused by
name or said in an MJCFWarning, never dropped silently (issue 19); the contact parameters are engine/mjcf_contacts.py's.
`cv` is engine/mjcf.py's _Converter (the compiled MuJoCo model, named errors and warnings).

- <option density/viscosity> (MuJoCo's fluid forces, which also carry <option wind> and the geoms' fluidshape):
  refused. This engine has no fluid model.
- <flag gravity="disable">: gravity 0. The other flags that change the physics (constraint, equality, limit, spring,
  damper, clampctrl, actuation: each switches a part of the model off) are refused by name; contact and filterparent
  are the collision filter's (engine/mjcf_contacts.py collisions). The solver's own flags (warmstart, refsafe,
  eulerdamp, midphase, nativeccd, island, sensor, autoreset) and enable flags other than override change how MuJoCo
  solves, not what it solves, and have nothing to map to here.
- <flag override="enable"> (MuJoCo's contact parameters replaced by <option o_margin o_solref o_solimp o_friction>):
  refused.
- body gravcomp, joint actuatorfrcrange: refused. A limited joint's margin: warned about.
"""
from __future__ import annotations
import numpy as np

FLUID = ("density", "viscosity")
# mjtDisableBit names (without mjDSBL_) that switch part of the model's physics off, and what
PHYSICS_FLAGS = {"CONSTRAINT": "every constraint (contacts, limits, equalities)", "EQUALITY": "the equalities",
                 "LIMIT": "the joint and tendon limits", "SPRING": "the joint and tendon springs",
                 "DAMPER": "the joint and tendon dampers", "CLAMPCTRL": "the clamping of controls to ctrlrange",
                 "ACTUATION": "the actuators"}


def refuse_options(cv) -> None:
  """Named errors for the options and body attributes this engine has no counterpart for (module docstring)."""
  m, mj = cv.m, cv.mj
  for attr in FLUID:
    if getattr(m.opt, attr):
      cv.fail(f"<option {attr}=\"{getattr(m.opt, attr):g}\">: MuJoCo's fluid forces are not supported")
  for flag, what in PHYSICS_FLAGS.items():
    if m.opt.disableflags & getattr(mj.mjtDisableBit, f"mjDSBL_{flag}"):
      cv.fail(f"<flag {flag.lower()}=\"disable\">: switching off {what} is not supported")
  if m.opt.enableflags & mj.mjtEnableBit.mjENBL_OVERRIDE:
    cv.fail("<flag override=\"enable\">: MuJoCo's contact parameter override (o_margin, o_solref, o_solimp, "
            "o_friction) is not supported")
  if (b := np.flatnonzero(m.body_gravcomp)).size:
    cv.fail(f"body '{cv.name('body', int(b[0]))}': gravcomp {m.body_gravcomp[b[0]]:g} is not supported")
  if (j := np.flatnonzero(m.jnt_actfrclimited)).size:
    cv.fail(f"joint '{cv.name('joint', int(j[0]))}': actuatorfrcrange is not supported")
  if (j := np.flatnonzero((m.jnt_margin != 0) & (m.jnt_limited != 0))).size:
    cv.warn(f"joint '{cv.name('joint', int(j[0]))}': its limit's margin {m.jnt_margin[j[0]]:g} dropped (MuJoCo's limit "
            "acts from that far inside the range, this engine's at the range)")


def gravity(cv) -> list[float]:
  """The scene's gravity: MuJoCo's, or 0 under <flag gravity="disable">."""
  m = cv.m
  off = m.opt.disableflags & cv.mj.mjtDisableBit.mjDSBL_GRAVITY
  return [0.0, 0.0, 0.0] if off else [float(x) for x in m.opt.gravity]
