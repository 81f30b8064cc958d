"""Per-call cost from Rust: runs the `bench_add` example (examples/bench_add.rs:
`myns::add` against tch's `Tensor::f_add` and `&a + &b` on 1024 float32,
interleaved rounds, median) and reports its JSON.

The binary: ``$MYNS_BENCH_ADD_BIN`` (scripts/gpu_run.sh points it at
``.gpu/bin/example_bench_add``), else ``.gpu/bin/example_bench_add``, else
``target/release/examples/bench_add`` (``cargo build --release --examples``).
Skipped, with a note, when none exists.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

ORDER = 30  # bench/run.py runs lower first


def binary() -> Path | None:
    cands = [os.environ.get("MYNS_BENCH_ADD_BIN"), ROOT / ".gpu/bin/example_bench_add", ROOT / "target/release/examples/bench_add"]
    for c in cands:
        if c and Path(c).is_file() and os.access(c, os.X_OK):
            return Path(c)
    return None


def run(args) -> dict:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from common import table

    t0 = time.time()
    exe = binary()
    if exe is None:
        return {"notes": ["skipped: no bench_add binary (cargo build --release --examples, or set MYNS_BENCH_ADD_BIN)"]}
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "rust_add.json"
        cmd = [str(exe), str(out)] + (["--quick"] if args.quick else []) + ([] if args.device.startswith("cuda") else ["--cpu"])
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            raise RuntimeError(f"{exe} failed ({r.returncode}):\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
        res = json.loads(out.read_text())
    rows = [[v["variant"], v["median_us"], min(v["rounds_us"]), max(v["rounds_us"])] for v in res["variants"]]
    return {
        "tables": [table(
            f"Rust per-call host time (µs), {res['numel']} {res['dtype']} on {res['device']}, "
            f"{res['rounds']} rounds x {res['calls']} calls; myns::add / Tensor::f_add = {res['myns_over_f_add']:.3f} "
            f"(median of per-round ratios)",
            ["variant", "median µs", "min", "max"], rows,
        )],
        "records": [dict(res, binary=str(exe))],
        "notes": [f"binary: {exe}"],
        "seconds": time.time() - t0,
    }
