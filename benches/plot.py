"""Plot run_bench.py results: time versus number of queries, log-log.

Usage::

    python benches/run_bench.py --scales 3000,10000,30000,100000 --json /tmp/scaling.json
    python benches/plot.py /tmp/scaling.json [more.json ...] [--out benches/bench_scaling.png]

Reads one or more JSON files written by ``run_bench.py --json OUT`` (when a
library was measured at the same scale in several files, the last file wins)
and draws, for pytrec_eval, ranx, ranklens (file path) and, when present,
ranklens's dict and streaming paths and ranx-cold:

* left: load + evaluate (``load_s + eval_s``), measured inside a fresh process;
* right: the whole process up to the end of evaluate (``total_s``: interpreter
  start-up, import and warm-up included).

Needs matplotlib.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(HERE, "bench_scaling.png")

# (library key in the JSON, label, matplotlib style)
SERIES = [
    ("pytrec_eval", "pytrec_eval", {"marker": "o", "color": "tab:blue"}),
    ("ranx", "ranx (numba cache warm)", {"marker": "s", "color": "tab:orange"}),
    ("ranx-cold", "ranx (first use: numba compiles)", {"marker": "s", "color": "tab:red"}),
    ("ranklens-dict", "ranklens, dict path", {"marker": "^", "color": "tab:purple"}),
    ("ranklens-file", "ranklens, TREC files", {"marker": "D", "color": "tab:green"}),
    ("ranklens-stream", "ranklens, evaluate_files", {"marker": "v", "color": "tab:olive"}),
]


def load(paths: list[str]) -> tuple[dict, dict]:
    """``{lib: {n_queries: result}}`` over every file, and the last file's report."""
    points: dict[str, dict[int, dict]] = {}
    report: dict = {}
    for path in paths:
        with open(path) as f:
            report = json.load(f)
        for scale in report.get("scales", []):
            n = scale["n_queries"]
            for r in scale.get("results", []):
                if r.get("status") == "ok":
                    points.setdefault(r["lib"], {})[n] = r
    return points, report


def _series(by_n: dict[int, dict], field) -> tuple[list[int], list[float]]:
    xs, ys = [], []
    for n in sorted(by_n):
        y = field(by_n[n])
        if y is not None and y > 0:
            xs.append(n)
            ys.append(y)
    return xs, ys


def _load_eval(r: dict) -> float | None:
    if r.get("load_s") is None or r.get("eval_s") is None:
        return None
    return r["load_s"] + r["eval_s"]


def plot(points: dict, report: dict, out: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    fig, axes = plt.subplots(1, 2, figsize=(12, 5), sharey=True)
    panels = [
        (axes[0], _load_eval, "load + evaluate (s)", "Load TREC files + evaluate"),
        (axes[1], lambda r: r.get("total_s"), "whole process (s)", "Whole fresh process"),
    ]
    for ax, field, ylabel, title in panels:
        for lib, label, style in SERIES:
            if lib not in points:
                continue
            xs, ys = _series(points[lib], field)
            if xs:
                ax.plot(xs, ys, label=label, linewidth=1.5, markersize=6, **style)
        ax.set_xscale("log")
        ax.set_yscale("log")
        scales = sorted({n for by_n in points.values() for n in by_n})
        ax.set_xticks(scales, [f"{n:,}" for n in scales])
        ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_xlabel("queries (x 100 ranked documents each)")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
    axes[1].yaxis.set_tick_params(labelleft=True)
    axes[0].legend(loc="upper left", fontsize=9)
    args = report.get("args", {})
    machine = report.get("machine", {})
    fig.suptitle(
        f"{args.get('metric_set', '?')} metrics, {args.get('docs_per_query', '?')} docs and "
        f"{args.get('judged_per_query', '?')} judgments per query; "
        f"{machine.get('cpus', '?')} CPUs, Python {machine.get('python', '?')}",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Plot run_bench.py JSON results (log-log).")
    p.add_argument("json", nargs="+", help="files written by run_bench.py --json")
    p.add_argument("--out", default=DEFAULT_OUT, help=f"PNG to write (default {DEFAULT_OUT})")
    args = p.parse_args(argv)
    points, report = load(args.json)
    if not points:
        print("no successful measurement in the input", file=sys.stderr)
        return 1
    plot(points, report, args.out)
    for lib, _, _ in SERIES:
        if lib in points:
            cells = ", ".join(
                f"{n:,}: {_load_eval(r):.2f}s"
                for n, r in sorted(points[lib].items())
                if _load_eval(r) is not None
            )
            print(f"{lib:<14} load+eval  {cells}")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
