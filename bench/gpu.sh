#!/usr/bin/env bash
# Issue 17's GPU measurements in one call of the `device` tool (an NVIDIA GPU through Vulkan and Dawn, no network, no
# compiler for the oracle there), so that a session with a device spends its minutes measuring, not setting up:
#
#   make gpu-prepare         # here: the wheels into .whl/, the Vulkan loader and the oracle's references into .gl/
#   bash bench/gpu.sh run    # there, as the device command, with carry [".whl", ".gl"]: everything under $OUT
#
# run, in order of what the issue needs most, each part under its own timeout so that one slow compile leaves the
# rest (at most 10 minutes in all; one device command may take 10: give run timeout_s 600):
#   0. which programs the driver accepts (bench/gpu_probe.py, the backward's private-memory variants where one is
#      refused) -> $OUT/probe.log
#   1. the kernels' parity on this GPU (bench/gpu_parity.py: one forward step of stack10 and pile against the
#      float32/float64 oracle, and the backward kernel's gradients against tests/test_parity_grad.py's golden
#      references) -> $OUT/parity.log
#   2. gradient beside forward throughput for the issue's pendulum x4096, chain x64, stack10 x64
#      (bench/bench_grad.py --quick: the 3x target) -> $OUT/results_grad_gpu.json
#   3. the same at GPU-sized batches -> $OUT/results_grad_gpu_large.json
#   4. the forward kernel's throughput at the GPU batches (bench/bench_wgsl.py --gpu) -> $OUT/results_wgsl_gpu.json
#   5. only where LANES_ITEMS names scene:batch items (e.g. "chain:64 chain:4096 double_pendulum:4096"): the backward
#      alone on 32 lanes per env against one (bench_grad.py --lanes 32), for kernels/lanes.py default_lanes, which
#      gives a scene without contacts one lane (chain x64 on an H200: 21.2 -> 13.5 ms) -> $OUT/results_grad_lanes_gpu.json;
#      its 120 s timeout needs another part's time within the call's 600 s (LARGE_ITEMS=none WGSL_ITEMS=none)
# GRAD_ITEMS, LARGE_ITEMS, WGSL_ITEMS, LANES_ITEMS (scene:batch lists; "none" skips parts 3 and 4), STEPS, PROBE_SCENES, PROBE_S
# (its timeout; 0 skips it), PARTS=probe (part 0 alone) and PARITY_ARGS (e.g. "grads chain": those scenes' gradients
# alone) override the defaults. A dry run here, on lavapipe, with no clang on the PATH (as there): OUT=/tmp/o
# GRAD_ITEMS="pendulum:64 chain:4" LARGE_ITEMS="drop:8" WGSL_ITEMS="pendulum:64" STEPS=5 bash bench/gpu.sh run
# (2026-11-29: every part ran, ~2 min). First run on an H200 on 2026-11-30: bench/README.md "On a GPU".
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
  # the Vulkan loader and GLVND's libraries (the device tool's README): the NVIDIA ICD, libGLX_nvidia, answers no
  # vkCreateInstance without GLVND's dispatch and EGL libraries beside it, even where the machine has a Vulkan loader
  local lists
  lists=$(mktemp -d)
  mkdir -p "$lists/partial"
  local o="-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=$lists"
  apt-get $o update -qq && (cd .gl && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 2>/dev/null)
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
  # the loader and GLVND where the machine has no loader, or has NVIDIA's driver (whose ICD needs GLVND beside it)
  if [ -d /usr/local/nvidia ] || ! ldconfig -p | grep -q libvulkan.so.1; then
    for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
  fi
  local icd=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json egl=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
  [ -f "$icd" ] && export VK_DRIVER_FILES=$icd
  [ -f "$egl" ] && export __EGL_VENDOR_LIBRARY_FILENAMES=$egl
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$OUT/gpu.txt" 2>&1
  cat "$OUT/gpu.txt"
  local steps=${STEPS:-20}
  # which programs the driver accepts, and with what moved out of private memory (bench/gpu_probe.py)
  [ "${PROBE_S:-120}" = 0 ] || timeout "${PROBE_S:-120}" python3 bench/gpu_probe.py ${PROBE_SCENES:-} > "$OUT/probe.log" 2>&1
  echo "probe: exit $? (the scenes whose backward the driver refused with the defaults)"
  grep -v "^Warning\|^    at \|^ - While\|^$" "$OUT/probe.log" | cut -c1-150
  [ "${PARTS:-all}" = probe ] && return 0
  timeout 150 python3 bench/gpu_parity.py ${PARITY_ARGS:-} > "$OUT/parity.log" 2>&1
  local rc=$?
  echo "parity: exit $rc (0 passed, 124 timed out, else the failed gradient cases)"
  # no adapter: the rest would only fail the same way; stop and spend no more of the device's time
  grep -q WebGPUUnavailable "$OUT/parity.log" && { head -5 "$OUT/parity.log"; return 1; }
  grep -E "^(adapter|PASS|FAIL|ERROR|gradient parity)|: \|wgsl-oracle\|" "$OUT/parity.log" | cut -c1-160
  timeout 190 python3 bench/bench_grad.py --quick --steps "$steps" --out "$OUT/results_grad_gpu.json" \
    --only ${GRAD_ITEMS:-pendulum:4096 chain:64 stack10:64} > "$OUT/grad.log" 2>&1
  echo "bench_grad: exit $?"
  [ "${LARGE_ITEMS:-}" = none ] || timeout 110 python3 bench/bench_grad.py --quick --steps "$steps" --out "$OUT/results_grad_gpu_large.json" \
    --only ${LARGE_ITEMS:-pendulum:65536 chain:4096 stack10:1024} > "$OUT/grad_large.log" 2>&1
  echo "bench_grad (large batches): exit $?"
  [ "${WGSL_ITEMS:-}" = none ] || timeout 70 python3 bench/bench_wgsl.py --gpu --configs wgsl-WEBGPU --out "$OUT/results_wgsl_gpu.json" \
    ${WGSL_ITEMS:+--only $WGSL_ITEMS} > "$OUT/wgsl.log" 2>&1
  echo "bench_wgsl: exit $?"
  if [ -n "${LANES_ITEMS:-}" ]; then
    timeout 120 python3 bench/bench_grad.py --lanes 32 --steps "$steps" --out "$OUT/results_grad_lanes_gpu.json" \
      --only $LANES_ITEMS > "$OUT/grad_lanes.log" 2>&1
    echo "bench_grad --lanes 32: exit $?"
  fi
  for f in "$OUT"/results_*.json; do
    [ -f "$f" ] && python3 -c 'import json, sys
for r in json.load(open(sys.argv[1])).get("results", []):
  print({k: r[k] for k in r if k in ("scene", "batch", "config", "env_steps_per_s", "forward_env_steps_s",
         "gradient_env_steps_s", "ratio", "kernel_ratio", "check_passed", "check_ok", "error", "lanes_1", "lanes_32",
         "rel")})' "$f"
  done
}

case "${1:-}" in
  prepare) prepare ;;
  run) run ;;
  *) echo "usage: bash bench/gpu.sh prepare [python] | run" >&2; exit 2 ;;
esac
