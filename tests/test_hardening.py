"""Robustness: fork safety, Ctrl-C, bounded input, hostile input (issue 19).

The fork and Ctrl-C tests run a fresh interpreter in a subprocess, with a
generous timeout: a hang fails the test instead of stalling the suite.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

DATA = Path(__file__).parent / "data"


def run_python(code: str, timeout: float = 120, **kw) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter (no thread-count override: the
    default pool is the one under test)."""
    env = {k: v for k, v in os.environ.items() if k not in ("RANKLENS_NUM_THREADS",)}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        **kw,
    )


# -- 1. fork ---------------------------------------------------------------------


def test_forked_child_can_evaluate_read_and_stream():
    # The parent uses every parallel path once (so rayon's pools exist), then a
    # forked child uses them again; a child stuck on the parent's pool times out.
    code = f"""
        import multiprocessing as mp
        import ranklens
        from ranklens import Qrels, Run, evaluate, evaluate_files

        QRELS, RUN = {str(DATA / "qrels.test")!r}, {str(DATA / "results.test")!r}

        def work(out):
            q, r = Qrels.from_trec(QRELS), Run.from_trec(RUN)
            a = evaluate(q, r, "map")["map"]
            b = evaluate_files(QRELS, RUN, "map")["map"]
            c = evaluate({{"q": {{"d": 1}}}}, {{"q": {{"d": 1.0}}}}, "map")["map"]
            out.put((a, b, c))

        if __name__ == "__main__":
            parent = mp.Queue()
            work(parent)
            expected = parent.get()
            ctx = mp.get_context("fork")
            out = ctx.Queue()
            child = ctx.Process(target=work, args=(out,))
            child.start()
            child.join(30)
            if child.is_alive():
                child.kill()
                raise SystemExit("the forked child hung")
            assert child.exitcode == 0, child.exitcode
            assert out.get(timeout=5) == expected
            print("ok", expected)
    """
    p = run_python(code)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.startswith("ok")
