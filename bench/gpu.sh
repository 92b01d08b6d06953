#!/usr/bin/env bash
# Issue 17's GPU measurements in one call of the `device` tool (an NVIDIA GPU through Vulkan and Dawn, no network, no
# compiler for the oracle there), so that a session with a device spends its minutes measuring, not setting up:
#
#   make gpu-prepare         # here: the wheels into .whl/, the Vulkan loader and the oracle's references into .gl/
#   bash bench/gpu.sh run    # there, as the device command, with carry [".whl", ".gl"]: everything under $OUT
#
# run, in order of what the issue needs most, each part under its own timeout so that one slow compile leaves the
# rest (at most 9 minutes in all; one device command may take 10: give run timeout_s 600):
#   1. the kernels' parity on this GPU (bench/gpu_parity.py: one forward step of stack10 and pile against the
#      float32/float64 oracle, and the backward kernel's gradients against tests/test_parity_grad.py's golden
#      references) -> $OUT/parity.log
#   2. gradient beside forward throughput for the issue's pendulum x4096, chain x64, stack10 x64
#      (bench/bench_grad.py --quick: the 3x target) -> $OUT/results_grad_gpu.json
#   3. the same at GPU-sized batches -> $OUT/results_grad_gpu_large.json
#   4. the forward kernel's throughput at the GPU batches (bench/bench_wgsl.py --gpu) -> $OUT/results_wgsl_gpu.json
# GRAD_ITEMS, LARGE_ITEMS, WGSL_ITEMS (scene:batch lists) and STEPS override the defaults. A dry run here, on
# lavapipe, with no clang on the PATH (as there): OUT=/tmp/o GRAD_ITEMS="pendulum:64 chain:4" LARGE_ITEMS="drop:8"
# WGSL_ITEMS="pendulum:64" STEPS=5 bash bench/gpu.sh run (2026-11-29: every part ran, ~2 min).
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${2:-.venv/bin/python}

prepare() {
  set -e
  # the pinned versions of the runtime's pure-Python wheels (pyproject.toml); numpy and pillow are on the machine
  local pins
  pins=$("$PY" -c 'import tomllib; d = tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]
print(" ".join(p for p in d if p.split("==")[0] in ("tinygrad", "dawn-python", "imageio")))')
  rm -rf .whl && mkdir -p .whl .gl
  "$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl $pins
  # the Vulkan loader, unpacked there only where the machine has none (the device tool's README)
  local lists
  lists=$(mktemp -d)
  mkdir -p "$lists/partial"
  local o="-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=$lists"
  apt-get $o update -qq && (cd .gl && apt-get $o download libvulkan1 2>/dev/null)
  rm -rf "$lists"
  "$PY" bench/gpu_parity.py dump
  du -sh .whl .gl
}

run() {
  OUT=${OUT:-/tmp/gpu_out}
  mkdir -p "$OUT"
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    || { echo "error: installing the carried wheels failed (carry .whl: make gpu-prepare)"; return 1; }
  export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 DEV=WEBGPU
  if ! ldconfig -p | grep -q libvulkan.so.1; then for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig; fi
  local icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  [ -f "$icd" ] && export VK_DRIVER_FILES=$icd
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$OUT/gpu.txt" 2>&1
  cat "$OUT/gpu.txt"
  local steps=${STEPS:-20}
  timeout 150 python3 bench/gpu_parity.py > "$OUT/parity.log" 2>&1
  echo "parity: exit $? (0 passed, 124 timed out, else the failed gradient cases)"
  grep -E "^(adapter|PASS|FAIL|gradient parity)|: \|wgsl-oracle\|" "$OUT/parity.log" | cut -c1-160
  timeout 190 python3 bench/bench_grad.py --quick --steps "$steps" --out "$OUT/results_grad_gpu.json" \
    --only ${GRAD_ITEMS:-pendulum:4096 chain:64 stack10:64} > "$OUT/grad.log" 2>&1
  echo "bench_grad: exit $?"
  timeout 110 python3 bench/bench_grad.py --quick --steps "$steps" --out "$OUT/results_grad_gpu_large.json" \
    --only ${LARGE_ITEMS:-pendulum:65536 chain:4096 stack10:1024} > "$OUT/grad_large.log" 2>&1
  echo "bench_grad (large batches): exit $?"
  timeout 70 python3 bench/bench_wgsl.py --gpu --configs wgsl-WEBGPU --out "$OUT/results_wgsl_gpu.json" \
    ${WGSL_ITEMS:+--only $WGSL_ITEMS} > "$OUT/wgsl.log" 2>&1
  echo "bench_wgsl: exit $?"
  for f in "$OUT"/results_*.json; do
    [ -f "$f" ] && python3 -c 'import json, sys
for r in json.load(open(sys.argv[1])).get("results", []):
  print({k: r[k] for k in r if k in ("scene", "batch", "config", "env_steps_per_s", "forward_env_steps_s",
         "gradient_env_steps_s", "ratio", "kernel_ratio", "check_passed", "check_ok", "error")})' "$f"
  done
}

case "${1:-}" in
  prepare) prepare ;;
  run) run ;;
  *) echo "usage: bash bench/gpu.sh prepare [python] | run" >&2; exit 2 ;;
esac
