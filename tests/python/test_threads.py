"""Concurrency: many Python threads (and CUDA streams) calling every op at
once give correct results, with no deadlock or crash; first use (module
loading, context set-up) from many threads at once is race-free."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading

import pytest
import torch

import myns
from conftest import DEVICES
from op_cases import CASES, call, expect, mismatch

N_THREADS = 8
ITERS = 20


def worker(device, errors, stream=None):
    try:
        ctx = torch.cuda.stream(stream) if stream is not None else None
        if ctx:
            ctx.__enter__()
        for it in range(ITERS):
            for name in sorted(CASES):
                if name not in myns.op_names():
                    continue
                args = list(CASES[name].args(torch.float32, device))
                expected = expect(name, args)
                msg = mismatch(call(name, args), expected)
                if msg:
                    errors.append(f"iteration {it}: {msg}")
        if ctx:
            torch.cuda.current_stream().synchronize()
            ctx.__exit__(None, None, None)
    except Exception as e:  # reported by the test
        errors.append(repr(e))


@pytest.mark.parametrize("device", DEVICES)
def test_many_threads_every_op(device):
    errors: list[str] = []
    streams = [torch.cuda.Stream() for _ in range(N_THREADS)] if device == "cuda" else [None] * N_THREADS
    threads = [threading.Thread(target=worker, args=(device, errors, s)) for s in streams]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
        assert not t.is_alive(), "deadlock: a worker thread did not finish"
    assert not errors, errors[:10]


FIRST_USE = textwrap.dedent(
    """
    import sys, threading, torch
    torch.ops.load_library(sys.argv[1])
    dev = sys.argv[2]
    sys.path.insert(0, sys.argv[3])
    from bounds import matmul_bound, op_bounds  # no myns import: bare load_library
    barrier = threading.Barrier(16)
    errors = []
    def work():
        try:
            a = torch.randn(64, 64, device=dev)
            barrier.wait()  # everyone makes their first call at once
            for op in [torch.ops.myns.matmul, torch.ops.myns.add]:
                out = op(a, a)
            ref = a.double() @ a.double()
            assert ((torch.ops.myns.matmul(a, a).double() - ref).abs() <= matmul_bound(a, a, ref)).all(), "matmul"
            ref = torch.softmax(a.double(), -1)
            (b,) = op_bounds("softmax", [a, -1], (ref,))
            assert ((torch.ops.myns.softmax(a, -1).double() - ref).abs() <= b).all(), "softmax"
        except Exception as e:
            errors.append(repr(e))
    ts = [threading.Thread(target=work) for _ in range(16)]
    [t.start() for t in ts]
    [t.join() for t in ts]
    assert not errors, errors
    print("first use ok")
    """
)


@pytest.mark.parametrize("device", DEVICES)
def test_first_use_from_many_threads(device):
    here = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run([sys.executable, "-c", FIRST_USE, myns.library_path(), device, here], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "first use ok" in r.stdout
