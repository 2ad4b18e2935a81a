"""Significance testing of several runs on the same queries: see :func:`compare`."""

from __future__ import annotations

from ranklens.compare import _compare
from ranklens.compare._compare import CORRECTIONS, TESTS, compare
from ranklens.compare._comparison import COLUMNS, Comparison, PairResult
from ranklens.compare._stats import (
    adjust_pvalues,
    cohens_d,
    student_t_ppf,
    student_t_sf,
    student_t_two_sided,
    studentized_range_sf,
    ttest_paired_p,
    tukey_p,
    wilcoxon_p,
)

__doc__ = _compare.__doc__

__all__ = [
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
]
