"""What MuJoCo's options and contact parameters do to a model's physics, for the MJCF reader (engine/mjcf.py): each
one is mapped, refused by name or said in an MJCFWarning, never dropped silently (issue 19). `cv` is engine/mjcf.py's
_Converter (the compiled MuJoCo model, named errors and warnings).

- <option density/viscosity> (MuJoCo's fluid forces, which also carry <option wind> and the geoms' fluidshape):
  refused. This engine has no fluid model.
- <flag gravity="disable">: gravity 0. The other flags that change the physics (constraint, equality, limit, spring,
  damper, clampctrl, actuation: each switches a part of the model off) are refused by name; contact and filterparent
  are the collision filter's (engine/mjcf.py collisions). The solver's own flags (warmstart, refsafe, eulerdamp,
  midphase, nativeccd, island, sensor, autoreset) and enable flags other than override change how MuJoCo solves, not
  what it solves, and have nothing to map to here.
- <flag override="enable"> (MuJoCo's contact parameters replaced by <option o_margin o_solref o_solimp o_friction>):
  refused.
- body gravcomp, joint actuatorfrcrange: refused. A limited joint's margin: warned about.
- Per contact, MuJoCo takes the condim and friction of the geom with the higher priority, or with equal priorities the
  larger condim and the larger friction (mj_contactParam); condim 1 is frictionless, and condim 4 and 6 add torsional
  and rolling friction. This engine has one coefficient per geom and takes the larger of the pair's (the same rule as
  MuJoCo's equal priorities), so a condim-1 geom gets friction 0 where that makes no pair it may touch lose friction
  MuJoCo gives it, e.g. Gymnasium's hopper and humanoid, whose body geoms are condim 1 and whose floor is condim 3.
  A pair whose coefficient still differs from MuJoCo's, and torsional or rolling friction, are warned about.
- A pair's margin - gap (MuJoCo's contact is active from that distance, and holds the surfaces that far apart at
  rest): warned about. This engine's contacts act at touch; Gymnasium's ant (margin 0.01) rests 1 cm lower than
  MuJoCo's.
"""
from __future__ import annotations
import numpy as np

FLUID = ("density", "viscosity")
# mjtDisableBit names (without mjDSBL_) that switch part of the model's physics off, and what
PHYSICS_FLAGS = {"CONSTRAINT": "every constraint (contacts, limits, equalities)", "EQUALITY": "the equalities",
                 "LIMIT": "the joint and tendon limits", "SPRING": "the joint and tendon springs",
                 "DAMPER": "the joint and tendon dampers", "CLAMPCTRL": "the clamping of controls to ctrlrange",
                 "ACTUATION": "the actuators"}
FRICTIONLESS = 1   # condim 1: normal force only


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


def mujoco_friction(m, g1: int, g2: int) -> float:
  """The sliding friction of MuJoCo's contact between geoms g1 and g2 (mj_contactParam): the higher priority's, or
  with equal priorities the larger; 0 when the contact's condim is 1."""
  p1, p2 = m.geom_priority[g1], m.geom_priority[g2]
  if p1 != p2:
    g = g1 if p1 > p2 else g2
    condim, mu = m.geom_condim[g], m.geom_friction[g, 0]
  else:
    condim, mu = max(m.geom_condim[g1], m.geom_condim[g2]), max(m.geom_friction[g1, 0], m.geom_friction[g2, 0])
  return 0.0 if condim == FRICTIONLESS else float(mu)


def contact_friction(cv, touching: list[tuple[int, int]]) -> np.ndarray:
  """Each geom's friction coefficient for the scene, given the geom pairs MuJoCo lets touch (module docstring), with
  warnings for what it cannot match."""
  m = cv.m
  mu = m.geom_friction[:, 0].astype(float).copy()
  want = {(g1, g2): mujoco_friction(m, g1, g2) for g1, g2 in touching}
  partners: dict[int, list[tuple[int, float]]] = {}
  for (g1, g2), w in want.items():
    partners.setdefault(g1, []).append((g2, w))
    partners.setdefault(g2, []).append((g1, w))
  for g in np.flatnonzero(m.geom_condim == FRICTIONLESS):
    # 0 keeps every pair whose MuJoCo friction is the partner's own; the others would lose friction
    if all(w == 0.0 or w == mu[k] for k, w in partners.get(int(g), [])): mu[g] = 0.0
  def names(g1: int, g2: int) -> str: return f"'{cv.name('geom', g1)}' and '{cv.name('geom', g2)}'"
  off = [(g1, g2, w) for (g1, g2), w in want.items() if max(mu[g1], mu[g2]) != w]
  if off:
    g1, g2, w = off[0]
    cv.warn(f"{len(off)} geom pair(s) get another friction than MuJoCo's (condim, priority), e.g. {names(g1, g2)}: "
            f"{max(mu[g1], mu[g2]):g} here, {w:g} in MuJoCo")
  rolling = [(g1, g2) for g1, g2 in touching if max(m.geom_condim[g1], m.geom_condim[g2]) > 3]
  if rolling:
    cv.warn(f"torsional and rolling friction (condim 4, 6) dropped on {len(rolling)} geom pair(s), e.g. "
            f"{names(*rolling[0])}")
  gaps = [(g1, g2, max(m.geom_margin[g1], m.geom_margin[g2]) - max(m.geom_gap[g1], m.geom_gap[g2]))
          for g1, g2 in touching]
  gaps = [x for x in gaps if x[2] != 0]
  if gaps:
    g1, g2, _ = max(gaps, key=lambda x: abs(x[2]))
    worst = max(abs(x[2]) for x in gaps)
    cv.warn(f"contact margin - gap dropped on {len(gaps)} geom pair(s) (up to {worst:g} m, {names(g1, g2)}): "
            "MuJoCo holds touching surfaces that far apart, this engine lets them touch")
  return mu
