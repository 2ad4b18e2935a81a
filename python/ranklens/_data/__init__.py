"""`Qrels` and `Run`, and the coercions every entry point applies to its inputs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Union

from ranklens._data.qrels import Qrels
from ranklens._data.run import Run
from ranklens.errors import RanklensInputError

__all__ = ["Qrels", "QrelsLike", "Run", "RunLike", "as_qrels", "as_run"]

QrelsLike = Union["Qrels", Mapping[str, Mapping[str, float]]]
RunLike = Union["Run", Mapping[str, Mapping[str, float]], Mapping[str, Sequence[str]]]


def as_qrels(obj: Any) -> Qrels:
    if isinstance(obj, Qrels):
        return obj
    if isinstance(obj, Run):
        raise RanklensInputError("got a Run where Qrels were expected")
    if isinstance(obj, Mapping):
        return Qrels(obj)
    raise RanklensInputError(
        f"qrels must be a ranklens.Qrels or a mapping query id -> {{doc id: label}}, "
        f"got {type(obj).__name__}"
    )


def as_run(obj: Any) -> Run:
    if isinstance(obj, Run):
        return obj
    if isinstance(obj, Qrels):
        raise RanklensInputError("got Qrels where a Run was expected")
    if isinstance(obj, Mapping):
        return Run(obj)
    raise RanklensInputError(
        f"run must be a ranklens.Run or a mapping query id -> {{doc id: score}} or "
        f"[doc ids], got {type(obj).__name__}"
    )
