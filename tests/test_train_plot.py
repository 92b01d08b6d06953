"""The trainers' learning-curve PNG (engine/train/plot.py): read back with PIL, it has the asked size, an axes box
holding the curve where the data put it and the target line above it; without matplotlib the trainers' save_run
writes the weights and the history and warns, naming what to install."""
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from engine.train.common import MLPPolicy, save_run
from engine.train.plot import MATPLOTLIB, PlotUnavailable, write_curve_png

BLUE = (31, 119, 180)  # matplotlib's tab:blue, the curve (the target line is tab:red)


def _near(img, rgb, tol=12):
  return (np.abs(img[..., :3].astype(int) - rgb) <= tol).all(-1)


def _axes_box(img):
  """(top, bottom, left, right) pixel rows/columns of the axes' black spines."""
  dark = img[..., :3].max(-1) < 80
  rows, cols = np.flatnonzero(dark.sum(1) > 0.5 * img.shape[1]), np.flatnonzero(dark.sum(0) > 0.5 * img.shape[0])
  return rows.min(), rows.max(), cols.min(), cols.max()


def test_train_curve_png_axes_and_curve(tmp_path):
  xs = np.arange(1, 21) * 5000
  ys = 10 + 0.004 * xs  # a straight rising line, 30 to 410
  write_curve_png(str(tmp_path / "c.png"), xs, ys, title="t")
  with Image.open(tmp_path / "c.png") as im:
    assert im.format == "PNG" and im.size == (720, 440)
    img = np.asarray(im)
  top, bottom, left, right = _axes_box(img)
  assert right - left > 0.75 * 720 and bottom - top > 0.7 * 440  # one axes filling most of the figure
  r, c = np.nonzero(_near(img, BLUE))
  assert len(r) > 500
  assert top < r.min() and r.max() < bottom and left < c.min() and c.max() < right
  # the data are collinear, so the drawn curve is a straight line rising to the right (rows grow downwards)
  slope, icpt = np.polyfit(c, r, 1)
  assert slope < -0.3 and np.percentile(np.abs(r - (slope * c + icpt)), 95) < 3.0


def test_train_curve_png_target_and_gaps(tmp_path):
  xs = [1000, 2000, 3000, 4000, 5000]
  ys = [100.0, None, 200.0, float("nan"), 300.0]  # evaluation rows without a value are skipped
  write_curve_png(str(tmp_path / "c.png"), xs, ys, target=475)
  img = np.asarray(Image.open(tmp_path / "c.png"))
  top, bottom, left, right = _axes_box(img)
  # the 1.2 px line blends into white over two rows: take reddish pixels rather than tab:red exactly
  red_rows, _ = np.nonzero((img[..., 0].astype(int) - img[..., 1] > 60) & (img[..., 0].astype(int) - img[..., 2] > 60))
  counts = np.bincount(red_rows, minlength=img.shape[0])
  line = int(np.argmax(counts))
  assert counts[line] > 0.3 * (right - left)  # a dashed line across the axes
  blue_rows, _ = np.nonzero(_near(img, BLUE))
  assert top < line < np.percentile(blue_rows, 5)  # 475 is above every point (<= 300)


def test_train_save_run_without_matplotlib(tmp_path, monkeypatch):
  for name in ("matplotlib", "matplotlib.figure", "matplotlib.backends.backend_agg", "matplotlib.ticker"):
    monkeypatch.setitem(sys.modules, name, None)  # a None entry makes `import name` fail as if it were missing
  with pytest.raises(PlotUnavailable, match=r"pip install 'tinyxpbd\[plot\]'"):
    write_curve_png(str(tmp_path / "c.png"), [1], [1])
  with pytest.warns(UserWarning, match="curve.png not written.*pip install"):
    written = save_run(str(tmp_path), MLPPolicy(4, 1, seed=0), [{"env_steps": 1, "x": 2.0}], {"task": "t"},
                       ([1], [2.0]), title="t", ylabel="x")
  assert written == ["policy.safetensors", "history.json"]
  assert {p.name for p in tmp_path.iterdir()} == {"policy.safetensors", "history.json"}


def test_train_plot_pin_matches_pyproject():
  extras = tomllib.loads((Path(__file__).parent.parent / "pyproject.toml").read_text())["project"][
    "optional-dependencies"]
  assert MATPLOTLIB in extras["plot"] and MATPLOTLIB in extras["dev"]
