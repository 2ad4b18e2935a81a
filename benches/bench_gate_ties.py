"""What ``ranklens.gate``'s tie verdict costs: the run pair scored again under
``ties="best"`` and ``"worst"`` and gated twice more.

Synthetic data (seed 0): ``--queries`` queries, 20 judged documents each (labels
0-3 from a pool of 200), a baseline and a candidate run of ``--docs``
documents each; the candidate is the baseline with noise.  Scores are drawn
continuous (no two equal: the tie verdict has nothing to order) or rounded to
one decimal (``--ties``: most documents tie).  Each configuration is timed
``--repeat`` times, configurations alternated, and the median printed: CPU
time of the process (all threads) and wall time, of ``gate`` with its default
t test (``--test randomization`` for the resampling one), metrics ndcg@10, map,
recall@100, on ``--threads`` threads::

    python benches/bench_gate_ties.py --queries 10000 --docs 100 --repeat 7

``--no-tie-verdict`` times the same calls with the tie verdict left out
(``_tie_verdicts`` replaced by one returning ``None``), the baseline of its
cost.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import ranklens
from ranklens._gate import _gate

METRICS = {"ndcg@10": 0.01, "map": 0.01, "recall@100": 0.01}


def make_data(nq: int, nd: int, ties: bool) -> tuple[ranklens.Qrels, ranklens.Run, ranklens.Run]:
    rng = np.random.default_rng(0)
    q_rows, b_rows, c_rows = [], [], []
    for q in range(nq):
        qid = f"q{q}"
        judged = rng.choice(200, size=20, replace=False)
        for d, label in zip(judged, rng.integers(0, 4, size=20)):
            q_rows.append((qid, f"d{d}", float(label)))
        docs = rng.choice(200, size=nd, replace=False)
        base = rng.random(nd)
        cand = base + rng.normal(0, 0.05, nd)
        if ties:
            base, cand = np.round(base, 1), np.round(cand, 1)
        b_rows += [(qid, f"d{d}", float(s)) for d, s in zip(docs, base)]
        c_rows += [(qid, f"d{d}", float(s)) for d, s in zip(docs, cand)]
    return (
        ranklens.Qrels.from_records(q_rows),
        ranklens.Run.from_records(b_rows),
        ranklens.Run.from_records(c_rows),
    )


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--queries", type=int, default=10_000)
    p.add_argument("--docs", type=int, default=100)
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--test", default="t")
    p.add_argument("--no-tie-verdict", action="store_true", dest="no_verdict")
    args = p.parse_args()
    data = {t: make_data(args.queries, args.docs, t) for t in (False, True)}
    print(f"{args.queries} queries x {args.docs} docs, test {args.test}, {args.threads} thread(s)")
    for tied, (_, b, _) in data.items():
        print(f"  {'tied' if tied else 'tie-free'} runs: tied scores {b._has_tied_scores()}")
    configs = [
        (tied, off)
        for tied in (False, True)
        for off in ([False, True] if args.no_verdict else [False])
    ]
    keep = _gate._tie_verdicts
    times: dict[tuple[bool, bool], list[tuple[float, float]]] = {c: [] for c in configs}
    for _ in range(args.repeat):
        for tied, off in configs:
            qrels, base, cand = data[tied]
            _gate._tie_verdicts = (lambda *a, **k: None) if off else keep
            c0, w0 = time.process_time(), time.perf_counter()
            ranklens.gate(qrels, base, cand, METRICS, test=args.test, threads=args.threads)
            times[(tied, off)].append((time.process_time() - c0, time.perf_counter() - w0))
    _gate._tie_verdicts = keep
    for (tied, off), ts in times.items():
        cpu = statistics.median(t[0] for t in ts) * 1e3
        wall = statistics.median(t[1] for t in ts) * 1e3
        what = ("tied" if tied else "tie-free") + (", no tie verdict" if off else "")
        print(f"  {what:30s} cpu {cpu:8.1f} ms   wall {wall:8.1f} ms")


if __name__ == "__main__":
    main()
