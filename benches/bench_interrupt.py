"""Ctrl-C latency of each long door: from SIGINT to ``KeyboardInterrupt``.

Each door runs in a fresh interpreter on an input that would take far longer
than the wait; the parent sends SIGINT ``--delay`` seconds after the child
says it is about to call, and the child reports the time its ``except
KeyboardInterrupt`` ran (``time.time()``, as the parent's send time: one
machine, one clock).  Median (and worst) of ``--trials`` children per door; a
child that has not answered within ``--timeout`` seconds counts as a miss::

    python benches/bench_interrupt.py --trials 5
    python benches/bench_interrupt.py --only batch
    python benches/bench_interrupt.py --dicts       # the dict doors, 10 million entries
    python benches/bench_interrupt.py --unwatched   # the doors that do not look

The inputs are those of ``tests/test_hardening.py``'s Ctrl-C section: zero-
stride array views, rows sharing one list object, so that minutes of work fit
in little memory.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import textwrap
import time

CHILD = """
import sys, time
{setup}
print("ready", flush=True)
try:
    {call}
except KeyboardInterrupt:
    print("KeyboardInterrupt", time.time(), flush=True)
else:
    print("returned", time.time(), flush=True)
"""

RUNS = """
import ranklens
n = 20000
q = {f"q{i}": {"a": 1} for i in range(n)}
r1 = ranklens.Run({f"q{i}": {"a": 1.0, "b": 0.5} for i in range(n)}, name="r1")
r2 = ranklens.Run({f"q{i}": {"b": 1.0, "a": 0.5 + (i % 2)} for i in range(n)}, name="r2")
"""

EVALUATE = """
import ranklens
n = 2000
docs = {f"d{j}": float(j) for j in range(1000)}
run = ranklens.Run({f"q{i}": docs for i in range(n)})
qrels = ranklens.Qrels({f"q{i}": {"d1": 1, "d7": 2} for i in range(n)})
metrics = [f"rbp(p={(j + 1) / 1002})" for j in range(1000)]
"""

ARRAYS = """
import numpy as np, ranklens
f = np.broadcast_to(np.arange(100, dtype=np.float32), (2**27, 100))
i = np.broadcast_to(np.arange(100, dtype=np.int64), (2**27, 100))
rbp = [f"rbp(p={(j + 1) / 1002})" for j in range(1000)]
p = np.tile(np.arange(1000, dtype=np.float32), 10_000)
t, x = p > 900, np.repeat(np.arange(10_000), 1000)
"""

ROWS = """
import pandas as pd, ranklens
ids = [f"d{i}" for i in range(10_000)]
n = 1_000_000
ret, rel = [ids] * n, [["x"]] * n
sc = ranklens.Scorer(["recall"])
df = pd.DataFrame({"retrieved_ids": ret, "relevant": rel})
heavy = ranklens.Scorer([f"rbp(p={(j + 1) / 1002})" for j in range(1000)])
"""

# door: (setup, call)
DOORS: dict[str, tuple[str, str]] = {
    "evaluate": (EVALUATE, "ranklens.evaluate(qrels, run, metrics)"),
    "compare (bootstrap)": (
        RUNS,
        'ranklens.compare(q, [r1, r2], "map", test="bootstrap", n_resamples=10**8)',
    ),
    "gate (randomization)": (
        RUNS,
        "ranklens.gate(q, r1, r2, 0.01, metrics='map', test='randomization', n_resamples=10**9)",
    ),
    "evaluate_dense": (ARRAYS, "ranklens.evaluate_dense(f, f, 'ndcg')"),
    "evaluate_topk": (ARRAYS, "ranklens.evaluate_topk(i, i, 'map')"),
    "knn_recall": (ARRAYS, "ranklens.knn_recall(i, i, 100)"),
    "evaluate_flat (1000 metrics)": (ARRAYS, "ranklens.evaluate_flat(p, t, x, rbp)"),
    "Scorer.batch": (ROWS, "sc.batch(ret, rel)"),
    "Scorer.batch threads=1": (ROWS, "sc.batch(ret, rel, threads=1)"),
    "score_batch": (ROWS, "ranklens.score_batch(ret, rel, 'recall')"),
    "score_frame": (
        ROWS,
        "ranklens.score_frame(df, relevant_col='relevant', metrics='recall', semantics='trec')",
    ),
    "Scorer.batch, long scoring": (ROWS, "heavy.batch([ids] * 5000, [ids[::10]] * 5000)"),
    "Scorer.batch threads=1, long scoring": (
        ROWS,
        "heavy.batch([ids] * 1000, [ids[::10]] * 1000, threads=1)",
    ),
}


# The doors that do not watch for Ctrl-C, each timed once on 10 million
# entries (distinct ids: 100,000 queries or rows of 100): the longest a
# Ctrl-C waits there.
UNWATCHED_SETUP = """
import time, ranklens
from ranklens.compat import autorag, pytrec_eval
run = {f"q{i}": {f"d{i}_{j}": float(j) for j in range(100)} for i in range(100_000)}
qrels = {f"q{i}": {f"d{i}_{j}": j % 2 for j in range(100)} for i in range(100_000)}
ret = [list(d) for d in run.values()]
gt = [[list(d)[:3]] for d in qrels.values()]
ev = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg"})
"""

UNWATCHED = {
    "compat.autorag.retrieval_metrics": "autorag.retrieval_metrics(gt, ret)",
}

# The dict doors: their inputs grow with the entries (no shared rows), so a
# call of minutes does not fit in memory.  Each child times a whole call on 10
# million entries (T, best of 3), then has a shell it started send it SIGINT
# at 0.7 T into another call, and prints T and the seconds from that moment
# to its KeyboardInterrupt.
DICTS = {
    "Run(dict)": "ranklens.Run(run)",
    "Qrels(dict)": "ranklens.Qrels(qrels)",
    "evaluate(dict, dict)": "ranklens.evaluate(qrels, run, ['map', 'ndcg'])",
    "pytrec_eval RelevanceEvaluator()": "pytrec_eval.RelevanceEvaluator(qrels, {'map', 'ndcg'})",
    "pytrec_eval .evaluate(run)": "ev.evaluate(run)",
    "compat.autorag.retrieval_metrics": "autorag.retrieval_metrics(gt, ret)",
}

DICT_CHILD = """
import os, subprocess, time
def call():
    {call}
full = min((lambda t: (call(), time.monotonic() - t)[1])(time.monotonic()) for _ in range(3))
at = 0.7 * full
killer = subprocess.Popen(["sh", "-c", f"sleep {{at + 0.02}}; kill -INT {{os.getpid()}}"])
time.sleep(0.02)
t = time.monotonic()
try:
    call()
    print(f"{name:40} {{full * 1e3:10.0f}} {{'-':>10}}", flush=True)
except KeyboardInterrupt:
    late = time.monotonic() - t - at
    print(f"{name:40} {{full * 1e3:10.0f}} {{late * 1e3:10.1f}}", flush=True)
killer.wait()
"""


def dicts() -> None:
    """Each dict door on 10 million entries: its time, and its Ctrl-C latency."""
    print(f"{'door (10 million entries)':40} {'best ms':>10} {'late ms':>10}")
    for name, call in DICTS.items():
        code = UNWATCHED_SETUP + DICT_CHILD.format(call=call, name=name)
        subprocess.run([sys.executable, "-c", code], check=True)


def unwatched() -> None:
    """Each unwatched door's call on 10 million entries, best of 3, in one child."""
    lines = [UNWATCHED_SETUP]
    for name, call in UNWATCHED.items():
        lines.append(
            "best = min((lambda t: ("
            + call
            + ", time.perf_counter() - t)[1])(time.perf_counter()) for _ in range(3))\n"
            + f"print(f'{name:40} {{best * 1e3:10.0f}}', flush=True)"
        )
    print(f"{'door (10 million entries, not watched)':40} {'best ms':>10}")
    subprocess.run([sys.executable, "-c", "\n".join(lines)], check=True)


def trial(setup: str, call: str, delay: float, timeout: float) -> float | None:
    """One child: the seconds from SIGINT to its KeyboardInterrupt, None if it
    returned or did not answer within ``timeout``."""
    code = CHILD.format(setup=textwrap.dedent(setup).strip(), call=call)
    env = {k: v for k, v in os.environ.items() if k != "RANKLENS_NUM_THREADS"}
    child = subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        line = child.stdout.readline()
        if line.strip() != "ready":
            raise RuntimeError(child.stderr.read())
        time.sleep(delay)
        sent = time.time()
        os.kill(child.pid, signal.SIGINT)
        try:
            child.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
        report, _, at = child.stdout.read().strip().partition(" ")
        return float(at) - sent if report == "KeyboardInterrupt" else None
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trials", type=int, default=3)
    p.add_argument("--delay", type=float, default=1.0, help="seconds from 'ready' to SIGINT")
    p.add_argument("--timeout", type=float, default=10.0)
    p.add_argument("--only", default="", help="doors whose name contains this")
    p.add_argument("--unwatched", action="store_true", help="time the unwatched doors instead")
    p.add_argument("--dicts", action="store_true", help="the dict doors on 10 million entries")
    a = p.parse_args()
    if a.unwatched:
        unwatched()
        return
    if a.dicts:
        dicts()
        return
    print(f"{'door':40} {'median ms':>10} {'worst ms':>10} {'missed':>7}")
    for name, (setup, call) in DOORS.items():
        if a.only not in name:
            continue
        got = [trial(setup, call, a.delay, a.timeout) for _ in range(a.trials)]
        ok = [x * 1e3 for x in got if x is not None]
        med = f"{statistics.median(ok):10.1f}" if ok else f"{'-':>10}"
        worst = f"{max(ok):10.1f}" if ok else f"{'-':>10}"
        print(f"{name:40} {med} {worst} {len(got) - len(ok):7d}", flush=True)


if __name__ == "__main__":
    main()
