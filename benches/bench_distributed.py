"""A 10M-row run scored by a 2-worker Dask LocalCluster and by local[2] Spark, against one process.

The TREC files (``gen_data.py``; 100,000 queries x 100 documents by default) are
converted once to Parquet in a cache directory: the run's rows in a random order
spread over ``--files`` files, so the rows of every query sit in every file (the
case the engines must group), and the qrels in one file.  Then each measurement
runs in its own fresh Python process:

* ``single-trec``: ``evaluate(Qrels.from_trec, Run.from_trec)`` in one process;
* ``single-parquet``: ``evaluate`` of ``Qrels.from_parquet`` and ``Run.from_arrow``
  of the Parquet files read by pyarrow (same rows);
* ``dask-broadcast`` / ``dask-join``: ``ranklens.dask.evaluate`` on
  ``dd.read_parquet`` with the qrels broadcast (a pandas frame) or shuffled with
  the run (a Dask frame, ``broadcast_limit=0``), on ``LocalCluster(n_workers=2,
  threads_per_worker=1, processes=True)``;
* ``spark-broadcast`` / ``spark-cogroup``: ``ranklens.spark.evaluate`` on
  ``spark.read.parquet`` in a ``local[2]`` session.

Wall time covers reading the data, grouping, scoring and combining into Results
(not starting the cluster or the session).  Every result is checked against the
single-process one (per-query values and aggregates, bit for bit).

Memory, and what each figure covers:

* single: peak RSS (``VmHWM``) of the process;
* dask: peak RSS of each worker process (``ru_maxrss`` asked of the workers with
  ``client.run``; the nannies and the scheduler are not counted) and of the
  client process, which combines the per-query rows;
* spark: peak RSS of the JVM (driver and executor are one JVM in local mode:
  Spark's shuffle, the Arrow buffers on the JVM side) and of each Python worker
  process alive at the end (``VmHWM`` from /proc; Spark reuses its Python
  workers, so these are the ones that ran the grouped maps), and of the driver's
  Python process;
* combine: ``combine`` alone, on synthetic per-query rows of ``--combine-queries``
  queries (10M by default, the query count of a 1B-row run): the driver's time and
  peak RSS for that step.

Spark's shuffle bytes (written, read) come from its status REST API (the UI is on
for that, the console progress bar off).

CPU: user + system seconds of the worker processes (dask: the workers; spark: the
JVM and the Python workers), for the per-row cost a cluster plan needs.

Usage::

    python benches/bench_distributed.py --data benches/.data/q100000_d100_j10_s0 \\
        --json /tmp/dist.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
METRICS = ["ndcg@10", "map", "recall@100", "P@10", "mrr@10"]
ENGINES = [
    "single-trec",
    "single-parquet",
    "dask-broadcast",
    "dask-join",
    "spark-broadcast",
    "spark-cogroup",
    "combine",
]


# -- measurements of processes ------------------------------------------------------------------
def vmhwm_kib(pid: int | str = "self") -> int:
    """Peak RSS (``VmHWM``) of a process, in KiB (Linux); 0 if unreadable."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def worker_usage() -> dict[str, float]:
    """Run inside a Dask worker: its peak RSS (KiB) and CPU seconds so far."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return {"peak_kib": max(ru.ru_maxrss, vmhwm_kib()), "cpu_s": ru.ru_utime + ru.ru_stime}


# -- data -----------------------------------------------------------------------------------------
def ensure_parquet(data: Path, cache: Path, files: int, seed: int) -> tuple[Path, Path, int]:
    """The run as ``files`` Parquet files of shuffled rows, and the qrels as one file."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    run_dir, qrels_file = cache / "run", cache / "qrels.parquet"
    done = cache / "done.json"
    if done.exists():
        meta = json.loads(done.read_text())
        if meta.get("files") == files and meta.get("source") == str(data):
            return run_dir, qrels_file, int(meta["rows"])
    t0 = time.perf_counter()
    cache.mkdir(parents=True, exist_ok=True)
    opts = pacsv.ParseOptions(delimiter=" ")

    def read(path: Path, names: list[str], types: dict[str, Any]) -> Any:
        read_opts = pacsv.ReadOptions(column_names=names, block_size=64 << 20)
        conv = pacsv.ConvertOptions(column_types=types, include_columns=list(types))
        return pacsv.read_csv(
            path, read_options=read_opts, parse_options=opts, convert_options=conv
        )

    run = read(
        data / "run.txt",
        ["query_id", "q0", "doc_id", "rank", "score", "tag"],
        {"query_id": pa.string(), "doc_id": pa.string(), "score": pa.float64()},
    )
    qrels = read(
        data / "qrels.txt",
        ["query_id", "iter", "doc_id", "relevance"],
        {"query_id": pa.string(), "doc_id": pa.string(), "relevance": pa.int64()},
    )
    order = np.random.default_rng(seed).permutation(run.num_rows)
    run = run.take(pa.array(order))
    run_dir.mkdir(exist_ok=True)
    for old in run_dir.glob("*.parquet"):
        old.unlink()
    step = -(-run.num_rows // files)
    for i in range(files):
        pq.write_table(run.slice(i * step, step), run_dir / f"part-{i:04d}.parquet")
    pq.write_table(qrels, qrels_file)
    done.write_text(json.dumps({"files": files, "source": str(data), "rows": run.num_rows}))
    print(f"parquet written to {cache} in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    return run_dir, qrels_file, run.num_rows


def shuffled_bytes_per_row(run_dir: Path) -> dict[str, float]:
    """Bytes per row of the columns the engines shuffle, in Arrow's layout (large
    strings: 8-byte offsets plus the id bytes; the score as 8 bytes), and on disk."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(run_dir)
    rows = table.num_rows
    q = table.column("query_id").cast(pa.large_string())
    d = table.column("doc_id").cast(pa.large_string())
    arrow = (q.nbytes + d.nbytes + table.column("score").nbytes) / rows
    disk = sum(f.stat().st_size for f in run_dir.glob("*.parquet")) / rows
    return {
        "rows": rows,
        "arrow_bytes_per_row": arrow,
        "query_id_bytes_per_row": q.nbytes / rows,
        "doc_id_bytes_per_row": d.nbytes / rows,
        "parquet_bytes_per_row": disk,
    }


# -- one measurement (child process) ------------------------------------------------------------
def child(engine: str, args: argparse.Namespace) -> dict[str, Any]:
    import numpy as np

    import ranklens
    from ranklens import Qrels, Run

    out: dict[str, Any] = {"engine": engine}
    cpu0 = worker_usage()["cpu_s"]
    cache = Path(args.cache)
    run_dir, qrels_file = cache / "run", cache / "qrels.parquet"
    if engine == "single-trec":
        t0 = time.perf_counter()
        q = Qrels.from_trec(Path(args.data) / "qrels.txt")
        r = Run.from_trec(Path(args.data) / "run.txt")
        t1 = time.perf_counter()
        res = ranklens.evaluate(q, r, METRICS)
        t2 = time.perf_counter()
        out.update(wall_s=t2 - t0, load_s=t1 - t0, evaluate_s=t2 - t1, rows=r.num_rows)
    elif engine == "single-parquet":
        t0 = time.perf_counter()
        import pyarrow.parquet as pq

        q = Qrels.from_parquet(qrels_file)
        r = Run.from_arrow(pq.read_table(run_dir, columns=["query_id", "doc_id", "score"]))
        t1 = time.perf_counter()
        res = ranklens.evaluate(q, r, METRICS)
        t2 = time.perf_counter()
        out.update(wall_s=t2 - t0, load_s=t1 - t0, evaluate_s=t2 - t1, rows=r.num_rows)
    elif engine == "combine":
        res = combine_only(args, out)
        out["driver_peak_kib"] = vmhwm_kib()
        return out
    elif engine.startswith("dask"):
        res = _dask(engine, run_dir, qrels_file, args, out)
    else:
        res = _spark(engine, run_dir, qrels_file, args, out)
    out["driver_peak_kib"] = vmhwm_kib()
    if engine.startswith("single"):
        out["cpu_s"] = worker_usage()["cpu_s"] - cpu0
    out["aggregates"] = res.to_dict()
    np.save(Path(args.workdir) / f"{engine}.npy", res.values)
    Path(args.workdir, f"{engine}.ids.json").write_text(
        json.dumps([res.query_ids, res.missing_queries, res.ignored_queries])
    )
    return out


def _dask(engine: str, run_dir: Path, qrels_file: Path, args: Any, out: dict) -> Any:
    import logging

    import dask.dataframe as dd
    import pandas as pd
    from distributed import Client, LocalCluster

    import ranklens.dask

    cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        silence_logs=logging.ERROR,
    )
    client = Client(cluster)
    before = client.run(worker_usage)
    t0 = time.perf_counter()
    run = dd.read_parquet(str(run_dir))
    if engine == "dask-broadcast":
        qrels = pd.read_parquet(qrels_file)
        res = ranklens.dask.evaluate(qrels, run, METRICS, npartitions=args.partitions)
    else:
        qrels = dd.read_parquet(str(qrels_file)).repartition(npartitions=4)
        res = ranklens.dask.evaluate(
            qrels, run, METRICS, npartitions=args.partitions, broadcast_limit=0
        )
    out["wall_s"] = time.perf_counter() - t0
    after = client.run(worker_usage)
    out["workers"] = [
        {
            "peak_kib": after[w]["peak_kib"],
            "start_peak_kib": before[w]["peak_kib"],
            "cpu_s": after[w]["cpu_s"] - before[w]["cpu_s"],
        }
        for w in sorted(after)
    ]
    out["input_partitions"] = run.npartitions
    client.close()
    cluster.close()
    return res


def _spark(engine: str, run_dir: Path, qrels_file: Path, args: Any, out: dict) -> Any:
    import psutil
    from pyspark.sql import SparkSession

    import ranklens.spark

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    spark = (
        SparkSession.builder.master("local[2]")
        .config("spark.sql.shuffle.partitions", str(args.partitions))
        .config("spark.driver.memory", args.spark_memory)
        .config("spark.ui.enabled", "true")  # its REST API reports the shuffle bytes
        .config("spark.ui.showConsoleProgress", "false")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    me = psutil.Process()

    def cpu() -> dict[int, float]:
        return {p.pid: sum(p.cpu_times()[:2]) for p in me.children(recursive=True)}

    before = cpu()
    t0 = time.perf_counter()
    run = spark.read.parquet(str(run_dir))
    if engine == "spark-broadcast":
        qrels = spark.read.parquet(str(qrels_file))
        res = ranklens.spark.evaluate(qrels, run, METRICS)
    else:
        qrels = spark.read.parquet(str(qrels_file))
        res = ranklens.spark.evaluate(qrels, run, METRICS, broadcast_limit=0)
    out["wall_s"] = time.perf_counter() - t0
    after = cpu()
    procs = []
    for p in me.children(recursive=True):
        try:
            exe = Path(p.cmdline()[0]).name
            parent = " ".join(p.parent().cmdline())
        except (psutil.Error, IndexError):
            continue
        # Python workers are forked by the pyspark.daemon process, itself a JVM child.
        kind = "jvm" if exe == "java" else "python"
        if kind == "python":
            kind = "python-worker" if "pyspark.daemon" in parent else "python-daemon"
        procs.append(
            {
                "kind": kind,
                "peak_kib": vmhwm_kib(p.pid),
                "cpu_s": after.get(p.pid, 0.0) - before.get(p.pid, 0.0),
            }
        )
    out["processes"] = procs
    out["shuffle"] = spark_shuffle_bytes(spark)
    out["input_partitions"] = run.rdd.getNumPartitions()
    spark.stop()
    return res


def spark_shuffle_bytes(spark: Any) -> dict[str, int]:
    """Shuffle bytes written and read by every stage, from the status REST API."""
    import urllib.request

    sc = spark.sparkContext
    url = f"{sc.uiWebUrl}/api/v1/applications/{sc.applicationId}/stages"
    with urllib.request.urlopen(url, timeout=30) as f:
        stages = json.load(f)
    return {
        "write_bytes": sum(st.get("shuffleWriteBytes", 0) for st in stages),
        "write_records": sum(st.get("shuffleWriteRecords", 0) for st in stages),
        "read_bytes": sum(st.get("shuffleReadBytes", 0) for st in stages),
    }


def combine_only(args: argparse.Namespace, out: dict[str, Any]) -> Any:
    """The driver's share alone: ``combine`` of synthetic per-query rows for
    ``--combine-queries`` queries (the 1B-row plan has 10M), in 20 parts."""
    import numpy as np
    import pandas as pd

    from ranklens import _distributed as dist

    n, nm = args.combine_queries, len(METRICS)
    plan = dist.make_plan(METRICS)
    rng = np.random.default_rng(0)
    parts = []
    ids = np.array([f"q{i:09d}" for i in rng.permutation(n)], dtype=object)
    for chunk in np.array_split(np.arange(n), 20):
        frame = pd.DataFrame(rng.random((len(chunk), nm)), columns=plan.value_columns)
        frame.insert(0, dist.STATUS, pd.array([dist.SCORED] * len(chunk), dtype="string[pyarrow]"))
        frame.insert(0, dist.QUERY, pd.array(ids[chunk], dtype="string[pyarrow]"))
        parts.append(frame)
    del ids
    before = vmhwm_kib()
    t0 = time.perf_counter()
    res = dist.combine(parts, plan)
    out.update(wall_s=time.perf_counter() - t0, rows=n, parts_peak_kib=before)
    return res


# -- the parent -----------------------------------------------------------------------------------
def compare(workdir: Path, engine: str, ref: str = "single-trec") -> bool:
    import numpy as np

    a, b = np.load(workdir / f"{engine}.npy"), np.load(workdir / f"{ref}.npy")
    ids_a = json.loads((workdir / f"{engine}.ids.json").read_text())
    ids_b = json.loads((workdir / f"{ref}.ids.json").read_text())
    return bool(np.array_equal(a, b)) and ids_a == ids_b


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=str(HERE / ".data" / "q100000_d100_j10_s0"))
    p.add_argument("--cache", default=None, help="Parquet cache (default: under .data)")
    p.add_argument("--files", type=int, default=20, help="Parquet files of the run")
    p.add_argument("--partitions", type=int, default=20, help="partitions / buckets")
    p.add_argument("--engines", default=",".join(ENGINES))
    p.add_argument("--spark-memory", default="4g", help="spark.driver.memory (local mode)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--combine-queries",
        type=int,
        default=10_000_000,
        help="queries of the 'combine' measurement (driver memory of combine alone)",
    )
    p.add_argument("--json", default=None)
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    p.add_argument("--workdir", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    data = Path(args.data)
    args.cache = args.cache or str(HERE / ".data" / f"parquet_{data.name}_f{args.files}")
    if args.child:
        print(json.dumps(child(args.child, args)))
        return 0

    if not (data / "run.txt").exists():
        sys.path.insert(0, str(HERE))
        from gen_data import main as gen_main

        q, d, j, s = (x[1:] for x in data.name.split("_"))  # q100000_d100_j10_s0
        flags = ["--queries", q, "--docs-per-query", d, "--judged-per-query", j, "--seed", s]
        gen_main([*flags, "--out", str(data)])
    run_dir, _, rows = ensure_parquet(data, Path(args.cache), args.files, args.seed)
    sizes = shuffled_bytes_per_row(run_dir)
    report: dict[str, Any] = {
        "machine": {"nproc": os.cpu_count(), "platform": platform.platform()},
        "metrics": METRICS,
        "args": {k: v for k, v in vars(args).items() if k not in ("child", "workdir")},
        "sizes": sizes,
        "results": [],
    }
    engines = args.engines.split(",")
    if "single-trec" not in engines:
        engines = ["single-trec", *engines]
    with tempfile.TemporaryDirectory() as work:
        for engine in engines:
            cmd = [sys.executable, __file__, "--child", engine, "--workdir", work]
            cmd += ["--data", str(data), "--cache", args.cache, "--files", str(args.files)]
            cmd += ["--partitions", str(args.partitions), "--spark-memory", args.spark_memory]
            cmd += ["--combine-queries", str(args.combine_queries)]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                print(f"{engine}: failed\n{proc.stderr[-3000:]}", file=sys.stderr)
                continue
            res = json.loads(proc.stdout.strip().splitlines()[-1])
            res["same_as_single"] = engine == "combine" or compare(Path(work), engine)
            report["results"].append(res)
            print(summary(res, rows), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1))
    print(json.dumps(sizes))
    return 0


def summary(r: dict[str, Any], rows: int) -> str:
    mib = 1024
    line = (
        f"{r['engine']:<16} wall {r['wall_s']:6.1f} s  {r['wall_s'] / rows * 1e9:6.0f} ns/row  "
        f"driver peak {r['driver_peak_kib'] / mib:6.0f} MiB  same: {r['same_as_single']}"
    )
    if r["engine"] == "combine":
        return (
            f"combine          {r['rows']:,} queries: {r['wall_s']:.1f} s, driver peak "
            f"{r['driver_peak_kib'] / mib:.0f} MiB (per-query rows alone "
            f"{r['parts_peak_kib'] / mib:.0f} MiB)"
        )
    if "evaluate_s" in r:
        line += f"  (load {r['load_s']:.1f} s, evaluate {r['evaluate_s']:.2f} s)"
        line += f"  cpu {r['cpu_s']:.1f} s ({r['cpu_s'] / rows * 1e9:.0f} ns/row)"
    if "workers" in r:
        peaks = ", ".join(
            f"{w['peak_kib'] / mib:.0f} (idle {w['start_peak_kib'] / mib:.0f})"
            for w in r["workers"]
        )
        cpu = sum(w["cpu_s"] for w in r["workers"])
        line += f"  workers peak [{peaks}] MiB, cpu {cpu:.1f} s ({cpu / rows * 1e9:.0f} ns/row)"
    if "shuffle" in r:
        sh = r["shuffle"]
        line += f"  shuffle write {sh['write_bytes'] / rows:.1f} B/row"
    if "processes" in r:
        jvm = [p["peak_kib"] / mib for p in r["processes"] if p["kind"] == "jvm"]
        py = [p["peak_kib"] / mib for p in r["processes"] if p["kind"] == "python-worker"]
        cpu = sum(p["cpu_s"] for p in r["processes"])
        line += (
            f"  jvm peak {', '.join(f'{x:.0f}' for x in jvm)} MiB, "
            f"python workers peak [{', '.join(f'{x:.0f}' for x in py)}] MiB, "
            f"cpu {cpu:.1f} s ({cpu / rows * 1e9:.0f} ns/row)"
        )
    return line


if __name__ == "__main__":
    sys.exit(main())
