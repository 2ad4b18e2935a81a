"""Bpref (binary preference, Buckley & Voorhees, SIGIR 2004), as trec_eval computes it.

Let R = number of relevant qrels documents (0 <= label, label >= level) and
N = number of *judged non-relevant* qrels documents (0 <= label < level).  Walk the
ranking from rank 1, keeping ``nonrel_so_far``:

* a document not in the qrels, or with a negative label (trec_eval's "in the pool
  but unjudged"), is skipped: it changes nothing;
* a judged non-relevant document increments ``nonrel_so_far``;
* a relevant document adds ``1 - min(nonrel_so_far, R) / min(N, R)`` if
  ``nonrel_so_far > 0``, and 1 otherwise.

``bpref`` = (sum of the contributions) / R, and 0 when R = 0.

So only judged documents matter, the penalty for a relevant document counts at most
R non-relevant ones ranked above it, and when N = 0 no relevant document is ever
penalised (``nonrel_so_far`` stays 0).  Relevant documents never retrieved
contribute 0.  Ties are resolved by the ranking (doc id descending).

Names: trec_eval ``bpref``; ir_measures ``Bpref``; ranx ``bpref``.
"""

from __future__ import annotations

from ranklens._names import Metric

from ._common import Judgments, Ranked, is_relevant, level_of


def bpref(ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float) -> float:
    level = level_of(metric, relevance_level)
    num_rel = judgments.num_relevant(level)
    if num_rel == 0:
        return 0.0
    num_judged_nonrel = sum(1 for label in judgments.labels.values() if 0 <= label < level)
    total = 0.0
    nonrel_so_far = 0
    for label in ranking.labels:
        if label is None or label < 0:
            continue  # not in the pool, or in the pool but unjudged: skipped
        if is_relevant(label, level):
            if nonrel_so_far > 0:
                total += 1.0 - min(nonrel_so_far, num_rel) / min(num_judged_nonrel, num_rel)
            else:
                total += 1.0
        else:
            nonrel_so_far += 1
    return total / num_rel
