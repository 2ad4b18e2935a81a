"""Custom gains per label, and trec_eval's ``name.key=value,...`` spelling.

Custom gains (trec_eval ``-m ndcg.1=3,2=9``) are parameters ``gainL=value`` of the
families in :data:`GAIN_FAMILIES`: label ``L`` (a non-negative integer, as trec_eval's
labels) gains ``value`` (any finite number: 0 and negative gains allowed); every other
label gains itself.  Canonical spelling: ``ndcg(gain1=3,gain2=9)``.  Gain parameters
are always kept in the name, even when equal to the label (for ``rbp`` a listed gain
of an absent label changes the scale; see :mod:`ranklens.metrics.rbp`).

trec_eval spelling, parsed here: ``<name>.<pairs>`` or ``<name>_<pairs>`` (the form
trec_eval prints, e.g. ``ndcg_1=3,2=9,4=4.5``), ``<pairs>`` being comma-separated
``key=value``: an integer key is a label (``1=3`` -> ``gain1=3``), any other key a named
parameter (``rbp.p=0.8`` -> ``rbp(p=0.8)``; ``rbp.p=0.8,2=0.5``).
"""

from __future__ import annotations

import re

__all__ = ["GAIN_FAMILIES", "gain_key", "match_pairs_spelling"]

#: Families taking ``gainL`` parameters.
GAIN_FAMILIES = frozenset({"ndcg", "dcg", "idcg", "g", "ndcg_rel", "rndcg", "rbp"})

_GAIN_KEY = re.compile(r"^gain([0-9]+)$", re.IGNORECASE)
_PAIR = re.compile(r"^\s*([A-Za-z0-9_+\-]+)\s*=\s*([^=,]+?)\s*$")


def gain_key(family: str, key: str) -> str | None:
    """The canonical ``gainL`` key if ``key`` is a gain parameter of ``family``."""
    if family not in GAIN_FAMILIES:
        return None
    m = _GAIN_KEY.match(key)
    return f"gain{int(m.group(1))}" if m else None


class PairsError(ValueError):
    """A recognised trec_eval pairs spelling with an unusable pair."""


def match_pairs_spelling(text: str, aliases: dict[str, str]) -> tuple[str, dict[str, float]] | None:
    """``ndcg.1=3,2=9`` -> ``("ndcg", {"gain1": 3.0, "gain2": 9.0})``; None if not this form.

    The longest prefix (before a ``.`` or ``_``) that is a known name wins, so
    ``ndcg_rel.1=3`` is ``ndcg_rel`` and ``rbp_resid_p=0.5`` is ``rbp_resid``.
    """
    s = text.strip()
    if "=" not in s or "(" in s or "@" in s:
        return None
    for i in range(len(s) - 1, 0, -1):
        if s[i] not in "._":
            continue
        family = aliases.get(s[:i].lower())
        if family is None:
            continue
        if s[:i].lower() == "ndcg_cut":
            raise PairsError("trec_eval's ndcg_cut takes no gains; write ndcg(gain1=...)@k")
        params: dict[str, float] = {}
        for part in s[i + 1 :].split(","):
            m = _PAIR.match(part)
            if not m:
                raise PairsError(f"expected key=value pairs, got {part.strip()!r}")
            key, value = m.group(1), m.group(2)
            try:
                number = float(value)
            except ValueError:
                raise PairsError(f"{key} must be a number, got {value!r}") from None
            if key.lstrip("+-").isdigit():
                if key.startswith("-"):
                    raise PairsError(f"gain labels must be non-negative integers, got {key}")
                key = f"gain{int(key)}"
            params[key] = number
        return family, params
    return None
