"""The text and Markdown reports of a `GateResult`: the verdict table, the most
regressed queries, the hit -> miss flips, missing queries and warnings."""

from __future__ import annotations

from typing import Any

from ranklens.compare._comparison import fmt_number, fmt_p

HEADERS = (
    "metric",
    "baseline",
    "candidate",
    "drop",
    "bounds",
    "p",
    "max drop",
    "detectable",
    "W/T/L",
    "verdict",
)
_TESTS = {"t": "paired t", "randomization": "randomization", "bootstrap": "bootstrap"}
_MODES = {
    "strict": "strict (pass when the drop is shown to be below the max drop)",
    "lenient": "lenient (fail when a drop beyond the max drop is significant)",
}
_MAX_IDS = 20


def _ids(ids: list[str]) -> str:
    shown = ", ".join(ids[:_MAX_IDS])
    return shown + (f", … ({len(ids) - _MAX_IDS} more)" if len(ids) > _MAX_IDS else "")


def _queries(n: int) -> str:
    return f"{n} query" if n == 1 else f"{n} queries"


def verdict_cells(v: Any, digits: int) -> list[str]:
    word = "PASS" if v.passed else "FAIL"
    return [
        v.metric,
        fmt_number(v.baseline, digits),
        fmt_number(v.candidate, digits),
        fmt_number(v.drop, digits),
        f"[{fmt_number(v.ci_low, digits)}, {fmt_number(v.ci_high, digits)}]",
        fmt_p(v.p_adjusted),
        f"{v.budget:g}",
        fmt_number(v.min_detectable, digits),
        f"{v.wins}/{v.ties}/{v.losses}",
        word + (" (underpowered)" if v.underpowered else ""),
    ]


def headline(r: Any) -> str:
    if r.passed:
        return f"PASS: all {len(r.verdicts)} metrics within budget"
    return f"FAIL: {len(r.failed)} of {len(r.verdicts)} metrics over budget ({', '.join(r.failed)})"


def settings_line(r: Any) -> str:
    s = r.settings
    return (
        f"{r.names[0]} -> {r.names[1]} on {len(r.query_ids)} qrels queries; "
        f"mode {_MODES[s['mode']]}; {_TESTS[s['test']]} test, {s['correction']} correction "
        f"across metrics, alpha {s['alpha']:g}; drop = baseline - candidate; bounds: its "
        "one-sided 1 - alpha bounds, alpha as corrected for the metric; p: corrected; "
        f"detectable: the smallest drop these queries detect with power {s['power']:g}; "
        "W/T/L: queries where the candidate wins/ties/loses"
    )


def detail_lines(r: Any) -> list[str]:
    """Tie-order dependence, flips, missing and ignored queries, warnings: one
    line each."""
    lines = []
    if r.tie_dependent:
        orders = ", ".join(
            f"{'PASS' if ok else 'FAIL'} under {order}" for order, ok in r.tie_verdicts.items()
        )
        lines.append(f"verdict depends on tie order: {orders}")
    for k, ids in r.flips.items():
        gained = len(r.gains.get(k, []))
        text = f"hit -> miss @{k}: {_queries(len(ids))}"
        lines.append(text + (f" ({_ids(ids)})" if ids else "") + f"; miss -> hit: {gained}")
    for name, ids in r.missing_queries.items():
        if ids:
            lines.append(
                f"{name} lacks {_queries(len(ids))} of the qrels, scored as empty rankings: "
                + _ids(ids)
            )
    for name, ids in r.ignored_queries.items():
        if ids:
            lines.append(f"{name} has {_queries(len(ids))} not in the qrels, ignored: {_ids(ids)}")
    lines += [f"warning: {w}" for w in r.warnings]
    return lines


def _regression_rows(r: Any, digits: int) -> list[list[str]]:
    return [
        [m, c.query_id, *(fmt_number(x, digits) for x in (c.baseline, c.candidate, c.drop))]
        for m, changes in r.regressions.items()
        for c in changes
    ]


def _aligned(rows: list[list[str]], indent: str = "") -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        indent + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows
    ]


def to_text(r: Any, digits: int = 4) -> str:
    lines = [f"ranklens gate: {headline(r)}", settings_line(r), ""]
    lines += _aligned([list(HEADERS)] + [verdict_cells(v, digits) for v in r.verdicts])
    regressed = _regression_rows(r, digits)
    if regressed:
        lines += ["", "most regressed queries:"]
        lines += _aligned([["metric", "query", "baseline", "candidate", "drop"], *regressed], "  ")
    details = detail_lines(r)
    if details:
        lines.append("")
        lines += details
    return "\n".join(lines)


def _md_row(cells: list[str]) -> str:
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def to_markdown(r: Any, digits: int = 4) -> str:
    mark = "✅" if r.passed else "❌"
    lines = [f"### {mark} ranklens gate: {headline(r)}", "", _md_row(list(HEADERS))]
    lines.append("|" + "|".join("---" if i == 0 else "---:" for i in range(len(HEADERS))) + "|")
    lines += [_md_row(verdict_cells(v, digits)) for v in r.verdicts]
    lines += ["", settings_line(r) + "."]
    regressed = _regression_rows(r, digits)
    if regressed:
        lines += [
            "",
            "<details><summary>Most regressed queries</summary>",
            "",
            _md_row(["metric", "query", "baseline", "candidate", "drop"]),
            "|---|---|---:|---:|---:|",
        ]
        lines += [_md_row(row) for row in regressed]
        lines += ["", "</details>"]
    details = detail_lines(r)
    if details:
        lines.append("")
        lines += [f"- {line}" for line in details]
    return "\n".join(lines)
