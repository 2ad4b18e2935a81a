"""The differential probe against a real trec_eval 10.0 (benches/trec_eval_probe.py).

Runs only when ``RANKLENS_TREC_EVAL`` names a trec_eval source checkout or binary
(never in CI, which has none): 300 seeded cases, every difference must be of a
class docs/trec_eval.md lists.  Without the binary the committed cases in
tests/data/probe (test_trec_eval_cli.py) cover the same ground.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

TREC_EVAL = os.environ.get("RANKLENS_TREC_EVAL")
pytestmark = pytest.mark.skipif(not TREC_EVAL, reason="RANKLENS_TREC_EVAL not set")


def test_probe_finds_only_listed_differences(capsys):
    sys.path.insert(0, str(Path(__file__).parent.parent / "benches"))
    try:
        import trec_eval_probe
    finally:
        sys.path.pop(0)
    rc = trec_eval_probe.main([str(TREC_EVAL), "--cases", "300", "--seed", "7"])
    out = capsys.readouterr().out
    assert "identical:" in out
    assert rc == 0, out
