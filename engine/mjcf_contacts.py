"""Contacts in the MJCF reader (engine/mjcf.py): MuJoCo's contact filter as this engine's per-body-pair one
(collisions), and the contact parameters that change the physics, each mapped or said in an MJCFWarning, never dropped
silently (issue 19; contact_friction). `cv` is engine/mjcf.py's _Converter.

- Per contact, MuJoCo takes the condim and friction of the geom with the higher priority, or with equal priorities the
  larger condim and the larger friction (mj_contactParam); condim 1 is frictionless, and condim 4 and 6 add torsional
  and rolling friction. This engine has one coefficient per geom and takes the larger of the pair's (the same rule as
  MuJoCo's equal priorities), so a condim-1 geom gets friction 0 where that makes no pair it may touch lose friction
  MuJoCo gives it, e.g. Gymnasium's hopper and humanoid, whose body geoms are condim 1 and whose floor is condim 3.
  A pair whose coefficient still differs from MuJoCo's, and torsional or rolling friction, are warned about.
- The depenetration cap (DEPENETRATION): MuJoCo's soft contacts ease overlapping bodies apart.
- A pair's margin - gap (MuJoCo's contact is active from that distance, and holds the surfaces that far apart at
  rest): warned about. This engine's contacts act at touch; MuJoCo's own ant stands 13 mm taller for ant.xml's 0.01 m
  margin.
"""
from __future__ import annotations
import numpy as np

PLANE, FREE = 0, 0   # mjtGeom's plane, mjtJoint's free
FRICTIONLESS = 1     # condim 1: normal force only
# [m/s] contact.max_depenetration of every converted model with contacts (oracle/solve.py depenetration). MuJoCo's
# contacts are soft (solref: a critically damped spring of time constant 0.02 s), so a model that starts overlapping
# the floor is eased out of it; this engine's rigid contacts would throw it out in one substep (the converted
# humanoidstandup, 36 mm deep, flew ~10 m up). The cap is of the order of MuJoCo's own recovery: humanoidstandup's
# deepest contact shrinks 36 -> 21 -> 6.5 mm at 24 and 48 ms under mj_step (~0.6 m/s; a critically damped d / (e 0.02
# s) is 0.66 m/s), and at 0.3 m/s its highest centre of mass rises to 0.160 m (MuJoCo's 0.125 m) and it rests at
# MuJoCo's height (docs/mjcf.md; tests/test_verify_mjcf.py's slow run)
DEPENETRATION = 0.3


def geom_pairs(cv, group: list[int], joint_of: dict[int, int]) -> list[tuple[int, int, int, int, bool]]:
  """(g1, g2, a, b, touch) for each pair of geoms on different scene bodies a < b: whether MuJoCo's filter
  (contype/conaffinity, <exclude>, the parent filter) lets them touch. None where contacts are off."""
  m = cv.m
  if m.opt.disableflags & cv.mj.mjtDisableBit.mjDSBL_CONTACT: return []
  filter_parent = not (m.opt.disableflags & cv.mj.mjtDisableBit.mjDSBL_FILTERPARENT)
  excluded = {(int(sig) >> 16, int(sig) & 0xFFFF) for sig in m.exclude_signature}   # MuJoCo body ids, sorted
  parent_of = {b: group[m.body_parentid[b]] for b in joint_of}
  out = []
  for g1 in range(m.ngeom):
    for g2 in range(g1 + 1, m.ngeom):
      a, b = sorted((group[m.geom_bodyid[g1]], group[m.geom_bodyid[g2]]))
      if a == b: continue
      touch = bool(m.geom_contype[g1] & m.geom_conaffinity[g2]) or bool(m.geom_contype[g2] & m.geom_conaffinity[g1])
      if filter_parent and a != 0 and (parent_of.get(b) == a or parent_of.get(a) == b): touch = False
      if tuple(sorted((int(m.geom_bodyid[g1]), int(m.geom_bodyid[g2])))) in excluded: touch = False
      out.append((g1, g2, a, b, touch))
  return out


def collisions(cv, scene: dict, pairs_of_geoms: list[tuple[int, int, int, int, bool]], names: dict[int, str],
               joint_of: dict[int, int], group: list[int], equalities: list[tuple[dict, int | None]]) -> None:
  """MuJoCo's contact filter (contype/conaffinity, <exclude>, the parent filter) per pair of scene bodies: all their
  geom pairs may touch, or none (engine/mjcf.py's docstring); the joints joining a pair that may touch get collide,
  the other pairs are excluded. This engine pairs every world plane with every body geom, so a plane MuJoCo keeps off
  a body is refused, unless nothing in the model touches at all (then contacts are off); planes therefore say
  nothing about a pair's filtering. pairs_of_geoms: geom_pairs' (none where MuJoCo's contacts are off)."""
  m = cv.m
  parent_of = {b: group[m.body_parentid[b]] for b in joint_of}
  pairs: dict[tuple[int, int], set[bool]] = {}
  plane_refused, any_touch = [], False
  for g1, g2, a, b, touch in pairs_of_geoms:
    any_touch |= touch
    if PLANE in (m.geom_type[g1], m.geom_type[g2]):
      if not touch: plane_refused.append((g1, g2))
    else: pairs.setdefault((a, b), set()).add(touch)
  if not any_touch:
    scene["contact"] = {"enabled": False}
    return
  if plane_refused:
    g1, g2 = plane_refused[0]
    cv.fail(f"geoms '{cv.name('geom', g1)}' and '{cv.name('geom', g2)}': contype/conaffinity or <exclude> keep "
            "them apart, and this engine pairs every world plane with every body geom")
  joined = {tuple(sorted((parent_of[b], b))): next(j for j in scene["joints"] if j["child"] == names[b])
            for b in joint_of if m.jnt_type[joint_of[b]] != FREE}
  index = {n: k for k, n in names.items()}
  joined.update({tuple(sorted((index[j["parent"]], index[j["child"]]))): j for j, _ in equalities})
  exclude = []
  for (a, b), kinds in sorted(pairs.items()):
    if len(kinds) > 1:
      cv.fail(f"bodies '{names[a]}' and '{names[b]}': contype/conaffinity let some of their geoms touch and not "
              "others; this engine filters contacts per pair of bodies")
    if (a, b) in joined:
      if True in kinds: joined[(a, b)]["collide"] = True
    elif True not in kinds: exclude.append([names[a], names[b]])
  scene["contact"] = {**({"exclude": exclude} if exclude else {}), "max_depenetration": DEPENETRATION}


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
