"""Scene validation's leaf checks: each returns a plain Python value or raises SceneError naming the field's path
(engine/scene_schema.py validates a scene with them, and so do the joint, site, tendon and actuator checks)."""
from __future__ import annotations

import math
import numbers
import re

import numpy as np

QUAT_TOL = 1e-6  # a quaternion further than this from unit norm is a mistake, not rounding
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class SceneError(ValueError):
  """A scene that does not match the format (docs/scenes.md). The message starts with the offending field's path."""


def _fail(path: str, msg: str):
  raise SceneError(f"{path or 'scene'}: {msg}")


def _obj(v, path, what) -> dict:
  if not isinstance(v, dict): _fail(path, f"expected {what}, got {show(v)}")
  return v


def _list(v, path, what, nonempty: bool) -> list:
  if not isinstance(v, (list, tuple)) or (nonempty and len(v) == 0): _fail(path, f"expected {what}, got {show(v)}")
  return list(v)


def _keys(d: dict, path: str, allowed, required):
  for k in d:
    if k not in allowed:
      if isinstance(k, str) and _IDENT.fullmatch(k):
        _fail(f"{path}.{k}" if path else k, f"unknown key (allowed: {', '.join(allowed)})")
      _fail(path, f"unknown key {show(k)} (allowed: {', '.join(allowed)})")
  for k in required:
    if k not in d: _fail(f"{path}.{k}" if path else k, "missing required field")


def _name(v, path) -> str:
  if not isinstance(v, str) or not v.strip(): _fail(path, f"expected a non-empty string, got {show(v)}")
  return v


def _is_finite(v) -> bool:
  if not isinstance(v, numbers.Real) or isinstance(v, (bool, np.bool_)): return False  # bools are not numbers
  try:
    return math.isfinite(float(v))
  except (OverflowError, ValueError, TypeError):  # ints too large for a float
    return False


def _num(v, path, lo=None, hi=None, lo_open=False, hi_open=False, unit="") -> float:
  if _is_finite(v):
    f = float(v)
    if (lo is None or (f > lo if lo_open else f >= lo)) and (hi is None or (f < hi if hi_open else f <= hi)): return f
  if lo is not None and hi is not None:
    expect = f"a number in {'(' if lo_open else '['}{lo:g}, {hi:g}{')' if hi_open else ']'}"
  elif lo is not None: expect = f"a number {'>' if lo_open else '>='} {lo:g}"
  else: expect = "a finite number"
  _fail(path, f"expected {expect}{unit}, got {show(v)}")


def _int(v, path, lo: int) -> int:
  if not isinstance(v, numbers.Integral) or isinstance(v, (bool, np.bool_)) or v < lo:
    _fail(path, f"expected an integer >= {lo}, got {show(v)}")
  return int(v)


def _vec(v, path, n) -> list[float]:
  if not isinstance(v, (list, tuple)) or len(v) != n or not all(_is_finite(x) for x in v):
    _fail(path, f"expected {n} finite numbers, got {show(v)}")
  return [float(x) for x in v]


def _unit(v, path) -> list[float]:
  a = np.array(_vec(v, path, 3))
  # unit to a few ulps already: keep it, so that validating a validated scene is the identity (normalising again moved
  # a last digit: tests/test_scene_io.py's fuzz, 2026-11-28), as _quat does
  if abs(float(np.linalg.norm(a)) - 1.0) <= 1e-15: return a.tolist()
  scale = np.abs(a).max()  # scale first so huge or tiny components neither overflow nor underflow the norm
  if scale == 0: _fail(path, f"expected a nonzero 3-vector, got {show(v)}")
  a = a / scale
  return (a / np.linalg.norm(a)).tolist()


def _quat(v, path) -> list[float]:
  if not isinstance(v, (list, tuple)) or len(v) != 4 or not all(_is_finite(x) for x in v):
    _fail(path, f"expected a unit quaternion [w, x, y, z] (4 finite numbers), got {show(v)}")
  with np.errstate(all="ignore"):
    norm = float(np.linalg.norm(np.array(v, np.float64)))
  if norm == 0: _fail(path, f"expected a unit quaternion [w, x, y, z], got {show(v)} (zero)")
  if not abs(norm - 1.0) <= QUAT_TOL: _fail(path, f"{show(v)} is not unit (norm={norm:.9g}); normalise it")
  # unit to a few ulps already: keep it, so that validating a validated scene is the identity (dividing by a norm
  # that rounds to 1 - 1 ulp changed the last digit on one machine's numpy, 2026-11-25)
  if abs(norm - 1.0) <= 1e-15: return [float(x) for x in v]
  return [float(x) / norm for x in v]


def show(v, depth: int = 0) -> str:
  """Short, safe rendering of any value for an error message (never raises, never prints a huge value in full)."""
  if isinstance(v, (bool, np.bool_)) or v is None: return repr(v) if not isinstance(v, np.bool_) else repr(bool(v))
  if isinstance(v, numbers.Integral):
    try:
      return str(int(v)) if abs(int(v)) < 10 ** 15 else f"{float(v):.6g}"
    except OverflowError:
      return "<an integer too large for a float>"
  if isinstance(v, numbers.Real):
    return repr(float(v))
  if isinstance(v, str): return repr(v) if len(v) <= 40 else repr(v[:37]) + "..."
  if isinstance(v, (list, tuple)):
    if depth >= 2: return "[...]"
    items = [show(x, depth + 1) for x in v[:6]]
    return "[" + ", ".join(items + (["..."] if len(v) > 6 else [])) + "]"
  if isinstance(v, dict):
    if depth >= 2: return "{...}"
    items = [f"{show(k, depth + 1)}: {show(x, depth + 1)}" for k, x in list(v.items())[:4]]
    return "{" + ", ".join(items + (["..."] if len(v) > 4 else [])) + "}"
  return f"<{type(v).__name__}>"
