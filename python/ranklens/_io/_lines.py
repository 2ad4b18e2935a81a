"""Line-oriented text files read in Python: subtopic qrels, preferences and
judgment groups.

One reader so that every such file keeps the promises of the Rust TREC readers:

* a UTF-8 byte order mark at the start of the file is dropped (editors on
  Windows write one; kept, it would become part of the first query id);
* every line must be UTF-8, else a :class:`~ranklens.errors.ParseError` naming
  the file and line (ids are compared as bytes, so a file in another encoding
  would silently match nothing);
* no line is longer than ``max_line_bytes``: the limit is enforced while reading
  (``readline(limit)``), so ``/dev/zero``, a binary file or a gzip bomb without a
  newline costs at most one line of memory before the error;
* a carriage return inside a line (line ends in ``\\r`` alone) is an error, as in
  the Rust readers, rather than one long line of fields;
* ``-`` is standard input and a name ending in ``.gz`` is read through gzip.

Rejected: reading the whole file and splitting it (unbounded memory on a special
file); refusing character devices and FIFOs by type (process substitution,
``<(zcat qrels.gz)``, is a FIFO, and the line limit already bounds ``/dev/zero``).
"""

from __future__ import annotations

import gzip
import os
import sys
from collections.abc import Iterator
from typing import IO

from ranklens.errors import ParseError, RanklensInputError

__all__ = ["field_lines"]

_BOM = b"\xef\xbb\xbf"


def _open(name: str) -> IO[bytes]:
    if name == "-":
        return sys.stdin.buffer
    try:
        f: IO[bytes] = open(name, "rb")
    except OSError as e:
        raise RanklensInputError(f"cannot open {name!r}: {e.strerror or e}") from None
    if name.endswith(".gz"):
        return gzip.GzipFile(fileobj=f)  # type: ignore[return-value]
    return f


def field_lines(
    path: str | os.PathLike[str], max_line_bytes: int
) -> Iterator[tuple[int, list[str]]]:
    """``(line number, fields)`` for each line of ``path`` that is neither blank
    nor a ``#`` comment: its fields split on ASCII whitespace (as the TREC
    readers split them), the line number 1-based; checked as the module
    docstring says."""
    name = os.fspath(path)
    if isinstance(name, bytes):
        name = name.decode("utf-8", "surrogateescape")
    f = _open(name)
    try:
        n = 0
        while True:
            try:
                raw = f.readline(max_line_bytes + 1)
            except (OSError, EOFError) as e:  # gzip's errors included
                raise RanklensInputError(f"cannot read {name!r}: {e}") from None
            if not raw:
                return
            n += 1
            if raw.endswith(b"\n"):
                raw = raw[:-1]
                if raw.endswith(b"\r"):  # a \r\n line end
                    raw = raw[:-1]
            elif len(raw) > max_line_bytes:
                raise ParseError(
                    f"{name}:{n}: a line longer than {max_line_bytes} bytes, the limit "
                    "(max_line_bytes): a file that is not a text file of this format?"
                )
            if n == 1 and raw.startswith(_BOM):
                raw = raw[len(_BOM) :]
            if b"\r" in raw:
                raise ParseError(
                    f"{name}:{n}: a carriage return (\\r) inside a line: the file's lines "
                    "seem to end in \\r alone (classic Mac OS); convert its line ends to \\n"
                )
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise ParseError(f"{name}:{n}: not UTF-8 (byte {e.start} of the line)") from None
            fields = raw.split()
            if fields and not fields[0].startswith(b"#"):
                yield n, [x.decode("utf-8") for x in fields]
    finally:
        if f is not sys.stdin.buffer:
            f.close()
