# myns: `make demo` and `make test` work on a fresh machine (set-up included).
SHELL := /bin/bash
VENV := $(CURDIR)/.venv
PY := $(VENV)/bin/python
export VIRTUAL_ENV := $(VENV)
export PATH := $(VENV)/bin:$(PATH)
export LIBTORCH_USE_PYTORCH := 1
TORCH_LIB = $(shell $(PY) -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))')
CARGO_FLAGS := --release

.PHONY: setup build install test test-rust test-python test-gpu demo bench gpu-bundle clean

setup:
	@bash scripts/setup.sh

build: setup
	cargo build $(CARGO_FLAGS) --all-targets

# The Python package, with libmyns built into python_loader/myns (editable).
install: build
	$(PY) -m pip install -q --no-build-isolation --no-deps -e .

test: install test-rust test-python

# Doc tests get no rpath from build.rs, hence LD_LIBRARY_PATH. The training
# example and the downstream crate run without it: they must find libtorch
# themselves. The docs and clippy must pass without a warning.
test-rust: build
	LD_LIBRARY_PATH=$(TORCH_LIB) cargo test $(CARGO_FLAGS)
	env -u LD_LIBRARY_PATH cargo run $(CARGO_FLAGS) --example train
	env -u LD_LIBRARY_PATH cargo run $(CARGO_FLAGS) -p myns-downstream
	RUSTDOCFLAGS="-D warnings" cargo doc $(CARGO_FLAGS) --no-deps
	cargo clippy $(CARGO_FLAGS) --all-targets -- -D warnings

test-python: install
	$(PY) -m pytest -q tests/python

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

# Everything the GPU machine needs to run the tests, with nothing to build there.
gpu-bundle: install
	bash scripts/gpu_bundle.sh

clean:
	cargo clean
	rm -rf python_loader/myns/*.so .gpu
