"""Preference measures and judgment groups (trec_eval -R prefs / qrels_prefs / qrels_jg).

Expected values come from trec_eval itself: its own documented examples
(get_prefs.c's header comment counts the preferences of each example) and the
outputs of its test suite in tests/data (out.test.prefs, out.test.qrels_prefs,
out.test.qrels_jg, printed to 4 decimals).  The Rust kernel and the Python
reference are compared with each other on generated cases.
"""

from __future__ import annotations

import random
import shlex
from pathlib import Path

import numpy as np
import pytest

import ranklens
from ranklens import Prefs, Run, evaluate_jg, evaluate_prefs, read_qrels_jg
from ranklens._prefs import PREFS_MEASURES
from ranklens.cli._trec_eval import main
from ranklens.errors import RanklensInputError

DATA = Path(__file__).parent / "data"


def _expected(path: Path) -> dict[tuple[str, str], str]:
    out = {}
    for line in path.read_text().splitlines():
        name, qid, value = line.split("\t")
        out[(name.strip(), qid)] = value
    return out


def _close(value: float, printed: str) -> bool:
    return abs(value - float(printed)) <= 0.5e-4 + 1e-12


# --- trec_eval's documented examples (get_prefs.c) ---------------------------

_EXAMPLES = [
    # one user ranks 6 docs: "establishes a total of 13 preferences"
    ("u1 s1 d1 3, u1 s1 d2 2, u1 s1 d3 0, u1 s1 d4 6, u1 s1 d5 0, u1 s1 d6 2", 13),
    # two sub-groups: the comment lists 5 preferences (1>2, 1>3, 2 > 3, 4>1, 4>2);
    # the JG's transitivity (stated in the same comment, applied by
    # form_prefs_counts.c) adds 4>3 (4>1>3): 6
    ("u1 s1 d1 3, u1 s1 d2 2, u1 s1 d3 1, u1 s2 d1 2, u1 s2 d2 1, u1 s2 d4 3", 6),
    # "expressses 5 preferences (1>2, 3>1, 4>1, 3>4, 2>1)": two groups that
    # disagree on 1 and 2 each count theirs
    ("u1 s1 d1 3, u1 s1 d2 2, u2 s1 d1 0, u2 s1 d3 6, u2 s1 d4 2, u2 s2 d1 0, u2 s2 d2 8", 5),
    # transitive: "expresses 5 preferences (1>2, 1>3, 2>3, 2>4, 1>4)"
    ("u1 s1 d1 3, u1 s1 d2 2, u1 s1 d3 1, u1 s2 d2 5, u1 s2 d4 4", 5),
]


@pytest.mark.parametrize("backend", ["rust", "python"])
@pytest.mark.parametrize(("lines", "count"), _EXAMPLES)
def test_get_prefs_examples_count_their_preferences(lines, count, backend):
    prefs = Prefs([("q", *line.split()) for line in lines.split(", ")])
    res = evaluate_prefs(prefs, {}, backend=backend)
    assert res["prefs_num_prefs_poss"] == count
    assert res["prefs_num_prefs_ful"] == 0  # nothing retrieved: nothing fulfilled


# --- trec_eval's test outputs, through the Python API ------------------------


@pytest.mark.parametrize("backend", ["rust", "python"])
@pytest.mark.parametrize(
    ("rel", "fmt", "run", "expected"),
    [
        ("prefs.test", "prefs", "prefs.results.test", "out.test.prefs"),
        ("prefs.comment.test", "prefs", "prefs.results.test", "out.test.prefs"),
        ("qrels.test", "qrels_prefs", "results.test", "out.test.qrels_prefs"),
    ],
)
def test_evaluate_prefs_equals_trec_eval(rel, fmt, run, expected, backend):
    prefs = Prefs.from_trec(DATA / rel, format=fmt)
    res = evaluate_prefs(prefs, Run.from_trec(DATA / run), backend=backend)
    want = _expected(DATA / expected)
    assert res.names == list(PREFS_MEASURES)
    checked = 0
    for name in PREFS_MEASURES:
        for q, v in res.per_query(name).items():
            assert _close(v, want[(name, q)]), (name, q, v, want[(name, q)])
            checked += 1
        assert _close(res[name], want[(name, "all")]), name
    assert checked == len(PREFS_MEASURES) * len(prefs)


@pytest.mark.parametrize("rel", ["qrels.123", "qrels.comments.123"])
def test_evaluate_jg_equals_trec_eval(rel):
    groups = read_qrels_jg(DATA / rel)
    assert list(groups) == ["0", "1", "2"]
    cuts = [5, 10, 15, 20, 30, 100, 200, 500, 1000]
    mults = [0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0]
    metrics = ["map", *(f"P@{k}" for k in cuts), *(f"rprec_mult(mult={m})" for m in mults)]
    names = ["map_avgjg", *(f"P_avgjg_{k}" for k in cuts)]
    names += [f"Rprec_mult_avgjg_{m:3.2f}" for m in mults]
    res = evaluate_jg(groups, Run.from_trec(DATA / "results.test"), metrics)
    want = _expected(DATA / "out.test.qrels_jg")
    assert res.query_ids == ["301", "302", "303"]
    for metric, name in zip(metrics, names):
        for q, v in res.per_query(metric).items():
            assert _close(v, want[(name, q)]), (name, q)
        assert _close(res[metric], want[(name, "all")]), name


def test_prefs_files_with_comments_give_the_same_lines():
    a = Prefs.from_trec(DATA / "prefs.test")
    b = Prefs.from_trec(DATA / "prefs.comment.test")
    assert a.query_ids == b.query_ids
    # comment lines skipped; a '#' inside a line is part of its field
    assert [len(a[q]) for q in a] == [len(b[q]) for q in b]
    assert ("0", "0", "CR93E-10505#37", 0.0) in b["2.EC.A"]


# --- both backends on generated cases ----------------------------------------


def _case(rng: random.Random) -> tuple[list, dict]:
    """Random judgment groups, consistent within each group: a hidden grade per
    document per group, each sub-group a random subset judged by that grade
    (levels 0 and negative ones too), a document sometimes listed twice; a run
    with tied scores, unjudged documents and judged ones left out."""
    rows = []
    docs = [f"d{k}" for k in range(rng.randint(1, 12))]
    for q in ("q1", "q2", "q10"):
        for g in range(rng.randint(1, 3)):
            grade = {d: rng.choice([-1, 0, 0, 1, 2, 3]) for d in docs}
            for s in range(rng.choice([1, 1, 2, 3])):
                for d in rng.sample(docs, rng.randint(1, len(docs))):
                    rows.append((q, f"u{g}", f"s{s}", d, grade[d]))
                    if rng.random() < 0.1:
                        rows.append((q, f"u{g}", f"s{s}", d, grade[d]))
    run = {}
    for q in ("q1", "q2", "q10"):
        if rng.random() < 0.15:
            continue  # a query with no ranking
        pool = docs + [f"x{k}" for k in range(3)]
        ranked = rng.sample(pool, rng.randint(0, len(pool)))
        run[q] = {d: float(rng.randint(0, 4)) for d in ranked}
    return rows, run


@pytest.mark.parametrize("seed", range(300))
def test_rust_kernel_equals_reference(seed):
    rng = random.Random(seed)
    rows, run = _case(rng)
    prefs = Prefs(rows)
    max_docs = rng.choice([None, None, 0, 1, 3])
    got = evaluate_prefs(prefs, run, max_docs=max_docs)
    ref = evaluate_prefs(prefs, run, max_docs=max_docs, backend="python")
    assert got.query_ids == ref.query_ids
    np.testing.assert_array_equal(got.values, ref.values)


# --- errors and the command line ----------------------------------------------


@pytest.mark.parametrize("backend", ["rust", "python"])
def test_inconsistent_group_is_an_input_error(backend):
    cycle = [("q", "u", "s1", "a", 2), ("q", "u", "s1", "b", 1)]
    cycle += [("q", "u", "s2", "b", 2), ("q", "u", "s2", "a", 1)]
    with pytest.raises(RanklensInputError, match="inconsistent"):
        evaluate_prefs(Prefs(cycle), {"q": {"a": 1.0}}, backend=backend)
    two_levels = [("q", "u", "s1", "a", 2), ("q", "u", "s1", "a", 1)]
    with pytest.raises(RanklensInputError, match="two levels"):
        evaluate_prefs(Prefs(two_levels), {}, backend=backend)
    zero_and_positive = [("q", "u", "s1", "a", 1), ("q", "u", "s1", "b", 0)]
    zero_and_positive += [("q", "u", "s2", "a", 0), ("q", "u", "s2", "c", 1)]
    with pytest.raises(RanklensInputError, match="level 0 and a positive"):
        evaluate_prefs(Prefs(zero_and_positive), {}, backend=backend)


def test_bad_rows_and_names():
    with pytest.raises(RanklensInputError, match="expected"):
        Prefs([("q", "u", "d", 1)])
    with pytest.raises(RanklensInputError, match="not a number"):
        Prefs([("q", "u", "s", "d", "high")])
    with pytest.raises(RanklensInputError, match="unknown preference measure"):
        evaluate_prefs(Prefs([("q", "u", "s", "d", 1)]), {}, ["map"])
    with pytest.raises(RanklensInputError, match="format"):
        Prefs.from_trec(DATA / "prefs.test", format="qrels")


def test_malformed_prefs_line_names_file_and_line(tmp_path):
    bad = tmp_path / "p"
    bad.write_text("q u s d 1\nq u s d\n")
    with pytest.raises(RanklensInputError, match=r"p:2: expected 5 fields"):
        Prefs.from_trec(bad)


@pytest.mark.parametrize(
    ("expected", "args"),
    [
        ("out.test.prefs", "-m all_prefs -q -R prefs prefs.comment.test prefs.results.test"),
        ("out.test.qrels_jg", "-m qrels_jg -q -R qrels_jg qrels.comments.123 results.test"),
    ],
)
def test_cli_comment_variants_are_byte_identical(monkeypatch, capsys, expected, args):
    monkeypatch.chdir(DATA)
    rc = main(shlex.split(args))
    cap = capsys.readouterr()
    assert (rc, cap.err) == (0, "")
    assert cap.out == (DATA / expected).read_text()


@pytest.mark.parametrize(
    "args",
    [
        "-R prefs prefs.test prefs.results.test",  # official measures need qrels
        "-m map -R qrels_jg qrels.123 results.test",
        "-m prefs_simp qrels.test results.test",
        "-m map_avgjg -R qrels_prefs qrels.test results.test",
    ],
)
def test_cli_measures_of_another_format_are_refused(monkeypatch, capsys, args):
    monkeypatch.chdir(DATA)
    rc = main(shlex.split(args))
    cap = capsys.readouterr()
    assert rc == 2
    assert cap.out == ""
    assert "needs -R" in cap.err


def test_cli_prefs_nickname_and_max_docs(monkeypatch, capsys):
    """-m prefs is trec_eval's short list; -M cuts the ranking before the judged
    documents are placed (prefs_num_prefs_ful_ret can only drop)."""
    monkeypatch.chdir(DATA)
    assert main(shlex.split("-m prefs -R qrels_prefs qrels.test results.test")) == 0
    out = capsys.readouterr().out
    names = [line.split("\t")[0].strip() for line in out.splitlines()]
    assert names == [
        "runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful",
        "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair", "prefs_avgjg",
    ]  # fmt: skip
    full = {line.split("\t")[0].strip(): line.split("\t")[2] for line in out.splitlines()}
    assert main(shlex.split("-M 10 -m prefs -R qrels_prefs qrels.test results.test")) == 0
    out10 = capsys.readouterr().out
    cut = {line.split("\t")[0].strip(): line.split("\t")[2] for line in out10.splitlines()}
    assert cut["prefs_num_prefs_poss"] == full["prefs_num_prefs_poss"]
    assert int(cut["prefs_num_prefs_ful_ret"]) < int(full["prefs_num_prefs_ful_ret"])


def test_public_names():
    assert ranklens.evaluate_prefs is evaluate_prefs
    assert ranklens.Prefs is Prefs


def test_too_many_judged_documents_in_one_query_is_an_input_error():
    rows = [("q", "u", "s", f"d{i}", i % 3) for i in range(16385)]
    with pytest.raises(RanklensInputError, match="at most 16384"):
        evaluate_prefs(Prefs(rows), {}, ["prefs_simp"])
