"""ranklens: trec_eval's exact numbers, at memory-bus speed.

>>> import ranklens
>>> qrels = {"q1": {"d1": 2, "d2": 0, "d3": 1}}
>>> run = {"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.1}}
>>> res = ranklens.evaluate(qrels, run, ["ndcg@10", "map", "P@2"])
>>> round(res["map"], 4)
0.8333
"""

from ranklens._data import Qrels, Run
from ranklens._evaluate import evaluate
from ranklens._explain import Explanation, explain
from ranklens._names import Metric, parse_metric, parse_metrics
from ranklens._ranklens import __version__
from ranklens._relstring import relstring
from ranklens._results import BatchScores, Results, Scores
from ranklens._score import Scorer, score, score_batch, score_frame, score_labels
from ranklens._stream import evaluate_files
from ranklens.compare import Comparison, compare
from ranklens.errors import ParseError, RanklensInputError, RanklensWarning, UnknownMetricError

__all__ = [
    "BatchScores",
    "Comparison",
    "Explanation",
    "Metric",
    "ParseError",
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
    "evaluate_files",
    "explain",
    "parse_metric",
    "parse_metrics",
    "relstring",
    "score",
    "score_batch",
    "score_frame",
    "score_labels",
]
