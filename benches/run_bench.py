"""Benchmark ranklens against pytrec_eval and ranx, each in its own fresh process.

Usage::

    python benches/run_bench.py --scales 10000,100000 [--json results.json]

For every scale (number of queries; 100 retrieved documents per query by
default) the data are generated once into ``benches/.data/`` and reused.  Then
every library runs in a fresh subprocess (``python run_bench.py --child LIB``),
so that import and JIT warm-up costs are visible, and reports:

* import: ``import LIB``;
* warm-up: a tiny evaluation before the real one (ranx compiles its numba
  kernels here, or loads them from its on-disk cache);
* load: reading the TREC files into the library's structures;
* eval: the evaluation proper;
* total: from the parent's ``Popen`` to the end of eval (interpreter start-up
  included);
* peak RSS of the child (``VmHWM``, else ``ru_maxrss``), taken right after eval.

See ``benches/README.md`` for the libraries' paths and the caveats.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

from metric_sets import METRIC_SETS, SET_5, SET_40, MetricSpec

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DATA_DIR = os.path.join(BENCH_DIR, ".data")
ALL_LIBS = [
    "pytrec_eval",
    "ranx",
    "ranx-cold",
    "ranklens-dict",
    "ranklens-file",
    "ranklens-stream",
    "ranklens-encoded",
]
DEFAULT_LIBS = ",".join(ALL_LIBS)
TINY_QRELS = {"q1": {"d1": 1, "d2": 0, "d3": 2}, "q2": {"d4": 1}}
TINY_RUN = {"q1": {"d1": 0.5, "d2": 0.4, "d5": 0.3}, "q2": {"d4": 0.9, "d6": 0.1}}


class Skip(Exception):
    """A library (or one of its paths) is not available: reported, not an error."""

    def __init__(self, status: str, note: str):
        super().__init__(note)
        self.status = status
        self.note = note


# --------------------------------------------------------------------------
# Child side: one library, one process.
# --------------------------------------------------------------------------


def parse_qrels(path: str) -> dict[str, dict[str, int]]:
    """Plain-Python TREC qrels reader, the way users write it."""
    qrels: dict[str, dict[str, int]] = {}
    with open(path) as f:
        for line in f:
            qid, _, docno, label = line.split()
            qrels.setdefault(qid, {})[docno] = int(label)
    return qrels


def parse_run(path: str) -> dict[str, dict[str, float]]:
    """Plain-Python TREC run reader, the way users write it."""
    run: dict[str, dict[str, float]] = {}
    with open(path) as f:
        for line in f:
            qid, _, docno, _, score, _ = line.split()
            run.setdefault(qid, {})[docno] = float(score)
    return run


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far, in MiB."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kib / 1024 if sys.platform != "darwin" else kib / 1024 / 1024


def _version(dist: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _import(module: str, dist: str):
    """Import a library, timed; raise Skip if it is not installed."""
    t0 = time.perf_counter()
    try:
        mod = __import__(module)
    except ImportError as e:
        raise Skip("not installed", f"{module}: {e}") from None
    return mod, time.perf_counter() - t0, _version(dist)


def _tiny_files() -> tuple[str, str]:
    """TINY_QRELS / TINY_RUN as TREC files in a temporary directory (for warm-ups)."""
    tmp = tempfile.mkdtemp(prefix="ranklens-bench-tiny-")
    qrels_path, run_path = os.path.join(tmp, "qrels.txt"), os.path.join(tmp, "run.txt")
    with open(qrels_path, "w") as f:
        for qid, docs in TINY_QRELS.items():
            f.writelines(f"{qid} 0 {doc} {label}\n" for doc, label in docs.items())
    with open(run_path, "w") as f:
        for qid, docs in TINY_RUN.items():
            ranked = sorted(docs.items(), key=lambda item: -item[1])
            f.writelines(
                f"{qid} Q0 {doc} {rank} {score!r} tiny\n"
                for rank, (doc, score) in enumerate(ranked, start=1)
            )
    return qrels_path, run_path


def _per_query_dump(path: str | None, values: dict[str, dict[str, float]]) -> None:
    if path:
        with open(path, "w") as f:
            json.dump(values, f)


def child_pytrec_eval(args, specs: list[MetricSpec], out: dict) -> None:
    pytrec_eval, out["import_s"], out["version"] = _import("pytrec_eval", "pytrec-eval-terrier")
    used = [s for s in specs if s.trec is not None]
    measures = {s.trec for s in used}
    t0 = time.perf_counter()
    pytrec_eval.RelevanceEvaluator(TINY_QRELS, measures).evaluate(TINY_RUN)
    t1 = time.perf_counter()
    qrels = parse_qrels(args.qrels)
    run = parse_run(args.run)
    t2 = time.perf_counter()
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, measures)
    t3 = time.perf_counter()
    results = evaluator.evaluate(run)
    t4 = time.perf_counter()
    out["end_wall"] = time.time()
    out["peak_rss_mib"] = peak_rss_mib()
    out.update(warmup_s=t1 - t0, load_s=t2 - t1, eval_s=t4 - t2)
    out["extra"] = {"evaluator_init_s": t3 - t2, "evaluate_s": t4 - t3}
    out["metrics"] = [s.ranklens for s in used]
    out["n_queries"] = len(results)
    out["n_run_rows"] = sum(len(d) for d in run.values())
    n = max(1, len(results))
    out["means"] = {s.ranklens: sum(r[s.trec_key] for r in results.values()) / n for s in used}
    _per_query_dump(
        args.dump,
        {s.ranklens: {q: r[s.trec_key] for q, r in results.items()} for s in used if s.identical},
    )


def child_ranx(args, specs: list[MetricSpec], out: dict) -> None:
    if args.lib == "ranx-cold":
        # A private, empty numba cache: the kernels are compiled from scratch,
        # as on the first use after installing ranx.
        cache = tempfile.mkdtemp(prefix="ranklens-bench-numba-")
        os.environ["NUMBA_CACHE_DIR"] = cache
        out["note"] = "empty numba cache (first use)"
    ranx, out["import_s"], out["version"] = _import("ranx", "ranx")
    used = [s for s in specs if s.ranx is not None]
    metrics = [s.ranx for s in used]
    tiny_qrels, tiny_run = _tiny_files()
    t0 = time.perf_counter()
    # The same calls on tiny files: compiles (or loads from cache) what they need.
    tiny = ranx.Qrels.from_file(tiny_qrels, kind="trec"), ranx.Run.from_file(tiny_run, kind="trec")
    ranx.evaluate(*tiny, metrics)
    t1 = time.perf_counter()
    shutil.rmtree(os.path.dirname(tiny_qrels), ignore_errors=True)
    qrels = ranx.Qrels.from_file(args.qrels, kind="trec")
    run = ranx.Run.from_file(args.run, kind="trec")
    t2 = time.perf_counter()
    means = ranx.evaluate(qrels, run, metrics)
    t3 = time.perf_counter()
    out["end_wall"] = time.time()
    out["peak_rss_mib"] = peak_rss_mib()
    out.update(warmup_s=t1 - t0, load_s=t2 - t1, eval_s=t3 - t2)
    out["metrics"] = [s.ranklens for s in used]
    out["n_queries"] = len(run)
    if not isinstance(means, dict):
        means = {metrics[0]: means}
    out["means"] = {s.ranklens: float(means[s.ranx]) for s in used}
    if args.lib == "ranx-cold":
        shutil.rmtree(os.environ["NUMBA_CACHE_DIR"], ignore_errors=True)


def _ranklens_metrics(ranklens, specs: list[MetricSpec], out: dict) -> list[MetricSpec]:
    """Metrics of the set that this ranklens build accepts (checked on tiny data)."""
    if not hasattr(ranklens, "evaluate"):
        raise Skip("skipped", "ranklens.evaluate is missing")
    names = [s.ranklens for s in specs]
    try:
        ranklens.evaluate(TINY_QRELS, TINY_RUN, names)
        return list(specs)
    except Exception:
        pass
    ok, rejected = [], []
    for s in specs:
        try:
            ranklens.evaluate(TINY_QRELS, TINY_RUN, [s.ranklens])
            ok.append(s)
        except Exception as e:
            rejected.append(f"{s.ranklens} ({type(e).__name__})")
    if not ok:
        raise Skip("error", "ranklens rejected every metric: " + ", ".join(rejected))
    out["note"] = "rejected: " + ", ".join(rejected)
    return ok


def _ranklens_outputs(args, res, used: list[MetricSpec], out: dict) -> None:
    out["metrics"] = [s.ranklens for s in used]
    out["means"] = {s.ranklens: float(res[s.ranklens]) for s in used}
    per_query = {}
    if hasattr(res, "per_query"):
        per_query = {
            s.ranklens: {q: float(v) for q, v in res.per_query(s.ranklens).items()}
            for s in used
            if s.identical
        }
        if per_query:
            out["n_queries"] = len(next(iter(per_query.values())))
    _per_query_dump(args.dump, per_query)


def child_ranklens(args, specs: list[MetricSpec], out: dict) -> None:
    ranklens, out["import_s"], out["version"] = _import("ranklens", "ranklens")
    file_path = args.lib == "ranklens-file"
    if file_path:
        for cls, meth in (("Qrels", "from_trec"), ("Run", "from_trec")):
            if not hasattr(getattr(ranklens, cls, None), meth):
                raise Skip("skipped", f"ranklens.{cls}.{meth} is missing")
    t0 = time.perf_counter()
    used = _ranklens_metrics(ranklens, specs, out)
    if file_path:  # the same calls on tiny files, as for ranx
        tiny_qrels, tiny_run = _tiny_files()
        tiny = ranklens.Qrels.from_trec(tiny_qrels), ranklens.Run.from_trec(tiny_run)
        ranklens.evaluate(*tiny, [s.ranklens for s in used])
        shutil.rmtree(os.path.dirname(tiny_qrels), ignore_errors=True)
    t1 = time.perf_counter()
    if file_path:
        qrels = ranklens.Qrels.from_trec(args.qrels)
        run = ranklens.Run.from_trec(args.run)
    else:
        qrels = parse_qrels(args.qrels)
        run = parse_run(args.run)
        out["n_run_rows"] = sum(len(d) for d in run.values())
        out["n_queries"] = len(run)
    t2 = time.perf_counter()
    res = ranklens.evaluate(qrels, run, [s.ranklens for s in used])
    t3 = time.perf_counter()
    out["end_wall"] = time.time()
    out["peak_rss_mib"] = peak_rss_mib()
    out.update(warmup_s=t1 - t0, load_s=t2 - t1, eval_s=t3 - t2)
    _ranklens_outputs(args, res, used, out)


def child_ranklens_stream(args, specs: list[MetricSpec], out: dict) -> None:
    """``evaluate_files``: the run file scored query block by query block.

    ``load s`` is reading the qrels; ``eval s`` is reading and scoring the run in
    chunks, which overlap (the run is never whole in memory).
    """
    ranklens, out["import_s"], out["version"] = _import("ranklens", "ranklens")
    if not hasattr(ranklens, "evaluate_files"):
        raise Skip("skipped", "ranklens.evaluate_files is missing")
    t0 = time.perf_counter()
    used = _ranklens_metrics(ranklens, specs, out)
    names = [s.ranklens for s in used]
    tiny_qrels, tiny_run = _tiny_files()
    ranklens.evaluate_files(tiny_qrels, tiny_run, names)
    shutil.rmtree(os.path.dirname(tiny_qrels), ignore_errors=True)
    t1 = time.perf_counter()
    qrels = ranklens.Qrels.from_trec(args.qrels)
    t2 = time.perf_counter()
    res = ranklens.evaluate_files(qrels, args.run, names)
    t3 = time.perf_counter()
    out["end_wall"] = time.time()
    out["peak_rss_mib"] = peak_rss_mib()
    out.update(warmup_s=t1 - t0, load_s=t2 - t1, eval_s=t3 - t2)
    _ranklens_outputs(args, res, used, out)


def child_ranklens_encoded(args, specs: list[MetricSpec], out: dict) -> None:
    """evaluate() alone on prebuilt Qrels/Run: metric counts x thread counts."""
    ranklens, out["import_s"], out["version"] = _import("ranklens", "ranklens")
    for cls in ("Qrels", "Run"):
        if not hasattr(getattr(ranklens, cls, None), "from_dict"):
            raise Skip("skipped", f"ranklens.{cls}.from_dict is missing")
    t0 = time.perf_counter()
    wide = _ranklens_metrics(ranklens, SET_40, out)
    t1 = time.perf_counter()
    qrels_d = parse_qrels(args.qrels)
    run_d = parse_run(args.run)
    n_rows = sum(len(d) for d in run_d.values())
    t2 = time.perf_counter()
    qrels = ranklens.Qrels.from_dict(qrels_d)
    run = ranklens.Run.from_dict(run_d)
    t3 = time.perf_counter()
    n_queries = len(run_d)
    del qrels_d, run_d
    out.update(warmup_s=t1 - t0, load_s=t3 - t1, n_run_rows=n_rows, n_queries=n_queries)
    out["extra"] = {"parse_s": t2 - t1, "from_dict_s": t3 - t2, "variants": []}
    accepted = {s.ranklens for s in wide}
    for n_metrics in args.encoded_metrics:
        # 1 -> ndcg@10; 5, 10, 40 -> that metric set; any other n -> the first n of the 40.
        chosen = [SET_5[0]] if n_metrics == 1 else METRIC_SETS.get(str(n_metrics), wide)
        names = [s.ranklens for s in chosen if s.ranklens in accepted][:n_metrics]
        for threads in args.threads:
            best = float("inf")
            for _ in range(args.repeat):
                t = time.perf_counter()
                ranklens.evaluate(qrels, run, names, threads=threads)
                best = min(best, time.perf_counter() - t)
            out["extra"]["variants"].append(
                {
                    "metrics": len(names),
                    "threads": threads,
                    "eval_s": best,
                    "run_rows_per_s": n_rows / best if best > 0 else None,
                    "queries_per_s": n_queries / best if best > 0 else None,
                }
            )
    first = out["extra"]["variants"][0] if out["extra"]["variants"] else None
    out["eval_s"] = first["eval_s"] if first else None
    out["end_wall"] = time.time()
    out["peak_rss_mib"] = peak_rss_mib()
    out["metrics"] = [s.ranklens for s in wide]


CHILDREN = {
    "pytrec_eval": child_pytrec_eval,
    "ranx": child_ranx,
    "ranx-cold": child_ranx,
    "ranklens-dict": child_ranklens,
    "ranklens-file": child_ranklens,
    "ranklens-stream": child_ranklens_stream,
    "ranklens-encoded": child_ranklens_encoded,
}


def child_main(args) -> int:
    out: dict = {"lib": args.lib, "status": "ok", "note": "", "pid": os.getpid()}
    specs = METRIC_SETS[args.metric_set]
    try:
        CHILDREN[args.lib](args, specs, out)
    except Skip as s:
        out.update(status=s.status, note=s.note)
    except Exception as e:
        out.update(status="error", note=f"{type(e).__name__}: {e}")
        out["traceback"] = traceback.format_exc()
    with open(args.result, "w") as f:
        json.dump(out, f)
    return 0


# --------------------------------------------------------------------------
# Parent side: data, children, tables.
# --------------------------------------------------------------------------


def ensure_data(data_dir: str, n: int, d: int, j: int, seed: int) -> tuple[str, str]:
    """Generate the TREC files for one scale unless a finished copy is cached."""
    out = os.path.join(data_dir, f"q{n}_d{d}_j{j}_s{seed}")
    qrels, run, done = (os.path.join(out, x) for x in ("qrels.txt", "run.txt", "done.json"))
    if os.path.exists(done):
        return qrels, run
    sys.path.insert(0, BENCH_DIR)
    try:
        import gen_data
    except ImportError as e:
        raise SystemExit(f"generating the data needs numpy ({e}): pip install numpy") from None

    t0 = time.perf_counter()
    print(f"generating {n:,} queries x {d} docs into {out} ...", flush=True)
    sim = gen_data.simulate(n, d, j, seed)
    gen_data.write_simulation(sim, out)
    with open(done, "w") as f:
        json.dump({"queries": n, "docs_per_query": d, "judged_per_query": j, "seed": seed}, f)
    print(f"  done in {time.perf_counter() - t0:.1f}s", flush=True)
    return qrels, run


def run_child(lib: str, qrels: str, run: str, args, workdir: str) -> dict:
    result = os.path.join(workdir, f"{lib}.json")
    dump = os.path.join(workdir, f"{lib}.perquery.json")
    cmd = [
        sys.executable,
        os.path.abspath(__file__),
        "--child",
        lib,
        "--qrels",
        qrels,
        "--run",
        run,
        "--metric-set",
        args.metric_set,
        "--result",
        result,
        "--repeat",
        str(args.repeat),
        "--threads",
        ",".join(map(str, args.threads)),
        "--encoded-metrics",
        ",".join(map(str, args.encoded_metrics)),
    ]
    if not args.no_compare:
        cmd += ["--dump", dump]
    print(f"  {lib} ...", end=" ", flush=True)
    warm_page_cache(qrels, run)
    start = time.time()
    rc, stderr, killed = _run_capped(cmd, args.timeout, args.mem_limit_gib)
    wall = time.time() - start
    if killed:
        out = {"lib": lib, "status": "killed", "note": killed, "process_wall_s": wall}
        out["per_query_file"] = None
        print(f"killed ({killed})", flush=True)
        return out
    if os.path.exists(result):
        with open(result) as f:
            out = json.load(f)
    else:
        tail = stderr.strip().splitlines()[-1:] if stderr else []
        if rc is None:
            note = stderr
        else:
            note = f"child exited with {rc}" + (f": {tail[0]}" if tail else "")
        out = {"lib": lib, "status": "error", "note": note}
    out["process_wall_s"] = wall
    if out.get("end_wall"):
        out["total_s"] = out.pop("end_wall") - start
    out["per_query_file"] = dump if os.path.exists(dump) else None
    print(out["status"] + (f" ({out['note']})" if out.get("note") else ""), flush=True)
    return out


def warm_page_cache(*paths: str) -> None:
    """Read the input files once before each library's process, as ``cat`` would.

    Every library then starts from a warm page cache: without this, the library
    that runs after a large one (ranx peaks at 7 GiB at 100k queries) read its
    input partly from disk again (seen: 2.1 s in place of 1.0 s, most of it
    system time), and the order of ``--libs`` changed the ratios.
    """
    for path in paths:
        with open(path, "rb", buffering=0) as f:
            while f.read(1 << 23):
                pass


def _rss_mib(pid: int) -> float:
    """Resident memory of a live process (Linux /proc), in MiB; 0 if gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _run_capped(cmd: list[str], timeout: float, limit_gib: float) -> tuple:
    """Run a child; kill it past ``timeout`` seconds or ``limit_gib`` GiB resident.

    Returns ``(returncode, stderr, killed_note)``.  The memory cap stands in for
    the machine running out (24 GiB here): at 1M queries the other libraries
    would otherwise push the machine into the OOM killer.
    """
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, text=True)
        start, peak = time.time(), 0.0
        killed = None
        while proc.poll() is None:
            rss = _rss_mib(proc.pid)
            peak = max(peak, rss)
            elapsed = time.time() - start
            if rss > limit_gib * 1024:
                killed = f"exceeded {limit_gib:g} GiB resident after {elapsed:.0f} s"
            elif elapsed > timeout:
                killed = f"timed out after {timeout:g} s (peak {peak:,.0f} MiB)"
            if killed:
                proc.kill()
                proc.wait()
                break
            time.sleep(0.1)
        err.seek(0)
        return proc.returncode, err.read(), killed


def compare(reference: dict, other: dict) -> dict | None:
    """Max absolute per-query difference, metric by metric, on shared queries."""
    if not reference.get("per_query_file") or not other.get("per_query_file"):
        return None
    with open(reference["per_query_file"]) as f:
        ref = json.load(f)
    with open(other["per_query_file"]) as f:
        oth = json.load(f)
    report = {}
    for metric, ref_q in ref.items():
        if metric not in oth:
            continue
        oth_q = oth[metric]
        shared = ref_q.keys() & oth_q.keys()
        diffs = [abs(ref_q[q] - oth_q[q]) for q in shared]
        worst = sorted(shared, key=lambda q: -abs(ref_q[q] - oth_q[q]))[:3]
        report[metric] = {
            "examples": [
                {"qid": q, "pytrec_eval": ref_q[q], "ranklens": oth_q[q]}
                for q in worst
                if abs(ref_q[q] - oth_q[q]) > 1e-9
            ],
            "max_abs_diff": max(diffs) if diffs else None,
            "n_over_1e-9": sum(x > 1e-9 for x in diffs),
            "queries_compared": len(shared),
            "only_in_pytrec_eval": len(ref_q.keys() - oth_q.keys()),
            "only_in_ranklens": len(oth_q.keys() - ref_q.keys()),
        }
    return report


def _fmt(x, spec: str = ".3f", empty: str = "-") -> str:
    return empty if x is None else format(x, spec)


def _metric_list(specs: list[MetricSpec]) -> str:
    if len(specs) <= 10:
        return ", ".join(s.ranklens for s in specs)
    return f"{specs[0].ranklens} ... {specs[-1].ranklens} (metric_sets.py)"


def print_scale(scale: dict) -> None:
    n = scale["n_queries"]
    specs = METRIC_SETS[scale["metric_set"]]
    print()
    print(
        f"== {n:,} queries x {scale['docs_per_query']} docs ({scale['run_rows']:,} run lines), "
        f"{len(specs)} metrics: {_metric_list(specs)} =="
    )
    base = scale.get("baseline")
    base_row = next((r for r in scale["results"] if r["lib"] == base), None)
    head = (
        f"{'library':<17}{'import s':>9}{'warm-up s':>10}{'load s':>8}{'eval s':>8}"
        f"{'total s':>9}{'q/s eval':>11}{'q/s load+eval':>14}{'peak MiB':>9}"
        f"{'total x':>9}{'eval x':>8}  metrics / note"
    )
    print(head)
    print("-" * len(head))
    for r in scale["results"]:
        if r["lib"] == "ranklens-encoded":
            continue
        if r["status"] != "ok":
            print(f"{r['lib']:<17}{r['status']}: {r.get('note', '')}")
            continue
        ev, ld = r.get("eval_s"), r.get("load_s")
        qps = n / ev if ev else None
        qps_all = n / (ev + ld) if ev is not None and ld is not None and ev + ld > 0 else None
        ratio_total = ratio_eval = "-"
        if base_row and base_row["status"] == "ok":
            if r.get("total_s") and base_row.get("total_s"):
                ratio_total = f"{r['total_s'] / base_row['total_s']:.1f}x"
            if ev and base_row.get("eval_s"):
                ratio_eval = f"{ev / base_row['eval_s']:.1f}x"
        note = f"{len(r.get('metrics', []))}/{len(specs)}"
        if r.get("note"):
            note += f"; {r['note']}"
        print(
            f"{r['lib']:<17}{_fmt(r.get('import_s')):>9}{_fmt(r.get('warmup_s')):>10}"
            f"{_fmt(ld, '.2f'):>8}{_fmt(ev, '.2f'):>8}{_fmt(r.get('total_s'), '.2f'):>9}"
            f"{_fmt(qps, ',.0f'):>11}{_fmt(qps_all, ',.0f'):>14}"
            f"{_fmt(r.get('peak_rss_mib'), ',.0f'):>9}{ratio_total:>9}{ratio_eval:>8}  {note}"
        )
    if base_row:
        print(f"(x columns: time / {base}'s time; q/s = {n:,} queries / seconds)")
    else:
        print("(no ranklens row succeeded: no ratios)")
    if "mrr@10" in [s.ranklens for s in specs]:
        print("(pytrec_eval computes recip_rank, which has no cutoff, in place of mrr@10)")

    for lib, report in scale.get("agreement", {}).items():
        if report is None:
            continue
        print(f"per-query agreement of {lib} with pytrec_eval (max |diff|, queries over 1e-9):")
        for metric, rep in report.items():
            extra = ""
            if rep["only_in_pytrec_eval"] or rep["only_in_ranklens"]:
                extra = (
                    f"; queries only in pytrec_eval {rep['only_in_pytrec_eval']}, "
                    f"only in ranklens {rep['only_in_ranklens']}"
                )
            for ex in rep["examples"]:
                extra += f"; q {ex['qid']}: {ex['pytrec_eval']:.6g} vs {ex['ranklens']:.6g}"
            print(
                f"  {metric:<14} {_fmt(rep['max_abs_diff'], '.3g'):>10}  "
                f"{rep['n_over_1e-9']:>6} of {rep['queries_compared']:,}{extra}"
            )

    enc = next((r for r in scale["results"] if r["lib"] == "ranklens-encoded"), None)
    if enc is not None:
        print()
        if enc["status"] != "ok":
            print(f"ranklens-encoded: {enc['status']}: {enc.get('note', '')}")
            return
        extra = enc["extra"]
        print(
            f"ranklens evaluate() on prebuilt Qrels/Run (from_dict {extra['from_dict_s']:.2f}s "
            f"after a {extra['parse_s']:.2f}s parse; best of {scale['repeat']}; peak "
            f"{_fmt(enc.get('peak_rss_mib'), ',.0f')} MiB)"
            + (f" [{enc['note']}]" if enc.get("note") else "")
        )
        print(f"{'metrics':>8}{'threads':>8}{'eval s':>9}{'run rows/s':>14}{'queries/s':>12}")
        for v in extra["variants"]:
            print(
                f"{v['metrics']:>8}{v['threads']:>8}{v['eval_s']:>9.3f}"
                f"{_fmt(v['run_rows_per_s'], ',.0f'):>14}{_fmt(v['queries_per_s'], ',.0f'):>12}"
            )


def parent_main(args) -> int:
    unknown = [lib for lib in args.libs if lib not in CHILDREN]
    if unknown:
        print(f"unknown libraries: {', '.join(unknown)} (known: {DEFAULT_LIBS})")
        return 2
    report = {
        "machine": {
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
        },
        "args": {
            "scales": args.scales,
            "docs_per_query": args.docs_per_query,
            "judged_per_query": args.judged_per_query,
            "seed": args.seed,
            "metric_set": args.metric_set,
            "libs": args.libs,
            "repeat": args.repeat,
            "threads": args.threads,
            "encoded_metrics": args.encoded_metrics,
        },
        "scales": [],
    }
    for n in args.scales:
        qrels, run = ensure_data(
            args.data_dir, n, args.docs_per_query, args.judged_per_query, args.seed
        )
        print(f"scale {n:,} queries:", flush=True)
        with tempfile.TemporaryDirectory(prefix="ranklens-bench-") as workdir:
            results = [run_child(lib, qrels, run, args, workdir) for lib in args.libs]
            ok = {r["lib"]: r for r in results if r["status"] == "ok"}
            baseline = next((b for b in ("ranklens-file", "ranklens-dict") if b in ok), None)
            agreement = {}
            if "pytrec_eval" in ok:
                for lib in ("ranklens-dict", "ranklens-file", "ranklens-stream"):
                    if lib in ok:
                        agreement[lib] = compare(ok["pytrec_eval"], ok[lib])
            for r in results:
                r.pop("per_query_file", None)
        scale = {
            "n_queries": n,
            "docs_per_query": args.docs_per_query,
            "run_rows": n * args.docs_per_query,
            "metric_set": args.metric_set,
            "repeat": args.repeat,
            "baseline": baseline,
            "results": results,
            "agreement": agreement,
        }
        report["scales"].append(scale)
        print_scale(scale)
        print()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
        print(f"wrote {args.json}")
    return 0


def _int_list(text: str) -> list[int]:
    return [int(x.replace("_", "")) for x in text.split(",") if x.strip()]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Benchmark ranklens, pytrec_eval and ranx.")
    p.add_argument(
        "--scales", type=_int_list, default=[10_000], help="query counts, e.g. 10000,100000"
    )
    p.add_argument("--docs-per-query", type=int, default=100)
    p.add_argument("--judged-per-query", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--metric-set", choices=sorted(METRIC_SETS), default="5")
    p.add_argument(
        "--libs",
        type=lambda s: [x.strip() for x in s.split(",") if x.strip()],
        default=ALL_LIBS,
        help=f"comma-separated subset of {DEFAULT_LIBS}",
    )
    p.add_argument("--data-dir", default=DEFAULT_DATA_DIR)
    p.add_argument("--json", help="write every measurement to this JSON file")
    p.add_argument("--repeat", type=int, default=3, help="ranklens-encoded: best of N")
    p.add_argument("--threads", type=_int_list, default=[1, 2], help="ranklens-encoded")
    p.add_argument("--encoded-metrics", type=_int_list, default=[1, 40], help="ranklens-encoded")
    p.add_argument("--timeout", type=float, default=3600.0, help="seconds per child")
    p.add_argument(
        "--mem-limit-gib",
        type=float,
        default=20.0,
        help="kill a child whose resident memory exceeds this (reported as killed)",
    )
    p.add_argument("--no-compare", action="store_true", help="skip the per-query comparison")
    # Child mode (internal).
    p.add_argument("--child", dest="lib", help=argparse.SUPPRESS)
    p.add_argument("--qrels", help=argparse.SUPPRESS)
    p.add_argument("--run", help=argparse.SUPPRESS)
    p.add_argument("--result", help=argparse.SUPPRESS)
    p.add_argument("--dump", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.lib:
        return child_main(args)
    return parent_main(args)


if __name__ == "__main__":
    sys.exit(main())
