"""The leg demo (`python -m engine leg`): scenes/leg2.json, a two-link planar leg hung from the pelvis, its hip and
knee each driven by a flexor/extensor pair of Hill muscles, toggled live from the keyboard.

Keys: 1 hip flexor, 2 hip extensor, 3 knee extensor, 4 knee flexor (each toggles its excitation between 0 and 1),
0 relaxes all, q quits. On a terminal the keys act as they are pressed and the screen redraws a side view of the
leg at ~30 frames per simulated second; from a pipe or a file (a test, a script) the input is read one character per
frame, `.` or a space for a frame without a key, and every frame prints one status line. Either way the leg is
simulated in real time: frame k covers (k, k + 1] / 30 s.
"""
from __future__ import annotations
import math
import os
import select
import sys
import time
import numpy as np

KEYS = {"1": "hip_flexor", "2": "hip_extensor", "3": "knee_extensor", "4": "knee_flexor"}
FPS = 30.0


def pattern(t: float) -> list[float]:
  """A scripted excitation of (hip_flexor, hip_extensor, knee_extensor, knee_flexor) at time t [s]: the hip swings
  forward, back and forward, the knee flexes and extends (make demo's GIF, the MuJoCo cross-check)."""
  return [1.0 if t < 0.3 else 0.0, 1.0 if 0.5 <= t < 0.8 else 0.0, 0.6 if 0.2 <= t < 0.6 else 0.0,
          0.8 if t >= 0.6 else 0.1]


def angles(quat: np.ndarray) -> np.ndarray:
  """(hip, knee) [rad] from leg2's bodies' orientations (..., 2, 4): rotations about y from the hanging pose."""
  th = 2 * np.arctan2(quat[..., 2], quat[..., 0])
  return np.stack([th[..., 0], np.angle(np.exp(1j * (th[..., 1] - th[..., 0])))], -1)


def sketch(hip: float, knee: float, width: int = 29, height: int = 15) -> list[str]:
  """A side view of the leg as text: the pelvis at the top centre, thigh and shank 0.4 m each."""
  grid = [[" "] * width for _ in range(height)]
  scale = (height - 2) / 0.85   # rows per metre
  def put(x: float, z: float, ch: str):
    c, r = round(width / 2 + 2 * x * scale), round(1 + z * scale)   # characters are twice as tall as wide
    if 0 <= r < height and 0 <= c < width: grid[r][c] = ch
  # a positive angle about +y swings a hanging link towards -x (R_y maps (0, 0, -1) to (-sin, 0, -cos)); z is down
  knee_x, knee_z = -0.4 * math.sin(hip), 0.4 * math.cos(hip)
  for k in range(9):
    f = k / 8
    put(f * knee_x, f * knee_z, "#")
    put(knee_x - f * 0.4 * math.sin(hip + knee), knee_z + f * 0.4 * math.cos(hip + knee), "=")
  put(0.0, 0.0, "O")
  put(knee_x, knee_z, "o")
  return ["".join(row) for row in grid]


def status(t: float, excitation: np.ndarray, act: np.ndarray, hip: float, knee: float) -> str:
  bars = " ".join(f"{name}={e:.0f}/{a:.2f}" for name, e, a in zip(KEYS.values(), excitation, act))
  return f"t={t:6.2f}s  hip={math.degrees(hip):+7.1f}deg knee={math.degrees(knee):+7.1f}deg  {bars}"


class Keys:
  """Key presses from stdin: raw and non-blocking on a terminal, one character per frame otherwise."""

  def __init__(self, stream=None):
    self.stream = stream or sys.stdin
    self.tty = self.stream.isatty()
    self.saved = None
    if self.tty:
      import termios
      import tty
      self.saved = termios.tcgetattr(self.stream.fileno())
      tty.setcbreak(self.stream.fileno())

  def frame(self) -> str | None:
    """This frame's keys ('' for none); None at the end of a scripted input."""
    if not self.tty:
      ch = self.stream.read(1)
      return None if ch == "" else ch
    out = ""
    while select.select([self.stream], [], [], 0)[0]: out += os.read(self.stream.fileno(), 1).decode(errors="ignore")
    return out

  def close(self):
    if self.saved is not None:
      import termios
      termios.tcsetattr(self.stream.fileno(), termios.TCSADRAIN, self.saved)


def run(scene_path, frames: int | None = None, stream=None, out=None) -> dict:
  """The interactive loop; returns the last frame's {"t", "excitation", "act", "hip", "knee"}. frames: stop after
  this many (default: at q, or the end of a scripted input)."""
  from engine.scene import load_scene
  from engine.simulator import Simulator
  out = out or sys.stdout
  model = load_scene(scene_path)
  names = [model.act_name.index(n) for n in KEYS.values()]
  sim = Simulator(model, batch=1)
  state = sim.reset()
  steps = max(1, round(1.0 / (FPS * model.dt)))
  excitation = np.zeros(model.nact, np.float32)
  keys = Keys(stream)
  last: dict = {}
  try:
    k, start = 0, time.perf_counter()
    while frames is None or k < frames:
      pressed = keys.frame()
      if pressed is None or "q" in pressed: break
      for ch in pressed:
        if ch in KEYS: excitation[names[int(ch) - 1]] = 1.0 - excitation[names[int(ch) - 1]]
        if ch == "0": excitation[:] = 0.0
      state = sim.rollout(state, steps, ctrl=excitation[None])
      hip, knee = angles(state.body_quat.numpy()[0])
      act = state.act.numpy()[0]
      last = {"t": float(state.time.numpy()[0]), "excitation": excitation[names].copy(), "act": act[names],
              "hip": float(hip), "knee": float(knee)}
      line = status(last["t"], last["excitation"], last["act"], hip, knee)
      if keys.tty:
        out.write("\x1b[H\x1b[2J" + "\n".join(sketch(hip, knee)) + "\n" + line +
                  "\nkeys: 1 hip flexor, 2 hip extensor, 3 knee extensor, 4 knee flexor, 0 relax, q quit\n")
        time.sleep(max(0.0, start + (k + 1) / FPS - time.perf_counter()))   # real time, when the machine keeps up
      else:
        out.write(line + "\n")
      out.flush()
      k += 1
  finally:
    keys.close()
  return last


def render(scene_path, gif, seconds: float = 1.5, fps: float = 30.0) -> str:
  """leg2 under the scripted pattern(), rendered to a GIF with its tendons coloured by activation."""
  from engine.render import record, render_gif
  from engine.scene import load_scene, load_scene_dict
  model = load_scene(scene_path)
  pos, quat, info = record(model, 1, seconds, fps, ctrl=lambda t: np.array([pattern(t)], np.float32))
  t0 = time.perf_counter()
  render_gif(model, pos, quat, gif, fps, 320, 240, load_scene_dict(scene_path).get("camera"), act=info["act"])
  return f"leg2 x1: {len(pos)} frames under the scripted excitation, render {time.perf_counter() - t0:.1f} s -> {gif}"
