"""The dict path: the pytrec_eval drop-in and ranklens on dicts, against pytrec_eval.

Everything on the same in-memory dicts (the plain-Python parse of the
``run_bench.py`` files, generated into ``--data-dir`` if missing), in one
process, alternating, best of ``--repeat``, reported as ratios to an anchor
measured in the same run (on a shared machine only the ratios mean anything).
Each time is given as wall-clock seconds and as CPU seconds of the process (all
its threads): on a loaded machine the CPU time is the steadier of the two, and
with ``RANKLENS_NUM_THREADS=1`` it is the single-threaded cost::

    python benches/bench_compat.py --queries 10000,100000

Per scale:

* ``Run(dict)``: ns per run entry, and its ratio to a plain-Python loop that only
  iterates the same entries (``for q, d in run.items(): for k, v in d.items()``);
* per measure set (``--sets``): ``RelevanceEvaluator(qrels, measures).evaluate(run)``
  of ``pytrec_eval`` and of ``ranklens.compat.pytrec_eval``, construction and the
  ``{query: {measure: value}}`` result included, and the speed-up; exits 1 if the
  two outputs differ by more than 1e-12 anywhere;
* ``ranklens.evaluate(qrels_dict, run_dict, <the 5 set>)`` against pytrec_eval on
  the 5 set;
* peak memory of that one call (5 set) for each library, each in a fresh child
  process (``VmHWM`` reset after the dicts are built, via ``/proc/self/clear_refs``;
  Linux only): the growth of the resident high-water mark over the dicts;

then one query a call (the median of 2,000 calls, the two libraries in turn): the
evaluator built once and ``evaluate`` called, both built and called, and
``ranklens.evaluate`` against pytrec_eval's both.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import subprocess
import sys
import time

import run_bench

# The k of MTEB's retrieval scoring (mteb 2.26, `calculate_retrieval_scores` in
# mteb/_evaluators/retrieval_metrics.py): it asks pytrec_eval for map_cut, ndcg_cut,
# recall, P and success at each k.
MTEB_K = "1,3,5,10,20,100,1000"
MEASURE_SETS = {
    "5": {"ndcg_cut.10", "map", "recall.100", "P.10", "recip_rank"},
    "beir": {"ndcg_cut.1,3,5,10,100,1000", "map_cut.1,3,5,10,100,1000", "recall.1,3,5,10,100,1000"},
    "mteb": {
        f"map_cut.{MTEB_K}",
        f"ndcg_cut.{MTEB_K}",
        f"recall.{MTEB_K}",
        f"P.{MTEB_K}",
        f"success.{MTEB_K}",
    },
    "all_trec": {"all_trec"},
}
# The 5 set in ranklens's names, for ranklens.evaluate.
NATIVE_5 = ["ndcg_cut_10", "map", "recall_100", "P_10", "recip_rank"]


def _same(a: dict, b: dict) -> bool:
    if a.keys() != b.keys():
        return False
    for q, row in a.items():
        other = b[q]
        if row.keys() != other.keys():
            return False
        for k, v in row.items():
            if not math.isclose(v, other[k], rel_tol=0.0, abs_tol=1e-12):
                return False
    return True


def _best(fn, repeat: int) -> tuple[float, float]:
    """Best wall time and best CPU time (all threads of the process) of ``repeat`` calls."""
    wall = cpu = math.inf
    for _ in range(repeat):
        gc.collect()
        c, t = time.process_time(), time.perf_counter()
        fn()
        wall = min(wall, time.perf_counter() - t)
        cpu = min(cpu, time.process_time() - c)
    return wall, cpu


def _hwm_kib() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    raise RuntimeError("no VmHWM in /proc/self/status")


def _rss_kib() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS in /proc/self/status")


def _child_peak(lib: str, data_dir: str, n: int) -> None:
    """Child mode: print the growth of the peak RSS during one 5-set call, in MiB."""
    qrels_path, run_path = run_bench.ensure_data(data_dir, n, 100, 10, 0)
    qrels = run_bench.parse_qrels(qrels_path)
    run = run_bench.parse_run(run_path)
    if lib == "pytrec_eval":
        import pytrec_eval as module
    else:
        from ranklens.compat import pytrec_eval as module
    gc.collect()
    base = _rss_kib()
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset VmHWM to the current RSS
    out = module.RelevanceEvaluator(qrels, MEASURE_SETS["5"]).evaluate(run)
    peak = _hwm_kib()
    print(json.dumps({"lib": lib, "peak_growth_mib": (peak - base) / 1024, "queries": len(out)}))


def _peak(lib: str, data_dir: str, n: int) -> float | None:
    cmd = [sys.executable, os.path.abspath(__file__), "--child-peak", lib]
    cmd += ["--data-dir", data_dir, "--queries", str(n)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        print(f"peak memory of {lib}: child failed: {proc.stderr.strip()[-300:]}", file=sys.stderr)
        return None
    return float(json.loads(proc.stdout.strip().splitlines()[-1])["peak_growth_mib"])


def _scale(n: int, args: argparse.Namespace, sets: list[str]) -> int:
    """Every measurement at ``n`` queries; 1 if the two libraries' outputs differ."""
    import pytrec_eval

    import ranklens
    from ranklens import Run
    from ranklens.compat import pytrec_eval as drop_in

    qrels_path, run_path = run_bench.ensure_data(args.data_dir, n, 100, 10, 0)
    qrels = run_bench.parse_qrels(qrels_path)
    run = run_bench.parse_run(run_path)
    entries = sum(len(d) for d in run.values())
    print(f"\n{n:,} queries, {entries:,} run entries, best of {args.repeat}")

    def loop() -> None:
        for _q, docs in run.items():
            for _k, _v in docs.items():
                pass

    w_loop, c_loop = _best(loop, args.repeat)
    w_run, c_run = _best(lambda: Run(run), args.repeat)
    ns = 1e9 / entries
    print(
        f"  Run(dict): wall {w_run * ns:.1f} ns/entry, cpu {c_run * ns:.1f} ns/entry; "
        f"a plain-Python loop over the entries: wall {w_loop * ns:.1f}, cpu {c_loop * ns:.1f}; "
        f"Run(dict) / loop: wall {w_run / w_loop:.2f}, cpu {c_run / c_loop:.2f}"
    )

    print(
        f"  {'measures':>9} {'pytrec_eval s':>14} {'ranklens s':>11} {'speed-up':>9}"
        f"   {'(cpu s:':>8} {'pytrec_eval':>11} {'ranklens':>9} {'speed-up)':>10}"
    )
    for name in sets:
        measures = MEASURE_SETS[name]
        wall = {"pytrec_eval": math.inf, "ranklens": math.inf}
        cpu = dict(wall)
        outputs = {}
        for _ in range(args.repeat):
            for lib, module in (("pytrec_eval", pytrec_eval), ("ranklens", drop_in)):
                gc.collect()
                c, t = time.process_time(), time.perf_counter()
                outputs[lib] = module.RelevanceEvaluator(qrels, measures).evaluate(run)
                wall[lib] = min(wall[lib], time.perf_counter() - t)
                cpu[lib] = min(cpu[lib], time.process_time() - c)
        if not _same(outputs["pytrec_eval"], outputs["ranklens"]):
            print(f"{n}, {name}: the outputs differ", file=sys.stderr)
            return 1
        outputs.clear()
        a, b = wall["pytrec_eval"], wall["ranklens"]
        ca, cb = cpu["pytrec_eval"], cpu["ranklens"]
        print(
            f"  {name:>9} {a:>14.3f} {b:>11.3f} {a / b:>8.1f}x"
            f"   {'':>8} {ca:>11.3f} {cb:>9.3f} {ca / cb:>9.1f}x",
            flush=True,
        )

    w_pt, c_pt = _best(
        lambda: pytrec_eval.RelevanceEvaluator(qrels, MEASURE_SETS["5"]).evaluate(run),
        args.repeat,
    )
    w_nat, c_nat = _best(lambda: ranklens.evaluate(qrels, run, NATIVE_5), args.repeat)
    print(
        f"  ranklens.evaluate(dict, dict), 5 set: wall {w_nat:.3f} s, "
        f"{w_pt / w_nat:.1f}x pytrec_eval's {w_pt:.3f} s; "
        f"cpu {c_nat:.3f} s, {c_pt / c_nat:.1f}x pytrec_eval's {c_pt:.3f} s",
        flush=True,
    )
    if not args.no_peak:
        peaks = {lib: _peak(lib, args.data_dir, n) for lib in ("pytrec_eval", "ranklens")}
        if None not in peaks.values():
            a, b = peaks["pytrec_eval"], peaks["ranklens"]
            print(
                f"  peak memory growth of one 5-set call: pytrec_eval {a:.0f} MiB, "
                f"drop-in {b:.0f} MiB (drop-in / pytrec_eval = {b / a:.2f})",
                flush=True,
            )
    return 0


def _one_query(args: argparse.Namespace) -> int:
    """One query of 100 documents a call (a RAG pipeline's, a per-query loop's): the
    median of 2,000 calls of each form, pytrec_eval's and ranklens' in turn; 1 if
    their outputs differ."""
    import statistics

    import pytrec_eval

    import ranklens
    from ranklens.compat import pytrec_eval as drop_in

    qrels_path, run_path = run_bench.ensure_data(args.data_dir, 10_000, 100, 10, 0)
    all_qrels, all_run = run_bench.parse_qrels(qrels_path), run_bench.parse_run(run_path)
    q = next(q for q in all_run if q in all_qrels)
    qrels, run = {q: all_qrels[q]}, {q: all_run[q]}
    m5 = MEASURE_SETS["5"]
    built = {
        lib: m.RelevanceEvaluator(qrels, m5) for lib, m in (("pt", pytrec_eval), ("rl", drop_in))
    }
    if not _same(built["pt"].evaluate(run), built["rl"].evaluate(run)):
        print("one query: the outputs differ", file=sys.stderr)
        return 1
    forms = {
        "RelevanceEvaluator built once, evaluate(run)": (
            lambda: built["pt"].evaluate(run),
            lambda: built["rl"].evaluate(run),
        ),
        "RelevanceEvaluator(qrels, m).evaluate(run)": (
            lambda: pytrec_eval.RelevanceEvaluator(qrels, m5).evaluate(run),
            lambda: drop_in.RelevanceEvaluator(qrels, m5).evaluate(run),
        ),
        "ranklens.evaluate(qrels, run, 5) against the line above": (
            lambda: pytrec_eval.RelevanceEvaluator(qrels, m5).evaluate(run),
            lambda: ranklens.evaluate(qrels, run, NATIVE_5),
        ),
    }
    print(f"\none query of {len(run[q])} documents a call, median of 2,000 calls (us)")
    for name, (pt, rl) in forms.items():
        times: dict[str, list[float]] = {"pt": [], "rl": []}
        for _ in range(2000):
            for lib, fn in (("pt", pt), ("rl", rl)):
                t = time.perf_counter()
                fn()
                times[lib].append(time.perf_counter() - t)
        a, b = (statistics.median(times[k]) * 1e6 for k in ("pt", "rl"))
        print(f"  {name}: pytrec_eval {a:.1f}, ranklens {b:.1f} ({b / a:.2f}x)", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--queries", type=run_bench._int_list, default=[10_000])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--data-dir", default=run_bench.DEFAULT_DATA_DIR)
    p.add_argument(
        "--sets", default="5,mteb,beir,all_trec", help=f"measure sets, of {','.join(MEASURE_SETS)}"
    )
    p.add_argument("--no-peak", action="store_true", help="skip the peak memory children")
    p.add_argument("--child-peak", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child_peak:
        _child_peak(args.child_peak, args.data_dir, args.queries[0])
        return 0
    sets = args.sets.split(",")
    unknown = [s for s in sets if s not in MEASURE_SETS]
    if unknown:
        p.error(f"unknown measure sets {unknown}")
    for n in args.queries:
        if _scale(n, args, sets):
            return 1
    return _one_query(args)


if __name__ == "__main__":
    sys.exit(main())
