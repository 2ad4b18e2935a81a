"""``evaluate_files``: a run file scored chunk by chunk gives ``evaluate``'s numbers, bit for bit.

The chunked reader and the chunk loop are in Rust (``src/core/trec/``,
``src/core/stream.rs``, unit-tested there); these tests compare the Python
surface with ``evaluate(Qrels.from_trec(...), Run.from_trec(...))`` on trec_eval's
test files and on generated files with chunks small enough to split everywhere.
"""

from __future__ import annotations

import gzip
import math
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ranklens
from ranklens import Qrels, Run, evaluate, evaluate_files
from ranklens import _ranklens as native
from ranklens.cli import main
from ranklens.errors import ParseError, RanklensInputError

DATA = Path(__file__).parent / "data"

METRICS = [
    "map",
    "ndcg",
    "ndcg@10",
    "P@5",
    "P",
    "recall@100",
    "mrr",
    "bpref",
    "r_precision",
    "num_ret",
    "num_rel_ret",
    "success@1",
    "gm_map",
]
# Families with a closed form under ties="expected".
EXPECTED_METRICS = ["map", "ndcg@10", "P@5", "recall@10", "mrr", "bpref", "num_rel_ret"]


def assert_same(a: ranklens.Results, b: ranklens.Results) -> None:
    assert a.query_ids == b.query_ids
    assert a.names == b.names
    assert a.values.shape == b.values.shape
    assert np.array_equal(a.values, b.values)
    assert a.missing_queries == b.missing_queries
    assert a.ignored_queries == b.ignored_queries
    assert a.relevance_level == b.relevance_level
    for m in a.names:
        assert a[m] == b[m], m


def whole(qrels: str, run: str, metrics=METRICS, **kw) -> ranklens.Results:
    return evaluate(Qrels.from_trec(qrels), Run.from_trec(run), metrics, **kw)


def write_files(tmp_path: Path, seed: int = 0, nq: int = 40) -> tuple[str, str]:
    """Qrels and a run grouped by query, with ties, unjudged and negative labels,
    qrels queries missing from the run and run-only queries."""
    rng = random.Random(seed)
    qrels, run = [], []
    for q in range(nq):
        qid = f"q{q:03d}"
        docs = [f"d{rng.randrange(60)}" for _ in range(rng.randrange(0, 30))]
        docs = list(dict.fromkeys(docs))
        if q % 9 != 8:  # q % 9 == 8: run-only query
            for d in docs[: rng.randrange(1, len(docs) + 2)] or ["d0"]:
                qrels.append(f"{qid} 0 {d} {rng.choice([-1, 0, 0, 1, 1, 2, 3])}")
        if q % 7 == 3:  # missing from the run
            continue
        for rank, d in enumerate(docs):
            score = rng.choice([0.5, 1.0, 1.25, 2.0, rng.random()])
            run.append(f"{qid} Q0 {d} {rank + 1} {score!r} tag{seed}")
    rng.shuffle(qrels)  # qrels need not be grouped
    qp, rp = tmp_path / f"qrels{seed}.txt", tmp_path / f"run{seed}.txt"
    qp.write_text("\n".join(qrels) + "\n")
    rp.write_text("\n".join(run) + "\n")
    return str(qp), str(rp)


# ---------------------------------------------------------------------------
# trec_eval's test files


@pytest.mark.parametrize("chunk_rows", [1, 7, 100, 1_000_000])
def test_conformance_files(chunk_rows):
    qrels, run = str(DATA / "qrels.test"), str(DATA / "results.test")
    res = evaluate_files(qrels, run, METRICS, chunk_rows=chunk_rows)
    assert_same(res, whole(qrels, run))
    assert round(res["map"], 4) == 0.1785 and round(res["P_5"], 4) == 0.2667


def test_conformance_relevance_level_2():
    qrels, run = str(DATA / "qrels.rel_level"), str(DATA / "results.test")
    for chunk_rows in (1, 100):
        res = evaluate_files(qrels, run, METRICS, relevance_level=2, chunk_rows=chunk_rows)
        assert_same(res, whole(qrels, run, relevance_level=2))


def test_interleaved_query_blocks_raise():
    # results.trunc: the blocks of queries 301 and 303 alternate.
    run = str(DATA / "results.trunc")
    for chunk_rows in (1, 1_000_000):
        with pytest.raises(ParseError) as e:
            evaluate_files(str(DATA / "qrels.test"), run, ["map"], chunk_rows=chunk_rows)
        msg = str(e.value)
        assert isinstance(e.value, RanklensInputError)
        assert "results.trunc:" in msg and "not grouped by query" in msg
        assert "Run.from_trec" in msg
    # Reading it whole still works.
    assert round(whole(str(DATA / "qrels.test"), run, ["map"])["map"], 4) == 0.1016


def test_non_grouped_error_names_query_and_line(tmp_path):
    qp = tmp_path / "q.txt"
    qp.write_text("a 0 x 1\nb 0 y 1\n")
    rp = tmp_path / "r.txt"
    rp.write_text("a Q0 x 1 2 t\na Q0 z 2 1 t\nb Q0 y 1 1 t\n\na Q0 w 3 0.5 t\n")
    with pytest.raises(ParseError, match=r'r\.txt:5: query "a" appears again .*line 1'):
        evaluate_files(str(qp), str(rp), ["map"])


# ---------------------------------------------------------------------------
# Generated files, chunks split everywhere


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("chunk_rows", [1, 7, 100])
def test_generated_files_any_chunk_size(tmp_path, seed, chunk_rows):
    qrels, run = write_files(tmp_path, seed)
    res = evaluate_files(qrels, run, METRICS, chunk_rows=chunk_rows)
    ref = whole(qrels, run)
    assert ref.missing_queries and ref.ignored_queries  # both cases exercised
    assert_same(res, ref)


def test_chunks_really_split(tmp_path):
    qrels, run = write_files(tmp_path)
    q = Qrels.from_trec(qrels)
    nq = len(Run.from_trec(run))
    specs = [("map", None, None, [])]
    for chunk_rows, expect in [(1, nq), (1_000_000, 1)]:
        *_, chunks = native.evaluate_trec_stream(q.arrays, run, specs, 1.0, chunk_rows=chunk_rows)
        assert chunks == expect


@pytest.mark.parametrize(
    "options",
    [
        {"ties": "input"},
        {"judged_only": True},
        {"max_docs": 3},
        {"judged_only": True, "max_docs": 5, "relevance_level": 2},
        {"threads": 1},
    ],
)
def test_options(tmp_path, options):
    qrels, run = write_files(tmp_path, 3)
    for chunk_rows in (1, 7, 100):
        res = evaluate_files(qrels, run, METRICS, chunk_rows=chunk_rows, **options)
        assert_same(res, whole(qrels, run, **options))


@pytest.mark.parametrize("options", [{}, {"judged_only": True, "max_docs": 4}])
def test_ties_expected(tmp_path, options):
    qrels, run = write_files(tmp_path, 4)
    for chunk_rows in (1, 7, 100):
        res = evaluate_files(
            qrels, run, EXPECTED_METRICS, ties="expected", chunk_rows=chunk_rows, **options
        )
        ref = whole(qrels, run, EXPECTED_METRICS, ties="expected", **options)
        assert_same(res, ref)


def test_score_precision_f32(tmp_path):
    qp = tmp_path / "q.txt"
    qp.write_text("q 0 a 1\nq 0 b 0\n")
    rp = tmp_path / "r.txt"
    rp.write_text("q Q0 a 1 1.0000000001 t\nq Q0 b 2 1 t\n")
    for precision in ("f64", "f32"):
        res = evaluate_files(str(qp), str(rp), ["mrr"], score_precision=precision)
        ref = evaluate(Qrels.from_trec(qp), Run.from_trec(rp, score_precision=precision), ["mrr"])
        assert_same(res, ref)
    assert evaluate_files(str(qp), str(rp), ["mrr"], score_precision="f32")["mrr"] == 0.5


def test_gzip_run_and_qrels_object(tmp_path):
    qrels, run = write_files(tmp_path, 5)
    gz = tmp_path / "run.txt.gz"
    gz.write_bytes(gzip.compress(Path(run).read_bytes()))
    ref = whole(qrels, run)
    assert_same(evaluate_files(qrels, gz, METRICS, chunk_rows=7), ref)
    assert_same(evaluate_files(Qrels.from_trec(qrels), str(gz), METRICS), ref)


def test_empty_run_scores_every_query_on_an_empty_ranking(tmp_path):
    qrels, _ = write_files(tmp_path)
    rp = tmp_path / "empty.txt"
    rp.write_text("# nothing\n")
    res = evaluate_files(qrels, str(rp), METRICS)
    assert_same(res, whole(qrels, str(rp)))
    assert res.missing_queries == res.query_ids


def test_bad_arguments(tmp_path):
    qrels, run = write_files(tmp_path)
    for bad in (0, -1, 1.5, True):
        with pytest.raises(RanklensInputError, match="chunk_rows"):
            evaluate_files(qrels, run, ["map"], chunk_rows=bad)
    with pytest.raises(RanklensInputError, match="max_docs"):
        evaluate_files(qrels, run, ["map"], max_docs=0)
    with pytest.raises(RanklensInputError, match="ties"):
        evaluate_files(qrels, run, ["map"], ties="random")
    with pytest.raises(ranklens.UnknownMetricError):
        evaluate_files(qrels, run, ["no_such_metric"])
    with pytest.raises(OSError):
        evaluate_files(qrels, str(tmp_path / "missing.txt"), ["map"])
    empty = tmp_path / "empty_qrels.txt"
    empty.write_text("")
    with pytest.raises(RanklensInputError, match="no query"):
        evaluate_files(str(empty), run, ["map"])


def test_parse_errors_and_duplicates_name_the_line(tmp_path):
    qrels, _ = write_files(tmp_path)
    rp = tmp_path / "r.txt"
    rp.write_text("a Q0 x 1 2 t\nb Q0 y 1 1 t\nb Q0 z 2 nan t\n")
    with pytest.raises(ParseError, match=r"r\.txt:3: "):
        evaluate_files(qrels, str(rp), ["map"], chunk_rows=1)
    rp.write_text("a Q0 x 1 2 t\nb Q0 y 1 1 t\nb Q0 y 2 0.5 t\n")
    with pytest.raises(ParseError, match=r"r\.txt:3: .*first on line 2"):
        evaluate_files(qrels, str(rp), ["map"], chunk_rows=1)


# ---------------------------------------------------------------------------
# Command line


def test_cli_stream_matches(tmp_path, capsys):
    qrels, run = write_files(tmp_path, 6)
    args = [qrels, run, "-m", "map", "-m", "ndcg@10", "-m", "num_ret", "-q", "--format", "json"]
    assert main(args) == 0
    plain = capsys.readouterr().out
    assert main([*args, "--stream", "--chunk-rows", "3"]) == 0
    assert capsys.readouterr().out == plain
    assert '"run": "tag6"' in plain


def test_cli_stream_error_and_stdin(tmp_path, capsys):
    assert main([str(DATA / "qrels.test"), str(DATA / "results.trunc"), "--stream"]) == 1
    err = capsys.readouterr().err
    assert "results.trunc:" in err and "not grouped by query" in err
    qrels, run = write_files(tmp_path, 7)
    cmd = [sys.executable, "-m", "ranklens.cli", qrels, "-", "-m", "map", "--format", "tsv"]
    with open(run, "rb") as f:
        out = subprocess.run([*cmd, "--stream"], stdin=f, capture_output=True, check=True)
    assert out.stdout.decode().splitlines()[-1].split("\t")[-1] == (
        f"{whole(qrels, run, ['map'])['map']:.4f}"
    )


@pytest.mark.parametrize("chunk_rows", [1, 100_000])
def test_miss_none_as_evaluate(tmp_path, chunk_rows):
    # q1 finds its relevant document at rank 2, q2 never (a miss), q3 at rank 1;
    # q4 is in the qrels only (an empty ranking: a miss too)
    (tmp_path / "q.txt").write_text("q1 0 a 1\nq2 0 a 1\nq3 0 a 1\nq4 0 a 1\n")
    (tmp_path / "r.txt").write_text(
        "q1 Q0 x 1 3 t\nq1 Q0 a 2 2 t\nq2 Q0 x 1 3 t\nq2 Q0 y 2 2 t\nq2 Q0 z 3 1 t\nq3 Q0 a 1 3 t\n"
    )
    args = (tmp_path / "q.txt", tmp_path / "r.txt", ["mean_rank@3", "mrr"])
    kplus1 = evaluate_files(*args, chunk_rows=chunk_rows)
    assert list(kplus1.per_query("first_rel_rank@3").values()) == [2.0, 4.0, 1.0, 4.0]
    none = evaluate_files(*args, chunk_rows=chunk_rows, miss=None)
    per = none.per_query("first_rel_rank@3")
    assert per["q1"] == 2.0 and per["q3"] == 1.0
    assert math.isnan(per["q2"]) and math.isnan(per["q4"])
    # the mean over the queries with a hit, (2 + 1) / 2; mrr (1/2 + 1) / 4
    assert none["first_rel_rank@3"] == 1.5 and none["mrr"] == 0.375
    whole = evaluate(Qrels.from_trec(args[0]), Run.from_trec(args[1]), args[2], miss=None)
    assert whole.to_dict() == none.to_dict()
    with pytest.raises(RanklensInputError, match="miss must be"):
        evaluate_files(*args, miss="nan")


@pytest.mark.parametrize("chunk_rows", [1, 7, 100_000])
@pytest.mark.parametrize("empty", ["nan", "skip"])
def test_empty_as_evaluate(tmp_path, chunk_rows, empty):
    qrels, run = write_files(tmp_path, 5)
    res = evaluate_files(qrels, run, METRICS, chunk_rows=chunk_rows, empty=empty)
    ref = whole(qrels, run, empty=empty)
    assert ref.missing_queries  # queries missing from the run: empty rows
    assert np.array_equal(res.values, ref.values, equal_nan=True)
    assert res.skipped_queries == ref.skipped_queries
    assert (res.skipped_queries == ref.missing_queries) == (empty == "skip")
    assert res.missing_queries == ref.missing_queries
    for m in res.names:
        a, b = res[m], ref[m]
        assert a == b or (math.isnan(a) and math.isnan(b)), m
    # "skip": the aggregates are the means over the queries the run has.
    if empty == "skip":
        kept = [q for q in ref.query_ids if q not in ref.missing_queries]
        for m in ("map", "P@5"):
            per = res.per_query(m)
            assert res[m] == pytest.approx(sum(per[q] for q in kept) / len(kept), abs=1e-12)


def test_empty_with_grouped_qrels(tmp_path):
    # q2 has no group (nothing relevant), q3 is missing from the run.
    q = Qrels.from_groups({"q1": [["a", "b"]], "q2": [], "q3": [["c"]]})
    rp = tmp_path / "r.txt"
    rp.write_text("q1 Q0 b 1 2 t\nq1 Q0 x 2 1 t\nq2 Q0 a 1 1 t\n")
    for empty in ("zero", "nan", "skip"):
        got = evaluate_files(q, rp, ["recall@2", "mrr"], empty=empty)
        want = evaluate(q, Run.from_trec(rp), ["recall@2", "mrr"], empty=empty)
        assert np.array_equal(got.values, want.values, equal_nan=True)
        assert got.skipped_queries == want.skipped_queries
        for m in got.names:
            a, b = got[m], want[m]
            assert a == b or (math.isnan(a) and math.isnan(b)), (empty, m)
    assert evaluate_files(q, rp, ["mrr"], empty="skip").skipped_queries == ["q2", "q3"]
    assert evaluate_files(q, rp, ["mrr"], empty="skip")["mrr"] == 1.0
    with pytest.raises(RanklensInputError, match="empty must be"):
        evaluate_files(q, rp, ["mrr"], empty="drop")
