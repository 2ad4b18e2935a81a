"""The ir_measures door (PyTerrier's): ranklens's provider against ir_measures' default.

``ir_measures.calc_aggregate(measures, qrels, run)`` with ir_measures' default pipeline
(pytrec_eval's provider for these measures) and with the ranklens provider put first
(``ranklens.compat.ir_measures.install()``), on the same inputs, in one process,
alternating, best of ``--repeat``; ratios are ir_measures' time / ranklens's.  Two input
shapes:

* dicts of dicts (``{query: {doc: label}}``, ``{query: {doc: score}}``);
* pandas frames with ``query_id``, ``doc_id``, ``relevance`` / ``score`` columns, what
  PyTerrier's ``pt.Experiment`` hands to ir_measures.

Data: ``gen_data.generate(--queries, 100, 10, seed 0)`` (the file benchmark's data as
dicts: 100 ranked documents and 10 judgments a query, float32 scores).  Measures: the 5
set in ir_measures' names, ``nDCG@10``, ``AP``, ``R@100``, ``P@10``, ``RR``.  Before
timing, the two pipelines' aggregates are checked equal within 1e-9 on each shape (exit
1 if not).  Times are wall seconds and CPU seconds of the process (all threads)::

    python benches/bench_ir_measures.py --queries 10000,100000
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import ir_measures
from ir_measures import AP, RR, P, R, nDCG

from bench_compat import _best  # benches/ (the script's folder) is on sys.path
from gen_data import generate
from ranklens.compat import ir_measures as rl_ir_measures

MEASURES = [nDCG @ 10, AP, R @ 100, P @ 10, RR]


def _frames(qrels: dict, run: dict):
    import pandas as pd

    qrels_df = pd.DataFrame(
        [(q, d, v) for q, docs in qrels.items() for d, v in docs.items()],
        columns=["query_id", "doc_id", "relevance"],
    )
    run_df = pd.DataFrame(
        [(q, d, s) for q, docs in run.items() for d, s in docs.items()],
        columns=["query_id", "doc_id", "score"],
    )
    return qrels_df, run_df


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--queries", default="10000", help="comma-separated numbers of queries")
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args(argv)
    default = list(ir_measures.DefaultPipeline.providers)
    ranklens_first = [rl_ir_measures.RanklensProvider(), *default]

    def calc(providers: list, qrels, run) -> dict:
        ir_measures.DefaultPipeline.providers[:] = providers
        try:
            return ir_measures.calc_aggregate(MEASURES, qrels, run)
        finally:
            ir_measures.DefaultPipeline.providers[:] = default

    print(
        f"# {time.strftime('%Y-%m-%d %H:%M')} {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, ir_measures {ir_measures.__version__}; "
        f"best of {a.repeat}; load average {os.getloadavg()[0]:.1f}"
    )
    status = 0
    for n in (int(x) for x in a.queries.split(",")):
        qrels, run = generate(n, 100, 10, seed=0)
        shapes = {"dicts": (qrels, run), "pandas frames": _frames(qrels, run)}
        print(f"\n{n:,} queries x 100 documents; wall s / CPU s")
        print(f"{'input':<14} {'ir_measures':>19} {'ranklens provider':>19} {'ratio':>13}")
        for shape, (q, r) in shapes.items():
            want, got = calc(default, q, r), calc(ranklens_first, q, r)
            worst = max(abs(want[m] - got[m]) for m in MEASURES)
            if worst > 1e-9:
                print(f"{shape}: aggregates differ by {worst:.3g}", file=sys.stderr)
                status = 1
            base = _best(lambda q=q, r=r: calc(default, q, r), a.repeat)
            ours = _best(lambda q=q, r=r: calc(ranklens_first, q, r), a.repeat)
            print(
                f"{shape:<14} {base[0]:>8.3f} / {base[1]:>8.3f} {ours[0]:>8.3f} / {ours[1]:>8.3f}"
                f" {base[0] / ours[0]:>5.1f}x / {base[1] / ours[1]:>4.1f}x"
            )
    return status


if __name__ == "__main__":
    sys.exit(main())
