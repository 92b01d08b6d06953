# tinyxpbd: `make demo` / `make test` set everything up on a fresh Debian 12 machine (system packages as root,
# .venv with the pinned dependencies) and run. Re-running is fast: setup is a stamp file that depends on pyproject.toml.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.stamp
PYTEST_ARGS ?=

# tinygrad's WEBGPU backend loads Dawn from $WEBGPU_PATH; point it at the library dawn-python ships (unless already set).
# Recursively expanded, so it is only computed when a recipe that uses it runs (after the venv exists).
DAWN_LIB = $(or $(WEBGPU_PATH),$(shell $(PY) -c 'import importlib.util as u, os, platform; s = u.find_spec("pydawn"); \
  print(os.path.join(list(s.submodule_search_locations)[0], "lib", f"libwebgpu_dawn_{platform.machine()}.so"))'))
RUN = WEBGPU_PATH=$(DAWN_LIB) $(PY)

.PHONY: help setup test test-slow wheel-smoke gpu-prepare golden golden-update demo bench lint clean

help:
	@echo "make demo    set up, then render the demo scenes to out/ and print env-steps/s"
	@echo "make test    set up, then run the test suite (PYTEST_ARGS='...' to pass options)"
	@echo "make test-slow  the long checks (the heavier contact scenes' gradient parity, ...)"
	@echo "make wheel-smoke  build the wheel, install it in a fresh venv and run it from outside the checkout"
	@echo "make gpu-prepare  what bench/gpu.sh run needs on a lent GPU machine (.whl/, .gl/)"
	@echo "make golden  recompute the float64 references in tests/golden/ (after a change to the physics)"
	@echo "make golden-update  recompute only the stale or missing ones"
	@echo "make bench   run the benchmarks"
	@echo "make lint    ruff check"
	@echo "make setup   system packages (clang, lavapipe, Vulkan loader) + $(VENV) with '.[dev]' installed"
	@echo "make clean   remove $(VENV), out/ and caches"

setup: $(STAMP)

$(STAMP): pyproject.toml .ci/sysdeps
	@bash .ci/sysdeps $(PYTHON)
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { \
	  echo "error: tinyxpbd needs Python >= 3.11; '$(PYTHON)' is $$($(PYTHON) -V 2>&1)." \
	       "Run e.g. 'make PYTHON=python3.11 setup'." >&2; exit 1; }
	@test -x $(PY) || { echo "creating $(VENV)"; $(PYTHON) -m venv $(VENV); }
	@echo "installing tinyxpbd[dev] into $(VENV)"
	@PIP_DISABLE_PIP_VERSION_CHECK=1 $(PY) -m pip install -q --upgrade pip
	@PIP_DISABLE_PIP_VERSION_CHECK=1 $(PY) -m pip install -q -e '.[dev]'
	@touch $(STAMP)

# two workers, one per core (CI's machine has 2): tinygrad's scheduling is single-threaded Python, so groups that
# compile different scenes overlap well; --dist loadgroup keeps each xdist_group (a scene's tests, which share its
# compiles, or else a file with its module-scoped fixtures) on one worker (conftest.py). PARALLEL=0: each worker
# compiles its kernels itself (tinygrad would give each a pool of cores/workers = 1 process, a pickling round trip
# per kernel for no parallelism: drop x1's cold first call 9.5 s -> 8.8 s)
# GALLIVM_PERF=nopt: lavapipe compiles the WGSL programs without LLVM's optimisation passes. The suite's lavapipe time
# is compiling (each scene's forward and backward programs, cold on a clean machine), not running them: the chain's
# 1,000-step gradient test took 300 s with them and 181 s without, cold shader cache (2026-11-25). The benchmarks
# (make bench) keep the optimised programs. LP_NATIVE_VECTOR_WIDTH=128: llvmpipe lays a program out 4 invocations
# wide instead of 8 (AVX2), about half the code to compile per program: stack10's backward program 86 -> 38 s, the
# chain's 51 -> 34 s, cold (MESA_SHADER_CACHE_DISABLE=true, 2026-11-27). Each invocation's arithmetic is unchanged.
# TINYXPBD_PRIVATE_TAPE=2048: a backward program keeps a tape longer than 2,048 floats in a storage buffer rather than
# in private memory (kernels/tape.py), which lavapipe compiles faster (chain's backward 85 -> 57 s) and runs a little
# slower; the gradients are the same.
TESTENV = PARALLEL=0 GALLIVM_PERF=nopt LP_NATIVE_VECTOR_WIDTH=128 TINYXPBD_PRIVATE_TAPE=2048
TEST = $(TESTENV) $(RUN) -m pytest -q -n 2 --dist loadgroup -m "not slow"
test: $(STAMP)
	$(TEST) $(PYTEST_ARGS)

# the long checks (the heavier contact scenes' gradient parity, the oracle's long horizons): 95 min on this 2-core VM
# with PYTEST_ARGS='-n 2 --dist loadgroup' (up to 13 GB a worker), its tests' times adding up to 2.9 h (2026-11-30)
test-slow: $(STAMP)
	$(TESTENV) $(RUN) -m pytest -q -m slow $(PYTEST_ARGS)

# the non-editable install (pip install . / the wheel) in a fresh venv, run from a temporary folder: ~1 min
wheel-smoke: $(STAMP)
	bash .ci/wheel_smoke $(PY)

# what a session lent a GPU (the device tool) carries there for bench/gpu.sh run: wheels into .whl/, the Vulkan loader
# and the oracle's parity references into .gl/ (~25 MB, ~2 min)
gpu-prepare: $(STAMP)
	bash bench/gpu.sh prepare $(PY)

# rewrite the golden files (tests/golden.py): the suite, computing every reference live. Without PYTEST_ARGS the old
# files go first, so none is left that no test reads (a reference whose inputs changed gets a new name)
golden: $(STAMP)
	@if [ -z "$(PYTEST_ARGS)" ]; then rm -f tests/golden/*.npz; fi
	TINYXPBD_GOLDEN=write $(TEST) $(PYTEST_ARGS)

# recompute only the missing or stale golden files (the gradient parity references take ~40 min from scratch)
golden-update: $(STAMP)
	TINYXPBD_GOLDEN=update $(TEST) $(PYTEST_ARGS)

demo: $(STAMP)
	$(RUN) -m engine demo

bench: $(STAMP)
	$(RUN) -m engine bench

lint: $(STAMP)
	$(VENV)/bin/ruff check .

clean:
	rm -rf $(VENV) out build *.egg-info .pytest_cache .ruff_cache .hypothesis
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
