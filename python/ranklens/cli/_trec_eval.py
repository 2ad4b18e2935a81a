"""``ranklens trec_eval``: trec_eval 10.0's command line, on ranklens's numbers.

    ranklens trec_eval [-q] [-c] [-n] [-J] [-M N] [-l N] [-N N] [-m measure[.params]]...
                       [-Z zscores_file] [-R qrels] [-D N[.qid]] qrels_file results_file

Reads the same arguments as trec_eval 10.0 and prints what it prints, byte for
byte: measures in trec_eval's table order (not command-line order), its names
(``P_5``, ``iprec_at_recall_0.10``, ``utility_2,-1,0,0``), its ``%-22s\\t%s\\t%6.4f``
rows, per-query rows (``-q``) in qrels query order, then the ``all`` rows.  Every
number comes from :func:`ranklens.evaluate` (Rust backend); this module only
chooses the measures, aggregates as trec_eval does (in query order), and does
what is not a metric: the ``relstring`` strings and the ``-Z`` z-scores.

trec_eval 10.0 semantics reproduced here (see ``trec_eval.c``):

* A qrels topic missing from the run is an error unless ``-c`` is given; with
  ``-c`` it is scored on a one-document "bogus" ranking (``ceci_nest_pas_un_docno``,
  not in the pool) and then ``num_ret``, ``utility``, ``unj_*``, ``rbp_resid``
  (and the default ``relstring``) are reset, matched by exact printed name, as
  trec_eval does; the topic is printed per query like any other.
* Means divide by the number of qrels topics; ``num_ret``/``num_rel_ret``/
  ``num_nonrel_judged_ret`` are sums; ``num_rel`` is a sum, except under ``-c``
  where trec_eval recounts it from the qrels as labels ``> 0`` (not ``>= -l``).
* ``gm_map``/``gm_bpref``: ``ln(max(x, 1e-5))`` per topic, ``exp`` of the mean.
* Labels are truncated to integers (trec_eval's ``atol``); ``-l``, ``-M``, ``-N`` and
  cutoffs too; real parameters are read with ``atof`` rules.
* ``runid`` is the tag of the run file's last line.
* Equal scores in trec_eval's order (document id descending): a drop-in takes
  no tie order; ``ranklens QRELS RUN --ties best|worst|expected|input`` scores
  the others.
* ``-Z``: each topic's values become ``(x - mean) / sd`` from the z-score file
  (``-1000000`` when missing; ``0`` when ``sd == 0`` and ``x == mean``), before
  accumulation; names get a ``Z`` prefix.

* 0/0 as trec_eval prints it, ``-nan``: ``iprec_at_recall``/``11pt_avg`` of a topic
  with nothing retrieved (``-J``, ``-M 0``), ``Rndcg`` of a topic with relevant
  documents but no positive gain.  :func:`ranklens.evaluate` gives 0 there.
* Refused, as trec_eval cannot evaluate them (it stops or aborts): a first topic
  whose labels are all negative; two of ``dcg``, ``ideal_dcg``, ``ndcg`` with gains
  in one call; under ``-R prefs``, a judgment group whose preferences form a cycle
  (trec_eval aborts) or a document at two levels of one sub-group.

``-R prefs`` / ``-R qrels_prefs`` / ``-R qrels_jg`` read judgment groups
(:mod:`ranklens._prefs`): the ``prefs_*`` measures come from
:func:`ranklens.evaluate_prefs` (ranking ties broken by doc id *ascending*, as
form_prefs_counts.c does), ``map_avgjg`` / ``P_avgjg`` / ``Rprec_mult_avgjg`` from
:func:`ranklens.evaluate_jg` (``map``, ``P``, ``Rprec_mult`` per group, averaged
over the query's groups).  A measure of another format is refused (trec_eval
stops with "Can't calculate measure").

Not reproduced (trec_eval's result is undefined behaviour; docs/trec_eval.md lists
each case and its cause): ``rbp`` computed after other measures (m_rbp.c reads
uninitialised min/max), crashes on a qrels file ending with a comment and on
z-score lookups past the end of trec_eval's table, ``prefs_avgjg_Rnonrel(_ret)``
of a judgment group whose lowest-level class has fewer documents than the group
has relevant ones (the recount reads past it).

Not implemented: ``-D`` only selects the topic (no debug output); ``-h`` prints a
short help.

Exit status: 0 on success, 2 on a usage error (unknown flag or measure, bad
measure parameters), 1 on bad data (one line on stderr naming file and line).
Nothing is written to stdout on failure.
"""

from __future__ import annotations

import gzip
import math
import os
import sys
import tempfile
import warnings
from collections.abc import Sequence

import numpy as np

from ranklens._data import Qrels, Run
from ranklens._evaluate import evaluate
from ranklens._explain import relstring_of
from ranklens._names import Metric, parse_metric
from ranklens._prefs import Prefs, evaluate_jg, evaluate_prefs, read_qrels_jg
from ranklens.cli._trec_eval_args import HELP, USAGE, VersionRequested, atof, lround, parse_args
from ranklens.cli._trec_eval_measures import (
    MAXLONG,
    Meas,
    Opts,
    UsageError,
)
from ranklens.errors import RanklensInputError

__all__ = ["main"]

_PROG = "ranklens trec_eval"
_MISSING_Z = -1000000.0
_MIN_GEO_MEAN = 0.00001
_BOGUS_DOC = "ceci_nest_pas_un_docno"


# ---------------------------------------------------------------------------
# Input


def _last_tag(path: str) -> str | None:
    """The tag (6th field) of the last run line: trec_eval's ``runid``."""
    with open(path, "rb") as f:
        magic = f.read(2)
        if magic == b"\x1f\x8b":
            f.seek(0)
            with gzip.open(f) as g:
                tail = b""
                for line in g:
                    s = line.lstrip()
                    if s and not s.startswith(b"#"):
                        tail = s
            return _tag_of(tail)
        size = f.seek(0, os.SEEK_END)
        pos = size
        partial = b""
        while True:
            start = max(0, pos - (1 << 16))
            f.seek(start)
            buf = f.read(pos - start) + partial
            pos = start
            lines = buf.split(b"\n")
            complete = lines if pos == 0 else lines[1:]
            for line in reversed(complete):
                s = line.lstrip()
                if s and not s.startswith(b"#"):
                    return _tag_of(s)
            if pos == 0:
                return None
            partial = lines[0]


def _tag_of(line: bytes) -> str | None:
    fields = line.split()
    return fields[5].decode("utf-8", "replace") if len(fields) >= 6 else None


def _read_zscores(path: str) -> dict[tuple[str, str], tuple[float, float]]:
    out: dict[tuple[str, str], tuple[float, float]] = {}
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise RanklensInputError(f"{path}: cannot read zscores file: {e.strerror}") from None
    if not data:
        raise RanklensInputError(f"{path}: cannot read zscores file: it is empty")
    for n, line in enumerate(data.split(b"\n"), 1):
        fields = line.split()
        if not fields and n == data.count(b"\n") + 1:
            break  # after the final newline
        if len(fields) != 4:
            raise RanklensInputError(
                f"{path}, line {n}: malformed zscores line (expected: qid measure mean stddev)"
            )
        qid, meas = fields[0].decode("utf-8", "replace"), fields[1].decode("utf-8", "replace")
        key = (qid, meas)
        if key not in out:
            out[key] = (atof(fields[2].decode()), atof(fields[3].decode()))
    return out


def _truncate_labels(qrels: Qrels, path: str) -> Qrels:
    """trec_eval reads labels with ``atol``: 1.5 -> 1, -0.5 -> 0 (warned about once,
    on stderr, since ranklens itself keeps float labels)."""
    values = qrels.values
    if np.all(values == np.trunc(values)):
        return qrels
    example = float(values[values != np.trunc(values)][0])
    warnings.warn(
        f"{path}: float labels truncated to integers, as trec_eval does "
        f"(e.g. {example!r} -> {int(example)}); ranklens.evaluate keeps them exact",
        stacklevel=2,
    )
    return qrels._with_labels(np.trunc(values) + 0.0)  # -0.0 -> 0.0


# ---------------------------------------------------------------------------
# Evaluation


def _relstring(labels: dict[str, float], ranked: list[str], length: int, o: Opts) -> str:
    docs = ranked[: o.max_docs] if o.max_docs >= 0 else []
    return relstring_of(labels, docs, length, judged_only=o.judged_only)


def _ranked_docs(run: Run, i: int, need: int, o: Opts) -> list[str]:
    """Enough of query ``i``'s ranking (trec order) for a relstring of ``need``."""
    a, b = int(run.offsets[i]), int(run.offsets[i + 1])
    b = min(b, a + max(o.max_docs, 0))
    if not o.judged_only:
        b = min(b, a + max(need, 0))
    return run._decode_docs(run.doc_ids[a:b])


def _metric_values(
    qrels: Qrels, run: Run, metrics: list[Metric], o: Opts
) -> tuple[list[str], np.ndarray]:
    if not metrics:
        return qrels.query_ids, np.zeros((len(qrels), 0))
    run, max_docs = _cut(run, o)
    res = evaluate(
        qrels,
        run,
        metrics,
        relevance_level=o.level,
        judged_only=o.judged_only,
        max_docs=max_docs,
    )
    return res.query_ids, res.values


def _cut(run: Run, o: Opts) -> tuple[Run, int | None]:
    """trec_eval's -M: no limit (None), or a limit <= 0, which keeps no document
    at all (an empty run)."""
    max_docs = _limit(o)
    if max_docs is not None and max_docs <= 0:
        return Run({}), None
    return run, max_docs


def _limit(o: Opts) -> int | None:
    """-M as given: None when it is trec_eval's default (no limit)."""
    return None if o.max_docs >= MAXLONG else o.max_docs


def _jg_values(
    groups: dict[str, Qrels], run: Run, metrics: list[Metric], o: Opts
) -> tuple[list[str], np.ndarray]:
    """qrels_jg (form_res_rels_jg.c): every metric per judgment group, summed over
    a query's groups and divided by their number (map_avgjg, P_avgjg,
    Rprec_mult_avgjg are map, P and Rprec_mult of each group)."""
    run, max_docs = _cut(run, o)
    res = evaluate_jg(
        groups,
        run,
        metrics,
        relevance_level=o.level,
        judged_only=o.judged_only,
        max_docs=max_docs,
    )
    return res.query_ids, res.values


def _prefs_values(
    prefs: Prefs | None, run: Run, measures: list[Meas], o: Opts
) -> dict[str, dict[str, float]]:
    """The requested preference measures of every query (-R prefs / qrels_prefs)."""
    names = [me.name for me in measures if me.rel == "prefs"]
    if prefs is None or not names:
        return {}
    res = evaluate_prefs(prefs, run, names, max_docs=_limit(o))
    return {
        q: {n: float(v) for n, v in zip(names, res.values[i])} for i, q in enumerate(res.query_ids)
    }


def _bytes(s: str) -> bytes:
    return s.encode("utf-8", "surrogateescape")


def _iprec_avg(
    values: list[float], points: list[float], num_rel: float, rel_ret: float, at_zero: float
) -> float:
    """trec_eval's 11pt_avg from the iprec_at_recall value at each of its points.

    trec_eval walks the points from the last down, taking each point's value when
    the walk down the relevant documents reaches its cut, and the value at
    recall 0 for points it passed over (only possible for unsorted points); the
    values are added in that order."""
    n = len(points)
    cuts = [lround(x * num_rel) for x in points]
    cur = n - 1
    while cur >= 0 and cuts[cur] > rel_ret:
        cur -= 1
    total = 0.0
    rel_so_far = int(rel_ret)
    while rel_so_far > 0:
        while cur >= 0 and cuts[cur] == rel_so_far:
            total += values[cur]
            cur -= 1
        rel_so_far -= 1
    while cur >= 0:
        total += at_zero
        cur -= 1
    return total / n


_NAN_WHEN_NOTHING_RETRIEVED = ("iprec_at_recall", "11pt_avg")
_NUM_RET = parse_metric("num_ret")
_NUM_REL = parse_metric("num_rel")


def _nan_if_nothing_retrieved(src: Metric | tuple, num_rel: float, v: float) -> float:
    """trec_eval's value of ``iprec_at_recall`` / ``11pt_avg`` for a topic with no
    document retrieved (``-J`` with no judged document retrieved, ``-M 0``).

    m_iprec_at_recall.c and m_11pt_avg.c start from the precision of the whole
    ranking, ``num_rel_ret / num_ret`` = 0/0 = NaN, and give it to every recall
    point whose cut ``lround(x * num_rel)`` is not above ``num_rel_ret`` (0);
    points whose cut is above keep 0.  11pt_avg sums those points, so one NaN
    point makes it NaN.  ranklens.evaluate scores these 0 (its NaN -> 0 policy)."""
    points = [src.param("recall")] if isinstance(src, Metric) else src[2]
    if any(lround(x * num_rel) <= 0 for x in points):
        return math.nan
    return v


def _top_gain(metric: Metric, labels: dict[str, float]) -> float:
    """The largest gain of trec_eval's gain table for a topic (gain_init.c): every
    listed ``label=gain`` pair, and each label from 0 to the topic's largest
    that is not listed, gaining itself.

    m_Rndcg.c averages ndcg over the points where the ideal gain changes, and
    counts only points after a positive ideal gain; when the table's largest
    gain is not positive (all labels 0 under ``-l 0``, or every positive label
    given gain 0) it divides 0 by 0 points: NaN, for a topic with relevant
    documents (one without is 0).  ranklens.evaluate scores it 0."""
    listed = {}
    for key, gain in metric.params:
        if key.startswith("gain"):
            listed[int(key[4:])] = gain
    top = max(labels.values(), default=-1.0)
    defaults = [float(lv) for lv in range(int(top) + 1) if lv not in listed]
    return max([*listed.values(), *defaults], default=0.0)


def _fmt(v: float) -> str:
    """``%6.4f`` as glibc prints it; trec_eval's NaN is 0.0/0.0, whose sign bit
    is set on x86-64, so it prints ``-nan``."""
    if math.isnan(v):
        return "  -nan"
    return f"{v + 0.0:6.4f}"


def _run(argv: list[str]) -> str:
    o, measures, slots, files = parse_args(argv)
    if o.help:
        return HELP
    qrels_path, run_path = files
    tmp: str | None = None
    try:
        if run_path == "-":
            with tempfile.NamedTemporaryFile("wb", suffix=".run", delete=False) as t:
                t.write(sys.stdin.buffer.read())
                tmp = t.name
            run_file = tmp
        else:
            run_file = run_path
        qrels: Qrels | None = None
        prefs: Prefs | None = None
        groups: dict[str, Qrels] | None = None
        if o.rel_format == "qrels":
            qrels = _truncate_labels(Qrels.from_trec(qrels_path), qrels_path)
            qids = qrels.query_ids
        elif o.rel_format == "qrels_jg":
            groups = read_qrels_jg(qrels_path)
            qids = sorted({q for g in groups.values() for q in g.query_ids}, key=_bytes)
        else:
            prefs = Prefs.from_trec(qrels_path, o.rel_format)
            qids = prefs.query_ids
        run = Run.from_trec(run_file)
        runid = _last_tag(run_file) if any(me.fmt == "runid" for me in measures) else None
    finally:
        if tmp is not None:
            os.unlink(tmp)
    zscores = _read_zscores(o.zscores) if o.zscores is not None else None

    wanted = [q for q in qids if o.debug_query is None or q == o.debug_query]
    missing = [q for q in wanted if q not in run]
    if missing and not o.complete:
        raise RanklensInputError(
            f"{run_path}: qrels topic {missing[0]!r} has no results "
            "(trec_eval 10.0 refuses this without -c)"
        )
    if not wanted:
        raise RanklensInputError("no queries with both results and relevance info")
    first = qrels[wanted[0]] if qrels is not None else {}
    if (
        any(me.name not in ("runid", "num_q") for me in measures)
        and max(first.values(), default=0) < 0
    ):
        # form_res_rels.c sizes its table of relevance levels by the topic's
        # largest label + 1; for the first topic evaluated that is 0 entries,
        # the allocation returns NULL and trec_eval stops ("Can't calculate
        # measure").  Later all-negative topics reuse an earlier table and pass.
        raise RanklensInputError(
            f"{qrels_path}: the first topic evaluated ({wanted[0]!r}) has only negative "
            "labels, which trec_eval 10.0 cannot evaluate (it stops with \"Can't calculate "
            'measure"); ranklens.evaluate scores it'
        )

    # Every ranklens metric needed, once.
    metrics: list[Metric] = []
    for me in measures:
        for s in slots.get(me.name, []):
            src = s.source
            if isinstance(src, Metric):
                metrics.append(src)
            elif src[0] == "11pt":
                metrics.extend(src[1] + src[3])
        if me.name in _NAN_WHEN_NOTHING_RETRIEVED:
            metrics += [_NUM_RET, _NUM_REL]
        elif me.name == "Rndcg":
            metrics.append(_NUM_REL)
    metrics = list(dict.fromkeys(metrics))
    col = {m: j for j, m in enumerate(metrics)}

    if groups is not None:  # qrels_jg: each metric averaged over the judgment groups
        value_qids, values = _jg_values(groups, run, metrics, o)
    elif qrels is not None:
        value_qids, values = _metric_values(qrels, run, metrics, o)
    else:
        value_qids, values = qids, np.zeros((len(qids), 0))
    prefs_values = _prefs_values(prefs, run, measures, o)
    row = {q: i for i, q in enumerate(value_qids)}
    bogus_values = None
    if missing and qrels is not None:  # trec_eval -c: a one-document ranking outside the pool
        sub = Qrels({q: qrels[q] for q in missing})
        bogus = Run({q: {_BOGUS_DOC: 1.0} for q in missing})
        bq, bv = _metric_values(sub, bogus, metrics, o)
        bogus_values = (bq, bv, {q: i for i, q in enumerate(bq)})

    z = "Z" if zscores is not None else ""
    lines: list[str] = []
    # accumulated sums per slot name (slots are unique by name within a measure)
    sums: dict[tuple[str, int], float] = {}
    last_ideal: dict[int, float] = {}  # ideal_dcg slot -> last topic's value
    for q in wanted:
        is_bogus = q in missing
        if is_bogus and bogus_values is not None:
            vals = bogus_values[1][bogus_values[2][q]]
        else:
            vals = values[row[q]]
        qvals: dict[tuple[str, int], float] = {}
        rstrings: dict[str, str] = {}
        for me in measures:
            for k, s in enumerate(slots.get(me.name, [])):
                src = s.source
                if isinstance(src, Metric):
                    v = float(vals[col[src]])
                    if me.avg == "gm":
                        v = math.log(max(v, _MIN_GEO_MEAN))
                elif src[0] == "const":
                    v = src[1]
                elif src[0] == "prefs":
                    v = prefs_values[q][src[1]]
                elif src[0] == "11pt":
                    ms, pts, extra = src[1], src[2], src[3]
                    v = _iprec_avg(
                        [float(vals[col[m]]) for m in ms],
                        pts,
                        float(vals[col[extra[0]]]),
                        float(vals[col[extra[1]]]),
                        float(vals[col[extra[2]]]),
                    )
                else:  # relstring
                    length = src[1]
                    if is_bogus:
                        ranked = [_BOGUS_DOC]
                        ranked = ranked[: max(o.max_docs, 0)]
                    else:
                        ranked = _ranked_docs(run, run._index(q), length, o)
                    rs = _relstring(qrels[q] if qrels is not None else {}, ranked, length, o)
                    if is_bogus and s.name == "relstring":
                        rs = ""
                    rstrings[s.name] = rs
                    v = 0.0
                if me.name in _NAN_WHEN_NOTHING_RETRIEVED and vals[col[_NUM_RET]] == 0:
                    v = _nan_if_nothing_retrieved(src, float(vals[col[_NUM_REL]]), v)
                elif me.name == "Rndcg" and vals[col[_NUM_REL]] > 0:
                    if qrels is not None and _top_gain(src, qrels[q]) <= 0:
                        v = math.nan
                elif me.name == "ideal_dcg" and qrels is not None:
                    # form_res_rels.c keeps the previous topic's label counts for a
                    # topic whose labels are all negative (a table of 0 entries is
                    # neither reallocated nor cleared): its ideal is the last one.
                    if max(qrels[q].values(), default=-1.0) < 0:
                        v = last_ideal.get(k, v)
                    else:
                        last_ideal[k] = v
                if is_bogus and (
                    s.name in ("num_ret", "utility", "rbp_resid") or s.name.startswith("unj")
                ):
                    v = 0.0
                qvals[(me.name, k)] = v
        if zscores is not None:
            _to_zscores(zscores, q, measures, slots, qvals)
        for me in measures:
            for k, s in enumerate(slots.get(me.name, [])):
                v = qvals[(me.name, k)]
                if me.avg != "none":
                    sums[(me.name, k)] = sums.get((me.name, k), 0.0) + v
                if not (o.query and me.single):
                    continue
                if me.fmt == "relstring":
                    lines.append(f"{s.name:<22}\t{q}\t'{rstrings[s.name]}'\n")
                elif me.fmt == "long" and not z:
                    lines.append(f"{s.name:<22}\t{q}\t{int(v)}\n")
                else:
                    lines.append(f"{z}{s.name:<22}\t{q}\t{_fmt(v)}\n")

    if o.summary:
        n_eval = len(wanted)
        n_avg = len(qids) if o.complete else n_eval
        for me in measures:
            if me.fmt == "runid":
                lines.append(f"{'runid':<22}\tall\t{runid}\n")
                continue
            if me.fmt == "relstring":
                continue
            for k, s in enumerate(slots[me.name]):
                total = sums[(me.name, k)]
                if me.avg == "mean":
                    v = total / n_avg if n_avg else total
                elif me.avg == "gm":
                    total += (n_avg - n_eval) * math.log(_MIN_GEO_MEAN)
                    v = math.exp(total / n_avg) if n_avg > 0 else total
                elif me.avg == "num_q":
                    v = float(n_avg)
                elif me.avg == "num_rel" and o.complete and qrels is not None:
                    v = float(np.count_nonzero(qrels.values > 0))
                else:
                    v = total
                if me.fmt == "long" and not z:
                    lines.append(f"{s.name:<22}\tall\t{int(v)}\n")
                else:
                    lines.append(f"{z}{s.name:<22}\tall\t{_fmt(v)}\n")
    return "".join(lines)


def _to_zscores(
    zscores: dict[tuple[str, str], tuple[float, float]],
    q: str,
    measures: list[Meas],
    slots: dict[str, list],
    qvals: dict[tuple[str, int], float],
) -> None:
    """trec_eval's ``te_convert_to_zscore`` on one query's values."""
    known_q = any(k[0] == q for k in zscores)
    for me in measures:
        for k, s in enumerate(slots.get(me.name, [])):
            key = (me.name, k)
            if not known_q or (q, s.name) not in zscores:
                qvals[key] = _MISSING_Z
                continue
            mean, sd = zscores[(q, s.name)]
            v = qvals[key]
            if sd:
                qvals[key] = (v - mean) / sd
            else:
                qvals[key] = 0.0 if v == mean else _MISSING_Z


# ---------------------------------------------------------------------------
# Entry points


def main(argv: Sequence[str] | None = None) -> int:
    """Run with trec_eval's arguments; print its output.  Returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        out = _run(argv)
    except VersionRequested:
        from ranklens import __version__

        print(f"{_PROG} {__version__} (trec_eval version 10.0 compatible)", file=sys.stderr)
        return 0
    except UsageError as e:
        print(f"{_PROG}: {e}", file=sys.stderr)
        sys.stderr.write(USAGE)
        return 2
    except (RanklensInputError, OSError) as e:
        msg = str(e).replace("\n", " ")
        print(f"{_PROG}: {msg}", file=sys.stderr)
        return 1
    sys.stdout.write(out)
    sys.stdout.flush()
    return 0
