"""TREC run and qrels files: ``Run.from_trec`` / ``Qrels.from_trec`` / ``to_trec``.

The parsing itself is in Rust (``src/core/trec/``, unit-tested there); these
tests check the Python surface: round trips, gzip, comments, error messages that
name file and line, float labels, and trec_eval's numbers on its own test files
(``tests/data`` holds copies of NIST trec_eval 10.0's ``test/`` inputs).
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

ranklens = pytest.importorskip("ranklens")
if not hasattr(ranklens.Run, "from_trec"):  # pragma: no cover - until the binding lands
    pytest.skip("ranklens.Run.from_trec is not wired yet", allow_module_level=True)

from ranklens import Qrels, Run  # noqa: E402
from ranklens.errors import ParseError  # noqa: E402

DATA = Path(__file__).parent / "data"


def write(path: Path, text: str) -> str:
    path.write_bytes(text.encode())
    return str(path)


def assert_parse_error(excinfo: pytest.ExceptionInfo, path: str, line: int) -> str:
    """The message names the file and the line (``file:line: ...`` or ``line N``)."""
    msg = str(excinfo.value)
    assert isinstance(excinfo.value, ValueError)
    assert Path(path).name in msg, msg
    assert re.search(rf"(:|line ){line}\b", msg), msg
    return msg


# ---------------------------------------------------------------------------
# trec_eval's own test files (expected numbers from its out.test / out.test.aqc)


def test_conformance_map_and_p5():
    qrels = Qrels.from_trec(str(DATA / "qrels.test"))
    run = Run.from_trec(str(DATA / "results.test"))
    assert len(qrels) == 3 and qrels.num_rows == 3681
    assert len(run) == 3 and run.num_rows == 1500
    assert run.name == "STANDARD"
    res = ranklens.evaluate(qrels, run, ["map", "P@5"])
    assert round(res["map"], 4) == 0.1785
    assert round(res["P_5"], 4) == 0.2667


def test_conformance_qrels_with_comment_lines():
    # Same judgments as qrels.test plus `#` lines, one of them before a doc id with `#`.
    plain = Qrels.from_trec(str(DATA / "qrels.test")).to_dict()
    commented = Qrels.from_trec(str(DATA / "qrels.test.with-comments")).to_dict()
    assert commented.keys() == plain.keys()
    assert sum(map(len, commented.values())) == 3681
    assert commented["301"]["CR#93E-1860"] == 0


def test_conformance_truncated_run_with_extra_fields():
    # results.trunc: topic 302 missing, query blocks interleaved, extra trailing
    # fields on some lines.  trec_eval -c: map 0.1016, P_5 0.2000 (out.test.aqc).
    run = Run.from_trec(str(DATA / "results.trunc"))
    assert sorted(run) == ["301", "303"] and run.num_rows == 584
    res = ranklens.evaluate(Qrels.from_trec(str(DATA / "qrels.test")), run, ["map", "P@5"])
    assert round(res["map"], 4) == 0.1016
    assert round(res["P_5"], 4) == 0.2000


# ---------------------------------------------------------------------------
# Round trips


def test_run_roundtrip_exact_scores(tmp_path):
    data = {
        "q1": {"d1": 0.1 + 0.2, "d2": 1e-300, "d3": 3e20, "d4": -2.5},
        "q2": {"a": 1.0, "b": 2.0, "c": 0.5},
    }
    path = str(tmp_path / "run.txt")
    Run.from_dict(data).to_trec(path, tag="mytag")
    lines = Path(path).read_text().splitlines()
    assert len(lines) == 7
    assert lines[0].split() == ["q1", "Q0", "d3", "1", "3e20", "mytag"]
    assert [line.split()[3] for line in lines[4:]] == ["1", "2", "3"]
    back = Run.from_trec(path)
    assert back.name == "mytag"
    assert back.to_dict() == data  # exact floats
    assert list(back.to_dict()["q2"]) == ["b", "a", "c"]  # ranking order


def test_qrels_roundtrip_integer_and_float_labels(tmp_path):
    data = {"q1": {"d1": 2, "d2": 0, "d3": 0.5, "d4": -1}, "q2": {"x": 1}}
    path = str(tmp_path / "qrels.txt")
    Qrels.from_dict(data).to_trec(path)
    text = Path(path).read_text()
    assert "q1 0 d1 2\n" in text  # integer labels without a decimal point
    assert "q1 0 d3 0.5\n" in text
    assert "q1 0 d4 -1\n" in text
    assert Qrels.from_trec(path).to_dict() == data


def test_float_labels_kept(tmp_path):
    path = write(tmp_path / "q.txt", "q 0 a 1.5\nq 0 b 0.25\nq 0 c 3\n")
    assert Qrels.from_trec(path).to_dict() == {"q": {"a": 1.5, "b": 0.25, "c": 3.0}}


def test_gzip_write_and_read(tmp_path):
    data = {"q1": {"d1": 2.0, "d2": 1.0}, "q2": {"e": 0.125}}
    path = str(tmp_path / "run.txt.gz")
    Run.from_dict(data).to_trec(path, tag="gz")
    raw = Path(path).read_bytes()
    assert raw[:2] == b"\x1f\x8b"
    assert gzip.decompress(raw).decode().startswith("q1 Q0 d1 1 2 gz\n")
    assert Run.from_trec(path).to_dict() == data
    # gzip recognised by content, whatever the name.
    other = tmp_path / "run_without_suffix.txt"
    other.write_bytes(raw)
    assert Run.from_trec(str(other)).to_dict() == data


def test_gzip_qrels_from_python_gzip(tmp_path):
    path = tmp_path / "qrels.gz"
    path.write_bytes(gzip.compress(b"q 0 a 1\nq 0 b 0\n"))
    assert Qrels.from_trec(str(path)).to_dict() == {"q": {"a": 1.0, "b": 0.0}}


# ---------------------------------------------------------------------------
# Format details


def test_comments_blank_lines_crlf_tabs_extra_fields(tmp_path):
    text = (
        "# a comment\r\n"
        "\n"
        "   \t \n"
        "q1\tQ0\tdoc#1\tx\t  2.5\ttagA\r\n"  # rank need not be numeric (ignored)
        "  # an indented comment\n"
        "q1 Q0 doc2 2 -1e-3 tagB extra fields are ignored\n"
        "q2 Q0 d 1 7 tagC"  # no final newline
    )
    run = Run.from_trec(write(tmp_path / "run.txt", text))
    assert run.name == "tagA"  # the first line's tag
    assert run.to_dict() == {"q1": {"doc#1": 2.5, "doc2": -0.001}, "q2": {"d": 7.0}}


def test_empty_file(tmp_path):
    path = write(tmp_path / "empty.txt", "")
    assert len(Run.from_trec(path)) == 0
    assert len(Qrels.from_trec(path)) == 0
    assert Qrels.from_trec(write(tmp_path / "c.txt", "# nothing\n\n")).to_dict() == {}


# ---------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize(
    "text, line",
    [
        ("q Q0 a 1 1.0 t\nq Q0 b 2 0.5\n", 2),  # 5 fields
        ("q Q0 a 1 1.0 t\n\n# c\nq Q0 b 2 abc t\n", 4),  # unparsable score
        ("q Q0 a 1 nan t\n", 1),
        ("q Q0 a 1 inf t\n", 1),
        ("q Q0 a 1 1.0 t\nq Q0 b 2 1.0 t\nq Q0 a 3 0.5 t\n", 3),  # duplicate doc
    ],
)
def test_run_parse_errors(tmp_path, text, line):
    path = write(tmp_path / "bad_run.txt", text)
    with pytest.raises(ParseError) as excinfo:
        Run.from_trec(path)
    assert_parse_error(excinfo, path, line)


@pytest.mark.parametrize(
    "text, line",
    [
        ("q 0 a 1\nq 0 b\n", 2),  # 3 fields
        ("q 0 a 1\nq 0 b 1 extra\n", 2),  # 5 fields
        ("q 0 a x\n", 1),
        ("q 0 a NaN\n", 1),
        ("q 0 a 1\nq 0 a 0\n", 2),  # duplicate doc
    ],
)
def test_qrels_parse_errors(tmp_path, text, line):
    path = write(tmp_path / "bad_qrels.txt", text)
    with pytest.raises(ParseError) as excinfo:
        Qrels.from_trec(path)
    assert_parse_error(excinfo, path, line)


def test_duplicate_message_names_query_and_doc(tmp_path):
    path = write(tmp_path / "dup.txt", "q7 Q0 a 1 3 t\nq7 Q0 dupdoc 2 2 t\nq7 Q0 dupdoc 3 1 t\n")
    with pytest.raises(ParseError) as excinfo:
        Run.from_trec(path)
    msg = assert_parse_error(excinfo, path, 3)
    assert "q7" in msg and "dupdoc" in msg


def test_duplicate_in_split_query_blocks(tmp_path):
    # The query's lines are not consecutive: still an error, still the right line.
    path = write(tmp_path / "split.txt", "q Q0 a 1 3 t\nr Q0 a 1 3 t\nq Q0 b 2 2 t\nq Q0 a 3 1 t\n")
    with pytest.raises(ParseError) as excinfo:
        Run.from_trec(path)
    assert_parse_error(excinfo, path, 4)


def test_missing_file_is_oserror(tmp_path):
    with pytest.raises(OSError):
        Run.from_trec(str(tmp_path / "does_not_exist.txt"))
