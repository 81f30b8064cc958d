"""Per-call cost on the CPU, by instruction count: runs itself under
valgrind's callgrind and reports instructions per call of each way to call
`add` on two 1024-element float32 CPU tensors, plus the host wall time per
call (interleaved rounds) outside valgrind.

The CPU dispatcher path is the CUDA one minus the kernel launch, so this
profiles the per-call overhead without a GPU, and instruction counts are
immune to the noise of a shared machine. Not a bench_*.py: run by hand.

    python bench/profile_percall.py                    # the library myns loads
    python bench/profile_percall.py --lib old.so --lib new.so
    python bench/profile_percall.py --wall-only

Method: each variant is called N times as ``map(fn, A, B)`` drained by a
deque (no Python frame of ours per call); callgrind counts only inside the
builtin ``map.__next__`` (``--toggle-collect=map_next``) and starts a new
part at each ``time.sleep(0)`` marker between variants
(``--dump-before=time_sleep``). Instructions per call = part total / N. The
"Python wrapper (old)" variant re-creates the package's former wrapper (a
Python function calling the overload) for comparison.
"""

from __future__ import annotations

import argparse
import glob
import os
import statistics
import subprocess
import sys
import tempfile
import time

N = 2000


def variants():
    import torch

    import myns

    ov = torch.ops.myns.add.default

    def old_wrapper(*args, **kwargs):  # what myns.add was before it became the overload itself
        return ov(*args, **kwargs)

    return {
        "torch.ops.myns.add": torch.ops.myns.add,
        "myns.add (package wrapper)": myns.add,
        "myns.add (old Python wrapper)": old_wrapper,
        "torch.ops.myns.add.default": ov,
        "torch.ops.aten.add": torch.ops.aten.add,
        "torch.add": torch.add,
    }


def child(n: int) -> None:
    import collections

    import torch

    torch.set_num_threads(1)
    v = variants()
    a, b = torch.randn(1024), torch.randn(1024)
    A, B = [a] * n, [b] * n
    for f in v.values():  # warm-up, before the first marker
        collections.deque(map(f, A[:100], B[:100]), 0)
    print("\t".join(v), flush=True)
    for f in v.values():
        time.sleep(0)  # marker: a new callgrind part starts here
        collections.deque(map(f, A, B), 0)
    time.sleep(0)


def callgrind(lib: str | None) -> dict[str, float]:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    if lib:
        env["MYNS_LIBRARY"] = lib
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "cg.out")
        r = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--collect-atstart=no",
             "--toggle-collect=map_next", "--dump-before=time_sleep",
             sys.executable, os.path.abspath(__file__), "--child", str(N)],
            capture_output=True, text=True, env=env, timeout=1800,
        )
        if r.returncode != 0:
            raise RuntimeError(r.stderr[-3000:])
        names = r.stdout.strip().splitlines()[-1].split("\t")
        parts = sorted(glob.glob(out + ".*"), key=lambda p: int(p.rsplit(".", 1)[1]))
        totals = []
        for p in parts:
            for line in open(p):
                if line.startswith("summary:") or line.startswith("totals:"):
                    totals.append(int(line.split()[1]))
                    break
        # part 1 runs from start to the first marker (warm-up); then one per variant
        per_variant = totals[1:1 + len(names)]
        return {n: t / N for n, t in zip(names, per_variant)}


def wall(lib: str | None, rounds: int = 9, calls: int = 20000) -> dict[str, float]:
    code = f"""
import json, statistics, sys, time, torch
sys.path.insert(0, {os.path.dirname(os.path.abspath(__file__))!r})
from profile_percall import variants
torch.set_num_threads(1)
v = variants(); a, b = torch.randn(1024), torch.randn(1024)
res = {{k: [] for k in v}}
names = list(v)
for r in range(-1, {rounds}):
    for k in names[r % len(names):] + names[:r % len(names)]:
        f = v[k]; t = time.perf_counter()
        for _ in range({calls}):
            f(a, b)
        if r >= 0:
            res[k].append((time.perf_counter() - t) / {calls} * 1e6)
print(json.dumps({{k: statistics.median(x) for k, x in res.items()}}))
"""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    if lib:
        env["MYNS_LIBRARY"] = lib
    import json

    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=1800)
    if r.returncode != 0:
        raise RuntimeError(r.stderr[-3000:])
    return json.loads(r.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    p.add_argument("--lib", action="append", default=[], help="libmyns to load (MYNS_LIBRARY); repeat to compare")
    p.add_argument("--wall-only", action="store_true")
    p.add_argument("--wall-repeats", type=int, default=3, help="processes per library for wall time, alternated")
    a = p.parse_args()
    if a.child is not None:
        child(a.child)
        return
    libs = a.lib or [None]
    label = lambda lib: os.path.basename(lib) if lib else "default"  # noqa: E731
    ir = {} if a.wall_only else {label(lib): callgrind(lib) for lib in libs}
    walls: dict[str, list[dict]] = {label(lib): [] for lib in libs}
    for _ in range(a.wall_repeats):  # processes alternated so drift hits every library alike
        for lib in libs:
            walls[label(lib)].append(wall(lib))
    names = list(next(iter(walls.values()))[0])
    cols = [f"{k}: Ir/call" for k in ir] + [f"{k}: µs/call" for k in walls]
    print("| variant | " + " | ".join(cols) + " |")
    print("| --- |" + " --- |" * len(cols))
    for n in names:
        cells = [f"{ir[k][n]:,.0f}" for k in ir] + [f"{statistics.median(w[n] for w in walls[k]):.3f}" for k in walls]
        print(f"| {n} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
