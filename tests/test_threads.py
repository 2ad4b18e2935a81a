"""Shared objects used from many threads at once give the same bits as one thread.

The Rust calls release the GIL, and the module is declared free-threading safe
(``gil_used = false``), so several threads really do run the core at the same time on
the same ``Qrels``, ``Run`` and ``RelevanceEvaluator``.  Each thread's results must be
bit-identical to a single-threaded reference computed first.
"""

from __future__ import annotations

import random
import threading

import numpy as np

import ranklens
from ranklens.compat import pytrec_eval as drop_in

N_THREADS = 8
ROUNDS = 6
METRICS = ["ndcg@10", "map", "recall@100", "P@10", "mrr", "bpref", "err@20", "rbp"]


def _data(seed: int = 7, queries: int = 300):
    rng = random.Random(seed)
    qrels, run = {}, {}
    for q in range(queries):
        docs = [f"d{i}" for i in range(rng.randint(1, 60))]
        judged = rng.sample(docs, min(10, len(docs)))
        qrels[f"q{q}"] = {d: rng.choice([-1, 0, 0, 1, 2, 3]) for d in judged}
        # Rounded scores: many ties, so the tie-break is exercised too.
        run[f"q{q}"] = {d: round(rng.random(), 1) for d in docs}
    return qrels, run


def _hammer(work):
    """Run `work(i)` on N_THREADS threads started together; collect results and errors."""
    barrier = threading.Barrier(N_THREADS)
    results: list = [None] * N_THREADS
    errors: list = []

    def target(i: int) -> None:
        try:
            barrier.wait()
            results[i] = [work(i) for _ in range(ROUNDS)]
        except BaseException as e:  # any failure, reported by the assert below
            errors.append(e)

    threads = [threading.Thread(target=target, args=(i,)) for i in range(N_THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    return results


def test_shared_qrels_and_run_from_many_threads():
    qd, rd = _data()
    qrels, run = ranklens.Qrels(qd), ranklens.Run(rd)
    want = ranklens.evaluate(qrels, run, METRICS, threads=1).values

    def work(i: int) -> np.ndarray:
        # Alternate the thread count of the call itself, and a fresh decode of ids.
        res = ranklens.evaluate(qrels, run, METRICS, threads=1 + i % 3)
        assert res.query_ids == qrels.query_ids
        return res.values

    for per_thread in _hammer(work):
        for got in per_thread:
            assert got.tobytes() == want.tobytes()


def test_encoding_the_same_dicts_from_many_threads():
    qd, rd = _data(seed=11)
    want_q = ranklens.Qrels(qd).arrays
    want_r = ranklens.Run(rd).arrays

    def work(i: int):
        return ranklens.Qrels(qd).arrays, ranklens.Run(rd).arrays

    for per_thread in _hammer(work):
        for got_q, got_r in per_thread:
            for a, b in zip(got_q + got_r, want_q + want_r):
                assert a.dtype == b.dtype and a.tobytes() == b.tobytes()


def test_shared_relevance_evaluator_from_many_threads():
    qd, rd = _data(seed=3)
    measures = {"ndcg_cut.10", "map", "recall.100", "P.10", "recip_rank"}
    evaluator = drop_in.RelevanceEvaluator(qd, measures)
    want = evaluator.evaluate(rd)

    def work(i: int):
        return evaluator.evaluate(rd)

    for per_thread in _hammer(work):
        for got in per_thread:
            assert got == want  # float == float: bit-identical or a failure


def test_shared_scorer_from_many_threads():
    qd, rd = _data(seed=5, queries=200)
    scorer = ranklens.Scorer(["ndcg@10", "map", "mrr", "recall@10", "P@5", "hit_rate@3"])
    samples = [(list(rd[q]), qd[q]) for q in sorted(qd)]
    want = [scorer(retrieved, relevant) for retrieved, relevant in samples]
    want_batch = scorer.batch([s[0] for s in samples], [s[1] for s in samples])

    def work(i: int):
        got = [scorer(retrieved, relevant) for retrieved, relevant in samples]
        batch = scorer.batch([s[0] for s in samples], [s[1] for s in samples])
        return got, batch

    for per_thread in _hammer(work):
        for got, batch in per_thread:
            assert got == want
            assert {k: v.tobytes() for k, v in batch.items()} == {
                k: v.tobytes() for k, v in want_batch.items()
            }


def test_score_from_many_threads_while_its_scorer_cache_evicts():
    # More distinct metric lists than the cache holds (64), from 8 threads at once:
    # evictions race, and every call still gives the single-threaded answer.
    retrieved, relevant = ["a", "b", "c", "d"], {"b": 2, "d": 1}
    lists = [[f"P@{k}", "map", f"ndcg@{j}"] for k in range(1, 11) for j in range(1, 11)]
    want = [ranklens.score(retrieved, relevant, m) for m in lists]

    def work(i: int):
        order = lists[i::N_THREADS] + lists
        return {tuple(m): ranklens.score(retrieved, relevant, m) for m in order}

    for per_thread in _hammer(work):
        for got in per_thread:
            for m, w in zip(lists, want):
                assert got[tuple(m)] == w
