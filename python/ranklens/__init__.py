"""ranklens: trec_eval's exact numbers, at memory-bus speed.

>>> import ranklens
>>> qrels = {"q1": {"d1": 2, "d2": 0, "d3": 1}}
>>> run = {"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.1}}
>>> res = ranklens.evaluate(qrels, run, ["ndcg@10", "map", "P@2"])
>>> round(res["map"], 4)
0.8333
"""

from ranklens._data import Qrels, Run
from ranklens._dense import evaluate_dense, evaluate_flat, evaluate_topk, knn_recall
from ranklens._evaluate import evaluate
from ranklens._explain import Explanation, explain
from ranklens._names import Metric, parse_metric, parse_metrics
from ranklens._ranklens import __version__
from ranklens._relstring import relstring
from ranklens._results import Results
from ranklens._score import score, score_batch, score_frame
from ranklens._stream import evaluate_files
from ranklens.compare import Comparison, compare
from ranklens.errors import ParseError, RanklensInputError, UnknownMetricError

__all__ = [
    "Comparison",
    "Explanation",
    "Metric",
    "ParseError",
    "Qrels",
    "RanklensInputError",
    "Results",
    "Run",
    "UnknownMetricError",
    "__version__",
    "compare",
    "evaluate",
    "evaluate_dense",
    "evaluate_files",
    "evaluate_flat",
    "evaluate_topk",
    "explain",
    "knn_recall",
    "parse_metric",
    "parse_metrics",
    "relstring",
    "score",
    "score_batch",
    "score_frame",
]
