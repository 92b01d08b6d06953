"""The slide2 joint (oracle/constraints/slide2.py): a box on two orthogonal slides in a plane tilted off the world's
axes, kicked across and along the plane, under gravity, in float64. Each step the joint's rigid rows hold: the box
keeps its orientation and stays in the plane through the anchor, and its coordinates stay within their ranges; gravity
carries it down the tilted axis until that coordinate rests on its lower bound, while the level axis keeps its kick
until its own bound stops it. joint_coords reads the first coordinate."""
import numpy as np
from tinygrad import dtypes
import engine
from tests.helpers import frame_coords, packed_rows

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
  _, run = sim.trajectory(sim.reset(), 100)   # every step recorded, then checked at once (not one graph per step)
  pos, quat = run["pos"][1:, 0, 0], run["quat"][1:, 0, 0]                            # (100, 3), (100, 4)
  d = pos - ANCHOR
  angle = 2.0 * np.arcsin(np.minimum(1.0, np.linalg.norm(quat[:, 1:], axis=-1)))   # from the initial (identity) one
  n = np.cross(A1, A2)
  assert np.abs(d @ n).max() < 1e-9 and angle.max() < 1e-9, (np.abs(d @ n).max(), angle.max())
  u, v = d @ A1, d @ A2
  assert RANGE[0] - 1e-9 <= u.min() and u.max() <= RANGE[1] + 1e-9, (u.min(), u.max())
  assert RANGE2[0] - 1e-9 <= v.min() and v.max() <= RANGE2[1] + 1e-9, (v.min(), v.max())
  q = frame_coords(model, packed_rows(run)[1:])[0][:, 0, 0]   # the first coordinate, every step
  assert np.abs(q - u).max() < 1e-12, np.abs(q - u).max()
  assert abs(v[-1] - RANGE2[0]) < 1e-9, v[-20:]     # slid down the tilt onto its lower bound, and rests there
  assert abs(u[-1] - RANGE[1]) < 1e-9, u[-20:]      # the level axis kept its 0.6 m/s until its upper bound
  assert v.max() > 0.0                              # the kick first carried it up the tilt
