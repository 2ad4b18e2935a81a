"""The report's inputs in every form ranklens reads, and the names of runs.

Qrels: a :class:`ranklens.Qrels`, a mapping ``{query: {doc: label}}`` or a TREC
qrels file (path).  Runs: a mapping ``name -> run`` or a list of runs, each run a
:class:`ranklens.Run`, a mapping ``{query: {doc: score}}`` (or ranked lists) or a
TREC run file (path).

A run read from a file is named by its run tag, unless another run has the same
tag (or it has none): then by its file name, or by its path when two files share
a name.  The command line names runs by the same rule (:func:`run_names`).

Rejected: numbering runs that share a tag (``STANDARD#2``): the name must say
which file a row comes from.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from ranklens._data import Qrels, Run
from ranklens.errors import RanklensInputError

__all__ = ["as_named_runs", "read_qrels", "run_names"]


def run_names(paths: Sequence[str], tags: Sequence[str | None]) -> list[str]:
    """One name per run file: its tag when no other file has that tag, else its
    file name (its path when two files share a file name)."""
    bases = [os.path.basename(p) for p in paths]
    names = []
    for path, tag, base in zip(paths, tags, bases):
        if tag and list(tags).count(tag) == 1:
            names.append(str(tag))
        elif tag and bases.count(base) == 1:
            names.append(base)
        else:
            names.append(str(path))
    return names


def _is_path(obj: Any) -> bool:
    return isinstance(obj, (str, os.PathLike))


def read_qrels(qrels: Any, subtopics: bool = False) -> Any:
    """A :class:`ranklens.Qrels` from a Qrels, a mapping or a file path."""
    if _is_path(qrels):
        return Qrels.from_trec(os.fspath(qrels), subtopics=subtopics)
    if isinstance(qrels, Mapping):
        return Qrels(qrels)
    return qrels


def as_named_runs(runs: Any) -> dict[str, Any] | list[Any]:
    """``{name: Run}`` from a mapping name -> run or a list of run files (a file
    named by :func:`run_names`); a list of Runs as it is (:func:`ranklens.compare`
    names them by ``Run.name`` and says what is wrong with them)."""
    if isinstance(runs, Mapping):
        out = {}
        for name, run in runs.items():
            if _is_path(run):
                run = Run.from_trec(os.fspath(run))
            elif isinstance(run, Mapping):
                run = Run(run)
            out[name] = run
        return out
    if _is_path(runs) or isinstance(runs, Run) or not isinstance(runs, Sequence):
        raise RanklensInputError(
            "runs must be several runs: a dict name -> run, or a list of named Runs or "
            f"run files; got {type(runs).__name__}"
        )
    items = list(runs)
    paths = [os.fspath(r) for r in items if _is_path(r)]
    if paths and len(paths) != len(items):
        raise RanklensInputError("a list of runs holds either run files or Run objects, not both")
    if not paths:
        return items
    if len(set(paths)) != len(paths):
        raise RanklensInputError("a run file is given twice")
    read = [Run.from_trec(p) for p in paths]
    return dict(zip(run_names(paths, [r.name for r in read]), read))
