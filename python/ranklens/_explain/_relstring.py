"""trec_eval's ``relstring``: the relevance of each ranked document, as one string.

Per query only (it is not a number, so it is not in :class:`~ranklens.Results`):
character ``i`` describes the document at rank ``i + 1``:

* ``0``-``9`` – its label (the integer part, as trec_eval reads labels);
* ``>`` – a label above 9;
* ``.`` – in the qrels with a negative label ("in the pool, unjudged");
* ``-`` – not in the qrels.

>>> relstring_of({"a": 2, "b": 0, "c": -1}, ["x", "a", "c", "b"], 10)
'-2.0'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ranklens._data import Qrels, Run, as_qrels, as_run

__all__ = ["relstring", "relstring_of"]


def relstring_of(
    labels: Mapping[str, float], ranked: Sequence[str], length: int, *, judged_only: bool = False
) -> str:
    """The relstring of one ranking (document ids in rank order) against its labels."""
    rels = [int(labels[d]) if d in labels else None for d in ranked]
    if judged_only:
        rels = [r for r in rels if r is not None and r >= 0]
    out = []
    for r in rels[: max(length, 0)]:
        if r is None:
            out.append("-")
        elif r < 0:
            out.append(".")
        elif r > 9:
            out.append(">")
        else:
            out.append(chr(ord("0") + r))
    return "".join(out)


def relstring(
    qrels: Qrels | Mapping[str, Mapping[str, float]],
    run: Run | Mapping[str, object],
    k: int = 10,
    *,
    judged_only: bool = False,
    max_docs: int | None = None,
) -> dict[str, str]:
    """``{query_id: relstring}`` of the top ``k`` for every qrels query (trec_eval
    ``relstring.k``); a query missing from the run gets ``""``.  ``judged_only``
    and ``max_docs`` are trec_eval's ``-J`` and ``-M``, as in :func:`~ranklens.evaluate`.
    """
    q, r = as_qrels(qrels), as_run(run)
    out = {}
    for qid in q.query_ids:
        ranked = r.ranking(qid) if qid in r else []
        if max_docs is not None:
            ranked = ranked[:max_docs]
        out[qid] = relstring_of(q[qid], ranked, k, judged_only=judged_only)
    return out
