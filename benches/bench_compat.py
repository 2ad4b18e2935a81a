"""The pytrec_eval drop-in against pytrec_eval itself, on the same dicts.

Times ``RelevanceEvaluator(qrels, measures).evaluate(run)`` (construction
included, as users call it) for ``pytrec_eval`` and ``ranklens.compat.pytrec_eval``
in one process, alternating, best of ``--repeat``, for three measure sets, and
checks that both return the same values (to 1e-12)::

    python benches/bench_compat.py --queries 10000,100000

Data: the TREC files of ``run_bench.py`` (generated into ``benches/.data`` if
missing), parsed into dicts by the same plain-Python readers.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import run_bench

MEASURE_SETS = {
    "5": {"ndcg_cut.10", "map", "recall.100", "P.10", "recip_rank"},
    "beir": {"ndcg_cut.1,3,5,10,100,1000", "map_cut.1,3,5,10,100,1000", "recall.1,3,5,10,100,1000"},
    "all_trec": {"all_trec"},
}


def _same(a: dict, b: dict) -> bool:
    if a.keys() != b.keys():
        return False
    for q, row in a.items():
        other = b[q]
        if row.keys() != other.keys():
            return False
        for k, v in row.items():
            if not math.isclose(v, other[k], rel_tol=0.0, abs_tol=1e-12):
                return False
    return True


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--queries", type=run_bench._int_list, default=[10_000])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--data-dir", default=run_bench.DEFAULT_DATA_DIR)
    args = p.parse_args(argv)
    import pytrec_eval

    from ranklens.compat import pytrec_eval as drop_in

    print(f"{'queries':>8} {'measures':>9} {'pytrec_eval s':>14} {'ranklens s':>11} {'ratio':>6}")
    for n in args.queries:
        qrels_path, run_path = run_bench.ensure_data(args.data_dir, n, 100, 10, 0)
        qrels = run_bench.parse_qrels(qrels_path)
        run = run_bench.parse_run(run_path)
        for name, measures in MEASURE_SETS.items():
            best = {"pytrec_eval": math.inf, "ranklens": math.inf}
            outputs = {}
            for _ in range(args.repeat):
                for lib, module in (("pytrec_eval", pytrec_eval), ("ranklens", drop_in)):
                    t = time.perf_counter()
                    outputs[lib] = module.RelevanceEvaluator(qrels, measures).evaluate(run)
                    best[lib] = min(best[lib], time.perf_counter() - t)
            if not _same(outputs["pytrec_eval"], outputs["ranklens"]):
                print(f"{n}, {name}: the outputs differ", file=sys.stderr)
                return 1
            a, b = best["pytrec_eval"], best["ranklens"]
            print(f"{n:>8,} {name:>9} {a:>14.3f} {b:>11.3f} {a / b:>5.1f}x", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
