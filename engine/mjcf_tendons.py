"""The MJCF reader's sites, spatial tendons, muscles, tendon equalities (distance joints) and the custom numerics
engine/mjcf_write.py leaves for what MJCF has no attribute for. `cv` is engine/mjcf.py's _Converter (the compiled
MuJoCo model, its data at qpos0, named errors and warnings).

- A spatial tendon through sites only becomes a scene tendon (stiffness, damping, its spring length); pulleys,
  wrapping geoms, limits, friction loss, armature and a dead-band spring length are refused by name, and so are fixed
  tendons, but for one that exerts no force (no spring, damper, limit, friction loss, armature, actuator or equality:
  Gymnasium's humanoid has two), which is dropped with a warning.
- A one-tendon <equality><tendon> (MuJoCo: L - L0 = polycoef[0]) on a two-site tendon nothing else uses becomes a
  distance joint between the sites' bodies, rest length L0 + polycoef[0]; its tendon and sites are not scene ones.
- A <weld> between two bodies becomes a fixed joint, a <connect> a ball joint (loop closures, or joints to a free
  body), anchored where MuJoCo anchors them at qpos0.
- A <muscle> on a tendon becomes a muscle with MuJoCo's compiled parameters (F0 as MuJoCo resolved it, acc0 MuJoCo's).
"""
from __future__ import annotations
import numpy as np
from engine.mjcf_write import EXTRAS, PREFIX
from engine.npquat import quat_conj, quat_mul

TOL = 1e-9   # how far a weld's relpose may be from the relative pose at qpos0 (MuJoCo's own, float64 rounding)

WRAP_JOINT, WRAP_SITE, TRN_JOINT, TRN_TENDON, DYN_MUSCLE, GAIN_MUSCLE, BIAS_MUSCLE = 1, 3, 0, 3, 4, 2, 2
EQ_CONNECT, EQ_WELD, EQ_TENDON, OBJ_BODY = 0, 1, 3, 1   # mjtEq, mjtObj


def _v(x) -> list[float]: return [float(y) for y in x]


def tendon_sites(m, t: int) -> list[int]:
  return [int(m.wrap_objid[k]) for k in range(m.tendon_adr[t], m.tendon_adr[t] + m.tendon_num[t])]


def inert(m, t: int) -> bool:
  """Whether tendon t exerts no force: no spring, damper, limit, friction loss or armature, and no actuator or
  equality acts on it."""
  acted = (t in m.actuator_trnid[m.actuator_trntype == TRN_TENDON, 0]
           or any(m.eq_type[e] == EQ_TENDON and t in (m.eq_obj1id[e], m.eq_obj2id[e]) for e in range(m.neq)))
  return not (acted or m.tendon_stiffness[t] or m.tendon_damping[t] or m.tendon_limited[t]
              or m.tendon_frictionloss[t] or m.tendon_armature[t])


def refuse_tendons(cv) -> None:
  """Named errors for the tendons, equalities and tendon actuators the engine has no counterpart for."""
  m = cv.m
  for t in range(m.ntendon):
    name = cv.name("tendon", t)
    kinds = {int(m.wrap_type[k]) for k in range(m.tendon_adr[t], m.tendon_adr[t] + m.tendon_num[t])}
    if kinds == {WRAP_JOINT} and inert(m, t):
      cv.warn(f"fixed tendon '{name}' dropped: it has no stiffness, damping, range, friction loss, armature, actuator "
              "or equality, so it exerts no force")
      cv.inert_tendons.add(t)
      continue
    if kinds != {WRAP_SITE}:
      cv.fail(f"tendon '{name}': only spatial tendons through sites are supported (not fixed tendons, pulleys or "
              "wrapping geoms)")
    for attr, what in (("tendon_limited", "range"), ("tendon_frictionloss", "frictionloss"),
                       ("tendon_armature", "armature")):
      if getattr(m, attr)[t]: cv.fail(f"tendon '{name}': {what} is not supported")
    lo, hi = m.tendon_lengthspring[t]
    if lo != hi: cv.fail(f"tendon '{name}': a dead-band springlength [{lo:g}, {hi:g}] is not supported")
  for e in range(m.neq):
    name, t = cv.name("equality", e), int(m.eq_obj1id[e])
    if not m.eq_active0[e]: cv.fail(f"equality '{name}': an inactive equality is not supported")
    if m.eq_type[e] in (EQ_CONNECT, EQ_WELD):
      if m.eq_objtype[e] != OBJ_BODY:
        cv.fail(f"equality '{name}': a <connect> or <weld> between sites is not supported (between bodies it is)")
      continue
    if m.eq_type[e] != EQ_TENDON or m.eq_obj2id[e] >= 0:
      cv.fail(f"equality '{name}': only one-tendon <tendon>, <connect> and <weld> equalities are supported")
    if len(tendon_sites(m, t)) != 2 or m.tendon_stiffness[t] or m.tendon_damping[t] or t in m.actuator_trnid[
        m.actuator_trntype == TRN_TENDON, 0]:
      cv.fail(f"equality '{name}': its tendon '{cv.name('tendon', t)}' must run between two sites, with no spring "
              "and no actuator (it becomes a distance joint)")
  for a in range(m.nu):
    trn = int(m.actuator_trntype[a])
    muscle = (trn == TRN_TENDON and m.actuator_dyntype[a] == DYN_MUSCLE and m.actuator_gaintype[a] == GAIN_MUSCLE
              and m.actuator_biastype[a] == BIAS_MUSCLE)
    if trn != TRN_JOINT and not muscle:
      cv.fail(f"actuator '{cv.name('actuator', a)}': only actuators on joints and muscles on tendons are supported "
              f"(trntype {trn})")


def equality_joints(cv, group: list[int], names: dict[int, str]) -> list[tuple[dict, int | None]]:
  """(scene joint, its tendon or None) for each equality, in MuJoCo's order: a tendon one a distance joint, a <weld> a
  fixed joint, a <connect> a ball joint (each rigid here where MuJoCo's is soft, as its joints are)."""
  m, d, out = cv.m, cv.d, []
  for e in range(m.neq):
    if m.eq_type[e] in (EQ_CONNECT, EQ_WELD):
      out.append((_weld_or_connect(cv, e, group, names), None))
      continue
    t = int(m.eq_obj1id[e])
    s1, s2 = tendon_sites(m, t)
    a, b = group[m.site_bodyid[s1]], group[m.site_bodyid[s2]]
    if a == b: cv.fail(f"equality '{cv.name('equality', e)}': both sites of its tendon on one body")
    if b == 0: (a, s1), (b, s2) = (b, s2), (a, s1)   # the scene's child is a body
    out.append(({"name": cv.name("equality", e), "type": "distance", "parent": names[a], "child": names[b],
                 "anchor_parent": _v(d.site_xpos[s1]), "anchor_child": _v(d.site_xpos[s2]),
                 "length": float(m.tendon_length0[t] + m.eq_data[e, 0])}, t))
  return out


def _weld_or_connect(cv, e: int, group: list[int], names: dict[int, str]) -> dict:
  """Equality e, a <weld> or <connect> between bodies, as a fixed or ball joint at qpos0: the world anchor is the
  weld's point on body2 or the connect's on body1 (MuJoCo derives the other side's from qpos0). A weld's relpose (that
  point in body1's frame, and body2's orientation relative to body1's) must be the one at qpos0 (MuJoCo's default),
  which the fixed joint holds."""
  m, d, name = cv.m, cv.d, cv.name("equality", e)
  b1, b2 = int(m.eq_obj1id[e]), int(m.eq_obj2id[e])
  a, b = group[b1], group[b2]
  if a == b: cv.fail(f"equality '{name}': bodies '{cv.name('body', b1)}' and '{cv.name('body', b2)}' are one scene "
                     "body (welded by nesting)")
  data = m.eq_data[e]
  weld = m.eq_type[e] == EQ_WELD
  on = b2 if weld else b1
  anchor = d.xpos[on] + d.xmat[on].reshape(3, 3) @ data[0:3]
  if weld:
    r1 = d.xmat[b1].reshape(3, 3)
    rel = quat_mul(quat_conj(d.xquat[b1]), d.xquat[b2])
    if (np.abs(data[3:6] - r1.T @ (anchor - d.xpos[b1])).max() > TOL   # the anchor in body1's frame at qpos0
        or min(np.abs(data[6:10] - rel).max(), np.abs(data[6:10] + rel).max()) > TOL):
      cv.fail(f"equality '{name}': a weld's relpose other than the bodies' relative pose at qpos0 is not supported")
  if b == 0: a, b = b, a   # the scene's child is a body
  return {"name": name, "type": "fixed" if weld else "ball", "parent": names[a], "child": names[b],
          "anchor": _v(anchor)}


def sites_and_tendons(cv, group: list[int], names: dict[int, str], skip: set[int]) -> tuple[list, list]:
  """Scene sites and tendons, less the tendons in `skip` (distance joints) and the sites only they use."""
  m, d = cv.m, cv.d
  dropped = cv.inert_tendons   # fixed tendons that exert no force (refuse_tendons): no sites, no scene tendon
  used = {s for t in range(m.ntendon) if t not in skip | dropped for s in tendon_sites(m, t)}
  only_skipped = {s for t in skip for s in tendon_sites(m, t)} - used
  sites = [{"name": cv.name("site", s), "body": names[group[m.site_bodyid[s]]], "pos": _v(d.site_xpos[s])}
           for s in range(m.nsite) if s not in only_skipped]
  tendons = [{"name": cv.name("tendon", t), "sites": [cv.name("site", s) for s in tendon_sites(m, t)],
              "stiffness": float(m.tendon_stiffness[t]), "damping": float(m.tendon_damping[t]),
              "length": float(m.tendon_lengthspring[t, 0])} for t in range(m.ntendon) if t not in skip | dropped]
  return sites, tendons


def muscle(cv, a: int) -> dict:
  """Actuator a, a muscle on a tendon, with MuJoCo's compiled parameters."""
  m = cv.m
  if m.actuator_gear[a, 0] != 1: cv.fail(f"actuator '{cv.name('actuator', a)}': a muscle's gear must be 1")
  g, dyn = m.actuator_gainprm[a], m.actuator_dynprm[a]
  lo, hi = m.actuator_ctrlrange[a] if m.actuator_ctrllimited[a] else (0.0, 1.0)   # MuJoCo clamps excitation to [0, 1]
  return {"name": cv.name("actuator", a), "type": "muscle", "tendon": cv.name("tendon", int(m.actuator_trnid[a, 0])),
          "ctrlrange": [float(lo), float(hi)], "range": _v(g[0:2]), "force": float(g[2]), "scale": float(g[3]),
          "lmin": float(g[4]), "lmax": float(g[5]), "vmax": float(g[6]), "fpmax": float(g[7]), "fvmax": float(g[8]),
          "timeconst": _v(dyn[0:2]), "tausmooth": float(dyn[2]), "lengthrange": _v(m.actuator_lengthrange[a]),
          "acc0": float(m.actuator_acc0[a])}


def read_extras(cv) -> dict[str, np.ndarray]:
  """The tinyxpbd: custom numerics (engine/mjcf_write.py EXTRAS), by name without the prefix."""
  m, out = cv.m, {}
  for i in range(m.nnumeric):
    name = cv.name("numeric", i)
    if not name.startswith(PREFIX): continue
    key = name[len(PREFIX):]
    if key not in EXTRAS: cv.fail(f"custom numeric '{name}': unknown (known: {', '.join(EXTRAS)})")
    out[key] = np.array(m.numeric_data[m.numeric_adr[i]:m.numeric_adr[i] + m.numeric_size[i]], np.float64)
  return out


def apply_extras(cv, scene: dict, x: dict[str, np.ndarray]) -> None:
  """Put the custom numerics into a converted scene (per-element ones are in the reader's order), then reorder the
  bodies, joints and sites into the scene's order."""
  def take(key, n: int, per: int = 1) -> np.ndarray:
    if len(x[key]) != n * per: cv.fail(f"custom numeric '{PREFIX}{key}': expected {n * per} values, got {len(x[key])}")
    return x[key].reshape(n, per) if per > 1 else x[key]
  if "solver" in x:
    substeps, iterations, relaxation = take("solver", 3)
    scene.update(substeps=int(substeps), iterations=int(iterations), relaxation=float(relaxation))
  if "contact" in x:
    margin, beta, capacity, slots, depen = take("contact", 5)
    c = scene.setdefault("contact", {})
    c.update(margin=float(margin), softplus_beta=float(beta))
    c.pop("max_depenetration", None)   # the scene's own, not the reader's default for MuJoCo's models
    if depen: c["max_depenetration"] = float(depen)
    if capacity: c["pair_capacity"] = int(capacity)
    if slots: c["hash_slots"] = int(slots)
  if "camera" in x:
    cam = take("camera", 7)
    scene["camera"] = {"pos": _v(cam[0:3]), "target": _v(cam[3:6]), "fov": float(cam[6])}
  if "body_vel" in x:
    for b, v in zip(scene["bodies"], take("body_vel", len(scene["bodies"]), 6)):
      b["vel"], b["angvel"] = _v(v[:3]), _v(v[3:])
  for key, field in (("joint_compliance", "compliance"), ("joint_damping", "damping")):
    if key in x:
      for j, v in zip(scene["joints"], take(key, len(scene["joints"]))): j[field] = float(v)
  if "acc0" in x:
    for a, v in zip(scene["actuators"], take("acc0", len(scene["actuators"]))):
      if a["type"] == "muscle": a["acc0"] = float(v)
  for key, field in (("order_bodies", "bodies"), ("order_joints", "joints"), ("order_sites", "sites")):
    if key in x:
      order = [int(k) for k in take(key, len(scene[field]))]
      if sorted(order) != list(range(len(order))): cv.fail(f"custom numeric '{PREFIX}{key}': not a permutation")
      scene[field] = [scene[field][k] for k in order]
