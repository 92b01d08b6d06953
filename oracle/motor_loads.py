"""Motor loads (DESIGN sec. 4): the forces and torques of every motor actuator, and of every tendon's spring and muscle
(oracle/tendon.py, oracle/muscle.py): external loads for integrate."""
from __future__ import annotations
from tinygrad import Tensor
from oracle.actuators import act_ctrl
from oracle.constraints.hinges import GROUPED, hinge_angles, limit_rows, members
from oracle.math3 import V3, const, take
from oracle.muscle import muscle_force
from oracle.solve import gather_side, solver_sides
from oracle.tendon import tendon_loads, tendon_spring, tendon_state
from oracle.types import WORLD


def motor_loads(model, packed: Tensor, ctrl: Tensor | None, act: Tensor | None = None) -> tuple[V3 | None, V3 | None]:
  """World-frame (force [N], torque [N m]) per body (B, nbody) from the motors, the tendons' springs and the muscles
  at the activations act (B, nmuscle), or (None, None) when there are none."""
  force, torque = joint_motor_loads(model, packed, ctrl)
  if not model.ntendon: return force, torque
  length, rate, geometry = tendon_state(model, packed)
  tension = tendon_spring(model, length, rate)
  if act is not None: tension = tension + muscle_force(model, act, length, rate)
  tf, tt = tendon_loads(model, tension, geometry)
  return (tf, tt) if force is None else (force + tf, torque + tt)


def joint_motor_loads(model, packed: Tensor, ctrl: Tensor | None) -> tuple[V3 | None, V3 | None]:
  """World-frame (force [N], torque [N m]) per body (B, nbody) from every motor, or (None, None) when there are none.
  A hinge motor turns the child by +tau about the axis and the parent by -tau; a slide motor pushes the child by +F
  along the axis and the parent by -F at the same point (the child's centre), i.e. -F and (x_c - x_p) x (-F)."""
  # an armed joint's motor loads its coordinate in the armature stage (oracle/armature.py) instead
  motors = tuple(a for a, t in enumerate(model.act_type)
                 if t == "motor" and not model.jnt_armature[model.act_joint[a]])
  if ctrl is None or not motors: return None, None
  jidx = tuple(model.act_joint[a] for a in motors)
  par, chi = tuple(model.jnt_parent[j] for j in jidx), tuple(model.jnt_child[j] for j in jidx)
  s1, s2 = gather_side(model, packed, par), gather_side(model, packed, chi)
  axis = s1.q.rotate(V3.of(take(model.jnt_axis_parent, jidx, axis=-2)))
  if any(model.jnt_group[j] for j in jidx): axis = _grouped_axes(model, packed, jidx, axis)
  load = axis * (act_ctrl(model, ctrl, motors) * take(model.act_gear, motors))          # (B, M)
  slide = const([float(model.jnt_type[j] == "slide") for j in jidx], packed)
  f_child, t_child = load * slide, load * (1.0 - slide)
  f_par, t_par = -f_child, -t_child - (s2.x - s1.x).cross(f_child)
  # scatter to bodies with constant one-hot (M, nbody) matrices; a world side has an all-zero row
  def onehot(bodies): return const([float(b == i and b != WORLD) for b in bodies for i in range(model.nbody)],
                                   packed).reshape(len(bodies), model.nbody)
  to_child, to_par = onehot(chi), onehot(par)
  def scatter(vc: V3, vp: V3) -> V3: return V3(*(c @ to_child + p @ to_par for c, p in zip(
    (vc.x, vc.y, vc.z), (vp.x, vp.y, vp.z))))
  return scatter(f_child, f_par), scatter(t_child, t_par)


def _grouped_axes(model, packed: Tensor, jidx: tuple[int, ...], axis: V3) -> V3:
  """The motors' torque directions, with a hinge of a group's (oracle/constraints/hinges.py) replaced by n_i, row i of
  [w1 w2 w3]^-1: a torque tau n_i does work tau dt_i, so it drives the hinge's own angle alone, MuJoCo's generalised
  force (a turn about the hinge's axis would move the group's other angles too)."""
  rows = {}
  for kind in GROUPED:
    lead, par, chi = solver_sides(model, kind)
    if not lead: continue
    _, w = hinge_angles(model, lead, gather_side(model, packed, par), gather_side(model, packed, chi))
    for i, n in enumerate(limit_rows(w)[:2 if kind == "hinge2" else 3]):
      for k, j in enumerate(members(model, lead, i)): rows[j] = V3(n.x[..., k], n.y[..., k], n.z[..., k])
  cols = [rows.get(j) for j in jidx]
  def comp(c, f): return Tensor.stack(*(f(v) if v is not None else c[..., m] for m, v in enumerate(cols)), dim=-1)
  return V3(comp(axis.x, lambda v: v.x), comp(axis.y, lambda v: v.y), comp(axis.z, lambda v: v.z))
