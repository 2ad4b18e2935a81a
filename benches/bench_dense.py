"""The array door against its anchors, same run: score matrices, flat tensors, ANN recall.

Data: ``--rows`` queries (100,000) x ``--cols`` candidates (100),
float32 scores uniform in [0, 1), 5% graded labels 1..3 (int64), metrics ndcg@10,
map, mrr, recall@10 and P@10.  Every figure is the best of ``--repeat`` runs of the
whole call from the numpy arrays, and every ratio is against an anchor timed in the
same process (the numpy pass and ``evaluate_dense`` in turn, call for call):

* ``numpy pass``: one numpy pass over both matrices (``scores.sum()`` and
  ``labels.sum()``): the floor of anything that reads them;
* ``numpy argsort``: the five metrics the usual numpy way (stable argsort of each
  row, gather the labels, vectorised formulas); its values are checked against
  ranklens';
* ``sklearn ndcg_score(k=10)``: one metric, tie-averaged (its default), when
  scikit-learn is installed;
* ``evaluate_dense`` on 1 and ``--threads`` threads; ``evaluate_flat`` on the same
  cells with sorted and with shuffled ``indexes``;
* ANN recall@10 and @100 on ``--rows`` x 100 neighbour ids: ``knn_recall`` against
  the numpy sort idiom (sort the concatenated rows, count equal neighbours) and
  one numpy pass (compare the two arrays cell by cell; timed in turn with
  ``knn_recall``);
* one row at a time (a RAG pipeline's call): the median ``evaluate_dense`` call on
  one row, and sklearn's ``ndcg_score(k=10)`` on it.

Memory: the peak RSS added by ``evaluate_dense`` over the inputs, measured in a
child process that resets its high-water mark (``/proc/self/clear_refs``) after
building the inputs.  torchmetrics: ``benches/bench_torchmetrics.py`` (it needs torch).

Usage: ``python benches/bench_dense.py [--rows 100000] [--threads 2] [--repeat 5]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time

import numpy as np

import ranklens

METRICS = ["ndcg@10", "map", "mrr", "recall@10", "P@10"]


def best(f, repeat: int) -> float:
    out = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        out = min(out, time.perf_counter() - t)
    return out


def best_in_turn(fs: list, repeat: int) -> list[float]:
    """The best time of each of ``fs``, timed in turn, call for call, ``repeat`` rounds."""
    out = [float("inf")] * len(fs)
    for _ in range(repeat):
        for i, f in enumerate(fs):
            out[i] = min(out[i], best(f, 1))
    return out


def data(rows: int, cols: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    scores = rng.random((rows, cols), dtype=np.float32)
    labels = (rng.random((rows, cols)) < 0.05) * rng.integers(1, 4, (rows, cols))
    return scores, labels


def numpy_argsort(scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """The five metrics with numpy (ties in column order, as ranklens' default)."""
    order = np.argsort(-scores, axis=1, kind="stable")
    ranked = np.take_along_axis(labels, order, axis=1).astype(np.float64)
    rel = ranked >= 1
    n_rel = rel.sum(axis=1)
    disc = 1 / np.log2(np.arange(2, ranked.shape[1] + 2))
    dcg = (ranked[:, :10] * disc[:10]).sum(axis=1)
    ideal = -np.sort(-labels, axis=1)[:, :10].astype(np.float64)
    idcg = (ideal * disc[:10]).sum(axis=1)
    ndcg = np.divide(dcg, idcg, out=np.zeros_like(dcg), where=idcg > 0)
    hits = np.cumsum(rel, axis=1)
    prec = hits / np.arange(1, ranked.shape[1] + 1)
    ap = np.divide((prec * rel).sum(axis=1), n_rel, out=np.zeros(len(rel)), where=n_rel > 0)
    first = np.where(rel.any(axis=1), rel.argmax(axis=1) + 1, np.inf)
    mrr = 1 / first
    r10 = np.divide(hits[:, 9], n_rel, out=np.zeros(len(rel)), where=n_rel > 0)
    p10 = hits[:, 9] / 10
    return np.stack([ndcg, ap, mrr, r10, p10], axis=1)


def knn_numpy_sort(a: np.ndarray, e: np.ndarray, k: int) -> np.ndarray:
    both = np.sort(np.concatenate([a[:, :k], e[:, :k]], axis=1), axis=1)
    return (both[:, 1:] == both[:, :-1]).sum(axis=1) / k


def memory_child(rows: int, cols: int, threads: int) -> None:
    scores, labels = data(rows, cols)
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset VmHWM to the current RSS

    def status(key: str) -> int:
        for line in open("/proc/self/status"):
            if line.startswith(key):
                return int(line.split()[1])
        return 0

    before = status("VmRSS:")
    ranklens.evaluate_dense(scores, labels, METRICS, threads=threads)
    print(status("VmHWM:") - before)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--cols", type=int, default=100)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--memory-child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.memory_child:
        memory_child(a.rows, a.cols, a.threads)
        return
    scores, labels = data(a.rows, a.cols)
    print(f"# {time.strftime('%Y-%m-%d')} {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores; {a.rows} x {a.cols}, best of {a.repeat}; "
          f"load average {os.getloadavg()[0]:.1f}")  # fmt: skip
    rows: list[tuple[str, float, str]] = []  # printed as they come

    def add(name: str, seconds: float, anchor: float | None = None, label: str = "") -> None:
        ratio = f"{seconds / anchor:.2f}x {label}" if anchor else ""
        rows.append((name, seconds, ratio))
        fig = f"{seconds:8.2f}x" if name.startswith("  ") else f"{seconds * 1000:9.1f} ms"
        print(f"{name:<56} {fig}  {ratio}", flush=True)

    # The numpy pass and evaluate_dense timed in turn, call for call.  Why: on a
    # shared VM the same call slows for seconds at a time (several calls in a
    # row, in one process on the same buffers), so an anchor timed seconds
    # before the call it divides would move the ratio.
    t_pass, t1, tn = best_in_turn(
        [
            lambda: (scores.sum(), labels.sum()),
            lambda: ranklens.evaluate_dense(scores, labels, METRICS, threads=1),
            lambda: ranklens.evaluate_dense(scores, labels, METRICS, threads=a.threads),
        ],
        a.repeat,
    )
    add("numpy pass (both matrices)", t_pass)
    want = numpy_argsort(scores, labels)
    got = ranklens.evaluate_dense(scores, labels, METRICS).values
    assert np.allclose(got, want, rtol=1e-12, atol=1e-12), "numpy anchor disagrees"
    t_np = best(lambda: numpy_argsort(scores, labels), a.repeat)
    add("numpy argsort, 5 metrics", t_np, t_pass, "numpy pass")
    add("evaluate_dense, 1 thread", t1, t_pass, "numpy pass (timed in turn)")
    add(f"evaluate_dense, {a.threads} threads", tn, t_pass, "numpy pass (timed in turn)")
    add("  speed-up over numpy argsort (1 thread)", t_np / t1)
    try:
        from sklearn.metrics import ndcg_score
    except ImportError:
        ndcg_score = None
    if ndcg_score is not None:
        t_sk = best(lambda: ndcg_score(labels, scores, k=10), 1)
        add("sklearn ndcg_score(k=10), 1 metric", t_sk, t_pass, "numpy pass")
        add("  speed-up of evaluate_dense (5 metrics, 1 thread)", t_sk / t1)
        add(f"  speed-up of evaluate_dense (5 metrics, {a.threads} threads)", t_sk / tn)
    # The sorted flat cells and the dense path timed in turn, call for call: the
    # ratio of two calls measured apart moves with what ran between them (after
    # sklearn's seconds of allocations, the flat call's first writes of fresh
    # pages).
    idx = np.repeat(np.arange(a.rows, dtype=np.int64), a.cols)
    fs, fl = scores.ravel(), labels.ravel()
    t_fs, t_fd = best_in_turn(
        [
            lambda: ranklens.evaluate_flat(fs, fl, idx, METRICS, threads=a.threads),
            lambda: ranklens.evaluate_dense(scores, labels, METRICS, threads=a.threads),
        ],
        a.repeat,
    )
    add("evaluate_flat, sorted indexes", t_fs, t_fd, "evaluate_dense (timed in turn)")
    perm = np.random.default_rng(1).permutation(len(idx))
    ps, pl, pi = fs[perm], fl[perm], idx[perm]
    t_fu = best(lambda: ranklens.evaluate_flat(ps, pl, pi, METRICS, threads=a.threads), a.repeat)
    add("evaluate_flat, shuffled indexes", t_fu, tn, "evaluate_dense")

    rng = np.random.default_rng(2)
    exact = np.argsort(rng.random((a.rows, 1000)), axis=1)[:, :100].astype(np.int64)
    # 90% of the true neighbours found; the misses are ids no row holds twice.
    approx = np.where(rng.random((a.rows, 100)) < 0.9, exact, 1000 + np.arange(100))
    for k in (10, 100):
        assert np.array_equal(
            ranklens.knn_recall(approx, exact, k), knn_numpy_sort(approx, exact, k)
        )
        # The pass and knn_recall in turn, as the dense ones (calls of a few
        # ms move between spells of the host's other work).
        t_one, t_rl = best_in_turn(
            [
                lambda k=k: (approx[:, :k] == exact[:, :k]).sum(),
                lambda k=k: ranklens.knn_recall(approx, exact, k, threads=a.threads),
            ],
            a.repeat,
        )
        t_sort = best(lambda k=k: knn_numpy_sort(approx, exact, k), a.repeat)
        add(f"recall@{k}: numpy pass", t_one)
        add(f"recall@{k}: numpy sort idiom", t_sort, t_one, "numpy pass")
        add(f"recall@{k}: knn_recall", t_rl, t_one, "numpy pass (timed in turn)")
        add(f"  speed-up over the sort idiom @{k}", t_sort / t_rl)

    # One sample at a time (a RAG pipeline's call): one row of `--cols`, the
    # median of 2000 calls (a call of up to 64 rows runs on the calling thread).
    one_s, one_l = scores[:1], labels[:1]

    def median_call(f) -> float:
        ts = []
        for _ in range(2000):
            t = time.perf_counter()
            f()
            ts.append(time.perf_counter() - t)
        return sorted(ts)[len(ts) // 2]

    t_row = median_call(lambda: ranklens.evaluate_dense(one_s, one_l, METRICS))
    print(f"{'one row: evaluate_dense, 5 metrics (median call)':<56} {t_row * 1e6:9.1f} us")
    if ndcg_score is not None:
        t_skr = median_call(lambda: ndcg_score(one_l, one_s, k=10))
        print(f"{'one row: sklearn ndcg_score(k=10) (median call)':<56} {t_skr * 1e6:9.1f} us"
              f"  {t_skr / t_row:.1f}x evaluate_dense")  # fmt: skip

    if sys.platform == "linux":
        cmd = [sys.executable, __file__, "--memory-child", f"--rows={a.rows}",
               f"--cols={a.cols}", f"--threads={a.threads}"]  # fmt: skip
        extra = int(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
        per_cell = extra * 1024 / (a.rows * a.cols)
        inputs = (scores.nbytes + labels.nbytes) / 2**20
        results = a.rows * len(METRICS) * 8 / 2**20
        print(f"evaluate_dense peak RSS over the inputs: {extra / 1024:.1f} MiB "
              f"({per_cell:.2f} bytes a cell; inputs {inputs:.0f} MiB, "
              f"results {results:.1f} MiB)")  # fmt: skip


if __name__ == "__main__":
    main()
