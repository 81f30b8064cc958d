# myns: `make demo` and `make test` work on a fresh machine (set-up included).
SHELL := /bin/bash

# Supported torch releases, newest first; the first is the default. Adding a
# release is a word here, plus a block in csrc/compat/tch_compat.h if
# torch-sys 0.26 does not compile against it. `make test TORCH=2.11.0` builds
# and tests against another (its own venv and target dir).
TORCH_VERSIONS := 2.15.0 2.14.1 2.13.0 2.12.1 2.11.0
DEFAULT_TORCH := $(firstword $(TORCH_VERSIONS))
# The GPU machine has torch 2.11.0 only: `make gpu-bundle` builds for it.
GPU_TORCH := 2.11.0
TORCH ?= $(DEFAULT_TORCH)
ifeq ($(TORCH),$(DEFAULT_TORCH))
VENV := $(CURDIR)/.venv
TARGET_DIR ?= $(CURDIR)/target
else
VENV := $(CURDIR)/.venv-torch$(TORCH)
TARGET_DIR ?= $(CURDIR)/target/torch$(TORCH)
endif
export CARGO_TARGET_DIR := $(TARGET_DIR)
PY := $(VENV)/bin/python
export VIRTUAL_ENV := $(VENV)
export PATH := $(VENV)/bin:$(PATH)
export LIBTORCH_USE_PYTORCH := 1
# torch-sys 0.26 is made for libtorch 2.13 (csrc/compat/tch_compat.h covers
# the others); it watches this variable, so a change of torch rebuilds it.
export LIBTORCH_BYPASS_VERSION_CHECK := torch-$(TORCH)
TORCH_LIB = $(shell $(PY) -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
CARGO_FLAGS := --release

.PHONY: setup build install test test-rust test-python test-kernels test-gpu test-all-torch demo bench wheel wheel-test gpu-bundle clean

setup:
	@bash scripts/setup.sh $(TORCH) $(VENV)

build: setup
	cargo build $(CARGO_FLAGS) --all-targets

# The Python package, with libmyns built into python_loader/myns (editable).
install: build
	$(PY) -m pip install -q --no-build-isolation --no-deps -e .

test: install test-rust test-python test-kernels

# Doc tests get no rpath from build.rs, hence LD_LIBRARY_PATH. The training
# example and the downstream crate run without it: they must find libtorch
# themselves. The docs and clippy must pass without a warning.
test-rust: build
	LD_LIBRARY_PATH=$(TORCH_LIB) cargo test $(CARGO_FLAGS)
	env -u LD_LIBRARY_PATH cargo run $(CARGO_FLAGS) --example train
	env -u LD_LIBRARY_PATH cargo run $(CARGO_FLAGS) -p myns-downstream
ifeq ($(TORCH),$(DEFAULT_TORCH))
	RUSTDOCFLAGS="-D warnings" cargo doc $(CARGO_FLAGS) --no-deps
	cargo clippy $(CARGO_FLAGS) --all-targets -- -D warnings
endif

# Every supported torch in turn (each: its venv, a build, every test).
test-all-torch:
	for v in $(TORCH_VERSIONS); do $(MAKE) test TORCH=$$v || exit 1; done

test-python: install
	$(PY) -m pytest -q tests/python

# The matmul kernels' CUDA sources compiled with g++ and run under the CPU
# emulation of their PTX (tests/matmul_emulation/run.sh: about a minute on
# two cores); it needs no torch, so it runs once, with the default torch.
test-kernels: setup
ifeq ($(TORCH),$(DEFAULT_TORCH))
	bash tests/matmul_emulation/run.sh small
endif

# On the GPU machine (torch, no Rust, the library prebuilt in .gpu/ by
# `make gpu-bundle`): every CUDA test with MYNS_REQUIRE_CUDA=1, so a CUDA
# test that cannot run fails instead of skipping; the Rust test binaries;
# compute-sanitizer memcheck/racecheck/initcheck/synccheck over
# tests/gpu/sanitize_workload.py. Logs to $$OUT. Builds nothing, so it needs
# neither cargo nor .venv (plain `bash scripts/gpu_run.sh test-gpu` where
# there is no make).
test-gpu:
	bash scripts/gpu_run.sh test-gpu

demo: install
	$(PY) examples/demo.py

# Every bench/bench_*.py, on CUDA when present; report in bench/results/.
# e.g. make bench BENCH_ARGS="--device cpu --quick" (a smoke run).
bench: install
	$(PY) bench/run.py $(BENCH_ARGS)

# A manylinux wheel for this TORCH, named with its torch and CUDA versions
# (e.g. myns-0.1.0+torch2.15cu132-py3-none-manylinux_2_34_x86_64.whl), in dist/.
wheel: setup
	bash scripts/wheel.sh $(PY)

# The wheel installed into a fresh virtualenv with the same torch, and an op run.
wheel-test: wheel
	bash scripts/wheel.sh $(PY) --test $(TORCH)

# Everything the GPU machine (torch $(GPU_TORCH), no Rust, no network) needs to
# run the tests, built here against that torch, with nothing to build there.
gpu-bundle:
ifeq ($(TORCH),$(GPU_TORCH))
	$(MAKE) install wheel TORCH=$(TORCH)
	PY=$(PY) bash scripts/gpu_bundle.sh
else
	$(MAKE) gpu-bundle TORCH=$(GPU_TORCH)
endif

clean:
	cargo clean
	rm -rf python_loader/myns/*.so .gpu dist
