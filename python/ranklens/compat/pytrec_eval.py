"""A drop-in replacement for ``pytrec_eval``, computed by ranklens.

Where code did ``import pytrec_eval``, write::

    from ranklens.compat import pytrec_eval

    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg_cut.10", "P"})
    scores = evaluator.evaluate(run)  # {query_id: {"map": ..., "ndcg_cut_10": ..., "P_5": ...}}

The public API of pytrec_eval (pytrec-eval-terrier 0.5.x, trec_eval 9.0.8 inside) is
mirrored: :class:`RelevanceEvaluator` (``evaluate``), :data:`supported_measures`,
:data:`supported_nicknames`, :func:`parse_qrel`, :func:`parse_run` and
:func:`compute_aggregated_measure`.  Same output (keys, queries, numbers):

* **Measures**: every name in :data:`supported_measures`, bare (default parameters:
  ``"P"`` gives ``P_5`` ... ``P_1000``) or with parameters (``"P.1,3"``, ``"P_1"``,
  ``"ndcg_cut.10"``, ``"iprec_at_recall.0.25"``, ``"set_F.0.5"``, ``"utility.2,1,0,0"``,
  ``"11pt_avg.0.2,0.5,0.8"``), and the nicknames ``"official"``, ``"set"`` and
  ``"all_trec"``.  Names combine exactly as in pytrec_eval: ``{"P_5", "P.10"}``
  asks for ``P_5`` and ``P_10``; ``{"P", "P_5"}`` for ``P_5`` only; the parameters of
  one measure are sorted *as strings* before trec_eval reads them (which matters for
  ``set_F``, ``utility`` and ``11pt_avg``, whose parameters are positional).
  Parameters given to a measure that takes none (``"map.5"``) are ignored, as trec_eval
  does.  ``runid`` and ``relstring`` are 0.0 for every query, as in pytrec_eval (trec_eval
  prints them as strings; pytrec_eval cannot return them).
* **Values** equal pytrec_eval's: scores are rounded to 32-bit floats before ranking
  (trec_eval 9.0.8 stores them so; equal-after-rounding scores tie, broken by document
  id descending); interpolated precision uses 9.0.8's recall cutoffs; ``gm_map`` and
  ``gm_bpref`` are per query ``ln(max(value, 1e-5))`` (their mean is the log of the
  geometric mean; :func:`compute_aggregated_measure` undoes it).
* **Queries**: only queries present in both the run and the (non-empty) qrels are
  reported, in the run's order.

Differences (all but the last two where pytrec_eval misbehaves):

* A second ``evaluate`` call gives the same result as the first (the original
  ``pytrec_eval`` dropped all cutoffs but one from the second call on;
  cvangysel/pytrec_eval#22, #38; fixed in pytrec-eval-terrier).
* A query with an empty ranking, or whose labels are all negative, is scored
  correctly (pytrec_eval reuses stale state from the previous query, or crashes).
  An empty ranking, also one emptied by ``judged_docs_only_flag``, scores 0 on
  ``iprec_at_recall``, ``11pt_avg`` and ``utility`` (pytrec_eval: NaN for the first
  two, an unreliable ``utility``).
* Parameter lists trec_eval rejects raise ``ValueError`` here (pytrec_eval prints a
  trec_eval error and aborts the interpreter, or returns 0): a cutoff of 0, duplicate
  cutoffs (``"P.5,05"``), ``utility`` without exactly four coefficients, and any
  parameter given to the gain measures ``ndcg``, ``ndcg_rel``, ``Rndcg``, ``G``,
  ``binG`` (trec_eval wants ``key=value`` pairs there, which pytrec_eval's measure
  syntax cannot express).
* NaN or infinite scores raise ``ValueError`` (pytrec_eval sorts them arbitrarily).
* Input types are checked as in pytrec_eval, every entry (same ``TypeError``
  messages).  Ids that pytrec_eval would merge or score twice raise ``ValueError``: a
  document id twice in one query (``str`` subclasses with their own ``__hash__``),
  a query id twice.  A dict that changes size while it is read (a score's
  ``__float__`` changing it) raises ``RuntimeError``, as Python's own iteration does.
* Speed: the judgments are encoded once, in ``__init__``; ``evaluate`` reads the run's
  dicts in Rust, matching each document id to the judged ones by the hash of its
  UTF-8 text, then the text, and scores every measure in one pass; a run with
  other key or score types (``str`` subclasses, numpy scores, ...) is encoded first,
  with the same results.  A call with a few queries against large qrels scores only
  those queries; qrels and runs of at most 4,096 rows are handled on the calling
  thread (one query at a time pays no thread hand-over), larger ones on
  ``RANKLENS_NUM_THREADS`` threads (else one per core).  Equal values of one measure
  in the result may be one ``float`` object (floats are immutable: only ``is``
  tells).

Not supported, as in pytrec_eval: the nicknames ``"prefs"``, ``"all_prefs"`` and
``"qrels_jg"`` raise ``ValueError`` (their measures need preference judgments;
:func:`ranklens.evaluate_prefs` and :func:`ranklens.evaluate_jg` compute them).
"""

from __future__ import annotations

import collections
import functools
import math
import operator
import re
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from ranklens import _ranklens
from ranklens._data import Qrels, Run
from ranklens._evaluate import evaluate_levels as _evaluate
from ranklens._names import Metric, parse_metric

__all__ = [
    "RelevanceEvaluator",
    "parse_qrel",
    "parse_run",
    "supported_measures",
    "supported_nicknames",
]

_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_ELEVEN = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
_MULTS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)

# trec_eval 9.0.8's measures in its table order (pytrec_eval's key order):
# name -> (kind, ranklens family, default parameters).
#   const: always 0.0 (runid, relstring); plain: one value, parameters ignored;
#   gm: ln(max(value, 1e-5)); gains: no parameter accepted; cut: integer cutoffs,
#   keys name_k; float_cut: real cutoffs, keys name_%3.2f; set_f: beta = first
#   parameter; utility: four coefficients; avg: mean of iprec_at_recall at the points.
_TABLE: dict[str, tuple[str, str, tuple[float, ...]]] = {
    "runid": ("const", "", ()),
    "num_q": ("plain", "num_q", ()),
    "num_ret": ("plain", "num_ret", ()),
    "num_rel": ("plain", "num_rel", ()),
    "num_rel_ret": ("plain", "num_rel_ret", ()),
    "map": ("plain", "map", ()),
    "gm_map": ("gm", "map", ()),
    "Rprec": ("plain", "r_precision", ()),
    "bpref": ("plain", "bpref", ()),
    "recip_rank": ("plain", "mrr", ()),
    "iprec_at_recall": ("float_cut", "iprec_at_recall", _ELEVEN),
    "P": ("cut", "precision", _CUTS),
    "relstring": ("const", "", ()),
    "recall": ("cut", "recall", _CUTS),
    "infAP": ("plain", "inf_ap", ()),
    "gm_bpref": ("gm", "bpref", ()),
    "Rprec_mult": ("float_cut", "rprec_mult", _MULTS),
    "utility": ("utility", "utility", (1.0, -1.0, 0.0, 0.0)),
    "11pt_avg": ("avg", "iprec_at_recall", _ELEVEN),
    "binG": ("gains", "bin_g", ()),
    "G": ("gains", "g", ()),
    "ndcg": ("gains", "ndcg", ()),
    "ndcg_rel": ("gains", "ndcg_rel", ()),
    "Rndcg": ("gains", "rndcg", ()),
    "ndcg_cut": ("cut", "ndcg", _CUTS),
    "map_cut": ("cut", "map", _CUTS),
    "relative_P": ("cut", "relative_precision", _CUTS),
    "success": ("cut", "hit_rate", (1, 5, 10)),
    "set_P": ("plain", "precision", ()),
    "set_relative_P": ("plain", "relative_precision", ()),
    "set_recall": ("plain", "recall", ()),
    "set_map": ("plain", "set_map", ()),
    "set_F": ("set_f", "set_f", (1.0,)),
    "num_nonrel_judged_ret": ("plain", "num_nonrel_judged_ret", ()),
}
_ORDER = {name: i for i, name in enumerate(_TABLE)}

#: The measures pytrec_eval accepts (trec_eval 9.0.8's ``all_trec``).
supported_measures: set[str] = set(_TABLE)

_OFFICIAL = {"runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec"}
_OFFICIAL |= {"bpref", "recip_rank", "iprec_at_recall", "P"}
_SET = {"runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P"}
_SET |= {"set_relative_P", "set_recall", "set_map", "set_F"}
_PREFS = {"num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret"}
_PREFS |= {"prefs_simp", "prefs_pair", "prefs_avgjg", "runid"}
_ALL_PREFS = _PREFS | {"prefs_simp_ret", "prefs_simp_imp", "prefs_pair_ret", "prefs_pair_imp"}
_ALL_PREFS |= {"prefs_avgjg_ret", "prefs_avgjg_imp", "prefs_avgjg_Rnonrel"}
_ALL_PREFS |= {"prefs_avgjg_Rnonrel_ret"}

#: Nickname -> measures, as pytrec_eval (the preference ones are listed but, as in
#: pytrec_eval, rejected: their measures need preference judgments).
supported_nicknames: dict[str, set[str]] = {
    "official": _OFFICIAL,
    "set": _SET,
    "all_trec": set(_TABLE),
    "all_prefs": _ALL_PREFS,
    "prefs": _PREFS,
    "qrels_jg": {"num_q", "P_avgjg", "map_avgjg", "Rprec_mult_avgjg", "runid"},
}

_RE_BASE = r"{}[\._]([0-9]+(\.[0-9]+)?(,[0-9]+(\.[0-9]+)?)*)"


@functools.lru_cache(maxsize=1)
def _base_patterns() -> list[tuple[str, re.Pattern[str]]]:
    """``_RE_BASE`` compiled for each measure of ``_TABLE``, in its order (made at
    the first call: a constructor matched 40 patterns formatted anew, most of its
    time)."""
    return [(base, re.compile(_RE_BASE.format(re.escape(base)))) for base in _TABLE]


_BAD_INIT_ARGS = "Expected object_relevance_per_qid dictionary and measures set."
_BAD_SCORES = "Unable to extract query/object scores."


def _parse_lines(lines: Iterable[str], nfields: int, doc: int, value: int, cast: Any) -> Any:
    """Split each line into exactly ``nfields`` fields and collect ``{field 0: {field doc:
    cast(field value)}}``.  Errors match pytrec_eval's parsers, type and message: a
    wrong field count is Python's unpacking ``ValueError``, a repeated (query,
    document) pair a bare ``AssertionError``."""
    table: dict[str, dict[str, Any]] = collections.defaultdict(dict)
    for line in lines:
        fields = line.split()
        if len(fields) < nfields:
            raise ValueError(f"not enough values to unpack (expected {nfields}, got {len(fields)})")
        if len(fields) > nfields:
            raise ValueError(f"too many values to unpack (expected {nfields})")
        per_query = table[fields[0]]
        if fields[doc] in per_query:
            raise AssertionError
        per_query[fields[doc]] = cast(fields[value])
    return table


def parse_run(f_run: Iterable[str]) -> dict[str, dict[str, float]]:
    """Parse a TREC run file: lines ``<query_id> Q0 <doc_id> <rank> <score> <system_name>``.

    Returns ``{query_id: {doc_id: score}}`` (a ``defaultdict``, as pytrec_eval).
    Raises ``AssertionError`` if a document appears twice for a query, ``ValueError``
    for a line without exactly six fields.
    """
    return _parse_lines(f_run, 6, 2, 4, float)  # type: ignore[no-any-return]


def parse_qrel(f_qrel: Iterable[str]) -> dict[str, dict[str, int]]:
    """Parse a TREC qrels file: lines ``<query_id> 0 <doc_id> <relevance>``.

    Returns ``{query_id: {doc_id: label}}`` (a ``defaultdict``, as pytrec_eval).
    Raises ``AssertionError`` if a document appears twice for a query, ``ValueError``
    for a line without exactly four fields or a non-integer label.
    """
    return _parse_lines(f_qrel, 4, 2, 3, int)  # type: ignore[no-any-return]


def compute_aggregated_measure(measure: str, values: list[float]) -> float:
    """Aggregate per-query values of ``measure`` the way pytrec_eval's helper does.

    Counting measures (``num_*``) add up; ``gm_*`` values are already logarithms
    per query, so their aggregate is ``exp`` of their mean (the geometric mean);
    every other measure is the arithmetic mean.
    """
    arr = np.asarray(values, dtype=np.float64)
    if measure.startswith("num_"):
        return float(arr.sum())
    if measure.startswith("gm_"):
        return float(np.exp(arr.sum() / len(arr)))
    return float(arr.mean())


def _int_arg(value: Any) -> int:
    """What CPython's ``"i"`` argument format accepts, else pytrec_eval's TypeError."""
    try:
        number = operator.index(value)
    except TypeError:
        raise TypeError(_BAD_INIT_ARGS) from None
    if not -(2**31) <= number < 2**31:
        raise TypeError(_BAD_INIT_ARGS)
    return number


def _check_scores(scores: dict[Any, Any]) -> None:
    """pytrec_eval's checks when nothing is scored: query ids ``str``, rankings
    ``dict``s, document ids ``str``, scores ``float`` or ``int`` (or subclasses).
    Otherwise the Rust encoder makes the same checks while encoding."""
    for qid, docs in scores.items():
        if not isinstance(qid, str) or not isinstance(docs, dict):
            raise TypeError(_BAD_SCORES)
        for doc, score in docs.items():
            if not isinstance(doc, str) or not isinstance(score, (float, int)):
                raise TypeError(_BAD_SCORES)


class RelevanceEvaluator:
    """Evaluate runs against relevance judgments, as ``pytrec_eval.RelevanceEvaluator``.

    ``query_relevance``: ``{query_id: {doc_id: int label}}`` (queries with no judgment
    are dropped); ``measures``: measure names and nicknames (see the module docstring);
    ``relevance_level``: a label >= it is relevant (an int >= 1);
    ``judged_docs_only_flag``: drop unjudged documents from rankings first (trec_eval
    ``-J``).  The judgments are encoded once; :meth:`evaluate` may be called many times.
    """

    def __init__(
        self,
        query_relevance: Mapping[str, Mapping[str, int]],
        measures: Iterable[str],
        relevance_level: int = 1,
        judged_docs_only_flag: bool = False,
    ) -> None:
        combined = self._combine_measures(self._expand_nicknames(measures))
        # fixes https://github.com/cvangysel/pytrec_eval/issues/57 (as pytrec_eval)
        # Copied only when some query has no judgment (the check is cheaper
        # than the copy).
        qrels = query_relevance
        if type(qrels) is not dict or not all(map(len, qrels.values())):
            qrels = {qid: docs for qid, docs in query_relevance.items() if len(docs) > 0}
        level = _int_arg(relevance_level)
        judged_only = _int_arg(judged_docs_only_flag)
        if level < 1:
            raise TypeError("Argument relevance_level should be positive.")
        # Encoded with pytrec_eval's type checks and TypeErrors, in one pass.
        self._qrels: Qrels | None = (
            Qrels._from_arrays(_ranklens.encode_mapping(qrels, "qrels", False, True))
            if qrels
            else None
        )

        self._level = level
        self._judged_only = bool(judged_only)
        self._build_plan(combined)

        # {query id: encoded index}, for the general path only: built on its
        # first use, so that __init__ of the dict path does not pay for it.
        self._qindex_built: dict[str, int] | None = None
        # Tables of the judged ids (by the hash of their UTF-8), for scoring
        # dict runs without encoding them; built from the encoded qrels.
        self._judged = _ranklens.dict_judgments(self._qrels.arrays) if self._qrels else None

    @property
    def _qindex(self) -> dict[str, int]:
        if self._qindex_built is None:
            ids = self._qrels.query_ids if self._qrels else []
            self._qindex_built = {q: i for i, q in enumerate(ids)}
        return self._qindex_built

    # -- measure names, exactly as pytrec_eval ---------------------------------
    def _expand_nicknames(self, measures: Iterable[str]) -> set[str]:
        """Expand measure nicknames into their constituent measures."""
        result: set[str] = set()
        for measure in measures:
            if measure in supported_nicknames:
                result.update(supported_nicknames[measure])
            else:
                result.add(measure)
        return result

    def _combine_measures(self, measures: Iterable[str]) -> set[str]:
        """``{"P_5", "P.10", "map"}`` -> ``{"P.10,5", "map"}`` (trec_eval's ``name.params``).

        Raises ``ValueError`` for an unsupported measure.
        """
        param_meas: dict[str, set[str]] = collections.defaultdict(set)
        for measure in measures:
            if measure not in supported_measures and measure not in supported_nicknames:
                match = None
                for base, pattern in _base_patterns():
                    m = pattern.match(measure)
                    if m is not None:
                        match = (base, m.group(1))
                        break
                if match is None:
                    raise ValueError(f"unsupported measure {measure}")
                param_meas[match[0]].update(match[1].split(","))
            elif measure not in param_meas:
                param_meas[measure] = set()
        out = set()
        for meas, args in param_meas.items():
            out.add(f"{meas}.{','.join(sorted(args))}" if args else meas)
        return out

    # -- measure plan -------------------------------------------------------------
    def _build_plan(self, combined: set[str]) -> None:
        """Output keys in pytrec_eval's order, each with how to compute it."""
        metrics: dict[Metric, int] = {}

        def col(family: str, k: int | None = None, **params: float) -> int:
            m = parse_metric(Metric(family, k, None, tuple(sorted(params.items()))))
            return metrics.setdefault(m, len(metrics))

        # key -> ("col", j) | ("const",) | ("gm", j) | ("avg", [j, ...])
        plan: list[tuple[str, tuple[Any, ...]]] = []
        split = [(s.partition(".")[0], s.partition(".")[2]) for s in combined]
        for name, params in sorted(split, key=lambda p: _ORDER[p[0]]):
            kind, family, defaults = _TABLE[name]
            tokens = params.split(",") if params else []
            spelled = f"{name}.{params}"
            if kind == "const":
                plan.append((name, ("const",)))
            elif kind == "plain":
                plan.append((name, ("col", col(family))))
            elif kind == "gm":
                plan.append((name, ("gm", col(family))))
            elif kind == "gains":
                if tokens:
                    raise ValueError(
                        f"{spelled}: trec_eval's {name} takes key=value gain pairs "
                        f"(malformed pair parameters {params!r}); use {name} alone"
                    )
                plan.append((name, ("col", col(family))))
            elif kind == "cut":
                ks = sorted(int(t.split(".")[0]) for t in tokens) if tokens else list(defaults)
                if ks[0] <= 0:
                    raise ValueError(f"{spelled}: trec_eval rejects a cutoff of 0")
                if len(set(ks)) != len(ks):
                    raise ValueError(f"{spelled}: duplicate cutoffs")
                plan.extend((f"{name}_{k}", ("col", col(family, int(k)))) for k in ks)
            elif kind == "float_cut":
                xs = sorted(float(t) for t in tokens) if tokens else list(defaults)
                if len(set(xs)) != len(xs):
                    raise ValueError(f"{spelled}: duplicate cutoffs")
                key = "recall" if family == "iprec_at_recall" else "mult"
                extra = {"version": 9.0} if family == "iprec_at_recall" else {}
                for x in xs:
                    plan.append((f"{name}_{x:3.2f}", ("col", col(family, **{key: x}, **extra))))
            elif kind == "set_f":
                beta = float(tokens[0]) if tokens else defaults[0]
                plan.append((name, ("col", col(family, beta=beta))))
            elif kind == "utility":
                coefs = [float(t) for t in tokens] if tokens else list(defaults)
                if len(coefs) != 4:
                    raise ValueError(
                        f"{spelled}: utility takes exactly 4 coefficients, got {len(coefs)} "
                        "(pytrec_eval's syntax cannot express negative ones)"
                    )
                plan.append((name, ("col", col(family, **dict(zip("abcd", coefs))))))
            else:  # avg: 11pt_avg
                points = [float(t) for t in tokens] if tokens else list(defaults)
                cols = [col(family, recall=x, version=9.0) for x in points]
                plan.append((name, ("avg", cols)))
        self._metrics = list(metrics)
        self._keys = [key for key, _ in plan]
        self._plan = [how for _, how in plan]
        self._take = [how[1] if how[0] in ("col", "gm") else 0 for how in self._plan]
        self._special = [(j, how) for j, how in enumerate(self._plan) if how[0] != "col"]
        self._specs = [(m.family, m.k, m.rel, list(m.params)) for m in self._metrics]

    # -- evaluation -----------------------------------------------------------------
    def evaluate(self, scores: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
        """``{query_id: {measure: value}}`` for the queries in both ``scores`` and the qrels.

        ``scores``: ``{query_id: {doc_id: score}}`` (float or int scores).  An empty
        ``scores`` gives ``{}``.
        """
        if not scores:
            return {}
        if not isinstance(scores, dict):
            raise TypeError("Argument object scores should be of type dictionary.")
        if self._judged is not None and self._qrels is not None and self._metrics:
            # The common input (exact str ids, float/int scores) scored
            # straight from the dicts; None: the general path below decides.
            got = _ranklens.evaluate_dict(
                self._judged,
                self._qrels.arrays,
                scores,
                self._specs,
                float(self._level),
                self._judged_only,
            )
            if got is not None:
                # Every run query scored: the result dict is a copy of the
                # run dict (same keys, same order) with its values replaced.
                exact = type(scores) is dict or type(scores) is collections.defaultdict
                like = scores if exact and len(got[0]) == len(scores) else None
                return self._results(got[0], got[1], like)
        qindex = self._qindex
        qids = [q for q in scores if q in qindex]
        if not qids or self._qrels is None or not self._metrics:
            _check_scores(scores)  # nothing to score: pytrec_eval still checks
            if not qids or self._qrels is None:
                return {}
            return {q: dict.fromkeys(self._keys, 0.0) for q in qids}  # runid / relstring
        qrels = self._qrels
        if len(qids) * 8 < len(qindex):
            # A few queries against large qrels (e.g. one query per call): score
            # only those, not every judged query on an empty ranking.
            qrels = Qrels({q: qrels[q] for q in qids})
            qindex = {q: i for i, q in enumerate(qrels.query_ids)}
        # Every entry type-checked by the encoder, as pytrec_eval checks them
        # (TypeError); run-only queries are encoded too, and ignored.  A NaN or
        # infinite score is a RanklensInputError (ValueError).
        run = Run._from_arrays(_ranklens.encode_mapping(scores, "run", True, True))
        res = _evaluate(
            qrels,
            run,
            self._metrics,
            relevance_level=self._level,
            judged_only=self._judged_only,
            warn_levels=False,  # pytrec_eval says nothing about unreached levels
        )
        values = res.values[[qindex[q] for q in qids]]
        if res.metrics != self._metrics:  # columns in our order, whatever evaluate did
            pos = {m: j for j, m in enumerate(res.metrics)}
            values = values[:, [pos[m] for m in self._metrics]]
        return self._results(qids, values)

    def _results(
        self, qids: list[Any], values: np.ndarray, like: dict[Any, Any] | None = None
    ) -> dict[str, dict[str, float]]:
        """``{query: {key: value}}`` from ``values`` (one row per query of ``qids``,
        one column per metric of ``self._metrics``); ``like``: a dict whose keys
        are ``qids``, in order (see ``nested_dict``)."""
        if not self._special and self._take == list(range(values.shape[1])):
            # Columns already in key order, none computed (MTEB's and the
            # usual sets): no copy of the array.
            return _ranklens.nested_dict(qids, self._keys, np.ascontiguousarray(values), like)
        out = values[:, self._take]
        for j, how in self._special:
            if how[0] == "const":
                out[:, j] = 0.0
            elif how[0] == "gm":
                out[:, j] = [math.log(max(v, 1e-5)) for v in values[:, how[1]].tolist()]
            else:  # avg: trec_eval adds the points from the last one down
                cols = how[1]
                total = values[:, cols[-1]].copy()
                for c in reversed(cols[:-1]):
                    total += values[:, c]
                out[:, j] = total / len(cols)
        return _ranklens.nested_dict(qids, self._keys, np.ascontiguousarray(out), like)
