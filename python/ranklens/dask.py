"""Score a run held in a Dask DataFrame, with exactly the numbers of one process.

>>> import dask.dataframe as dd
>>> import ranklens.dask
>>> run = dd.read_parquet("run/")                       # query_id, doc_id, score
>>> res = ranklens.dask.evaluate(qrels, run, ["ndcg@10", "map"])   # a ranklens.Results

The run may be partitioned any way: rows of one query can sit in several
partitions.  They are grouped by query with one hash shuffle on the query id
(the ids are cast to strings first, so ``7`` and ``"7"`` meet, as they do in
:func:`ranklens.evaluate`); every partition is then scored inside the workers by
the Rust kernels, and the per-query rows are combined on the client into the
:class:`~ranklens.Results` that :func:`ranklens.evaluate` returns for the same
data, bit for bit (see :mod:`ranklens._distributed`).

The qrels are either broadcast (a :class:`~ranklens.Qrels`, a mapping, a pandas
frame, or a Dask frame of at most ``broadcast_limit`` rows, computed first): sent
once to every worker, each task scoring only the qrels queries its rows hold; or,
for a larger Dask frame, shuffled together with the run (both sides in one frame,
one shuffle, so the rows of a query and its judgments always meet).

Importing this module imports dask; ``import ranklens`` does not.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ranklens._checks import twice_text
from ranklens._distributed import (
    Columns,
    MetricsArg,
    Plan,
    SharedQrels,
    broadcast_plan,
    check_broadcast_limit,
    check_call,
    check_npartitions,
    combine,
    empty_output,
    joined_plan,
    score_frames,
)
from ranklens._evaluate import Results
from ranklens.errors import RanklensInputError

try:
    import dask
    import dask.dataframe as dd
except ImportError as e:  # pragma: no cover - the extra is missing
    raise ImportError(
        "ranklens.dask needs dask: pip install 'ranklens[dask]' (dask[dataframe], distributed)"
    ) from e

__all__ = ["DEFAULT_BROADCAST_LIMIT", "evaluate"]

# Qrels rows up to which a Dask qrels frame is computed and broadcast: about 50 bytes
# per row once encoded (~100 MB), sent once to each worker.
DEFAULT_BROADCAST_LIMIT = 2_000_000

# Internal column names after projection: the user's names never reach the shuffle.
_Q, _D, _V, _SIDE, _POS = "_rl_query", "_rl_doc", "_rl_value", "_rl_side", "_rl_position"
# 1 where a query id came as an int, 0 as anything else: ``1`` and ``"1"`` are one
# string after the projection, and may meet only after the shuffle.
_QKIND = "_rl_qkind"
_RUN, _QRELS = 0, 1


def evaluate(
    qrels: Any,
    run: Any,
    metrics: MetricsArg,
    *,
    query: str = "query_id",
    doc: str = "doc_id",
    score: str = "score",
    label: str = "relevance",
    position: str | None = None,
    npartitions: int | None = None,
    broadcast_limit: float = DEFAULT_BROADCAST_LIMIT,
    relevance_level: float | str = 1,
    judged_only: bool = False,
    max_docs: int | None = None,
    ties: str = "trec",
    threads: int | None = 1,
    score_precision: str = "f64",
) -> Results:
    """Score ``run`` (a ``dask.dataframe.DataFrame``) against ``qrels``.

    Returns the :class:`~ranklens.Results` of ``ranklens.evaluate`` on the same
    rows: same per-query values, aggregates, ``missing_queries`` and
    ``ignored_queries``.

    ``qrels``: a :class:`~ranklens.Qrels` (grouped ones included), a mapping, a
    pandas frame, or a Dask frame.  A Dask frame of at most ``broadcast_limit``
    rows is computed and broadcast like the others; a larger one is shuffled with
    the run (``broadcast_limit=0`` forces that).
    ``query``, ``doc``, ``score``, ``label``: column names (those of
    ``Run.from_pandas`` / ``Qrels.from_pandas`` by default); ids may be strings,
    integers or categoricals.  A query id given both as an int and as a str (``1``
    and ``"1"``) in an object column is an error, as in ``evaluate``; Dask's
    default ``dataframe.convert-string`` makes such a column strings when the
    frame is built, before ranklens sees it.
    ``position``: with ``ties="input"`` only, and then required: a column giving
    each row's order within its query (e.g. the TREC rank), since a shuffle does
    not keep row order.  Positions must be distinct within a query.
    ``npartitions``: partitions after the shuffle (default: the run's); each is
    scored by one task, so each must fit in a worker's memory: about its rows x
    (2 x document id length + ~70 bytes) while it is scored (docs/distributed.md).
    ``threads``: Rust threads per task; 1 by default, since Dask already runs one
    task per worker thread.
    The other options are those of :func:`ranklens.evaluate` (``score_precision``
    that of :meth:`ranklens.Run.from_pandas`).

    Runs on whatever scheduler is active: a ``distributed.Client`` if one exists
    (the qrels are then scattered to every worker once), else Dask's local one.
    """
    import pandas as pd

    if not isinstance(run, dd.DataFrame):
        raise RanklensInputError(f"run must be a dask DataFrame, got {type(run).__name__}")
    cols, options = check_call(
        metrics,
        Columns(query, doc, score, label, position),
        relevance_level=relevance_level,
        judged_only=judged_only,
        max_docs=max_docs,
        ties=ties,
        threads=threads,
        score_precision=score_precision,
    )
    n = check_npartitions(npartitions) or run.npartitions
    limit = check_broadcast_limit(broadcast_limit)
    _check_dtypes(run, cols.run_columns(), "run", cols)
    if isinstance(qrels, dd.DataFrame):
        _check_dtypes(qrels, cols.qrels_columns(), "qrels", cols)
        rows, top = dask.compute(qrels.map_partitions(len).sum(), qrels[label].max())
        max_label = 0.0 if pd.isna(top) else float(top)
        plan = joined_plan(rows, max_label, limit, metrics, options)
        if plan is not None:
            return _joined(qrels, run, plan, cols, n)
        qrels = qrels.compute()
    shared, plan = broadcast_plan(qrels, cols, metrics, options)
    return _broadcast(shared, run, plan, cols, n)


# -- the two plans --------------------------------------------------------------------------
def _internal(cols: Columns) -> Columns:
    return cols.internal(_Q, _D, _V, _POS)


def _broadcast(shared: SharedQrels, run: Any, plan: Plan, cols: Columns, n: int) -> Results:
    """Qrels sent once to every worker; the run shuffled by query and scored in place."""
    client = _client(run)
    prepared = run.map_partitions(_prepare, cols.run_columns(), None)
    grouped = prepared.shuffle(on=_Q, npartitions=n, ignore_index=True, **_method(client))
    if client is None:  # a local scheduler: the tasks share the object
        payload, future = dask.delayed(shared), None
    else:  # on every worker once, not pickled into each task
        future = client.scatter(shared, broadcast=True, hash=False)
        payload = dask.delayed(future)
    parts = grouped.map_partitions(
        _score_broadcast, payload, plan, _internal(cols), meta=empty_output(plan)
    )
    frame = parts.compute()
    del future  # releases the scattered qrels
    return combine([frame], plan, qrels=shared)


def _joined(qrels: Any, run: Any, plan: Plan, cols: Columns, n: int) -> Results:
    """Run and qrels rows in one frame, one shuffle by query: a query's rows meet."""
    with_pos = cols.position is not None
    r = run.map_partitions(_prepare, cols.run_columns(), _RUN)
    q = qrels.map_partitions(
        _prepare, [*cols.qrels_columns(), *([None] if with_pos else [])], _QRELS
    )
    both = dd.concat([r, q])
    grouped = both.shuffle(on=_Q, npartitions=n, ignore_index=True, **_method(_client(both)))
    parts = grouped.map_partitions(_score_joined, plan, _internal(cols), meta=empty_output(plan))
    return combine([parts.compute()], plan)


def _client(frame: Any) -> Any:
    """The ``distributed`` client that will compute ``frame``, or None (local scheduler)."""
    from dask.base import get_scheduler

    client = getattr(get_scheduler(collections=[frame]), "__self__", None)
    return client if hasattr(client, "scatter") else None


def _method(client: Any) -> dict[str, str]:
    """Dask picks P2P when a client exists, even if a local scheduler will run the
    graph (which P2P cannot): the method follows the scheduler actually used."""
    return {} if client is not None else {"shuffle_method": "tasks"}


# -- inside the workers -------------------------------------------------------------------
def _prepare(pdf: Any, src: list[str | None], side: int | None) -> Any:
    """Project one partition onto the internal columns: ids as strings (the hash
    and both sides must see the same values), values as float64."""
    import pandas as pd

    string = pd.StringDtype("pyarrow")
    data: dict[str, Any] = {
        _Q: pdf[src[0]].astype(string),
        _QKIND: _int_kind(pdf[src[0]]),
        _D: pdf[src[1]].astype(string),
        # nullable columns too: a null becomes NaN, which the encoder rejects by name
        _V: pdf[src[2]].to_numpy(dtype=np.float64, na_value=np.nan),
    }
    if len(src) > 3:  # nullable: a null position is reported by the scoring step
        pos = pdf[src[3]] if src[3] is not None else pd.Series(0, index=pdf.index)
        data[_POS] = pos.astype("Int64")
    out = pd.DataFrame(data, index=pdf.index)
    if side is not None:
        out[_SIDE] = np.int8(side)
    return out


def _int_kind(ids: Any) -> Any:
    """Per row, 1 if the id is an integer, else 0 (an object column is looked at
    row by row; any other dtype holds one kind)."""
    import pandas as pd

    dt = ids.dtype
    if isinstance(dt, pd.CategoricalDtype):
        dt = dt.categories.dtype
    if not (isinstance(dt, np.dtype) and dt.kind == "O"):
        kind = 1 if pd.api.types.is_integer_dtype(dt) else 0
        return np.full(len(ids), kind, dtype=np.int8)
    return np.fromiter(
        (isinstance(v, (int, np.integer)) for v in ids.tolist()), dtype=np.int8, count=len(ids)
    )


def _check_kinds(pdf: Any, what: str) -> None:
    """Refuse a query id given both as an int and as a str (``1`` and ``"1"``),
    in ``evaluate``'s words; all rows of a query are in this partition."""
    kinds = pdf[_QKIND].to_numpy()
    if len(kinds) == 0 or kinds.min() == kinds.max():
        return
    pairs = pdf[[_Q, _QKIND]].drop_duplicates()
    both = pairs[pairs[_Q].duplicated(keep=False)]
    qid = str(both[_Q].iloc[0])
    shown: Any = qid if int(both[_QKIND].iloc[-1]) == 0 else int(qid)
    raise RanklensInputError(f"the {what}: " + twice_text("query", qid, shown))


def _score_broadcast(pdf: Any, shared: SharedQrels, plan: Plan, cols: Columns) -> Any:
    if len(pdf) == 0:
        return empty_output(plan)
    _check_kinds(pdf, "run")
    return score_frames(pdf, shared, plan, cols)


def _score_joined(pdf: Any, plan: Plan, cols: Columns) -> Any:
    side = pdf[_SIDE].to_numpy()
    run_pdf = pdf[side == _RUN]
    qrels_pdf = pdf[side == _QRELS]
    _check_kinds(run_pdf, "run")
    _check_kinds(qrels_pdf, "qrels")
    return score_frames(run_pdf, qrels_pdf, plan, cols)


# -- checks on the client -----------------------------------------------------------------
def _check_dtypes(frame: Any, names: list[str], what: str, cols: Columns) -> None:
    """Columns present and of usable types, from the frame's metadata (no compute)."""
    import pandas as pd

    have = list(frame.columns)
    for name in names:
        if name not in have:
            raise RanklensInputError(
                f"the {what} frame has no column {name!r} (columns: {', '.join(map(str, have))})"
            )
    dtypes = frame.dtypes
    for name in names:
        dt = dtypes[name]
        if name in (cols.query, cols.doc):
            if (
                pd.api.types.is_float_dtype(dt)
                or pd.api.types.is_bool_dtype(dt)
                or pd.api.types.is_complex_dtype(dt)
                or pd.api.types.is_datetime64_any_dtype(dt)
                or pd.api.types.is_timedelta64_dtype(dt)
            ):
                raise RanklensInputError(
                    f"column {name!r} of the {what}: ids must be strings or integers, got {dt}"
                )
        elif name == cols.position:
            if not pd.api.types.is_integer_dtype(dt):
                raise RanklensInputError(
                    f"column {name!r} of the run: positions must be integers, got {dt}"
                )
        elif not pd.api.types.is_numeric_dtype(dt) or pd.api.types.is_complex_dtype(dt):
            kind = "scores" if what == "run" else "labels"
            raise RanklensInputError(
                f"column {name!r} of the {what}: the {kind} must be numbers, got {dt}"
            )
