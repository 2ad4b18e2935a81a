"""The per-sample RAG path against the few lines of Python it replaces.

Six metrics (P@5, recall@5, mrr, ndcg@10, map, hit_rate@5) of a ten-document
retrieved list against two relevant ids, timed in one process, alternating, best
of ``--repeat``:

* per sample: a naive pure-Python loop of the same formulas (the anchor),
  ``Scorer(...)(retrieved, relevant)`` (metrics parsed once) and
  ``ranklens.score(...)`` (parses the names on every call);
* a batch of ``--rows`` samples: the naive loop over the rows (the anchor),
  ``Scorer.batch`` and ``score_frame`` on a pandas frame of the same lists.

Ratios are anchor time / ranklens time (above 1: ranklens is faster).  Every
ranklens value is checked against the naive loop's (to 1e-12) first.
``--timer cpu`` times CPU seconds of the process (all threads: the batch's
parallel part counts once per thread) instead of wall seconds, which a loaded
machine moves less::

    python benches/bench_rag.py --rows 10000 --repeat 7
    python benches/bench_rag.py --timer cpu --threads 1
"""

from __future__ import annotations

import argparse
import math
import random
import time
from collections.abc import Callable

import ranklens

METRICS = ["P@5", "recall@5", "mrr", "ndcg@10", "map", "hit_rate@5"]


def naive(retrieved: list[str], relevant: list[str]) -> dict[str, float]:
    """The six metrics as a RAG engineer writes them by hand (binary relevance)."""
    rel = set(relevant)
    hits = [d in rel for d in retrieved]
    top5 = sum(hits[:5])
    rr = 0.0
    for i, h in enumerate(hits):
        if h:
            rr = 1 / (i + 1)
            break
    dcg = sum(1 / math.log2(i + 2) for i, h in enumerate(hits[:10]) if h)
    idcg = sum(1 / math.log2(i + 2) for i in range(min(len(rel), 10)))
    found, ap = 0, 0.0
    for i, h in enumerate(hits):
        if h:
            found += 1
            ap += found / (i + 1)
    return {
        "precision@5": top5 / 5,
        "recall@5": top5 / len(rel),
        "mrr": rr,
        "ndcg@10": dcg / idcg if idcg else 0.0,
        "map": ap / len(rel),
        "hit_rate@5": 1.0 if top5 else 0.0,
    }


def samples(n: int, seed: int) -> tuple[list[list[str]], list[list[str]]]:
    rng = random.Random(seed)
    retrieved, relevant = [], []
    for _ in range(n):
        docs = [f"doc-{rng.randrange(1000)}" for _ in range(30)]
        docs = list(dict.fromkeys(docs))[:10]
        retrieved.append(docs)
        relevant.append([*rng.sample(docs, 1), f"doc-{1000 + rng.randrange(50)}"])
    return retrieved, relevant


def best_of(
    repeat: int,
    funcs: dict[str, Callable[[], object]],
    number: int,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, float]:
    """Seconds per call, best of ``repeat`` rounds of ``number`` calls, alternating."""
    best = dict.fromkeys(funcs, math.inf)
    for _ in range(repeat):
        for name, f in funcs.items():
            t0 = clock()
            for _ in range(number):
                f()
            best[name] = min(best[name], (clock() - t0) / number)
    return best


def check(got: dict[str, float], want: dict[str, float], what: str) -> None:
    for k, v in want.items():
        if not math.isclose(got[k], v, rel_tol=0.0, abs_tol=1e-12):
            raise SystemExit(f"{what}: {k} = {got[k]}, the naive loop gives {v}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rows", type=int, default=10_000)
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--calls", type=int, default=20_000, help="per-sample calls per round")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timer", choices=["wall", "cpu"], default="wall")
    p.add_argument("--threads", type=int, default=None, help="for the batch (default: all)")
    args = p.parse_args(argv)
    clock = time.perf_counter if args.timer == "wall" else time.process_time

    retrieved, relevant = samples(args.rows, args.seed)
    scorer = ranklens.Scorer(METRICS)
    r0, g0 = retrieved[0], relevant[0]
    for r, g in zip(retrieved, relevant):
        check(scorer(r, g), naive(r, g), "Scorer")
    batch = scorer.batch(retrieved, relevant)
    for i in range(0, args.rows, max(1, args.rows // 100)):
        check({k: float(v[i]) for k, v in batch.items()}, naive(retrieved[i], relevant[i]), "batch")

    one = best_of(
        args.repeat,
        {
            "naive loop": lambda: naive(r0, g0),
            "Scorer call": lambda: scorer(r0, g0),
            "ranklens.score": lambda: ranklens.score(r0, g0, METRICS),
        },
        args.calls,
        clock,
    )
    print(f"{args.timer} time")
    print(f"per sample ({len(METRICS)} metrics, {len(r0)} documents), best of {args.repeat}:")
    anchor = one["naive loop"]
    for name, t in one.items():
        print(f"  {name:<16} {t * 1e6:8.2f} us   naive / this = {anchor / t:5.2f}")

    funcs: dict[str, Callable[[], object]] = {
        "naive loop": lambda: [naive(r, g) for r, g in zip(retrieved, relevant)],
        "Scorer.batch": lambda: scorer.batch(retrieved, relevant, threads=args.threads),
    }
    try:
        import pandas as pd

        df = pd.DataFrame({"retrieved_ids": retrieved, "retrieval_gt": relevant})
        funcs["score_frame"] = lambda: ranklens.score_frame(
            df, metrics=METRICS, semantics="trec", threads=args.threads
        )
    except ImportError:
        print("  (pandas not installed: no score_frame row)")
    many = best_of(args.repeat, funcs, 1, clock)
    print(f"batch of {args.rows} rows, best of {args.repeat}:")
    anchor = many["naive loop"]
    for name, t in many.items():
        print(f"  {name:<16} {t * 1e3:8.2f} ms   naive / this = {anchor / t:5.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
