"""`evaluate_files`: score a TREC run file larger than memory, chunk by chunk.

Private package: the public face is ``ranklens.evaluate_files``."""

from __future__ import annotations

from ranklens._stream._files import _evaluate_files as _evaluate_files
from ranklens._stream._files import evaluate_files

__all__ = ["evaluate_files"]
