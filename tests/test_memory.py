"""Freed large buffers kept for reuse (Linux), and ``RANKLENS_KEEP_FREED_MIB``.

Each case runs in a fresh interpreter: the allocator reads the variable once.
What is kept is marked ``MADV_FREE``, which ``/proc/self/smaps_rollup`` counts
as ``LazyFree``; a buffer unmapped on free leaves none.
"""

from __future__ import annotations

import os
import sys

import pytest

from _child import child_json

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or not os.path.exists("/proc/self/smaps_rollup"),
    reason="the kept buffers are a Linux feature, seen through smaps_rollup",
)

CHILD = r"""
import json, ranklens

def lazy_free_kib():
    with open("/proc/self/smaps_rollup") as f:
        for line in f:
            if line.startswith("LazyFree:"):
                return int(line.split()[1])
    return None

run = {f"q{i}": {f"doc-{i}-{j}": float((i * 31 + j * 17) % 97) for j in range(50)}
       for i in range(20000)}
before = lazy_free_kib()
r = ranklens.Run(run)
values = r.to_dict()
del r
after = lazy_free_kib()
again = ranklens.Run(run).to_dict()
print(json.dumps({"before": before, "after": after, "same": values == again}))
"""


def _child(keep: str | None) -> dict:
    return child_json(CHILD, "RANKLENS_KEEP_FREED_MIB", keep)


def _lazy_free_growth_mib(r: dict) -> float:
    if r["before"] is None or r["after"] is None:
        pytest.skip("this kernel's smaps_rollup has no LazyFree line")
    return (r["after"] - r["before"]) / 1024


@pytest.mark.parametrize("keep", [None, "512", " 64 ", "not a number"])
def test_a_freed_run_leaves_its_buffers_kept(keep):
    # 1M entries: the id arena, offsets and scores are each 4 MiB or more.
    r = _child(keep)
    assert r["same"]
    assert _lazy_free_growth_mib(r) >= 16


def test_keeping_nothing_gives_the_buffers_back():
    r = _child("0")
    assert r["same"]
    assert _lazy_free_growth_mib(r) < 1
