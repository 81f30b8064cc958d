"""Small valid inputs for every myns op, keyed by op name, with the torch
equivalents the overhead benchmark compares against.

Used by bench_overhead.py (per-call cost, CUDA-graph replay) and
bench_cold_start.py (first call of every op). An op registered without an
entry here is skipped by both, with a note in the report: add one when you
add an op.

Each entry: ``make(device)`` returns the op's positional arguments at the
op's smallest useful size; ``aten(args)`` / ``torch_fn(args)`` return
``(callable, args)`` for the same computation through ``torch.ops.aten``
(the dispatcher from Python, as ``torch.ops.myns``; the overload packet
where the issue names it, else the overload that fits, since a packet that
tries overloads in turn is slow to resolve) and through the public
``torch`` function (PyTorch's generated binding), or ``None`` when there is
no direct equivalent. Mutating ops get arguments that stay finite when the
op is called many times in a row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import torch

EPS = 1e-6
F32 = torch.float32


def _r(*shape, device, dtype=F32):
    return torch.randn(*shape, device=device, dtype=dtype)


@dataclass
class Sample:
    make: Callable[[str], tuple]
    desc: str
    aten: Optional[Callable[[tuple], tuple]] = None
    torch_fn: Optional[Callable[[tuple], tuple]] = None


def _softmax_out(device):
    return torch.softmax(_r(4, 256, device=device), -1)


SAMPLES: dict[str, Sample] = {
    "add": Sample(
        lambda d: (_r(1024, device=d), _r(1024, device=d)),
        "1024 float32",
        aten=lambda a: (torch.ops.aten.add, a),
        torch_fn=lambda a: (torch.add, a),
    ),
    "matmul": Sample(
        lambda d: (_r(16, 16, device=d), _r(16, 16, device=d)),
        "16x16 @ 16x16 float32",
        aten=lambda a: (torch.ops.aten.mm, a),
        torch_fn=lambda a: (torch.mm, a),
    ),
    "bmm": Sample(
        lambda d: (_r(2, 16, 16, device=d), _r(2, 16, 16, device=d)),
        "2x16x16 @ 2x16x16 float32",
        aten=lambda a: (torch.ops.aten.bmm, a),
        torch_fn=lambda a: (torch.bmm, a),
    ),
    "rms_norm": Sample(
        lambda d: (_r(4, 256, device=d), _r(256, device=d), EPS),
        "4x256 float32",
        aten=lambda a: (torch.ops.aten.rms_norm, (a[0], [a[0].shape[-1]], a[1], a[2])),
        torch_fn=lambda a: (torch.rms_norm, (a[0], [a[0].shape[-1]], a[1], a[2])),
    ),
    "rms_norm_backward": Sample(
        lambda d: (_r(4, 256, device=d), _r(4, 256, device=d), _r(256, device=d), EPS),
        "4x256 float32",
    ),
    "fused_add_rms_norm": Sample(
        lambda d: (_r(4, 256, device=d), _r(4, 256, device=d), _r(256, device=d), EPS),
        "4x256 float32, in place",
    ),
    "silu_and_mul": Sample(
        lambda d: (_r(4, 512, device=d),),
        "4x512 -> 4x256 float32",
    ),
    "silu_and_mul_backward": Sample(
        lambda d: (_r(4, 256, device=d), _r(4, 512, device=d)),
        "4x256, 4x512 float32",
    ),
    "silu_and_mul_backward_": Sample(
        lambda d: (_r(4, 512, device=d), _r(4, 256, device=d)),
        "4x512, 4x256 float32, in place",
    ),
    "softmax": Sample(
        lambda d: (_r(4, 256, device=d), -1),
        "4x256 float32, dim -1",
        aten=lambda a: (torch.ops.aten.softmax.int, a),
        torch_fn=lambda a: (torch.softmax, a),
    ),
    "softmax_backward": Sample(
        lambda d: (_r(4, 256, device=d), _softmax_out(d), -1),
        "4x256 float32, dim -1",
        aten=lambda a: (torch.ops.aten._softmax_backward_data, (a[0], a[1], a[2], torch.float32)),
        torch_fn=None,
    ),
    "scale": Sample(
        lambda d: (_r(1024, device=d), 2.5),
        "1024 float32",
        aten=lambda a: (torch.ops.aten.mul.Scalar, a),
        torch_fn=lambda a: (torch.mul, a),
    ),
    "scale_": Sample(
        lambda d: (_r(1024, device=d), 1.0),
        "1024 float32, in place",
        aten=lambda a: (torch.ops.aten.mul_.Scalar, a),
        torch_fn=lambda a: (torch.Tensor.mul_, a),
    ),
    "layer_norm": Sample(
        lambda d: (_r(4, 256, device=d), _r(256, device=d), _r(256, device=d), 1e-5),
        "4x256 float32",
        aten=lambda a: (torch.ops.aten.layer_norm, (a[0], [a[0].shape[-1]], a[1], a[2], a[3])),
        torch_fn=lambda a: (torch.layer_norm, (a[0], [a[0].shape[-1]], a[1], a[2], a[3])),
    ),
    "layer_norm_backward": Sample(
        lambda d: (_r(4, 256, device=d), _r(4, 256, device=d), _r(256, device=d), 1e-5),
        "4x256 float32",
    ),
    "gelu_and_mul": Sample(lambda d: (_r(4, 512, device=d), "tanh"), "4x512 -> 4x256 float32"),
    "gelu_and_mul_backward": Sample(lambda d: (_r(4, 256, device=d), _r(4, 512, device=d), "tanh"), "4x256, 4x512 float32"),
    "gelu_and_mul_backward_": Sample(lambda d: (_r(4, 512, device=d), _r(4, 256, device=d), "tanh"),
                                     "4x512, 4x256 float32, in place"),
    "rope": Sample(
        lambda d: (_r(1, 8, 16, 64, device=d), _r(1, 2, 16, 64, device=d), _r(1, 16, 64, device=d), _r(1, 16, 64, device=d)),
        "q 1x8x16x64, k 1x2x16x64 float32",
    ),
    "cross_entropy": Sample(
        lambda d: (_r(16, 1000, device=d), torch.randint(0, 1000, (16,), device=d), -100, "mean"),
        "16x1000 float32",
        aten=lambda a: (torch.ops.aten.cross_entropy_loss, (a[0], a[1], None, 1, a[2])),
        torch_fn=lambda a: (torch.nn.functional.cross_entropy, (a[0], a[1])),
    ),
    "cross_entropy_backward": Sample(
        lambda d: (torch.tensor(1.0, device=d), _r(16, 1000, device=d), torch.randint(0, 1000, (16,), device=d), -100, "mean"),
        "16x1000 float32",
    ),
    "fused_linear_cross_entropy": Sample(
        lambda d: (_r(16, 64, device=d), _r(1000, 64, device=d), torch.randint(0, 1000, (16,), device=d), -100, "mean"),
        "16x64 @ (1000x64)^T float32",
    ),
    "fused_linear_cross_entropy_backward": Sample(
        lambda d: (torch.tensor(1.0, device=d), _r(16, 64, device=d), _r(1000, 64, device=d),
                   torch.randint(0, 1000, (16,), device=d), -100, "mean"),
        "16x64 @ (1000x64)^T float32",
    ),
    "add_rms_norm": Sample(
        lambda d: (_r(4, 256, device=d), _r(4, 256, device=d), _r(256, device=d), EPS),
        "4x256 float32",
    ),
    "add_rms_norm_backward": Sample(
        lambda d: (_r(4, 256, device=d), _r(4, 256, device=d), _r(4, 256, device=d), _r(256, device=d), EPS),
        "4x256 float32",
    ),
}

# Ops whose per-call cost the overhead benchmark reports first (the issue's
# targets); the rest follow in table order.
HEADLINE = ("add", "matmul")

