"""Seeded generator of synthetic TREC qrels and runs for the ranklens benchmarks.

The data are meant to look like real evaluation inputs, not to be easy:

* query ids mix numeric strings of varying length (``"1048585"``, ``"37"``) with
  zero-padded ``q000123`` ids; document ids are drawn from a shared collection
  of ClueWeb12 (``clueweb12-0003wb-41-07519``), MS MARCO (``MARCO_D1234567``) and
  GOV2 (``GX012-34-5678901``) style strings of varying length;
* labels are graded 0..3, with a few negative (-1) labels;
* judged documents are biased towards the top of the ranking, some judged
  documents are not retrieved, and most retrieved documents are unjudged;
* about 10% of the scores repeat the score just above them, so that tied
  groups occur, and in about 30% of the queries the best-ranked relevant
  document is tied with the document ranked above it, so ties straddle
  relevant and non-relevant documents (the tie-break then decides the metric);
* every score is a float32 value, written as the shortest decimal that reads
  back as exactly that value in float64.  pytrec_eval keeps scores as float32:
  were the scores arbitrary float64 values, its rounding would create ties
  that a float64 reader does not see, and the comparison would be unfair.

CLI::

    python benches/gen_data.py --queries 100000 --docs-per-query 100 \
        --judged-per-query 10 --seed 0 --out DIR

writes ``DIR/qrels.txt`` (``qid 0 docno label``) and ``DIR/run.txt``
(``qid Q0 docno rank score tag``).  In-process use at small scale::

    from gen_data import generate, write_trec
    qrels, run = generate(1000, 100, 10, seed=0)
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass

import numpy as np

# Share of judged documents that are also retrieved (the rest are judged but
# absent from the run).
RETRIEVED_JUDGED_SHARE = 0.75
# Share of scores replaced by the score of the document ranked just above.
TIE_SHARE = 0.10
# Share of queries whose best-ranked relevant document is tied with the one above.
STRADDLE_SHARE = 0.30
LABELS = np.array([-1, 0, 1, 2, 3], dtype=np.int64)
LABEL_PROBS = np.array([0.02, 0.50, 0.25, 0.15, 0.08])
DEFAULT_TAG = "ranklens-bench"
# Lines are joined and written in chunks of this many queries.
_WRITE_CHUNK_QUERIES = 20_000


@dataclass
class Simulation:
    """The generated data as arrays (one row per query)."""

    qids: list[str]
    docnos: np.ndarray  # object array of str: the document collection
    run_docs: np.ndarray  # (n, docs_per_query) int: index into docnos, rank order
    run_scores: np.ndarray  # (n, docs_per_query) float32, non-increasing per row
    judged_docs: np.ndarray  # (n, judged_per_query) int: index into docnos
    judged_labels: np.ndarray  # (n, judged_per_query) int


def _query_ids(rng: np.random.Generator, n: int) -> list[str]:
    """Unique query ids: numeric strings of varying length mixed with q-prefixed ids."""
    width = max(6, len(str(n)))
    step = 11
    numeric = 1 + np.arange(n, dtype=np.int64) * step + rng.integers(0, step, n)
    style = rng.random(n) < 0.5
    return [
        str(num) if is_numeric else f"q{i:0{width}d}"
        for i, (num, is_numeric) in enumerate(zip(numeric.tolist(), style.tolist()))
    ]


def _doc_collection(rng: np.random.Generator, size: int) -> np.ndarray:
    """``size`` distinct document ids in three styles (ClueWeb12, MS MARCO, GOV2)."""
    style = rng.integers(0, 3, size).tolist()
    a = rng.integers(0, 10_000, size).tolist()
    b = rng.integers(0, 100, size).tolist()
    c = rng.integers(0, 100_000, size).tolist()
    # Unpadded MS MARCO numbers spread over six orders of magnitude: variable lengths.
    marco = np.exp(rng.uniform(0.0, np.log(3_300_000), size)).astype(np.int64).tolist()
    letters = "abcdefghijklmnopqrstuvwxyz"
    tags = [letters[i % 26] + letters[(i // 26) % 26] for i in rng.integers(0, 676, size)]
    ids = []
    for s, x, y, z, m, t in zip(style, a, b, c, marco, tags):
        if s == 0:
            ids.append(f"clueweb12-{x:04d}{t}-{y:02d}-{z:05d}")
        elif s == 1:
            ids.append(f"MARCO_D{m}")
        else:
            ids.append(f"GX{x % 1000:03d}-{y:02d}-{z * 100 + x // 100:07d}")
    unique = list(dict.fromkeys(ids))  # drop the rare collisions, keep the order
    return np.array(unique, dtype=object)


def _distinct_rows(rng: np.random.Generator, n: int, k: int, pool: int) -> np.ndarray:
    """(n, k) integers in [0, pool) with no repeat inside a row."""
    out = rng.integers(0, pool, (n, k))
    srt = np.sort(out, axis=1)
    bad = np.flatnonzero((srt[:, 1:] == srt[:, :-1]).any(axis=1))
    for row in bad.tolist():  # rare when pool >> k
        out[row] = rng.choice(pool, k, replace=False)
    return out


def simulate(
    n_queries: int, docs_per_query: int, judged_per_query: int, seed: int = 0
) -> Simulation:
    """Generate the data as arrays; see the module docstring for its properties."""
    if n_queries < 1 or docs_per_query < 1 or judged_per_query < 1:
        raise ValueError("queries, docs per query and judged per query must be >= 1")
    rng = np.random.default_rng(seed)
    n, d, j = n_queries, docs_per_query, judged_per_query
    qids = _query_ids(rng, n)
    pool_size = max(4 * (d + j), min(n * d // 4, 5_000_000))
    docnos = _doc_collection(rng, pool_size)
    pool = len(docnos)

    run_docs = _distinct_rows(rng, n, d, pool)

    # BM25-like scores: a per-query top score minus exponential gaps.  A fifth
    # of the queries get negative (log-probability-like) scores.
    top = rng.uniform(8.0, 30.0, n)
    top[rng.random(n) < 0.2] -= 40.0
    gaps = rng.exponential(0.2, (n, d))
    gaps[:, 0] = 0.0
    scores = (top[:, None] - np.cumsum(gaps, axis=1)).astype(np.float32)

    # Judged documents among the retrieved ones, biased towards the top
    # (Gumbel top-k sampling with weight 1 / (rank + 5)).
    j_ret = min(j, d)
    ranks = np.arange(d)
    keys = -np.log(ranks + 5.0)[None, :] + rng.gumbel(size=(n, d))
    judged_pos = np.argpartition(-keys, j_ret - 1, axis=1)[:, :j_ret]
    rng.permuted(judged_pos, axis=1, out=judged_pos)  # qrels lines in no particular order
    judged_docs = np.take_along_axis(run_docs, judged_pos, axis=1)
    retrieved = rng.random((n, j_ret)) < RETRIEVED_JUDGED_SHARE
    if j > j_ret:  # more judged than retrieved documents: the rest are not retrieved
        extra = np.zeros((n, j - j_ret), dtype=judged_docs.dtype)
        judged_docs = np.concatenate([judged_docs, extra], axis=1)
        judged_pos = np.concatenate([judged_pos, np.full((n, j - j_ret), d)], axis=1)
        retrieved = np.concatenate([retrieved, np.zeros((n, j - j_ret), bool)], axis=1)
    judged_pos = np.where(retrieved, judged_pos, d)  # d = "not retrieved"

    # Replace the not-retrieved judged documents by collection documents that
    # the query did not retrieve (and that are distinct within the query).
    rows, cols = np.nonzero(~retrieved)
    judged_docs[rows, cols] = rng.integers(0, pool, rows.size)
    clash = (run_docs[rows] == judged_docs[rows, cols][:, None]).any(axis=1)
    srt = np.sort(judged_docs, axis=1)
    dup_rows = set(np.flatnonzero((srt[:, 1:] == srt[:, :-1]).any(axis=1)).tolist())
    for r in sorted(set(rows[clash].tolist()) | dup_rows):  # rare: redo the row slowly
        taken = set(run_docs[r].tolist())
        seen: set[int] = set()
        for c in range(j):
            if retrieved[r, c]:
                seen.add(int(judged_docs[r, c]))
        for c in range(j):
            if retrieved[r, c]:
                continue
            x = int(rng.integers(0, pool))
            while x in taken or x in seen:
                x = int(rng.integers(0, pool))
            judged_docs[r, c] = x
            seen.add(x)

    labels = rng.choice(LABELS, size=(n, j), p=LABEL_PROBS)

    # Ties: a tied position takes the score of the position above it.
    tie = rng.random((n, d)) < TIE_SHARE
    first_rel = np.where(retrieved & (labels >= 1), judged_pos, d).min(axis=1)
    straddle = (first_rel > 0) & (first_rel < d) & (rng.random(n) < STRADDLE_SHARE)
    tie[np.flatnonzero(straddle), first_rel[straddle]] = True
    tie[:, 0] = False
    source = np.maximum.accumulate(np.where(tie, 0, ranks[None, :]), axis=1)
    scores = np.take_along_axis(scores, source, axis=1)

    return Simulation(qids, docnos, run_docs, scores, judged_docs, labels)


def generate(
    n_queries: int, docs_per_query: int, judged_per_query: int, seed: int = 0
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """pytrec_eval-style dicts: ``({qid: {docno: label}}, {qid: {docno: score}})``.

    Run dicts list documents in rank order; every score is a float32 value.
    """
    sim = simulate(n_queries, docs_per_query, judged_per_query, seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    labels = sim.judged_labels.tolist()
    scores = sim.run_scores.astype(np.float64).tolist()
    for i, qid in enumerate(sim.qids):
        qrels[qid] = dict(zip(sim.docnos[sim.judged_docs[i]].tolist(), labels[i]))
        run[qid] = dict(zip(sim.docnos[sim.run_docs[i]].tolist(), scores[i]))
    return qrels, run


def write_trec(
    qrels: dict[str, dict[str, int]],
    run: dict[str, dict[str, float]],
    out_dir: str,
    tag: str = DEFAULT_TAG,
) -> tuple[str, str]:
    """Write dicts as ``out_dir/qrels.txt`` and ``out_dir/run.txt``; return the paths.

    Run documents are ranked by decreasing score (a stable sort, so tied
    documents keep their dict order); scores are written with ``repr`` and so
    read back exactly.
    """
    os.makedirs(out_dir, exist_ok=True)
    qrels_path = os.path.join(out_dir, "qrels.txt")
    run_path = os.path.join(out_dir, "run.txt")
    with open(qrels_path, "w", buffering=1 << 22) as f:
        for qid, docs in qrels.items():
            f.write("".join(f"{qid} 0 {doc} {label}\n" for doc, label in docs.items()))
    with open(run_path, "w", buffering=1 << 22) as f:
        for qid, docs in run.items():
            ranked = sorted(docs.items(), key=lambda item: -item[1])
            f.write(
                "".join(
                    f"{qid} Q0 {doc} {rank} {float(score)!r} {tag}\n"
                    for rank, (doc, score) in enumerate(ranked, start=1)
                )
            )
    return qrels_path, run_path


def write_simulation(sim: Simulation, out_dir: str, tag: str = DEFAULT_TAG) -> tuple[str, str]:
    """Write a :class:`Simulation` as TREC files, fast (chunked, vectorised look-ups)."""
    os.makedirs(out_dir, exist_ok=True)
    qrels_path = os.path.join(out_dir, "qrels.txt")
    run_path = os.path.join(out_dir, "run.txt")
    n, d = sim.run_docs.shape
    j = sim.judged_docs.shape[1]
    qids = np.array(sim.qids, dtype=object)
    rank_suffix = [f" {r} " for r in range(1, d + 1)]
    with open(qrels_path, "w", buffering=1 << 22) as f:
        for lo in range(0, n, _WRITE_CHUNK_QUERIES):
            hi = min(n, lo + _WRITE_CHUNK_QUERIES)
            q = np.repeat(qids[lo:hi], j).tolist()
            docs = sim.docnos[sim.judged_docs[lo:hi].ravel()].tolist()
            labels = sim.judged_labels[lo:hi].ravel().tolist()
            f.write("".join([f"{a} 0 {b} {c}\n" for a, b, c in zip(q, docs, labels)]))
    with open(run_path, "w", buffering=1 << 22) as f:
        tail = f" {tag}\n"
        for lo in range(0, n, _WRITE_CHUNK_QUERIES):
            hi = min(n, lo + _WRITE_CHUNK_QUERIES)
            q = np.repeat(qids[lo:hi], d).tolist()
            docs = sim.docnos[sim.run_docs[lo:hi].ravel()].tolist()
            # float64 repr of a float32 value: the shortest string that reads
            # back (as float64, and so as float32 too) as exactly that value.
            scores = sim.run_scores[lo:hi].astype(np.float64).ravel().tolist()
            ranks = rank_suffix * (hi - lo)
            f.write(
                "".join([f"{a} Q0 {b}{r}{s!r}{tail}" for a, b, r, s in zip(q, docs, ranks, scores)])
            )
    return qrels_path, run_path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--queries", type=int, default=10_000)
    p.add_argument("--docs-per-query", type=int, default=100)
    p.add_argument("--judged-per-query", type=int, default=10)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--tag", default=DEFAULT_TAG, help="run tag (last column)")
    p.add_argument("--out", required=True, help="output directory")
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    sim = simulate(args.queries, args.docs_per_query, args.judged_per_query, args.seed)
    t1 = time.perf_counter()
    qrels_path, run_path = write_simulation(sim, args.out, args.tag)
    t2 = time.perf_counter()
    n_run = args.queries * args.docs_per_query
    print(
        f"wrote {qrels_path} ({sim.judged_docs.size:,} lines) and {run_path} "
        f"({n_run:,} lines): generate {t1 - t0:.1f}s, write {t2 - t1:.1f}s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
