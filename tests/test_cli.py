"""Command line (`python -m engine`): info, render, error handling, bench. Only the pendulum is simulated (every new
scene or batch size costs ~15 s of JIT warm-up on a small CPU), and commands run in-process through main(argv)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import imageio.v3 as iio
import pytest

from engine.__main__ import main

ROOT = Path(__file__).resolve().parent.parent
PENDULUM = str(ROOT / "scenes" / "pendulum.json")


def test_cli_info_pendulum(capsys):
  """By path and by the shipped scene's name: the same summary."""
  assert main(["info", PENDULUM]) == 0
  out = capsys.readouterr().out
  assert "pendulum" in out and "nbody:       1" in out and "1 hinge" in out and "bob" in out
  assert "total mass:  1 kg" in out
  assert main(["info", "pendulum"]) == 0
  assert capsys.readouterr().out == out


def test_cli_render_pendulum_gif(tmp_path, capsys, monkeypatch):
  """A shipped scene by name, and the GIF in the working directory (the default output), named after the scene."""
  monkeypatch.chdir(tmp_path)
  gif = tmp_path / "pendulum.gif"
  assert main(["render", "pendulum", "--seconds", "0.2", "--fps", "10", "--width", "96", "--height", "72"]) == 0
  frames = iio.imread(gif, index=None)
  assert frames.shape == (2, 72, 96, 3)  # 0.2 s at 10 fps; the bob swings, so no two frames are merged
  assert (frames[0] != frames[1]).any()
  out = capsys.readouterr().out
  assert "2 frames" in out and out.rstrip().endswith("-> pendulum.gif")


@pytest.mark.parametrize("content", [None, "{not json", json.dumps({"bodies": [{"name": "a"}]})],
                         ids=["missing", "invalid_json", "invalid_scene"])
def test_cli_bad_scene_exit_2(tmp_path, capsys, content):
  path = tmp_path / "scene.json"
  if content is not None: path.write_text(content)
  for cmd in (["info", str(path)], ["render", str(path), "-o", str(tmp_path / "x.gif")]):
    assert main(cmd) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and ("scene.json" in err or "bodies[0]" in err)
    assert err.count("\n") == 1 and "Traceback" not in err, err
  assert not (tmp_path / "x.gif").exists()


USAGE_ERRORS = [   # (argv, what the line says)
  (["info", "nosuch"], "scene 'nosuch': no such file, nor a shipped scene (one of bounce, chain,"),
  (["parity", "stack10", "nosuch"], "nor a shipped scene (one of "),
  (["render", "pendulum", "--batch", "x"], "tinyxpbd render: argument --batch: invalid int value: 'x'"),
  (["render", "pendulum", "--batch", "0"], "--batch: expected a positive integer, got 0"),
  (["render"], "tinyxpbd render: the following arguments are required: scene"),
  ([], "tinyxpbd: the following arguments are required: {render,"),
  (["bogus"], "invalid choice: 'bogus'"),
  (["info", "pendulum", "extra"], "unrecognized arguments: extra"),
  (["parity", "pendulum", "--steps", "0"], "--steps: expected positive integers"),
  (["step", "pendulum", "--noise", "-1"], "--noise: expected a number >= 0"),
  (["convert", "pendulum", "-o", "x.txt"], "convert: MJCF (.xml) to a scene (.json) or back"),
]


@pytest.mark.parametrize("argv, says", USAGE_ERRORS, ids=[" ".join(argv) or "no command" for argv, _ in USAGE_ERRORS])
def test_cli_usage_errors_one_line(argv, says, capsys):
  """Mistakes on the command line (an unknown scene name lists the shipped ones, argparse's errors included) are one
  line on stderr and exit 2, before anything compiles."""
  assert main(argv) == 2
  out, err = capsys.readouterr()
  assert err.startswith("error: ") and err.count("\n") == 1 and says in err, err
  assert out == ""


def test_cli_errors_one_line_subprocess(tmp_path):
  """The real process: a missing or bad scene file, and parity with no WebGPU adapter (no Vulkan driver: Dawn falls
  back to its Null adapter, which runs nothing, and writes its own warnings to stderr; no Dawn library; no adapter of
  the backend asked for), are one line on stderr, exit 2, no traceback."""
  bad = tmp_path / "bad.json"
  bad.write_text(json.dumps({"bodies": [{"name": "a", "pos": [0, 0, 1], "geoms": [{"type": "sphere", "size": [-1]}]}]}))
  env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
  render = [sys.executable, "-m", "engine", "render", "-o", str(tmp_path / "x.gif")]
  parity = [sys.executable, "-m", "engine", "parity", "pendulum", "--steps", "1"]
  no_driver = {"VK_ICD_FILENAMES": str(tmp_path / "none.json"), "VK_DRIVER_FILES": str(tmp_path / "none.json")}
  for cmd, extra, says in ((render + [str(tmp_path / "missing.json")], {}, "missing.json': not found"),
                           (render + [str(bad)], {}, "size"),
                           (parity, no_driver, "Null adapter"),
                           (parity, {"WEBGPU_PATH": str(tmp_path / "none.so")}, "failed to open"),
                           (parity, {"WEBGPU_BACKEND": "WGPUBackendType_Metal"}, "failed to open")):
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, env={**env, **extra}, timeout=120)
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith("error: ") and p.stderr.count("\n") == 1 and says in p.stderr, p.stderr
    assert p.stdout == "", p.stdout


def test_cli_closed_pipe_quiet_subprocess(tmp_path):
  """Output into a pipe whose reader has gone (`tinyxpbd info pendulum | head -1`): no traceback, exit 1."""
  env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
  p = subprocess.Popen([sys.executable, "-m", "engine", "info", "pendulum"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=env)
  p.stdout.close()   # before the child writes (its imports take most of a second)
  err = p.stderr.read()
  assert p.wait(timeout=120) == 1 and err == "", err


@pytest.mark.parametrize("tier", ["step", "substep"])
def test_cli_bench_quick(tmp_path, capsys, tier):
  """The quick benchmark on either Simulator tier: a table row with its check, and the JSON record."""
  out_json = tmp_path / "results.json"
  assert main(["bench", "--quick", "--tier", tier, "--json", str(out_json)]) == 0
  out = capsys.readouterr().out
  rows = [ln for ln in out.splitlines() if ln.startswith(f"| pendulum | 1 | 8 | 1 | {tier} |")]
  assert len(rows) == 1 and rows[0].rstrip().endswith("| ok |")
  res = json.loads(out_json.read_text())["results"][0]
  assert res["env_steps_per_s"] > 0 and res["compile_s"] > 0 and res["check_ok"] and res["tier"] == tier
  assert res["kernels_per_step"] > 0
  assert res["tinygrad"] and res["cpu_count"] >= 1 and res["backend"] == "oracle"


def test_cli_leg_scripted_keys():
  """`python -m engine leg` driven by scripted keys (one character per frame from a pipe): key 1 turns the hip
  flexor on, its activation rises and the hip swings forward (a negative angle about +y); key 0 relaxes it."""
  import re
  keys = "1" + "." * 11 + "0" + "." * 11
  res = subprocess.run([sys.executable, "-m", "engine", "leg", "--frames", "24"], input=keys, capture_output=True,
                       text=True, cwd=ROOT, timeout=600)
  assert res.returncode == 0, res.stderr
  rows = [re.search(r"hip=\s*([-+.\d]+)deg knee=\s*([-+.\d]+)deg\s+hip_flexor=(\d)/([.\d]+)", line)
          for line in res.stdout.splitlines()]
  rows = [(float(m[1]), float(m[2]), int(m[3]), float(m[4])) for m in rows if m]
  assert len(rows) == 24, res.stdout
  hip, _, excitation, act = zip(*rows)
  assert excitation[:12] == (1,) * 12 and excitation[12:] == (0,) * 12
  assert act[0] > 0.5 and act[11] > 0.99 and act[-1] < 0.2       # activation follows, with MuJoCo's time constants
  assert hip[11] < -20 and hip[0] > hip[11]                        # the hip swings forward


def test_cli_convert_mjcf(tmp_path, capsys):
  """`convert` writes the scene of an MJCF file and prints where each body, joint and actuator came from; what it
  cannot convert, and a pair of suffixes it does not convert between, end in one line and exit 2."""
  pytest.importorskip("mujoco")
  out = tmp_path / "dp.json"
  assert main(["convert", str(ROOT / "tests" / "mjcf" / "double_pendulum.xml"), "-o", str(out)]) == 0
  text = capsys.readouterr().out
  assert "body 1 'lower' <- 2, 3" in text and "joint 1 'elbow' <- 1" in text
  scene = json.loads(out.read_text())
  assert [b["name"] for b in scene["bodies"]] == ["upper", "lower"]
  bad = tmp_path / "two.xml"
  bad.write_text('<mujoco><worldbody><body name="b"><joint type="slide"/><joint type="hinge" axis="0 1 0"/>'
                 '<geom type="sphere" size="0.1"/></body></worldbody></mujoco>')
  for cmd in (["convert", str(bad), "-o", str(tmp_path / "x.json")], ["convert", str(out), "-o", str(out)],
              ["info", str(bad)]):
    assert main(cmd) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err
