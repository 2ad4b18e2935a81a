"""The diversity metrics against pyndeval (NIST ndeval 4.5 compiled in), the anchor.

A synthetic TREC Web-like collection: ``--queries`` queries, 3 to 8 subtopics each,
``--judged`` judged documents a query (a third relevant to one or two subtopics), a
run of ``--depth`` documents a query (half of them judged), distinct scores.  The
21 measures pyndeval reports by default (ERR-IA, nERR-IA, alpha-DCG, alpha-nDCG,
P-IA, strec at 5, 10, 20; NRBP, nNRBP, MAP-IA), timed in one process, alternating,
median of ``--repeat``:

* scoring: pyndeval's ``RelevanceEvaluator(qrels).evaluate(run)`` against
  ``ranklens.evaluate(qrels, run, metrics)`` on a prebuilt ``Qrels`` and ``Run``;
* end to end: ``pyndeval.ndeval(rows, run_rows)`` against
  ``Qrels.from_subtopics(rows)``, ``Run`` from the same triples and ``evaluate``.

Ratios are anchor time / ranklens time (above 1: ranklens is faster).  Every value
is checked against pyndeval's per query (to 1e-9) first.  ``--timer cpu`` (default)
counts CPU seconds of the process, all threads::

    python benches/bench_diversity.py --queries 50 --judged 300 --depth 1000 --threads 1
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

import pyndeval

import ranklens

KS = [5, 10, 20]
PAIRS = (
    [(f"ERR-IA@{k}", f"ERR_IA@{k}") for k in KS]
    + [(f"nERR-IA@{k}", f"nERR_IA@{k}") for k in KS]
    + [(f"alpha-DCG@{k}", f"alpha_DCG@{k}") for k in KS]
    + [(f"alpha-nDCG@{k}", f"alpha_nDCG@{k}") for k in KS]
    + [("NRBP", "NRBP"), ("nNRBP", "nNRBP"), ("MAP-IA", "AP_IA")]
    + [(f"P-IA@{k}", f"P_IA@{k}") for k in KS]
    + [(f"strec@{k}", f"StRecall@{k}") for k in KS]
)


def data(queries: int, judged: int, depth: int, seed: int = 0):
    rnd = random.Random(seed)
    rows, run_rows = [], []
    for qi in range(queries):
        q = str(100 + qi)
        subtopics = [str(s) for s in range(1, rnd.randint(3, 8) + 1)]
        docs = [f"clueweb09-en{qi:04d}-{i:05d}" for i in range(judged)]
        for d in docs:
            if rnd.random() < 1 / 3:
                for s in rnd.sample(subtopics, rnd.randint(1, 2)):
                    rows.append((q, s, d, 1))
            else:
                rows.append((q, rnd.choice(subtopics), d, 0))
        pool = rnd.sample(docs, min(judged, depth // 2))
        pool += [f"unjudged-{qi}-{i}" for i in range(depth - len(pool))]
        rnd.shuffle(pool)
        run_rows += [(q, d, float(depth - i)) for i, d in enumerate(pool)]
    return rows, run_rows


def timer(kind: str) -> Callable[[], float]:
    return time.process_time if kind == "cpu" else time.perf_counter


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--judged", type=int, default=300)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--timer", choices=["cpu", "wall"], default="cpu")
    args = ap.parse_args()
    rows, run_rows = data(args.queries, args.judged, args.depth)
    names = [nd for nd, _ in PAIRS]
    ours = [rl for _, rl in PAIRS]
    run_dict: dict[str, dict[str, float]] = {}
    for q, d, s in run_rows:
        run_dict.setdefault(q, {})[d] = s
    qrels = ranklens.Qrels.from_subtopics(rows)
    run = ranklens.Run(run_dict)
    ev = pyndeval.RelevanceEvaluator(rows, names)

    want = ev.evaluate(run_rows)
    res = ranklens.evaluate(qrels, run, ours, threads=args.threads)
    for nd, rl in PAIRS:
        per = res.per_query(rl)
        for q, values in want.items():
            if abs(per[q] - values[nd]) > 1e-9:
                raise SystemExit(f"{q} {rl}: ranklens {per[q]} != pyndeval {values[nd]}")

    clock = timer(args.timer)
    cases = {
        "scoring": (
            lambda: ev.evaluate(run_rows),
            lambda: ranklens.evaluate(qrels, run, ours, threads=args.threads),
        ),
        "end to end": (
            lambda: pyndeval.ndeval(rows, run_rows, measures=names),
            lambda: ranklens.evaluate(
                ranklens.Qrels.from_subtopics(rows),
                ranklens.Run(
                    {q: dict(x) for q, x in _grouped(run_rows).items()},
                ),
                ours,
                threads=args.threads,
            ),
        ),
    }
    print(
        f"{args.queries} queries, {args.judged} judged docs and {args.depth} ranked a query, "
        f"{len(rows)} subtopic judgments; {len(ours)} metrics; timer {args.timer}; "
        f"threads {args.threads or 'all'}"
    )
    for label, (anchor, ranklens_fn) in cases.items():
        a, b = [], []
        for _ in range(args.repeat):
            for fn, out in ((anchor, a), (ranklens_fn, b)):
                t0 = clock()
                fn()
                out.append(clock() - t0)
        ta, tb = statistics.median(a), statistics.median(b)
        print(
            f"{label:11s} pyndeval {ta * 1e3:8.1f} ms  ranklens {tb * 1e3:8.1f} ms  x{ta / tb:.1f}"
        )


def _grouped(run_rows):
    out: dict[str, list[tuple[str, float]]] = {}
    for q, d, s in run_rows:
        out.setdefault(q, []).append((d, s))
    return out


if __name__ == "__main__":
    main()
