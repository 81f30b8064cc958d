"""The GPU machine's scripts and path lists, checked here on the CPU: the
GPU run (make test-gpu) cannot be debugged there, so what it runs must at
least parse, import, list every kernel path, and run its Python code (the
forced kernel choices have no effect on the CPU)."""

from __future__ import annotations

import importlib.util
import os
import py_compile
import subprocess
import sys

import pytest
import torch

import cuda_paths as cp

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def load(rel):
    spec = importlib.util.spec_from_file_location(os.path.basename(rel)[:-3], os.path.join(ROOT, rel))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("script", ["scripts/gpu_run.sh", "scripts/gpu_bundle.sh"])
def test_shell_scripts_parse(script):
    r = subprocess.run(["bash", "-n", os.path.join(ROOT, script)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_make_test_gpu_runs_the_gpu_script():
    r = subprocess.run(["make", "-n", "-C", ROOT, "test-gpu"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "scripts/gpu_run.sh test-gpu" in r.stdout


def test_gpu_python_files_compile():
    for rel in ["tests/gpu/sanitize_workload.py", "tests/gpu/ddp_train.py"]:
        py_compile.compile(os.path.join(ROOT, rel), doraise=True)


def test_paths_cover_every_kernel_family():
    rows = cp.row_paths()
    assert {b for b, _, _ in rows} == set(cp.ROW_BUILDS) >= {"r1", "r2", "r2:32:8", "general"}
    assert {d for _, d, _ in rows} == set(cp.ROW_DTYPES)
    for build in cp.ROW_BUILDS:
        widths = {s[-1] for b, _, s in rows if b == build}
        assert any(w % 8 == 0 for w in widths) and any(w % 2 for w in widths), f"{build}: vector and scalar rows"
    variants = {v for _, v in cp.matmul_paths()}
    for family in ["wg256", "wg128", "wg64", "wgr"]:
        assert any(v.startswith(family) for v in variants), f"no forced variant of {family}"
    assert any(v.startswith("wg") and "/" in v for v in variants), "no Hopper split-K variant"
    assert any(not v.startswith("wg") and "/" in v for v in variants), "no mma.sync/CUDA-core split-K variant"
    assert {k for k, _ in cp.matmul_paths()} >= {"f16", "bf16", "tf32", "f32"}
    labels = {p[0] for p in cp.products()}
    assert any(p[5] for p in cp.products()) and any(p[1][1] % 8 for p in cp.products()), "unaligned operands"
    assert any(32 < p[1][0] <= 64 and p[1][2] >= 16 * 64 for p in cp.products()), "a product on the skinny kernel's 8 m blocks"
    assert labels


def test_sanitize_workload_dry_run_on_cpu():
    wl = load("tests/gpu/sanitize_workload.py")
    for light in (False, True):
        rows, matmuls, prods = wl.workload_paths(light)
        assert rows and matmuls and prods
    assert wl.run(light=True, device="cpu") > 100


def test_path_checks_dry_run_on_cpu():
    """test_cuda_paths' checks, opcheck and gradients included, on the CPU."""
    cp.check_row_path("r1", torch.bfloat16, (13, 1000), device="cpu")
    cp.check_row_path("general", torch.float32, (13, 1001), device="cpu")
    cp.gradcheck_row_build("r2", device="cpu")
    cp.check_matmul_path("f32", "auto", device="cpu")


def _pytest(args, **env):
    e = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
                          cwd=ROOT, env=e, capture_output=True, text=True, timeout=600)


@pytest.mark.skipif(torch.cuda.is_available(), reason="shows what happens without a GPU")
def test_require_cuda_turns_skips_into_failures():
    """Without a GPU the CUDA variants skip; under MYNS_REQUIRE_CUDA=1 they
    fail, and tests needing two GPUs fail only under MYNS_REQUIRE_GPUS=2."""
    sel = ["tests/python/test_cuda.py", "tests/python/test_multi_gpu.py", "-k", "large_1d_add or ops_on_cuda1"]
    plain = _pytest(sel, MYNS_REQUIRE_CUDA="0", MYNS_REQUIRE_GPUS="0")
    assert plain.returncode == 0 and "skipped" in plain.stdout, plain.stdout[-2000:]
    strict = _pytest(sel, MYNS_REQUIRE_CUDA="1", MYNS_REQUIRE_GPUS="0")
    assert strict.returncode != 0 and "3 errors" in strict.stdout and "2 skipped" in strict.stdout, strict.stdout[-2000:]
    assert "CUDA test skipped under MYNS_REQUIRE_CUDA=1" in strict.stdout
    two = _pytest(sel, MYNS_REQUIRE_CUDA="0", MYNS_REQUIRE_GPUS="2")
    assert two.returncode != 0 and "2 errors" in two.stdout, two.stdout[-2000:]
