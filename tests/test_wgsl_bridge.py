"""The WGSL bridge (engine/wgsl.py) and the backend switch: names mirror the oracle, the pipeline cache, several
steps per launch, the env on the kernel, and clear errors."""
from __future__ import annotations
import ast
import re
from dataclasses import replace
from pathlib import Path
import numpy as np
import pytest
from tinygrad import Tensor, dtypes
import engine
from engine.scene import load_scene
from engine.simulator import Simulator
from engine.wgsl import ENTRY
from kernels.layout import Unsupported
from kernels.program import COLLIDE_FILES, SOURCES
from oracle.collide import NARROWPHASE
from oracle.constraints import CONSTRAINTS
from oracle.step import STAGES
from tests.helpers import SCENES, wgsl_checked  # noqa: F401 (autouse)

ROOT = Path(__file__).resolve().parent.parent
ORACLE, KERNELS = ROOT / "oracle", ROOT / "kernels"
# the oracle files mirrored function by function: kernel file -> the oracle files (paths under oracle/) it mirrors
# together. oracle/constraints/ is split in three: the slide family (slide, planar, slide2) in kernels/slides.wgsl, the
# hinge groups in kernels/hinges.wgsl, the rest in kernels/constraints.wgsl (CONSTRAINT_FILES;
# test_verify_wgsl_mirrors_cover_the_oracle_constraints)
MIRRORS = {"math3.wgsl": ("math3.py",), "xpbd.wgsl": ("xpbd.py",), "collide.wgsl": ("collide/__init__.py",),
           "primitives.wgsl": ("collide/primitives.py",), "box.wgsl": ("collide/box.py",),
           "box_box.wgsl": ("collide/box_box.py",),
           "constraints.wgsl": tuple(f"constraints/{f}.py" for f in ("__init__", "ball", "hinge", "fixed", "distance",
                                                                       "contact")),
           "slides.wgsl": ("constraints/slide.py", "constraints/planar.py", "constraints/slide2.py"),
           "hinges.wgsl": ("constraints/hinges.py",),
           "muscle.wgsl": ("muscle.py",), "tendon.wgsl": ("tendon.py",)}
CONSTRAINT_FILES = tuple(k for k, paths in MIRRORS.items() if any(p.startswith("constraints/") for p in paths))
# the names only one side of a mirrored pair has, and why; anything else on one side only fails the test
ONLY_ORACLE = {
  "math3.wgsl": dict.fromkeys(("of", "const", "identity", "stack", "vec", "map", "where"), "tensor plumbing: WGSL's "
                              "vec3<f32> and the Quat struct are values, and select() is the where")
  | dict.fromkeys(("dot", "cross"), "WGSL built-ins") | {"normalize": "normalize_q (see ONLY_KERNEL)"}
  | dict.fromkeys(("take", "_runs"), "gathers over a static index list: the kernel indexes its arrays"),
  "xpbd.wgsl": {"unit_basis": "e_x, e_y, e_z shaped like a tensor: the kernel writes vec3<f32>(1.0, 0.0, 0.0)"},
  "collide.wgsl": {"pair": "the registry's decorator: the header generates the dispatch",
                   "depth": "Contact.depth, for the oracle's penetration checks only"},
  "primitives.wgsl": {"_all": "an all-True tensor mask: the kernel writes true"},
  "box.wgsl": {"broadcast_true": "an all-True tensor mask: the kernel writes true"},
  "box_box.wgsl": {"_sel": "a where over a Tensor or a V3: select()"},
  "constraints.wgsl": {"register": "the registry's decorator", "jvec": "a gather of joint parameters: jv()",
                       "jscalar": "a gather of joint parameters: p1()"},
  "hinges.wgsl": {"turn": "turn_by in the kernel: WGSL has one namespace, and kernels/xpbd.wgsl's turn holds the name"},
  "muscle.wgsl": {"_prm": "splits prm's last axis into tensors: the kernel indexes the array",
                  "muscles": "the muscle actuators' indices: the header's MUSCLES table"},
  "tendon.wgsl": {"segments": "the segments' static index lists: the header's SEG_TENDON, SEG_A, SEG_B tables",
                  "_sum_by": "a one-hot matmul summing segments per tendon: the kernel adds in a loop"},
}
ONLY_KERNEL = {
  "math3.wgsl": {"qmul": "Quat.__mul__ (no operator overloading in WGSL)",
                 "normalize_q": "Quat.normalize: a fn named normalize would hide the vector built-in",
                 "octant": "atan2's reflections, shared with its adjoint (kernels/adjoint/math3.wgsl)"},
  "xpbd.wgsl": {"zero_corr": "the oracle builds its zero corrections from a tensor's shape",
                **dict.fromkeys(("positional_dlam", "angular_dlam", "align_solve", "align_from", "align_corr",
                                 "neg_inverse3", "turn", "lock_impulse"),
                                "a part of positional, angular, angular_align, angular_lock or neg_solve3 that their "
                                "adjoints replay (kernels/adjoint/); the oracle's autograd needs no such split")},
  "hinges.wgsl": {"turn_by": "the oracle's turn (ONLY_ORACLE)",
                  "grouped": "the oracle's `model.jnt_type[j] in GROUPED` (a static tuple), one fn for the stages",
                  **dict.fromkeys(("group_params", "members_p1", "hinge_angles_of", "triple_t2", "limit_row",
                                   "group_row"),
                                  "group's parts from parameter values, which its adjoints replay (kernels/adjoint/"
                                  "hinges.wgsl); the oracle gathers the members' parameters with jvec")},
  "constraints.wgsl": {**dict.fromkeys(("hinge_angle_of", "rest_turn"), "hinge_angle's and lock_orientation's pure "
                                       "parts, from parameter values, that their adjoints replay (kernels/adjoint/)"),
                       "contact_err": "contact's depth, error and on, which contact_adj replays"},
  "muscle.wgsl": dict.fromkeys(("muscle_prm", "muscle_lr"), "a muscle's parameter row read from the buffer (the "
                               "oracle gathers them with take)"),
  "tendon.wgsl": {"segment": "one segment's direction, length and rate: tendon_state's loop body, which the loads "
                             "and the adjoints recompute per segment (the oracle holds every segment as a tensor)"},
  "solve.wgsl": dict.fromkeys(("joint_correction", "joint_corrections"),
                              "the joints' half of solve, which the backward kernel replays per iteration "
                              "(kernels/adjoint/solve.wgsl); the oracle solves by type"),
  "box.wgsl": dict.fromkeys(("_segment_terms", "_segment_f2"), "_segment_nearest's nested terms and f2 (no closures)"),
  "box_box.wgsl": {"_to_ref": "_face_contacts' nested ref (no closures, and ref is a reserved word)",
                   "_candidates": "_face_contacts' candidate list, a function so that its adjoint replays it",
                   "_pick4_index": "_pick4's scans returning the picked indices, which its adjoint follows"},
}


def py_functions(path: Path, methods: bool = True) -> set[str]:
  """Names of the module-level functions of a Python file, and of its classes' methods (not dunders)."""
  tree = ast.parse(path.read_text())
  out = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
  if methods:
    out |= {m.name for c in tree.body if isinstance(c, ast.ClassDef) for m in c.body
            if isinstance(m, ast.FunctionDef) and not m.name.startswith("__")}
  return out


def wgsl_functions(path: Path) -> set[str]:
  return set(re.findall(r"^fn (\w+)\(", path.read_text(), flags=re.M))


def wgsl_body(src: str, name: str) -> str:
  """The body of `fn name(...) { ... }` in src, by matching braces."""
  start = src.index("{", re.search(rf"^fn {name}\(", src, flags=re.M).end())
  depth = 0
  for i in range(start, len(src)):
    depth += {"{": 1, "}": -1}.get(src[i], 0)
    if depth == 0: return src[start + 1:i]
  raise ValueError(f"fn {name}: unbalanced braces")


def test_verify_wgsl_names_mirror_the_oracle_stages():
  """One file per stage on each side, named after the function it defines: oracle/<stage>.py `def <stage>` and
  kernels/<stage>.wgsl `fn <stage>`, both exactly STAGES; and the kernel's entry point and substep call those
  stages in STAGES order. A stage file added on one side only, or missing from STAGES, fails here."""
  oracle = {p.stem for p in ORACLE.glob("*.py") if p.stem in py_functions(p, methods=False)}
  # kernels/box_box.wgsl defines fn box_box too: pair files are checked below, not stages
  kernel = {p.stem for p in KERNELS.glob("*.wgsl") if p.stem in wgsl_functions(p) and p.name not in COLLIDE_FILES}
  kernel -= {ENTRY}
  assert oracle == set(STAGES), f"oracle/<name>.py files defining `def <name>`: {sorted(oracle)}; STAGES: {STAGES}"
  assert kernel == set(STAGES), f"kernels/<name>.wgsl files defining `fn <name>`: {sorted(kernel)}; STAGES: {STAGES}"
  assert {Path(p).name for p in SOURCES} == {p.name for p in KERNELS.glob("*.wgsl")}, "kernels/program.py SOURCES"
  src = "\n".join(Path(p).read_text() for p in SOURCES)
  defined = {f for p in SOURCES for f in wgsl_functions(Path(p))}
  # calls that are no stage: the packed state's load and store, the multipliers' reset, which the oracle's substep
  # does too (oracle/solve.py init_lambda), and the armature stage's record of the joint rates at the substep's start
  # (the oracle's stage reads them from the start state it is passed); barrier() and env_index() are the header's
  plumbing = {"in3", "out3", "load_state", "store_state", "init_lambda", "armature_start"}
  def stages(fn: str) -> list[str]:
    out: list[str] = []
    for f in re.findall(r"\b(\w+)\s*\(", wgsl_body(src, fn)):
      if f == "substep": found = stages(f)
      elif f in defined and f not in plumbing: found = [f]
      else: continue
      out += [g for g in found if g not in out]
    return out
  assert tuple(stages(ENTRY)) == STAGES, f"the stages fn {ENTRY} and fn substep call: {stages(ENTRY)}"


def test_verify_wgsl_names_mirror_the_oracle_pairs():
  """Each oracle/collide module's registered pair functions are the pair functions (`fn name(a: Geom, b: Geom)`) of
  the kernel file of the same name, and no other kernel file has any."""
  want: dict[str, set] = {}
  for fn, _ in NARROWPHASE.values(): want.setdefault(fn.__module__.rsplit(".", 1)[-1], set()).add(fn.__name__)
  got = {p.stem: set(re.findall(r"^fn (\w+)\(a: Geom, b: Geom\)", p.read_text(), flags=re.M))
         for p in KERNELS.glob("*.wgsl")}
  assert {k: v for k, v in got.items() if v} == want


def test_verify_wgsl_mirrors_cover_the_oracle_constraints():
  """Every oracle/constraints/ file is mirrored by exactly one kernel file of MIRRORS (CONSTRAINT_FILES), so that a
  constraint file added to the oracle is checked function by function."""
  mirrored = [p for k in CONSTRAINT_FILES for p in MIRRORS[k]]
  files = sorted(str(p.relative_to(ORACLE)) for p in (ORACLE / "constraints").glob("*.py"))
  assert sorted(mirrored) == files, f"MIRRORS' oracle/constraints/ files {sorted(mirrored)}; on disk {files}"


def test_verify_wgsl_names_mirror_the_oracle_constraints():
  """The kernel's joint_correction calls one function per registered joint constraint, in the registry's order (the
  order the joints' corrections are summed in), and solve the contact's, each defined in a constraint kernel file
  (CONSTRAINT_FILES: kernels/constraints.wgsl, slides.wgsl)."""
  src = "\n".join(Path(p).read_text() for p in SOURCES)
  own = set().union(*(wgsl_functions(KERNELS / k) for k in CONSTRAINT_FILES))
  def calls(fn): return [f for f in re.findall(r"\b(\w+)\s*\(", wgsl_body(src, fn)) if f in own]
  joints = [k for k in CONSTRAINTS if k != "contact"]
  assert calls("joint_correction") == joints, f"kernels/solve.wgsl joint_correction calls {calls('joint_correction')}"
  assert calls("solve") == ["contact"], f"kernels/solve.wgsl solve calls {calls('solve')}"


@pytest.mark.parametrize("kernel", list(MIRRORS))
def test_verify_wgsl_names_mirror_the_oracle_functions(kernel):
  """Function by function, in both directions: every function and method of the kernel file's oracle files has a
  WGSL fn of the same name in the kernel file and the reverse, but for the names listed (with why) in ONLY_ORACLE /
  ONLY_KERNEL."""
  paths = [ORACLE / p for p in MIRRORS[kernel]]
  assert all(p.is_file() for p in paths), f"MIRRORS[{kernel!r}]: no such oracle file"
  oracle = set().union(*(py_functions(p) for p in paths))
  wgsl = wgsl_functions(KERNELS / kernel)
  only_oracle, only_kernel = ONLY_ORACLE.get(kernel, {}), ONLY_KERNEL.get(kernel, {})
  assert only_oracle.keys() <= oracle and not only_oracle.keys() & wgsl, f"stale ONLY_ORACLE[{kernel!r}]"
  assert only_kernel.keys() <= wgsl and not only_kernel.keys() & oracle, f"stale ONLY_KERNEL[{kernel!r}]"
  assert oracle - only_oracle.keys() == wgsl - only_kernel.keys(), (
    f"oracle {', '.join(MIRRORS[kernel])} only: {sorted(oracle - wgsl - only_oracle.keys())}; "
    f"kernels/{kernel} only: {sorted(wgsl - oracle - only_kernel.keys())}")


# adjoints named <name>_adj whose <name> is no forward function: parts of the reversal that the forward does inline
ADJOINT_PARTS = {"dlam": "dlam = (-err - at lam) / (w + at), inside positional and angular",
                 "apply_pair": "apply to both sides, as every multi-part constraint does",
                 "cross": "the WGSL built-in",
                 "clip01": "clamp(x, 0, 1), the WGSL built-in (the oracle's clip(0, 1)), as tinygrad differentiates it",
                 "segment_loads": "one segment's share of tendon_loads, reversed segment by segment",
                 "arm_rel": "a joint's child-minus-parent DISP, TH or velocity, inside arm_dq and armature_start",
                 "inertia_world": "world_inv_inertia as its matrix, which an adjoint that uses a side's several "
                                  "times takes (kernels/adjoint/xpbd.wgsl)",
                 "cross_matrix": "r x (.) as a matrix, inside point_adj's K (k_apply's matrix)"}


def test_verify_wgsl_adjoints_mirror_the_forward():
  """Every `fn <name>_adj` in kernels/adjoint/ reverses a forward `fn <name>` (or a part listed in ADJOINT_PARTS),
  each stage of the step but the broadphase has its `fn <stage>_adj` in kernels/adjoint/<stage>.wgsl, and the
  program files list them all (kernels/program.py ADJOINT_FILES, BACKWARD_FILES)."""
  from kernels.program import ADJOINT_FILES, BACKWARD_FILES
  forward = {f for p in KERNELS.glob("*.wgsl") for f in wgsl_functions(p)}
  adjoint = {f[:-4] for p in (KERNELS / "adjoint").glob("*.wgsl") for f in wgsl_functions(p) if f.endswith("_adj")}
  assert not adjoint - forward - ADJOINT_PARTS.keys(), f"adjoints of no forward function: {adjoint - forward}"
  assert ADJOINT_PARTS.keys() <= adjoint, "stale ADJOINT_PARTS"
  for stage in ("xpbd_step", *(s for s in STAGES if s != "broadphase")):
    assert f"{stage}_adj" in wgsl_functions(KERNELS / "adjoint" / f"{stage}.wgsl"), stage
  assert {f"adjoint/{p.name}" for p in (KERNELS / "adjoint").glob("*.wgsl")} == set(ADJOINT_FILES + BACKWARD_FILES)


def test_verify_pipeline_cached_and_steps_per_call_identical():
  """k steps in one launch equal k launches of one step, bit for bit; the program's pipeline is built once."""
  model = load_scene(SCENES / "double_pendulum.json", device="WEBGPU")
  one, four = Simulator(model, 8, backend="wgsl"), Simulator(model, 8, backend="wgsl", steps_per_call=4)
  s0 = one.reset(seed=1, noise=0.5)
  a, b = one.rollout(s0, 8), four.rollout(s0, 8)
  assert np.isfinite(a.body_pos.numpy()).all()
  for f in ("body_pos", "body_quat", "body_vel", "body_angvel"):
    np.testing.assert_array_equal(getattr(a, f).numpy(), getattr(b, f).numpy())
  from tinygrad.runtime.ops_webgpu import WebGPUProgram
  assert WebGPUProgram._tinyxpbd_cached


def test_verify_one_launch_per_call():
  """A rollout of n calls launches the step kernel n times, and besides it only the clock, the overflow sum and the
  JIT's copy of its input state, each once a call. Realised one at a time, the state and the overflow count (which
  the kernel writes in the same launch) ran the kernel twice; built inside the JIT capture, the parameter buffer, the
  tables and the idle controls were rebuilt at every replay (engine.wgsl.prepare, idle_ctrl)."""
  import ctypes
  from tinygrad.runtime.ops_webgpu import WebGPUProgram
  sim = Simulator(load_scene(SCENES / "double_pendulum.json", device="WEBGPU"), 8, backend="wgsl", steps_per_call=2)
  state = sim.rollout(sim.reset(seed=1, noise=0.5), 2)   # the capture
  launches, stock = [], WebGPUProgram.__call__
  def spy(self, *args, **kw):
    launches.append(ctypes.string_at(self.name.data, self.name.length).decode())
    return stock(self, *args, **kw)
  WebGPUProgram.__call__ = spy
  try: sim.rollout(state, 6).body_pos.numpy()   # 3 calls
  finally: WebGPUProgram.__call__ = stock
  assert launches.count(ENTRY) == 3, launches
  # besides the kernel, per call: the clock, the overflow sum and the JIT's copy of its input state (the last call's
  # output); once per rollout: the state's pack and unpack (measured: 3 x 4 + 6)
  assert len(launches) <= 3 * 4 + 6, launches


def test_verify_env_on_wgsl_matches_oracle():
  """The cart-pole env with domain randomisation (a batched parameter buffer) on both backends, same seed."""
  kw = dict(num_envs=6, seed=3, randomize={"mass": (0.5, 2.0), "gear": (0.8, 1.2)})
  envs = [engine.make_env("cartpole", backend=b, **kw) for b in ("oracle", "wgsl")]
  rng = np.random.default_rng(0)
  obs = [e.reset(seed=3)[0] for e in envs]
  for _ in range(15):
    act = rng.uniform(-1, 1, (6, 1)).astype(np.float32)
    obs = [e.step(act)[0] for e in envs]
  o = [x.numpy() if isinstance(x, Tensor) else np.asarray(x) for x in obs]
  np.testing.assert_allclose(o[1], o[0], atol=2e-4)


def test_wgsl_errors_are_clear():
  with pytest.raises(Unsupported, match="float32 only"):
    Simulator(load_scene(SCENES / "drop.json", dtype=dtypes.float64, device="WEBGPU"), 2, backend="wgsl")
  with pytest.raises(ValueError, match="device='WEBGPU'"):
    Simulator(load_scene(SCENES / "pendulum.json"), 2, backend="wgsl")
  with pytest.raises(ValueError, match="backend: expected one of"):
    engine.make_env("cartpole", backend="cuda")


def test_wgsl_refused_program_is_named(monkeypatch):
  """A pipeline the driver refuses to build (NVIDIA's, for chain's backward with its tape private: bench/README.md)
  raises ProgramRefused naming the program's scene, the driver's error and the remedy, not Dawn's bare status."""
  import ctypes
  from tinygrad.runtime import ops_webgpu
  from engine import wgsl
  from engine.scene import build_model, load_scene_dict
  from oracle.packed import pack_state
  d = load_scene_dict(SCENES / "pendulum.json")
  d["name"] = "refused_probe"   # a program text no other test builds, so that its pipeline is not cached yet
  model = build_model(d, dtypes.float32, "WEBGPU")
  packed = pack_state(Simulator(model, 2, backend="wgsl").reset(seed=1), model).contiguous().realize()
  stock = ops_webgpu.DeviceCreateComputePipeline
  def refuse(dev, desc):   # the step kernel's pipeline only: tinygrad's own small kernels build as before
    entry = desc.compute.entryPoint
    if ctypes.string_at(entry.data, entry.length).decode() != ENTRY: return stock(dev, desc)
    raise RuntimeError("[WGPUCreatePipelineAsyncStatus_InternalError]CreateComputePipelines failed with "
                       "VK_ERROR_UNKNOWN\n - While initializing [ComputePipeline (unlabeled)]")
  monkeypatch.setattr(ops_webgpu, "DeviceCreateComputePipeline", refuse)
  with pytest.raises(wgsl.ProgramRefused, match=f"refused the pipeline of {ENTRY} \\(generated for scene "
                     "'refused_probe'.*"
                     "VK_ERROR_UNKNOWN.*TINYXPBD_PRIVATE_TAPE=0"):
    wgsl.step(model, packed).realize()


def test_verify_wgsl_counts_dropped_pairs():
  """Four spheres overlapping in a cluster, 6 candidate pairs, room for 2: the kernel reports the 4 it dropped per
  step, as the oracle's broadphase does (its hash buckets are large enough to add nothing), summed over the steps of
  a call (and of a trajectory's launch, engine.wgsl.trajectory_overflow: a control sequence's), and the simulator's
  overflow warning fires on either backend."""
  bodies = [{"name": f"s{k}", "pos": [0.15 * (k % 2), 0.15 * (k // 2), 1.0], "geoms": [{"type": "sphere",
            "size": [0.1]}]} for k in range(4)]
  scene = {"name": "cluster", "contact": {"pair_capacity": 2, "hash_slots": 64}, "bodies": bodies}
  far = np.tile(np.array([[2.0 * k, 0.0, 1.0] for k in range(4)], dtype=np.float32), (2, 1, 1))   # 2 envs apart
  got = {}
  for backend in ("oracle", "wgsl"):   # one simulator (one compile) per backend for both starts
    model = engine.load_scene(scene, device="WEBGPU" if backend == "wgsl" else None)
    sim = engine.Simulator(model, batch=2, backend=backend, steps_per_call=2)
    with pytest.warns(RuntimeWarning, match="dropped up to 8 contact pairs"):   # whichever backend counted the drop
      got[backend, "cluster"] = sim.rollout(sim.reset(), 2).contact_overflow.numpy().tolist()
    apart = replace(sim.reset(), body_pos=Tensor(far, device=sim.device))
    got[backend, "far"] = sim.rollout(apart, 2).contact_overflow.numpy().tolist()
  from engine.wgsl import trajectory_overflow
  from oracle.packed import pack_state
  got["trajectory"] = trajectory_overflow(model, pack_state(sim.reset(), model), None, 2)[1].numpy().tolist()
  assert got["oracle", "cluster"] == got["wgsl", "cluster"] == got["trajectory"] == [8, 8]   # 4 in each of 2 steps
  assert got["oracle", "far"] == got["wgsl", "far"] == [0, 0]
