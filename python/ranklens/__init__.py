"""ranklens: trec_eval's exact numbers, at memory-bus speed.

>>> import ranklens
>>> qrels = {"q1": {"d1": 2, "d2": 0, "d3": 1}}
>>> run = {"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.1}}
>>> res = ranklens.evaluate(qrels, run, ["ndcg@10", "map", "P@2"])
>>> round(res["map"], 4)
0.8333
"""

from typing import TYPE_CHECKING, Any

from ranklens._data import Qrels, Run
from ranklens._evaluate import BatchScores, Results, Scores, evaluate
from ranklens._names import Metric, parse_metric, parse_metrics
from ranklens._ranklens import __version__
from ranklens.compare import Comparison, compare
from ranklens.errors import ParseError, RanklensInputError, RanklensWarning, UnknownMetricError

# Why lazy: `import ranklens` is paid by every script and worker process, most of
# which only evaluate.  These names load their module on first use (PEP 562); each
# is then bound here, so the lookup happens once.  Not `compare`: it is also the
# name of the subpackage `ranklens.compare`, and a later `import ranklens.compare`
# (or `from ranklens.compare import ...`) would rebind `ranklens.compare` to the
# module unless the subpackage is imported before the function is bound, as here.
_LAZY = {
    "evaluate_dense": "ranklens._arrays",
    "evaluate_flat": "ranklens._arrays",
    "evaluate_topk": "ranklens._arrays",
    "knn_recall": "ranklens._arrays",
    "Explanation": "ranklens._explain",
    "explain": "ranklens._explain",
    "GateResult": "ranklens._gate",
    "gate": "ranklens._gate",
    "relstring": "ranklens._explain",
    "report": "ranklens._report",
    "Scorer": "ranklens._score",
    "score": "ranklens._score",
    "score_batch": "ranklens._score",
    "score_frame": "ranklens._score",
    "score_labels": "ranklens._score",
    "evaluate_files": "ranklens._stream",
    "JudgmentResults": "ranklens._prefs",
    "Prefs": "ranklens._prefs",
    "evaluate_jg": "ranklens._prefs",
    "evaluate_prefs": "ranklens._prefs",
    "read_qrels_jg": "ranklens._prefs",
}

if TYPE_CHECKING:  # pragma: no cover
    from ranklens._arrays import evaluate_dense, evaluate_flat, evaluate_topk, knn_recall
    from ranklens._explain import Explanation, explain, relstring
    from ranklens._gate import GateResult, gate
    from ranklens._prefs import JudgmentResults, Prefs, evaluate_jg, evaluate_prefs, read_qrels_jg
    from ranklens._report import report
    from ranklens._score import Scorer, score, score_batch, score_frame, score_labels
    from ranklens._stream import evaluate_files


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'ranklens' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
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
]
