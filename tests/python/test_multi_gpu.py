"""Two GPUs: ops on cuda:1 run there, on PyTorch's current stream for cuda:1,
and leave the current device alone. Skipped with fewer than two GPUs."""

import pytest
import torch

import myns

pytestmark = pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two CUDA devices")


@pytest.mark.parametrize("current", [0, 1])
def test_ops_on_cuda1(current):
    torch.cuda.set_device(current)
    a = torch.randn(64, 64, device="cuda:1")
    w = torch.randn(64, device="cuda:1")
    outs = [myns.matmul(a, a), myns.add(a, a), myns.rms_norm(a, w, 1e-6), myns.softmax(a, -1), myns.scale(a, 2.0)]
    assert all(o.device == torch.device("cuda:1") for o in outs)
    assert torch.cuda.current_device() == current
    torch.testing.assert_close(outs[0], a @ a, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(outs[3], torch.softmax(a, -1))


def test_current_stream_of_cuda1():
    torch.cuda.set_device(0)
    n = 1 << 20
    src, b = torch.randn(n, device="cuda:1"), torch.randn(n, device="cuda:1")
    a = torch.zeros(n, device="cuda:1")
    torch.cuda.synchronize(1)
    s = torch.cuda.Stream(device=1)
    with torch.cuda.stream(s):  # also makes cuda:1 current inside
        torch.cuda._sleep(100_000_000)
        a.copy_(src)
        out = myns.add(a, b)
    torch.cuda.synchronize(1)
    torch.testing.assert_close(out, src + b, rtol=0, atol=0)
    assert torch.cuda.current_device() == 0


def test_mixed_cuda_devices_error():
    a, b = torch.ones(4, 4, device="cuda:0"), torch.ones(4, 4, device="cuda:1")
    with pytest.raises(RuntimeError, match=r"myns::matmul.*cuda:1|myns::matmul.*cuda:0"):
        myns.matmul(a, b)
