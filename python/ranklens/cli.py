"""The ``ranklens`` command line: TREC files in, a table out.

    ranklens QRELS RUN [RUN ...] -m ndcg@10 -m map [-q] [--format table|tsv|json] [--stream]
    ranklens compare QRELS RUN1 RUN2 ... -m ndcg@10 --test fisher --correction holm
    ranklens trec_eval [-q] [-c] [-m measure[.params]] ... QRELS RUN   (trec_eval 10.0's output)

Exit status: 0 on success, 2 on a usage error, 1 on bad data (one line on
stderr naming the file and line; nothing on stdout).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from ranklens._data import Qrels, Run
from ranklens._evaluate import Results, evaluate
from ranklens._names import parse_metrics
from ranklens._stream import _evaluate_files
from ranklens.errors import RanklensInputError

_DEFAULT_METRICS = ["map", "ndcg", "ndcg@10", "P@10", "recall@100", "mrr", "bpref", "r_precision"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ranklens",
        description="Score TREC runs against TREC qrels with trec_eval's exact numbers.",
    )
    p.add_argument("qrels", help="qrels file (qid iter docno label); .gz ok; - for stdin")
    p.add_argument("runs", nargs="+", help="run file(s) (qid iter docno rank score tag)")
    p.add_argument(
        "-m",
        "--metric",
        action="append",
        dest="metrics",
        metavar="METRIC",
        help="metric name, any spelling (ndcg@10, P_5, map, nDCG@10, ndcg@5,10); repeatable",
    )
    p.add_argument("-q", "--per-query", action="store_true", help="also print per-query values")
    p.add_argument(
        "-l",
        "--relevance-level",
        type=float,
        default=1.0,
        help="a label >= this is relevant (default 1)",
    )
    p.add_argument(
        "--format", choices=["table", "tsv", "json"], default="table", help="output format"
    )
    p.add_argument("--threads", type=int, default=None, help="worker threads (default: cores)")
    p.add_argument(
        "--stream",
        action="store_true",
        help="read each run chunk by chunk in bounded memory (run files grouped by query)",
    )
    p.add_argument(
        "--chunk-rows",
        type=int,
        default=1_000_000,
        metavar="N",
        help="with --stream: rows per chunk, at least (default 1000000)",
    )
    return p


def _fmt(value: float, aggregate: str) -> str:
    if aggregate == "sum":
        return str(round(value))
    return f"{value:.4f}"


def _render(results: list[tuple[str, Results]], per_query: bool, fmt: str) -> str:
    if fmt == "json":
        doc = []
        for name, res in results:
            entry: dict[str, object] = {"run": name, "aggregate": res.to_dict()}
            if per_query:
                entry["per_query"] = {m.name: res.per_query(m) for m in res.metrics}
            doc.append(entry)
        return json.dumps(doc, indent=2)
    rows: list[tuple[str, str, str, str]] = []
    for name, res in results:
        if per_query:
            for i, qid in enumerate(res.query_ids):
                for j, m in enumerate(res.metrics):
                    rows.append((name, m.name, qid, _fmt(float(res.values[i, j]), m.aggregate)))
        for m in res.metrics:
            rows.append((name, m.name, "all", _fmt(res[m], m.aggregate)))
    if fmt == "tsv":
        return "\n".join("\t".join(r) for r in [("run", "metric", "query", "value"), *rows])
    header = ("run", "metric", "query", "value")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(4)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [header, *rows]]
    return "\n".join(lines)


_SUBCOMMANDS = {
    "compare": "ranklens._cli_compare",
    "trec_eval": "ranklens._trec_eval_cli",
}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in _SUBCOMMANDS:
        import importlib

        module = importlib.import_module(_SUBCOMMANDS[argv[0]])
        return int(module.main(argv[1:]))
    args = _parser().parse_args(argv)
    try:
        metrics = parse_metrics(args.metrics or _DEFAULT_METRICS)
        qrels = Qrels.from_trec(args.qrels)
        results = []
        for path in args.runs:
            if args.stream:
                res, tag = _evaluate_files(
                    qrels,
                    path,
                    metrics,
                    relevance_level=args.relevance_level,
                    threads=args.threads,
                    chunk_rows=args.chunk_rows,
                )
                results.append((tag or path, res))
                continue
            run = Run.from_trec(path)
            res = evaluate(
                qrels,
                run,
                metrics,
                relevance_level=args.relevance_level,
                threads=args.threads,
            )
            results.append((run.name or path, res))
    except RanklensInputError as e:
        print(f"ranklens: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"ranklens: {e}", file=sys.stderr)
        return 1
    sys.stdout.write(_render(results, args.per_query, args.format) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
