"""Run a script in a fresh interpreter with one environment variable set or
unset, and read the JSON object its last line prints (for settings read once
per process, such as ``RANKLENS_LAYOUT`` and ``RANKLENS_KEEP_FREED_MIB``); or
count a fresh interpreter's threads around some calls."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def child_json(script: str, name: str, value: str | None) -> dict:
    """``script``'s last line of output as JSON, run with ``name`` set to
    ``value`` (``None``: unset)."""
    env = dict(os.environ)
    env.pop(name, None)
    if value is not None:
        env[name] = value
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def thread_counts(setup: str, small: str, large: str) -> tuple[int, int, int]:
    """In a fresh interpreter (Linux: reads ``/proc/self/status``), after ``setup``:
    the process's threads before ``small``, after it, and after ``large`` (each a
    block of Python statements)."""
    script = "\n".join(
        [
            "def threads():",
            '    for line in open("/proc/self/status"):',
            '        if line.startswith("Threads:"):',
            "            return int(line.split()[1])",
            setup,
            "before = threads()",
            small,
            "small = threads()",
            large,
            "print(before, small, threads())",
        ]
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout.split()
    before, after_small, after_large = map(int, out)
    return before, after_small, after_large
