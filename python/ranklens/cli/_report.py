"""``ranklens report``: one HTML file comparing runs query by query.

    ranklens report QRELS RUN1 RUN2 [RUN ...] -m ndcg@10 -m map -o report.html
        [--depth 20] [--title TEXT] [--test fisher] [--correction holm]
        [--baseline NAME] [--subtopics]

Runs are named by their tags, or by file where two share a tag
(``ranklens._report._inputs.run_names``); ``--baseline`` accepts the name, the
file name or the path.  Exit status: 0 on success, 2 on a usage error, 1 on bad
data or a file that cannot be written (one line on stderr).
"""

from __future__ import annotations

import argparse
import os
import sys

import ranklens
from ranklens._report import report, run_names
from ranklens.cli._options import (
    UsageError,
    add_comparison_options,
    add_metric_option,
    check_comparison_options,
    find_baseline,
)
from ranklens.errors import RanklensInputError

_PROG = "ranklens report"
_DEFAULT_METRICS = ["ndcg@10", "map"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=_PROG,
        description="Write one self-contained HTML file comparing runs query by query.",
    )
    p.add_argument("qrels", help="qrels file (qid iter docno label)")
    p.add_argument("runs", nargs="+", help="two or more run files (qid iter docno rank score tag)")
    add_metric_option(p, "metric, any spelling (ndcg@10, P_5, map); repeatable")
    p.add_argument("-o", "--output", required=True, metavar="PATH", help="the HTML file to write")
    p.add_argument(
        "--depth", type=int, default=20, help="rank depth embedded and shown (default 20)"
    )
    p.add_argument("--title", default=None)
    add_comparison_options(p)
    p.add_argument(
        "--subtopics",
        action="store_true",
        help="the qrels file is in the diversity format (qid subtopic docno label)",
    )
    return p


def main(argv: list[str]) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse: 0 for --help, 2 for usage errors
        return int(e.code) if isinstance(e.code, int) else 2
    try:  # the settings before any file is read: a usage error is exit 2
        if len(args.runs) < 2:
            raise RanklensInputError("give at least two run files")
        if len(set(args.runs)) != len(args.runs):
            raise RanklensInputError("a run file is given twice")
        if args.depth < 1:
            raise RanklensInputError(f"--depth must be >= 1, got {args.depth}")
        check_comparison_options(args)
        ranklens.parse_metrics(args.metrics or _DEFAULT_METRICS)
    except RanklensInputError as e:
        print(f"{_PROG}: error: {e}", file=sys.stderr)
        return 2
    try:
        qrels = ranklens.Qrels.from_trec(args.qrels, subtopics=args.subtopics)
        loaded = [ranklens.Run.from_trec(path) for path in args.runs]
        names = run_names(args.runs, [r.name for r in loaded])
        runs = dict(zip(names, loaded))
        aliases: dict[str, str] = {}
        for name, path in zip(names, args.runs):
            for alias in (path, os.path.basename(path)):
                aliases.setdefault(alias, name)
        baseline = find_baseline(args.baseline, runs, aliases)
        report(
            qrels,
            runs,
            args.metrics or _DEFAULT_METRICS,
            args.output,
            depth=args.depth,
            title=args.title,
            baseline=baseline,
            test=args.test,
            correction=args.correction,
            alpha=args.alpha,
            n_resamples=args.n_resamples,
            seed=args.seed,
            relevance_level=args.relevance_level,
            threads=args.threads,
        )
    except UsageError as e:
        print(f"{_PROG}: error: {e}", file=sys.stderr)
        return 2
    except (RanklensInputError, OSError) as e:
        if isinstance(e, OSError) and e.filename and str(e.filename) not in str(e):
            msg = f"{e.filename}: {e.strerror or e}"
        else:
            msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        print(f"{_PROG}: {msg}", file=sys.stderr)
        return 1
    print(f"{_PROG}: wrote {args.output} ({len(runs)} runs)", file=sys.stderr)
    return 0
