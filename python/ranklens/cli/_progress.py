"""A progress bar on stderr while a large file is read by the Rust core.

Why this way: the reader runs in Rust with the GIL released and reports nothing
back; rather than thread a callback through the parser's hot loop, a watcher
thread reads the process's own read counter (``rchar`` in ``/proc/self/io``)
and compares it with the file's size.  Shown only when stderr is a terminal,
the file is large, and the counter exists (Linux); otherwise it does nothing.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TextIO

__all__ = ["reading"]

_MIN_BYTES = 64 * 2**20
_PROC_IO = "/proc/self/io"


def _bytes_read() -> int | None:
    try:
        with open(_PROC_IO) as f:
            for line in f:
                if line.startswith("rchar:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


@contextmanager
def reading(path: str, label: str, stream: TextIO | None = None) -> Iterator[None]:
    """Show ``label [#####.....]  42%`` on ``stream`` (stderr) while the block runs."""
    out = sys.stderr if stream is None else stream
    try:
        total = os.path.getsize(path) if path != "-" else 0
    except OSError:
        total = 0
    start = _bytes_read()
    if total < _MIN_BYTES or start is None or not out.isatty():
        yield
        return
    done = threading.Event()

    def draw() -> None:
        while not done.wait(0.2):
            now = _bytes_read()
            frac = min(max(((now or start) - start) / total, 0.0), 1.0)
            bar = "#" * int(frac * 30)
            out.write(f"\r{label} [{bar:<30}] {frac:4.0%}")
            out.flush()

    t0 = time.perf_counter()
    watcher = threading.Thread(target=draw, daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        watcher.join()
        out.write(f"\r{label} [{'#' * 30}] done in {time.perf_counter() - t0:.1f} s\n")
        out.flush()
