"""The golden files (tests/golden.py) were computed from this tree's code: a stale one fails here, naming the command
that rewrites it (its tests still pass, computing the reference live, only slower)."""
import pytest
from tests.golden import WRITE, stale


def test_golden_files_are_current():
  if WRITE: pytest.skip("make golden is rewriting the files")
  old = stale()
  assert not old, f"tests/golden/ has references computed from other code: {old}; run `make golden`"
