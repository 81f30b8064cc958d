"""myns.patch under DDP and FSDP2 on two ranks gives the single-process loss
(tests/gpu/patch_distributed.py): on the CPU with gloo here, on two GPUs with
NCCL where there are two (marked multi_gpu)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import requires_gpus

pytest.importorskip("transformers")
SCRIPT = Path(__file__).resolve().parents[1] / "gpu" / "patch_distributed.py"


def torchrun(mode, device, recompute=False):
    exe = shutil.which("torchrun", path=os.path.dirname(sys.executable)) or shutil.which("torchrun")
    cmd = [exe, "--nproc-per-node", "2", "--master-port", str(29500 + (os.getpid() % 1000)), str(SCRIPT),
           "--mode", mode, "--device", device] + (["--recompute-mlp"] if recompute else [])
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=dict(os.environ, OMP_NUM_THREADS="1"))
    assert r.returncode == 0 and "patch-distributed ok" in r.stdout, (r.stdout[-3000:], r.stderr[-3000:])


@pytest.mark.parametrize("recompute", [False, True], ids=["plain", "recompute_mlp"])
@pytest.mark.parametrize("mode", ["ddp", "fsdp2"])
def test_patched_llama_two_cpu_ranks(mode, recompute):
    torchrun(mode, "cpu", recompute)


@requires_gpus(2)
@pytest.mark.parametrize("recompute", [False, True], ids=["plain", "recompute_mlp"])
@pytest.mark.parametrize("mode", ["ddp", "fsdp2"])
def test_patched_llama_two_gpus(mode, recompute):
    torchrun(mode, "cuda", recompute)
