"""Metric names: one parser for every accepted spelling.

A metric is identified by a :class:`Metric` value (family, cutoff ``k``, optional
per-metric relevance level).  Users may write it in ranklens's canonical form
(``ndcg@10``, ``precision(rel=2)@5``), in ranx's (``precision@5``, ``mrr@10``),
in trec_eval's (``P_5``, ``P.5``, ``ndcg_cut_10``, ``recip_rank``, ``Rprec``) or
in ir_measures' (``nDCG@10``, ``P(rel=2)@5``, ``R@100``, ``RR@10``, ``AP``).
Several cutoffs may be given at once: ``ndcg@5,10,20`` or ``P.5,10``.

Why a frozen dataclass and not strings: the two backends and the Results object
all key on the same normalised value, so ``res["P_5"]`` and ``res["precision@5"]``
are the same entry, and a typo fails here, before any work, with the closest
valid names in the message.
"""

from __future__ import annotations

import difflib
import functools
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ranklens._names._families import (
    ALIASES,
    FAMILIES,
    MAX_K,
    PARAM_RANGES,
    TREC_CUT_REQUIRED,
    param_range_text,
)
from ranklens._names._gains import gain_key  # gains and beyond
from ranklens.errors import UnknownMetricError

__all__ = [
    "FAMILIES",
    "Metric",
    "nan_misses",
    "native_specs",
    "needs_subtopics",
    "parse_metric",
    "parse_metrics",
]

# The largest cutoff: what the core's 64-bit sizes take (a larger int failed
# with a bare OverflowError on its way to Rust).
MAX_CUTOFF = 2**63 - 1


_NAME_RE = re.compile(
    r"""^\s*
    (?P<base>[A-Za-z][A-Za-z0-9_\-]*?)      # family or alias
    (?:\((?P<params>[^()]*)\))?             # (rel=2)
    (?:(?P<sep>@|_|\.)(?P<ks>[0-9][0-9,\s]*))?  # @10 | _10 | .10 | @5,10,20
    \s*$""",
    re.VERBOSE,
)


@dataclass(frozen=True)
class Metric:
    """One metric: a family, an optional cutoff, relevance level and parameters.

    ``rel`` overrides ``evaluate(relevance_level=...)`` for this metric only
    (ir_measures' ``P(rel=2)@5``); ``P(rel=positive)@5`` counts every label > 0
    (``rel`` is then the smallest positive double, as for
    ``relevance_level="positive"``).  ``params`` holds the family's other named
    parameters as sorted ``(key, value)`` pairs (only those that differ from the
    family's defaults).  ``name`` is the canonical spelling, the key used in
    every result.
    """

    family: str
    k: int | None = None
    rel: float | None = None
    params: tuple[tuple[str, float], ...] = ()

    @property
    def name(self) -> str:
        s = self.family
        inner = [f"rel={_fmt_rel(self.rel)}"] if self.rel is not None else []
        inner += [f"{key}={_fmt_num(v)}" for key, v in self.params]
        if inner:
            s += f"({','.join(inner)})"
        if self.k is not None:
            s += f"@{self.k}"
        return s

    def param(self, key: str) -> float:
        """The value of a named parameter (the family's default when not given)."""
        for k, v in self.params:
            if k == key:
                return v
        return FAMILIES[self.family].params[key]

    @property
    def aggregate(self) -> str:
        """``"mean"``, ``"sum"`` (num_ret, num_rel, num_rel_ret, ..., as trec_eval) or
        ``"gmean"`` (gm_map, gm_bpref: exp(mean(ln(max(x, 1e-5)))), as trec_eval)."""
        return FAMILIES[self.family].aggregate

    def __str__(self) -> str:
        return self.name


# The level of "positive" (as ranklens._checks.POSITIVE_LEVEL: label >= it <=> label > 0).
_POSITIVE = math.ulp(0.0)


def _fmt_rel(x: float | str) -> str:
    if isinstance(x, str) or x == _POSITIVE:  # Metric(..., rel="positive") before parsing
        return str(x) if isinstance(x, str) else "positive"
    return _fmt_num(x)


def _fmt_num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def _all_spellings() -> list[str]:
    out = sorted(FAMILIES)
    out += ["P@k", "P_k", "P.k", "ndcg_cut_k", "map_cut_k", "recip_rank", "Rprec", "success_k"]
    out += ["nDCG@k", "R@k", "RR", "RR@k", "AP", "AP@k", "Success@k", "P(rel=2)@k"]
    return out


def _unknown(text: str, why: str) -> UnknownMetricError:
    candidates = sorted(set(ALIASES) | set(FAMILIES))
    base = re.split(r"[@(._]", text.strip(), maxsplit=1)[0].lower()
    close = difflib.get_close_matches(base, candidates, n=5, cutoff=0.5)
    close += difflib.get_close_matches(text.strip().lower(), candidates, n=5, cutoff=0.5)
    close = list(dict.fromkeys(close))
    hint = f"; closest valid names: {', '.join(close)}" if close else ""
    ranx = re.fullmatch(r"\s*([^@\s]+)(@\d+)?-l(\d+)\s*", text)
    if ranx is not None:
        # ranx's relevance-level suffix (``precision@5-l2``): ranklens spells the
        # level as a parameter, and graded-gain families take none.
        name, cut, level = ranx.group(1), ranx.group(2) or "", ranx.group(3)
        spelled = f"{name}(rel={level}){cut}"
        if _parses(spelled):
            hint = f"; ranx's level suffix -l{level} is written {spelled}"
        elif _parses(name + cut):
            hint = (
                f"; ranx's level suffix -l{level} has no ranklens spelling for {name} "
                "(ranx drops the judgments below the level; ranklens's graded gains "
                "take no level)"
            )
    return UnknownMetricError(
        f"unknown metric {text!r}: {why}{hint} (valid forms: {', '.join(_all_spellings())})"
    )


def _parses(text: str) -> bool:
    try:
        _parse_one(text)
    except UnknownMetricError:
        return False
    return True


def _parse_params(text: str, params: str) -> tuple[float | None, tuple[tuple[str, float], ...]]:
    """``rel=2,p=0.8`` -> (2.0, (("p", 0.8),))."""
    rel: float | None = None
    named: dict[str, float] = {}
    for part in params.split(","):
        part = part.strip()
        if not part:
            continue
        key, eq, value = part.partition("=")
        key = key.strip()
        if not eq or not key:
            raise _unknown(text, f"parameters are key=value, got {part!r}")
        if key.lower() == "rel" and value.strip().lower() == "positive":
            rel = _POSITIVE
            continue
        try:
            number = float(value)
        except ValueError:
            raise _unknown(text, f"{key} must be a number, got {value.strip()!r}") from None
        if number != number or number in (float("inf"), float("-inf")):
            raise _unknown(text, f"{key} must be finite")
        if key.lower() == "rel":
            rel = number
        else:
            named[key] = number
    return rel, tuple(sorted(named.items()))


def native_specs(metrics: Sequence[Metric]) -> list[tuple[str, int | None, float | None, list]]:
    """The metrics as the native module takes them: (family, k, rel, params)."""
    return [(m.family, m.k, m.rel, list(m.params)) for m in metrics]


def needs_subtopics(metrics: Iterable[Metric]) -> bool:
    """Whether a metric is a diversity metric (it needs subtopic judgments)."""
    return any(FAMILIES[m.family].subtopics for m in metrics)


def nan_misses(metrics: Sequence[Metric], miss_nan: bool) -> frozenset[str]:
    """Names of the metrics whose value on a miss is NaN (``first_rel_rank`` with
    ``miss=None``): the results leave those NaNs out of the means."""
    if not miss_nan:
        return frozenset()
    return frozenset(m.name for m in metrics if m.family == "first_rel_rank")


def parse_metrics(names: str | Metric | Iterable[str | Metric]) -> list[Metric]:
    """Parse one name or many into :class:`Metric` values, expanding cutoff lists.

    Order is kept and duplicates are dropped (first occurrence wins).
    """
    if isinstance(names, (str, Metric)):
        names = [names]
    elif not isinstance(names, Iterable):
        raise UnknownMetricError(
            f"metrics must be a metric name, a Metric or a list of them, got {type(names).__name__}"
        )
    out: list[Metric] = []
    for n in names:
        if isinstance(n, Metric):
            out.append(_validate(n, n.name))
        elif isinstance(n, str):
            out.extend(_parse_one_cached(n))
        else:
            raise UnknownMetricError(f"metric names must be strings, got {type(n).__name__}")
    if not out:
        raise UnknownMetricError("the metric list is empty")
    return list(dict.fromkeys(out))


def parse_metric(name: str | Metric) -> Metric:
    """Parse exactly one metric (a cutoff list is an error here)."""
    ms = parse_metrics([name])
    if len(ms) != 1:
        raise UnknownMetricError(f"{name!r} names {len(ms)} metrics; expected one")
    return ms[0]


@functools.lru_cache(maxsize=512)
def _parse_one_cached(text: str) -> tuple[Metric, ...]:
    """:func:`_parse_one`, remembered (its errors are not: they are raised again).

    Why: parsing the names was a large share of a one-row ``evaluate_dense``
    call, paid again on every batch of a training loop.  ``Metric`` is frozen
    and the families are fixed, so a name always parses the same."""
    return tuple(_parse_one(text))


def _parse_one(text: str) -> list[Metric]:
    real_valued = _parse_real_valued(text)  # trec_eval part A
    if real_valued is not None:
        return real_valued
    pairs = _parse_pairs(text)  # gains and beyond
    if pairs is not None:
        return pairs
    m = _NAME_RE.match(text)
    if not m:
        raise _unknown(text, "not a metric name")
    base = m.group("base")
    ks_text = m.group("ks")
    key = base.lower()
    if key not in ALIASES:
        raise _unknown(text, "unknown family")
    family = ALIASES[key]
    rel: float | None = None
    params: tuple[tuple[str, float], ...] = ()
    if m.group("params") is not None:
        rel, params = _parse_params(text, m.group("params"))
    ks: list[int | None]
    if ks_text is None:
        if key in TREC_CUT_REQUIRED:
            raise _unknown(text, f"{base} needs a cutoff, e.g. {base}_10")
        ks = [None]
    else:
        ks = []
        for piece in ks_text.split(","):
            piece = piece.strip()
            if not piece:
                continue
            if not piece.isdigit():  # "5 10": cutoffs are separated by commas
                raise _unknown(text, f"cutoff {piece!r} is not an integer")
            k = int(piece)
            if k <= 0:
                raise _unknown(text, f"cutoff must be a positive integer, got {k}")
            ks.append(k)
        if not ks:
            raise _unknown(text, "empty cutoff list")
    return [_validate(Metric(family, k, rel, params), text) for k in ks]


# trec_eval part A
def _parse_real_valued(text: str) -> list[Metric] | None:
    """``iprec_at_recall_0.10``, ``Rprec_mult.0.2,0.5``, ``IPrec@0.1``, ``set_F.0.5``,
    ``utility.2,-1,0,0``, ``11pt_avg..25,.5,.75``: see :mod:`ranklens._names._params`."""
    from ranklens._names._params import SpellingError, match_param_spelling

    try:
        hit = match_param_spelling(text)
    except SpellingError as e:
        raise _unknown(text, str(e)) from None
    if hit is None:
        return None
    family, inner, param_sets = hit
    rel, params = _parse_params(text, inner) if inner is not None else (None, ())
    return [
        _validate(Metric(family, None, rel, tuple(sorted({**dict(params), **ps}.items()))), text)
        for ps in param_sets
    ]


# gains and beyond
def _parse_pairs(text: str) -> list[Metric] | None:
    """trec_eval ``ndcg.1=3,2=9`` / ``ndcg_1=3,2=9`` / ``rbp.p=0.8``: see
    :mod:`ranklens._names._gains`."""
    from ranklens._names._gains import PairsError, match_pairs_spelling

    try:
        hit = match_pairs_spelling(text, ALIASES)
    except PairsError as e:
        raise _unknown(text, str(e)) from None
    if hit is None:
        return None
    family, params = hit
    return [_validate(Metric(family, None, None, tuple(sorted(params.items()))), text)]


def _validate(metric: Metric, text: str) -> Metric:
    fam = FAMILIES.get(metric.family)
    if fam is None:
        raise _unknown(text, "unknown family")
    if metric.k is not None:
        if fam.cutoff == "none":
            raise _unknown(text, f"{fam.name} takes no cutoff")
        if isinstance(metric.k, bool) or not isinstance(metric.k, int) or metric.k <= 0:
            raise _unknown(text, f"cutoff must be a positive integer, got {metric.k!r}")
        if metric.k > MAX_K.get(fam.name, MAX_CUTOFF):
            top = MAX_K.get(fam.name, MAX_CUTOFF)
            raise _unknown(text, f"cutoff must be at most {top}, got {metric.k}")
    elif fam.cutoff == "required":
        raise _unknown(text, f"{fam.name} needs a cutoff, e.g. {fam.name}@10")
    if metric.rel is not None:
        if not fam.binary:
            raise _unknown(text, f"{fam.name} uses graded gains and takes no rel= level")
        if isinstance(metric.rel, str) and metric.rel.strip().lower() == "positive":
            rel = _POSITIVE
        else:
            rel = float(metric.rel)
        if rel != rel or rel in (float("inf"), float("-inf")):
            raise _unknown(text, "rel must be finite")
        metric = Metric(metric.family, metric.k, rel, metric.params)
    params = {}
    for key, value in metric.params:
        gkey = gain_key(fam.name, key)  # gains and beyond
        if gkey is not None:
            params[gkey] = float(value)
            continue
        if key not in fam.params:
            takes = ", ".join(sorted(fam.params)) or "none"
            raise _unknown(text, f"{fam.name} takes no parameter {key!r} (it takes: {takes})")
        bounds = PARAM_RANGES.get((fam.name, key))
        if bounds is not None:
            lo, hi, lo_in, hi_in = bounds
            v = float(value)
            if not ((lo < v or (lo_in and v == lo)) and (v < hi or (hi_in and v == hi))):
                raise _unknown(
                    text,
                    f"{fam.name} parameter {key} must be in {param_range_text(*bounds)}, "
                    f"got {_fmt_num(v)}",
                )
        if float(value) != fam.params[key]:
            params[key] = float(value)
    return Metric(metric.family, metric.k, metric.rel, tuple(sorted(params.items())))
