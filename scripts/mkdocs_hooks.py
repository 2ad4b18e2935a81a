"""mkdocs hooks (mkdocs.yml ``hooks:``): the pages built from the project's own sources.

* ``metrics.md``, the metric catalogue, is generated at every build from the metric
  registry (``ranklens._names._families``: every family, its cutoff rule, relevance
  level, aggregation, parameters and their ranges, every accepted spelling), the
  spellings each other tool uses (trec_eval from ``ranklens trec_eval``'s measure
  table, ir_measures from the ranklens provider's supported measures, ranx from
  ranx's own ``metric_switch``), and each family's definition and edge cases from the
  docstring of its reference module (``ranklens.metrics.<stem>``).  No copy is checked
  in, so it cannot drift from the code.
* ``benchmarks.md`` is BENCHMARKS.md and ``benches/README.md`` is the benchmark
  README, included as they are (with their plot), so the report has one source.
* Links between these files are written for the repository (``docs/x.md``,
  ``../BENCHMARKS.md``); they are rewritten to the site's pages.

Needs ranklens importable (``paths`` or an installed wheel) and, for the spellings,
ir_measures and ranx (both in the ``test`` extra).
"""

from __future__ import annotations

import importlib
import inspect
import posixpath
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

# Repository files shown on the site: repository path -> site path (docs_dir relative).
INCLUDED = {
    "BENCHMARKS.md": "benchmarks.md",
    "benches/README.md": "benches/README.md",
    "benches/bench_scaling.png": "benches/bench_scaling.png",
}
CATALOGUE = "metrics.md"
_LINK = re.compile(r"(\]\()([^)#\s]+)((?:#[^)\s]*)?\))")


# --------------------------------------------------------------------------
# mkdocs events


def on_files(files: Any, config: Any) -> Any:
    from mkdocs.structure.files import File

    files.append(File.generated(config, CATALOGUE, content=catalogue_markdown()))
    for repo_path, site_path in INCLUDED.items():
        files.append(File.generated(config, site_path, abs_src_path=str(ROOT / repo_path)))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    site_path = page.file.src_uri
    repo_path = next((r for r, s in INCLUDED.items() if s == site_path), f"docs/{site_path}")
    return rewrite_links(markdown, repo_path, site_path)


# --------------------------------------------------------------------------
# Links


def _site_path(repo_path: str) -> str | None:
    if repo_path in INCLUDED:
        return INCLUDED[repo_path]
    if repo_path.startswith("docs/"):
        return repo_path[len("docs/") :]
    return None


def rewrite_links(markdown: str, repo_path: str, site_path: str) -> str:
    """Relative links of a page written at ``repo_path``, made relative to ``site_path``.

    A link to a repository file that is on the site points to its page; any other
    relative link is left for mkdocs to check.
    """

    def fix(m: re.Match[str]) -> str:
        target = m.group(2)
        if "://" in target or target.startswith(("/", "mailto:")):
            return m.group(0)
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(repo_path), target))
        on_site = _site_path(resolved)
        if on_site is None:
            return m.group(0)
        rel = posixpath.relpath(on_site, posixpath.dirname(site_path) or ".")
        return f"{m.group(1)}{rel}{m.group(3)}"

    return _LINK.sub(fix, markdown)


# --------------------------------------------------------------------------
# The metric catalogue


def _trec_eval_spellings() -> dict[str, list[str]]:
    """family -> trec_eval measure names (as ``ranklens trec_eval`` prints them)."""
    from ranklens._names import Metric
    from ranklens.cli._trec_eval_args import _params
    from ranklens.cli._trec_eval_measures import MEASURES, Opts

    forms = {"cut_long": "{}_k", "cut_double": "{}_x"}
    out: dict[str, list[str]] = {}
    for me in MEASURES:
        # preference and judgment-group measures read other -R formats: no family
        if me.rel not in ("qrels", "any") or me.build is None:
            continue
        try:
            slots = me.build(me, _params(me, []), Opts())
        except (TypeError, AttributeError, ValueError) as e:
            raise RuntimeError(f"trec_eval measure {me.name}: {e!r}") from e
        for slot in slots:
            src = slot.source
            if isinstance(src, tuple) and src[0] == "11pt":
                src = Metric("iprec_avg")
            if isinstance(src, tuple) and src[0] == "const" and me.name == "num_q":
                src = Metric("num_q")
            if isinstance(src, Metric):
                names = out.setdefault(src.family, [])
                name = forms.get(me.init, "{}").format(me.name)
                if name not in names:
                    names.append(name)
    return out


def _ir_measures_spellings() -> dict[str, list[str]]:
    """family -> ir_measures measures the ranklens provider computes with it."""
    from ir_measures.providers.base import NOT_PROVIDED, Choices

    from ranklens.compat.ir_measures import RanklensProvider

    samples: dict[str, list[Any]] = {
        "cutoff": [NOT_PROVIDED, 10],
        "recall": [0.1],
        "beta": [1.0],
        "relative": [NOT_PROVIDED, True],
        "rel": [NOT_PROVIDED, 1],
        "max_rel": [3],  # the C/W/L measures' gain scale (required)
    }
    provider = RanklensProvider()
    out: dict[str, list[str]] = {}
    for template in RanklensProvider.SUPPORTED_MEASURES:
        options: list[dict[str, Any]] = [{}]
        for param, spec in template.params.items():
            if isinstance(spec, Choices):
                values = [v for v in spec.choices if v is not NOT_PROVIDED]
            else:
                values = samples.get(param, [])
            if values:
                options = [{**o, param: v} for o in options for v in values]
        found: list[tuple[str, str, bool]] = []  # (name, family, rel given)
        for params in options:
            params = {k: v for k, v in params.items() if v is not NOT_PROVIDED}
            measure = type(template)(**params)
            metric = RanklensProvider._metric(measure)
            if metric is not None and _supports(provider, measure):
                name = str(measure).replace("@10", "@k")
                found.append((name, metric.family, "rel" in params))
        # rel= is shown only where it changes the metric (NumRet(rel=1): num_rel_ret).
        plain = {family for _, family, rel in found if not rel}
        for name, family, rel in found:
            names = out.setdefault(family, [])
            if (not rel or family not in plain) and name not in names:
                names.append(name)
    return out


def _supports(provider: Any, measure: Any) -> bool:
    try:
        return bool(provider.supports(measure))
    except AssertionError:  # ir_measures' own check of a required parameter (ERR's cutoff)
        return False


def _ranx_spellings(aliases: dict[str, str]) -> dict[str, list[str]]:
    """family -> the registry's spellings that ranx itself accepts."""
    from ranx.metrics import metric_switch

    out: dict[str, list[str]] = {}
    for alias, family in aliases.items():
        try:
            metric_switch(alias)
        except ValueError:
            continue
        out.setdefault(family, []).append(alias)
    return out


def _definition_module(family: str, functions: dict[str, Any]) -> Any:
    """The reference module whose docstring defines ``family``.

    A family's reference function lives in ``ranklens.metrics.<stem>``; nDCG and DCG
    with custom gains are computed by ``gains``, which wraps ``ndcg``'s definitions.
    """
    module = importlib.import_module(functions[family].__module__)
    if module.__name__ == "ranklens.metrics.gains":
        plain = importlib.import_module("ranklens.metrics.ndcg")
        if hasattr(plain, family):
            return plain
    return module


def docstring_markdown(doc: str) -> str:
    """A reST-flavoured docstring as Markdown: ``code`` and :role:`x` to code spans,
    bare asterisks escaped (``2**L``), a blank line before each list."""
    parts = re.split(r"(``.+?``)", doc, flags=re.S)
    for i, part in enumerate(parts):
        if i % 2:
            parts[i] = "`" + part[2:-2] + "`"
            continue
        part = re.sub(r":(?:mod|func|class|meth|attr|data|exc):`~?([^`]+)`", r"`\1`", part)
        part = re.sub(r"(?m)^(\s*)\* ", lambda m: m.group(1) + "\x00 ", part)
        # *emphasis* stays (a star after a space, before a word); other stars are text.
        part = re.sub(r"(?<![\w*])\*(?=\w)([^*\n]+?)(?<=\w)\*(?![\w*])", "\x01\\1\x01", part)
        part = part.replace("*", r"\*").replace("_", r"\_")
        part = part.replace("\x00", "*").replace("\x01", "*")
        parts[i] = part
    lines = re.sub(r"(?m)(\S)::$", r"\1:", "".join(parts)).splitlines()
    out: list[str] = []
    for line in lines:
        starts_list = line.lstrip().startswith(("* ", "- ")) and not line.startswith(" ")
        if starts_list and out and out[-1].strip() and not out[-1].lstrip().startswith("*"):
            if not out[-1].startswith(" "):
                out.append("")
        out.append(line)
    return "\n".join(out)


def _param_text(family: Any, ranges: dict[tuple[str, str], tuple], range_text: Any) -> str:
    if not family.params:
        return ""
    items = []
    for name, default in family.params.items():
        d = int(default) if float(default).is_integer() else default
        text = f"`{name}={d}`"
        if (family.name, name) in ranges:
            text += f" in {range_text(*ranges[(family.name, name)])}"
        items.append(text)
    return ", ".join(items)


def _escape(text: str) -> str:
    return text.replace("|", "/").replace("*", r"\*").replace("_", r"\_")


def _codes(names: list[str]) -> str:
    return ", ".join(f"`{n}`" for n in names) if names else "-"


def catalogue_markdown() -> str:
    from ranklens._names._families import (
        ALIASES,
        FAMILIES,
        PARAM_RANGES,
        param_range_text,
    )
    from ranklens.metrics import METRIC_FUNCTIONS

    missing = sorted(set(FAMILIES) - set(METRIC_FUNCTIONS))
    if missing:
        raise RuntimeError(f"families without a reference function: {missing}")
    trec = _trec_eval_spellings()
    irm = _ir_measures_spellings()
    ranx = _ranx_spellings(ALIASES)
    spellings: dict[str, list[str]] = {}
    for alias, family in ALIASES.items():
        spellings.setdefault(family, []).append(alias)

    cutoff_text = {"none": "no", "optional": "optional `@k`", "required": "required `@k`"}
    aggregate_text = {
        "mean": "mean",
        "sum": "sum",
        "gmean": "geometric mean",
    }

    modules: dict[str, Any] = {}
    by_module: dict[str, list[str]] = {}
    for name in FAMILIES:
        module = _definition_module(name, METRIC_FUNCTIONS)
        modules[module.__name__] = module
        by_module.setdefault(module.__name__, []).append(name)

    out = [
        "# Metric catalogue",
        "",
        "Every metric ranklens computes, generated from its metric registry when this",
        "site is built.  Names are case-insensitive; `@k` sets a cutoff (`ndcg@5,10,20`",
        "asks for several); `(rel=2)` sets a binary metric's own relevance level; named",
        "parameters go in the same parentheses (`rbp(p=0.8)`, `ndcg(gain2=9)@10`).  Every",
        "spelling below is accepted by `evaluate`, the `Scorer`, the command line and",
        "`parse_metric`; the trec_eval, ir_measures and ranx columns are the names those",
        "tools use for the same number (trec_eval's `P_k` also as `P.k` and `P_5,10`).",
        "",
        "| metric | definition | trec_eval | ir_measures | ranx |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, fam in FAMILIES.items():
        anchor = _definition_module(name, METRIC_FUNCTIONS).__name__.rsplit(".", 1)[1]
        out.append(
            f"| [`{name}`](#{anchor}) | {_escape(fam.summary)} | "
            f"{_codes(trec.get(name, []))} | {_codes(irm.get(name, []))} | "
            f"{_codes(ranx.get(name, []))} |"
        )
    out += [
        "",
        "Relevance: a label >= the relevance level (default 1; `relevance_level=` or a",
        'metric\'s `rel=`; `"positive"`: any label > 0) is relevant; negative labels are',
        'trec_eval\'s "in the pool but unjudged".  Metrics marked *graded* below use the',
        "label itself and ignore the level.",
        "",
    ]
    for module_name, names in by_module.items():
        module = modules[module_name]
        doc = inspect.getdoc(module) or ""
        first, _, body = doc.partition("\n\n")
        title = " ".join(first.split())
        stem = module_name.rsplit(".", 1)[1]
        out += [f"## {docstring_markdown(title.rstrip('.'))} {{#{stem}}}", ""]
        out += ["| name | cutoff | relevance | over queries | parameters | spellings |"]
        out += ["| --- | --- | --- | --- | --- | --- |"]
        for name in names:
            fam = FAMILIES[name]
            rel = "binary: level or `rel=`" if fam.binary else "graded"
            if getattr(fam, "subtopics", False):
                rel += "; subtopic judgments"
            out.append(
                f"| `{name}` | {cutoff_text.get(fam.cutoff, fam.cutoff)} | {rel} | "
                f"{aggregate_text.get(fam.aggregate, fam.aggregate)} | "
                f"{_param_text(fam, PARAM_RANGES, param_range_text) or '-'} | "
                f"{_codes(spellings.get(name, []))} |"
            )
        out += ["", docstring_markdown(body.strip()), ""]
        out += [f"Reference implementation: `{module_name}`.", ""]
        # A module that computes some of these families on top of this one (custom gains).
        extra = sorted({METRIC_FUNCTIONS[n].__module__ for n in names} - {module_name})
        for other_name in extra:
            other = importlib.import_module(other_name)
            other_first, _, other_body = (inspect.getdoc(other) or "").partition("\n\n")
            out += [f"### {docstring_markdown(' '.join(other_first.split()).rstrip('.'))}", ""]
            out += [docstring_markdown(other_body.strip()), ""]
            out += [f"Reference implementation: `{other_name}`.", ""]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(catalogue_markdown())
