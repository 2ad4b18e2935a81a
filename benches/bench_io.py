"""Benchmark loading: TREC files and data frames into ranklens, ranx and dicts.

Usage::

    python benches/bench_io.py --queries 100000 [--libs ...] [--repeat N] [--json OUT]

The data are those of ``run_bench.py`` (``gen_data.py``, cached under
``benches/.data/``): a run of ``queries x 100`` lines and qrels of
``queries x 10`` lines, plus gzip copies made once into the same directory.
Every measurement runs in its own fresh process (``python bench_io.py --child
METHOD --input INPUT ...``), which imports the library, warms it up on tiny data,
builds the input frame if there is one, and then times the load alone.  It
reports the seconds, the throughput (input bytes / s and rows / s) and the peak
RSS (``ru_maxrss``), both in total and above the process's RSS just before the
load.  The table's ``x`` column is the row's time / ranklens's time on the same
input.  See ``benches/README.md`` ("Loading") for the rows and the caveats.
"""

from __future__ import annotations

import argparse
import gc
import gzip
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

from run_bench import (
    DEFAULT_DATA_DIR,
    Skip,
    _fmt,
    _import,
    _tiny_files,
    ensure_data,
    warm_page_cache,
)

DOCS_PER_QUERY = 100
JUDGED_PER_QUERY = 10
FILE_INPUTS = ["run", "run.gz", "qrels", "qrels.gz"]
ALL_INPUTS = [*FILE_INPUTS, "frame"]
ALL_LIBS = ["ranklens", "ranx", "python", "floor"]
# (input kind, method, library, label); the first ranklens row of an input is its baseline.
FILE_METHODS = [
    ("ranklens", "ranklens", "ranklens {cls}.from_trec"),
    ("ranx", "ranx", "ranx {cls}.from_file"),
    ("python", "python", "python dict loop"),
    ("floor", "floor", "{floor} > /dev/null"),
]
FRAME_METHODS = [
    ("ranklens-pandas", "ranklens", "ranklens Run.from_pandas (str)"),
    ("ranklens-pandas-object", "ranklens", "ranklens Run.from_pandas (object)"),
    ("ranklens-arrow", "ranklens", "ranklens Run.from_arrow"),
    ("ranx-df", "ranx", "ranx Run.from_df (object)"),
]
COLUMNS = ["query_id", "doc_id", "score"]


# --------------------------------------------------------------------------
# Child side: one measurement, one process.
# --------------------------------------------------------------------------


def maxrss_kib() -> int:
    """ru_maxrss of this process, in KiB."""
    kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kib if sys.platform != "darwin" else kib // 1024


def peak_kib() -> int:
    """Peak RSS in KiB: ``VmHWM`` where there is one, else ``ru_maxrss``.

    They are the same high-water mark, except that Linux's ``ru_maxrss`` never
    drops below the peak of the process image that exec replaced (here the
    parent's, a vfork), and so hides a child's peak below the parent's.
    """
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return maxrss_kib()


def reset_peak() -> bool:
    """Reset this process's peak RSS to its current RSS (Linux >= 4.0), so that
    the peak measured next belongs to the load, not to the set-up before it."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def parse_python(path: str, kind: str) -> dict:
    """The plain-Python loop users write to feed pytrec_eval."""
    opener = gzip.open if path.endswith(".gz") else open
    out: dict[str, dict] = {}
    with opener(path, "rt") as f:
        if kind == "run":
            for line in f:
                q, _, d, _, s, _ = line.split()
                out.setdefault(q, {})[d] = float(s)
        else:
            for line in f:
                q, _, d, label = line.split()
                out.setdefault(q, {})[d] = int(label)
    return out


def read_table(path: str):
    """The run file as a pyarrow Table of (query_id, doc_id, score), ids as strings."""
    import pyarrow as pa
    from pyarrow import csv

    names = ["query_id", "iter", "doc_id", "rank", "score", "tag"]
    return csv.read_csv(
        path,
        read_options=csv.ReadOptions(column_names=names, block_size=1 << 26),
        parse_options=csv.ParseOptions(delimiter=" "),
        convert_options=csv.ConvertOptions(
            include_columns=COLUMNS,
            column_types={"query_id": pa.string(), "doc_id": pa.string(), "score": pa.float64()},
        ),
    )


def _as_object(df):
    for c in ("query_id", "doc_id"):
        df[c] = df[c].astype(object)
    return df


def _tiny_table():
    import pyarrow as pa

    return pa.table({"query_id": ["q1", "q1"], "doc_id": ["d1", "d2"], "score": [0.5, 0.25]})


def _file_loader(args, out: dict):
    """(warm-up, load) callables for a file input."""
    kind = "run" if args.input.startswith("run") else "qrels"
    gz = args.input.endswith(".gz")
    if args.method == "ranklens":
        ranklens, out["import_s"], out["version"] = _import("ranklens", "ranklens")
        cls = ranklens.Run if kind == "run" else ranklens.Qrels
        if not hasattr(cls, "from_trec"):
            raise Skip("skipped", f"ranklens.{cls.__name__}.from_trec is missing")
        return cls.from_trec, cls.from_trec
    if args.method == "ranx":
        ranx, out["import_s"], out["version"] = _import("ranx", "ranx")
        cls = ranx.Run if kind == "run" else ranx.Qrels
        return (
            lambda p: cls.from_file(p, kind="trec"),
            lambda p: cls.from_file(p, kind="gz" if gz else "trec"),
        )
    if args.method == "python":
        out["import_s"], out["version"] = 0.0, platform.python_version()
        return (lambda p: parse_python(p, kind)), (lambda p: parse_python(p, kind))
    raise SystemExit(f"unknown method {args.method!r} for input {args.input!r}")


def _frame_loader(args, out: dict):
    """(warm-up, load, input) for the frame input; the frame is built here, untimed."""
    if args.method.startswith("ranklens"):
        ranklens, out["import_s"], out["version"] = _import("ranklens", "ranklens")
        meth = "from_arrow" if args.method == "ranklens-arrow" else "from_pandas"
        if not hasattr(ranklens.Run, meth):
            raise Skip("skipped", f"ranklens.Run.{meth} is missing")
        load = getattr(ranklens.Run, meth)
    elif args.method == "ranx-df":
        ranx, out["import_s"], out["version"] = _import("ranx", "ranx")
        if not hasattr(ranx.Run, "from_df"):
            raise Skip("skipped", "ranx.Run.from_df is missing")

        def load(df):
            return ranx.Run.from_df(df, q_id_col="query_id", doc_id_col="doc_id", score_col="score")

    else:
        raise SystemExit(f"unknown method {args.method!r} for input 'frame'")
    _import("pyarrow", "pyarrow")
    t0 = time.perf_counter()
    table = read_table(args.path)
    out["input_bytes"] = table.nbytes
    tiny = _tiny_table()
    if args.method != "ranklens-arrow":
        _import("pandas", "pandas")
        frame = table.to_pandas()
        tiny = tiny.to_pandas()
        if args.method != "ranklens-pandas":  # ranx.Run.from_df requires object columns
            frame, tiny = _as_object(frame), _as_object(tiny)
        out["dtypes"] = {c: str(frame[c].dtype) for c in COLUMNS}
        del table
    else:
        frame = table
        out["dtypes"] = {c: str(frame.schema.field(c).type) for c in COLUMNS}
    out["build_s"] = time.perf_counter() - t0
    return (lambda _: load(tiny)), load, frame


def child_main(args) -> int:
    out: dict = {"input": args.input, "method": args.method, "status": "ok", "note": ""}
    try:
        if args.method == "floor":
            gz = args.input.endswith(".gz")
            cmd = ["gzip", "-dc", args.path] if gz else ["cat", args.path]
            t0 = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
            out["seconds"] = time.perf_counter() - t0
            # The peak of the cat / gzip process alone.
            out["peak_kib"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            out["base_kib"] = 0
        else:
            if args.input == "frame":
                warm, load, source = _frame_loader(args, out)
            else:
                warm, load = _file_loader(args, out)
                source = args.path
            t0 = time.perf_counter()
            if args.method != "python":
                tiny_qrels, tiny_run = _tiny_files()
                warm(tiny_run if args.input.startswith(("run", "frame")) else tiny_qrels)
                shutil.rmtree(os.path.dirname(tiny_qrels), ignore_errors=True)
            out["warmup_s"] = time.perf_counter() - t0
            gc.collect()
            out["peak_before_reset_kib"] = peak_kib()
            out["peak_reset"] = reset_peak()
            out["base_kib"] = peak_kib()
            out["base_ru_maxrss_kib"] = maxrss_kib()
            t0 = time.perf_counter()
            obj = load(source)
            out["seconds"] = time.perf_counter() - t0
            out["peak_kib"] = peak_kib()
            out["ru_maxrss_kib"] = maxrss_kib()
            out["n_queries"] = len(obj)
    except Skip as s:
        out.update(status=s.status, note=s.note)
    except Exception as e:
        out.update(status="error", note=f"{type(e).__name__}: {e}")
        out["traceback"] = traceback.format_exc()
    with open(args.result, "w") as f:
        json.dump(out, f)
    return 0


# --------------------------------------------------------------------------
# Parent side: data, children, table.
# --------------------------------------------------------------------------


def ensure_gz(path: str) -> str:
    """A gzip copy of ``path`` next to it (made once, default level)."""
    gz = path + ".gz"
    if os.path.exists(gz):
        return gz
    print(f"compressing {path} ...", end=" ", flush=True)
    t0 = time.perf_counter()
    tmp = gz + ".tmp"
    if shutil.which("gzip"):
        with open(tmp, "wb") as f:
            subprocess.run(["gzip", "-c", path], stdout=f, check=True)
    else:
        with open(path, "rb") as src, gzip.open(tmp, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 22)
    os.replace(tmp, gz)
    print(f"{time.perf_counter() - t0:.1f}s", flush=True)
    return gz


def run_child(method: str, inp: str, path: str, args, workdir: str) -> dict:
    result = os.path.join(workdir, f"{inp}-{method}.json")
    cmd = [sys.executable, os.path.abspath(__file__), "--child", method]
    cmd += ["--input", inp, "--path", path, "--result", result]
    if os.path.exists(result):
        os.remove(result)
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
        rc, stderr = proc.returncode, proc.stderr
    except subprocess.TimeoutExpired:
        rc, stderr = None, ""
    wall = time.perf_counter() - start
    if rc is None:
        out = {"status": "timeout", "note": f"over {args.timeout:g}s"}
    elif os.path.exists(result):
        with open(result) as f:
            out = json.load(f)
    else:
        tail = stderr.strip().splitlines()[-1:] if stderr else []
        out = {
            "status": "error",
            "note": f"child exited with {rc}" + (f": {tail[0]}" if tail else ""),
        }
    out.update(input=inp, method=method, process_wall_s=wall)
    return out


def head_copy(path: str, workdir: str, lines: int = 2000) -> str:
    """The first lines of a TREC file (gzipped again for a .gz), in ``workdir``."""
    out = os.path.join(workdir, "head-" + os.path.basename(path))
    if not os.path.exists(out):
        opener = gzip.open if path.endswith(".gz") else open
        with opener(path, "rb") as src, opener(out, "wb") as dst:
            for i, line in enumerate(src):
                if i == lines:
                    break
                dst.write(line)
    return out


def measure(method: str, inp: str, path: str, args, workdir: str, prime: bool) -> dict:
    """Best of ``--repeat`` fresh children (the fastest child's whole result).

    ``prime``: first run the same child, untimed, on the file's first lines.  ranx
    compiles numba code in its loaders and caches it on disk; its in-process
    warm-up on tiny files does not reach every kernel the real load runs, so
    without this the first ranx row would include compilation (seconds to tens
    of seconds) when numba's cache is cold.
    """
    best = None
    print(f"  {inp:<9}{method:<24}", end="", flush=True)
    if prime:
        r = run_child(method, inp, head_copy(path, workdir), args, workdir)
        print(f" (primed: {r['status']}, {r['process_wall_s']:.1f}s)", end="", flush=True)
    for _ in range(args.repeat):
        r = run_child(method, inp, path, args, workdir)
        print(f" {_fmt(r.get('seconds'), '.2f', r['status'])}", end="", flush=True)
        if r["status"] != "ok":
            best = best or r
            break
        if best is None or best["status"] != "ok" or r["seconds"] < best["seconds"]:
            best = r
    print(flush=True)
    assert best is not None
    return best


def plan(args, paths: dict[str, str]) -> list[tuple[str, str, str, str]]:
    """(input, method, lib, label) of every row to measure, in table order."""
    rows = []
    for inp in args.inputs:
        if inp == "frame":
            rows += [(inp, m, lib, label) for m, lib, label in FRAME_METHODS if lib in args.libs]
            continue
        cls = "Run" if inp.startswith("run") else "Qrels"
        floor = "gzip -dc" if inp.endswith(".gz") else "cat"
        for m, lib, label in FILE_METHODS:
            if lib in args.libs:
                rows.append((inp, m, lib, label.format(cls=cls, floor=floor)))
    return rows


def print_table(report: dict) -> None:
    inputs = report["inputs"]
    print()
    for inp, info in inputs.items():
        print(
            f"{inp:<9}{info['description']}: {info['rows']:,} rows, "
            f"{info['bytes'] / 2**20:,.0f} MiB ({info['bytes_what']})"
        )
    head = (
        f"{'input':<9}{'reader':<36}{'s':>8}{'MB/s':>8}{'rows/s':>12}"
        f"{'peak MiB':>10}{'+MiB':>8}{'x':>7}  note"
    )
    print(head)
    print("-" * len(head))
    for inp in inputs:
        rows = [r for r in report["results"] if r["input"] == inp]
        base = next((r for r in rows if r["lib"] == "ranklens" and r["status"] == "ok"), None)
        for r in rows:
            if r["status"] != "ok":
                print(f"{inp:<9}{r['label']:<36}{r['status']:>8}  {r.get('note', '')}")
                continue
            s = r["seconds"]
            nbytes = r.get("input_bytes", inputs[inp]["bytes"])
            ratio = f"{s / base['seconds']:.1f}x" if base and base["seconds"] > 0 else "-"
            peak = r["peak_kib"] / 1024
            delta = (r["peak_kib"] - r["base_kib"]) / 1024
            notes = [r["note"]] if r.get("note") else []
            if r["method"] == "floor":
                notes.append(f"peak of {r['label'].split()[0]} alone")
            elif not r.get("peak_reset", True):
                notes.append("peak not reset before the load")
            print(
                f"{inp:<9}{r['label']:<36}{s:>8.2f}{nbytes / 1e6 / s:>8.0f}"
                f"{inputs[inp]['rows'] / s:>12,.0f}{peak:>10,.0f}{delta:>8,.0f}{ratio:>7}"
                f"  {'; '.join(notes)}"
            )
    print(
        f"(best of {report['args']['repeat']} fresh processes; MB/s = input bytes / s, "
        "1 MB = 1e6 bytes; +MiB = peak RSS - RSS before the load; "
        "x = time / the input's first ranklens row)"
    )


def parent_main(args) -> int:
    unknown = [x for x in args.libs if x not in ALL_LIBS]
    unknown += [x for x in args.inputs if x not in ALL_INPUTS]
    if unknown:
        print(f"unknown: {', '.join(unknown)} (libs: {ALL_LIBS}; inputs: {ALL_INPUTS})")
        return 2
    qrels, run = ensure_data(
        args.data_dir, args.queries, DOCS_PER_QUERY, JUDGED_PER_QUERY, args.seed
    )
    paths = {"run": run, "qrels": qrels}
    if any(i.endswith(".gz") for i in args.inputs):
        paths["run.gz"], paths["qrels.gz"] = ensure_gz(run), ensure_gz(qrels)
    paths["frame"] = run
    n_run, n_qrels = args.queries * DOCS_PER_QUERY, args.queries * JUDGED_PER_QUERY
    inputs = {}
    for inp in args.inputs:
        path = paths[inp]
        info = {"path": path, "bytes": os.path.getsize(path), "bytes_what": "file size"}
        if inp == "frame":
            info.update(rows=n_run, description="pyarrow Table / pandas DataFrame of run.txt")
            info["bytes_what"] = "run.txt; MB/s below uses the Table's nbytes"
        else:
            info.update(
                rows=n_run if inp.startswith("run") else n_qrels,
                description=os.path.basename(path),
            )
        inputs[inp] = info
    report = {
        "machine": {
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
        },
        "args": {
            "queries": args.queries,
            "libs": args.libs,
            "inputs": args.inputs,
            "repeat": args.repeat,
            "timeout": args.timeout,
        },
        "inputs": inputs,
        "results": [],
    }
    with tempfile.TemporaryDirectory(prefix="ranklens-bench-io-") as workdir:
        warmed = set()
        for inp, method, lib, label in plan(args, paths):
            if paths[inp] not in warmed:  # warm page cache: every row reads from memory
                warm_page_cache(paths[inp])
                warmed.add(paths[inp])
            r = measure(method, inp, paths[inp], args, workdir, prime=lib == "ranx")
            r.update(lib=lib, label=label)
            report["results"].append(r)
    print_table(report)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
        print(f"wrote {args.json}")
    return 0


def _list(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--queries", type=int, default=100_000, help="scale (run lines = 100 x this)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--libs", type=_list, default=ALL_LIBS, help=f"subset of {','.join(ALL_LIBS)}")
    p.add_argument(
        "--inputs", type=_list, default=ALL_INPUTS, help=f"subset of {','.join(ALL_INPUTS)}"
    )
    p.add_argument("--repeat", type=int, default=1, help="best of N fresh processes")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per child process")
    p.add_argument("--data-dir", default=DEFAULT_DATA_DIR)
    p.add_argument("--json", help="write every measurement to this JSON file")
    # Child side (internal).
    p.add_argument("--child", metavar="METHOD", help=argparse.SUPPRESS)
    p.add_argument("--input", help=argparse.SUPPRESS)
    p.add_argument("--path", help=argparse.SUPPRESS)
    p.add_argument("--result", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        args.method = args.child
        return child_main(args)
    return parent_main(args)


if __name__ == "__main__":
    sys.exit(main())
