"""MuJoCo's options and contact parameters in the MJCF reader (engine/mjcf_physics.py, engine/mjcf_contacts.py):
what changes the physics is mapped, refused by name or warned about, never dropped silently (issue 19), each checked
against what MuJoCo itself does with the same file."""
from __future__ import annotations
import subprocess
import sys
import warnings
from pathlib import Path
import numpy as np
import pytest

pytest.importorskip("mujoco")
import mujoco  # noqa: E402
from engine.mjcf import MJCFWarning, from_mjcf  # noqa: E402
from engine.scene_schema import SceneError  # noqa: E402

BALL = '<body name="b" pos="0 0 1"><freejoint/><geom name="s" type="sphere" size="0.1"/></body>'


def _xml(tmp_path: Path, body: str, head: str = "", tail: str = "") -> Path:
  path = tmp_path / "model.xml"
  path.write_text(f"<mujoco>{head}<worldbody>{body}</worldbody>{tail}</mujoco>")
  return path


def _convert(path: Path) -> tuple[dict, list[str]]:
  with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always", MJCFWarning)
    scene = from_mjcf(path)
  return scene, [str(w.message) for w in caught if issubclass(w.category, MJCFWarning)]


@pytest.mark.parametrize("head, body, expected", [
  ('<option density="1.2"/>', BALL, "<option density=\"1.2\">: MuJoCo's fluid forces are not supported"),
  ('<option viscosity="0.1"/>', BALL, "<option viscosity=\"0.1\">: MuJoCo's fluid forces are not supported"),
  *[(f'<option><flag {f}="disable"/></option>', BALL, f"<flag {f}=\"disable\">: switching off")
    for f in ("constraint", "equality", "limit", "spring", "damper", "clampctrl", "actuation")],
  ('<option><flag override="enable"/></option>', BALL, "<flag override=\"enable\">: MuJoCo's contact parameter"),
  ("", BALL.replace('pos="0 0 1"', 'pos="0 0 1" gravcomp="1"'), "body 'b': gravcomp 1 is not supported"),
  ("", '<body name="b"><joint name="h" actuatorfrcrange="-1 1"/><geom type="sphere" size="0.1" pos="0 0 -1"/></body>',
   "joint 'h': actuatorfrcrange is not supported"),
  ("", '<body name="b"><joint name="h"/><geom type="sphere" size="0.1" pos="0 0 -1"/></body>',
   None),   # the control: the same body converts
])
def test_verify_mjcf_options_that_change_physics_are_named(tmp_path, head, body, expected):
  path = _xml(tmp_path, body, head)
  if expected is None:
    assert from_mjcf(path)["bodies"][0]["name"] == "b"
    return
  with pytest.raises(SceneError) as e:
    from_mjcf(path)
  assert str(e.value).startswith("MJCF file 'model.xml': ") and expected in str(e.value), str(e.value)


def test_verify_mjcf_gravity_flag_and_solver_flags(tmp_path):
  """<flag gravity="disable"> is gravity 0 (MuJoCo's ball then floats where it is); flags of MuJoCo's solver alone
  (warmstart, eulerdamp) convert as they are."""
  path = _xml(tmp_path, BALL, '<option gravity="0 0 -3"><flag gravity="disable"/></option>')
  m = mujoco.MjModel.from_xml_path(str(path))
  d = mujoco.MjData(m)
  mujoco.mj_step(m, d)
  assert np.allclose(d.qvel, 0.0)   # MuJoCo applies no gravity either
  assert _convert(path)[0]["gravity"] == [0.0, 0.0, 0.0]
  solver = _xml(tmp_path, BALL, '<option gravity="0 0 -3"><flag warmstart="disable" eulerdamp="disable"/></option>')
  assert _convert(solver) == (_convert(_xml(tmp_path, BALL, '<option gravity="0 0 -3"/>'))[0], [])


def test_verify_mjcf_fixed_tendons_inert_dropped_active_refused(tmp_path):
  """A fixed tendon that exerts no force (Gymnasium's humanoid has two) is dropped with a warning naming it; one with
  a spring is refused by name."""
  body = ('<body name="a"><joint name="j1"/><geom type="capsule" fromto="0 0 0 0 0 -0.5" size="0.05"/>'
          '<body name="c" pos="0 0 -0.5"><joint name="j2"/><geom type="capsule" fromto="0 0 0 0 0 -0.5" '
          'size="0.05"/></body></body>')
  tendon = '<tendon><fixed name="t"{}><joint joint="j1" coef="-1"/><joint joint="j2" coef="1"/></fixed></tendon>'
  plain = _convert(_xml(tmp_path, body))[0]
  scene, said = _convert(_xml(tmp_path, body, tail=tendon.format("")))
  assert scene == plain and len(said) == 1 and "fixed tendon 't' dropped" in said[0]
  with pytest.raises(SceneError, match="tendon 't': only spatial tendons through sites"):
    from_mjcf(_xml(tmp_path, body, tail=tendon.format(' stiffness="3"')))
  with pytest.raises(SceneError, match="tendon 't': only spatial tendons through sites"):
    from_mjcf(_xml(tmp_path, body, tail=tendon.format("") + '<actuator><motor tendon="t"/></actuator>'))


def test_verify_mjcf_contact_friction_follows_mujocos_pair_rule(tmp_path):
  """MuJoCo's contact takes the larger condim and friction of its geoms (equal priority), condim 1 frictionless. A
  condim-1 geom then gets friction 0 where no pair loses friction by it (hopper's and humanoid's body geoms on their
  condim-3 floor), and a pair that still differs (a condim-1 geom rougher than the floor it may touch, hence kept,
  against another condim-1 geom) is warned about, and so are torsional friction, a limit's margin and a contact
  margin."""
  floor = '<geom name="floor" type="plane" size="5 5 .1" condim="3" friction="0.9"/>'
  smooth = ('<body name="a" pos="0 0 1"><freejoint/><geom name="ga" type="sphere" size="0.1" condim="1" '
            'friction="0.5"/></body><body name="b" pos="1 0 1"><freejoint/><geom name="gb" type="sphere" size="0.1" '
            'condim="1" friction="0.7"/></body>')
  scene, said = _convert(_xml(tmp_path, floor + smooth))
  assert [g["friction"] for b in scene["bodies"] for g in b["geoms"]] == [0.0, 0.0] and said == []
  rough = smooth.replace('friction="0.7"', 'friction="2"')
  scene, said = _convert(_xml(tmp_path, floor + rough))
  # gb stays 2 (its floor contact is 2 in MuJoCo), so ga-gb gets 2 here where MuJoCo's is frictionless
  assert [g["friction"] for b in scene["bodies"] for g in b["geoms"]] == [0.0, 2.0]
  assert len(said) == 1 and "'ga' and 'gb': 2 here, 0 in MuJoCo" in said[0], said
  m = mujoco.MjModel.from_xml_path(str(_xml(tmp_path, floor + rough)))
  d = mujoco.MjData(m)
  d.qpos[7:10] = [0.15, 0.0, 1.0]   # gb onto ga: MuJoCo's own contact between them is condim 1
  mujoco.mj_forward(m, d)
  assert d.ncon == 1 and d.contact[0].dim == 1
  twist = floor.replace('condim="3"', 'condim="4"') + BALL
  assert any("torsional and rolling friction (condim 4, 6) dropped" in w for w in _convert(_xml(tmp_path, twist))[1])
  limit = ('<body name="c"><joint name="h" range="-1 1" margin="0.1"/><geom type="sphere" size="0.1" pos="0 0 -1"/>'
           '</body>')
  assert _convert(_xml(tmp_path, limit))[1] == [
    "MJCF file 'model.xml': joint 'h': its limit's margin 0.1 dropped (MuJoCo's limit acts from that far inside the "
    "range, this engine's at the range)"]
  margin = floor + BALL.replace('size="0.1"', 'size="0.1" margin="0.01"')
  said = _convert(_xml(tmp_path, margin))[1]
  assert len(said) == 1 and "margin - gap dropped on 1 geom pair(s) (up to 0.01 m, 'floor' and 's')" in said[0]


def test_cli_prints_mjcf_warnings_on_one_line(tmp_path):
  """The CLI shows an MJCF approximation as `warning: ...`, one line each, without Python's file and source lines; a
  library caller's warning names its own line."""
  path = _xml(tmp_path, '<geom name="floor" type="plane" size="5 5 .1"/>' + BALL.replace('size="0.1"',
                                                                                          'size="0.1" margin="0.01"'))
  run = subprocess.run([sys.executable, "-m", "engine", "info", str(path)], capture_output=True, text=True,
                       cwd=Path(__file__).resolve().parent.parent)
  assert run.returncode == 0, run.stderr
  assert run.stderr.splitlines() == ["warning: MJCF file 'model.xml': contact margin - gap dropped on 1 geom pair(s) "
                                     "(up to 0.01 m, 'floor' and 's'): MuJoCo holds touching surfaces that far apart, "
                                     "this engine lets them touch"], run.stderr
  with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always", MJCFWarning)
    from_mjcf(path)
  assert [Path(w.filename).name for w in caught] == [Path(__file__).name]
