"""The backward kernel's launches (kernels/adjoint/xpbd_step.wgsl, issue 17), on engine/wgsl.py's bridge:
- `step_vjp`: the adjoint of one env-step from its start (the checkpoint), gradients of the start state, the
  controls and the parameter row per env;
- `trajectory_vjp`: the adjoint of engine.wgsl.trajectory's whole horizon in one launch, from the last step;
- `step_grad`: one env-step with the backward attached as tinygrad's grad_fxn (Tensor.gradient flows through it);
- `param_grads`: a parameter row's gradients per Model field.
"""
from __future__ import annotations
from tinygrad import Tensor
from engine import wgsl
from engine.wgsl import ENTRY, cpu_adapter, idle_ctrl, launch, params, program_text, source, tables
from kernels.lanes import default_lanes, workgroup_size
from kernels.layout import pack_params, state_rows
from oracle.types import Model


def backward_lanes(model: Model, batch: int, lanes: int | None = None) -> int:
  """Invocations per env of the backward kernel: `lanes`, else LANES, else one on a CPU adapter and the step's
  default_lanes on a GPU; more than one only where the env's state and adjoint state fit workgroup memory together
  (kernels.lanes.lanes_fit). On lavapipe (2026-11-27, backward alone, 32 lanes against one, env-steps/s:
  bench/README.md) the lanes do not pay: stack10 x1 95 against 215, cradle x2 257 against 1,409, drop x2 1,891
  against 2,906, and their program compiles in 45 to 150 s against 6 to 40. On a GPU one invocation per env leaves
  all but B threads idle (not measured: no device was lent). An explicit `lanes` that the env's state does not fit
  raises (kernels.lanes.check_lanes names the bytes); LANES and the default fall back to one lane there."""
  from kernels.lanes import lanes_fit
  if lanes: return lanes
  lanes = wgsl.LANES or (1 if cpu_adapter() else default_lanes(model, batch, False))
  return lanes if lanes == 1 or lanes_fit(model, backward=True) else 1


def step_vjp(model: Model, packed: Tensor, ctrl: Tensor | None, gout: Tensor, damping: bool | None = None,
             store: bool | None = None, prm: Tensor | None = None,
             lanes: int | None = None) -> tuple[Tensor, Tensor, Tensor]:
  """The backward kernel (kernels/adjoint/xpbd_step.wgsl): for one env-step from `packed` (B, nbody, 13) with ctrl
  (B, nact) or None, and gout = d loss / d (the state after it), returns (d loss / d packed (B, nbody, 13),
  d loss / d ctrl (B, max(nact, 1)), d loss / d the parameter row (B, NPARAM) per env: param_grads names them).
  store: keep every substep's iterations on the tape instead of replaying each substep (kernels.tape.tape_layout);
  None: where it applies (kernels.tape.store_mode). prm: the packed parameters (default: params(model)). lanes:
  invocations per env (None: backward_lanes); the gradients do not depend on it beyond the order in which the lanes'
  parameter gradients add up. Lazy, like step()."""
  return _vjp(model, packed, ctrl, gout, damping, store, prm, lanes, None)


def trajectory_vjp(model: Model, traj: Tensor, ctrls: Tensor | None, gout: Tensor, damping: bool | None = None,
                   store: bool | None = None, lanes: int | None = None) -> tuple[Tensor, Tensor, Tensor]:
  """The backward kernel over a whole trajectory in one launch: traj, trajectory()'s (steps + 1, B, NROWS, 13), ctrls
  its (steps, B, nact) or None, gout = d loss / d (its last state). Returns (d loss / d its start (B, NROWS, 13),
  d loss / d ctrls (steps, B, max(nact, 1)), d loss / d the parameter row summed over the steps (B, NPARAM)). The
  same step adjoints as step_vjp's, each step recomputed from its row (bit for bit step_vjp's chain: tests)."""
  steps, B = traj.shape[0] - 1, traj.shape[1]
  if traj.ndim != 4 or steps < 1: raise ValueError(f"trajectory_vjp: expected trajectory()'s (steps + 1, B, NROWS, 13) "
                                                   f"with steps >= 1, got {traj.shape}")
  adj, gc, gp = _vjp(model, traj, ctrls, gout, damping, store, None, lanes, steps)
  return adj, gc.reshape(steps, B, -1)[..., :max(model.nact, 1)], gp


def _vjp(model: Model, inp: Tensor, ctrl: Tensor | None, gout: Tensor, damping: bool | None, store: bool | None,
         prm: Tensor | None, lanes: int | None, steps: int | None) -> tuple[Tensor, Tensor, Tensor]:
  """step_vjp (steps None: inp the step's start, ctrl (B, nact)) and trajectory_vjp (inp the trajectory, ctrl
  (steps, B, nact)): the launch, and its output cut into the start state's gradient, the controls' (B, NCTRL) or
  (steps * B * NCTRL,) and the parameters'."""
  from kernels.layout import param_layout
  from kernels.program import BACKWARD_ENTRY, backward_source
  from kernels.tape import store_mode, tape_buffer, tape_layout
  B, nb, rows = inp.shape[-3], state_rows(model) * 13, state_rows(model)
  if damping is None:
    from oracle.joint_damping import has_damping
    damping = has_damping(model)
  if ctrl is None or model.nact == 0: ctrl = idle_ctrl(B)
  lanes = backward_lanes(model, B, lanes)
  if store is None: store = store_mode(model, B, damping, lanes)
  tape = tape_layout(model, damping, store, lanes)
  nc, width = max(model.nact, 1), tape["GRAD_W"]
  out, _ = launch(program_text(backward_source, model, B, damping, store, None, lanes),
                  BACKWARD_ENTRY, (B * width + (steps or 0) * B * nc,), inp, params(model) if prm is None else prm,
                  ctrl, tables(model)[0], _step_scratch(model, B, lanes), gout.reshape(B, rows, 13), threads=B * lanes,
                  scratch=tape_buffer(tape, B), workgroup=workgroup_size(lanes, B))
  rows_out = out[:B * width].reshape(B, width)
  gc = rows_out[:, nb:nb + nc] if steps is None else out[B * width:]
  return rows_out[:, :nb].reshape(B, rows, 13), gc, rows_out[:, nb + nc:nb + nc + param_layout(model)[1]]


def step_grad(model: Model, packed: Tensor, ctrl: Tensor | None = None) -> Tensor:
  """One env-step by the WGSL kernel with the backward kernel attached (tinygrad's grad_fxn): Tensor.gradient and
  backward() flow from the new state to `packed`, `ctrl` and the Model's PARAMS tensors (the parameter buffer is
  packed lazily from them here, so its gradient reaches each field: summed over the batch where a field is shared).
  The backward recomputes the step from `packed`, the checkpoint, on backward_lanes invocations per env; the forward
  takes the step's layout (LANES, or default_lanes). Neither result depends on the lanes, but for the order in which
  the backward's lanes add up their parameter gradients. Raises kernels.program.Unsupported for
  what the backward kernel does not cover yet (check_backward)."""
  from kernels.program import check_backward
  from oracle.joint_damping import has_damping
  check_backward(model)
  B, damping = packed.shape[0], has_damping(model)
  live = ctrl is not None and model.nact > 0
  if not live: ctrl = idle_ctrl(B)
  prm = pack_params(model)
  tab, consts = tables(model)

  def grad_fxn(gout, call):
    _, p, m, c = (Tensor(u) for u in call.src[1:5])
    gp, gc, gm = step_vjp(model, p, c if live else None, Tensor(gout), damping, prm=m)
    if m.shape[0] == 1: gm = gm.sum(0, keepdim=True)
    return (None, gp.uop, gm.uop, gc[:, :model.nact].uop if live else None, None, None)
  lanes = wgsl.LANES or default_lanes(model, B, cpu_adapter())
  out, _ = launch(source(model, B, 1, damping, lanes), ENTRY, (B, state_rows(model), 13), packed, prm, ctrl, tab,
                  threads=B * lanes, scratch=(B, consts["SCR"]), workgroup=workgroup_size(lanes, B), grad_fxn=grad_fxn)
  return out


def param_grads(model: Model, gprm: Tensor) -> dict[str, Tensor]:
  """step_vjp's (B, NPARAM) parameter gradients per Model field (kernels.layout.PARAMS), each in the field's shape:
  summed over the batch where the field is shared by every env (the oracle's semantics), per env where it carries a
  batch axis."""
  from kernels.layout import PARAMS, param_layout
  off, _ = param_layout(model)
  out = {}
  for name, rank in PARAMS.items():
    t = getattr(model, name)
    batched = t.ndim > rank
    n = (t[0] if batched else t).numel()
    g = gprm[:, off[name]:off[name] + n]
    out[name] = g.reshape(t.shape) if batched else g.sum(0).reshape(t.shape)
  return out


_SPARE: list = []


def _spare() -> Tensor:
  """A one-float buffer for the step program's scratch binding, which the backward kernel declares and never uses
  (prepare_backward builds it outside a JIT capture)."""
  if not _SPARE: _SPARE.append(Tensor.zeros(1, device="WEBGPU").contiguous().realize())
  return _SPARE[0]


def _step_scratch(model: Model, batch: int, lanes: int = 1) -> Tensor:
  """The backward kernel's binding of the step's scratch: its replay of the step needs the contact plan there when
  the scratch row is too long to be private or the env's lanes share it (kernels/lanes.py env_buffers), else the
  one-float spare."""
  from kernels.lanes import PRIVATE_SCRATCH
  n = tables(model)[1]["SCR"]
  return _spare() if n <= PRIVATE_SCRATCH and lanes == 1 else Tensor.empty(batch, n, device="WEBGPU")


def prepare_backward() -> None:
  _spare()


__all__ = ["step_vjp", "trajectory_vjp", "step_grad", "param_grads", "backward_lanes", "prepare_backward"]
