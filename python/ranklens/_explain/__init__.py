"""One query looked at closely: :func:`explain` (its ranking, gains and metric
arithmetic spelled out) and :func:`relstring` (trec_eval's relevance string of
its ranking).

Private package: the public faces are ``ranklens.explain``,
``ranklens.Explanation`` and ``ranklens.relstring``."""

from __future__ import annotations

from ranklens._explain._explanation import Explanation, explain
from ranklens._explain._relstring import relstring, relstring_of

__all__ = ["Explanation", "explain", "relstring", "relstring_of"]
