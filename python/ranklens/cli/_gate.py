"""``ranklens gate``: fail a CI job when a candidate run is worse than the baseline.

    ranklens gate QRELS BASELINE CANDIDATE -m ndcg@10 --max-drop ndcg@10=0.01
        [--max-drop recall@20=0.02] [--max-drop 0.01]
        [--mode strict|lenient] [--test t|randomization|bootstrap]
        [--correction holm|bonferroni|none] [--alpha 0.05] [--top 10] [--cutoff K]
        [--format text|markdown|json] [--summary PATH] [--html PATH]
        [--config PYPROJECT | --no-config]

Settings not given come from ``[tool.ranklens.gate]`` in the nearest
``pyproject.toml`` (see ``ranklens._gate._config``), then from the defaults of
:func:`ranklens.gate`.  ``--max-drop METRIC=DROP`` gates METRIC (``-m`` only
fixes the order); ``--max-drop DROP`` is the budget of every ``-m`` metric that
has none of its own.  When ``-m`` or ``--max-drop METRIC=...`` is given, they
name the metrics; otherwise the configuration does.  ``--summary PATH`` also
appends the Markdown report to PATH (e.g. ``"$GITHUB_STEP_SUMMARY"``);
``--html PATH`` writes the HTML report of the two runs (``ranklens report``:
candidate against baseline, with :func:`ranklens.compare`'s two-sided test of
the same family) for a CI artifact.

Exit status: 0 every metric passed, 1 a budget failed, 2 usage error (options,
configuration), 3 bad input (one line on stderr naming the file and line).
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from typing import Any

from ranklens._checks import check_threads, for_command_line, level_text
from ranklens._gate import CORRECTIONS, MODES, load_config
from ranklens._gate._config import ConfigError
from ranklens._gate._gate import (
    budgets_by_metric,
    check_budgets,
    check_cutoffs,
    check_settings,
    gate,
)
from ranklens.cli._options import add_metric_option
from ranklens.errors import RanklensInputError, RanklensWarning

PASS, FAIL, USAGE, BAD_INPUT = 0, 1, 2, 3
_PROG = "ranklens gate"
_DEFAULTS = {
    "mode": "strict",
    "test": "t",
    "correction": "holm",
    "alpha": 0.05,
    "n_resamples": 10_000,
    "seed": 0,
    "top": 10,
    "relevance_level": 1.0,
}


class _UsageError(Exception):
    pass


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=_PROG,
        description=(
            "Paired non-inferiority test of a candidate run against a baseline, per "
            "metric, under budgets (max drops). Exit 0 pass, 1 a budget failed, "
            "2 usage error, 3 bad input."
        ),
    )
    p.add_argument("qrels", help="qrels file (qid iter docno label)")
    p.add_argument("baseline", help="baseline run file (qid iter docno rank score tag)")
    p.add_argument("candidate", help="candidate run file")
    add_metric_option(
        p,
        "metric to gate, any spelling (ndcg@10, P_5, map); repeatable",
    )
    p.add_argument(
        "--max-drop",
        action="append",
        dest="max_drops",
        metavar="[METRIC=]DROP",
        help="budget: the largest acceptable mean drop of METRIC (absolute); "
        "without METRIC=, of every -m metric; repeatable",
    )
    p.add_argument("--mode", choices=MODES, default=None, help="default: strict")
    p.add_argument(
        "--test",
        default=None,
        metavar="{t,randomization,bootstrap}",
        help="paired test (default: t)",
    )
    p.add_argument("--correction", choices=CORRECTIONS, default=None, help="default: holm")
    p.add_argument("--alpha", type=float, default=None, help="default: 0.05")
    p.add_argument("--n-resamples", type=int, default=None, dest="n_resamples")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument(
        "--top", type=int, default=None, help="most regressed queries listed (default: 10)"
    )
    p.add_argument(
        "--cutoff",
        type=int,
        action="append",
        dest="cutoffs",
        metavar="K",
        help="hit -> miss flips at K (default: the metrics' cutoffs); repeatable",
    )
    p.add_argument("-l", "--relevance-level", type=level_text, default=None, dest="relevance_level")
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--format", choices=["text", "markdown", "json"], default="text")
    p.add_argument(
        "--summary",
        metavar="PATH",
        default=None,
        help="also append the Markdown report to PATH (e.g. $GITHUB_STEP_SUMMARY)",
    )
    p.add_argument(
        "--html",
        metavar="PATH",
        default=None,
        help="also write the HTML report of the two runs to PATH (a CI artifact)",
    )
    cfg = p.add_mutually_exclusive_group()
    cfg.add_argument("--config", metavar="PYPROJECT", default=None)
    cfg.add_argument("--no-config", action="store_true", help="ignore pyproject.toml")
    return p


def _parse_drop(text: str) -> tuple[str | None, float]:
    metric, sep, value = text.rpartition("=")
    try:
        drop = float(value)
    except ValueError:
        raise _UsageError(f"--max-drop wants [METRIC=]DROP with a number, got {text!r}") from None
    if sep and not metric:
        raise _UsageError(f"--max-drop {text!r}: no metric before '='")
    return (metric if sep else None), drop


def _canonical(name: str) -> str:
    from ranklens._names import parse_metric

    return parse_metric(name).name


def _budgets(
    args: argparse.Namespace, config: dict[str, Any]
) -> tuple[list[str], dict[str, float]]:
    """The gated metrics, in order, and the budget of each (CLI over configuration).

    One rule for every door (as :func:`ranklens.gate`'s ``budgets``): within one
    source, a metric has at most one budget whatever its spelling (``map`` and
    ``AP`` are one metric), and there is at most one budget for every metric; the
    command line's budgets replace the configuration's."""
    cfg_budgets = config.get("budgets")
    per_cfg: dict[str, Any] = {}
    default: Any = None
    if isinstance(cfg_budgets, dict):
        given = ((k, v, f"[tool.ranklens.gate.max_drop] {k}") for k, v in cfg_budgets.items())
        per_cfg = _by_name(given)
    elif cfg_budgets is not None:
        default = cfg_budgets
    cli_default: Any = None
    flags: list[tuple[str, float, str]] = []
    for text in args.max_drops or []:
        metric, drop = _parse_drop(text)
        if metric is None:
            if cli_default is not None:
                raise _UsageError(
                    f"two budgets for every metric: --max-drop {cli_default:g} and {text}"
                )
            cli_default = drop
        else:
            flags.append((metric, drop, f"--max-drop {text}"))
    per_cli = _by_name(flags)
    if cli_default is not None:
        default = cli_default
    cli_metrics = [_canonical(m) for m in args.metrics or []]
    if cli_metrics or per_cli:
        metrics = cli_metrics + list(per_cli)
    else:
        metrics = [_canonical(m) for m in config.get("metrics", [])] + list(per_cfg)
    ordered = list(dict.fromkeys(metrics))
    if not ordered:
        raise _UsageError(
            "nothing to gate: give -m METRIC --max-drop METRIC=DROP, or a "
            "[tool.ranklens.gate] table in pyproject.toml"
        )
    budgets = {}
    for m in ordered:
        b = per_cli[m] if m in per_cli else per_cfg[m] if m in per_cfg else default
        if b is None:
            raise _UsageError(f"no budget for {m}: give --max-drop {m}=DROP (or --max-drop DROP)")
        budgets[m] = b
    return ordered, budgets


def _by_name(entries: Any) -> dict[str, Any]:
    """The budget of each metric by canonical name, from ``(metric, budget,
    place)`` entries of one source (:func:`~ranklens._gate._gate.budgets_by_metric`:
    two for one metric, in any spelling, is an error naming both places, a usage
    error here)."""
    return {m.name: value for m, (value, _) in budgets_by_metric(entries).items()}


def _one_line(e: BaseException) -> str:
    if isinstance(e, OSError) and e.filename and str(e.filename) not in str(e):
        return f"{e.filename}: {e.strerror or e}"
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def _names(baseline: str, candidate: str) -> tuple[str, str]:
    bases = (os.path.basename(baseline), os.path.basename(candidate))
    if bases[0] != bases[1]:
        return bases
    return (baseline, candidate) if baseline != candidate else ("baseline", "candidate")


# The gate's tests under compare's names (the report's summary is compare's).
_COMPARE_TEST = {"t": "student", "randomization": "fisher", "bootstrap": "bootstrap"}


def _write_html(
    path: str,
    qrels: Any,
    baseline: Any,
    candidate: Any,
    metrics: list[str],
    settings: dict[str, Any],
    args: argparse.Namespace,
) -> None:
    """The HTML report of candidate against baseline (``ranklens report``'s)."""
    from ranklens._report import report

    base_name, cand_name = _names(args.baseline, args.candidate)
    report(
        qrels,
        {cand_name: candidate, base_name: baseline},
        metrics,
        path,
        title=f"ranklens gate: {cand_name} against {base_name}",
        baseline=base_name,
        test=_COMPARE_TEST[settings["test"]],
        correction=settings["correction"],
        alpha=settings["alpha"],
        n_resamples=settings["n_resamples"],
        seed=settings["seed"],
        relevance_level=settings["relevance_level"],
        threads=args.threads,
    )


def main(argv: list[str]) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse: 0 for --help, 2 for usage errors
        return int(e.code) if isinstance(e.code, int) else USAGE
    try:
        config = {} if args.no_config else load_config(args.config)
        settings = {
            key: getattr(args, key) if getattr(args, key) is not None else config.get(key, dflt)
            for key, dflt in _DEFAULTS.items()
        }
        cutoffs = args.cutoffs if args.cutoffs is not None else config.get("cutoffs")
        settings["test"] = check_settings(
            settings["mode"],
            settings["test"],
            settings["correction"],
            settings["alpha"],
            settings["n_resamples"],
            settings["seed"],
            settings["top"],
        )
        check_threads(args.threads)
        metrics, budgets = _budgets(args, config)
        check_cutoffs(check_budgets(budgets, metrics)[0], cutoffs)
    except (_UsageError, RanklensInputError) as e:  # ConfigError and bad metric names too
        print(f"{_PROG}: error: {_one_line(e)}", file=sys.stderr)
        return USAGE

    try:
        from ranklens._data import Qrels, Run

        qrels = Qrels.from_trec(args.qrels)
        baseline = Run.from_trec(args.baseline)
        candidate = Run.from_trec(args.candidate)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", RanklensWarning)
            result = gate(
                qrels,
                baseline,
                candidate,
                budgets,
                metrics=metrics,
                cutoffs=cutoffs,
                threads=args.threads,
                names=_names(args.baseline, args.candidate),
                **settings,
            )
        render = {"text": result.to_text, "markdown": result.to_markdown, "json": result.to_json}
        report = render[args.format]()
        if args.summary:
            with open(args.summary, "a", encoding="utf-8") as f:
                f.write(result.to_markdown() + "\n")
        if args.html:
            _write_html(args.html, qrels, baseline, candidate, metrics, settings, args)
    except ConfigError as e:
        print(f"{_PROG}: error: {_one_line(e)}", file=sys.stderr)
        return USAGE
    except (RanklensInputError, OSError, ImportError) as e:
        print(f"{_PROG}: {_one_line(e)}", file=sys.stderr)
        return BAD_INPUT
    except Exception as e:  # never a traceback in a CI log
        print(f"{_PROG}: internal error: {type(e).__name__}: {_one_line(e)}", file=sys.stderr)
        return BAD_INPUT
    for w in caught:
        if issubclass(w.category, RanklensWarning):
            print(f"{_PROG}: warning: {for_command_line(str(w.message))}", file=sys.stderr)
    sys.stdout.write(report + "\n")
    return PASS if result.passed else FAIL


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
