"""Cold start: a fresh process with the driver's JIT cache disabled
(``CUDA_CACHE_DISABLE=1``) times ``torch.ops.load_library`` of libmyns and
the first call of every op (bench/samples.py inputs), each synchronised.

torch's own start-up (import, CUDA context) happens before the clock starts
and is reported separately for reference; each op's inputs are made before
its first call is timed. The first call of an op includes loading its CUDA module
(SASS for sm_80/sm_90 in the fatbin: no JIT on those GPUs); the second call
is shown next to it. ``--cold-runs`` fresh processes, medians reported.

    python bench/bench_cold_start.py [--device cpu] [--quick]
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))

ORDER = 20  # bench/run.py runs lower first


def child(device: str, path: str) -> dict:
    """Runs in the fresh process; returns milliseconds."""
    t = time.perf_counter()
    import torch

    out = {"import_torch_ms": (time.perf_counter() - t) * 1e3}
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    t = time.perf_counter()
    if device.startswith("cuda"):
        torch.cuda.init()
        torch.empty(1, device=device)
        sync()
    out["torch_device_init_ms"] = (time.perf_counter() - t) * 1e3

    sys.path.insert(0, HERE)
    from samples import SAMPLES

    t = time.perf_counter()
    torch.ops.load_library(path)
    out["load_library_ms"] = (time.perf_counter() - t) * 1e3

    lib = ctypes.CDLL(path)  # the handle load_library made; only for the op names
    lib.myns_op_count.restype = ctypes.c_size_t
    lib.myns_op_name.restype = ctypes.c_char_p
    lib.myns_op_name.argtypes = [ctypes.c_size_t]
    names = [lib.myns_op_name(i).decode() for i in range(lib.myns_op_count())]
    inputs = {n: SAMPLES[n].make(device) for n in names if n in SAMPLES}
    sync()

    first, second, errors = {}, {}, {}
    for n in names:
        if n not in inputs:
            continue
        op = getattr(torch.ops.myns, n)
        try:
            t = time.perf_counter()
            op(*inputs[n])
            sync()
            first[n] = (time.perf_counter() - t) * 1e3
            t = time.perf_counter()
            op(*inputs[n])
            sync()
            second[n] = (time.perf_counter() - t) * 1e3
        except Exception as e:
            errors[n] = f"{type(e).__name__}: {str(e).splitlines()[0][:200]}"
    out.update(first_call_ms=first, second_call_ms=second, errors=errors,
               skipped=[n for n in names if n not in inputs], ops=names)
    return out


def run(args) -> dict:
    sys.path.insert(0, HERE)
    from common import table

    import myns

    t0 = time.time()
    device = args.device
    n_runs = getattr(args, "cold_runs", None) or (1 if args.quick else 3)
    env = dict(os.environ, CUDA_CACHE_DISABLE="1", PYTHONUNBUFFERED="1")
    runs, notes = [], []
    for _ in range(n_runs):
        r = subprocess.run(
            [sys.executable, os.path.abspath(__file__), "--child", "--device", device, "--library", myns.library_path()],
            capture_output=True, text=True, env=env, timeout=300,
        )
        if r.returncode != 0:
            raise RuntimeError(f"cold-start child failed ({r.returncode}):\n{r.stderr[-3000:]}")
        runs.append(json.loads(r.stdout.strip().splitlines()[-1]))
    med = lambda key: statistics.median(x[key] for x in runs)  # noqa: E731
    ops = [n for n in runs[0]["first_call_ms"]]
    first = {n: statistics.median(x["first_call_ms"][n] for x in runs) for n in ops}
    second = {n: statistics.median(x["second_call_ms"][n] for x in runs) for n in ops}
    load = med("load_library_ms")
    # median of per-run totals (not the sum of medians)
    total = statistics.median(x["load_library_ms"] + sum(x["first_call_ms"].values()) for x in runs)
    rows = [["torch.ops.load_library", load, ""]]
    rows += [[f"first call: {n}", first[n], second[n]] for n in ops]
    rows += [["load_library + every first call", total, ""]]
    if runs[0]["skipped"]:
        notes.append(f"no sample inputs in bench/samples.py for {', '.join(runs[0]['skipped'])}: not called (not in the total)")
    for n, e in runs[0]["errors"].items():
        notes.append(f"{n}: first call failed: {e}")
    notes.append(
        f"{n_runs} fresh process(es), CUDA_CACHE_DISABLE=1, medians; before the clock: import torch "
        f"{med('import_torch_ms'):.0f} ms, torch's device init {med('torch_device_init_ms'):.0f} ms (not counted)"
    )
    return {
        "tables": [table(f"Cold start on {device} (ms)", ["step", "ms", "second call ms"], rows)],
        "records": [{"what": "cold_start", "device": device, "runs": runs,
                     "load_library_ms": load, "first_call_ms": first, "second_call_ms": second, "total_ms": total}],
        "plots": [{
            "title": f"cold start on {device}: load_library + first call of each op (total {total:.1f} ms)",
            "kind": "bar", "xlabel": "", "ylabel": "ms",
            "series": {"first call": [["load_library", load]] + [[n, first[n]] for n in ops],
                       "second call": [[n, second[n]] for n in ops]},
        }],
        "notes": notes,
        "seconds": time.time() - t0,
    }


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cold-runs", type=int, default=None, help="fresh processes for the cold start (default 3, quick 1)")


if __name__ == "__main__":
    if "--child" in sys.argv:  # parse by hand: nothing may import torch before the clock
        cp = argparse.ArgumentParser()
        cp.add_argument("--child", action="store_true")
        cp.add_argument("--device", required=True)
        cp.add_argument("--library", required=True)
        a = cp.parse_args()
        print(json.dumps(child(a.device, a.library)))
        sys.exit(0)
    sys.path.insert(0, HERE)
    from common import add_common_args, markdown_table

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_args(p)
    add_args(p)
    res = run(p.parse_args())
    for t in res["tables"]:
        print(f"\n**{t['title']}**\n\n{markdown_table(t)}")
    for n in res["notes"]:
        print("-", n)
