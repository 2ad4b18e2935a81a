"""Renderings of a :class:`ranklens.compare.Comparison`: text, Markdown, LaTeX,
HTML, JSON.

The pairwise formats (text, Markdown, HTML, JSON) list one row per (metric,
run, other).  The LaTeX table is the summary for a paper: runs as rows, metrics
as columns, the best mean of each metric in bold and, as a superscript, the
letters of the runs a run is significantly better than.
"""

from __future__ import annotations

import html
import json
import math
import string
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ranklens.compare import Comparison, PairResult

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


def _num(x: float, digits: int) -> str:
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return f"{x:.{digits}f}"


def _p(x: float) -> str:
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
        _num(r.mean, digits),
        _num(r.other_mean, digits),
        _num(r.diff, digits),
        _p(r.p_value),
        _p(r.p_adjusted),
        "*" if r.significant else "",
        _num(r.effect_size, 3),
        f"[{_num(r.ci_low, digits)}, {_num(r.ci_high, digits)}]",
        f"{r.wins}/{r.ties}/{r.losses}",
    ]


def _summary_line(c: Comparison) -> str:
    corr = c.settings["correction"]
    corr_txt = "Tukey HSD (no further correction)" if corr == "tukey" else corr
    base = c.settings["baseline"]
    pairs = f"baseline {base}" if base is not None else "all pairs"
    return (
        f"Comparison of {len(c.runs)} runs on {len(c.query_ids)} queries ({pairs}); "
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


def _json_float(x: float) -> Any:
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
            {k: _json_float(v) if isinstance(v, float) else v for k, v in r.to_dict().items()}
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
