"""The input rules every door shares, one function per kind of input: orderings,
masks, integer scores, id matrices, tolerances and ids that merge once written
as strings.

Invariants: each function either returns the input (or a checked view of it)
or raises :class:`~ranklens.errors.RanklensInputError` naming the argument and,
for arrays, the first offending row and column; none copies data that passes.

Why here and not in each door: a new door gets the same rule and the same words
by calling one function, not by remembering the rule.

Rejected: refusing every non-``Sequence`` ranking: generators, pandas columns
and arrays are ordered and common; the unordered containers are a short, closed
list.  Reading a float mask by truthiness: NaN is truthy, so a mask of NaN and
0.0 would keep the cells it meant to drop.
"""

from __future__ import annotations

from collections.abc import ItemsView, KeysView, Set, ValuesView
from typing import Any

import numpy as np

from ranklens.errors import RanklensInputError

#: Containers whose iteration order is not a ranking (hash order, or a dict
#: view that is not the object the caller ranked).
_UNORDERED = (Set, KeysView, ValuesView, ItemsView)
_EMPTY_UNORDERED: tuple[Any, ...] = (set(), frozenset(), {}.keys(), {}.values(), {}.items())
_UNORDERED_ITERS = frozenset(type(iter(x)) for x in _EMPTY_UNORDERED)

#: Integers past this magnitude are not all exact as float64.
EXACT_INT = 2**53


def check_ordered(x: Any, what: str) -> None:
    """Refuse ``x`` as a ranking when its iteration order is not one: a ``set``,
    a ``frozenset``, a dict's keys/values/items view or an iterator over one.
    A mapping (id -> score) is ranked by its scores and accepted."""
    if isinstance(x, _UNORDERED) or type(x) in _UNORDERED_ITERS:
        raise RanklensInputError(
            f"{what} is a {type(x).__name__}, which has no order: a ranking must be "
            "a list, a tuple, an array or a mapping id -> score (sorted(...) or list(...) "
            "of a container in ranked order)"
        )


def check_mask(mask: np.ndarray, name: str = "mask") -> np.ndarray:
    """A mask as ``uint8`` 0/1 (a view of a bool array, no copy).  Accepted: bool,
    and integers that are all 0 or 1; anything else (floats, NaN, strings,
    objects, datetimes, complex, numpy masked arrays) is refused naming the
    dtype, or the first cell that is not 0 or 1."""
    if isinstance(mask, np.ma.MaskedArray):
        raise RanklensInputError(
            f"{name} is a numpy masked array: its own mask would be ignored; pass "
            f"~{name}.mask (or {name}.filled(False)) as a plain bool array"
        )
    dt = mask.dtype
    if dt == np.bool_:
        return mask.view(np.uint8)
    if dt.kind not in "iu":
        raise RanklensInputError(
            f"{name} must be a bool array (True: a candidate) or integers 0/1, got dtype {dt}"
        )
    bad = (mask != 0) & (mask != 1)
    if bad.any():
        cell = tuple(int(i) for i in np.argwhere(bad)[0])
        raise RanklensInputError(
            f"{name} must hold 0 or 1 (or be bool), got {mask[cell].item()!r} at {_place(cell)}"
        )
    return (mask != 0).view(np.uint8)


def check_exact_scores(a: np.ndarray, name: str) -> None:
    """Refuse integer scores of magnitude above 2**53: read as float64, distinct
    scores would tie.  Floats and small integer dtypes pass without a look."""
    if a.dtype.kind not in "iu" or a.dtype.itemsize < 8 or a.size == 0:
        return
    if a.dtype.kind == "u":
        bad = a > EXACT_INT
    else:
        if -EXACT_INT <= int(a.min()) and int(a.max()) <= EXACT_INT:
            return
        bad = (a > EXACT_INT) | (a < -EXACT_INT)
    if not bad.any():
        return
    cell = tuple(int(i) for i in np.argwhere(bad)[0])
    raise RanklensInputError(
        f"{name}: the integer score {int(a[cell])} at {_place(cell)} is past 2**53, "
        "where float64 (in which scores are compared) cannot tell neighbouring "
        "integers apart; rescale the scores (or pass them as float64 if ties there "
        "are intended)"
    )


def _place(cell: tuple[int, ...]) -> str:
    if len(cell) == 2:
        return f"row {cell[0]}, column {cell[1]}"
    return f"index {cell[0] if len(cell) == 1 else cell}"


def int_rows(rows: Any, name: str, *, ragged: bool) -> np.ndarray:
    """A list of id lists as an int64 matrix (negative ids: padding), each id
    checked: a Python or numpy integer, never a bool, float or string (the
    error names row and column).  ``ragged``: rows of different lengths are
    padded with -1; else they are an error naming the row."""
    if isinstance(rows, (str, bytes)):
        raise RanklensInputError(f"{name} must be rows of integer ids, got {type(rows).__name__}")
    width = None
    for i, row in enumerate(rows):
        if isinstance(row, (str, bytes)) or not hasattr(row, "__len__"):
            raise RanklensInputError(
                f"{name}: row {i} must be a list of integer ids, got {type(row).__name__}"
            )
        check_ordered(row, f"{name}: row {i}")
        if width is None:
            width = len(row)
        elif len(row) != width and not ragged:
            raise RanklensInputError(
                f"{name}: row {i} has {len(row)} ids, row 0 has {width}: rows must be of "
                "one length (pad with -1)"
            )
        for j, v in enumerate(row):
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
                raise RanklensInputError(
                    f"{name}: row {i}, column {j}: ids are integers (-1: padding), got {v!r}"
                )
    n = len(rows)
    out = np.full((n, max((len(r) for r in rows), default=0)), -1, dtype=np.int64)
    for i, r in enumerate(rows):
        try:
            out[i, : len(r)] = r
        except OverflowError:
            raise RanklensInputError(
                f"{name}: row {i}: an id is outside the 64-bit integers"
            ) from None
    return out


def check_int_ids(a: np.ndarray, name: str) -> None:
    """Refuse an id array that does not hold integers, naming its dtype and first
    cell (a float, bool or string id would be truncated or misread)."""
    if a.dtype.kind in "iu":
        return
    cell = (0,) * a.ndim
    at = f" ({_place(cell)}: {a[cell].item()!r})" if a.size else ""
    raise RanklensInputError(f"{name} must hold integers (-1: padding), got dtype {a.dtype}{at}")


def check_tolerance(value: Any, name: str) -> float:
    """A finite, non-negative float (a distance tolerance)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise RanklensInputError(f"{name} must be a number, got {value!r}")
    v = float(value)
    if not v >= 0.0 or v == float("inf"):
        raise RanklensInputError(f"{name} must be finite and >= 0, got {value!r}")
    return v


def check_mapping(data: Any, what: str, of: str) -> None:
    """Refuse ``data`` that is not a mapping (anything with ``items()``), naming
    the argument and what it maps to (``of``)."""
    if not hasattr(data, "items") or isinstance(data, (str, bytes)):
        raise RanklensInputError(
            f"{what} must be a mapping query id -> {of}, got {type(data).__name__}"
        )


def twice_text(what: str, key: str, obj: Any) -> str:
    """The words of ``evaluate`` for two ids that are one once written as
    strings (``1`` and ``"1"``); ``what``: ``"query"`` or ``"document"``."""
    return (
        f'{what} "{key}" is given twice (the second time as {type(obj).__name__} '
        f"{obj!r}): {what} ids must differ once written as strings"
    )
