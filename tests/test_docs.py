"""Every code example of README.md and docs/**/*.md runs here, as a reader would run it.

Collected from each Markdown file, in order:

* fenced ``python`` blocks: run in one namespace per file (a page reads as one
  session: a later block may use what an earlier one defined), with the working
  directory a temporary copy of ``examples/`` (so ``examples/qrels.txt`` resolves);
* fenced ``sh`` / ``bash`` / ``console`` / ``shell`` blocks: run by ``bash`` in the same
  directory, with ``ranklens`` and ``ranklens-trec-eval`` this interpreter's console
  scripts and ``pip`` a no-op (the package under test is already importable).  A block
  is expected to exit 0, unless its last line ends in ``# exit status N``.

Markers, an HTML comment on the line just before a fence (invisible on the page):

* ``<!-- docs-test: output -->``: this block is the exact standard output of the
  block before it (trailing whitespace ignored);
* ``<!-- docs-test: skip REASON -->``: the block is not run, for a reason a test
  cannot provide (a Spark cluster, AutoRAG installed, the whole ``make test``).
  Their number is capped by ``MAX_SKIPS`` so that the skipped examples stay few.

Blocks in other languages (toml, yaml, text, markdown without a marker) are not code.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAX_SKIPS = 8

PYTHON_LANGS = {"python", "py"}
SHELL_LANGS = {"sh", "bash", "console", "shell"}

_FENCE = re.compile(r"^(?P<indent>[ ]{0,3})(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`]*)$")
_MARKER = re.compile(r"^\s*<!--\s*docs-test:\s*(?P<kind>\w+)\s*(?P<arg>.*?)\s*-->\s*$")
_EXIT = re.compile(r"#\s*exit status (\d+)\s*$")


@dataclass
class Block:
    path: Path
    line: int  # 1-based line of the opening fence
    lang: str
    code: str
    marker: str | None  # "skip", "output" or None
    reason: str = ""
    output: Block | None = None  # the block holding this one's expected stdout

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def markdown_files() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def parse_blocks(path: Path) -> list[Block]:
    """The fenced blocks of one Markdown file, each with the marker before it."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, indent = m["fence"], len(m["indent"])
        lang = m["info"].strip().split(" ")[0].lower() if m["info"].strip() else ""
        marker, reason = None, ""
        prev = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        mm = _MARKER.match(prev)
        if mm:
            marker, reason = mm["kind"], mm["arg"]
            if marker not in ("skip", "output"):
                raise ValueError(f"{path}:{i}: unknown docs-test marker {marker!r}")
            if marker == "skip" and not reason:
                raise ValueError(f"{path}:{i}: a skip marker must give its reason")
        body: list[str] = []
        j = i + 1
        while j < len(lines):
            close = lines[j].strip()
            if close.startswith(fence[0] * len(fence)) and set(close) == {fence[0]}:
                break
            body.append(lines[j][indent:] if lines[j][:indent].isspace() else lines[j])
            j += 1
        else:
            raise ValueError(f"{path}:{i + 1}: unclosed code fence")
        block = Block(path, i + 1, lang, "\n".join(body) + "\n", marker, reason)
        if marker == "output":
            if not blocks:
                raise ValueError(f"{path}:{i + 1}: an output block follows no block")
            blocks[-1].output = block
        blocks.append(block)
        i = j + 1
    return blocks


def runnable_blocks() -> list[Block]:
    return [
        b
        for p in markdown_files()
        for b in parse_blocks(p)
        if b.marker != "output" and (b.lang in PYTHON_LANGS or b.lang in SHELL_LANGS)
    ]


BLOCKS = runnable_blocks()
# One namespace and one working directory per Markdown file.
_SESSIONS: dict[Path, tuple[dict, Path]] = {}


def _session(path: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    if path not in _SESSIONS:
        work = tmp_path_factory.mktemp(path.stem.replace(".", "_"))
        shutil.copytree(ROOT / "examples", work / "examples")
        _SESSIONS[path] = ({"__name__": "__main__"}, work)
    return _SESSIONS[path]


def _shell_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """PATH with ``ranklens`` / ``ranklens-trec-eval`` run by this interpreter."""
    bin_dir = tmp_path_factory.getbasetemp() / "docs-bin"
    if not bin_dir.exists():
        bin_dir.mkdir()
        for name, entry in (("ranklens", "main"), ("ranklens-trec-eval", "trec_eval_main")):
            script = bin_dir / name
            script.write_text(
                f"#!{sys.executable}\nimport sys\nfrom ranklens.cli import {entry}\n"
                f"sys.exit({entry}())\n"
            )
            script.chmod(0o755)
    env = dict(os.environ)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    return env


def _check_output(block: Block, out: str) -> None:
    if block.output is None:
        return
    expected = [ln.rstrip() for ln in block.output.code.rstrip("\n").splitlines()]
    got = [ln.rstrip() for ln in out.rstrip("\n").splitlines()]
    assert got == expected, (
        f"{block.id}: output differs from the block at line {block.output.line}:\n" + out
    )


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_markdown_block(block: Block, tmp_path_factory, monkeypatch) -> None:
    if block.marker == "skip":
        pytest.skip(block.reason)
    namespace, work = _session(block.path, tmp_path_factory)
    monkeypatch.chdir(work)
    if block.lang in PYTHON_LANGS:
        code = compile(block.code, f"{block.id} (python block)", "exec")
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(code, namespace)
        _check_output(block, buf.getvalue())
        return
    last = block.code.rstrip().splitlines()[-1] if block.code.strip() else ""
    m = _EXIT.search(last)
    expected_status = int(m.group(1)) if m else 0
    script = "set -eo pipefail\npip() { :; }\n" + block.code
    proc = subprocess.run(
        ["bash", "-c", script],
        cwd=work,
        env=_shell_env(tmp_path_factory),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == expected_status, (
        f"{block.id}: exit status {proc.returncode}, expected {expected_status}\n"
        f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    )
    _check_output(block, proc.stdout)


def test_blocks_are_collected() -> None:
    # The collector sees the README's quick start, python and shell alike.
    readme = [b for b in BLOCKS if b.path.name == "README.md"]
    assert any(b.lang in PYTHON_LANGS for b in readme)
    assert any(b.lang in SHELL_LANGS and "ranklens" in b.code for b in readme)


def test_skipped_examples_are_few() -> None:
    skipped = [b.id for b in BLOCKS if b.marker == "skip"]
    assert len(skipped) <= MAX_SKIPS, f"{len(skipped)} skipped examples: {skipped}"


def test_parser_reads_markers_and_outputs(tmp_path) -> None:
    md = tmp_path / "page.md"
    md.write_text(
        "text\n\n```python\nprint(1)\n```\n\n<!-- docs-test: output -->\n```text\n1\n```\n\n"
        "<!-- docs-test: skip needs a cluster -->\n```sh\nspark-submit x\n```\n\n"
        "* item\n\n  ```python\n  x = 2\n  ```\n"
    )
    blocks = parse_blocks(md)
    assert [(b.lang, b.marker, b.line) for b in blocks] == [
        ("python", None, 3),
        ("text", "output", 8),
        ("sh", "skip", 13),
        ("python", None, 19),
    ]
    assert blocks[0].output is blocks[1]
    assert blocks[2].reason == "needs a cluster"
    assert blocks[3].code == "x = 2\n"
    md.write_text("<!-- docs-test: skip -->\n```sh\nx\n```\n")
    with pytest.raises(ValueError, match="reason"):
        parse_blocks(md)
    md.write_text("```python\nx\n")
    with pytest.raises(ValueError, match="unclosed"):
        parse_blocks(md)
