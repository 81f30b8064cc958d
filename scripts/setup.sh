#!/usr/bin/env bash
# Idempotent set-up: a virtualenv with torch==TORCH and the test tools, the
# pinned nvcc in its own prefix (.toolchain/), and checks for Rust and a C++
# compiler. Quick when done.
# Usage: scripts/setup.sh [TORCH_VERSION [VENV]]   (the Makefile passes both)
set -euo pipefail
cd "$(dirname "$0")/.."
TORCH=${1:-2.15.0}
VENV=${2:-.venv}

need() { command -v "$1" >/dev/null 2>&1; }
apt_install() {
  if need apt-get; then
    echo "setup: installing $* with apt-get"
    (apt-get update -qq || true) && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"
  else
    echo "setup: please install $* (no apt-get here)" >&2; exit 1
  fi
}

need g++ || apt_install g++
need cc || apt_install gcc
need make || apt_install make
# libclang for bindgen (tests/c_abi_header.rs reads include/myns.h with it).
has_libclang() {
  [ -n "${LIBCLANG_PATH:-}" ] && return 0
  { ldconfig -p 2>/dev/null || /sbin/ldconfig -p 2>/dev/null; } | grep -E 'libclang(-[0-9.]+)?\.so' >/dev/null
}
has_libclang || apt_install libclang-dev
if ! need cargo; then
  echo "setup: cargo not found; install Rust from https://rustup.rs (myns needs Rust 1.80+)" >&2
  exit 1
fi
PY=${PYTHON:-python3}
if ! "$PY" -c 'import venv, ensurepip' 2>/dev/null; then apt_install python3-venv; fi

# nvcc 13.0 for every torch: our kernels go through the driver API, so they
# need not match torch's CUDA (2.15 is CUDA 13.2, whose nvcc emits PTX 9.2,
# which CUDA 13.0 drivers reject). Its own prefix, not the venv: mixed with
# torch 2.15's CUDA 13.2 headers, CCCL refuses to compile.
TOOLCHAIN=.toolchain/cuda-13.0.88
TOOLS="nvidia-cuda-nvcc==13.0.88 nvidia-nvvm==13.0.88 nvidia-cuda-crt==13.0.88 nvidia-cuda-cccl==13.0.85 nvidia-cuda-runtime==13.0.96"
if [ ! -x "$TOOLCHAIN/nvidia/cu13/bin/nvcc" ] || [ "$(cat "$TOOLCHAIN/.pins" 2>/dev/null)" != "$TOOLS" ]; then
  echo "setup: nvcc 13.0.88 into $TOOLCHAIN"
  rm -rf "$TOOLCHAIN"
  "$PY" -m pip install -q --no-deps --target "$TOOLCHAIN" $TOOLS
  echo "$TOOLS" >"$TOOLCHAIN/.pins"
fi

STAMP=$VENV/.myns-setup-torch$TORCH-$(sha256sum requirements-dev.txt | cut -c1-16)
if [ ! -f "$STAMP" ]; then
  [ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q --upgrade pip
  # One resolve, so torch's own constraints (2.11 wants setuptools<82) hold.
  "$VENV/bin/python" -m pip install -q "torch==$TORCH" -r requirements-dev.txt
  rm -f "$VENV"/.myns-setup-*
  touch "$STAMP"
fi
echo "setup: ok ($VENV: $("$VENV/bin/python" -c 'import torch; print("torch", torch.__version__)'), $(cargo --version))"
