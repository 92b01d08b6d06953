"""JSON -> MJCF (issue 19): a scene written as an MJCF model that MuJoCo compiles and engine/mjcf.py reads back into
the same Model (tests/test_verify_mjcf_roundtrip.py checks every shipped scene). docs/mjcf.md has the mapping:

- Every scene body becomes an MJCF body in the scene's own (user) frame, with its geoms as the scene places them and
  an explicit <inertial>: the Model's centre of mass, principal axes, mass and principal moments. MuJoCo's mass
  properties are then the engine's, not re-derived from MuJoCo's geom densities.
- The hinge, slide, ball, planar and slide2 joints must form a tree rooted at the world: each becomes the MJCF joint
  of its child, nested in its parent's body (anchor and axis in the child's user frame; a planar joint two slides
  across its normal, NAME:u and NAME:v, then the hinge NAME about it; a slide2 joint two slides, NAME along axis,
  NAME:2 along axis2). A body no such joint holds gets a free joint.
- A distance joint becomes a spatial tendon between two sites, held at the joint's rest length by a one-tendon
  <equality><tendon> (MuJoCo: L - L0 = polycoef[0]); its child is then a free body.
- A fixed joint becomes a <weld> equality (anchor in the child's frame; MuJoCo takes the relative pose at qpos0),
  and a ball joint whose child already hangs from another joint, or which closes a loop, a <connect> equality (anchor
  in the parent's frame): each keeps its child a body of its own, free unless a tree joint holds it. A hinge, slide,
  planar or slide2 joint in that place has no MJCF equality (MuJoCo's weld, connect, joint and tendon equalities
  hold a pose, a point or coordinates) and is refused by name, as MuJoCo would merge a body welded by nesting.
- Contact filtering: MuJoCo's parent filter is this engine's default (jointed bodies do not touch); the rest are
  <exclude> pairs. A body excluded from a world with planes is refused: MJCF cannot exclude a body from the world's
  boxes but not its planes, and this engine pairs every plane with every body geom.
- What MJCF has no attribute for (substeps, iterations, relaxation, the contact settings, the camera, initial
  velocities, restitution, joint compliance, a distance joint's damping, a muscle's acc0, scene order where MuJoCo's
  tree order differs) goes into <custom><numeric name="tinyxpbd:..."/>, as Brax keeps its own parameters in MJCF.
  MuJoCo ignores them; engine/mjcf.py reads them back (EXTRAS).
"""
from __future__ import annotations
from xml.dom import minidom
from xml.etree import ElementTree as ET
import numpy as np
from engine.npquat import quat_conj, quat_mul, quat_rotate
# the Model's body frames, float64 numpy, no tensors
from engine.scene import _bodies_and_geoms, _perpendicular, load_scene_dict
from engine.scene_schema import SceneError

PREFIX = "tinyxpbd:"
# the custom numerics this writer emits and engine/mjcf.py reads: name -> what it holds (scene order throughout)
# per-element values are in the reader's order: MuJoCo's bodies, geoms and actuators, then its joints followed by the
# equality joints (distance, fixed, loop-closing ball); the order_* permutations then give the scene's order
EXTRAS = {"solver": "substeps, iterations, relaxation", "contact": "margin, softplus_beta, pair_capacity, hash_slots "
          "(0: derived), max_depenetration (0: none)", "camera": "pos (3), target (3), fov",
          "body_vel": "vel (3), angvel (3) per body",
          "geom_restitution": "per geom", "geom_density": "per geom [kg/m^3]",
          "body_given": "per body: 0 mass from the densities, 1 mass given, 2 mass and inertia given",
          "joint_compliance": "per joint", "joint_damping": "per joint", "acc0": "per actuator",
          "order_bodies": "each scene body's index in MuJoCo's body order (less the world)",
          "order_joints": "each scene joint's index in the reader's order (MJCF joints, then the equalities)",
          "order_sites": "each scene site's index in MuJoCo's site order (less the distance anchors)"}
WORLD = -1


def _f(x) -> str: return repr(float(x))   # the shortest decimal that reads back to the same float64
def _v(xs) -> str: return " ".join(_f(x) for x in xs)


def to_mjcf(src) -> str:
  """The MJCF text of a scene (a path, or a dict in the scene format). Raises SceneError naming what MJCF cannot
  hold."""
  return _Writer(load_scene_dict(src)).xml()


def mjcf_indices(src) -> dict[str, list[int]]:
  """Where each scene body, joint (MJCF joint: a planar joint's hinge; or the equality of one in equality_joints) and
  actuator lands in the MuJoCo model that to_mjcf(src) compiles to: per kind, the MuJoCo index of each scene index
  (bodies counted from 1, after the world)."""
  w = _Writer(load_scene_dict(src))
  w.xml()
  bodies = [w.mj_order.index(i) + 1 for i in range(len(w.names))]
  # one per body (None: its free joint); a planar joint's hinge comes after its two slides, a slide2's second slide
  # after its first (the one named as the scene joint), a group's hinges one after the other
  def mj(k):
    kind = None if k is None else w.s["joints"][k]["type"]
    return {"planar": [None, None, k], "slide2": [k, None]}.get(kind, [k, *w.after.get(k, [])])
  mj_joints = [k for i in w.mj_order for k in mj(w.parent_joint.get(i))]
  joints = [mj_joints.index(k) if k in mj_joints else w.equality.index(k) for k in range(len(w.s["joints"]))]
  return {"bodies": bodies, "joints": joints, "actuators": list(range(len(w.s["actuators"])))}


def equality_joints(src) -> list[int]:
  """The scene joints to_mjcf(src) writes as MJCF equalities (distance, fixed, a loop-closing ball), in their order."""
  return _Writer(load_scene_dict(src)).equality


class _Writer:
  def __init__(self, scene: dict):
    self.s = scene
    arrays, _ = _bodies_and_geoms(scene)
    self.pos0, self.quat0 = arrays["body_pos0"], arrays["body_quat0"]
    self.mass, self.inertia = 1.0 / arrays["body_inv_mass"], 1.0 / arrays["body_inv_inertia"]
    self.names = [b["name"] for b in scene["bodies"]]
    self.index = {n: i for i, n in enumerate(self.names)} | {"world": WORLD}
    self.parent_joint = self._tree()
    self.children: dict[int, list[int]] = {WORLD: []}
    for i in range(len(self.names)):
      k = self.parent_joint.get(i)
      self.children.setdefault(WORLD if k is None else self.index[scene["joints"][k]["parent"]], []).append(i)
    self.mj_order: list[int] = []

  def fail(self, what: str):
    raise SceneError(f"MJCF out: {what}")

  def _tree(self) -> dict[int, int]:
    """The joint that holds each body in the MJCF tree (hinge, slide, ball, planar, slide2), by child index, in the
    scene's joint order; the joints written as equalities instead go to self.equality (module docstring)."""
    held: dict[int, int] = {}
    self.equality: list[int] = []
    self.after: dict[int, list[int]] = {}   # a group's first hinge -> the others, written in its body after it
    def above(b: int):   # b and the bodies above it in the tree so far
      while True:
        yield b
        if b not in held: return
        b = self.index[self.s["joints"][held[b]]["parent"]]
    for k, j in enumerate(self.s["joints"]):
      if "after" in j:   # the second or third hinge of a group (engine/scene_joints.py hinge_groups): the same body
        lead = next(i for i in range(k - 1, -1, -1) if "after" not in self.s["joints"][i])
        self.after.setdefault(lead, []).append(k)
        continue
      if j["type"] in ("distance", "fixed"):
        self.equality.append(k)
        continue
      c = self.index[j["child"]]
      if c in held or c in above(self.index[j["parent"]]):
        if j["type"] == "ball":
          self.equality.append(k)
          continue
        if c in held:
          self.fail(f"joints[{k}] '{j['name']}': body '{j['child']}' is already the child of joint "
                    f"'{self.s['joints'][held[c]]['name']}'; an MJCF body hangs from one parent, and only a ball "
                    "joint (<connect>) or a fixed one (<weld>) can join it to another")
        self.fail(f"joints[{k}] '{j['name']}': the joints form a loop through body '{j['child']}'; MJCF bodies form a "
                  "tree, and only a ball joint (<connect>) or a fixed one (<weld>) can close a loop")
      held[c] = k
    return held

  # --- the document ---
  def xml(self) -> str:
    s = self.s
    root = ET.Element("mujoco", model=s["name"])
    ET.SubElement(root, "compiler", angle="radian", autolimits="true")
    opt = ET.SubElement(root, "option", timestep=_f(s["dt"]), gravity=_v(s["gravity"]))
    excludes, filterparent = self.collisions()
    flags = {} if s["contact"]["enabled"] else {"contact": "disable"}
    if not filterparent: flags["filterparent"] = "disable"
    if flags: ET.SubElement(opt, "flag", flags)
    custom = ET.SubElement(root, "custom")
    world = ET.SubElement(root, "worldbody")
    for k, g in enumerate(s["world"]["geoms"]): self.geom(world, g, g["pos"], g["quat"])
    self.distance_sites = {}   # joint index -> (parent site, child site) names
    self.sites(world, WORLD)
    for i in self.children[WORLD]: self.body(world, i, np.zeros(3), np.array([1.0, 0.0, 0.0, 0.0]))
    self.tendons_and_equalities(root)
    if excludes:
      contact = ET.SubElement(root, "contact")
      for a, b in excludes: ET.SubElement(contact, "exclude", body1=a, body2=b)
    self.actuators(root)
    for name, data in self.extras().items():
      ET.SubElement(custom, "numeric", name=PREFIX + name, data=_v(data))
    if not len(custom): root.remove(custom)
    text = minidom.parseString(ET.tostring(root, encoding="unicode")).toprettyxml(indent="  ")
    return "\n".join(text.splitlines()[1:]) + "\n"   # without the <?xml?> line, as MJCF files are usually written

  def body(self, parent_el, i: int, ppos: np.ndarray, pquat: np.ndarray) -> None:
    self.mj_order.append(i)
    body = self.s["bodies"][i]
    pos, quat = self.frame(i)
    el = ET.SubElement(parent_el, "body", name=self.names[i], pos=_v(quat_rotate(quat_conj(pquat), pos - ppos)),
                       quat=_v(quat_mul(quat_conj(pquat), quat)))
    k = self.parent_joint.get(i)
    if k is None: ET.SubElement(el, "freejoint")
    else:
      for n in [k, *self.after.get(k, [])]: self.joint(el, n, pos, quat)   # a group's hinges in turning order
    inv = quat_conj(quat)   # the Model's inertial frame in the user frame
    ET.SubElement(el, "inertial", pos=_v(quat_rotate(inv, self.pos0[i] - pos)), quat=_v(quat_mul(inv, self.quat0[i])),
                  mass=_f(self.mass[i]), diaginertia=_v(self.inertia[i]))
    for g in body["geoms"]: self.geom(el, g, g["pos"], g["quat"])
    self.sites(el, i)
    for c in self.children.get(i, []): self.body(el, c, pos, quat)

  def joint(self, el, k: int, pos: np.ndarray, quat: np.ndarray) -> None:
    j, inv = self.s["joints"][k], quat_conj(quat)
    attrs = {"name": j["name"], "type": j["type"], "pos": _v(quat_rotate(inv, np.array(j["anchor"]) - pos))}
    if j["type"] == "planar":   # two slides across the normal, then the hinge about it (engine/mjcf.py planar_hinge)
      n = quat_rotate(inv, np.array(j["axis"]))
      u = _perpendicular(n)
      for tag, a in (("u", u), ("v", np.cross(n, u))):
        ET.SubElement(el, "joint", name=f"{j['name']}:{tag}", type="slide", pos=attrs["pos"], axis=_v(a))
      attrs["type"] = "hinge"
    if j["type"] == "slide2":   # two slides: this one, then NAME:2 along axis2 (engine/mjcf.py two_slides)
      attrs["type"] = "slide"
      second = {**attrs, "name": f"{j['name']}:2", "axis": _v(quat_rotate(inv, np.array(j["axis2"])))}
      if "range2" in j: second["range"] = _v(j["range2"])
    if "axis" in j: attrs["axis"] = _v(quat_rotate(inv, np.array(j["axis"])))
    if "range" in j: attrs["range"] = _v(j["range"])
    if j["damping"]: attrs["damping"] = _f(j["damping"])
    if j.get("armature"): attrs["armature"] = _f(j["armature"])
    if j.get("stiffness"): attrs.update(stiffness=_f(j["stiffness"]), springref=_f(j["springref"]))
    ET.SubElement(el, "joint", attrs)
    if j["type"] == "slide2": ET.SubElement(el, "joint", second)

  def geom(self, el, g: dict, pos, quat) -> None:
    size = {"plane": list(g["size"] or [0.0, 0.0]) + [1.0]}.get(g["type"], g["size"])
    attrs = {"type": g["type"], "size": _v(size), "pos": _v(pos), "quat": _v(quat), "rgba": _v(g["rgba"]),
             "friction": f"{_f(g['friction'])} 0.005 0.0001"}
    if "name" in g: attrs = {"name": g["name"], **attrs}
    ET.SubElement(el, "geom", attrs)

  def frame(self, i: int) -> tuple[np.ndarray, np.ndarray]:
    """Body i's user frame (pos, quat) as the scene gives it: its MJCF body frame at qpos0 (WORLD: the world's)."""
    body = {"pos": [0.0] * 3, "quat": [1.0, 0.0, 0.0, 0.0]} if i == WORLD else self.s["bodies"][i]
    return np.array(body["pos"]), np.array(body["quat"])

  def sites(self, el, i: int) -> None:
    """The scene's sites on body i (WORLD: the world's), and the anchors of distance joints there."""
    pos, quat = self.frame(i)
    def add(name, p): ET.SubElement(el, "site", name=name, pos=_v(quat_rotate(quat_conj(quat), np.array(p) - pos)))
    for site in self.s["sites"]:
      if self.index[site["body"]] == i: add(site["name"], site["pos"])
    for k, j in enumerate(self.s["joints"]):
      if j["type"] != "distance": continue
      for side in ("parent", "child"):
        if self.index[j[side]] == i:
          add(f"{PREFIX}{j['name']}:{side}", j[f"anchor_{side}"])
          self.distance_sites.setdefault(k, {})[side] = f"{PREFIX}{j['name']}:{side}"

  def tendons_and_equalities(self, root) -> None:
    dist = [k for k, j in enumerate(self.s["joints"]) if j["type"] == "distance"]
    tendon = ET.SubElement(root, "tendon") if self.s["tendons"] or dist else None
    for t in self.s["tendons"]:
      sp = ET.SubElement(tendon, "spatial", name=t["name"], stiffness=_f(t["stiffness"]), damping=_f(t["damping"]),
                         springlength=_f(t["length"]))
      for name in t["sites"]: ET.SubElement(sp, "site", site=name)
    if not self.equality: return
    eq = ET.SubElement(root, "equality")
    for k in self.equality:   # in the scene's order, which is the reader's
      j = self.s["joints"][k]
      if j["type"] == "distance":
        names = self.distance_sites[k]
        sp = ET.SubElement(tendon, "spatial", name=f"{PREFIX}{j['name']}")
        for side in ("parent", "child"): ET.SubElement(sp, "site", site=names[side])
        rest = float(np.linalg.norm(np.subtract(j["anchor_child"], j["anchor_parent"])))
        ET.SubElement(eq, "tendon", name=j["name"], tendon1=f"{PREFIX}{j['name']}",
                      polycoef=f"{_f(j['length'] - rest)} 0 0 0 0")
        continue
      # weld: the anchor in body2's frame (MuJoCo's relpose then defaults to the pose at qpos0); connect: in body1's
      pos, quat = self.frame(self.index[j["child" if j["type"] == "fixed" else "parent"]])
      ET.SubElement(eq, "weld" if j["type"] == "fixed" else "connect", name=j["name"], body1=j["parent"],
                    body2=j["child"], anchor=_v(quat_rotate(quat_conj(quat), np.array(j["anchor"]) - pos)))

  def actuators(self, root) -> None:
    if not self.s["actuators"]: return
    el = ET.SubElement(root, "actuator")
    for a in self.s["actuators"]:
      attrs = {"name": a["name"], "ctrlrange": _v(a["ctrlrange"])}
      if a["type"] == "motor": ET.SubElement(el, "motor", attrs, joint=a["joint"], gear=_f(a["gear"]))
      elif a["type"] == "position":
        ET.SubElement(el, "position", attrs, joint=a["joint"], kp=_f(a["kp"]), kv=_f(a["kv"]))
      elif a["type"] == "velocity": ET.SubElement(el, "velocity", attrs, joint=a["joint"], kv=_f(a["kv"]))
      else:   # MuJoCo takes F0 as given when force > 0; the engine's F0 = scale / acc0 when force < 0
        force = a["force"] if a["force"] > 0 else a["scale"] / a["acc0"]
        ET.SubElement(el, "muscle", attrs, tendon=a["tendon"], force=_f(force), scale=_f(a["scale"]),
                      lengthrange=_v(a["lengthrange"]), range=_v(a["range"]), lmin=_f(a["lmin"]), lmax=_f(a["lmax"]),
                      vmax=_f(a["vmax"]), fpmax=_f(a["fpmax"]), fvmax=_f(a["fvmax"]),
                      timeconst=_v(a["timeconst"]), tausmooth=_f(a["tausmooth"]))

  def collisions(self) -> tuple[list[tuple[str, str]], bool]:
    """MJCF <exclude> pairs and whether MuJoCo's parent filter stays on, for the scene's contact filtering."""
    s = self.s
    if not s["contact"]["enabled"]: return [], True
    planes = any(g["type"] == "plane" for g in s["world"]["geoms"])
    solids = any(g["type"] != "plane" for g in s["world"]["geoms"])
    tree = set(self.parent_joint.values())
    # a tree joint between two bodies that collide needs the parent filter off, and the other such pairs excluded
    filterparent = not any(j["collide"] and k in tree and j["parent"] != "world" for k, j in enumerate(s["joints"]))
    out = []
    for k, j in enumerate(s["joints"]):
      if j["collide"]: continue
      if j["parent"] == "world":
        if solids: self.fail(f"joints[{k}] '{j['name']}': keeps body '{j['child']}' off the world's boxes but not its "
                             "planes, which MJCF cannot say (give the joint collide: true, or move the box to a body)")
      elif k not in tree or not filterparent: out.append((j["parent"], j["child"]))
    for i, (a, b) in enumerate(s["contact"].get("exclude", [])):
      if "world" in (a, b) and planes:
        self.fail(f"contact.exclude[{i}]: MJCF cannot exclude a body from the world's boxes but not its planes (this "
                  "engine pairs every plane with every body geom)")
      out.append((a, b))
    return out, filterparent

  def extras(self) -> dict[str, list[float]]:
    """The custom numerics (EXTRAS): what MJCF has no attribute for."""
    s, c = self.s, self.s["contact"]
    out = {"solver": [s["substeps"], s["iterations"], s["relaxation"]],
           "contact": [c["margin"], c["softplus_beta"], c.get("pair_capacity", 0), c.get("hash_slots", 0),
                       c["max_depenetration"]]}
    if "camera" in s: out["camera"] = [*s["camera"]["pos"], *s["camera"]["target"], s["camera"]["fov"]]
    # per-element values in the reader's order: MuJoCo's for bodies and geoms, tree joints then distance joints
    bodies = [s["bodies"][i] for i in self.mj_order]
    geoms = s["world"]["geoms"] + [g for b in bodies for g in b["geoms"]]
    tree = [n for i in self.mj_order if (k := self.parent_joint.get(i)) is not None
            for n in [k, *self.after.get(k, [])]]
    joints = [s["joints"][k] for k in tree + self.equality]
    if any(b["vel"] + b["angvel"] != [0.0] * 6 for b in bodies):
      out["body_vel"] = [x for b in bodies for x in b["vel"] + b["angvel"]]
    if any(g["restitution"] for g in geoms): out["geom_restitution"] = [g["restitution"] for g in geoms]
    # the mass properties as the scene gave them (MuJoCo has them as numbers): the reader writes the same fields
    out["geom_density"] = [g["density"] for g in geoms]
    out["body_given"] = [("mass" in b) + ("inertia" in b) for b in bodies]
    if any(j["compliance"] for j in joints): out["joint_compliance"] = [j["compliance"] for j in joints]
    if any(j["type"] == "distance" and j["damping"] for j in joints):
      out["joint_damping"] = [j["damping"] for j in joints]
    if any(a["type"] == "muscle" for a in s["actuators"]): out["acc0"] = [a.get("acc0", 1.0) for a in s["actuators"]]
    names = [j["name"] for j in joints]
    order = {"order_bodies": [self.mj_order.index(i) for i in range(len(self.names))],
             "order_joints": [names.index(j["name"]) for j in s["joints"]],
             "order_sites": self.site_order()}
    out.update({k: v for k, v in order.items() if v != list(range(len(v)))})
    return out

  def site_order(self) -> list[int]:
    """Each scene site's index in MuJoCo's site order: the world's first, then body by body in MJCF tree order."""
    mj = [k for i in [WORLD, *self.mj_order] for k, site in enumerate(self.s["sites"]) if self.index[site["body"]] == i]
    return [mj.index(k) for k in range(len(self.s["sites"]))]
