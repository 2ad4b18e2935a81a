"""Inferred AP (Yilmaz & Aslam, CIKM 2006), exactly as trec_eval ``infAP``.

Each retrieved document is one of: not in the pool (not in the qrels), in the pool
but unjudged (negative label: the judged pool is a sample), judged non-relevant
(0 <= label < level) or judged relevant.  Walk the ranking with 0-based index j,
counting the documents above j that are relevant (rel), judged non-relevant (non)
and unjudged in the pool (unj).  Each relevant document at j adds

* 1 if j = 0, else
* 1/(j+1) + (j/(j+1)) * ((rel + non + unj) / j) * ((rel + e) / (rel + non + 2e)),
  e = 0.00001 (trec_eval's INFAP_EPSILON).

That is: 1/(j+1) for the document itself, plus the expected precision above it,
estimated from the judged documents above, with documents not in the pool counted
as non-relevant (they only enter through j) and pooled unjudged ones as relevant in
the judged proportion.  infAP = sum / R (0 when R = 0).  Unretrieved relevant
documents add 0.  With no negative labels and no unpooled document it is AP up to
the epsilon.

Names: trec_eval ``infAP``; ir_measures ``infAP``; ranklens ``inf_ap``.
"""

from __future__ import annotations

from ranklens._names import Metric

from ._common import Judgments, Ranked, is_relevant, level_of

INFAP_EPSILON = 0.00001


def inf_ap(ranking: Ranked, judgments: Judgments, metric: Metric, relevance_level: float) -> float:
    level = level_of(metric, relevance_level)
    rel = non = unj = 0
    total = 0.0
    for j, label in enumerate(ranking.labels):
        if label is None:
            continue  # not in the pool
        if label < 0:
            unj += 1  # in the pool, unjudged
            continue
        if not is_relevant(label, level):
            non += 1
            continue
        rel += 1
        if j == 0:
            total += 1.0
        else:
            fj = float(j)
            total += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((rel - 1 + non + unj) / fj) * (
                (rel - 1 + INFAP_EPSILON) / (rel - 1 + non + 2 * INFAP_EPSILON)
            )
    r = judgments.num_relevant(level)
    return total / r if r else total
