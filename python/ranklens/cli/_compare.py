"""``ranklens compare``: significance tests between TREC runs.

    ranklens compare QRELS RUN1 RUN2 [RUN ...] -m ndcg@10 -m map
        [--test fisher] [--correction holm] [--baseline NAME] [--ties best]
        [--format table|markdown|latex|html|json] [--plot out.png]

A run is named by its run tag (the last field) when every file has a distinct
tag, else by its file name; ``--baseline`` accepts the tag, the file name or the
path.  Exit status: 0 on success, 2 on a usage
error, 1 on bad data (one line on stderr).
"""

from __future__ import annotations

import argparse
import os
import sys

from ranklens._names import parse_metrics
from ranklens.cli._options import (
    UsageError,
    add_comparison_options,
    add_metric_option,
    check_comparison_options,
    find_baseline,
)
from ranklens.compare import compare
from ranklens.errors import RanklensInputError

_DEFAULT_METRICS = ["map", "ndcg@10"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ranklens compare",
        description="Paired significance tests between runs, on every qrels query.",
    )
    p.add_argument("qrels", help="qrels file (qid iter docno label)")
    p.add_argument("runs", nargs="+", help="two or more run files (qid iter docno rank score tag)")
    add_metric_option(
        p,
        "metric, any spelling (ndcg@10, P_5, map); repeatable (default: map, ndcg@10)",
    )
    add_comparison_options(p)
    p.add_argument(
        "--ties",
        choices=["trec", "input", "expected", "best", "worst"],
        default="trec",
        help="order of equal scores, for every run: trec_eval's (doc id descending), "
        "the file's, the expected value over all orders, or higher (best) / lower "
        "(worst) labels first",
    )
    p.add_argument(
        "--format",
        choices=["table", "markdown", "latex", "html", "json"],
        default="table",
    )
    p.add_argument(
        "--plot",
        metavar="PATH",
        default=None,
        help="save a per-query score distribution plot of the first metric (PNG/SVG)",
    )
    return p


def main(argv: list[str]) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse: 0 for --help, 2 for usage errors
        return int(e.code) if isinstance(e.code, int) else 2
    if len(args.runs) < 2:
        parser.print_usage(sys.stderr)
        print("ranklens compare: error: give at least two run files", file=sys.stderr)
        return 2
    try:  # the settings before any file is read: a usage error is exit 2
        check_comparison_options(args)
        parse_metrics(args.metrics or _DEFAULT_METRICS)  # an unknown metric is usage
        if len(set(args.runs)) != len(args.runs):
            raise RanklensInputError("a run file is given twice")
    except RanklensInputError as e:
        print(f"ranklens compare: error: {e}", file=sys.stderr)
        return 2
    try:
        from ranklens._data import Qrels, Run

        qrels = Qrels.from_trec(args.qrels)
        loaded = [(path, Run.from_trec(path)) for path in args.runs]
        tags = [run.name for _, run in loaded]
        use_tags = all(tags) and len(set(tags)) == len(tags)
        bases = [os.path.basename(p) for p in args.runs]
        use_bases = len(set(bases)) == len(bases)
        runs = {}
        aliases: dict[str, str] = {}
        for (path, run), tag, base in zip(loaded, tags, bases):
            name = str(tag) if use_tags else (base if use_bases else path)
            runs[name] = run
            for alias in (path, base, tag):
                if alias:
                    aliases.setdefault(str(alias), name)
        baseline = find_baseline(args.baseline, runs, aliases)
        cmp = compare(
            qrels,
            runs,
            args.metrics or _DEFAULT_METRICS,
            baseline=baseline,
            test=args.test,
            correction=args.correction,
            alpha=args.alpha,
            n_resamples=args.n_resamples,
            seed=args.seed,
            relevance_level=args.relevance_level,
            threads=args.threads,
            ties=args.ties,
        )
        if args.plot:
            from ranklens.plots import distribution_plot

            distribution_plot(cmp, cmp.metrics[0], path=args.plot)
    except UsageError as e:
        print(f"ranklens compare: error: {e}", file=sys.stderr)
        return 2
    except (RanklensInputError, OSError, ImportError) as e:
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        print(f"ranklens compare: {msg}", file=sys.stderr)
        return 1
    render = {
        "table": str,
        "markdown": lambda c: c.to_markdown(),
        "latex": lambda c: c.to_latex(),
        "html": lambda c: c.to_html(),
        "json": lambda c: c.to_json(),
    }[args.format]
    sys.stdout.write(render(cmp) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
