"""`report`: one self-contained HTML file comparing runs query by query.

The file opens offline: the page's script and style (``report.js``,
``report.css``, beside this module) and the data (one JSON document, see
``_payload``) are inlined into ``template.html``; nothing is fetched.  The
charts are SVG drawn by that script.  The page shows ``compare``'s summary, per
metric the sorted per-query differences and a scatter of run A against run B,
a query table (sorted by any column, filtered by text, shown a page at a time),
and, for a clicked query, the runs' rankings side by side with ``explain``'s
labels and formulas.

The script renders only what is on screen (one page of the query table, one
query's rankings) and draws each chart as a single SVG path, so ten thousand
queries sort and open without freezing the browser.

Rejected: a charting library (a dependency to vendor and an extra to install,
for two kinds of chart); a page per query (a directory, not a file anyone can
mail); rendering every table row (tens of thousands of DOM rows to re-sort).
"""

from __future__ import annotations

import html
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from typing import Any

from ranklens._data import Run
from ranklens._report._inputs import as_named_runs, read_qrels, run_names
from ranklens._report._payload import payload
from ranklens.compare import compare
from ranklens.errors import RanklensInputError

__all__ = ["report", "run_names"]

_DATA_MARK = "@@RANKLENS_DATA@@"


def report(
    qrels: Any,
    runs: Mapping[str, Any] | Sequence[Any],
    metrics: str | Iterable[str] = ("ndcg@10", "map"),
    path: str | os.PathLike[str] | None = None,
    *,
    depth: int = 20,
    title: str | None = None,
    subtopics: bool = False,
    comparison: Any = None,
    **compare_options: Any,
) -> str:
    """Write an HTML report comparing ``runs`` query by query; return its text.

    ``qrels``: a :class:`ranklens.Qrels`, a mapping ``{query: {doc: label}}`` or
    a TREC qrels file (``subtopics=True``: the diversity format).  ``runs``: a
    dict name -> run, or a list of named :class:`ranklens.Run` objects or of run
    files (named by their tags, or by file where two share a tag); a run is a
    ``Run``, a mapping or a file.  ``metrics``: as :func:`ranklens.compare`.
    ``path``: where to write the file (``None``: only return the text).
    ``depth``: how deep each ranking is embedded and shown.  ``compare_options``
    (``test``, ``correction``, ``baseline``, ``alpha``, ``relevance_level``, ...)
    go to :func:`ranklens.compare`; or pass ``comparison``, the
    :class:`ranklens.Comparison` of these runs, to use its numbers.  The
    comparison is in trec_eval's tie order, that of the rankings shown
    (``ties`` other than ``"trec"`` is an error); for a run with tied scores the
    page also shows each metric's mean with ``ties="best"`` and ``"worst"``.

    Raises :class:`ranklens.RanklensInputError` on bad input.
    """
    if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
        raise RanklensInputError(f"depth must be an int >= 1, got {depth!r}")
    q = read_qrels(qrels, subtopics)
    named = as_named_runs(runs)
    if comparison is None:
        cmp = compare(q, named, metrics, **compare_options)
    else:
        if compare_options:
            raise RanklensInputError(
                "give either a comparison or compare options, not both: "
                + ", ".join(sorted(compare_options))
            )
        cmp = comparison
    ties = cmp.settings.get("ties", "trec")
    if ties != "trec":
        # The rankings shown are explain's, in trec order: numbers of another
        # order would not be the ones the page explains.
        raise RanklensInputError(
            f"a report compares runs in trec_eval's tie order (the order of the rankings "
            f"it shows), got a comparison with ties={ties!r}; the report shows the "
            "best / worst tie orders' means beside a run with tied scores"
        )
    values = list(named.values()) if isinstance(named, Mapping) else list(named)
    if len(values) != len(cmp.runs) or (
        isinstance(named, Mapping) and list(named) != list(cmp.runs)
    ):
        raise RanklensInputError(
            f"the comparison is of runs {cmp.runs}; the report was given other runs"
        )
    by_name = {name: Run(r) if isinstance(r, Mapping) else r for name, r in zip(cmp.runs, values)}
    title = title or "ranklens report: " + " vs ".join(cmp.runs)
    text = page(payload(q, by_name, cmp, depth, title))
    if path is not None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    return text


def _asset(name: str) -> str:
    return resources.files("ranklens._report").joinpath(name).read_text(encoding="utf-8")


def page(data: dict[str, Any]) -> str:
    """The HTML file: the template with its style, script and ``data`` inlined."""
    raw = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    # Inside <script>, only "</" (and "<!--") could end or confuse the element:
    # "<" written as a JSON escape never does.
    raw = raw.replace("<", "\\u003c")
    head, tail = _asset("template.html").split(_DATA_MARK)

    def fill(part: str) -> str:
        part = part.replace("/*@@CSS@@*/", _asset("report.css"))
        part = part.replace("/*@@JS@@*/", _asset("report.js"))
        return part.replace("@@TITLE@@", html.escape(data["title"]))

    head, tail = fill(head), fill(tail)
    return head + raw + tail
