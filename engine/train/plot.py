"""The trainers' learning-curve PNG, drawn with matplotlib (the optional `plot` extra: pip install 'tinyxpbd[plot]').

matplotlib is imported inside the function, through its object-oriented API (Figure + the Agg canvas), so no display
or GUI toolkit is needed and pyplot's global state and backend are left alone. Without matplotlib, write_curve_png
raises PlotUnavailable, which names what to install; the trainers then skip the picture with a warning (the weights
and history.json, which holds every plotted number, are written regardless).
"""
from __future__ import annotations

import math

MATPLOTLIB = "matplotlib==3.11.2"  # the version pyproject.toml pins in the plot and dev extras


class PlotUnavailable(ImportError):
  """matplotlib is not installed."""


def _tick_label(v: float, _pos=None) -> str:
  return f"{v / 1e6:g}M" if abs(v) >= 1e6 else f"{v / 1e3:g}k" if abs(v) >= 1e4 else f"{v:g}"


def write_curve_png(path: str, xs, ys, *, title: str = "", xlabel: str = "env steps",
                    ylabel: str = "mean episode length", target: float | None = None, size=(720, 440)) -> None:
  """Line plot of ys against xs (points whose y is None or not finite are skipped), with grid, labels and an
  optional dashed target line, written to `path` as a size[0] x size[1] pixel PNG. Raises PlotUnavailable without
  matplotlib."""
  try:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter
  except ImportError as e:
    raise PlotUnavailable(f"the learning curve needs matplotlib: pip install 'tinyxpbd[plot]' (or {MATPLOTLIB})") from e
  pts = [(float(x), float(y)) for x, y in zip(xs, ys) if y is not None and math.isfinite(float(y))]
  dpi = 100
  fig = Figure(figsize=(size[0] / dpi, size[1] / dpi), dpi=dpi, layout="constrained")
  FigureCanvasAgg(fig)
  ax = fig.add_subplot()
  if pts: ax.plot(*zip(*pts), color="tab:blue", marker="o", markersize=3, linewidth=1.8, label=ylabel)
  if target is not None: ax.axhline(target, color="tab:red", linestyle="--", linewidth=1.2, label=f"target {target:g}")
  ax.xaxis.set_major_formatter(FuncFormatter(_tick_label))
  ax.set_xlim(left=0)
  ax.margins(y=0.08)  # room above a target line that the curve approaches from below
  ax.grid(True, color="0.9")
  ax.set(title=title, xlabel=xlabel, ylabel=ylabel)
  if target is not None: ax.legend(loc="best", frameon=False)
  fig.savefig(path, format="png", dpi=dpi)
