"""Options that several subcommands share."""

from __future__ import annotations

import argparse


def add_metric_option(p: argparse.ArgumentParser, help: str) -> None:
    """``-m/--metric METRIC``, repeatable, collected in ``args.metrics``."""
    p.add_argument("-m", "--metric", action="append", dest="metrics", metavar="METRIC", help=help)
