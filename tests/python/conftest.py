import pytest
import torch

import myns  # noqa: F401  (loads the library: torch.ops.myns.*)

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])

# ||out - ref|| / ||ref|| bounds against a float64 reference.
REL_TOL = {torch.float64: 1e-12, torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 1e-2}


def rel_err(out: torch.Tensor, ref: torch.Tensor) -> float:
    ref = ref.double()
    denom = ref.norm().item()
    diff = (out.double() - ref).norm().item()
    return diff / denom if denom > 0 else diff


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


@pytest.fixture(params=DTYPES, ids=lambda d: str(d).removeprefix("torch."))
def dtype(request):
    return request.param


@pytest.fixture
def kernel_override():
    """`kernel_override("MYNS_ROW_KERNEL", "r1")` forces a kernel choice for
    one test (the library reads the environment once); restored afterwards
    to what the environment says."""
    import os

    names = set()

    def force(name, value):
        myns.set_override(name, value)
        names.add(name)

    yield force
    for name in names:
        myns.set_override(name, os.environ.get(name))


requires_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def pytest_terminal_summary(terminalreporter):
    """Prints how the bad-input matrix ended (cases tried per outcome)."""
    import sys

    mod = sys.modules.get("test_bad_inputs")
    if mod is None or not mod.OUTCOMES:
        return
    total = sum(mod.OUTCOMES.values())
    parts = ", ".join(f"{dev} {outcome}: {n}" for (dev, outcome), n in sorted(mod.OUTCOMES.items()))
    terminalreporter.write_line(f"bad-input matrix: {total} cases tried ({parts})")
