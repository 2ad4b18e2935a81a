"""The ``ranklens`` command line: TREC files in, a table out.

    ranklens QRELS RUN [RUN ...] -m ndcg@10 -m map [-q] [--format table|tsv|csv|json|jsonl]
             [--ties trec|input|expected] [--stream]

A progress bar is shown on stderr while a large file loads, when stderr is a
terminal. [--stream]
    ranklens compare QRELS RUN1 RUN2 ... -m ndcg@10 --test fisher --correction holm
    ranklens gate QRELS BASELINE CANDIDATE -m ndcg@10 --max-drop ndcg@10=0.01 [--mode strict]
    ranklens trec_eval [-q] [-c] [-m measure[.params]] ... QRELS RUN   (trec_eval 10.0's output)

Exit status: 0 on success, 2 on a usage error, 1 on bad data (one line on
stderr naming the file and line; nothing on stdout).  ``ranklens gate`` has its
own: 0 pass, 1 a budget failed, 2 usage error, 3 bad input.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

__all__ = ["main", "trec_eval_main"]

# Each command's module is imported only when it runs.
_SUBCOMMANDS = {
    "compare": "ranklens.cli._compare",
    "gate": "ranklens.cli._gate",
    "trec_eval": "ranklens.cli._trec_eval",
}


def main(argv: Sequence[str] | None = None) -> int:
    """The ``ranklens`` script: a subcommand, or the default evaluation."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in _SUBCOMMANDS:
        module = importlib.import_module(_SUBCOMMANDS[argv[0]])
        return int(module.main(argv[1:]))
    from ranklens.cli import _evaluate

    return _evaluate.main(argv)


def trec_eval_main() -> None:
    """The ``ranklens-trec-eval`` script (``ranklens trec_eval`` under its own name)."""
    from ranklens.cli import _trec_eval

    sys.exit(_trec_eval.main())
