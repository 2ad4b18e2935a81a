"""Options that several subcommands share, and the checks that go with them."""

from __future__ import annotations

import argparse
from collections.abc import Mapping

from ranklens._checks import check_threads, level_text
from ranklens.compare import CORRECTIONS, TESTS
from ranklens.compare._compare import check_settings
from ranklens.errors import RanklensInputError


class UsageError(RanklensInputError):
    """A command line that names something that is not there (exit 2)."""


def add_metric_option(p: argparse.ArgumentParser, help: str) -> None:
    """``-m/--metric METRIC``, repeatable, collected in ``args.metrics``."""
    p.add_argument("-m", "--metric", action="append", dest="metrics", metavar="METRIC", help=help)


def add_comparison_options(p: argparse.ArgumentParser) -> None:
    """The options of :func:`ranklens.compare` (``ranklens compare``, ``ranklens
    report``): the test, its correction, the baseline, alpha, resampling, the
    relevance level and the threads."""
    p.add_argument("--test", choices=TESTS, default="fisher", help="significance test")
    p.add_argument("--correction", choices=CORRECTIONS, default="holm")
    p.add_argument("--baseline", default=None, help="compare every run with this one only")
    p.add_argument("--alpha", type=float, default=0.05)
    p.add_argument("--n-resamples", type=int, default=10_000, dest="n_resamples")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "-l",
        "--relevance-level",
        type=level_text,
        default=1.0,
        dest="relevance_level",
        help="a label >= this is relevant (default 1); 'positive': any label > 0",
    )
    p.add_argument("--threads", type=int, default=None)


def check_comparison_options(args: argparse.Namespace) -> None:
    """:func:`add_comparison_options`' values, checked before any file is read."""
    check_settings(args.test, args.correction, args.alpha, args.n_resamples, args.seed)
    check_threads(args.threads)


def find_baseline(
    given: str | None, runs: Mapping[str, object], aliases: Mapping[str, str]
) -> str | None:
    """The run ``--baseline`` names: a run's name, or an alias (its tag, file
    name or path); ``None`` when none is given; a :class:`UsageError` naming
    the runs when it names none."""
    if given is None or given in runs:
        return given
    name = aliases.get(given)
    if name is None:
        raise UsageError(
            f"unknown --baseline {given!r}; give a run's name, tag, file name or path: "
            + ", ".join(map(repr, runs))
        )
    return name
