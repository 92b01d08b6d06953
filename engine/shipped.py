"""The shipped scenes (scenes/*.json) by name: where they are in a source checkout and in an installed wheel.

In a checkout (and an editable install, which imports engine/ from the checkout) they are scenes/ at the repository
root; a wheel installs them as the package engine.scenes, i.e. engine/scenes/ (pyproject.toml maps that package onto
scenes/). The task scenes are engine/tasks/scenes/ in both (engine.tasks.SCENES).
"""
from __future__ import annotations

import os
from pathlib import Path

_HERE = Path(__file__).resolve().parent
SCENES = _HERE / "scenes" if (_HERE / "scenes").is_dir() else _HERE.parent / "scenes"


def scene_names() -> tuple[str, ...]:
  """The shipped scenes' names ("pendulum", "stack10", ...): the stems of scenes/*.json."""
  return tuple(sorted(p.stem for p in SCENES.glob("*.json")))


def scene_path(scene: str | os.PathLike) -> Path:
  """The file of a shipped scene's name ("pendulum") or of a path. A path is anything that names an existing file,
  has a suffix (.json, .xml) or a folder in it; whether the file exists is the loader's to report. An unknown name
  raises SceneError listing the shipped names."""
  from engine.scene import SceneError
  p, text = Path(scene), os.fspath(scene)
  if p.is_file() or p.suffix or any(sep and sep in text for sep in (os.sep, os.altsep)): return p
  if (SCENES / f"{p.name}.json").is_file(): return SCENES / f"{p.name}.json"
  raise SceneError(f"scene {str(scene)!r}: no such file, nor a shipped scene (one of {', '.join(scene_names())})")
