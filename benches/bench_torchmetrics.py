"""ranklens against torchmetrics' retrieval module metrics, same run (needs torch).

Data: ``benches/bench_dense.py``'s (``--rows`` queries x ``--cols`` candidates,
float32 scores, 5% labels 1..3), as flat ``(preds, target, indexes)`` tensors; the
binary metrics get ``target > 0`` (torchmetrics refuses graded targets there).
Five metrics: nDCG@10, MAP, MRR, recall@10, precision@10.  Timed (CPU time of
the process, ``time.process_time``, so that other load on the machine counts
less; torch's own threads included):

* torchmetrics: the five ``Retrieval*`` module metrics, ``update`` then
  ``compute``, sorted ``indexes`` (one run: it takes seconds);
* ``ranklens.compat.torchmetrics``: the same five module metrics (the drop-in),
  sorted and shuffled ``indexes``;
* ``ranklens.evaluate_flat``: the five metrics in one call, shuffled ``indexes``;
* ``ranklens.evaluate_dense``: the five metrics on the matrices.

Usage (in an environment with torch and torchmetrics):
``python benches/bench_torchmetrics.py [--rows 100000] [--repeat 3] [--threads 1]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
import torch
import torchmetrics
import torchmetrics.retrieval as tm

import ranklens
from ranklens.compat import torchmetrics as rt

METRICS = ["ndcg@10", "map", "mrr", "recall@10", "P@10"]


def cpu(f, repeat: int) -> float:
    out = []
    for _ in range(repeat):
        t = time.process_time()
        f()
        out.append(time.process_time() - t)
    return sorted(out)[len(out) // 2]


def modules(lib, preds, graded, binary, indexes) -> list[float]:
    out = []
    for cls, tgt in (
        (lib.RetrievalNormalizedDCG(top_k=10), graded),
        (lib.RetrievalMAP(), binary),
        (lib.RetrievalMRR(), binary),
        (lib.RetrievalRecall(top_k=10), binary),
        (lib.RetrievalPrecision(top_k=10), binary),
    ):
        cls.update(preds, tgt, indexes)
        out.append(float(cls.compute()))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--cols", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    scores = rng.random((a.rows, a.cols), dtype=np.float32)
    labels = (rng.random((a.rows, a.cols)) < 0.05) * rng.integers(1, 4, (a.rows, a.cols))
    binary = (labels > 0).astype(np.int64)
    idx = np.repeat(np.arange(a.rows, dtype=np.int64), a.cols)
    perm = rng.permutation(idx.size)
    p_t, g_t, b_t, i_t = (torch.from_numpy(x.ravel()) for x in (scores, labels, binary, idx))
    print(
        f"# {time.strftime('%Y-%m-%d')} {platform.machine()}, {os.cpu_count()} cores, "
        f"torch {torch.__version__} ({torch.get_num_threads()} threads), torchmetrics "
        f"{torchmetrics.__version__}; {a.rows} x {a.cols}; CPU seconds, median of {a.repeat} "
        f"(torchmetrics: 1 run); ranklens threads={a.threads}; load {os.getloadavg()[0]:.1f}"
    )
    t0 = time.process_time()
    want = modules(tm, p_t, g_t, b_t, i_t)
    t_tm = time.process_time() - t0
    got = modules(rt, p_t, g_t, b_t, i_t)
    assert np.allclose(got, want, rtol=1e-5), (got, want)
    os.environ["RANKLENS_NUM_THREADS"] = str(a.threads)
    t_rt = cpu(lambda: modules(rt, p_t, g_t, b_t, i_t), a.repeat)
    pp, gp, bp, ip = (x[perm] for x in (p_t, g_t, b_t, i_t))
    t_rts = cpu(lambda: modules(rt, pp, gp, bp, ip), a.repeat)
    fp, fl, fi = scores.ravel()[perm], labels.ravel()[perm], idx[perm]
    t_flat = cpu(lambda: ranklens.evaluate_flat(fp, fl, fi, METRICS, threads=a.threads), a.repeat)
    t_dense = cpu(
        lambda: ranklens.evaluate_dense(scores, labels, METRICS, threads=a.threads), a.repeat
    )
    rows = [
        ("torchmetrics, 5 module metrics, sorted indexes", t_tm),
        ("compat.torchmetrics, 5 module metrics, sorted indexes", t_rt),
        ("compat.torchmetrics, 5 module metrics, shuffled indexes", t_rts),
        ("evaluate_flat, 5 metrics, shuffled indexes", t_flat),
        ("evaluate_dense, 5 metrics", t_dense),
    ]
    for name, t in rows:
        print(f"{name:<58} {t * 1000:10.1f} ms  {t_tm / t:8.1f}x faster than torchmetrics")


if __name__ == "__main__":
    main()
