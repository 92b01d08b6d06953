"""Ball joint: one Jacobi iteration of the 3-vector point constraint removes the anchor error to second order; the
correction is an equal-and-opposite impulse pair (linear momentum exact, angular momentum to second order)."""
from tests.helpers import impulse_pair_bound, point_error, solve_once


def test_verify_ball_projects_and_conserves_momentum():
  before, after, lin, ang, impulse = solve_once({"type": "ball", "anchor": [0.25, 0.05, 1.0]}, [0.01, -0.02, 0.015],
                                                [0.02, 0.01, -0.03], point_error)
  assert before > 0.01 and after < before / 50, (before, after)
  assert lin < 1e-12 and ang <= impulse_pair_bound(before, impulse), (lin, ang)
