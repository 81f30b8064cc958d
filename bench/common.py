"""Shared benchmark harness: timing, environment capture, reports.

A benchmark is a module ``bench/bench_<name>.py`` with a function
``run(args) -> dict`` (see ``bench/run.py``, which finds and runs them all).
The dict it returns::

    {
      "tables":  [{"title": str, "columns": [str, ...], "rows": [[cell, ...], ...]}],
      "records": [{...flat JSON-able measurement...}, ...],   # raw numbers
      "plots":   [{"title": str, "kind": "bar" | "line", "xlabel": str, "ylabel": str,
                   "logx": bool, "logy": bool,
                   "series": {label: [[x, y], ...]}}],          # drawn by matplotlib
      "notes":   [str, ...],                                     # skipped cases, caveats
    }

Every key is optional. Timing helpers:

* ``host_us_per_call(fn, calls, sync)``: wall time per call of ``calls``
  back-to-back calls (``time.perf_counter``), synchronising once at the end;
  the cost a Python caller pays per call (dispatch, allocation, launch).
* ``interleaved(fns, rounds, calls, sync)``: the same for several functions,
  alternated round by round (host timings drift between rounds, so compare
  within a round), with per-round ratios against a baseline.
* ``gpu_time_ms(fn)``: device time per call from CUDA events, median of many
  runs after warm-up, optionally flushing L2 before each (as
  ``triton.testing.do_bench`` does).
* ``Rotating``: cycles through several input sets so repeated runs do not hit
  in cache.
* ``graph_times(impls, n_calls, rounds)``: device time per call from CUDA
  graphs: ``n_calls`` calls of each implementation captured in one graph
  (no host launch cost in the figure), the graphs' replays timed with CUDA
  events, implementations alternated round-robin within each round (order
  rotated), ``rounds`` rounds; compare medians.
* ``check_outputs(op, ...)``: every output element against the float64
  reference within the op's bound, with the tests' own functions
  (tests/python/bounds.py, op_cases.py). A benchmark returns the failures
  as ``failed_checks``: bench/run.py then exits non-zero and the report
  names them.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

import torch

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
RESULTS_DIR = BENCH_DIR / "results"
TESTS_PY = ROOT / "tests" / "python"


# ---------------------------------------------------------------- arguments


def add_common_args(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p.add_argument(
        "--device",
        default="cuda" if torch.cuda.is_available() else "cpu",
        help="cuda or cpu (default: cuda when available)",
    )
    p.add_argument("--quick", action="store_true", help="few rounds and calls: a smoke run, not a measurement")
    p.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 11, quick 3)")
    p.add_argument("--calls", type=int, default=None, help="calls per round for host timings (default 10000, quick 300)")
    return p


def rounds(args) -> int:
    return args.rounds or (3 if args.quick else 11)


def calls(args) -> int:
    return args.calls or (300 if args.quick else 10_000)


# ---------------------------------------------------------------- timing


def sync_fn(device: str) -> Callable[[], None]:
    if str(device).startswith("cuda"):
        return torch.cuda.synchronize
    return lambda: None


def host_us_per_call(fn: Callable[..., Any], n: int, sync: Callable[[], None], args: tuple = ()) -> float:
    """Microseconds per call of ``n`` back-to-back calls ``fn(*args)``, one
    sync at the end.

    Results are dropped at once (as in a loop that overwrites its output), so
    the caching allocator hands the same block back on the next call. Pass
    the op itself and its arguments (not a lambda) to time no extra frame.
    """
    sync()
    t0 = time.perf_counter()
    for _ in range(n):
        fn(*args)
    sync()
    return (time.perf_counter() - t0) / n * 1e6


def interleaved(
    fns: dict[str, Callable[[], Any] | tuple[Callable[..., Any], tuple]],
    n_rounds: int,
    n_calls: int,
    sync: Callable[[], None],
    warmup_calls: int | None = None,
) -> dict[str, list[float]]:
    """Per-call host time (µs) of each function in each round.

    Values are callables or ``(callable, args)`` pairs. Each round times every
    function once, in an order rotated by one each round so no function
    always runs first (or right after a given other).
    """
    names = list(fns)
    calls_ = {k: (v if isinstance(v, tuple) else (v, ())) for k, v in fns.items()}
    warm = warmup_calls if warmup_calls is not None else max(50, n_calls // 10)
    for name in names:
        host_us_per_call(calls_[name][0], warm, sync, calls_[name][1])
    out: dict[str, list[float]] = {k: [] for k in names}
    for r in range(n_rounds):
        order = names[r % len(names):] + names[: r % len(names)]
        for name in order:
            f, a = calls_[name]
            out[name].append(host_us_per_call(f, n_calls, sync, a))
    return out


def median_ratio(times: dict[str, list[float]], num: str, den: str) -> float:
    """Median over rounds of the per-round ratio ``num / den``."""
    return statistics.median(a / b for a, b in zip(times[num], times[den]))


def summarize(xs: Sequence[float]) -> dict[str, float]:
    xs = sorted(xs)
    q = lambda p: xs[min(len(xs) - 1, max(0, round(p * (len(xs) - 1))))]  # noqa: E731
    return {"median": statistics.median(xs), "min": xs[0], "max": xs[-1], "p20": q(0.2), "p80": q(0.8), "n": len(xs)}


_L2_FLUSH: dict[str, torch.Tensor] = {}


def flush_l2(device: str = "cuda") -> None:
    """Overwrites a 256 MB buffer, evicting whatever an earlier run left in L2."""
    buf = _L2_FLUSH.get(device)
    if buf is None:
        buf = _L2_FLUSH[device] = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device=device)
    buf.zero_()


def gpu_time_ms(
    fn: Callable[[], Any],
    warmup_ms: float = 25.0,
    rep_ms: float = 100.0,
    flush: bool = True,
    max_reps: int = 10_000,
) -> dict[str, float]:
    """Device time of one call from CUDA events: median (and spread) over many
    calls after warm-up, each recorded separately; L2 flushed before each
    call when ``flush``. For calls shorter than their launch cost the events
    also catch launch gaps: use CUDA-graph replay for those."""
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        if flush:
            flush_l2()
        fn()
    end.record()
    torch.cuda.synchronize()
    est = max(start.elapsed_time(end) / 5, 1e-3)
    n_warm = max(1, int(warmup_ms / est))
    n_rep = max(5, min(max_reps, int(rep_ms / est)))
    for _ in range(n_warm):
        fn()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n_rep)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n_rep)]
    for i in range(n_rep):
        if flush:
            flush_l2()
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    return summarize([s.elapsed_time(e) for s, e in zip(starts, ends)])


def cpu_time_ms(fn: Callable[[], Any], warmup_ms: float = 25.0, rep_ms: float = 100.0) -> dict[str, float]:
    """``gpu_time_ms`` for CPU tensors: wall time per call, median of many."""
    fn()
    t0 = time.perf_counter()
    fn()
    est = max((time.perf_counter() - t0) * 1e3, 1e-4)
    for _ in range(max(1, int(warmup_ms / est))):
        fn()
    xs = []
    for _ in range(max(5, min(10_000, int(rep_ms / est)))):
        t0 = time.perf_counter()
        fn()
        xs.append((time.perf_counter() - t0) * 1e3)
    return summarize(xs)


def device_time_ms(fn: Callable[[], Any], device: str, **kw) -> dict[str, float]:
    if str(device).startswith("cuda"):
        return gpu_time_ms(fn, **kw)
    kw.pop("flush", None)
    kw.pop("max_reps", None)
    return cpu_time_ms(fn, **kw)


class Rotating:
    """Cycles through ``copies`` input sets made by ``make()`` so back-to-back
    runs do not find their inputs in cache. ``copies=None`` picks enough sets
    to cover twice the L2 size (at most 64)."""

    def __init__(self, make: Callable[[], Sequence[torch.Tensor]], copies: int | None = None):
        first = tuple(make())
        if copies is None:
            nbytes = sum(t.numel() * t.element_size() for t in first if isinstance(t, torch.Tensor)) or 1
            l2 = 50 * 2**20
            if torch.cuda.is_available():
                l2 = getattr(torch.cuda.get_device_properties(0), "L2_cache_size", l2) or l2
            copies = max(1, min(64, -(-2 * l2 // nbytes)))
        self.sets = [first] + [tuple(make()) for _ in range(copies - 1)]
        self.i = 0

    def next(self) -> tuple:
        s = self.sets[self.i]
        self.i = (self.i + 1) % len(self.sets)
        return s


def graph_times(
    impls: dict[str, Callable[[int], Any]],
    n_calls: int,
    n_rounds: int,
    reps: int = 5,
    warmup: int = 3,
    keep: int = 1,
) -> dict[str, list[float]]:
    """Device microseconds per call of each implementation, per round.

    ``impls[name](i)`` makes call ``i`` (``i`` picks the input set, so the
    calls of one graph can rotate through inputs larger than L2 together).
    The outputs of the last ``keep`` calls stay allocated while the next are
    captured, so that the calls write to ``keep`` rotating buffers: with
    one, every call of an out-of-place implementation wrote to the same
    memory, whose lines L2 held dirty from call to call, while an in-place
    one wrote to its rotating inputs, which had to reach DRAM.
    Each implementation is warmed up on a side stream (compilation,
    autotuning, module loading), then ``n_calls`` calls are captured into
    one CUDA graph. Each round replays every graph once untimed and then
    ``reps`` times between two CUDA events, implementations in an order
    rotated by one each round. Host launch cost is not in the figures: a
    replay launches the whole graph at once.
    """
    graphs: dict[str, torch.cuda.CUDAGraph] = {}
    kept: dict[str, list[Any]] = {}
    for name, fn in impls.items():
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for i in range(warmup):
                fn(i)
        torch.cuda.current_stream().wait_stream(s)
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        ring: list[Any] = [None] * max(1, keep)
        with torch.cuda.graph(g):
            for i in range(n_calls):
                ring[i % len(ring)] = fn(i)
        graphs[name], kept[name] = g, ring  # the last outputs, alive until the replays are done
    torch.cuda.synchronize()
    names = list(impls)
    out: dict[str, list[float]] = {k: [] for k in names}
    for r in range(n_rounds):
        for name in names[r % len(names):] + names[: r % len(names)]:
            g = graphs[name]
            g.replay()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(reps):
                g.replay()
            end.record()
            torch.cuda.synchronize()
            out[name].append(start.elapsed_time(end) * 1e3 / (reps * n_calls))
    del graphs
    return out


def test_checks():
    """(bounds, op_cases): the tests' own bound functions and references."""
    if str(TESTS_PY) not in sys.path:
        sys.path.insert(0, str(TESTS_PY))
    import bounds
    import op_cases

    return bounds, op_cases


def check_outputs(op: str, args: list, outs: Sequence[torch.Tensor], what: str, sliced: Sequence[int] | None = None,
                  chunk_elems: int = 1 << 24):
    """Every element of ``outs`` (the results of op ``op``, or of a stand-in
    with the same outputs, on ``args`` as they were before the call) within
    its bound of the float64 reference. Large inputs are checked a block of
    rows at a time (the float64 temporaries stay small): ``sliced`` are the
    arguments whose rows map to the outputs' rows (default: the tensors
    shaped like the first argument, as in the row ops; matmul: ``(0,)``).
    Returns (worst error/bound, None or the first failure)."""
    bounds, op_cases = test_checks()
    lead = args[0]
    if sliced is None:
        sliced = [i for i, a in enumerate(args) if isinstance(a, torch.Tensor) and a.shape[:-1] == lead.shape[:-1]]
    rows = lead.shape[0] if lead.dim() > 1 else 1
    step = max(1, chunk_elems // max(1, lead.numel() // max(rows, 1)))
    worst = 0.0
    for r0 in range(0, rows, step):
        sl = slice(r0, r0 + step)
        part = [a[sl] if i in sliced and a.dim() > 1 else a for i, a in enumerate(args)]
        expected = op_cases.expect(op, part)
        for i, (o, ref, b) in enumerate(zip(outs, expected.refs, expected.bounds)):
            rep = bounds.compare(o[sl] if o.dim() > 1 else o, ref, b, expected.dtype, f"{what}, result {i}, rows {r0}..")
            worst = max(worst, rep.worst_ratio)
            if not rep.ok:
                return worst, rep.message
    return worst, None


# ---------------------------------------------------------------- environment


def git_commit() -> str:
    """The commit measured: ``MYNS_GIT_COMMIT`` (set by scripts/gpu_run.sh on
    the GPU machine), else the ``COMMIT`` file scripts/gpu_bundle.sh leaves
    next to the library in ``MYNS_LIBRARY``, else ``git`` here."""
    env = os.environ.get("MYNS_GIT_COMMIT")
    if env:
        return env
    lib = os.environ.get("MYNS_LIBRARY")
    stamp = os.path.join(os.path.dirname(lib), "COMMIT") if lib else ""
    if stamp and os.path.isfile(stamp):
        with open(stamp) as f:
            return f.read().strip()
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, timeout=10
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT, capture_output=True, text=True, timeout=10
        ).stdout.strip()
        if head:
            return head + ("-dirty" if dirty else "")
    except Exception:
        pass
    return "unknown"


def _nvidia_smi(field: str) -> str | None:
    try:
        r = subprocess.run(
            ["nvidia-smi", f"--query-gpu={field}", "--format=csv,noheader"], capture_output=True, text=True, timeout=20
        )
        return r.stdout.strip().splitlines()[0] if r.returncode == 0 and r.stdout.strip() else None
    except Exception:
        return None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except Exception:
        pass
    return platform.processor() or "unknown"


def environment(device: str) -> dict[str, Any]:
    env: dict[str, Any] = {
        "timestamp_utc": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "git_commit": git_commit(),
        "device": device,
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "python": platform.python_version(),
        "host": platform.node(),
        "cpu": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
    }
    try:
        import myns

        env["myns"] = myns.__version__
        env["myns_library"] = myns.library_path()
        env["myns_ops"] = myns.op_names()
    except Exception as e:  # the harness still runs benchmarks that need no myns
        env["myns"] = f"not importable: {e}"
    if str(device).startswith("cuda") and torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        env["gpu"] = p.name
        env["gpu_sms"] = p.multi_processor_count
        env["gpu_capability"] = f"{p.major}.{p.minor}"
        env["gpu_memory_gib"] = round(p.total_memory / 2**30, 1)
        env["driver"] = _nvidia_smi("driver_version") or "unknown"
    return env


# ---------------------------------------------------------------- reports


def fmt(x: Any, digits: int = 3) -> str:
    if isinstance(x, float):
        if x != x:
            return "n/a"
        if abs(x) >= 1000 or x == 0:
            return f"{x:.0f}" if abs(x) >= 1000 else "0"
        return f"{x:.{digits}g}" if abs(x) < 1 else f"{x:.{max(digits - len(str(int(abs(x)))), 1)}f}"
    return str(x)


def markdown_table(table: dict) -> str:
    cols = table["columns"]
    lines = ["| " + " | ".join(cols) + " |", "| " + " | ".join("---" for _ in cols) + " |"]
    for row in table["rows"]:
        lines.append("| " + " | ".join(fmt(c) for c in row) + " |")
    return "\n".join(lines)


def markdown_report(report: dict, png_names: dict[str, str] | None = None) -> str:
    e = report["environment"]
    where = e.get("gpu") or e.get("cpu")
    out = [
        "# myns benchmarks",
        "",
        f"{where}; driver {e.get('driver', 'n/a')}; torch {e['torch']}; commit `{e['git_commit']}`; "
        f"{e['timestamp_utc']}; device `{e['device']}`" + ("; **quick run (not a measurement)**" if report.get("quick") else ""),
    ]
    for name, res in report["benchmarks"].items():
        out += ["", f"## {name}"]
        if res.get("error"):
            out += ["", f"**failed:** `{res['error'].strip().splitlines()[-1]}`"]
        for m in res.get("failed_checks", []):
            out += ["", f"**FAILED CHECK (outside its error bound):** {m}"]
        for t in res.get("tables", []):
            out += ["", f"**{t['title']}**", "", markdown_table(t)]
        if res.get("markdown"):
            out += ["", res["markdown"]]
        for n in res.get("notes", []):
            out += ["", f"- {n}"]
        if png_names and name in png_names:
            out += ["", f"![{name}]({png_names[name]})"]
        out.append(f"\n_{res.get('seconds', 0):.1f} s_")
    return "\n".join(out) + "\n"


def plot(res: dict, path: Path, title: str) -> bool:
    """Draws every plot spec of one benchmark into one PNG; False without matplotlib."""
    specs = res.get("plots") or []
    if not specs:
        return False
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception:
        return False
    n = len(specs)
    cols = min(n, 2)
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(6.5 * cols, 4.2 * rows), squeeze=False)
    for ax, spec in zip(axes.flat, specs):
        series = spec["series"]
        if spec.get("kind", "line") == "bar":
            cats = []
            for pts in series.values():
                for x, _ in pts:
                    if x not in cats:
                        cats.append(x)
            width = 0.8 / max(1, len(series))
            for i, (label, pts) in enumerate(series.items()):
                d = dict((x, y) for x, y in pts)
                xs = [j + (i - (len(series) - 1) / 2) * width for j in range(len(cats))]
                ax.bar(xs, [d.get(c, 0) for c in cats], width, label=label)
            ax.set_xticks(range(len(cats)))
            ax.set_xticklabels([str(c) for c in cats], rotation=20, ha="right", fontsize=8)
        else:
            for label, pts in series.items():
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
        if spec.get("logx"):
            ax.set_xscale("log", base=2)
        if spec.get("logy"):
            ax.set_yscale("log")
        ax.set_title(spec.get("title", ""), fontsize=10)
        ax.set_xlabel(spec.get("xlabel", ""))
        ax.set_ylabel(spec.get("ylabel", ""))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write_report(
    report: dict,
    out_dir: Path,
    stem: str,
    max_pngs: int | None = None,
    plotters: dict[str, Callable[[dict, str], Any]] | None = None,
) -> list[Path]:
    """Writes ``<stem>.json``, ``<stem>.md`` and ``<stem>-<bench>.png`` (one per
    benchmark with plots, at most ``max_pngs``) into ``out_dir``. A benchmark
    without plot specs is drawn by ``plotters[name](result, path)`` if given."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    pngs: dict[str, str] = {}
    e = report["environment"]
    for name, res in report["benchmarks"].items():
        if max_pngs is not None and len(pngs) >= max_pngs:
            break
        if res.get("error"):
            continue
        png = out_dir / f"{stem}-{name}.png"
        drawn = False
        try:
            if res.get("plots"):
                drawn = plot(res, png, f"{name}: {e.get('gpu') or e.get('cpu')}, torch {e['torch']}")
            elif plotters and name in plotters:
                plotters[name](res, str(png))
                drawn = png.exists()
        except Exception as ex:  # a plot must not lose the numbers
            log(f"plot of {name} failed: {type(ex).__name__}: {ex}")
        if drawn:
            pngs[name] = png.name
            written.append(png)
    j = out_dir / f"{stem}.json"
    j.write_text(json.dumps(report, indent=1, default=str) + "\n")
    md = out_dir / f"{stem}.md"
    md.write_text(markdown_report(report, pngs))
    return [j, md] + written


def timestamp() -> str:
    return _dt.datetime.now().strftime("%Y%m%d-%H%M%S")


def log(*a) -> None:
    print(*a, file=sys.stderr, flush=True)


def table(title: str, columns: Iterable[str], rows: list[list[Any]]) -> dict:
    return {"title": title, "columns": list(columns), "rows": rows}
