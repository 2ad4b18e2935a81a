"""Readers and writers: pandas, pyarrow, polars, Parquet, JSON, JSON Lines, records.

Every format must give the same encoded side as the dict path: same values, same
ranking order, same `evaluate` results.  Per-format tests are skipped when the
optional package is missing.
"""

from __future__ import annotations

import json
import math
from collections import namedtuple

import numpy as np
import pytest

import ranklens
from ranklens import Qrels, RanklensInputError, Run

QRELS = {
    "q1": {"d1": 2, "d2": 0, "d3": 1, "d4": -1},
    "q2": {"x": 1, "y": 3},
    "q10": {"d1": 1},
}
FLOAT_QRELS = {"q1": {"d1": 0.5, "d2": 1.25}, "q2": {"x": 2.0}}
# Ties (d1/d3 at 0.5) exercise trec_eval's doc id tie-break; rows not sorted.
RUN = {
    "q1": {"d1": 0.5, "d2": 0.9, "d3": 0.5, "zz": 0.1, "d4": -2.0},
    "q2": {"y": 1.0, "x": 2.5, "w": 2.5},
    "q9": {"a": 1.0},
}
METRICS = ["map", "ndcg@10", "P@2", "mrr", "recall@3", "bpref", "num_ret"]


def rows_of(mapping):
    return [(q, d, v) for q, docs in mapping.items() for d, v in docs.items()]


def assert_same_run(a: Run, b: Run) -> None:
    assert a.query_ids == b.query_ids
    for q in a.query_ids:
        assert a.ranking(q) == b.ranking(q)
        assert list(a[q].values()) == list(b[q].values())
    assert a.to_dict() == b.to_dict()
    ra = ranklens.evaluate(QRELS, a, METRICS)
    rb = ranklens.evaluate(QRELS, b, METRICS)
    assert np.array_equal(ra.values, rb.values)
    assert ra.query_ids == rb.query_ids


def assert_same_qrels(a: Qrels, b: Qrels) -> None:
    assert a.to_dict() == b.to_dict()
    ra = ranklens.evaluate(a, RUN, METRICS)
    rb = ranklens.evaluate(b, RUN, METRICS)
    assert np.array_equal(ra.values, rb.values)


REF_RUN = Run(RUN)
REF_QRELS = Qrels(QRELS)


# -- records (no optional dependency) ------------------------------------------------
ScoredDoc = namedtuple("ScoredDoc", ["query_id", "doc_id", "score"])
TrecQrel = namedtuple("TrecQrel", ["query_id", "doc_id", "relevance", "iteration"])


def test_records_ir_datasets_style():
    run = Run.from_records(ScoredDoc(*r) for r in rows_of(RUN))
    assert_same_run(run, REF_RUN)
    qrels = Qrels.from_records(TrecQrel(q, d, v, "0") for q, d, v in rows_of(QRELS))
    assert_same_qrels(qrels, REF_QRELS)


def test_records_plain_tuples_mappings_and_names():
    assert_same_run(Run.from_records(rows_of(RUN)), REF_RUN)
    dicts = [{"qid": q, "docno": d, "s": v} for q, d, v in rows_of(RUN)]
    assert_same_run(
        Run.from_records(dicts, query_col="qid", doc_col="docno", score_col="s"), REF_RUN
    )
    q = Qrels.from_records(rows_of(FLOAT_QRELS))
    assert q.to_dict() == FLOAT_QRELS


def test_records_errors():
    with pytest.raises(RanklensInputError, match=r"row 1.*null"):
        Run.from_records([("q", "a", 1.0), ("q", None, 2.0)])
    with pytest.raises(RanklensInputError, match="record 0"):
        Run.from_records([object()])
    with pytest.raises(RanklensInputError, match=r"row 1.*must be a number"):
        Qrels.from_records([("q", "a", 1), ("q", "b", "x")])
    with pytest.raises(RanklensInputError, match=r'query "q": document "a"'):
        Run.from_records([("q", "a", 1.0), ("q", "a", 2.0)])
    with pytest.raises(RanklensInputError, match=r"NaN.*row 1"):
        Run.from_records([("q", "a", 1.0), ("q", "b", math.nan)])
    assert len(Run.from_records([])) == 0


def test_records_integer_ids_are_decimal_strings():
    run = Run.from_records([(1, 10, 1.0), (1, 20, 2.0), (2, 10, 1.0)])
    assert run.to_dict() == {"1": {"20": 2.0, "10": 1.0}, "2": {"10": 1.0}}


# -- JSON / JSON Lines --------------------------------------------------------------
def test_json_round_trip(tmp_path):
    p = tmp_path / "run.json"
    REF_RUN.to_json(p)
    data = json.loads(p.read_text())
    assert list(data["q1"]) == REF_RUN.ranking("q1")  # ranking order kept
    assert_same_run(Run.from_json(p), REF_RUN)
    assert_same_run(Run.from_json(data), REF_RUN)
    qp = tmp_path / "qrels.json.gz"
    REF_QRELS.to_json(qp)
    back = Qrels.from_json(qp)
    assert_same_qrels(back, REF_QRELS)
    fp = tmp_path / "fq.json"
    Qrels(FLOAT_QRELS).to_json(fp)
    assert json.loads(fp.read_text()) == FLOAT_QRELS
    # integral labels are written as JSON integers (ranx's layout)
    REF_QRELS.to_json(tmp_path / "q.json")
    assert '"d1": 2' in (tmp_path / "q.json").read_text()


@pytest.mark.parametrize("gz", [False, True])
def test_jsonl_round_trip(tmp_path, gz):
    p = tmp_path / ("run.jsonl.gz" if gz else "run.jsonl")
    REF_RUN.to_jsonl(p)
    assert_same_run(Run.from_jsonl(p), REF_RUN)
    qp = tmp_path / ("q.jsonl.gz" if gz else "q.jsonl")
    Qrels(FLOAT_QRELS).to_jsonl(qp)
    assert Qrels.from_jsonl(qp).to_dict() == FLOAT_QRELS
    rp = tmp_path / "renamed.jsonl"
    REF_RUN.to_jsonl(rp, query_col="qid", doc_col="docno", value_col="sim")
    first = json.loads(rp.read_text().splitlines()[0])
    assert set(first) == {"qid", "docno", "sim"}
    assert_same_run(Run.from_jsonl(rp, query_col="qid", doc_col="docno", score_col="sim"), REF_RUN)


def test_jsonl_rows_and_errors(tmp_path):
    p = tmp_path / "r.jsonl"
    lines = [
        {"query_id": "q1", "doc_id": "a", "score": 1, "extra": [1, 2]},
        {"query_id": "q1", "doc_id": "b", "score": 2.5},
    ]
    p.write_text("\n".join(json.dumps(x) for x in lines) + "\n\n")
    assert Run.from_jsonl(p).to_dict() == {"q1": {"b": 2.5, "a": 1.0}}
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        '{"query_id": "q1", "doc_id": "a", "score": 1}\n{"query_id": "q1", "score": 2}\n'
    )
    with pytest.raises(RanklensInputError, match=r'bad.jsonl:2: no "doc_id"'):
        Run.from_jsonl(bad)
    bad.write_text('{"query_id": "q1", "doc_id": "a", "score": "high"}\n')
    with pytest.raises(RanklensInputError, match=r':1: "score" must be a number'):
        Run.from_jsonl(bad)
    row = '{"query_id": "q1", "doc_id": "a", "score": 1}\n'
    bad.write_text(row + row)
    with pytest.raises(RanklensInputError, match=r'query "q1": document "a"'):
        Run.from_jsonl(bad)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert len(Run.from_jsonl(empty)) == 0


# -- pandas --------------------------------------------------------------------------
def run_frame(pd, mapping=RUN, names=("query_id", "doc_id", "score")):
    rows = rows_of(mapping)
    return pd.DataFrame(
        {
            names[0]: [r[0] for r in rows],
            names[1]: [r[1] for r in rows],
            names[2]: [r[2] for r in rows],
        }
    )


def test_pandas_round_trip():
    pd = pytest.importorskip("pandas")
    df = run_frame(pd)
    run = Run.from_pandas(df, name="bm25")
    assert run.name == "bm25"
    assert_same_run(run, REF_RUN)
    out = run.to_pandas()
    assert list(out.columns) == ["query_id", "doc_id", "score"]
    # rows in ranking order, queries grouped
    assert out[out.query_id == "q1"].doc_id.tolist() == REF_RUN.ranking("q1")
    assert_same_run(Run.from_pandas(out), REF_RUN)

    qdf = run_frame(pd, QRELS, ("query_id", "doc_id", "relevance"))
    qrels = Qrels.from_pandas(qdf)
    assert_same_qrels(qrels, REF_QRELS)
    qout = qrels.to_pandas()
    assert list(qout.columns) == ["query_id", "doc_id", "relevance"]
    assert qout.relevance.dtype == np.int64
    assert_same_qrels(Qrels.from_pandas(qout), REF_QRELS)


def test_pandas_float_labels_and_column_names():
    pd = pytest.importorskip("pandas")
    df = run_frame(pd, FLOAT_QRELS, ("q", "d", "rel"))
    qrels = Qrels.from_pandas(df, query_col="q", doc_col="d", label_col="rel")
    assert qrels.to_dict() == FLOAT_QRELS
    out = qrels.to_pandas(query_col="q", doc_col="d", value_col="rel")
    assert list(out.columns) == ["q", "d", "rel"]
    assert out.rel.dtype == np.float64
    with pytest.raises(RanklensInputError, match='no column "query_id"'):
        Qrels.from_pandas(df)


def test_pandas_id_dtypes():
    pd = pytest.importorskip("pandas")
    df = run_frame(pd)
    cat = df.assign(query_id=df.query_id.astype("category"), doc_id=df.doc_id.astype("category"))
    assert_same_run(Run.from_pandas(cat), REF_RUN)
    obj = df.astype({"query_id": object, "doc_id": object})
    assert_same_run(Run.from_pandas(obj), REF_RUN)
    ints = pd.DataFrame(
        {"query_id": [3, 3, 12], "doc_id": np.array([7, 8, 7], np.uint64), "score": [1, 2, 3]}
    )
    assert Run.from_pandas(ints).to_dict() == {"12": {"7": 3.0}, "3": {"8": 2.0, "7": 1.0}}
    mixed = pd.DataFrame({"query_id": ["a", 5], "doc_id": ["x", "y"], "score": [1.0, 2.0]})
    assert Run.from_pandas(mixed).to_dict() == {"5": {"y": 2.0}, "a": {"x": 1.0}}
    floats = pd.DataFrame({"query_id": [1.5], "doc_id": ["x"], "score": [1.0]})
    with pytest.raises(RanklensInputError, match=r'"query_id".*strings or integers'):
        Run.from_pandas(floats)


def test_pandas_errors_name_row():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame(
        {"query_id": ["q", "q", None], "doc_id": ["a", "b", "c"], "score": [1.0, 2, 3]}
    )
    with pytest.raises(RanklensInputError, match=r'column "query_id", row 2.*null'):
        Run.from_pandas(df)
    df = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [1.0, np.nan]})
    with pytest.raises(RanklensInputError, match=r'query "q", document "b".*NaN.*row 1'):
        Run.from_pandas(df)
    df = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "a"], "score": [1.0, 2.0]})
    with pytest.raises(RanklensInputError, match=r'query "q": document "a" is listed more'):
        Run.from_pandas(df)
    df = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "relevance": [1, "x"]})
    with pytest.raises(RanklensInputError, match=r"row 1.*must be a number"):
        Qrels.from_pandas(df)
    df = pd.DataFrame(
        {
            "query_id": ["q", "q"],
            "doc_id": ["a", "b"],
            "relevance": pd.array([1, None], dtype="Int64"),
        }
    )
    with pytest.raises(RanklensInputError, match=r'"relevance", row 1: null'):
        Qrels.from_pandas(df)
    with pytest.raises(RanklensInputError, match="DataFrame"):
        Run.from_pandas({"query_id": []})


def test_pandas_empty_frame():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"query_id": [], "doc_id": [], "score": []})
    run = Run.from_pandas(df)
    assert len(run) == 0 and run.num_rows == 0
    assert len(run.to_pandas()) == 0
    assert len(Qrels.from_pandas(df.rename(columns={"score": "relevance"}))) == 0


def test_pandas_input_order_is_ties_input_order():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"query_id": ["q"] * 3, "doc_id": ["a", "c", "b"], "score": [1.0, 1.0, 1.0]})
    run = Run.from_pandas(df)
    assert run.ranking("q") == ["c", "b", "a"]  # trec_eval: doc id descending
    ref = Run({"q": {"a": 1.0, "c": 1.0, "b": 1.0}})
    assert np.array_equal(run.arrays[7], ref.arrays[7])  # input positions
    qrels = {"q": {"a": 1}}
    r1 = ranklens.evaluate(qrels, run, ["mrr"], ties="input")
    r2 = ranklens.evaluate(qrels, ref, ["mrr"], ties="input")
    assert r1["mrr"] == r2["mrr"] == 1.0


def test_score_precision_f32():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [1.0000000001, 1.0]})
    assert Run.from_pandas(df).ranking("q") == ["a", "b"]
    assert Run.from_pandas(df, score_precision="f32").ranking("q") == ["b", "a"]


def test_grouped_qrels_are_not_flattened():
    pd = pytest.importorskip("pandas")
    q = Qrels.from_groups({"q": [["a", "b"]]})
    with pytest.raises(RanklensInputError, match="grouped"):
        q.to_pandas()
    del pd


# -- pyarrow -------------------------------------------------------------------------
def arrow_table(pa, mapping=RUN, names=("query_id", "doc_id", "score")):
    rows = rows_of(mapping)
    return pa.table({n: [r[i] for r in rows] for i, n in enumerate(names)})


def test_arrow_round_trip_and_types():
    pa = pytest.importorskip("pyarrow")
    table = arrow_table(pa)
    assert_same_run(Run.from_arrow(table), REF_RUN)
    out = REF_RUN.to_arrow()
    assert out.column_names == ["query_id", "doc_id", "score"]
    assert out.column("doc_id").to_pylist()[:5] == REF_RUN.ranking("q1")
    assert_same_run(Run.from_arrow(out), REF_RUN)
    assert_same_run(Run.from_arrow(table.to_batches()[0]), REF_RUN)
    large = table.cast(
        pa.schema(
            [
                ("query_id", pa.large_string()),
                ("doc_id", pa.large_string()),
                ("score", pa.float32()),
            ]
        )
    )
    ref32 = Run({q: {d: float(np.float32(v)) for d, v in docs.items()} for q, docs in RUN.items()})
    assert_same_run(Run.from_arrow(large), ref32)
    dict_table = pa.table(
        {
            "query_id": pa.array([r[0] for r in rows_of(RUN)]).dictionary_encode(),
            "doc_id": pa.array([r[1] for r in rows_of(RUN)]).dictionary_encode(),
            "score": [r[2] for r in rows_of(RUN)],
        }
    )
    assert_same_run(Run.from_arrow(dict_table), REF_RUN)
    qt = arrow_table(pa, QRELS, ("query_id", "doc_id", "relevance"))
    assert_same_qrels(Qrels.from_arrow(qt), REF_QRELS)
    assert Qrels(QRELS).to_arrow().column("relevance").type == pa.int64()
    ft = arrow_table(pa, FLOAT_QRELS, ("qid", "docno", "rel"))
    fq = Qrels.from_arrow(ft, query_col="qid", doc_col="docno", label_col="rel")
    assert fq.to_dict() == FLOAT_QRELS
    assert fq.to_arrow(query_col="qid").column_names == ["qid", "doc_id", "relevance"]


def test_arrow_string_view_and_int_ids():
    pa = pytest.importorskip("pyarrow")
    if not hasattr(pa, "string_view"):
        pytest.skip("no string_view in this pyarrow")
    table = arrow_table(pa)
    sv = table.cast(
        pa.schema(
            [("query_id", pa.string_view()), ("doc_id", pa.string_view()), ("score", pa.float64())]
        )
    )
    assert_same_run(Run.from_arrow(sv), REF_RUN)
    ints = pa.table(
        {
            "query_id": pa.array([1, 1, 2], pa.int16()),
            "doc_id": pa.array([5, 6, 5], pa.uint64()),
            "score": pa.array([1, 2, 3], pa.int32()),
        }
    )
    assert Run.from_arrow(ints).to_dict() == {"1": {"6": 2.0, "5": 1.0}, "2": {"5": 3.0}}


def test_arrow_chunked_and_sliced():
    pa = pytest.importorskip("pyarrow")
    rows = rows_of(RUN)
    qs, ds, vs = ([r[i] for r in rows] for i in range(3))
    # Columns chunked at different boundaries, one chunk a slice with an offset.
    padded = pa.array(["pad", "pad", *ds[:4]]).slice(2)
    table = pa.table(
        {
            "query_id": pa.chunked_array([qs[:2], qs[2:3], qs[3:]]),
            "doc_id": pa.chunked_array([padded, pa.array(ds[4:], pa.string())]),
            "score": pa.chunked_array([vs[:5], [], vs[5:]], type=pa.float64()),
        }
    )
    assert_same_run(Run.from_arrow(table), REF_RUN)
    # A slice of a whole table.
    full = arrow_table(pa)
    sliced = pa.concat_tables([full.slice(0, 3), full.slice(3)])
    assert_same_run(Run.from_arrow(sliced), REF_RUN)
    part = Run.from_arrow(full.slice(2, 4))
    assert (
        part.to_dict()
        == Run({"q1": {d: RUN["q1"][d] for d in ["d3", "zz", "d4"]}, "q2": {"y": 1.0}}).to_dict()
    )
    # Sliced dictionary arrays (indices and dictionary with offsets), int dictionary.
    t3 = pa.table(
        {
            "query_id": pa.array(["a", "b", "c", "d"]).dictionary_encode().slice(1, 2),
            "doc_id": pa.array([1, 2, 3, 4], pa.int8()).dictionary_encode().slice(2),
            "score": [1.0, 2.0],
        }
    )
    assert Run.from_arrow(t3).to_dict() == {"b": {"3": 1.0}, "c": {"4": 2.0}}
    # Dictionary-encoded chunks, each with its own dictionary.
    dq = pa.chunked_array(
        [pa.array(qs[:4]).dictionary_encode(), pa.array(qs[4:]).dictionary_encode()]
    )
    t2 = pa.table({"query_id": dq, "doc_id": ds, "score": vs})
    assert_same_run(Run.from_arrow(t2), REF_RUN)


def test_arrow_nulls_and_errors():
    pa = pytest.importorskip("pyarrow")
    t = pa.chunked_array([["q", "q"], ["q", None]])
    table = pa.table({"query_id": t, "doc_id": ["a", "b", "c", "d"], "score": [1.0, 2, 3, 4]})
    with pytest.raises(RanklensInputError, match=r'column "query_id", row 3: the id is null'):
        Run.from_arrow(table)
    table = pa.table({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [1.0, None]})
    with pytest.raises(RanklensInputError, match=r'column "score", row 1: null score'):
        Run.from_arrow(table)
    table = pa.table(
        {
            "query_id": ["q", "q"],
            "doc_id": pa.array(["a", None]).dictionary_encode(),
            "score": [1.0, 2.0],
        }
    )
    with pytest.raises(RanklensInputError, match=r'column "doc_id", row 1: the id is null'):
        Run.from_arrow(table)
    table = pa.table({"query_id": ["q", "q"], "doc_id": ["a", "b"], "score": [1.0, math.nan]})
    with pytest.raises(RanklensInputError, match=r"NaN.*row 1"):
        Run.from_arrow(table)
    table = pa.table({"query_id": ["q", "q"], "doc_id": ["a", "a"], "relevance": [1, 2]})
    with pytest.raises(RanklensInputError, match=r'query "q": document "a"'):
        Qrels.from_arrow(table)
    table = pa.table({"query_id": ["q"], "doc_id": ["a"], "relevance": ["x"]})
    with pytest.raises(RanklensInputError, match=r'"relevance".*numbers'):
        Qrels.from_arrow(table)
    table = pa.table({"query_id": [1.5], "doc_id": ["a"], "score": [1.0]})
    with pytest.raises(RanklensInputError, match=r'"query_id".*strings or integers'):
        Run.from_arrow(table)
    with pytest.raises(RanklensInputError, match='no column "score"'):
        Run.from_arrow(pa.table({"query_id": ["q"], "doc_id": ["a"]}))


def test_arrow_empty():
    pa = pytest.importorskip("pyarrow")
    empty = pa.table(
        {
            "query_id": pa.array([], pa.string()),
            "doc_id": pa.array([], pa.string()),
            "score": pa.array([], pa.float64()),
        }
    )
    assert len(Run.from_arrow(empty)) == 0
    assert Run({}).to_arrow().num_rows == 0


def test_parquet_round_trip(tmp_path):
    pytest.importorskip("pyarrow")
    p = tmp_path / "run.parquet"
    REF_RUN.to_parquet(p)
    assert_same_run(Run.from_parquet(p), REF_RUN)
    qp = tmp_path / "q.parquet"
    Qrels(FLOAT_QRELS).to_parquet(qp, value_col="label")
    assert Qrels.from_parquet(qp, label_col="label").to_dict() == FLOAT_QRELS
    with pytest.raises(RanklensInputError, match='no column "relevance"'):
        Qrels.from_parquet(qp)


def test_non_utf8_ids_are_an_error_not_written_replaced(tmp_path):
    # Written with replacement characters, d\xff and d\xfe were one id.
    p = tmp_path / "run.txt"
    p.write_bytes(b"q1 Q0 d\xff 1 1.0 t\n")
    with pytest.raises(RanklensInputError, match="not valid UTF-8"):
        Run.from_trec(p)


# -- polars --------------------------------------------------------------------------
def test_polars_round_trip():
    pl = pytest.importorskip("polars")
    pytest.importorskip("pyarrow")
    rows = rows_of(RUN)
    df = pl.DataFrame(
        {
            "query_id": [r[0] for r in rows],
            "doc_id": [r[1] for r in rows],
            "score": [r[2] for r in rows],
        }
    )
    assert_same_run(Run.from_polars(df), REF_RUN)
    assert_same_run(Run.from_polars(df.lazy()), REF_RUN)
    out = REF_RUN.to_polars()
    assert out.columns == ["query_id", "doc_id", "score"]
    assert_same_run(Run.from_polars(out), REF_RUN)
    cat = df.with_columns(
        pl.col("query_id").cast(pl.Categorical), pl.col("doc_id").cast(pl.Categorical)
    )
    assert_same_run(Run.from_polars(cat), REF_RUN)
    qrows = rows_of(FLOAT_QRELS)
    qdf = pl.DataFrame(
        {"q": [r[0] for r in qrows], "d": [r[1] for r in qrows], "l": [r[2] for r in qrows]}
    )
    q = Qrels.from_polars(qdf, query_col="q", doc_col="d", label_col="l")
    assert q.to_dict() == FLOAT_QRELS
    nulls = df.with_columns(
        pl.when(pl.col("doc_id") == "zz").then(None).otherwise(pl.col("doc_id")).alias("doc_id")
    )
    with pytest.raises(RanklensInputError, match=r'column "doc_id", row 3: the id is null'):
        Run.from_polars(nulls)


def test_missing_optional_package_message(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name.split(".")[0] == "polars":
            raise ImportError("no polars")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(ImportError, match=r"ranklens\[polars\]"):
        Run.from_polars(None)


def test_without_pyarrow_python_objects_go_through_pack_ids(monkeypatch, tmp_path):
    pd = pytest.importorskip("pandas")
    from ranklens._io import _common

    # Every format module calls _common.optional_pa() through the module, so this
    # one patch covers pandas, JSON Lines and to_pandas alike.
    monkeypatch.setattr(_common, "optional_pa", lambda: None)
    df = run_frame(pd).astype({"query_id": object, "doc_id": object})
    assert_same_run(Run.from_pandas(df), REF_RUN)
    out = REF_RUN.to_pandas()
    assert out[out.query_id == "q1"].doc_id.tolist() == REF_RUN.ranking("q1")
    assert_same_run(Run.from_pandas(out), REF_RUN)
    assert Qrels(FLOAT_QRELS).to_pandas().relevance.dtype == np.float64
    assert len(Run({}).to_pandas()) == 0
    bad = df.copy()
    bad.loc[4, "doc_id"] = None
    with pytest.raises(RanklensInputError, match=r'column "doc_id", row 4: the id is null'):
        Run.from_pandas(bad)
    bad.loc[4, "doc_id"] = 2.5
    with pytest.raises(RanklensInputError, match=r"row 4: an id must be a str or an int"):
        Run.from_pandas(bad)
    p = tmp_path / "run.jsonl"
    REF_RUN.to_jsonl(p)
    assert_same_run(Run.from_jsonl(p), REF_RUN)


def test_input_positions_are_kept_only_for_runs_with_ties(tmp_path):
    """A run stores each row's input position (``ties="input"``) only when some
    query has tied scores; without ties the input order of equal scores is moot,
    and ``ties="input"`` scores as trec_eval does."""
    qrels = {"q1": {"a": 1, "c": 2}, "q2": {"d": 1}}
    free = {"q1": {"a": 0.5, "b": 0.9, "c": 0.1}, "q2": {"d": 0.3, "e": 0.7}}
    tied = {"q1": {"a": 0.5, "b": 0.9, "c": 0.1}, "q2": {"d": 0.7, "e": 0.7}}
    path = tmp_path / "run.txt"
    path.write_text(
        "".join(f"{q} Q0 {d} 0 {s} t\n" for q, docs in free.items() for d, s in docs.items())
    )
    for run in (Run(free), Run.from_trec(path)):
        assert run.arrays[7].size == 0
        a = ranklens.evaluate(qrels, run, ["map", "mrr", "ndcg@2"], ties="input")
        b = ranklens.evaluate(qrels, run, ["map", "mrr", "ndcg@2"])
        assert a.to_dict() == b.to_dict()
    run = Run(tied)
    # Rows in trec order (score, then id descending); input positions within each query.
    assert run.arrays[7].tolist() == [1, 0, 2, 1, 0]
    # q2: d (input 0) ties with e (input 1): trec order puts e first, input order d.
    assert ranklens.evaluate(qrels, run, ["mrr"], ties="input").per_query("mrr")["q2"] == 1.0
    assert ranklens.evaluate(qrels, run, ["mrr"]).per_query("mrr")["q2"] == 0.5
