"""Oracle-backend benchmark: `python bench/bench_oracle.py [--quick] [--scenes ...] [--batch ...] [--steps N]`.

Runs the default set (pendulum x1, x256, x4096 and chain x64), prints a markdown table and writes bench/results.json.
The measurement lives in engine/cli_bench.py so that `python -m engine bench` (and the installed `tinyxpbd`
script) runs the same code; see bench/README.md for what is measured.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # run as a script from anywhere

from engine.cli_bench import bench, joint_errors, main, table  # noqa: E402,F401

if __name__ == "__main__":
  sys.exit(main())
