"""The metric sets the benchmarks evaluate, with each library's spelling.

Each entry gives the ranklens name, the pytrec_eval (trec_eval) measure as it is
requested (``"ndcg_cut.10"``; its result key is the same with ``.`` -> ``_``),
whether that trec_eval measure has exactly the ranklens definition (only those
are compared query by query), and the ranx name.  ``None`` means the library
has no such metric, and it is left out of that library's run (its row says how
many of the set's metrics it computed).

Mapping notes:

* ``mrr@10`` has no trec_eval counterpart: trec_eval's ``recip_rank`` has no
  cutoff.  pytrec_eval computes ``recip_rank`` in its place (a comparable amount
  of work), but the two are not compared; ``mrr`` (no cutoff) is, in the 40 set.
* ``ndcg@k`` is trec_eval's ``ndcg_cut.k`` (gain = label), ``map@k`` is
  ``map_cut.k``, ``hit_rate@k`` is ``success.k``, ``r_precision`` is ``Rprec``.
* ranx has no ``num_rel`` / ``num_ret``; its ``hits`` (no cutoff) stands for
  ``num_rel_ret``.  ranx breaks score ties differently from trec_eval, so its
  numbers are timed only, never compared.
"""

from __future__ import annotations

from typing import NamedTuple


class MetricSpec(NamedTuple):
    ranklens: str
    trec: str | None  # pytrec_eval measure, e.g. "ndcg_cut.10"
    identical: bool  # the trec_eval measure has the ranklens definition exactly
    ranx: str | None

    @property
    def trec_key(self) -> str | None:
        """pytrec_eval's result key (``ndcg_cut_10``)."""
        return None if self.trec is None else self.trec.replace(".", "_")


def _cut(ranklens: str, trec: str | None, ranx: str | None, ks: tuple[int, ...]):
    return [
        MetricSpec(
            f"{ranklens}@{k}",
            None if trec is None else f"{trec}.{k}",
            trec is not None,
            None if ranx is None else f"{ranx}@{k}",
        )
        for k in ks
    ]


# The five metrics most papers report.
SET_5 = [
    MetricSpec("ndcg@10", "ndcg_cut.10", True, "ndcg@10"),
    MetricSpec("map", "map", True, "map"),
    MetricSpec("recall@100", "recall.100", True, "recall@100"),
    MetricSpec("P@10", "P.10", True, "precision@10"),
    MetricSpec("mrr@10", "recip_rank", False, "mrr@10"),
]

# The five plus five more that leaderboards commonly add.
SET_10 = [
    *SET_5,
    MetricSpec("ndcg@20", "ndcg_cut.20", True, "ndcg@20"),
    MetricSpec("ndcg", "ndcg", True, "ndcg"),
    MetricSpec("recall@10", "recall.10", True, "recall@10"),
    MetricSpec("bpref", "bpref", True, "bpref"),
    MetricSpec("r_precision", "Rprec", True, "r-precision"),
]

# A broad sweep: every family ranklens has, at several cutoffs (40 metrics).
SET_40 = [
    *_cut("ndcg", "ndcg_cut", "ndcg", (1, 3, 5, 10, 20, 100)),
    *_cut("P", "P", "precision", (1, 3, 5, 10, 20, 100)),
    *_cut("recall", "recall", "recall", (1, 3, 5, 10, 20, 100)),
    *_cut("map", "map_cut", "map", (10, 100)),
    MetricSpec("map", "map", True, "map"),
    MetricSpec("ndcg", "ndcg", True, "ndcg"),
    MetricSpec("mrr", "recip_rank", True, "mrr"),
    MetricSpec("mrr@10", None, False, "mrr@10"),
    MetricSpec("bpref", "bpref", True, "bpref"),
    MetricSpec("r_precision", "Rprec", True, "r-precision"),
    MetricSpec("num_rel_ret", "num_rel_ret", True, "hits"),
    MetricSpec("num_rel", "num_rel", True, None),
    MetricSpec("num_ret", "num_ret", True, None),
    *_cut("hit_rate", "success", "hit_rate", (1, 5, 10)),
    *_cut("f1", None, "f1", (5, 10)),
    *_cut("dcg", None, "dcg", (5, 10)),
    *_cut("ndcg_burges", None, "ndcg_burges", (5, 10)),
    *_cut("hits", None, "hits", (10, 100)),
]

METRIC_SETS: dict[str, list[MetricSpec]] = {"5": SET_5, "10": SET_10, "40": SET_40}

assert len(SET_5) == 5 and len(SET_10) == 10 and len(SET_40) == 40
