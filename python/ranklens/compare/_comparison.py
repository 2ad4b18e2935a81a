"""`Comparison` (what `compare` returns) and its renderings: text, Markdown, LaTeX,
HTML, JSON.

The pairwise formats (text, Markdown, HTML, JSON) list one row per (metric,
run, other).  The LaTeX table is the summary for a paper: runs as rows, metrics
as columns, the best mean of each metric in bold and, as a superscript, the
letters of the runs a run is significantly better than.
"""

from __future__ import annotations

import html
import importlib
import json
import math
import os
import string
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from ranklens._names import Metric, parse_metric
from ranklens.errors import RanklensInputError


@dataclass(frozen=True)
class PairResult:
    """One (metric, run, other) comparison; ``diff = mean - other_mean``."""

    metric: str
    run: str
    other: str
    mean: float
    other_mean: float
    diff: float
    p_value: float
    p_adjusted: float
    significant: bool
    effect_size: float
    ci_low: float
    ci_high: float
    wins: int
    ties: int
    losses: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


COLUMNS = tuple(PairResult.__dataclass_fields__)


class Comparison:
    """The result of :func:`compare`.

    * ``results`` – list of :class:`PairResult`, metric-major, pairs in order;
      ``result(metric, run, other)`` finds one (either order of the two runs).
    * ``runs`` (names), ``metrics`` (:class:`Metric`), ``query_ids`` (the qrels
      queries every score is over), ``scores[run]`` (``queries x metrics``
      array), ``means[run][metric name]``.
    * ``missing_queries[run]`` – qrels queries absent from the run (scored on an
      empty ranking); ``ignored_queries[run]`` – run queries not in the qrels.
    * ``test``, ``correction``, ``correction_scope``, ``alpha``, ``baseline``,
      ``n_resamples``, ``seed``, ``confidence``, ``relevance_level``, ``ties`` –
      the settings used.
    * ``to_pandas()``, ``to_markdown()``, ``to_latex()``, ``to_html()``,
      ``to_json()``, ``to_dict()``; ``str(cmp)`` is a text table;
      ``to_report(path, qrels, runs)`` the HTML report, query by query.
    """

    def __init__(
        self,
        *,
        runs: list[str],
        metrics: list[Metric],
        query_ids: list[str],
        scores: dict[str, np.ndarray],
        missing_queries: dict[str, list[str]],
        ignored_queries: dict[str, list[str]],
        results: list[PairResult],
        settings: dict[str, Any],
    ) -> None:
        self.runs = runs
        self.metrics = metrics
        self.query_ids = query_ids
        self.scores = scores
        self.missing_queries = missing_queries
        self.ignored_queries = ignored_queries
        self.results = results
        self.settings = settings
        for key, value in settings.items():
            setattr(self, key, value)
        self.means = {
            r: {m.name: float(scores[r][:, j].mean()) for j, m in enumerate(metrics)} for r in runs
        }

    @property
    def metric_names(self) -> list[str]:
        return [m.name for m in self.metrics]

    def result(self, metric: str | Metric, run: str, other: str) -> PairResult:
        """The comparison of ``run`` and ``other`` on ``metric``.

        If it was computed the other way round, the mirrored row is returned
        (``diff``, ``effect_size``, the CI and wins/losses negated or swapped).
        """
        name = parse_metric(metric).name
        for r in self.results:
            if r.metric != name:
                continue
            if (r.run, r.other) == (run, other):
                return r
            if (r.run, r.other) == (other, run):
                return PairResult(
                    metric=name,
                    run=run,
                    other=other,
                    mean=r.other_mean,
                    other_mean=r.mean,
                    diff=-r.diff,
                    p_value=r.p_value,
                    p_adjusted=r.p_adjusted,
                    significant=r.significant,
                    effect_size=-r.effect_size,
                    ci_low=-r.ci_high,
                    ci_high=-r.ci_low,
                    wins=r.losses,
                    ties=r.ties,
                    losses=r.wins,
                )
        raise KeyError(f"no comparison of {run!r} and {other!r} on {name!r}")

    def per_query(self, run: str, metric: str | Metric) -> dict[str, float]:
        """``{query id: score}`` of ``run`` on ``metric``."""
        j = self.metric_names.index(parse_metric(metric).name)
        return dict(zip(self.query_ids, self.scores[run][:, j].tolist()))

    def beats(self, metric: str | Metric) -> dict[str, list[str]]:
        """For each run, the runs it is significantly better than on ``metric``."""
        name = parse_metric(metric).name
        out: dict[str, list[str]] = {r: [] for r in self.runs}
        for r in self.results:
            if r.metric == name and r.significant and r.diff != 0:
                winner, loser = (r.run, r.other) if r.diff > 0 else (r.other, r.run)
                out[winner].append(loser)
        order = {r: i for i, r in enumerate(self.runs)}
        return {k: sorted(v, key=order.__getitem__) for k, v in out.items()}

    # -- reports (the renderings below) ---------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return to_dict(self)

    def to_json(self, indent: int | None = 2) -> str:
        return to_json(self, indent)

    def to_pandas(self) -> Any:
        """One row per (metric, run, other): the :data:`COLUMNS` of :class:`PairResult`."""
        import pandas as pd

        return pd.DataFrame([r.to_dict() for r in self.results], columns=list(COLUMNS))

    def to_markdown(self, digits: int = 4) -> str:
        return to_markdown(self, digits)

    def to_latex(
        self, digits: int = 4, caption: str | None = None, label: str | None = None
    ) -> str:
        return to_latex(self, digits, caption, label)

    def to_html(self, digits: int = 4) -> str:
        return to_html(self, digits)

    def to_report(
        self,
        path: str | os.PathLike[str] | None,
        qrels: Any = None,
        runs: Any = None,
        *,
        depth: int = 20,
        title: str | None = None,
    ) -> str:
        """The HTML report of this comparison (see :func:`ranklens.report`),
        written to ``path`` unless ``None``; its text returned.  The rankings
        shown are those :func:`ranklens.compare` compared (it keeps a reference
        to its qrels and runs); ``qrels`` and ``runs`` replace them, and are
        needed for a comparison not made by :func:`ranklens.compare` in this
        process."""
        if qrels is None and runs is None:
            inputs = getattr(self, "_inputs", None)
            if inputs is None:
                raise RanklensInputError(
                    "this comparison holds no rankings (not made by ranklens.compare "
                    "in this process): give to_report(path, qrels, runs)"
                )
            qrels, runs = inputs
        elif qrels is None or runs is None:
            raise RanklensInputError("give both qrels and runs, or neither")
        # The report sits above this module (it calls compare and explain): looked
        # up by name when called, as the package's lazy names are.
        report = importlib.import_module("ranklens._report").report
        return str(report(qrels, runs, path=path, depth=depth, title=title, comparison=self))

    def __getstate__(self) -> dict[str, Any]:
        # A pickle holds the numbers, not the rankings compared.
        state = dict(self.__dict__)
        state.pop("_inputs", None)
        return state

    def __str__(self) -> str:
        return to_text(self)

    def __repr__(self) -> str:
        return self.__str__()

    def _repr_html_(self) -> str:
        return self.to_html()


# -- renderings ------------------------------------------------------------------
_HEADERS = (
    "metric",
    "run",
    "other",
    "mean",
    "other_mean",
    "diff",
    "p_value",
    "p_adjusted",
    "sig",
    "effect_size",
    "ci",
    "W/T/L",
)


def fmt_number(x: float, digits: int) -> str:
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.{digits}f}"


def fmt_p(x: float) -> str:
    if x == 0:
        return "0"
    if x < 1e-4:
        return f"{x:.2e}"
    return f"{x:.4f}"


def _cells(r: PairResult, digits: int) -> list[str]:
    return [
        r.metric,
        r.run,
        r.other,
        fmt_number(r.mean, digits),
        fmt_number(r.other_mean, digits),
        fmt_number(r.diff, digits),
        fmt_p(r.p_value),
        fmt_p(r.p_adjusted),
        "*" if r.significant else "",
        fmt_number(r.effect_size, 3),
        f"[{fmt_number(r.ci_low, digits)}, {fmt_number(r.ci_high, digits)}]",
        f"{r.wins}/{r.ties}/{r.losses}",
    ]


def _summary_line(c: Comparison) -> str:
    corr = c.settings["correction"]
    corr_txt = "Tukey HSD (no further correction)" if corr == "tukey" else corr
    base = c.settings["baseline"]
    pairs = f"baseline {base}" if base is not None else "all pairs"
    ties = c.settings.get("ties", "trec")
    order = "" if ties == "trec" else f", ties {ties}"
    return (
        f"Comparison of {len(c.runs)} runs on {len(c.query_ids)} queries ({pairs}{order}); "
        f"test {c.settings['test']}, correction {corr_txt}, alpha {c.settings['alpha']:g}; "
        f"* = significant; CI {c.settings['confidence']:.0%} bootstrap"
    )


def _missing_line(c: Comparison) -> str | None:
    parts = [f"{r}: {len(v)}" for r, v in c.missing_queries.items() if v]
    if not parts:
        return None
    return "qrels queries missing from a run (scored as empty rankings): " + ", ".join(parts)


def to_text(c: Comparison, digits: int = 4) -> str:
    rows = [list(_HEADERS)] + [_cells(r, digits) for r in c.results]
    widths = [max(len(row[i]) for row in rows) for i in range(len(_HEADERS))]
    lines = [_summary_line(c)]
    missing = _missing_line(c)
    if missing:
        lines.append(missing)
    for row in rows:
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
    return "\n".join(lines)


def to_markdown(c: Comparison, digits: int = 4) -> str:
    def esc(s: str) -> str:
        return s.replace("|", "\\|")

    lines = [
        "| " + " | ".join(_HEADERS) + " |",
        "|" + "|".join("---" if i < 3 or i == 8 else "---:" for i in range(len(_HEADERS))) + "|",
    ]
    for r in c.results:
        lines.append("| " + " | ".join(esc(x) for x in _cells(r, digits)) + " |")
    lines.append("")
    lines.append(_summary_line(c) + ".")
    missing = _missing_line(c)
    if missing:
        lines.append("")
        lines.append(missing + ".")
    return "\n".join(lines)


def to_html(c: Comparison, digits: int = 4) -> str:
    e = html.escape
    out = ['<table class="ranklens-comparison">', f"<caption>{e(_summary_line(c))}</caption>"]
    out.append("<thead><tr>" + "".join(f"<th>{e(h)}</th>" for h in _HEADERS) + "</tr></thead>")
    out.append("<tbody>")
    for r in c.results:
        cells = _cells(r, digits)
        tds = "".join(
            f"<td>{e(x)}</td>" if i < 3 else f'<td style="text-align:right">{e(x)}</td>'
            for i, x in enumerate(cells)
        )
        out.append(f"<tr>{tds}</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def json_float(x: float) -> Any:
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def to_dict(c: Comparison) -> dict[str, Any]:
    """A JSON-ready dict: settings, runs, means, missing queries, pairwise rows.

    Infinite effect sizes are written as the strings ``"inf"`` / ``"-inf"``.
    """
    return {
        "settings": dict(c.settings),
        "runs": list(c.runs),
        "metrics": [m.name for m in c.metrics],
        "num_queries": len(c.query_ids),
        "means": c.means,
        "missing_queries": c.missing_queries,
        "ignored_queries": c.ignored_queries,
        "results": [
            {k: json_float(v) if isinstance(v, float) else v for k, v in r.to_dict().items()}
            for r in c.results
        ],
    }


def to_json(c: Comparison, indent: int | None = 2) -> str:
    return json.dumps(to_dict(c), indent=indent, allow_nan=False)


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def _tex(s: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in s)


def _letters(n: int) -> list[str]:
    base = string.ascii_lowercase
    out = []
    for i in range(n):
        s = ""
        j = i
        while True:
            s = base[j % 26] + s
            j = j // 26 - 1
            if j < 0:
                break
        out.append(s)
    return out


def to_latex(
    c: Comparison, digits: int = 4, caption: str | None = None, label: str | None = None
) -> str:
    """A booktabs table: runs as rows, metrics as columns; best mean per metric in
    bold; superscript letters: the runs this run is significantly better than."""
    letters = _letters(len(c.runs))
    letter_of = dict(zip(c.runs, letters))
    names = [m.name for m in c.metrics]
    best = {m: max(c.means[r][m] for r in c.runs) for m in names}
    beats = {m: c.beats(m) for m in names}
    corr = c.settings["correction"]
    corr_txt = "Tukey HSD" if corr == "tukey" else f"{corr} correction"
    if caption is None:
        caption = (
            f"Mean scores over {len(c.query_ids)} queries. Bold: best per metric. "
            f"Superscripts: significantly better than the runs with those letters "
            f"({c.settings['test']} test, {corr_txt}, "
            f"$\\alpha = {c.settings['alpha']:g}$)."
        )
        if c.settings["baseline"] is not None:
            caption += (
                f" Runs were only compared with the baseline, {_tex(c.settings['baseline'])}."
            )
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        r"\begin{tabular}{cl" + "r" * len(names) + "}",
        r"\toprule",
        r"\# & Run & " + " & ".join(_tex(m) for m in names) + r" \\",
        r"\midrule",
    ]
    for r in c.runs:
        cells = []
        for m in names:
            v = c.means[r][m]
            txt = f"{v:.{digits}f}"
            if v == best[m]:
                txt = rf"\textbf{{{txt}}}"
            sup = "".join(letter_of[o] for o in beats[m][r])
            if sup:
                txt += rf"$^{{{sup}}}$"
            cells.append(txt)
        lines.append(f"{letter_of[r]} & {_tex(r)} & " + " & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", rf"\caption{{{caption}}}"]
    if label:
        lines.append(rf"\label{{{label}}}")
    lines.append(r"\end{table}")
    return "\n".join(lines)
