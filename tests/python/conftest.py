"""Shared fixtures, and the switches that turn CUDA skips into failures.

Every test parametrized over devices gets a ``cuda`` variant even on a
machine without a GPU; there it is skipped with a reason. Such items (and
every item of the CUDA-only modules, or marked ``cuda``) are CUDA tests.
With ``MYNS_REQUIRE_CUDA=1`` in the environment (``make test-gpu`` sets it)
a CUDA test that is skipped FAILS instead: on the GPU machine a test that
cannot run is an error, not a quiet pass. Tests needing two GPUs are marked
``multi_gpu``: they fail under ``MYNS_REQUIRE_GPUS=2`` (or more) when fewer
GPUs exist, and are skipped with a clear reason otherwise.
"""

import os

import pytest
import torch

import myns  # noqa: F401  (loads the library: torch.ops.myns.*)

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
# Both devices always: the cuda variants skip (or fail, see above) without a GPU.
DEVICES = ["cpu", "cuda"]
HAVE_CUDA = torch.cuda.is_available()
NO_CUDA = "needs a CUDA device (none visible to torch)"

REQUIRE_CUDA = os.environ.get("MYNS_REQUIRE_CUDA", "") not in ("", "0")
REQUIRE_GPUS = int(os.environ.get("MYNS_REQUIRE_GPUS", "0") or 0)

# Modules whose every test is a CUDA test.
CUDA_MODULES = {"test_cuda.py", "test_cuda_graphs.py", "test_cuda_paths.py", "test_matmul_kernels.py"}

# ||out - ref|| / ||ref|| bounds against a float64 reference. Kept for the
# matmul kernel tests (test_matmul_kernels.py, test_bmm.py); the other tests
# check every element against tests/python/bounds.py instead.
REL_TOL = {torch.float64: 1e-12, torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1e-2}


def rel_err(out: torch.Tensor, ref: torch.Tensor) -> float:
    ref = ref.double()
    denom = ref.norm().item()
    diff = (out.double() - ref).norm().item()
    return diff / denom if denom > 0 else diff


def skip_without_cuda():
    if not HAVE_CUDA:
        pytest.skip(NO_CUDA)


@pytest.fixture(params=DEVICES)
def device(request):
    if request.param == "cuda":
        skip_without_cuda()
    return request.param


@pytest.fixture(params=DTYPES, ids=lambda d: str(d).removeprefix("torch."))
def dtype(request):
    return request.param


@pytest.fixture
def kernel_override():
    """`kernel_override("MYNS_ROW_KERNEL", "r1")` forces a kernel choice for
    one test (the library reads the environment once); restored afterwards
    to what the environment says."""
    names = set()

    def force(name, value):
        myns.set_override(name, value)
        names.add(name)

    yield force
    for name in names:
        myns.set_override(name, os.environ.get(name))


# A marker, not a skipif: the skip happens in setup (pytest_runtest_setup),
# where the switch can see it.
requires_cuda = pytest.mark.cuda


def requires_gpus(n):
    return pytest.mark.multi_gpu(n)


def pytest_configure(config):
    config.addinivalue_line("markers", "cuda: needs a CUDA device; a skip fails under MYNS_REQUIRE_CUDA=1")
    config.addinivalue_line("markers", "multi_gpu(n): needs n CUDA devices; a skip fails under MYNS_REQUIRE_GPUS>=n")


def _param_on_cuda(item) -> bool:
    spec = getattr(item, "callspec", None)
    if spec is None:
        return False
    return any(isinstance(v, str) and v.startswith("cuda") for v in spec.params.values())


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.get_closest_marker("multi_gpu"):
            continue
        if item.path.name in CUDA_MODULES or _param_on_cuda(item):
            item.add_marker(pytest.mark.cuda)


def pytest_runtest_setup(item):
    mg = item.get_closest_marker("multi_gpu")
    if mg is not None:
        need = mg.args[0] if mg.args else 2
        have = torch.cuda.device_count()
        if have < need:
            pytest.skip(f"needs {need} CUDA devices, {have} visible")
    elif item.get_closest_marker("cuda") is not None:
        skip_without_cuda()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if not rep.skipped or hasattr(rep, "wasxfail"):
        return
    mg = item.get_closest_marker("multi_gpu")
    if mg is not None:
        need = mg.args[0] if mg.args else 2
        switch = f"MYNS_REQUIRE_GPUS={REQUIRE_GPUS}" if REQUIRE_GPUS >= need else None
    else:
        switch = "MYNS_REQUIRE_CUDA=1" if REQUIRE_CUDA and item.get_closest_marker("cuda") is not None else None
    if switch is None:
        return
    reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
    rep.outcome = "failed"
    rep.longrepr = f"CUDA test skipped under {switch}, which makes that a failure: {reason}"


def pytest_terminal_summary(terminalreporter):
    """Prints how the bad-input matrix ended (cases tried per outcome), and
    which switches made CUDA skips failures."""
    import sys

    if REQUIRE_CUDA or REQUIRE_GPUS:
        terminalreporter.write_line(
            f"MYNS_REQUIRE_CUDA={int(REQUIRE_CUDA)} MYNS_REQUIRE_GPUS={REQUIRE_GPUS}: skipped CUDA tests count as failures "
            f"({torch.cuda.device_count()} CUDA devices visible)"
        )
    mod = sys.modules.get("test_bad_inputs")
    if mod is None or not mod.OUTCOMES:
        return
    total = sum(mod.OUTCOMES.values())
    parts = ", ".join(f"{dev} {outcome}: {n}" for (dev, outcome), n in sorted(mod.OUTCOMES.items()))
    terminalreporter.write_line(f"bad-input matrix: {total} cases tried ({parts})")
