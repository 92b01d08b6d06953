"""The slide2 joint (oracle/constraints/slide2.py): a box on two orthogonal slides in a plane tilted off the world's
axes, kicked across and along the plane, under gravity, in float64. Each step the joint's rigid rows hold: the box
keeps its orientation and stays in the plane through the anchor, and its coordinates stay within their ranges; gravity
carries it down the tilted axis until that coordinate rests on its lower bound, while the level axis keeps its kick
until its own bound stops it. joint_coords reads the first coordinate."""
import numpy as np
from tinygrad import dtypes
import engine
from oracle.joints import joint_coords
from oracle.packed import pack_state

A1, A2 = np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.96, 0.28])   # the level axis, the tilted one (16 deg)
RANGE, RANGE2 = [-0.05, 0.08], [-0.03, 0.04]                     # [m]
ANCHOR = np.array([0.0, 0.0, 1.0])


def scene() -> dict:
  return {"name": "slide2_box", "dt": 0.01, "substeps": 10, "contact": {"enabled": False},
          "bodies": [{"name": "box", "pos": ANCHOR.tolist(), "vel": [0.6, 0.3, 0.4], "angvel": [1.0, -2.0, 0.5],
                      "geoms": [{"type": "box", "size": [0.1, 0.05, 0.02]}]}],
          "joints": [{"name": "xy", "type": "slide2", "parent": "world", "child": "box", "anchor": ANCHOR.tolist(),
                      "axis": A1.tolist(), "axis2": A2.tolist(), "range": RANGE, "range2": RANGE2}]}


def test_verify_slide2_holds_its_plane_orientation_and_ranges():
  model = engine.load_scene(scene(), dtype=dtypes.float64, device="CPU")
  sim = engine.Simulator(model, batch=1)
  state = sim.reset()
  n = np.cross(A1, A2)
  coords = []
  for step in range(100):
    state = sim.step(state)
    pos, quat = state.body_pos.numpy()[0, 0], state.body_quat.numpy()[0, 0]
    d = pos - ANCHOR
    angle = 2.0 * np.arcsin(min(1.0, np.linalg.norm(quat[1:])))   # from the initial (identity) orientation
    assert abs(d @ n) < 1e-9 and angle < 1e-9, (step, d @ n, angle)
    u, v = d @ A1, d @ A2
    assert RANGE[0] - 1e-9 <= u <= RANGE[1] + 1e-9 and RANGE2[0] - 1e-9 <= v <= RANGE2[1] + 1e-9, (step, u, v)
    q = joint_coords(model, pack_state(state))[0].numpy()[0, 0]
    assert abs(q - u) < 1e-12, (q, u)
    coords.append((u, v))
  u, v = np.array(coords).T
  assert abs(v[-1] - RANGE2[0]) < 1e-9, v[-20:]     # slid down the tilt onto its lower bound, and rests there
  assert abs(u[-1] - RANGE[1]) < 1e-9, u[-20:]      # the level axis kept its 0.6 m/s until its upper bound
  assert v.max() > 0.0                              # the kick first carried it up the tilt
