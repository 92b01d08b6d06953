"""Packaging: what pyproject.toml puts in the wheel, and the shipped scenes by name. `.ci/wheel_smoke` builds the
wheel, installs it in a fresh venv and runs it from another folder; these are the cheap checks of the same promises."""
import tomllib
from pathlib import Path

import numpy as np
import pytest

import engine

ROOT = Path(__file__).resolve().parent.parent


def test_packaging_wheel_lists_every_package_and_data_file():
  """The packages are listed in pyproject.toml (the mapped engine.scenes cannot be found by setuptools' find), so a
  new package or data file must be added there: every folder under engine/, oracle/, kernels/ with an __init__.py or
  a data file is a listed package (setuptools warns of a data folder that is not), and every file in a package's
  folder that is not Python matches one of its package-data globs."""
  tool = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
  mapped = tool["package-dir"]
  folders = {pkg: ROOT / mapped.get(pkg, pkg.replace(".", "/")) for pkg in tool["packages"]}
  found = {".".join(p.parent.relative_to(ROOT).parts) for top in ("engine", "oracle", "kernels")
           for p in (ROOT / top).rglob("*") if p.is_file() and "__pycache__" not in p.parts
           and (p.name == "__init__.py" or p.suffix not in (".py", ".pyc"))}
  assert set(tool["packages"]) == found | set(mapped), "pyproject.toml [tool.setuptools] packages"
  assert folders["engine.scenes"] == ROOT / "scenes"
  for pkg, folder in folders.items():
    inner = [f for f in folders.values() if f != folder and folder in f.parents]   # subpackages ship their own files
    data = {f for f in folder.rglob("*") if f.is_file() and f.suffix not in (".py", ".pyc")
            and "__pycache__" not in f.parts and not any(s in f.parents for s in inner)}
    shipped = {f for pattern in tool["package-data"].get(pkg, []) for f in folder.glob(pattern)}
    assert data <= shipped, f"{pkg}: not package data: {sorted(str(f.relative_to(ROOT)) for f in data - shipped)}"
  assert any(f.suffix == ".json" for f in folders["engine.scenes"].iterdir())


def test_packaging_scenes_by_name():
  """engine.load_scene takes a shipped scene's name (engine.scene_names()) as well as a path; an unknown name is a
  SceneError that lists the names; a path that looks like one (a suffix or a folder) stays a path."""
  names = engine.scene_names()
  assert names == tuple(sorted(p.stem for p in (ROOT / "scenes").glob("*.json"))) and "pendulum" in names
  assert engine.scene_path("pendulum").resolve() == (ROOT / "scenes" / "pendulum.json").resolve()
  by_name, by_path = engine.load_scene("pendulum"), engine.load_scene(ROOT / "scenes" / "pendulum.json")
  assert by_name.name == by_path.name == "pendulum"
  assert np.array_equal(by_name.body_pos0.numpy(), by_path.body_pos0.numpy())
  with pytest.raises(engine.SceneError, match=r"'nosuch': no such file, nor a shipped scene \(one of bounce, chain,"):
    engine.load_scene("nosuch")
  for path in ("nosuch.json", "./nosuch", "sub/pendulum"):
    with pytest.raises(engine.SceneError, match="not found"): engine.load_scene(path)
