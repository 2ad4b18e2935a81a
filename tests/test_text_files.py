"""The text files read in Python (subtopic qrels, preference files, qrels_jg)
keep the TREC readers' promises: a UTF-8 byte order mark is dropped, other
encodings, over-long lines (``/dev/zero``), ``\\r``-only line ends and non-finite
levels are errors naming the file and line, never a silently different id or an
unbounded read.  Expected values come from the same file without the hazard."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ranklens import ParseError, Prefs, Qrels, RanklensInputError
from ranklens._prefs import read_qrels_jg

BOM = b"\xef\xbb\xbf"
SUBTOPICS = b"q1 1 d1 1\nq1 2 d2 1\nq2 1 d3 1\n"
PREFS = b"q1 u1 a d1 2\nq1 u1 a d2 0\nq2 u1 a d3 1\nq2 u1 a d4 0\n"
JG = b"q1 u1 d1 1\nq1 u2 d2 1\nq2 u1 d3 1\n"


def _read_subtopics(path: Path):
    return Qrels.from_trec(path, subtopics=True).subtopics()


def _read_prefs(path: Path):
    p = Prefs.from_trec(path)
    return {q: p[q] for q in p.query_ids}


def _read_jg(path: Path):
    return {jg: q.to_dict() for jg, q in read_qrels_jg(path).items()}


# (reader, a good file, one more line of it with {doc} and {level} to fill in)
READERS = [
    pytest.param(_read_subtopics, SUBTOPICS, "q3 1 {doc} {level}\n", id="subtopic-qrels"),
    pytest.param(_read_prefs, PREFS, "q3 u1 a {doc} {level}\n", id="prefs"),
    pytest.param(_read_jg, JG, "q3 u1 {doc} {level}\n", id="qrels_jg"),
]


def _line(fmt: str, doc: bytes, level: bytes) -> bytes:
    return fmt.encode().replace(b"{doc}", doc).replace(b"{level}", level)


@pytest.mark.parametrize("read, text, fmt", READERS)
def test_byte_order_mark_is_dropped(tmp_path, read, text, fmt):
    plain, marked = tmp_path / "plain", tmp_path / "marked"
    plain.write_bytes(text)
    marked.write_bytes(BOM + text)
    assert read(marked) == read(plain)


@pytest.mark.parametrize("read, text, fmt", READERS)
def test_crlf_line_ends_read_as_lf(tmp_path, read, text, fmt):
    plain, crlf = tmp_path / "plain", tmp_path / "crlf"
    plain.write_bytes(text)
    crlf.write_bytes(text.replace(b"\n", b"\r\n"))
    assert read(crlf) == read(plain)


@pytest.mark.parametrize("read, text, fmt", READERS)
def test_not_utf8_names_file_and_line(tmp_path, read, text, fmt):
    bad = tmp_path / "latin1"
    bad.write_bytes(text + _line(fmt, b"d\xe9", b"1"))
    n = text.count(b"\n") + 1
    with pytest.raises(ParseError, match=rf"latin1:{n}: not UTF-8"):
        read(bad)


@pytest.mark.parametrize("read, text, fmt", READERS)
def test_carriage_return_line_ends_are_an_error(tmp_path, read, text, fmt):
    mac = tmp_path / "mac"
    mac.write_bytes(text.replace(b"\n", b"\r"))
    with pytest.raises(ParseError, match=r"mac:1: a carriage return"):
        read(mac)


@pytest.mark.parametrize("read, text, fmt", READERS)
def test_special_file_is_bounded(read, text, fmt):
    # /dev/zero has no newline: the line limit stops the read at one line
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero on this platform")
    with pytest.raises(ParseError, match=r"/dev/zero:1: a line longer than"):
        read(Path("/dev/zero"))


@pytest.mark.parametrize("read, text, fmt", READERS)
def test_directory_is_an_input_error(tmp_path, read, text, fmt):
    with pytest.raises(RanklensInputError, match="cannot open"):
        read(tmp_path)


@pytest.mark.parametrize("level", ["nan", "inf", "-inf", "1e400"])
@pytest.mark.parametrize("read, text, fmt", READERS)
def test_non_finite_level_names_file_and_line(tmp_path, read, text, fmt, level):
    bad = tmp_path / "levels"
    bad.write_bytes(text + _line(fmt, b"d9", level.encode()))
    n = text.count(b"\n") + 1
    with pytest.raises(ParseError, match=rf"levels:{n}: (level|label) '.*' is not finite"):
        read(bad)


def test_cli_reads_a_marked_subtopic_qrels(tmp_path, capsys):
    # through the command line, the same numbers with and without the mark
    from ranklens.cli import main

    run = tmp_path / "run"
    run.write_text("q1 Q0 d2 1 2.0 t\nq1 Q0 d1 2 1.0 t\nq2 Q0 d3 1 1.0 t\n")
    out = []
    for name, prefix in (("plain", b""), ("marked", BOM)):
        path = tmp_path / name
        path.write_bytes(prefix + SUBTOPICS)
        assert main(["--subtopics", "-m", "alpha_nDCG@2", "-q", str(path), str(run)]) == 0
        out.append(capsys.readouterr().out)
    assert out[0] == out[1] and "q1" in out[0]
