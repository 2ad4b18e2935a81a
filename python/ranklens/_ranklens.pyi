# Type stub of the native module (checked against the built module by
# `python -m mypy.stubtest ranklens._ranklens` in `make lint`, and by tests/test_stub.py).
from typing import Any, final

import numpy as np
import numpy.typing as npt
from typing_extensions import disjoint_base

__all__ = [
    "DictJudgments",
    "RowScorer",
    "__version__",
    "_object_reads",
    "autorag_retrieval",
    "autorag_token",
    "decode_vocab",
    "dict_judgments",
    "encode_columns",
    "encode_groups",
    "encode_mapping",
    "encode_rows",
    "evaluate",
    "evaluate_dense",
    "evaluate_dict",
    "evaluate_dict_all",
    "evaluate_flat",
    "evaluate_prefs",
    "evaluate_topk",
    "evaluate_trec_stream",
    "knn_recall",
    "knn_recall_distances",
    "nested_dict",
    "pack_ids",
    "read_trec",
    "stats_resample",
    "studentized_range_sf",
    "write_trec",
]

__version__: str
# Whether object fields are read without C-API calls here (src/bindings/layout/).
_object_reads: bool

_Encoded = tuple[
    npt.NDArray[np.uint8],
    npt.NDArray[np.int64],
    npt.NDArray[np.int64],
    npt.NDArray[np.uint8],
    npt.NDArray[np.int64],
    npt.NDArray[np.uint32],
    npt.NDArray[np.float64],
    npt.NDArray[np.uint32],
]

def encode_mapping(
    data: object, kind: str, round_f32: bool = False, pytrec_types: bool = False
) -> _Encoded: ...
def encode_groups(items: object) -> _Encoded: ...
def evaluate(
    qrels: _Encoded,
    run: _Encoded,
    metrics: list[tuple[str, int | None, float | None, list[tuple[str, float]]]],
    relevance_level: float,
    threads: int | None = None,
    judged_only: bool = False,
    max_docs: int | None = None,
    ties: str = "trec",
    subtopics: tuple[npt.NDArray[np.int64], npt.NDArray[np.uint32], npt.NDArray[np.float64]]
    | None = None,
    miss_nan: bool = False,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64], npt.NDArray[np.int64]]: ...
def decode_vocab(bytes: npt.NDArray[np.uint8], offsets: npt.NDArray[np.int64]) -> list[str]: ...
def nested_dict(
    rows: list[str],
    columns: list[str],
    values: npt.NDArray[np.float64],
    like: dict[str, Any] | None = None,
) -> dict[str, dict[str, float]]: ...
def dict_judgments(arrays: _Encoded) -> DictJudgments | None: ...
def evaluate_dict(
    judged: DictJudgments,
    qrels: _Encoded,
    scores: Any,
    metrics: list[tuple[str, int | None, float | None, list[tuple[str, float]]]],
    relevance_level: float,
    judged_only: bool,
) -> tuple[list[str], npt.NDArray[np.float64]] | None: ...
def evaluate_dict_all(
    judged: DictJudgments,
    qrels: _Encoded,
    scores: Any,
    metrics: list[tuple[str, int | None, float | None, list[tuple[str, float]]]],
    relevance_level: float,
    threads: int | None,
    judged_only: bool,
    miss_nan: bool,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_], list[str]] | None: ...
def stats_resample(
    diffs: npt.NDArray[np.float64],
    test: str,
    n_resamples: int,
    seed: int,
    exact: bool | None = None,
    confidence: float = 0.95,
    threads: int | None = None,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]: ...
def studentized_range_sf(
    q: npt.NDArray[np.float64], k: int, df: float, threads: int | None = None
) -> npt.NDArray[np.float64]: ...
def read_trec(
    path: str,
    kind: str,
    round_f32: bool = False,
    max_line: int = ...,  # 1 MiB (MAX_LINE in the core)
) -> tuple[_Encoded, str | None]: ...
def write_trec(
    path: str,
    kind: str,
    side: _Encoded,
    tag: str | None = None,
    subtopics: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> None: ...
def encode_columns(
    kind: str,
    chunks: list[tuple[tuple[object, ...], tuple[object, ...], npt.NDArray[np.float64]]],
    names: tuple[str, str, str],
    round_f32: bool = False,
) -> _Encoded: ...
def pack_ids(
    ids: object, column: str, query: bool = False
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.int64]]: ...
def encode_rows(rows: object, kind: str) -> _Encoded: ...
def autorag_retrieval(
    retrieval_gt: object, retrieved_ids: object, compensated: bool, threads: int | None = None
) -> npt.NDArray[np.float64]: ...
def autorag_token(
    retrieved_contents: object, retrieval_gt_contents: object, threads: int | None = None
) -> npt.NDArray[np.float64]: ...
def evaluate_trec_stream(
    qrels: _Encoded,
    run_path: str,
    metrics: list[tuple[str, int | None, float | None, list[tuple[str, float]]]],
    relevance_level: float,
    threads: int | None = None,
    judged_only: bool = False,
    max_docs: int | None = None,
    ties: str = "trec",
    chunk_rows: int = 1000000,
    round_f32: bool = False,
    max_line: int = ...,  # 1 MiB (MAX_LINE in the core),
    miss_nan: bool = False,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64], list[str], str | None, int]: ...
def evaluate_prefs(
    jg: npt.NDArray[np.uint32],
    jsg: npt.NDArray[np.uint32],
    doc: npt.NDArray[np.uint32],
    level: npt.NDArray[np.float64],
    jud_offsets: npt.NDArray[np.uint64],
    ranked: npt.NDArray[np.uint32],
    ranked_offsets: npt.NDArray[np.uint64],
) -> npt.NDArray[np.float64]: ...

@final
class DictJudgments: ...

@disjoint_base
class RowScorer:
    def __new__(
        cls,
        metrics: list[tuple[str, int | None, float | None, list[tuple[str, float]]]],
        names: list[str],
        result_type: type,
        level: float,
        miss_nan: bool,
        duplicates_first: bool,
        empty_nan: bool,
        warn_level: float,
        warning: type[Warning],
        warn_text: str,
        judged_only: bool = False,
        max_docs: int | None = None,
        ties: str = "trec",
    ) -> RowScorer: ...
    def __call__(self, retrieved: object, relevant: object) -> dict[str, float]: ...
    def _batch(
        self,
        retrieved_lists: object,
        relevant_lists: object,
        threads: int | None = None,
        chunk_rows: int | None = None,
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]: ...

def evaluate_dense(
    scores: npt.NDArray[Any],
    labels: npt.NDArray[Any],
    metrics: list[tuple[str, int | None, float | None, list[tuple[str, float]]]],
    relevance_level: float,
    ties: str,
    empty: str,
    scores_half: str = "",
    mask: npt.NDArray[np.uint8] | None = None,
    lengths: npt.NDArray[np.int64] | None = None,
    threads: int | None = None,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]: ...
def evaluate_topk(
    ids: npt.NDArray[np.int64],
    relevant: npt.NDArray[Any],
    relevant_kind: str,
    metrics: list[tuple[str, int | None, float | None, list[tuple[str, float]]]],
    relevance_level: float,
    empty: str,
    threads: int | None = None,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]: ...
def knn_recall(
    approx: npt.NDArray[np.int64],
    exact: npt.NDArray[np.int64],
    k: int,
    threads: int | None = None,
) -> npt.NDArray[np.float64]: ...
def knn_recall_distances(
    approx: npt.NDArray[np.float64],
    exact: npt.NDArray[np.float64],
    k: int,
    epsilon: float,
    threads: int | None = None,
) -> npt.NDArray[np.float64]: ...
def evaluate_flat(
    scores: npt.NDArray[Any],
    labels: npt.NDArray[Any],
    indexes: npt.NDArray[np.int64],
    metrics: list[tuple[str, int | None, float | None, list[tuple[str, float]]]],
    relevance_level: float,
    ties: str,
    empty: str,
    scores_half: str = "",
    threads: int | None = None,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_], npt.NDArray[np.int64]]: ...
