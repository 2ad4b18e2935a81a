"""The ``ranklens`` command line: TREC files in, a table out.

    ranklens QRELS RUN [RUN ...] -m ndcg@10 -m map [-q] [--format table|tsv|csv|json|jsonl]
             [--ties trec|input|expected|best|worst] [--empty zero|nan|skip] [--miss k+1|nan]
             [--stream]
    ranklens compare QRELS RUN1 RUN2 ... -m ndcg@10 --test fisher --correction holm
    ranklens gate QRELS BASELINE CANDIDATE -m ndcg@10 --max-drop ndcg@10=0.01 [--mode strict]
             [--html report.html]
    ranklens report QRELS RUN1 RUN2 ... -m ndcg@10 -m map -o report.html [--depth 20]
    ranklens trec_eval [-q] [-c] [-m measure[.params]] ... QRELS RUN   (trec_eval 10.0's output)

A progress bar is shown on stderr while a large file loads, when stderr is a
terminal; a warning is one line on stderr, ``ranklens: warning: ...``.

Exit status: 0 on success, 2 on a usage error (a bad option or metric), 1 on
bad data (one line on stderr naming the file and line; nothing on stdout) or on
output that cannot be written, 130 on Ctrl-C: one line on stderr, never a
traceback.  ``ranklens gate`` has its own: 0 pass, 1 a budget failed, 2 usage
error, 3 bad input.
"""

from __future__ import annotations

import importlib
import os
import sys
import warnings
from collections.abc import Callable, Sequence

__all__ = ["main", "trec_eval_main"]

# Each command's module is imported only when it runs.
_SUBCOMMANDS = {
    "compare": "ranklens.cli._compare",
    "gate": "ranklens.cli._gate",
    "report": "ranklens.cli._report",
    "trec_eval": "ranklens.cli._trec_eval",
}


def main(argv: Sequence[str] | None = None) -> int:
    """The ``ranklens`` script: a subcommand, or the default evaluation."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in _SUBCOMMANDS:
        module = importlib.import_module(_SUBCOMMANDS[argv[0]])
        return _guarded("ranklens " + argv[0], lambda: int(module.main(argv[1:])))
    from ranklens.cli import _evaluate

    return _guarded("ranklens", lambda: _evaluate.main(argv))


def trec_eval_main() -> None:
    """The ``ranklens-trec-eval`` script (``ranklens trec_eval`` under its own name)."""
    from ranklens.cli import _trec_eval

    sys.exit(_guarded("ranklens trec_eval", _trec_eval.main))


def _guarded(prog: str, run: Callable[[], int]) -> int:
    """``run()``'s exit status, with the failures no command handles itself
    reported in one line on stderr, never a traceback: output that cannot be
    written (``/dev/full``, a closed pipe or stdout: 1) and Ctrl-C (130).  A
    warning is one line too, ``PROG: warning: ...``, in the command line's
    terms (no Python source line)."""
    try:
        if sys.stdout is None:
            raise OSError("standard output is closed")
        with warnings.catch_warnings():
            warnings.showwarning = _one_line_warning(prog)
            status = run()
        sys.stdout.flush()
        return status
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
    except OSError as e:
        # Only writing the output gets here (each command reports its input).
        print(f"{prog}: cannot write the output: {e.strerror or e}", file=sys.stderr)
        if sys.stdout is not None:
            # What is left in the buffer would fail again at exit, with a
            # traceback-like message: send it nowhere.
            try:
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            except (OSError, ValueError):
                pass
        return 1


def _one_line_warning(prog: str) -> Callable[..., None]:
    """A ``warnings.showwarning`` that prints ``PROG: warning: TEXT``."""
    from ranklens._checks import for_command_line

    def show(message: Warning | str, *_: object, **__: object) -> None:
        print(f"{prog}: warning: {for_command_line(str(message))}", file=sys.stderr)

    return show
