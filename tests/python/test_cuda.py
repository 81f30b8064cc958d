"""CUDA-only behaviour: streams, CUDA graphs, device placement. Skipped
without a GPU (a failure under MYNS_REQUIRE_CUDA=1). Results are checked
element by element against float64 references (tests/python/bounds.py)."""

import pytest
import torch

import myns
from bounds import assert_within, matmul_bound, path_bound
from conftest import requires_cuda
from op_cases import check_op

pytestmark = requires_cuda


def test_runs_on_current_stream():
    """Work queued on a busy side stream must be ordered before our kernel."""
    n = 1 << 20
    src = torch.randn(n, device="cuda")
    b = torch.randn(n, device="cuda")
    a = torch.zeros(n, device="cuda")
    m1, m2 = torch.randn(256, 256, device="cuda"), torch.randn(256, 256, device="cuda")
    m1_dst = torch.zeros_like(m1)
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        torch.cuda._sleep(100_000_000)  # keep s busy so a wrong stream would race ahead
        a.copy_(src)
        m1_dst.copy_(m1)
        out = myns.add(a, b)
        mm = myns.matmul(m1_dst, m2)
    torch.cuda.synchronize()
    torch.testing.assert_close(out, src + b, rtol=0, atol=0)
    ref = m1.double() @ m2.double()
    assert_within(mm, ref, matmul_bound(m1, m2, ref), torch.float32, "matmul on a busy side stream")


def test_cuda_graph_capture_and_replay():
    a = torch.randn(64, 32, device="cuda")
    b = torch.randn(32, 16, device="cuda")
    c = torch.randn(64, 16, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):  # warm up (module loading) outside the capture
        myns.add(myns.matmul(a, b), c)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = myns.add(myns.matmul(a, b), c)
    for _ in range(3):
        a.copy_(torch.randn_like(a))
        b.copy_(torch.randn_like(b))
        c.copy_(torch.randn_like(c))
        g.replay()
        torch.cuda.synchronize()
        # add(matmul(a, b), c): the product's bound plus one rounding of the sum.
        ref = a.double() @ b.double() + c.double()
        bound = matmul_bound(a, b, a.double() @ b.double()) + path_bound(ref.abs(), 1, torch.float32, 2)
        assert_within(out, ref, bound, torch.float32, "replay")


def test_output_on_input_device_and_current_device_unchanged():
    dev = torch.cuda.device_count() - 1
    before = torch.cuda.current_device()
    a = torch.randn(8, 8, device=f"cuda:{dev}")
    out = myns.matmul(a, a)
    assert out.device == a.device
    assert torch.cuda.current_device() == before
    ref = a.double() @ a.double()
    assert_within(out, ref, matmul_bound(a, a, ref), torch.float32)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32])
def test_large_1d_add(dtype):
    n = (1 << 24) + 3
    a, b = torch.randn(n, device="cuda", dtype=dtype), torch.randn(n, device="cuda", dtype=dtype)
    torch.testing.assert_close(myns.add(a, b), a + b, rtol=0, atol=0)


def test_more_than_2_31_elements():
    """Indices must not overflow: 2^31 + 5 bf16 elements (~4.3 GB each tensor)."""
    n = (1 << 31) + 5
    free, _ = torch.cuda.mem_get_info()
    if free < 4 * n * 2:
        pytest.skip("not enough GPU memory")
    a = torch.ones(n, device="cuda", dtype=torch.bfloat16)
    b = torch.full((n,), 2.0, device="cuda", dtype=torch.bfloat16)
    out = myns.add(a, b)
    assert out[-1].item() == 3.0 and out[0].item() == 3.0 and out[n // 2].item() == 3.0
    del a, b, out
    torch.cuda.empty_cache()


def test_first_launch_on_a_fresh_thread():
    """A thread that never made a CUDA runtime call still launches correctly
    (the autograd engine's device threads are such threads)."""
    import threading

    a = torch.randn(16, 16, device="cuda")
    result = {}

    def work():
        try:
            result["out"] = myns.matmul(a, a)
        except Exception as e:  # surfaced below
            result["err"] = e

    t = threading.Thread(target=work)
    t.start()
    t.join()
    assert "err" not in result, result.get("err")
    ref = a.double() @ a.double()
    assert_within(result["out"], ref, matmul_bound(a, a, ref), torch.float32)


def test_out_of_memory_is_an_error_and_the_process_recovers():
    """An output allocation that cannot be met raises torch.OutOfMemoryError
    (what batch-size finders catch), and later calls work."""
    free, _ = torch.cuda.mem_get_info()
    x = torch.empty(int(free * 0.4) // 4, device="cuda")
    outs = []
    with pytest.raises(torch.OutOfMemoryError, match="out of memory"):
        for _ in range(4):  # the third copy cannot fit
            outs.append(myns.scale(x, 2.0))
    del outs, x
    torch.cuda.empty_cache()
    a = torch.ones(16, device="cuda")
    check_op("add", [a, a])
