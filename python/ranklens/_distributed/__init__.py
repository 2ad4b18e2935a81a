"""Engine-neutral core of :mod:`ranklens.dask` and :mod:`ranklens.spark`.

A distributed evaluation is three steps, and only the first depends on the engine:

1. the engine groups the run's rows by query (a shuffle on the query id), so that
   every row of one query lands in one partition, next to the qrels of the same
   queries (a join) or next to a broadcast :class:`~ranklens.Qrels`;
2. :func:`score_frames` scores one partition with the Rust kernels and returns one
   row per query: the query id, a status (``scored``; ``missing``: a qrels query
   absent from the run, scored on an empty ranking as :func:`~ranklens.evaluate`
   does; ``ignored``: a run-only query) and one float64 column per metric;
3. :func:`combine` gathers those rows on the driver, checks that no query was
   emitted twice, sorts the qrels queries by UTF-8 bytes (the order ``evaluate``
   uses) and builds the same :class:`~ranklens.Results`.  The aggregates are
   computed by ``Results`` from the identical per-query values in the identical
   order, so means, sums and geometric means are bit-identical to ``evaluate``.

Per-query values do not depend on the other queries of a batch, with one
exception handled here: ``err`` with its automatic ``gmax`` (the largest label of
the *whole* qrels).  :func:`make_plan` resolves it on the driver from the full
qrels, so a partition holding a subset of the qrels scores as the whole would.
That is why the kernels are called through the native ``evaluate`` with resolved
metric specs rather than through :func:`ranklens.evaluate`.

Driver memory for :func:`combine`: the per-query rows (8 bytes x metrics per
query, plus the id and a status string), held twice while the values array is
built; e.g. 10M queries x 10 metrics: 800 MB of values plus the ids.

Neither dask nor pyspark is imported here: pandas, numpy and pyarrow only.
"""

from __future__ import annotations

from ranklens._distributed._combine import combine
from ranklens._distributed._partition import (
    empty_output,
    output_columns,
    score_frames,
    score_missing,
)
from ranklens._distributed._plan import (
    IGNORED,
    MISSING,
    QUERY,
    SCORED,
    STATUS,
    Columns,
    MetricsArg,
    Plan,
    check_broadcast_limit,
    check_call,
    check_npartitions,
    joined_plan,
    make_plan,
    max_label_of,
)
from ranklens._distributed._shared import SharedQrels, broadcast_plan, take_queries

__all__ = [
    "IGNORED",
    "MISSING",
    "QUERY",
    "SCORED",
    "STATUS",
    "Columns",
    "MetricsArg",
    "Plan",
    "SharedQrels",
    "broadcast_plan",
    "check_broadcast_limit",
    "check_call",
    "check_npartitions",
    "combine",
    "empty_output",
    "joined_plan",
    "make_plan",
    "max_label_of",
    "output_columns",
    "score_frames",
    "score_missing",
    "take_queries",
]
