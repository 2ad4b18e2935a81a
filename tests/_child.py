"""Run a script in a fresh interpreter with one environment variable set or
unset, and read the JSON object its last line prints (for settings read once
per process, such as ``RANKLENS_LAYOUT`` and ``RANKLENS_KEEP_FREED_MIB``)."""

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
