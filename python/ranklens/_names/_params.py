"""trec_eval and ir_measures spellings whose parameters are real numbers.

The general parser (:mod:`ranklens._names`) reads integer cutoffs (``P_5``,
``ndcg@5,10``).  These spellings carry real-valued parameters instead, and are
matched here first:

* ``iprec_at_recall_0.10``, ``iprec_at_recall..1,.5`` (trec_eval), ``IPrec@0.1``
  (ir_measures) -> ``iprec_at_recall(recall=x)``, one metric per value;
* ``Rprec_mult_0.20``, ``Rprec_mult.0.2,0.5`` -> ``rprec_mult(mult=x)``;
* ``set_F.0.5`` -> ``set_f(beta=0.5)``;
* ``utility.2,-1,0,0`` -> ``utility(a=2,b=-1,c=0,d=0)`` (exactly four values);
* ``11pt_avg`` and ``11pt_avg..25,.5,.75`` -> ``iprec_avg(lo=, hi=, step=)`` (the
  points must be evenly spaced and ascending).

A parenthesised parameter list may precede the values, e.g.
``iprec_at_recall(version=9)_0.10``.
"""

from __future__ import annotations

import re

__all__ = ["match_param_spelling"]

_NUM = r"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?"
_RE = re.compile(
    rf"""^\s*
    (?P<base>iprec_at_recall|iprec|rprec_mult|set_f|utility|11pt_avg)
    (?:\((?P<params>[^()]*)\))?
    (?:(?P<sep>[._@])(?P<values>{_NUM}(?:\s*,\s*{_NUM})*))?
    \s*$""",
    re.VERBOSE | re.IGNORECASE,
)

_FAMILY = {
    "iprec_at_recall": ("iprec_at_recall", "recall"),
    "iprec": ("iprec_at_recall", "recall"),
    "rprec_mult": ("rprec_mult", "mult"),
    "set_f": ("set_f", "beta"),
}


class SpellingError(ValueError):
    """A matched spelling with unusable values (the message says why)."""


def _points(lo: float, hi: float, step: float) -> list[float]:
    # Same rule as ranklens.metrics.iprec.recall_points (n rounded half up).
    n = int((hi - lo) / step + 0.5) + 1 if step > 0 and hi >= lo else 1
    return [float(f"{lo + i * step:.10f}") for i in range(n)]


def match_param_spelling(
    text: str,
) -> tuple[str, str | None, list[dict[str, float]]] | None:
    """``(family, parenthesised params or None, [named params per metric])``.

    None when ``text`` is not one of these spellings (or carries no real-valued
    parameter list, e.g. plain ``set_F``, which the general parser handles).
    Raises :class:`SpellingError` for a matched spelling with bad values.
    """
    m = _RE.match(text)
    if not m:
        return None
    base = m.group("base").lower()
    values_text = m.group("values")
    if values_text is None:
        if base == "11pt_avg":
            return "iprec_avg", m.group("params"), [{}]
        return None
    if m.group("sep") == "@" and base not in ("iprec", "iprec_at_recall"):
        return None  # rprec_mult@2 etc.: an integer cutoff, for the general parser
    values = [float(v) for v in values_text.split(",")]
    if base == "utility":
        if len(values) != 4:
            raise SpellingError(f"utility takes exactly 4 coefficients, got {len(values)}")
        return "utility", m.group("params"), [dict(zip("abcd", values))]
    if base == "11pt_avg":
        lo, hi = values[0], values[-1]
        step = float(f"{(hi - lo) / (len(values) - 1):.10f}") if len(values) > 1 else 0.1
        want = [float(f"{v:.10f}") for v in values]
        got = _points(lo, hi, step)
        if len(values) > 1 and (
            step <= 0 or len(got) != len(want) or any(abs(a - b) > 1e-9 for a, b in zip(got, want))
        ):
            raise SpellingError("11pt_avg recall points must be ascending and evenly spaced")
        return "iprec_avg", m.group("params"), [{"lo": lo, "hi": hi, "step": step}]
    family, key = _FAMILY[base]
    return family, m.group("params"), [{key: v} for v in values]
