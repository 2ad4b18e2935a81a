"""``ranklens QRELS RUN [RUN ...]``: TREC files in, a table out.

A run's rows are named by its run tag; runs that share a tag (or have none) by
their file (``ranklens._report._inputs.run_names``, the report's rule too).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import os
import sys

from ranklens._checks import check_threads, level_text, positive_int
from ranklens._data import Qrels, Run
from ranklens._evaluate import Results, evaluate
from ranklens._names import needs_subtopics, parse_metrics
from ranklens._report._inputs import run_names
from ranklens._stream import _evaluate_files
from ranklens.cli._options import add_metric_option
from ranklens.cli._progress import reading
from ranklens.errors import RanklensInputError

_DEFAULT_METRICS = ["map", "ndcg", "ndcg@10", "P@10", "recall@100", "mrr", "bpref", "r_precision"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ranklens",
        description="Score TREC runs against TREC qrels with trec_eval's exact numbers.",
    )
    p.add_argument("qrels", help="qrels file (qid iter docno label); .gz ok; - for stdin")
    p.add_argument("runs", nargs="+", help="run file(s) (qid iter docno rank score tag)")
    add_metric_option(
        p,
        "metric name, any spelling (ndcg@10, P_5, map, nDCG@10, ndcg@5,10); repeatable",
    )
    p.add_argument("-q", "--per-query", action="store_true", help="also print per-query values")
    p.add_argument(
        "--subtopics",
        action="store_true",
        help="the qrels file is in the diversity format (qid subtopic docno label, as NIST's "
        "ndeval reads it), for the diversity metrics (alpha_ndcg@20, err_ia@20, ...)",
    )
    p.add_argument(
        "-l",
        "--relevance-level",
        default="1",
        help="a label >= this is relevant (default 1); 'positive': any label > 0",
    )
    p.add_argument(
        "--format",
        choices=["table", "tsv", "csv", "json", "jsonl"],
        default="table",
        help="output format (jsonl: one {run, metric, query, value} object a line)",
    )
    p.add_argument(
        "--ties",
        choices=["trec", "input", "expected", "best", "worst"],
        default="trec",
        help="order of equal scores: trec_eval's (doc id descending), the file's, the "
        "expected value over all orders, or higher (best) / lower (worst) labels first",
    )
    p.add_argument(
        "--empty",
        choices=["zero", "nan", "skip"],
        default="zero",
        help="a qrels query with nothing relevant or missing from the run: scored as "
        "trec_eval scores it (zero), NaN (nan), or NaN and left out of the means (skip)",
    )
    p.add_argument(
        "--miss",
        choices=["k+1", "nan"],
        default="k+1",
        help="first_rel_rank (mean_rank) of a query with no relevant document in the top "
        "k: k + 1 (the ranking's length + 1 without a cutoff), or NaN, its mean then "
        "taken over the queries with a hit",
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
        default=100_000,
        metavar="N",
        help="with --stream: rows per chunk, at least (default 100000)",
    )
    return p


def _fmt(value: float, aggregate: str) -> str:
    if aggregate == "sum":
        return str(round(value))
    return f"{value:.4f}"


def _rows(results: list[tuple[str, Results]], per_query: bool) -> list[tuple[str, str, str, float]]:
    """(run, metric, query, value): per-query rows (if asked) then the aggregates."""
    rows = []
    for name, res in results:
        if per_query:
            for i, qid in enumerate(res.query_ids):
                for j, m in enumerate(res.metrics):
                    rows.append((name, m.name, qid, float(res.values[i, j])))
        for m in res.metrics:
            rows.append((name, m.name, "all", res[m]))
    return rows


def _json(doc: object) -> object:
    """``doc`` with every float that is not finite as ``None`` (``null``): JSON has
    no NaN or infinity (a mean over queries may still pass the largest float)."""
    if isinstance(doc, float):
        return doc if math.isfinite(doc) else None
    if isinstance(doc, dict):
        return {k: _json(v) for k, v in doc.items()}
    if isinstance(doc, (list, tuple)):
        return [_json(v) for v in doc]
    return doc


def _render(results: list[tuple[str, Results]], per_query: bool, fmt: str) -> str:
    if fmt == "json":
        doc = []
        for name, res in results:
            entry: dict[str, object] = {"run": name, "aggregate": res.to_dict()}
            if per_query:
                entry["per_query"] = {m.name: res.per_query(m) for m in res.metrics}
            doc.append(entry)
        return json.dumps(_json(doc), indent=2, allow_nan=False)
    header = ("run", "metric", "query", "value")
    if fmt == "jsonl":
        raw = _rows(results, per_query)
        return "\n".join(json.dumps(_json(dict(zip(header, r))), allow_nan=False) for r in raw)
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(_rows(results, per_query))
        return buf.getvalue().rstrip("\n")
    aggregate = {m.name: m.aggregate for _, res in results for m in res.metrics}
    rows = [(n, m, q, _fmt(v, aggregate[m])) for n, m, q, v in _rows(results, per_query)]
    if fmt == "tsv":
        return "\n".join("\t".join(r) for r in [header, *rows])
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(4)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [header, *rows]]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    """``ranklens QRELS RUN ...``: the exit status."""
    args = _parser().parse_args(argv)
    # Bad options are usage errors (exit 2), as argparse's own are.
    try:
        metrics = parse_metrics(args.metrics or _DEFAULT_METRICS)
        args.relevance_level = level_text(args.relevance_level)
        check_threads(args.threads)
        positive_int(args.chunk_rows, "--chunk-rows")
    except RanklensInputError as e:
        print(f"ranklens: error: {e}", file=sys.stderr)
        return 2
    try:
        try:
            with reading(args.qrels, "qrels"):
                qrels = Qrels.from_trec(args.qrels, subtopics=args.subtopics)
        except RanklensInputError as e:
            if args.subtopics or not needs_subtopics(metrics):
                raise
            # A diversity qrels file read as plain qrels fails on its repeated
            # (query, document) pairs: say which option reads it.
            raise type(e)(f"{e} (a diversity qrels file? pass --subtopics)") from None
        tagged: list[tuple[str | None, Results]] = []
        miss = None if args.miss == "nan" else "k+1"
        for path in args.runs:
            if args.stream:
                res, tag = _evaluate_files(
                    qrels,
                    path,
                    metrics,
                    relevance_level=args.relevance_level,
                    threads=args.threads,
                    chunk_rows=args.chunk_rows,
                    ties=args.ties,
                    empty=args.empty,
                    miss=miss,
                )
                tagged.append((tag, res))
                continue
            with reading(path, os.path.basename(path)):
                run = Run.from_trec(path)
            res = evaluate(
                qrels,
                run,
                metrics,
                relevance_level=args.relevance_level,
                threads=args.threads,
                ties=args.ties,
                empty=args.empty,
                miss=miss,
            )
            tagged.append((run.name, res))
    except RanklensInputError as e:
        print(f"ranklens: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"ranklens: {e}", file=sys.stderr)
        return 1
    # Runs that share a tag (or have none) are named by file.
    names = run_names(args.runs, [tag for tag, _ in tagged])
    results = [(name, res) for name, (_, res) in zip(names, tagged)]
    sys.stdout.write(_render(results, args.per_query, args.format) + "\n")
    return 0
