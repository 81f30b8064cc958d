"""The benchmark harness on the CPU: a benchmark whose myns result is
outside its error bound must fail the run (bench_rowwise checks with the
tests' own bounds), and the results history is appended once per run."""

from __future__ import annotations

import argparse
import json
import os
import sys

import torch

BENCH = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "bench"))
sys.path.insert(0, BENCH)

import bench_rowwise  # noqa: E402
from conftest import requires_cuda  # noqa: E402
import myns  # noqa: E402
import run as bench_run  # noqa: E402


def args(**kw):
    a = argparse.Namespace(device="cpu", quick=True, rounds=3, calls=None, rowwise_budget_s=None,
                           rowwise_shapes="8x256:bf16", rowwise_no_compile=True)
    a.__dict__.update(kw)
    return a


def test_rowwise_passes_its_checks():
    res = bench_rowwise.run(args())
    assert not res["failed_checks"], res["failed_checks"]
    assert {r["op"] for r in res["records"]} == set(bench_rowwise.OPS)
    assert all(len(r["rounds_us"]["myns"]) >= 3 for r in res["records"])


def test_rowwise_fails_on_a_wrong_result(monkeypatch):
    """A myns softmax that drops the last element of each row: the run must
    report the failed check (bench/run.py then exits non-zero)."""
    real = myns.softmax

    def broken(x, dim):
        y = real(x, dim).clone()
        y[..., -1] = 0
        return y

    monkeypatch.setattr(myns, "softmax", broken)
    res = bench_rowwise.run(args())
    assert res["failed_checks"] and all("softmax" in m for m in res["failed_checks"]), res["failed_checks"]


def test_history_is_appended_once(tmp_path):
    report = {"environment": {"timestamp_utc": "2026-01-01T00:00:00Z", "git_commit": "abc", "device": "cuda",
                              "gpu": "NVIDIA H100 80GB HBM3"},
              "benchmarks": {"rowwise": {"key_figures": {"x": 1.0}, "seconds": 3.0}}}
    assert bench_run.machine_name(report["environment"]) == "h100"
    assert bench_run.machine_name({"device": "cpu"}) == "cpu"
    assert bench_run.append_history(tmp_path, report) == 1
    assert bench_run.append_history(tmp_path, report) == 0
    (line,) = (tmp_path / "history.jsonl").read_text().splitlines()
    assert json.loads(line) == {"date": "2026-01-01T00:00:00Z", "commit": "abc", "machine": "h100",
                                "benchmark": "rowwise", "key_figures": {"x": 1.0}, "seconds": 3.0}


@requires_cuda
def test_graph_times_interleaves():
    from common import graph_times

    x = torch.randn(1024, device="cuda")
    t = graph_times({"a": lambda i: x * 2, "b": lambda i: x + 1}, 4, 3)
    assert set(t) == {"a", "b"} and all(len(v) == 3 for v in t.values())
