"""`ranklens trec_eval`: byte-identical to trec_eval 10.0 on NIST's own test files.

Each row of ``tests/data/MANIFEST.md`` (copied from the conformance corpus) is run
in-process with its exact arguments, from ``tests/data``, and stdout must equal the
expected file byte for byte.
"""

from __future__ import annotations

import math
import re
import shlex
from pathlib import Path

import pytest

from ranklens import cli
from ranklens.cli._trec_eval import main

DATA = Path(__file__).parent / "data"

_ROWS = re.findall(r"^\| (\S+) \| `([^`]*)`", (DATA / "MANIFEST.md").read_text(), re.M)


def _cases() -> list:
    return [pytest.param(expected, args, id=f"{expected}: {args}") for expected, args in _ROWS]


def _run(monkeypatch, capsys, args: list[str], entry=main) -> tuple[int, str, str]:
    monkeypatch.chdir(DATA)
    rc = entry(args)
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def _run_files(tmp_path, monkeypatch, capsys, qrels: str, run: str, args: list[str]):
    """Run on a qrels and a run file written from the given texts (paths last)."""
    (tmp_path / "q").write_text(qrels)
    (tmp_path / "r").write_text(run)
    return _run(monkeypatch, capsys, [*args, str(tmp_path / "q"), str(tmp_path / "r")])


def test_manifest_is_complete():
    assert len(_ROWS) == 13
    for expected, _ in _ROWS:
        assert (DATA / expected).is_file()


@pytest.mark.parametrize(("expected", "args"), _cases())
def test_manifest_row_is_byte_identical(monkeypatch, capsys, expected, args):
    rc, out, err = _run(monkeypatch, capsys, shlex.split(args))
    assert (rc, err) == (0, "")
    assert out == (DATA / expected).read_bytes().decode()


def test_subcommand_of_the_ranklens_cli(monkeypatch, capsys):
    rc, out, _ = _run(monkeypatch, capsys, ["trec_eval", "qrels.test", "results.test"], cli.main)
    assert rc == 0
    assert out == (DATA / "out.test").read_text()


def test_runid_is_the_last_lines_tag(tmp_path, monkeypatch, capsys):
    run = "1 Q0 a 1 2.0 first\n2 Q0 b 1 1.0 last\n# comment\n\n"
    rc, out, _ = _run_files(
        tmp_path, monkeypatch, capsys, "1 0 a 1\n2 0 b 1\n", run, ["-m", "runid"]
    )
    assert (rc, out) == (0, "runid                 \tall\tlast\n")


def test_complete_flag_scores_a_missing_topic_on_trec_evals_bogus_ranking(monkeypatch, capsys):
    # relstring_20 is not reset (trec_eval resets only the exact name "relstring"):
    # the bogus document is outside the pool, so it shows as '-'.
    args = ["-q", "-c", "-m", "relstring.20", "-m", "num_ret", "qrels.test", "results.trunc"]
    rc, out, _ = _run(monkeypatch, capsys, args)
    assert rc == 0
    assert "relstring_20          \t302\t'-'\n" in out
    assert "num_ret               \t302\t0\n" in out


def test_complete_flag_recounts_num_rel_from_the_qrels(monkeypatch, capsys):
    # Under -c trec_eval's num_rel total counts labels > 0, whatever -l says.
    rc, out, _ = _run(
        monkeypatch, capsys, ["-c", "-l2", "-m", "num_rel", "qrels.rel_level", "results.test"]
    )
    assert rc == 0
    labels = [int(line.split()[3]) for line in (DATA / "qrels.rel_level").read_text().splitlines()]
    assert out == f"num_rel               \tall\t{sum(x > 0 for x in labels)}\n"
    rc, out, _ = _run(
        monkeypatch, capsys, ["-l2", "-m", "num_rel", "qrels.rel_level", "results.test"]
    )
    assert out == f"num_rel               \tall\t{sum(x >= 2 for x in labels)}\n"


@pytest.mark.parametrize(
    "args",
    [
        ["--bogus", "qrels.test", "results.test"],
        ["-x", "qrels.test", "results.test"],
        ["-m", "no_such_measure", "qrels.test", "results.test"],
        ["-m", "P.", "qrels.test", "results.test"],
        ["-m", "P.0,5", "qrels.test", "results.test"],
        ["-m", "P.5,5", "qrels.test", "results.test"],
        ["-m", "utility.1,2", "qrels.test", "results.test"],
        ["-m", "ndcg.1", "qrels.test", "results.test"],
        ["-m", "ideal_dcg.1=3", "-m", "ndcg", "qrels.test", "results.test"],
        ["-R", "prefs", "-m", "map", "prefs.test", "prefs.results.test"],
        ["-R", "nonsense", "qrels.test", "results.test"],
        ["-T", "nonsense", "qrels.test", "results.test"],
        ["qrels.test"],
        ["qrels.test", "results.test", "extra"],
        ["-m"],
    ],
)
def test_usage_errors_exit_2_with_nothing_on_stdout(monkeypatch, capsys, args):
    rc, out, err = _run(monkeypatch, capsys, args)
    assert rc == 2
    assert out == ""
    assert err.startswith("ranklens trec_eval: ")


def test_bad_run_line_exits_1_naming_file_and_line(tmp_path, monkeypatch, capsys):
    run = tmp_path / "bad.run"
    run.write_text("301 Q0 d1 1 1.0 tag\n301 Q0 d2 2 notanumber tag\n")
    rc, out, err = _run(monkeypatch, capsys, ["qrels.test", str(run)])
    assert rc == 1
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert "bad.run" in err and "2" in err


def test_missing_topic_without_c_exits_1(monkeypatch, capsys):
    rc, out, err = _run(monkeypatch, capsys, ["-q", "qrels.test", "results.trunc"])
    assert (rc, out) == (1, "")
    assert "'302'" in err and "-c" in err


def test_missing_file_exits_1(monkeypatch, capsys):
    rc, out, err = _run(monkeypatch, capsys, ["qrels.test", "no_such_file"])
    assert (rc, out) == (1, "")
    assert "no_such_file" in err


def test_help_and_version(monkeypatch, capsys):
    rc, out, _ = _run(monkeypatch, capsys, ["-h"])
    assert rc == 0 and "Usage" in out
    rc, out, err = _run(monkeypatch, capsys, ["-v"])
    assert rc == 0 and out == "" and "10.0" in err


def test_results_from_stdin(monkeypatch, capsys):
    import io
    import sys

    data = (DATA / "results.test").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    rc, out, _ = _run(monkeypatch, capsys, ["qrels.test", "-"])
    assert rc == 0
    assert out == (DATA / "out.test").read_text()


def test_float_labels_are_truncated_with_one_warning(tmp_path, monkeypatch, capsys):
    qrels = tmp_path / "qrels"
    qrels.write_text("q 0 a 1.5\nq 0 b 0.5\n")
    run = tmp_path / "run"
    run.write_text("q Q0 b 1 2.0 t\nq Q0 a 2 1.0 t\n")
    with pytest.warns(UserWarning, match=r"float labels truncated.*1\.5 -> 1") as record:
        code, out, _ = _run(monkeypatch, capsys, ["-m", "P.1,2", str(qrels), str(run)])
    assert code == 0 and len(record) == 1
    # atol: a (1.5) -> 1 is relevant, b (0.5) -> 0 is not: P_1 = 0, P_2 = 0.5
    assert "P_1                   \tall\t0.0000" in out
    assert "P_2                   \tall\t0.5000" in out


# ---------------------------------------------------------------------------
# Cases found by the differential probe (benches/trec_eval_probe.py) against
# trec_eval 10.0 built from source: inputs and trec_eval's own output.

PROBE = DATA / "probe"
# the judgment-group formats (-R prefs, qrels_prefs, qrels_jg), made likewise
PROBE_GROUPS = DATA / "probe_groups"
_ROW = re.compile(r"^\| (\S+) \| `([^`]*)` \| (\S*) \| ([^|]*?) \|$", re.M)
_PROBE_ROWS = _ROW.findall((PROBE / "MANIFEST.md").read_text())
_GROUP_ROWS = _ROW.findall((PROBE_GROUPS / "MANIFEST.md").read_text())


def _probe_cases() -> list:
    out = []
    for folder, rows in ((PROBE, _PROBE_ROWS), (PROBE_GROUPS, _GROUP_ROWS)):
        for expected, args, stdin, klass in rows:
            marks = []
            if klass != "agrees":
                # docs/trec_eval.md, "Differences from trec_eval": trec_eval's value
                # comes from memory its code never set (rbp's min/max gain; the
                # Rnonrel recount reading past an equivalence class)
                marks.append(pytest.mark.xfail(strict=True, reason=klass))
            out.append(
                pytest.param(folder, expected, args, stdin, marks=marks, id=f"{expected}: {args}")
            )
    return out


def test_probe_manifest_covers_each_class():
    classes = {row[3] for row in _PROBE_ROWS}
    assert len(_PROBE_ROWS) >= 20
    assert any(c.startswith("rbp:") for c in classes) and "agrees" in classes
    outputs = [(PROBE / row[0]).read_bytes() for row in _PROBE_ROWS]
    for name in (b"iprec_at_recall", b"11pt_avg", b"Rndcg"):  # each NaN case is covered
        assert any(
            line.startswith(name) and line.endswith(b"-nan")
            for out in outputs
            for line in out.splitlines()
        )


def test_probe_groups_manifest_covers_each_format():
    assert len(_GROUP_ROWS) >= 20
    args = " ".join(row[1] for row in _GROUP_ROWS if row[3] == "agrees")
    for fmt in ("-R prefs", "-R qrels_prefs", "-R qrels_jg"):
        assert fmt + " " in args
    for measure in ("all_prefs", "prefs_avgjg_Rnonrel", "qrels_jg", "P_avgjg"):
        assert measure in args


@pytest.mark.parametrize(("folder", "expected", "args", "stdin"), _probe_cases())
def test_probe_case_is_byte_identical(monkeypatch, capsys, folder, expected, args, stdin):
    import io
    import sys

    if stdin:
        data = (folder / stdin).read_bytes()
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    monkeypatch.chdir(folder)
    rc = main(shlex.split(args))
    out = capsys.readouterr().out
    assert rc == 0
    assert out == (folder / expected).read_bytes().decode()


def test_nothing_retrieved_under_J_prints_nan_as_trec_eval(tmp_path, monkeypatch, capsys):
    # The reproduction of the issue: topic 1 has no judged document retrieved, so
    # under -J its ranking is empty: 0/0 for every recall point whose cut
    # lround(x * num_rel) = lround(0.5 * 0) = 0 is not above num_rel_ret = 0.
    # Topic 2 retrieves its one relevant document first: 1.0.  (trec_eval 10.0
    # prints the same bytes, as for each test below.)
    args = ["-J", "-c", "-q", "-m", "iprec_at_recall.0.5", "-m", "11pt_avg"]
    qrels, run = "1 0 d 0\n2 0 c 1\n", "1 Q0 x 1 1.0 r\n2 Q0 c 1 1.0 r\n"
    rc, out, _ = _run_files(tmp_path, monkeypatch, capsys, qrels, run, args)
    assert rc == 0
    assert out == (
        "iprec_at_recall_0.50  \t1\t  -nan\n"
        "11pt_avg              \t1\t  -nan\n"
        "iprec_at_recall_0.50  \t2\t1.0000\n"
        "11pt_avg              \t2\t1.0000\n"
        "iprec_at_recall_0.50  \tall\t  -nan\n"
        "11pt_avg              \tall\t  -nan\n"
    )


def test_nan_only_for_recall_points_cut_at_zero(tmp_path, monkeypatch, capsys):
    # -M0: nothing retrieved.  Topic 1 has 3 relevant documents: cuts
    # lround(0.1 * 3) = 0 -> NaN, lround(0.5 * 3) = 2 > 0 -> stays 0.
    qrels, run = "1 0 a 1\n1 0 b 1\n1 0 c 1\n", "1 Q0 a 1 1.0 r\n"
    args = ["-M0", "-m", "iprec_at_recall.0.1,0.5"]
    rc, out, _ = _run_files(tmp_path, monkeypatch, capsys, qrels, run, args)
    assert (rc, out) == (
        0,
        "iprec_at_recall_0.10  \tall\t  -nan\niprec_at_recall_0.50  \tall\t0.0000\n",
    )


def test_rndcg_with_no_positive_gain_is_nan(tmp_path, monkeypatch, capsys):
    # -l 0 makes label-0 documents relevant (num_rel = 2) while every gain is 0:
    # m_Rndcg.c averages over 0 points, 0/0.
    qrels, run = "1 0 a 0\n1 0 b 0\n", "1 Q0 a 1 1.0 r\n"
    rc, out, _ = _run_files(tmp_path, monkeypatch, capsys, qrels, run, ["-l0", "-m", "Rndcg"])
    assert (rc, out) == (0, "Rndcg                 \tall\t  -nan\n")


def test_first_topic_with_only_negative_labels_is_refused(tmp_path, monkeypatch, capsys):
    run = "1 Q0 a 1 1.0 r\n2 Q0 b 1 1.0 r\n"
    rc, out, err = _run_files(
        tmp_path, monkeypatch, capsys, "1 0 a -1\n2 0 b 1\n", run, ["-m", "map"]
    )
    assert (rc, out) == (1, "")
    assert "'1'" in err and "negative" in err
    # a later such topic is evaluated, as trec_eval does: map 1 and 0, mean 0.5
    rc, out, _ = _run_files(
        tmp_path, monkeypatch, capsys, "1 0 a 1\n2 0 b -1\n", run, ["-m", "map"]
    )
    assert (rc, out) == (0, "map                   \tall\t0.5000\n")


def test_dcg_and_ndcg_with_gains_in_one_call_is_refused(monkeypatch, capsys):
    args = ["-m", "dcg.1=2", "-m", "ndcg", "qrels.test", "results.test"]
    rc, out, err = _run(monkeypatch, capsys, args)
    assert (rc, out) == (2, "")
    assert "separate calls" in err


def test_yaap_and_ideal_dcg_by_hand(tmp_path, monkeypatch, capsys):
    # a = 2 at rank 1, b = 0, c = 1 at rank 3; R = 2 (level 1)
    # yaap: S = 1/1 + 2/3 = 5/3, ln((1 + 5/3) / (1 + 2 - 5/3)) = ln 2
    # ideal_dcg: 2 / log2(2) + 1 / log2(3); with 1=3,2=9: 9 + 3 / log2(3)
    qrels, run = "q 0 a 2\nq 0 b 0\nq 0 c 1\n", "q Q0 a 1 3 r\nq Q0 b 2 2 r\nq Q0 c 3 1 r\n"
    rc, out, _ = _run_files(tmp_path, monkeypatch, capsys, qrels, run, ["-m", "yaap"])
    assert (rc, out) == (0, f"yaap                  \tall\t{math.log(2):6.4f}\n")
    rc, out, _ = _run_files(tmp_path, monkeypatch, capsys, qrels, run, ["-m", "ideal_dcg"])
    assert (rc, out) == (0, f"ideal_dcg             \tall\t{2 + 1 / math.log2(3):6.4f}\n")
    args = ["-m", "ideal_dcg.1=3,2=9"]
    rc, out, _ = _run_files(tmp_path, monkeypatch, capsys, qrels, run, args)
    assert (rc, out) == (0, f"ideal_dcg_1=3,2=9     \tall\t{9 + 3 / math.log2(3):6.4f}\n")


def test_ideal_dcg_of_an_all_negative_topic_is_the_previous_topics(tmp_path, monkeypatch, capsys):
    # form_res_rels.c leaves the label counts of topic 1 (one label 2) in place for
    # topic 2, whose labels are all negative: its ideal DCG is topic 1's, 2 / log2(2)
    qrels, run = "1 0 a 2\n2 0 b -1\n", "1 Q0 a 1 1 r\n2 Q0 b 1 1 r\n"
    args = ["-q", "-m", "ideal_dcg"]
    rc, out, _ = _run_files(tmp_path, monkeypatch, capsys, qrels, run, args)
    assert rc == 0
    assert out == (
        "ideal_dcg             \t1\t2.0000\n"
        "ideal_dcg             \t2\t2.0000\n"
        "ideal_dcg             \tall\t2.0000\n"
    )
