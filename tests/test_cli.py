"""The main command line: `ranklens QRELS RUN [RUN ...] -m ...`."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from ranklens.cli import _progress, main

DATA = Path(__file__).parent / "data"
QRELS = str(DATA / "qrels.test")
RUN = str(DATA / "results.test")


def run_cli(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_table_matches_trec_eval(capsys):
    # trec_eval's own output for these files (tests/data/out.test): map 0.1785, P_5 0.2667.
    code, out, _ = run_cli(capsys, QRELS, RUN, "-m", "map", "-m", "P_5", "-m", "num_rel")
    assert code == 0
    rows = {tuple(line.split()[1:3]): line.split()[3] for line in out.splitlines()[1:]}
    assert rows[("map", "all")] == "0.1785"
    assert rows[("precision@5", "all")] == "0.2667"
    assert rows[("num_rel", "all")] == "561"


@pytest.mark.parametrize("fmt", ["tsv", "csv", "json", "jsonl"])
def test_formats_agree(capsys, fmt):
    code, out, _ = run_cli(capsys, QRELS, RUN, RUN, "-m", "map", "-q", "--format", fmt)
    assert code == 0
    if fmt == "json":
        doc = json.loads(out)
        assert len(doc) == 2 and abs(doc[0]["aggregate"]["map"] - 0.1785) < 5e-5
        assert set(doc[0]["per_query"]["map"]) == {"301", "302", "303"}
        return
    if fmt == "jsonl":
        rows = [json.loads(line) for line in out.splitlines()]
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(out)))
    else:
        lines = [line.split("\t") for line in out.splitlines()]
        rows = [dict(zip(lines[0], r)) for r in lines[1:]]
    # two runs x (3 queries + "all")
    assert len(rows) == 8
    alls = [r for r in rows if r["query"] == "all"]
    assert all(abs(float(r["value"]) - 0.1785) < 1e-4 for r in alls)


def test_ties_option(tmp_path, capsys):
    (tmp_path / "q").write_text("q 0 a 1\n")
    # all scores tie: trec order is z, b, a (doc id descending); file order is a, b, z
    (tmp_path / "r").write_text("q Q0 a 1 1.0 t\nq Q0 b 2 1.0 t\nq Q0 z 3 1.0 t\n")
    args = [str(tmp_path / "q"), str(tmp_path / "r"), "-m", "mrr", "--format", "json"]
    for ties, want in [("trec", 1 / 3), ("input", 1.0), ("expected", (1 + 1 / 2 + 1 / 3) / 3)]:
        code, out, _ = run_cli(capsys, *args, "--ties", ties)
        assert code == 0
        assert json.loads(out)[0]["aggregate"]["mrr"] == pytest.approx(want, abs=1e-12)


def test_bad_data_exits_1_with_nothing_on_stdout(tmp_path, capsys):
    bad = tmp_path / "bad.run"
    bad.write_text("301 Q0 doc 1 high t\n")
    code, out, err = run_cli(capsys, QRELS, str(bad), "-m", "map")
    assert code == 1 and out == ""
    assert "bad.run:1" in err and err.count("\n") == 1
    code, out, err = run_cli(capsys, QRELS, str(tmp_path / "missing"), "-m", "map")
    assert code == 1 and out == ""


def test_usage_errors_exit_2(capsys):
    with pytest.raises(SystemExit) as e:
        main([QRELS])
    assert e.value.code == 2
    with pytest.raises(SystemExit) as e:
        main([QRELS, RUN, "--format", "xml"])
    assert e.value.code == 2


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_draws_on_a_terminal(monkeypatch, tmp_path):
    big = tmp_path / "big"
    big.write_bytes(b"x" * 4096)
    monkeypatch.setattr(_progress, "_MIN_BYTES", 1)
    if _progress._bytes_read() is None:
        pytest.skip("no /proc/self/io here")
    tty = _Tty()
    with _progress.reading(str(big), "run", tty):
        big.read_bytes()
    shown = tty.getvalue()
    assert shown.startswith("\rrun [") and "] done in " in shown and shown.endswith(" s\n")
    quiet = io.StringIO()  # not a terminal: nothing
    with _progress.reading(str(big), "run", quiet):
        pass
    assert quiet.getvalue() == ""


@pytest.mark.parametrize("stream", [False, True])
def test_empty_policy(capsys, tmp_path, stream):
    # The run drops one of the three queries: --empty skip averages over the two
    # it has, as evaluate(..., empty="skip") does; --empty nan makes the mean NaN.
    import ranklens

    qids = sorted({line.split()[0] for line in Path(RUN).read_text().splitlines()})
    kept = [ln for ln in Path(RUN).read_text().splitlines() if ln.split()[0] != qids[-1]]
    run = tmp_path / "run.txt"
    run.write_text("\n".join(kept) + "\n")
    extra = ["--stream"] if stream else []
    want = ranklens.evaluate(
        ranklens.Qrels.from_trec(QRELS), ranklens.Run.from_trec(run), ["map"], empty="skip"
    )
    code, out, _ = run_cli(
        capsys, QRELS, str(run), "-m", "map", "--empty", "skip", "--format", "json", *extra
    )
    assert code == 0
    assert json.loads(out)[0]["aggregate"]["map"] == want["map"]
    assert want.skipped_queries == [qids[-1]]
    code, out, _ = run_cli(
        capsys, QRELS, str(run), "-m", "map", "--empty", "nan", "--format", "json", *extra
    )
    assert code == 0 and json.loads(out)[0]["aggregate"]["map"] is None  # NaN as null


@pytest.mark.parametrize("argv", [[], ["trec_eval"]])
def test_warning_is_one_line_in_command_line_terms(capsys, argv):
    # examples/qrels.txt's largest label is 1: at -l 3 every binary metric counts
    # nothing, which the library warns about with its Python argument's spelling.
    prog = " ".join(["ranklens", *argv])
    code, out, err = run_cli(capsys, *argv, "-l", "3", "-m", "map", QRELS, RUN)
    assert code == 0 and out
    assert err.splitlines() == [
        f"{prog}: warning: no ground-truth label reaches relevance level 3 (the largest is "
        "1), so the binary metrics (map) count nothing as relevant; pass -l positive to "
        "count every label > 0 as relevant, or a level the labels reach"
    ]
    code, out, err = run_cli(capsys, *argv, "-l", "positive", "-m", "map", QRELS, RUN)
    assert code == 0 and out and err == ""


@pytest.mark.parametrize("stream", [False, True])
def test_miss_policy(capsys, tmp_path, stream):
    # q1's relevant d1 is at rank 2; q2's relevant d9 is not retrieved.  At k=3,
    # --miss k+1 scores q2 as 4 (mean (2 + 4) / 2 = 3), --miss nan as NaN (mean
    # over the hit: 2).
    qrels, run = tmp_path / "qrels", tmp_path / "run"
    qrels.write_text("q1 0 d1 1\nq2 0 d9 1\n")
    run.write_text(
        "q1 Q0 d0 1 3 t\nq1 Q0 d1 2 2 t\nq1 Q0 d2 3 1 t\nq2 Q0 d7 1 3 t\nq2 Q0 d8 2 2 t\n"
    )
    extra = ["--stream"] if stream else []
    for miss, mean, q2 in [("k+1", 3.0, 4.0), ("nan", 2.0, None)]:
        code, out, _ = run_cli(
            capsys, str(qrels), str(run), "-m", "mean_rank@3", "--miss", miss,
            "-q", "--format", "json", *extra,
        )  # fmt: skip
        assert code == 0
        doc = json.loads(out)[0]
        (name,) = doc["aggregate"]
        assert doc["aggregate"][name] == mean
        assert doc["per_query"][name] == {"q1": 2.0, "q2": q2}
