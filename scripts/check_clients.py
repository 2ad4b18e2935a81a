"""Run BEIR's and MTEB's own retrieval scoring with pytrec_eval, then with
ranklens' drop-in in its place, and require the same output.

Not part of CI: BEIR and MTEB pull in torch (several GB).  In a scratch
environment with ranklens installed::

    pip install pytrec-eval-terrier beir mteb
    python scripts/check_clients.py --queries 2000 --docs 100

The clients are called as they call pytrec_eval themselves, on synthetic
BEIR-style data (ids of several shapes, graded and zero labels, relevant
documents not retrieved, tied scores, a query's own id among its results):

* BEIR: ``EvaluateRetrieval.evaluate(qrels, results, k_values)``;
* MTEB: ``calculate_retrieval_scores(results, qrels, k_values, skip_first_result)``
  in ``mteb._evaluators.retrieval_metrics`` (what its retrieval tasks call),
  with ``AbsTaskRetrieval.k_values``.

The module attribute each client reads is swapped (``<module>.pytrec_eval``);
outputs must be equal (``==``, NaN equal to NaN); times are best of
``--repeat``, the client's own Python included (a fresh copy of the results
for each call, made outside the timing).
"""

from __future__ import annotations

import argparse
import copy
import math
import random
import sys
import time
from collections.abc import Callable
from typing import Any

import pytrec_eval

from ranklens.compat import pytrec_eval as drop_in


def synthetic(queries: int, docs: int, seed: int = 0) -> tuple[dict, dict]:
    rng = random.Random(seed)

    def doc_id(j: int) -> str:
        return (str(j), f"MED-{j}", format(j * 2654435761 % (1 << 40), "010x"))[j % 3]

    qrels: dict[str, dict[str, int]] = {}
    results: dict[str, dict[str, float]] = {}
    for i in range(queries):
        q = (str(1000 + i), f"PLAIN-{i}", f"q{i:05d}")[i % 3]
        pool = rng.sample(range(200_000), docs + 10)
        retrieved = pool[:docs]
        rel: dict[str, int] = {}
        for _ in range(rng.randint(1, 5)):
            d = rng.choice(retrieved) if rng.random() < 0.8 else rng.choice(pool[docs:])
            rel[doc_id(d)] = rng.choice([1, 1, 2])
        for _ in range(rng.randint(0, 3)):
            rel.setdefault(doc_id(rng.choice(retrieved)), 0)
        qrels[q] = rel
        coarse = rng.random() < 0.1  # coarse scores: ties
        res = {}
        for d in retrieved:
            s = rng.uniform(-0.2, 0.95)
            res[doc_id(d)] = round(s, 2) if coarse else s
        if rng.random() < 0.02:
            res[q] = 0.99  # the query's own id (quora, arguana)
        results[q] = res
    return qrels, results


def same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return bool(a == b)


def compare(
    name: str, module: Any, call: Callable[[dict], Any], results: dict, repeat: int
) -> bool:
    """``call(a copy of results)`` with ``module.pytrec_eval`` the real one, then
    the drop-in (the clients may drop entries from the results they get)."""
    out, best = {}, {}
    for label, impl in (("pytrec_eval", pytrec_eval), ("ranklens", drop_in)):
        module.pytrec_eval = impl
        times = []
        for _ in range(repeat):
            fresh = copy.deepcopy(results)
            t0 = time.perf_counter()
            out[label] = call(fresh)
            times.append(time.perf_counter() - t0)
        best[label] = min(times)
    module.pytrec_eval = pytrec_eval
    ok = same(out["pytrec_eval"], out["ranklens"])
    print(
        f"{name}: {'same output' if ok else 'OUTPUTS DIFFER'}; "
        f"pytrec_eval {best['pytrec_eval']:.3f} s, drop-in {best['ranklens']:.3f} s "
        f"({best['pytrec_eval'] / best['ranklens']:.2f}x)"
    )
    return ok


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--queries", type=int, default=2000)
    p.add_argument("--docs", type=int, default=100)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args(argv)
    qrels, results = synthetic(args.queries, args.docs)
    ok = True

    import beir.retrieval.evaluation as beir_eval

    k_beir = [1, 3, 5, 10, 100, 1000]
    ok &= compare(
        "BEIR EvaluateRetrieval.evaluate",
        beir_eval,
        lambda res: beir_eval.EvaluateRetrieval.evaluate(qrels, res, k_beir),
        results,
        args.repeat,
    )

    import mteb._evaluators.retrieval_metrics as mteb_metrics
    from mteb.abstasks.retrieval import AbsTaskRetrieval

    k_mteb = list(AbsTaskRetrieval.k_values)
    for skip_first in (False, True):
        ok &= compare(
            f"MTEB calculate_retrieval_scores(skip_first_result={skip_first})",
            mteb_metrics,
            lambda res, skip=skip_first: mteb_metrics.calculate_retrieval_scores(
                res, qrels, k_mteb, skip
            ),
            results,
            args.repeat,
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
