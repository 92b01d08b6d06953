"""The XPBD step (M20 Alg. 2): S substeps of integrate -> K Jacobi iterations -> recover velocities -> velocity pass.

Each stage is one small kernel over a realised packed state (oracle/packed.py): a substep is 3 + K (types + 1)
kernels whatever the scene's size, each compiled once per scene and replayed every substep.
"""
from __future__ import annotations
from tinygrad import Tensor
from oracle.integrate import integrate
from oracle.packed import pack_state, unpack_state
from oracle.solve import init_lambda, solve
from oracle.types import Model, State
from oracle.velocity import has_damping, joint_damping, recover

STAGES = ("integrate", "solve", "recover", "joint_damping")  # mirrored by the WGSL kernel's function names


def substep(model: Model, packed: Tensor, h: float, damping: bool) -> Tensor:
  """One XPBD substep on the packed (B, nbody, 13) state (M20 Alg. 2, lines 4-17)."""
  packed = integrate(model, packed, h).contiguous()
  lam = init_lambda(model)
  for _ in range(model.iterations):
    packed, lam = solve(model, packed, lam, h)
  packed = recover(packed, h).contiguous()
  return joint_damping(model, packed, h) if damping else packed


def step_packed(model: Model, packed: Tensor, damping: bool, eager: bool = False) -> Tensor:
  """Advance the packed (B, nbody, 13) state by model.dt. eager=True realises every substep: identical substep graphs
  then hit tinygrad's schedule cache (a fast first call under TinyJit) but the result is cut from autograd; eager=False
  keeps one lazy graph for Tensor.gradient (short horizons: the graph grows with S * steps)."""
  h = model.dt / model.substeps
  for _ in range(model.substeps):
    packed = substep(model, packed, h, damping)
    if eager: packed = packed.realize()
  return packed


def step(model: Model, state: State, ctrl: Tensor | None = None, damping: bool | None = None,
         eager: bool = False) -> State:
  """Advance every env by model.dt. state tensors are (B, nbody, ...); returns a new State whose fields are views of
  one packed tensor. `damping` skips the damping pass when False (default: whether any joint has damping)."""
  damping = has_damping(model) if damping is None else damping
  packed = step_packed(model, pack_state(state).contiguous(), damping, eager)
  return unpack_state(packed, state.time + model.dt)
