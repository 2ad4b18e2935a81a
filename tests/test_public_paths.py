"""Every import path and script users rely on, so that a move inside the package
cannot break them."""

from __future__ import annotations

import importlib
import importlib.metadata
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = None

PUBLIC = {
    "ranklens": [
        "BatchScores",
        "Comparison",
        "Explanation",
        "GateResult",
        "JudgmentResults",
        "Metric",
        "ParseError",
        "Prefs",
        "Qrels",
        "RanklensInputError",
        "RanklensWarning",
        "Results",
        "Run",
        "Scorer",
        "Scores",
        "UnknownMetricError",
        "__version__",
        "compare",
        "evaluate",
        "evaluate_dense",
        "evaluate_files",
        "evaluate_flat",
        "evaluate_jg",
        "evaluate_prefs",
        "evaluate_topk",
        "explain",
        "gate",
        "knn_recall",
        "parse_metric",
        "parse_metrics",
        "read_qrels_jg",
        "relstring",
        "report",
        "score",
        "score_batch",
        "score_frame",
        "score_labels",
    ],
    "ranklens.errors": [
        "ParseError",
        "RanklensInputError",
        "RanklensWarning",
        "UnknownMetricError",
    ],
    "ranklens.compare": [
        "COLUMNS",
        "CORRECTIONS",
        "TESTS",
        "Comparison",
        "PairResult",
        "adjust_pvalues",
        "cohens_d",
        "compare",
        "student_t_ppf",
        "student_t_sf",
        "student_t_two_sided",
        "studentized_range_sf",
        "ttest_paired_p",
        "tukey_p",
        "wilcoxon_p",
    ],
    "ranklens.compat.pytrec_eval": ["RelevanceEvaluator", "supported_measures"],
    "ranklens.compat.autorag": [
        "retrieval_f1",
        "retrieval_map",
        "retrieval_mrr",
        "retrieval_ndcg",
        "retrieval_precision",
        "retrieval_recall",
    ],
    "ranklens.compat.axion": [
        "HitRateAtK",
        "MeanReciprocalRank",
        "NDCGAtK",
        "PrecisionAtK",
        "RecallAtK",
    ],
    "ranklens.compat.sklearn": ["dcg_score", "ndcg_score"],
    "ranklens.compat.ir_measures": ["RanklensProvider", "install"],
    "ranklens.metrics": ["aggregate", "aggregate_reference", "evaluate_reference"],
    "ranklens.plots": ["interpolated_precision"],
    "ranklens.dask": ["evaluate"],
    "ranklens.spark": ["evaluate"],
    "ranklens.cli": ["main", "trec_eval_main"],
    "ranklens.testing": ["assert_no_regression"],
}

SCRIPTS = {"ranklens": "ranklens.cli:main", "ranklens-trec-eval": "ranklens.cli:trec_eval_main"}


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_public_names_import(module):
    mod = importlib.import_module(module)
    missing = [name for name in PUBLIC[module] if not hasattr(mod, name)]
    assert missing == []


def test_top_level_all_is_the_public_face():
    import ranklens

    assert sorted(ranklens.__all__) == sorted(PUBLIC["ranklens"])


@pytest.mark.skipif(tomllib is None, reason="tomllib needs Python 3.11")
def test_console_scripts_declared_and_resolvable():
    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    declared = tomllib.loads(pyproject.read_text())["project"]["scripts"]
    assert declared == SCRIPTS
    for target in declared.values():
        module, func = target.split(":")
        assert callable(getattr(importlib.import_module(module), func))


def test_installed_console_scripts_run():
    try:
        eps = importlib.metadata.entry_points(group="console_scripts")
    except TypeError:  # Python 3.9
        eps = importlib.metadata.entry_points().get("console_scripts", [])
    ours = {ep.name: ep.value for ep in eps if ep.name in SCRIPTS}
    if not ours:
        pytest.skip("ranklens is not installed as a distribution (source checkout on sys.path)")
    assert ours == SCRIPTS
    scripts_dir = Path(sys.executable).parent
    out = subprocess.run(
        [str(scripts_dir / "ranklens-trec-eval"), "-v"], capture_output=True, text=True
    )
    assert out.returncode == 0 and "trec_eval version 10.0" in out.stderr
    out = subprocess.run([str(scripts_dir / "ranklens"), "--help"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("usage: ranklens")


def test_python_dash_m_cli():
    out = subprocess.run(
        [sys.executable, "-m", "ranklens.cli", "trec_eval", "-v"], capture_output=True, text=True
    )
    assert out.returncode == 0 and "trec_eval version 10.0" in out.stderr


def test_import_loads_no_format_reader_command_or_lazy_module():
    code = (
        "import sys, ranklens\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('ranklens'))\n"
        "print(' '.join(loaded))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(out.stdout.split())
    lazy = {"ranklens._arrays", "ranklens._explain", "ranklens._gate", "ranklens._score"}
    lazy |= {"ranklens._stream", "ranklens.cli", "ranklens._prefs", "ranklens._distributed"}
    lazy |= {"ranklens._report"}
    lazy |= {f"ranklens._io.{m}" for m in ("_arrow", "_frames", "_json", "_records")}
    assert loaded & lazy == set()


def test_lazy_names_resolve_and_compare_stays_a_function():
    code = (
        "import ranklens, ranklens.compare\n"
        "from ranklens.compare import cohens_d\n"
        "assert callable(ranklens.compare) and not isinstance(ranklens.compare, type(ranklens))\n"
        "for name in ranklens.__all__:\n"
        "    assert getattr(ranklens, name) is not None, name\n"
        "assert set(ranklens.__all__) <= set(dir(ranklens))\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.stdout.strip() == "ok", out.stderr
