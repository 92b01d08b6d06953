"""The golden files (tests/golden.py) were computed from this tree's code: a stale one fails here, naming the command
that rewrites it (its tests still pass, computing the reference live, only slower)."""
import pytest
import json
from tests.golden import ROOT, WRITE, _meaning, stale


def test_golden_files_are_current():
  if WRITE: pytest.skip("make golden is rewriting the files")
  old = stale()
  assert not old, f"tests/golden/ has references computed from other code: {old}; run `make golden`"


def test_golden_fingerprint_ignores_prose_not_code(tmp_path):
  """A docstring, comment or blank-line edit leaves a file's fingerprint as it was; a code edit (a number, a string the
  code uses) changes it."""
  base = 'def f(x):\n  """Doc."""\n  y = x + 1  # why\n  return f"{y}\u00b2"\n'
  variants = {
    "docstring": base.replace("Doc.", "Longer doc, with \u03b8.\n  Two lines."),
    "comment": base.replace("# why", "# a longer why, \u03b8"),
    "blank lines": base.replace("\n  return", "\n\n\n  return"),
    "number": base.replace("+ 1", "+ 2"),
    "string": base.replace("\u00b2", "\u00b3"),
  }
  def meaning(text):
    path = tmp_path / "m.py"
    path.write_text(text)
    return _meaning(path)
  want = meaning(base)
  assert [k for k, v in variants.items() if meaning(v) == want] == ["docstring", "comment", "blank lines"]


def test_golden_unused_files_are_unused():
  """tests/golden.py leaves oracle/armature.py out of the fingerprints because no reference's scene has armature:
  every reference runs a shipped scene (scenes/, engine/tasks/scenes/) or one derived from it, and the tests that add
  armature read no golden file (test_verify_armature*.py, test_grad_armature.py, test_wgsl_bridge.py) or name it in
  the reference's sources (tests/golden.py ARMED: test_parity_wgsl_armature.py; physics_of: the gradient parity
  tests' armed scenes)."""
  scenes = sorted(ROOT.glob("scenes/*.json")) + sorted(ROOT.glob("engine/tasks/scenes/*.json"))
  armed = [p.name for p in scenes if any(j.get("armature") for j in json.loads(p.read_text()).get("joints", []))]
  assert not armed, f"{armed} have armature: drop oracle/armature.py from tests/golden.py UNUSED and run make golden"
