"""Adjoint parity (issue 17, the backward kernel, in progress): each WGSL adjoint in kernels/adjoint/ against
tinygrad's autograd of the oracle function it mirrors, as vector-Jacobian products on random inputs.

One program (kernels/program.py adjoint_source: a step program, then the adjoints) gets one entry point per test;
invocation i reads case i's inputs and output gradients from `inp` and writes its input gradients to `outp`. The
oracle runs in float64 on the CPU device on the same (float32-rounded) inputs, and again in float32. Per input, the
relative error norm-wise over the cases, |g_wgsl - g_oracle64| / |g_oracle64|, must be within TOL (the issue's
bound) or within FLOOR_FACTOR of the float32 oracle's own error, whichever is larger (that floor is computed only
when some input is above TOL). The float64 references are golden files (tests/golden/adjoint_*.npz, `make
golden`). Measured: every input of every case within 1.3e-6, the float32 oracle's own error (pytest -s prints both
when a case is judged against the floor).
"""
from __future__ import annotations
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable
import numpy as np
import pytest
from tinygrad import Tensor, dtypes
import engine.wgsl as wgsl
from engine import load_scene
from kernels.program import adjoint_source
from oracle import xpbd
from oracle.constraints import ball, distance, fixed, hinge, slide
from oracle.integrate import integrate
from oracle.collide import Contact, Geom
from oracle.math3 import V3, Quat
from tests.golden import golden
from tests.helpers import SCENES, wgsl_checked  # noqa: F401 (autouse)

N = 256             # cases
TOL = 1e-4          # relative, norm-wise per input (issue 17)
FLOOR_FACTOR = 8.0  # the kernel may sit this far above the float32 oracle's rounding error
SOURCE_HASH = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()
H = 0.01            # [s] a coarse substep, so that integrate's second-order terms (gyroscopic, h^2) weigh in

# value kinds: floats per case; a Side is x 3, q 4, im 1, ii 3; a Correction dx1, dth1, dx2, dth2; a flag is 0 or 1
# l4, l6: a fixed joint's four multipliers (a vec4), a hinge's six (an array)
# geom: pos 3, rot 4, size 3 (a Geom, its gradient a GeomAdj); contact: pa 3, pb 3, n 3 (an output only: its
# gradient is read as a ContactAdj)
WIDTH = {"s": 1, "b": 1, "v": 3, "q": 4, "side": 11, "corr": 12, "l4": 4, "l6": 6, "geom": 10, "contact": 9}
HELPERS = """
fn rd3(o: u32) -> vec3<f32> { return vec3<f32>(inp[o], inp[o + 1u], inp[o + 2u]); }
fn rdq(o: u32) -> Quat { return Quat(inp[o], rd3(o + 1u)); }
fn rdside(o: u32) -> Side { return Side(rd3(o), rdq(o + 3u), inp[o + 7u], rd3(o + 8u)); }
fn rdcorr(o: u32) -> Correction { return Correction(rd3(o), rd3(o + 3u), rd3(o + 6u), rd3(o + 9u)); }
fn wr3(o: u32, v: vec3<f32>) { outp[o] = v.x; outp[o + 1u] = v.y; outp[o + 2u] = v.z; }
fn wrq(o: u32, q: Quat) { outp[o] = q.w; wr3(o + 1u, q.v); }
fn wrside(o: u32, s: SideAdj) { wr3(o, s.x); wrq(o + 3u, s.q); outp[o + 7u] = s.im; wr3(o + 8u, s.ii); }
fn rd6(o: u32) -> array<f32, 6> {
  return array<f32, 6>(inp[o], inp[o + 1u], inp[o + 2u], inp[o + 3u], inp[o + 4u], inp[o + 5u]);
}
fn wr6(o: u32, a: array<f32, 6>) { for (var k = 0u; k < 6u; k++) { outp[o + k] = a[k]; } }
fn rdgeom(o: u32) -> Geom { return Geom(rd3(o), rdq(o + 3u), rd3(o + 7u)); }
fn rdcontact(o: u32) -> ContactAdj { return ContactAdj(rd3(o), rd3(o + 3u), rd3(o + 6u)); }
fn wrgeom(o: u32, g: GeomAdj) { wr3(o, g.pos); wrq(o + 3u, g.rot); wr3(o + 7u, g.size); }
fn as_adj(s: Side) -> SideAdj { return SideAdj(s.x, s.q, s.im, s.ii); }   // a Side-shaped gradient
"""


def read(kind: str, o: int) -> str:
  return {"s": f"inp[i + {o}u]", "b": f"(inp[i + {o}u] > 0.5)", "v": f"rd3(i + {o}u)", "q": f"rdq(i + {o}u)",
          "side": f"rdside(i + {o}u)", "geom": f"rdgeom(i + {o}u)",
          "contact": f"rdcontact(i + {o}u)", "corr": f"rdcorr(i + {o}u)", "l6": f"rd6(i + {o}u)",
          "l4": f"vec4<f32>(inp[i + {o}u], rd3(i + {o + 1}u))"}[kind]


def write(kind: str, o: int, expr: str) -> str:
  return {"s": f"outp[o + {o}u] = {expr};", "v": f"wr3(o + {o}u, {expr});", "q": f"wrq(o + {o}u, {expr});",
          "side": f"wrside(o + {o}u, {expr});", "geom": f"wrgeom(o + {o}u, {expr});", "l6": f"wr6(o + {o}u, {expr});",
          "l4": f"outp[o + {o}u] = {expr}.x; wr3(o + {o + 1}u, {expr}.yzw);"}[kind]


def wrap(kind: str, t: Tensor):
  """A (N, width) tensor as the oracle's value of that kind."""
  if kind in ("s", "b"): return t[:, 0] > 0.5 if kind == "b" else t[:, 0]
  if kind == "v": return V3.of(t)
  if kind == "q": return Quat.of(t)
  if kind == "geom": return Geom(V3.of(t[:, 0:3]), Quat.of(t[:, 3:7]), V3.of(t[:, 7:10]))
  if kind in ("l4", "l6"): return tuple(t[:, k] for k in range(t.shape[1]))
  return xpbd.Side(V3.of(t[:, 0:3]), Quat.of(t[:, 3:7]), t[:, 7], V3.of(t[:, 8:11]))


def flat(v) -> Tensor:
  """An oracle output as (N, width)."""
  if isinstance(v, V3): t = v.stack()
  elif isinstance(v, Quat): t = Tensor.stack(v.w, v.x, v.y, v.z, dim=-1)
  elif isinstance(v, xpbd.Correction): t = Tensor.cat(*(flat(f) for f in (v.dx1, v.dth1, v.dx2, v.dth2)), dim=-1)
  elif isinstance(v, xpbd.Side): t = Tensor.cat(flat(v.x), flat(v.q), flat(v.im), flat(v.ii), dim=-1)
  elif isinstance(v, Contact): t = Tensor.cat(flat(v.pa), flat(v.pb), flat(v.n), dim=-1)
  elif isinstance(v, tuple): t = Tensor.stack(*(x.reshape(x.shape[0]) for x in v), dim=-1)
  else: t = v
  return t.reshape(t.shape[0], -1)


def col(v):
  """A value with a joint axis of one added (B, 1), as the oracle's constraints take their sides."""
  if isinstance(v, V3): return V3(*(t[:, None] for t in (v.x, v.y, v.z)))
  if isinstance(v, Quat): return Quat(*(t[:, None] for t in (v.w, v.x, v.y, v.z)))
  if isinstance(v, xpbd.Side): return xpbd.Side(col(v.x), col(v.q), v.im[:, None], col(v.ii))
  return v[:, None]


@dataclass
class Case:
  """One adjoint's test. ins: the forward's inputs (name, kind), in the WGSL adjoint's argument order; outs: its
  outputs (name, kind) whose gradients the adjoint takes after them; call: the WGSL adjoint call, with {name} for an
  input and {g_name} for an output's gradient; grads: (input name, kind, WGSL field of the call's result) written
  back; oracle(**inputs) -> the outputs' values, in outs' order; draw(rng) -> {input: (N, width) float64}; wgsl:
  extra WGSL functions the call needs (a wrapper that sets a private array, say)."""
  ins: list[tuple[str, str]]
  outs: list[tuple[str, str]]
  call: str
  grads: list[tuple[str, str, str]]
  oracle: Callable
  draw: Callable
  wgsl: str = ""


def run_case(name: str, case: Case, seed: int = 0, source_hash: str = SOURCE_HASH) -> None:
  """Launch case's adjoint and judge it per input (the module's docstring). source_hash: the test file's, for the
  golden key (another test module that builds Cases passes its own)."""
  rng = np.random.default_rng(seed)
  x = {k: v.astype(np.float32).astype(np.float64) for k, v in case.draw(rng).items()}
  g = {k: rng.normal(size=(N, WIDTH[kind])) for k, kind in case.outs}
  cols = [*((k, kind, x[k]) for k, kind in case.ins), *((f"g_{k}", kind, g[k]) for k, kind in case.outs)]
  offs = np.cumsum([0, *(WIDTH[kind] for _, kind, _ in cols)])
  names = {k: read(kind, int(o)) for (k, kind, _), o in zip(cols, offs)}
  woffs = np.cumsum([0, *(WIDTH[kind] for _, kind, _ in case.grads)])
  body = f"  let a = {case.call.format(**names)};\n" + "\n".join(   # field "": the result itself
    f"  {write(kind, int(o), 'a.' + field if field else 'a')}" for (_, kind, field), o in zip(case.grads, woffs))
  width = int(woffs[-1])
  src = adjoint_source(load_scene(SCENES / "pendulum.json", device="WEBGPU")) + HELPERS + case.wgsl + f"""
@compute @workgroup_size(64)
fn adjoint_parity(@builtin(global_invocation_id) gid: vec3<u32>) {{
  if (gid.x >= {N}u) {{ return; }}
  let i = gid.x * {int(offs[-1])}u;
  let o = gid.x * {width}u;
{body}
}}
"""
  ins = Tensor(np.concatenate([c for _, _, c in cols], axis=1).astype(np.float32), device="WEBGPU").realize()
  out = wgsl.launch(src, "adjoint_parity", (N, width), ins, threads=N, workgroup=64).numpy().astype(np.float64)
  got = {k: out[:, woffs[j]:woffs[j + 1]] for j, (k, _, _) in enumerate(case.grads)}
  def reference(dtype) -> dict[str, np.ndarray]:
    t = {k: Tensor(x[k], dtype=dtype, device="CPU") for k, _ in case.ins}
    outs = case.oracle(**{k: wrap(kind, t[k]) for k, kind in case.ins})
    loss = sum((flat(v) * Tensor(g[k], dtype=dtype, device="CPU")).sum() for (k, _), v in zip(case.outs, outs))
    wanted = [k for k, _, _ in case.grads]
    return {k: d.numpy().astype(np.float64) for k, d in zip(wanted, loss.gradient(*(t[k] for k in wanted)))}
  # the float64 reference from tests/golden/ (its autograd compile took up to 120 s: the fixed joint's two 3x3
  # solves), keyed by this file's source as well as the oracle's, which tests/golden.py fingerprints
  ref64 = golden(f"adjoint_{name}", {"seed": seed, "n": N, "test": source_hash}, lambda: reference(dtypes.float64))
  def rel(a, b): return np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30)
  errs = {k: rel(got[k], want) for k, want in ref64.items()}
  # the float32 oracle's rounding floor, computed only when needed (its autograd compile is half the test's time)
  ref32 = reference(dtypes.float32) if not all(e <= TOL for e in errs.values()) else None
  lines, bad = [], []
  for k, want in ref64.items():
    floor = rel(ref32[k], want) if ref32 is not None else float("nan")
    lines.append(f"{k}: {errs[k]:.2e} (float32 oracle {floor:.2e})")
    if not errs[k] <= max(TOL, FLOOR_FACTOR * floor if ref32 is not None else 0.0): bad.append(k)
  print("\n" + "\n".join(lines))
  assert not bad, f"adjoints off for {bad}:\n" + "\n".join(lines)


# --- random inputs ---

def unit_quats(rng, n: int = N) -> np.ndarray:
  q = rng.normal(size=(n, 4))
  return q / np.linalg.norm(q, axis=1, keepdims=True)


def sides(rng, world: float = 0.125) -> np.ndarray:
  """Sides with inverse masses 0.2-2 and inverse inertias 0.2-5 per axis; a fraction `world` are the world (zero
  inverse mass and inertia, identity pose)."""
  w = rng.random(N) < world
  s = np.concatenate([rng.normal(size=(N, 3)), unit_quats(rng), rng.uniform(0.2, 2, (N, 1)),
                      rng.uniform(0.2, 5, (N, 3))], axis=1)
  s[w] = [0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]
  return s


def unit(rng) -> np.ndarray:
  v = rng.normal(size=(N, 3))
  return v / np.linalg.norm(v, axis=1, keepdims=True)


def flags(rng, off: float = 0.125) -> np.ndarray:
  return (rng.random((N, 1)) >= off).astype(np.float64)


# --- the cases ---

BODY = [("pos", "v"), ("quat", "q"), ("vel", "v"), ("angvel", "v"), ("disp", "v"), ("rot", "v")]


def integrate_oracle(pos, quat, vel, angvel, force, torque, inv_mass, inv_inertia, gravity):
  packed = Tensor.cat(*(flat(v) for v in (pos, quat, vel, angvel)), dim=-1)[:, None]
  model = type("M", (), dict(body_inv_mass=inv_mass[:, None], body_inv_inertia=flat(inv_inertia)[:, None],
                             gravity=flat(gravity)[:, None]))
  out = integrate(model, packed, H, V3.of(flat(force)[:, None]), V3.of(flat(torque)[:, None]))[:, 0]
  return [out[:, 0:3], out[:, 3:7], out[:, 7:10], out[:, 10:13], out[:, 13:16], out[:, 16:19]]


def integrate_draw(rng):
  """One body in 8 static (zero inverse mass and inertia, which integrate leaves in place)."""
  static = rng.random(N) < 0.125
  return {"pos": rng.normal(size=(N, 3)), "quat": unit_quats(rng), "vel": rng.normal(size=(N, 3)),
          "angvel": rng.normal(0, 3, (N, 3)), "force": rng.normal(0, 5, (N, 3)), "torque": rng.normal(0, 5, (N, 3)),
          "inv_mass": np.where(static, 0.0, rng.uniform(0.2, 2, N))[:, None],
          "inv_inertia": np.where(static[:, None], 0.0, rng.uniform(0.2, 5, (N, 3))),
          "gravity": rng.normal(0, 5, (N, 3))}


def correction_draw(rng, angular: bool):
  """Two sides, offsets ~0.5 m, a unit direction, an error of ~1 cm (or rad), the multiplier so far and a
  compliance alpha~ = alpha / h^2 of 0 (rigid) or up to 1; one in 8 corrections off. Side 1 is the world in one
  case in 8, side 2 never: with both immovable and alpha~ = 0 the forward divides by 1e-30 (a correction that moves
  nothing), and the oracle's own gradient is inf there."""
  at = np.where(rng.random((N, 1)) < 0.5, 0.0, rng.uniform(0, 1, (N, 1)))
  d = {"s1": sides(rng), "s2": sides(rng, world=0.0), "n": unit(rng), "err": rng.normal(0, 0.01, (N, 1)),
       "on": flags(rng), "lam": rng.normal(0, 0.01, (N, 1)), "at": at}
  return d if angular else {**d, "r1": rng.normal(0, 0.5, (N, 3)), "r2": rng.normal(0, 0.5, (N, 3))}


SIDE_GRADS = [("s1", "side", "s1"), ("s2", "side", "s2")]
HINGE_VECS = ("axis_p", "axis_c", "ref_p", "ref_c", "anchor_p", "anchor_c")
CORR_OUTS = [("corr", "corr"), ("lam_new", "s")]
CASES = {
  "integrate": Case(
    [("pos", "v"), ("quat", "q"), ("vel", "v"), ("angvel", "v"), ("force", "v"), ("torque", "v"), ("inv_mass", "s"),
     ("inv_inertia", "v"), ("gravity", "v")], BODY,
    "integrate_body_adj({pos}, {quat}, {vel}, {angvel}, {force}, {torque}, {inv_mass}, {inv_inertia}, {gravity}, "
    f"{H}, BodyWork({{g_pos}}, {{g_quat}}, {{g_vel}}, {{g_angvel}}, {{g_disp}}, {{g_rot}}))",
    [("pos", "v", "x"), ("quat", "q", "q"), ("vel", "v", "v"), ("angvel", "v", "w"), ("force", "v", "force"),
     ("torque", "v", "torque"), ("inv_mass", "s", "im"), ("inv_inertia", "v", "ii"), ("gravity", "v", "gravity")],
    integrate_oracle, integrate_draw),
  "world_inv_inertia": Case(
    [("s", "side"), ("v", "v")], [("out", "v")], "world_inv_inertia_adj({s}, {v}, {g_out})",
    [("s", "side", "s"), ("v", "v", "v")], lambda s, v: [s.world_inv_inertia(v)],
    lambda rng: {"s": sides(rng), "v": rng.normal(size=(N, 3))}),
  "inv_mass_at": Case(
    [("s", "side"), ("r", "v"), ("n", "v")], [("out", "s")], "inv_mass_at_adj({s}, {r}, {n}, {g_out})",
    [("s", "side", "s"), ("r", "v", "r"), ("n", "v", "n")], lambda s, r, n: [s.inv_mass_at(r, n)],
    lambda rng: {"s": sides(rng), "r": rng.normal(size=(N, 3)), "n": unit(rng)}),
  "inv_inertia_along": Case(
    [("s", "side"), ("n", "v")], [("out", "s")], "inv_inertia_along_adj({s}, {n}, {g_out})",
    [("s", "side", "s"), ("n", "v", "v")], lambda s, n: [s.inv_inertia_along(n)],
    lambda rng: {"s": sides(rng), "n": unit(rng)}),
  "neg_solve3": Case(
    [("a", "v"), ("b", "v"), ("c", "v"), ("rhs", "v"), ("on", "b")], [("out", "v")],
    "neg_solve3_adj({a}, {b}, {c}, {rhs}, {on}, {g_out})",
    [("a", "v", "a"), ("b", "v", "b"), ("c", "v", "c"), ("rhs", "v", "rhs")],
    lambda a, b, c, rhs, on: [xpbd.neg_solve3(a, b, c, rhs, on)],
    # well-conditioned K: the identity plus a random perturbation (a solve's gradient grows as cond(K)^2)
    lambda rng: {**dict(zip("abc", (np.eye(3)[j] + rng.normal(0, 0.3, (N, 3)) for j in range(3)))),
                 "rhs": rng.normal(size=(N, 3)), "on": flags(rng)}),
  "positional": Case(
    [("s1", "side"), ("s2", "side"), ("r1", "v"), ("r2", "v"), ("n", "v"), ("err", "s"), ("on", "b"), ("lam", "s"),
     ("at", "s")], CORR_OUTS,
    "positional_adj({s1}, {s2}, {r1}, {r2}, {n}, {err}, {on}, {lam}, {at}, {g_corr}, {g_lam_new})",
    [*SIDE_GRADS, ("r1", "v", "r1"), ("r2", "v", "r2"), ("n", "v", "n"), ("err", "s", "err"), ("lam", "s", "lam"),
     ("at", "s", "at")],
    lambda s1, s2, r1, r2, n, err, on, lam, at: xpbd.positional(s1, s2, r1, r2, n, err, on, lam, at),
    lambda rng: correction_draw(rng, angular=False)),
  "angular": Case(
    [("s1", "side"), ("s2", "side"), ("n", "v"), ("err", "s"), ("on", "b"), ("lam", "s"), ("at", "s")], CORR_OUTS,
    "angular_adj({s1}, {s2}, {n}, {err}, {on}, {lam}, {at}, {g_corr}, {g_lam_new})",
    [*SIDE_GRADS, ("n", "v", "n"), ("err", "s", "err"), ("lam", "s", "lam"), ("at", "s", "at")],
    lambda s1, s2, n, err, on, lam, at: xpbd.angular(s1, s2, n, err, on, lam, at),
    lambda rng: correction_draw(rng, angular=True)),
  "angular_lock": Case(
    [("s1", "side"), ("s2", "side"), ("n", "v"), ("err", "s"), ("on", "b"), ("lam", "s")], CORR_OUTS,
    "angular_lock_adj({s1}, {s2}, {n}, {err}, {on}, {lam}, {g_corr}, {g_lam_new})",
    [*SIDE_GRADS, ("n", "v", "n"), ("err", "s", "err"), ("lam", "s", "lam")],
    lambda s1, s2, n, err, on, lam: xpbd.angular_lock(s1, s2, n, err, on, lam),
    lambda rng: correction_draw(rng, angular=True)),
  "angular_align": Case(
    [("s1", "side"), ("s2", "side"), ("a", "v"), ("n", "v"), ("err", "s"), ("on", "b"), ("lam", "s")], CORR_OUTS,
    "angular_align_adj({s1}, {s2}, {a}, {n}, {err}, {on}, {lam}, {g_corr}, {g_lam_new})",
    [*SIDE_GRADS, ("a", "v", "r1"), ("n", "v", "n"), ("err", "s", "err"), ("lam", "s", "lam")],
    lambda s1, s2, a, n, err, on, lam: xpbd.angular_align(s1, s2, a, n, err, on, lam),
    lambda rng: {**correction_draw(rng, angular=True), "a": unit(rng)}),
  "inertia_world": Case(   # W's columns W e_x, W e_y, W e_z (kernels/adjoint/xpbd.wgsl inertia_world)
    [("s", "side")], [("w0", "v"), ("w1", "v"), ("w2", "v")],
    "inertia_world_adj({s}, mat3x3<f32>({g_w0}, {g_w1}, {g_w2}))", [("s", "side", "")],
    lambda s: [s.world_inv_inertia(V3(*(s.im * 0.0 + float(i == j) for j in range(3)))) for i in range(3)],
    lambda rng: {"s": sides(rng)}),
  "point": Case(
    [("s1", "side"), ("s2", "side"), ("r1", "v"), ("r2", "v"), ("d", "v"), ("lam", "v"), ("at", "s")],
    [("corr", "corr"), ("lam_new", "v")],
    "point_adj({s1}, {s2}, {r1}, {r2}, {d}, {lam}, {at}, {g_corr}, {g_lam_new})",
    [*SIDE_GRADS, ("r1", "v", "r1"), ("r2", "v", "r2"), ("d", "v", "d"), ("lam", "v", "lam"), ("at", "s", "at")],
    lambda s1, s2, r1, r2, d, lam, at: (lambda c, lv: [c, V3(*lv)])(
      *xpbd.point(s1, s2, r1, r2, d, (lam.x, lam.y, lam.z), at)),
    lambda rng: {**correction_draw(rng, angular=False), "d": rng.normal(0, 0.01, (N, 3)),
                 "lam": rng.normal(0, 0.01, (N, 3))}),
  "norm_dir": Case(
    [("v", "v")], [("len", "s"), ("dir", "v")], "norm_dir_adj({v}, EPS, {g_len}, {g_dir})", [("v", "v", "")],
    lambda v: list(v.norm_dir(xpbd.EPS)[:2]),
    lambda rng: {"v": rng.normal(size=(N, 3)) * np.where(rng.random((N, 1)) < 0.125, 1e-12, 1.0)}),   # some off
  "apply": Case(
    [("s", "side"), ("dx", "v"), ("dth", "v")], [("out", "side")], "apply_adj({s}, {dx}, {dth}, as_adj({g_out}))",
    [("s", "side", "s"), ("dx", "v", "r"), ("dth", "v", "n")], lambda s, dx, dth: [s.apply(dx, dth)],
    lambda rng: {"s": sides(rng), "dx": rng.normal(0, 0.01, (N, 3)), "dth": rng.normal(0, 0.1, (N, 3))}),
  "ball": Case(
    [("s1", "side"), ("s2", "side"), ("anchor1", "v"), ("anchor2", "v"), ("lam", "v"), ("compliance", "s")],
    [("corr", "corr"), ("lam_new", "v")],
    f"attach_adj({{s1}}, {{s2}}, {{anchor1}}, {{anchor2}}, {{lam}}, {{compliance}} / ({H} * {H}), {{g_corr}}, "
    "{g_lam_new})",
    [*SIDE_GRADS, ("anchor1", "v", "r1"), ("anchor2", "v", "r2"), ("lam", "v", "lam"),
     ("compliance", "s", f"at / ({H} * {H})")],
    lambda s1, s2, anchor1, anchor2, lam, compliance: ball_oracle(s1, s2, anchor1, anchor2, lam, compliance),
    lambda rng: {"s1": sides(rng), "s2": sides(rng, world=0.0), "anchor1": rng.normal(0, 0.3, (N, 3)),
                 "anchor2": rng.normal(0, 0.3, (N, 3)), "lam": rng.normal(0, 0.01, (N, 3)),
                 "compliance": np.where(rng.random((N, 1)) < 0.5, 0.0, rng.uniform(0, 1e-4, (N, 1)))}),
  "hinge": Case(
    [("s1", "side"), ("s2", "side"), *((k, "v") for k in HINGE_VECS), ("compliance", "s"), ("limited", "s"),
     ("lo", "s"), ("hi", "s"), ("lam", "l6")], [("corr", "corr"), ("lam_new", "l6")],
    "hinge_adj({s1}, {s2}, HingeParams(" + ", ".join(f"{{{k}}}" for k in (*HINGE_VECS, "compliance", "limited", "lo",
                                                                         "hi")) + f", 0.0, 0.0, 1.0), {{lam}}, {H}, "
    "{g_corr}, {g_lam_new})",
    [*SIDE_GRADS, *((k, "v", f"prm.{k}") for k in HINGE_VECS), ("compliance", "s", "prm.compliance"),
     ("lo", "s", "prm.lo"), ("hi", "s", "prm.hi"), ("lam", "l6", "lam")],
    lambda **kw: hinge_oracle(**kw), lambda rng: hinge_draw(rng)),
  "distance": Case(
    [("s1", "side"), ("s2", "side"), ("anchor_p", "v"), ("anchor_c", "v"), ("length", "s"), ("compliance", "s"),
     ("lam", "s")], CORR_OUTS,
    f"distance_adj({{s1}}, {{s2}}, {{anchor_p}}, {{anchor_c}}, {{length}}, {{compliance}}, {{lam}}, {H}, {{g_corr}}, "
    "{g_lam_new})",
    [*SIDE_GRADS, ("anchor_p", "v", "anchor_p"), ("anchor_c", "v", "anchor_c"), ("length", "s", "length"),
     ("compliance", "s", "compliance"), ("lam", "s", "lam")],
    lambda **kw: joint_oracle(distance.distance, **kw), lambda rng: joint_draw(rng, length=True)),
  "fixed": Case(
    [("s1", "side"), ("s2", "side"), ("relquat", "q"), ("anchor_p", "v"), ("anchor_c", "v"), ("compliance", "s"),
     ("lam", "l4")], [("corr", "corr"), ("lam_new", "l4")],
    f"fixed_adj({{s1}}, {{s2}}, {{relquat}}, {{anchor_p}}, {{anchor_c}}, {{compliance}}, {{lam}}, {H}, {{g_corr}}, "
    "{g_lam_new})",
    [*SIDE_GRADS, ("relquat", "q", "rel"), ("anchor_p", "v", "anchor_p"), ("anchor_c", "v", "anchor_c"),
     ("compliance", "s", "compliance"), ("lam", "l4", "lam")],
    lambda **kw: joint_oracle(fixed.fixed, **kw), lambda rng: {**joint_draw(rng), "relquat": unit_quats(rng),
                                                              "lam": rng.normal(0, 0.01, (N, 4))}),
  "slide": Case(
    [("s1", "side"), ("s2", "side"), ("axis_p", "v"), ("anchor_p", "v"), ("anchor_c", "v"), ("relquat", "q"),
     ("compliance", "s"), ("limited", "s"), ("lo", "s"), ("hi", "s"), ("lam", "v")],
    [("corr", "corr"), ("lam_new", "v")],
    "slide_adj({s1}, {s2}, SlideParams({axis_p}, {anchor_p}, {anchor_c}, {relquat}, {compliance}, {limited}, {lo}, "
    f"{{hi}}), {{lam}}, {H}, {{g_corr}}, {{g_lam_new}})",
    [*SIDE_GRADS, *((k, "v", f"prm.{k}") for k in ("axis_p", "anchor_p", "anchor_c")),
     ("relquat", "q", "prm.relquat"),
     ("compliance", "s", "prm.compliance"), ("lo", "s", "prm.lo"), ("hi", "s", "prm.hi"), ("lam", "v", "lam")],
    lambda **kw: joint_oracle(slide.slide, **kw),
    lambda rng: {**joint_draw(rng), "axis_p": unit(rng), "relquat": unit_quats(rng),
                 "lam": rng.normal(0, 0.01, (N, 3)), "limited": (rng.random((N, 1)) < 0.5).astype(np.float64),
                 "lo": -rng.uniform(0, 1, (N, 1)), "hi": rng.uniform(0, 1, (N, 1))}),
}

JOINT_FIELDS = {"anchor_p": "jnt_anchor_parent", "anchor_c": "jnt_anchor_child", "length": "jnt_length",
                "compliance": "jnt_compliance", "relquat": "jnt_relquat", "axis_p": "jnt_axis_parent",
                "limited": "jnt_limited"}


def joint_oracle(fn, s1, s2, lam, **prm):
  """A registered constraint of oracle/constraints/ on one joint per case, its parameters per case (a batch axis)."""
  rng = {"jnt_range": Tensor.stack(prm.pop("lo"), prm.pop("hi"), dim=-1)[:, None]} if "lo" in prm else {}
  model = type("M", (), {**rng, **{JOINT_FIELDS[k]: flat(v)[:, None] if isinstance(v, (V3, Quat)) else v[:, None]
                                   for k, v in prm.items()}})
  lam = (lam,) if isinstance(lam, Tensor) else (lam.x, lam.y, lam.z) if isinstance(lam, V3) else lam
  corr, new = fn(model, (0,), col(s1), col(s2), tuple(t[:, None] for t in lam), H)
  return [corr, new if len(new) > 1 else new[0]]


def joint_draw(rng, length: bool = False):
  """Two sides (side 2 never the world), anchors ~0.3 m, half the joints compliant; a distance joint's rest length
  near the anchors' distance, so that both signs of the error come up."""
  d = {"s1": sides(rng), "s2": sides(rng, world=0.0), "anchor_p": rng.normal(0, 0.3, (N, 3)),
       "anchor_c": rng.normal(0, 0.3, (N, 3)),
       "compliance": np.where(rng.random((N, 1)) < 0.5, 0.0, rng.uniform(0, 1e-4, (N, 1))),
       "lam": rng.normal(0, 0.01, (N, 1))}
  return {**d, "length": rng.uniform(0.5, 3, (N, 1))} if length else d


def hinge_oracle(s1, s2, axis_p, axis_c, ref_p, ref_c, anchor_p, anchor_c, compliance, limited, lo, hi, lam):
  """oracle/constraints/hinge.py hinge (no position servo: ctrl None) on one joint per case. The servo's adjoint is
  checked through a scene (tests/test_parity_grad.py, pendulum_servo): its float64 autograd here compiled for over
  12 minutes."""
  model = type("M", (), dict(jnt_axis_parent=flat(axis_p)[:, None], jnt_axis_child=flat(axis_c)[:, None],
                             jnt_ref_parent=flat(ref_p)[:, None], jnt_ref_child=flat(ref_c)[:, None],
                             jnt_anchor_parent=flat(anchor_p)[:, None], jnt_anchor_child=flat(anchor_c)[:, None],
                             jnt_compliance=compliance[:, None], jnt_limited=limited[:, None],
                             jnt_range=Tensor.stack(lo, hi, dim=-1)[:, None], act_type=(), act_joint=()))
  corr, new = hinge.hinge(model, (0,), col(s1), col(s2), tuple(t[:, None] for t in lam), H)
  return [corr, new]


def hinge_draw(rng):
  """Random poses (the hinge far from aligned, its angle anywhere: limits fire in about half the limited cases), unit
  axes and reference vectors, anchors ~0.3 m, half the joints limited to [-U(0, 1), U(0, 1)] rad, half compliant."""
  return {"s1": sides(rng), "s2": sides(rng, world=0.0), "axis_p": unit(rng), "axis_c": unit(rng),
          "ref_p": unit(rng), "ref_c": unit(rng), "anchor_p": rng.normal(0, 0.3, (N, 3)),
          "anchor_c": rng.normal(0, 0.3, (N, 3)),
          "compliance": np.where(rng.random((N, 1)) < 0.5, 0.0, rng.uniform(0, 1e-4, (N, 1))),
          "limited": (rng.random((N, 1)) < 0.5).astype(np.float64), "lo": -rng.uniform(0, 1, (N, 1)),
          "hi": rng.uniform(0, 1, (N, 1)), "lam": rng.normal(0, 0.01, (N, 6))}


def ball_oracle(s1, s2, anchor1, anchor2, lam, compliance):
  """oracle/constraints/ball.py ball on one joint per case, the joint's parameters per case (a batch axis)."""
  model = type("M", (), dict(jnt_anchor_parent=flat(anchor1)[:, None], jnt_anchor_child=flat(anchor2)[:, None],
                             jnt_compliance=compliance[:, None]))
  corr, new = ball.ball(model, (0,), col(s1), col(s2), tuple(t[:, None] for t in (lam.x, lam.y, lam.z)), H)
  return [corr, V3(*new)]


# one xdist group per case (conftest.py), so that the two workers share them: nothing compiles for two cases
@pytest.mark.parametrize("name", [pytest.param(k, marks=pytest.mark.xdist_group(f"adjoint_{k}")) for k in CASES])
def test_parity_adjoint(name):
  """The WGSL adjoint against float64 autograd of the oracle function it mirrors, per input."""
  run_case(name, CASES[name])
