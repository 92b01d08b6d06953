"""The WGSL step kernel for one Model: its source (kernels/xpbd_step.wgsl behind a generated header of the scene's
constants) and the Model's tensors packed into the one parameter buffer the kernel reads.

Topology (counts, joint types, parents, children, actuator wiring) is static in the oracle too, so it becomes WGSL
constants here and the kernel is compiled once per scene, batch and step count, like the oracle's jitted step.
"""
from __future__ import annotations
import os
from functools import lru_cache
from tinygrad import Tensor, dtypes
from oracle.constraints import CONSTRAINTS, NLAM
from oracle.solve import joint_counts
from oracle.types import JOINT_TYPES, Model
from oracle.velocity import has_damping
from oracle.xpbd import EPS

# the Model tensors the kernel reads, in buffer order, with their rank without a batch axis (names as in
# oracle/types.py; the header gives each an offset constant OFF_<NAME>)
PARAMS = dict(gravity=1, body_inv_mass=1, body_inv_inertia=2, jnt_anchor_parent=2, jnt_anchor_child=2,
              jnt_axis_parent=2, jnt_axis_child=2, jnt_ref_parent=2, jnt_ref_child=2, jnt_relquat=2, jnt_range=2,
              jnt_limited=1, jnt_compliance=1, jnt_damping=1, jnt_length=1, act_gear=1, act_ctrlrange=2, act_kp=1,
              act_kv=1)
WORKGROUP = 64   # invocations (envs) per workgroup
# the kernel's source files, concatenated into one program (WGSL resolves names module-wide, in any order)
SOURCES = tuple(os.path.join(os.path.dirname(__file__), f) for f in ("math3.wgsl", "xpbd_step.wgsl"))
SOURCE = SOURCES[1]


class Unsupported(NotImplementedError):
  """The scene uses a feature the WGSL kernel does not implement yet."""


def check_supported(model: Model) -> None:
  if model.contact_enabled:
    raise Unsupported(f"{model.name}: the WGSL kernel has no contacts yet (broadphase, narrowphase, contact solve and "
                      "the contact velocity pass are oracle-only); use backend='oracle', or a scene with "
                      '"contact": {"enabled": false}')
  if dtypes.float32 != model.body_inv_mass.dtype:
    raise Unsupported(f"{model.name}: the WGSL kernel is float32 only, the model is {model.body_inv_mass.dtype}")


def model_batch(model: Model) -> int:
  """1, or B when domain randomisation gave some of the model's tensors a leading batch axis."""
  return max((getattr(model, n).shape[0] for n, r in PARAMS.items() if getattr(model, n).ndim > r), default=1)


def param_layout(model: Model) -> tuple[dict[str, int], int]:
  """Offset of each PARAMS field in one env's row, and the row length."""
  off, n = {}, 0
  for name, r in PARAMS.items():
    t = getattr(model, name)
    off[name], n = n, n + (t[0] if t.ndim > r else t).numel()
  return off, max(n, 1)


def pack_params(model: Model) -> Tensor:
  """(MB, NPARAM) float32: every PARAMS field flattened per env (MB = model_batch), on the model's device."""
  mb = model_batch(model)
  cols = [t.reshape(mb, -1) if t.ndim > r else t.reshape(1, -1).expand(mb, t.numel())
          for t, r in ((getattr(model, n), r) for n, r in PARAMS.items())]
  cols = [c for c in cols if c.shape[1] > 0]
  return Tensor.cat(*cols, dim=1).contiguous() if cols else Tensor.zeros(mb, 1, device=model.gravity.device)


def _arr(kind: str, values: list) -> str:
  vals = values or [0]
  return f"array<{kind}, {len(vals)}>({', '.join(str(v) + ('u' if kind == 'u32' else '') for v in vals)})"


def _f(x: float) -> str: return repr(float(x))


def header(model: Model, batch: int, steps: int, damping: bool) -> str:
  off, nparam = param_layout(model)
  order = [j for kind in CONSTRAINTS for j in model.joints_of_type(kind)]
  counts = joint_counts(model)
  def servo(kind): return [next((a for a, (t, jj) in enumerate(zip(model.act_type, model.act_joint))
                                 if t == kind and jj == j), -1) for j in range(model.njoint)]
  motors = [a for a, t in enumerate(model.act_type) if t == "motor"]
  lines = [f"const {k}: u32 = {v}u;" for k, v in dict(
    NBODY=model.nbody, NJOINT=model.njoint, NBODY_ARR=max(model.nbody, 1), NJOINT_ARR=max(model.njoint, 1),
    LAMW=max(NLAM.values()), NLAM_ARR=max(model.njoint, 1) * max(NLAM.values()), NMOTOR=len(motors),
    NPARAM=nparam, NCTRL=max(model.nact, 1), BATCH=batch, NSTEPS=steps, SUBSTEPS=model.substeps,
    ITERATIONS=model.iterations, WORKGROUP=WORKGROUP, **{n.upper(): i for i, n in enumerate(JOINT_TYPES)},
    **{f"OFF_{n.upper()}": o for n, o in off.items()}).items()]
  lines += [f"const H: f32 = {_f(model.dt / model.substeps)};", f"const RELAXATION: f32 = {_f(model.relaxation)};",
            f"const EPS: f32 = {_f(EPS)};", f"const DAMPING: bool = {str(damping).lower()};",
            f"const MODEL_BATCHED: bool = {str(model_batch(model) > 1).lower()};",
            f"const JNT_TYPE = {_arr('u32', [JOINT_TYPES.index(t) for t in model.jnt_type])};",
            f"const JNT_PARENT = {_arr('i32', list(model.jnt_parent))};",
            f"const JNT_CHILD = {_arr('i32', list(model.jnt_child))};",
            f"const JOINT_ORDER = {_arr('u32', order)};",
            f"const SPLIT = {_arr('f32', [_f(max(n, 1)) for n in counts])};",
            f"const COUNTS = {_arr('f32', [_f(n) for n in counts])};",
            f"const JNT_POS_SERVO = {_arr('i32', servo('position'))};",
            f"const JNT_VEL_SERVO = {_arr('i32', servo('velocity'))};",
            f"const ACT_JOINT = {_arr('i32', list(model.act_joint))};",
            f"const MOTORS = {_arr('u32', motors)};"]
  return "\n".join(lines) + "\n"


@lru_cache(maxsize=None)
def kernel_body() -> str:
  out = []
  for path in SOURCES:
    with open(path) as f: out.append(f"// ---- {os.path.basename(path)} ----\n" + f.read())
  return "\n".join(out)


def source(model: Model, batch: int, steps: int, damping: bool | None = None) -> str:
  """The complete WGSL program for `batch` envs of `model`, advancing `steps` env-steps per launch. damping: whether
  the velocity pass runs (oracle.velocity.has_damping, which reads tensors: pass it in under a JIT capture)."""
  check_supported(model)
  damping = has_damping(model) if damping is None else damping
  return f"// generated for scene {model.name!r}\n" + header(model, batch, steps, damping) + kernel_body()
