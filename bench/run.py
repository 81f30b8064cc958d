"""Runs every benchmark in bench/ and writes one report.

A benchmark is any ``bench/bench_<name>.py`` with ``run(args) -> dict`` (see
bench/common.py for the dict). Optional module-level hooks:
``add_args(parser)`` for its own options, ``markdown(result) -> str`` and
``plot(result, path)`` to render its result itself instead of the generic
tables and plot specs, ``ORDER`` (int, default 50) to run earlier or later.
Adding a benchmark needs no change here. The report is rewritten after each
benchmark (numbers only), so a run cut short still leaves what it measured.

Writes, under ``--results-dir`` (default bench/results/):
``<tag>.json`` (environment + every result), ``<tag>.md`` (tables) and
``<tag>-<bench>.png`` (plots); and when ``$OUT`` is set (the GPU machine
copies back only what is there) the same as ``$OUT/bench.json``,
``$OUT/bench.md`` and at most ``--max-out-pngs`` PNGs. Prints the markdown.

    python bench/run.py                      # everything, on CUDA when present
    python bench/run.py --device cpu --quick # smoke run
    python bench/run.py --only overhead,cold_start
    python bench/run.py --render OUT/bench.json --tag h100-<commit>   # re-draw a report
                                                  # (JSON, tables, PNGs) into bench/results/

Exit status 1 if any benchmark raised (the others still run and report).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import torch  # noqa: E402

from common import RESULTS_DIR, add_common_args, environment, log, timestamp, write_report  # noqa: E402


def discover() -> list[str]:
    return sorted(p.stem.removeprefix("bench_") for p in HERE.glob("bench_*.py"))


def run_order(names: list[str], mods: dict) -> list[str]:
    """By each module's ``ORDER`` (default 50; the per-call and start-up
    benchmarks go first, being short), then by name."""
    return sorted(names, key=lambda n: (getattr(mods[n], "ORDER", 50) if not isinstance(mods[n], str) else 50, n))


def _render_module_result(mod, res: dict) -> dict:
    """Adapts a result rendered by the module's own hooks to the report."""
    if hasattr(mod, "markdown") and not res.get("tables"):
        try:
            res = dict(res)
            res["markdown"] = mod.markdown(res)
        except Exception as e:
            res["notes"] = list(res.get("notes", [])) + [f"markdown hook failed: {e}"]
    return res


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_args(p)
    p.add_argument("--only", default="", help="comma-separated benchmark names (default: all of %s)" % ", ".join(discover()))
    p.add_argument("--skip", default="", help="comma-separated benchmark names to leave out")
    p.add_argument("--results-dir", default=str(RESULTS_DIR))
    p.add_argument("--tag", default=None, help="file name stem (default <device>-<timestamp>)")
    p.add_argument("--max-out-pngs", type=int, default=4, help="PNGs written to $OUT (it takes few files)")
    p.add_argument("--budget-s", type=float, default=None, help="start no benchmark after this many seconds")
    p.add_argument("--render", default=None, help="re-render a report JSON (tables, PNGs) and exit")
    p.add_argument(
        "--cpu-threads", type=int, default=1,
        help="torch intra-op threads for --device cpu (default 1: OpenMP wake-ups on a busy machine cost "
        "milliseconds per parallel op and would swamp per-call timings)",
    )
    names = discover()
    mods = {}
    for n in names:  # modules' own options, before parsing
        try:
            mods[n] = importlib.import_module(f"bench_{n}")
            if hasattr(mods[n], "add_args"):
                mods[n].add_args(p)
        except Exception:
            mods[n] = traceback.format_exc()
    args = p.parse_args(argv)

    if args.render:
        report = json.loads(Path(args.render).read_text())
        stem = args.tag or Path(args.render).stem
        plotters = {n: m.plot for n, m in mods.items() if not isinstance(m, str) and hasattr(m, "plot")}
        files = write_report(report, Path(args.results_dir), stem, plotters=plotters)
        print("\n".join(str(f) for f in files))
        return 0

    only = [s for s in args.only.split(",") if s]
    skip = set(s for s in args.skip.split(",") if s)
    unknown = [s for s in only + list(skip) if s not in names]
    if unknown:
        p.error(f"unknown benchmark(s) {unknown}; have {names}")
    selected = run_order([n for n in (only or names) if n not in skip], mods)

    if args.device.startswith("cuda") and not torch.cuda.is_available():
        p.error("--device cuda but torch sees no GPU (use --device cpu)")
    if args.device == "cpu" and args.cpu_threads > 0:
        torch.set_num_threads(args.cpu_threads)
    report = {
        "environment": environment(args.device),
        "quick": args.quick,
        "argv": sys.argv[1:] if argv is None else list(argv),
        "benchmarks": {},
    }
    log(f"bench: {', '.join(selected)} on {report['environment'].get('gpu') or report['environment']['cpu']}"
        f" ({args.device}{', quick' if args.quick else ''}), commit {report['environment']['git_commit']}")
    tag = args.tag or f"{args.device.split(':')[0]}-{timestamp()}"
    plotters = {n: m.plot for n, m in mods.items() if not isinstance(m, str) and hasattr(m, "plot")}
    targets = [(Path(args.results_dir), tag, None)]
    if os.environ.get("OUT"):
        targets.append((Path(os.environ["OUT"]), "bench", args.max_out_pngs))
    failed = []
    t_all = time.time()
    for n in selected:
        mod = mods[n]
        t0 = time.time()
        if args.budget_s and t0 - t_all > args.budget_s:
            report["benchmarks"][n] = {"notes": [f"not run: the --budget-s {args.budget_s:.0f} s was spent"], "seconds": 0.0}
            log(f"== {n}: skipped (budget spent)")
            continue
        log(f"== {n}")
        if isinstance(mod, str):
            res = {"error": mod}
        else:
            try:
                res = mod.run(args) or {}
                res = _render_module_result(mod, res)
            except Exception:
                res = {"error": traceback.format_exc()}
        res["seconds"] = time.time() - t0
        if res.get("error"):
            failed.append(n)
            log(res["error"])
        log(f"== {n}: {res['seconds']:.1f} s")
        report["benchmarks"][n] = res
        report["seconds"] = time.time() - t_all
        # Numbers so far (no plots), in case a later benchmark hangs or the run is cut off.
        for out_dir, stem, _ in targets:
            write_report(report, out_dir, stem, max_pngs=0)
        if args.device.startswith("cuda"):
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
    report["seconds"] = time.time() - t_all

    for out_dir, stem, max_pngs in targets:
        files = write_report(report, out_dir, stem, max_pngs=max_pngs, plotters=plotters)
        log("wrote " + ", ".join(str(f) for f in files))

    print((out_dir / f"{stem}.md").read_text())
    log(f"bench: {report['seconds']:.0f} s in all" + (f"; FAILED: {', '.join(failed)}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
