"""Every code example of README.md and docs/**/*.md runs here, as a reader would run it.

Collected from each Markdown file, in order:

* fenced ``python`` blocks: run in order in one fresh interpreter per file, in one
  namespace (a page reads as one session: a later block may use what an earlier one
  defined), the working directory a temporary copy of ``examples/`` (so
  ``examples/qrels.txt`` resolves);
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
import json
import os
import re
import shutil
import subprocess
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAX_SKIPS = 8

PYTHON_LANGS = {"python", "py"}
SHELL_LANGS = {"sh", "bash", "console", "shell"}

_FENCE = re.compile(r"^(?P<indent>[ ]*)(?P<fence>`{3,}|~{3,})\s*(?P<info>[^`]*)$")
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
_PAGES: dict[Path, list[dict]] = {}  # a page's results, one per runnable block


def _bin_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``ranklens`` / ``ranklens-trec-eval`` run by this interpreter."""
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
    return bin_dir


def _page_results(path: Path, tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """Run a page's blocks in order in a fresh interpreter (so what one page sets up,
    ``ir_measures``' pipeline or a warning filter, never reaches another test), in a
    temporary directory holding a copy of ``examples/``."""
    if path not in _PAGES:
        work = tmp_path_factory.mktemp(path.stem.replace(".", "_"))
        shutil.copytree(ROOT / "examples", work / "examples")
        blocks = [b for b in BLOCKS if b.path == path]
        spec = work / ".blocks.json"
        spec.write_text(
            json.dumps(
                [
                    {"id": b.id, "lang": b.lang, "code": b.code, "skip": b.marker == "skip"}
                    for b in blocks
                ]
            )
        )
        env = dict(os.environ)
        env["PATH"] = f"{_bin_dir(tmp_path_factory)}{os.pathsep}{env.get('PATH', '')}"
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        proc = subprocess.run(
            [sys.executable, __file__, str(spec)],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"the block runner failed on {path}:\n{proc.stderr}")
        _PAGES[path] = json.loads((work / ".results.json").read_text())
    return _PAGES[path]


def run_blocks(spec_path: str) -> None:
    """The runner (a subprocess): every block of one page, in order, in one namespace."""
    blocks = json.loads(Path(spec_path).read_text())
    namespace: dict = {"__name__": "__main__"}
    results = []
    for b in blocks:
        result = {"stdout": "", "error": None, "status": 0}
        if b["skip"]:
            pass
        elif b["lang"] in PYTHON_LANGS:
            buf = io.StringIO()
            try:
                with contextlib.redirect_stdout(buf):
                    exec(compile(b["code"], f"{b['id']} (python block)", "exec"), namespace)
            except BaseException:
                result["error"] = traceback.format_exc()
            result["stdout"] = buf.getvalue()
        else:
            proc = subprocess.run(
                ["bash", "-c", "set -eo pipefail\npip() { :; }\n" + b["code"]],
                capture_output=True,
                text=True,
                timeout=300,
            )
            result.update(stdout=proc.stdout, status=proc.returncode, error=proc.stderr)
        results.append(result)
    (Path(spec_path).parent / ".results.json").write_text(json.dumps(results))


def _check_output(block: Block, out: str) -> None:
    if block.output is None:
        return
    expected = [ln.rstrip() for ln in block.output.code.rstrip("\n").splitlines()]
    got = [ln.rstrip() for ln in out.rstrip("\n").splitlines()]
    assert got == expected, (
        f"{block.id}: output differs from the block at line {block.output.line}:\n" + out
    )


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_markdown_block(block: Block, tmp_path_factory) -> None:
    if block.marker == "skip":
        pytest.skip(block.reason)
    page = [b for b in BLOCKS if b.path == block.path]
    result = _page_results(block.path, tmp_path_factory)[page.index(block)]
    if block.lang in PYTHON_LANGS:
        assert result["error"] is None, f"{block.id} raised:\n{result['error']}"
    else:
        last = block.code.rstrip().splitlines()[-1] if block.code.strip() else ""
        m = _EXIT.search(last)
        expected_status = int(m.group(1)) if m else 0
        assert result["status"] == expected_status, (
            f"{block.id}: exit status {result['status']}, expected {expected_status}\n"
            f"stdout:\n{result['stdout']}\nstderr:\n{result['error']}"
        )
    _check_output(block, result["stdout"])


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


if __name__ == "__main__":
    run_blocks(sys.argv[1])


def _hooks():
    import importlib.util

    spec = importlib.util.spec_from_file_location("mkdocs_hooks", ROOT / "scripts/mkdocs_hooks.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_metric_catalogue_covers_the_registry() -> None:
    from ranklens._names._families import ALIASES, FAMILIES

    text = _hooks().catalogue_markdown()
    rows = {ln.split("|")[1].strip() for ln in text.splitlines() if ln.startswith("| [`")}
    assert rows == {f"[`{name}`](#{_hooks_anchor(text, name)})" for name in FAMILIES}
    for alias in ALIASES:
        assert f"`{alias}`" in text, alias
    # The other tools' names, as their own documentation spells them.
    row = {ln.split("|")[1].strip(): ln for ln in text.splitlines() if ln.startswith("| [`")}
    precision = next(v for k, v in row.items() if k.startswith("[`precision`]"))
    assert "`P_k`" in precision and "`set_P`" in precision  # trec_eval
    assert "`P@k`" in precision and "`SetP`" in precision  # ir_measures
    assert precision.rstrip(" |").endswith("`precision`")  # ranx
    r_prec = next(v for k, v in row.items() if k.startswith("[`r_precision`]"))
    assert "`Rprec`" in r_prec and "`r-precision`" in r_prec
    iprec_avg = next(v for k, v in row.items() if k.startswith("[`iprec_avg`]"))
    assert "`11pt_avg`" in iprec_avg


def _hooks_anchor(text: str, name: str) -> str:
    m = re.search(rf"\| \[`{re.escape(name)}`\]\(#(\w+)\)", text)
    assert m, name
    return m.group(1)


def test_links_are_rewritten_for_the_site() -> None:
    rewrite = _hooks().rewrite_links
    assert rewrite("[d](docs/distributed.md#x)", "BENCHMARKS.md", "benchmarks.md") == (
        "[d](distributed.md#x)"
    )
    assert rewrite("[b](../BENCHMARKS.md)", "docs/distributed.md", "distributed.md") == (
        "[b](benchmarks.md)"
    )
    assert rewrite("[d](../docs/distributed.md)", "benches/README.md", "benches/README.md") == (
        "[d](../distributed.md)"
    )
    kept = "[s](scripts/x.py) [w](https://example.org/a.md)"
    assert rewrite(kept, "BENCHMARKS.md", "benchmarks.md") == kept


def test_docstrings_become_markdown() -> None:
    md = _hooks().docstring_markdown
    assert md("see ``P_5`` and :mod:`ranklens.metrics.ndcg`::") == (
        "see `P_5` and `ranklens.metrics.ndcg`:"
    )
    # Formula stars and underscores are text; *emphasis* and list bullets stay.
    assert md("a*rel_ret + 2**L, *judged* only") == r"a\*rel\_ret + 2\*\*L, *judged* only"
    assert md("Cases:\n* one\n  more\n* two") == "Cases:\n\n* one\n  more\n* two"
