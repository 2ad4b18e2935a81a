"""`explain`: one query's ranking, gains and metric arithmetic, spelled out.

The table and the formulas are built here from the query's relevance vector (the
label at each rank, grouped ground truth relabelled as the evaluation does); the
metric values themselves come from :func:`ranklens.evaluate` on that query, so an
explanation never disagrees with the scores.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ranklens._checks import check_level, positive_int
from ranklens._data import Qrels, Run, as_qrels, as_run
from ranklens._evaluate import evaluate
from ranklens._names import Metric, parse_metrics
from ranklens.errors import RanklensInputError

__all__ = ["Explanation", "explain"]

_DEFAULT = ("ndcg@{k}", "P@{k}", "recall@{k}", "map@{k}", "mrr@{k}")


@dataclass
class Explanation:
    """What :func:`explain` returns; ``print()`` it, or show it in a notebook.

    ``ranked``: one dict per rank (``rank``, ``doc``, ``score``, ``label`` - None when
    unjudged -, ``gain``, ``discount``, ``dcg`` running); ``ideal``: the ideal ranking
    (``rank``, ``doc``, ``label``, ``gain``, ``discount``, ``idcg`` running);
    ``values``: ``{metric name: value}``; ``formulas``: ``{metric name: text}``.
    """

    query_id: str
    k: int
    num_ret: int
    ranked: list[dict[str, Any]]
    ideal: list[dict[str, Any]]
    values: dict[str, float]
    formulas: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        lines = [f"query {self.query_id!r}: top {len(self.ranked)} of {self.num_ret} retrieved"]
        header = f"{'rank':>4}  {'doc':<20} {'score':>10} {'label':>9} {'gain':>7} "
        header += f"{'discount':>8} {'DCG':>8}"
        lines.append(header)
        for r in self.ranked:
            label = "unjudged" if r["label"] is None else _num(r["label"])
            lines.append(
                f"{r['rank']:>4}  {_cut(r['doc'], 20):<20} {_num(r['score']):>10} {label:>9} "
                f"{r['gain']:>7.4g} {r['discount']:>8.4f} {r['dcg']:>8.4f}"
            )
        lines.append("ideal ranking:")
        lines.append(
            f"{'rank':>4}  {'doc':<20} {'label':>9} {'gain':>7} {'discount':>8} {'IDCG':>8}"
        )
        for r in self.ideal:
            lines.append(
                f"{r['rank']:>4}  {_cut(r['doc'], 20):<20} {_num(r['label']):>9} "
                f"{r['gain']:>7.4g} {r['discount']:>8.4f} {r['idcg']:>8.4f}"
            )
        lines.append("metrics:")
        for _name, text in self.formulas.items():
            lines.append(f"  {text}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"Explanation(query_id={self.query_id!r}, values={self.values!r})"

    def _repr_html_(self) -> str:
        esc = html.escape
        rows = "".join(
            "<tr>"
            + "".join(
                f"<td>{esc(str(x))}</td>"
                for x in (
                    r["rank"],
                    r["doc"],
                    _num(r["score"]),
                    "unjudged" if r["label"] is None else _num(r["label"]),
                    f"{r['gain']:.4g}",
                    f"{r['discount']:.4f}",
                    f"{r['dcg']:.4f}",
                )
            )
            + "</tr>"
            for r in self.ranked
        )
        ideal = "".join(
            f"<tr><td>{r['rank']}</td><td>{esc(str(r['doc']))}</td><td>{_num(r['label'])}</td>"
            f"<td>{r['gain']:.4g}</td><td>{r['discount']:.4f}</td><td>{r['idcg']:.4f}</td></tr>"
            for r in self.ideal
        )
        formulas = "".join(f"<li><code>{esc(t)}</code></li>" for t in self.formulas.values())
        return (
            f"<div><b>query {esc(self.query_id)}</b>: top {len(self.ranked)} of "
            f"{self.num_ret} retrieved"
            "<table><tr><th>rank</th><th>doc</th><th>score</th><th>label</th><th>gain</th>"
            f"<th>discount</th><th>DCG</th></tr>{rows}</table>"
            "<b>ideal ranking</b><table><tr><th>rank</th><th>doc</th><th>label</th>"
            f"<th>gain</th><th>discount</th><th>IDCG</th></tr>{ideal}</table>"
            f"<ul>{formulas}</ul></div>"
        )


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e15 else f"{x:.4g}"


def _cut(s: str, n: int) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


def _rel(label: float | None, level: float) -> bool:
    return label is not None and label >= 0 and label >= level


def _dcg(labels: Iterable[float | None]) -> float:
    total = 0.0
    for i, label in enumerate(labels):
        if label is not None and label > 0:
            total += label / math.log2(i + 2)
    return total


def _subset(qrels: Qrels, run: Run, qid: str) -> tuple[Qrels, Run, list[tuple[float, list[str]]]]:
    if qrels.grouped:
        groups = qrels.groups()[qid]
        sub_q = Qrels.from_groups(
            {qid: [members for _, members in groups]},
            labels={qid: [label for label, _ in groups]},
        )
    else:
        if qrels.has_subtopics:  # kept for the diversity metrics
            i = qrels._index(qid)
            judged = qrels._query_subtopics(i) if i is not None else {}
            sub_q = Qrels.from_subtopics(
                (qid, s, d, label) for d, subs in judged.items() for s, label in subs.items()
            )
        else:
            sub_q = Qrels({qid: qrels[qid]})
        groups = [(label, [doc]) for doc, label in qrels[qid].items()]
    sub_r = Run({qid: run[qid]} if qid in run else {})
    return sub_q, sub_r, groups


def _formula(
    m: Metric, value: float, labels: list[float | None], R: int, ideal: list[float], level: float
) -> str:
    name = m.name
    k = m.k
    top = labels if k is None else labels[:k]
    rel = [i for i, label in enumerate(top) if _rel(label, level)]
    fam = m.family
    if fam == "ndcg":
        ideal_k = ideal if k is None else ideal[:k]
        return f"{name} = {_dcg(top):.4f} / {_dcg(ideal_k):.4f} = {value:.4f}"
    if fam == "dcg":
        terms = " + ".join(
            f"{label:g}/log2({i + 2})" for i, label in enumerate(top) if label and label > 0
        )
        return f"{name} = {terms or '0'} = {value:.4f}"
    if fam == "idcg":
        return f"{name} = DCG of the ideal ranking = {value:.4f}"
    if fam == "precision":
        denom = k if k is not None else len(labels)
        return f"{name} = {len(rel)} / {denom} = {value:.4f}"
    if fam == "recall":
        return f"{name} = {len(rel)} / {R} (relevant) = {value:.4f}"
    if fam == "mrr":
        if not rel:
            return f"{name} = 0 (no relevant document{' in the top ' + str(k) if k else ''})"
        return f"{name} = 1 / {rel[0] + 1} = {value:.4f}"
    if fam == "map":
        terms = " + ".join(f"{j + 1}/{i + 1}" for j, i in enumerate(rel))
        return f"{name} = ({terms or '0'}) / {R} (relevant) = {value:.4f}"
    if fam == "hit_rate":
        return (
            f"{name} = {'1 (a relevant document at rank ' + str(rel[0] + 1) + ')' if rel else '0'}"
        )
    if fam == "hits":
        return f"{name} = {len(rel)} relevant in the top {k if k else len(labels)}"
    if fam == "first_rel_rank":
        return f"{name} = {value:g}"
    if fam == "r_precision":
        return f"{name} = relevant in the top {R} / {R} = {value:.4f}"
    return f"{name} = {value:.4f}"


def explain(
    qrels: Qrels | Mapping[str, Mapping[str, float]],
    run: Run | Mapping[str, Any],
    query_id: str,
    k: int = 10,
    metrics: Iterable[str | Metric] | None = None,
    *,
    relevance_level: float | str = 1,
) -> Explanation:
    """Explain one query's scores: its top ``k`` with labels, gains, discounts and
    running DCG; the ideal ranking with its running IDCG; and each metric's value
    with its formula filled in (``ndcg@10 = 2.6309 / 3.2619 = 0.8066``).

    ``metrics`` (default ndcg, P, recall, map and mrr at ``k``): any names
    :func:`ranklens.evaluate` accepts; the values are ``evaluate``'s.
    """
    positive_int(k, "k")
    q, r = as_qrels(qrels), as_run(run)
    qid = str(query_id)
    if qid not in q:
        raise RanklensInputError(f"query {qid!r} is not in the qrels")
    names = [x.format(k=k) for x in _DEFAULT] if metrics is None else list(metrics)
    ms = parse_metrics(names)
    sub_q, sub_r, groups = _subset(q, r, qid)
    res = evaluate(sub_q, sub_r, ms, relevance_level=relevance_level)
    values = {m.name: float(res.values[0, j]) for j, m in enumerate(ms)}

    docs = sub_r.ranking(qid) if qid in sub_r else []
    scores = sub_r[qid] if qid in sub_r else {}
    from ranklens.metrics._groups import relabel

    labels = list(relabel(docs, groups).labels)
    ideal_pairs = sorted(
        ((label, members[0]) for label, members in groups if label > 0),
        key=lambda p: -p[0],
    )
    ideal = [label for label, _ in ideal_pairs]
    level = check_level(relevance_level)
    level_of = {m.name: m.rel if m.rel is not None else level for m in ms}
    rows, dcg = [], 0.0
    for i, (doc, label) in enumerate(zip(docs[:k], labels[:k])):
        gain = label if label is not None and label > 0 else 0.0
        disc = math.log2(i + 2)
        dcg += gain / disc if gain else 0.0
        rows.append(
            {
                "rank": i + 1,
                "doc": doc,
                "score": scores[doc],
                "label": label,
                "gain": gain,
                "discount": disc,
                "dcg": dcg,
            }
        )
    ideal_rows, idcg = [], 0.0
    for i, (label, doc) in enumerate(ideal_pairs[:k]):
        disc = math.log2(i + 2)
        idcg += label / disc
        shown = doc if len(groups) == 0 or not q.grouped else f"{doc} (group)"
        ideal_rows.append(
            {
                "rank": i + 1,
                "doc": shown,
                "label": label,
                "gain": label,
                "discount": disc,
                "idcg": idcg,
            }
        )
    formulas = {}
    for m in ms:
        level = level_of[m.name]
        R = sum(1 for label, _ in groups if _rel(label, level))
        formulas[m.name] = _formula(m, values[m.name], labels, R, ideal, level)
    return Explanation(qid, k, len(docs), rows, ideal_rows, values, formulas)
