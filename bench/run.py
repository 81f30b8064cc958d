"""Runs every benchmark in bench/ and writes one report.

A benchmark is any ``bench/bench_<name>.py`` with ``run(args) -> dict`` (see
bench/common.py for the dict). Optional module-level hooks:
``add_args(parser)`` for its own options, ``markdown(result) -> str`` and
``plot(result, path)`` to render its result itself instead of the generic
tables and plot specs, ``ORDER`` (int, default 50) to run earlier or later.
Adding a benchmark needs no change here. The report is rewritten after each
benchmark (numbers only), so a run cut short still leaves what it measured.

Results layout (bench/results/): the current report per machine,
``<machine>.json`` (environment + every result), ``<machine>.md`` (tables)
and ``<machine>-<bench>.png`` (plots), overwritten by each full run
(``<machine>``: ``h100``, ``h200``, ..., ``cpu``); and
``history.jsonl``, appended, one line per benchmark per run: date, commit,
machine, benchmark, key figures. ``--quick`` runs are smoke runs, not
measurements: they write to a temporary folder and no history. When
``$OUT`` is set (the GPU machine copies back only what is there) the report
also goes to ``$OUT/bench.json``, ``$OUT/bench.md``, at most
``--max-out-pngs`` PNGs and ``$OUT/history.jsonl`` (this run's lines);
``--render $OUT/bench.json`` then files it here: the machine's report
rewritten, its history lines appended (once). Prints the markdown.

    python bench/run.py                      # everything, on CUDA when present
    python bench/run.py --device cpu --quick # smoke run
    python bench/run.py --only overhead,cold_start
    python bench/run.py --render OUT/bench.json   # file a GPU run: bench/results/<machine>.*, history

Exit status 1 if any benchmark raised or reported a failed check (a result
outside its error bound; the report says which); the others still run.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import torch  # noqa: E402

from common import RESULTS_DIR, add_common_args, environment, log, write_report  # noqa: E402

HISTORY = "history.jsonl"


def machine_name(env: dict) -> str:
    """``h100``, ``h200``, ... from the GPU's name; ``cpu`` without one."""
    gpu = env.get("gpu") if str(env.get("device", "")).startswith("cuda") else None
    if not gpu:
        return "cpu"
    words = [w for w in gpu.replace("-", " ").split() if w.upper() not in ("NVIDIA", "TESLA", "GEFORCE")]
    return "".join(ch for ch in (words[0] if words else gpu).lower() if ch.isalnum()) or "gpu"


def _median(xs):
    xs = sorted(x for x in xs if x == x)
    return xs[len(xs) // 2] if xs else None


def key_figures(name: str, res: dict) -> dict:
    """The few numbers of one benchmark worth a history line: its own
    ``key_figures`` if it returns them, else picked from known records."""
    if res.get("key_figures"):
        return res["key_figures"]
    recs = res.get("records") or []
    kf: dict = {}
    if name == "overhead":
        for r in recs:
            if r.get("what") == "per_call_ratio" and r.get("op") in ("add", "matmul"):
                kf[f"{r['op']} torch.ops myns/aten per call"] = round(r["myns_ops_over_aten_ops"], 3)
            if r.get("what") == "per_call_us" and r.get("op") == "add" and r.get("impl") == "torch.ops.myns":
                kf["torch.ops.myns.add µs"] = round(r["median_us"], 2)
    elif name == "cold_start":
        for r in recs:
            if "total_ms" in r:
                kf["load + first calls ms"] = round(r["total_ms"], 1)
    elif name == "rust_add":
        for r in recs:
            if "myns_over_f_add" in r:
                kf["myns::add / f_add"] = round(r["myns_over_f_add"], 3)
    elif name == "matmul":
        by_kind: dict = {}
        for r in recs:
            if "ratio" in r and "kind" in r:
                by_kind.setdefault(r["kind"], []).append(r["ratio"])
                if (r.get("m"), r.get("k"), r.get("n")) == (4096, 4096, 4096):
                    kf[f"{r['kind']} 4096^3 myns/torch speed"] = round(r["ratio"], 3)
        for kind, xs in by_kind.items():
            kf[f"{kind} median myns/torch speed"] = round(_median(xs), 3)
    elif name == "rowwise":
        rows = res.get("results") or recs  # "results": the report format before the history
        big = [r["vs_compiled"] for r in rows if "vs_compiled" in r and r.get("bytes", 0) >= 8 << 20]
        for r in rows:
            if (r.get("rows"), r.get("hidden")) == (16384, 8192) and "myns_tbps" in r:
                kf[f"{r['op']} {r['dtype']} 16384x8192 TB/s"] = round(r["myns_tbps"], 3)
        if big:
            kf["vs compiled from 8 MB: min / median"] = [round(min(big), 3), round(_median(big), 3)]
    if res.get("error"):
        kf["error"] = res["error"].strip().splitlines()[-1][:200]
    if res.get("failed_checks"):
        kf["failed checks"] = len(res["failed_checks"])
    return kf


def history_lines(report: dict) -> list[dict]:
    e = report["environment"]
    return [
        {"date": e["timestamp_utc"], "commit": e["git_commit"], "machine": machine_name(e), "benchmark": n,
         "key_figures": key_figures(n, res), "seconds": round(res.get("seconds", 0.0), 1)}
        for n, res in report["benchmarks"].items()
    ]


def append_history(results_dir: Path, report: dict) -> int:
    """Appends this report's lines to history.jsonl, skipping lines already
    there (same date, commit, machine and benchmark). Returns how many."""
    path = Path(results_dir) / HISTORY
    seen = set()
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                d = json.loads(line)
                # (Lines of other shapes, e.g. bench_matmul.py's own, have no such keys.)
                seen.add((d.get("date"), d.get("commit"), d.get("machine"), d.get("benchmark")))
    new = [h for h in history_lines(report) if (h["date"], h["commit"], h["machine"], h["benchmark"]) not in seen]
    with path.open("a") as f:
        for h in new:
            f.write(json.dumps(h, ensure_ascii=False) + "\n")
    return len(new)


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
    p.add_argument("--results-dir", default=None,
                   help="default bench/results/ (a temporary folder for --quick runs)")
    p.add_argument("--tag", default=None, help="file name stem (default: the machine, e.g. h100)")
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

    results_dir = Path(args.results_dir or RESULTS_DIR)
    if args.render:
        report = json.loads(Path(args.render).read_text())
        stem = args.tag or machine_name(report["environment"])
        plotters = {n: m.plot for n, m in mods.items() if not isinstance(m, str) and hasattr(m, "plot")}
        files = write_report(report, results_dir, stem, plotters=plotters)
        if not report.get("quick"):
            log(f"{append_history(results_dir, report)} line(s) appended to {results_dir / HISTORY}")
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
    tag = args.tag or machine_name(report["environment"])
    if args.quick and not args.results_dir:  # smoke runs leave bench/results/ alone
        results_dir = Path(tempfile.gettempdir()) / "myns-bench"
    plotters = {n: m.plot for n, m in mods.items() if not isinstance(m, str) and hasattr(m, "plot")}
    targets = [(results_dir, tag, None)]
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
        if res.get("failed_checks"):  # a result outside its error bound fails the run
            failed.append(n)
            for m in res["failed_checks"]:
                log(f"{n}: FAILED CHECK: {m}")
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
    if not args.quick:
        log(f"{append_history(results_dir, report)} line(s) appended to {results_dir / HISTORY}")
    if os.environ.get("OUT"):  # this run's history lines, for --render to file here
        (Path(os.environ["OUT"]) / HISTORY).write_text("".join(json.dumps(h, ensure_ascii=False) + "\n" for h in history_lines(report)))

    print((out_dir / f"{stem}.md").read_text())
    log(f"bench: {report['seconds']:.0f} s in all" + (f"; FAILED: {', '.join(dict.fromkeys(failed))}" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
