"""Two GPUs: ops on cuda:1 run there, on PyTorch's current stream for cuda:1,
and leave the current device alone. Marked multi_gpu(2): with fewer GPUs
they are skipped with that reason, and fail under MYNS_REQUIRE_GPUS=2."""

import pytest
import torch

import myns
from conftest import requires_gpus
from op_cases import check_op

pytestmark = requires_gpus(2)


@pytest.mark.parametrize("current", [0, 1])
def test_ops_on_cuda1(current):
    torch.cuda.set_device(current)
    a = torch.randn(64, 64, device="cuda:1")
    w = torch.randn(64, device="cuda:1")
    calls = [("matmul", [a, a]), ("add", [a, a]), ("rms_norm", [a, w, 1e-6]), ("softmax", [a, -1]), ("scale", [a, 2.0])]
    for name, args in calls:
        (out,) = check_op(name, args)
        assert out.device == torch.device("cuda:1"), name
        assert torch.cuda.current_device() == current, name


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
