#!/usr/bin/env bash
# Idempotent set-up: a .venv at the repo root with the pinned torch and nvcc,
# plus a check for the Rust toolchain and a C++ compiler. Quick when done.
set -euo pipefail
cd "$(dirname "$0")/.."

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

STAMP=.venv/.myns-setup-$(sha256sum requirements-dev.txt | cut -c1-16)
if [ ! -f "$STAMP" ]; then
  [ -x .venv/bin/python ] || "$PY" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -r requirements-dev.txt
  rm -f .venv/.myns-setup-*
  touch "$STAMP"
fi
echo "setup: ok ($(.venv/bin/python -c 'import torch; print("torch", torch.__version__)'), $(cargo --version))"
