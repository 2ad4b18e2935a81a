"""Array inputs as the core reads them: numpy views of any array library's data.

What is read in place and what is copied is the room's contract (see
:mod:`ranklens._arrays`); everything here keeps to it.  torch is looked up among
the loaded modules, never imported: a tensor's presence proves it is loaded.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from ranklens._checks import check_exact_scores, check_int_ids, int_rows
from ranklens.errors import RanklensInputError

# Dtypes the core reads as they are.
_NATIVE = {np.dtype(t) for t in (np.float64, np.float32, np.int64, np.int32, np.int8, np.uint8)}


def as_array(x: Any, name: str, *, bf16_bits: bool = False) -> np.ndarray:
    """``x`` as a numpy array, without a copy where the source allows.  A torch
    bfloat16 tensor (which numpy refuses through both protocols) is widened to
    float32, or with ``bf16_bits`` returned as its bits (``uint16``, no copy)."""
    if isinstance(x, np.ndarray):
        return x
    # A tensor that tracks gradients (a training loop's scores): its values,
    # detached (no copy); DLPack and ``__array__`` refuse it as it is.
    if getattr(x, "requires_grad", False) is True and callable(getattr(x, "detach", None)):
        x = x.detach()
    if is_torch_bf16(x):
        bits = _torch_bf16_bits(x, name)
        return bits if bf16_bits else _half_to_f32(bits, "bf16")
    if hasattr(x, "__dlpack__"):
        try:
            return np.from_dlpack(x)
        except (TypeError, RuntimeError, BufferError, ValueError):
            pass  # e.g. bfloat16 or a tensor needing grad: __array__ below
    try:
        return np.asarray(x)
    except (TypeError, ValueError, RuntimeError) as e:
        raise RanklensInputError(f"{name} must be an array (numpy, torch, jax, ...): {e}") from e


def is_torch_bf16(x: Any) -> bool:
    """Whether ``x`` is a torch bfloat16 tensor (told by its dtype's name: torch is
    not imported)."""
    return str(getattr(x, "dtype", "")) == "torch.bfloat16"


def _torch_bf16_bits(x: Any, name: str) -> np.ndarray:
    """The bits of a torch bfloat16 tensor on the CPU as ``uint16``, without a copy:
    the tensor reinterpreted as int16 (``x.view(torch.int16)``), exported through
    DLPack.  torch is already loaded (``x`` is one of its tensors); it is looked up,
    never imported."""
    torch = sys.modules.get(type(x).__module__.split(".")[0])
    int16 = getattr(torch, "int16", None)
    if int16 is None:
        raise RanklensInputError(f"{name}: a bfloat16 tensor of an unknown library")
    try:
        return np.from_dlpack(x.view(int16)).view(np.uint16)
    except (TypeError, RuntimeError, BufferError, ValueError) as e:
        raise RanklensInputError(
            f"{name}: a bfloat16 tensor must be on the CPU and not need grad (.detach().cpu()): {e}"
        ) from e


def matrix(x: Any, name: str, *, labels: bool, bf16: bool = False) -> tuple[np.ndarray, str]:
    """A 2-D array the core reads in place, and how to read ``uint16`` bits
    (``"f16"``, ``"bf16"`` or ``""``).  ``bf16``: ``x`` holds bfloat16 bits
    (``as_array(..., bf16_bits=True)`` of a torch bfloat16 tensor).  Copies only
    what :mod:`ranklens._arrays` says."""
    bf16 = bf16 or is_torch_bf16(x)
    a = as_array(x, name, bf16_bits=True)
    if a.ndim != 2:
        hint = (
            f" (one query's candidates: {name}[None, :]; a flat tensor grouped by an"
            " index: evaluate_flat)"
            if a.ndim == 1
            else ""
        )
        raise RanklensInputError(
            f"{name} must be 2-D (rows x candidates), got shape {a.shape}{hint}"
        )
    if not labels:
        check_exact_scores(a, name)
    half = ""
    dt = a.dtype
    if bf16 and dt == np.uint16:
        half = "bf16"
    elif dt == np.bool_:
        a = a.view(np.uint8)
    elif dt == np.float16:
        a, half = a.view(np.uint16), "f16"
    elif dt.name == "bfloat16":  # ml_dtypes (jax, torch via numpy)
        a, half = a.view(np.uint16), "bf16"
    elif dt not in _NATIVE:
        if dt.kind not in "biuf":
            raise RanklensInputError(f"{name} must hold numbers, got dtype {dt}")
        a = copy_as(a, np.float64, name)
    if labels and half:
        a, half = _half_to_f64(a, half), ""
    if any(s < 0 for s in a.strides) or any(s % a.itemsize for s in a.strides):
        a = np.ascontiguousarray(a)
    return a, half


def copy_as(a: np.ndarray, dtype: Any, name: str) -> np.ndarray:
    """``a`` copied as ``dtype``.  A copy whose size numpy cannot address (a
    zero-stride view may claim any shape) is an input error naming the shape,
    never numpy's bare ``ValueError``; one the memory cannot hold stays numpy's
    ``MemoryError``, which names the shape."""
    if a.size * np.dtype(dtype).itemsize > np.iinfo(np.intp).max:
        raise RanklensInputError(
            f"{name} has shape {a.shape}: its copy as {np.dtype(dtype)} does not fit in memory"
        )
    return a.astype(dtype)


def _half_to_f64(bits: np.ndarray, half: str) -> np.ndarray:
    return _half_to_f32(bits, half).astype(np.float64)


def _half_to_f32(bits: np.ndarray, half: str) -> np.ndarray:
    """float16 or bfloat16 bits widened to float32 (exact)."""
    if half == "f16":
        return bits.view(np.float16).astype(np.float32)
    return (bits.astype(np.uint32) << 16).view(np.float32)


def ragged(rows: Sequence[Sequence[int]], name: str) -> np.ndarray:
    """A list of id lists as a matrix padded with -1, each id checked."""
    return int_rows(rows, name, ragged=True)


def id_matrix(x: Any, name: str) -> np.ndarray:
    """An id matrix as int64 (other integer dtypes are copied).  A list of lists
    is checked id by id (numpy would turn ``True`` into 1 and ``1.5`` a float
    array): rows of one length, integer ids."""
    if isinstance(x, (list, tuple)):
        return int_rows(x, name, ragged=False)
    a = as_array(x, name)
    if a.ndim != 2:
        raise RanklensInputError(f"{name} must be 2-D (rows x ids), got shape {a.shape}")
    a = as_int64(a, name)
    if any(s < 0 or s % 8 for s in a.strides):
        a = np.ascontiguousarray(a)
    return a


def as_int64(a: np.ndarray, name: str) -> np.ndarray:
    """An integer array as int64 (other integer dtypes are copied)."""
    check_int_ids(a, name)
    if a.dtype == np.int64:
        return a
    if a.dtype == np.uint64 and a.size and int(a.max()) > np.iinfo(np.int64).max:
        raise RanklensInputError(f"{name}: values above 2**63 - 1 are not supported")
    return copy_as(a, np.int64, name)


def float_matrix(x: Any, name: str) -> np.ndarray:
    a = as_array(x, name)
    if a.ndim != 2 or a.dtype.kind not in "iuf":
        raise RanklensInputError(f"{name} must be a 2-D array of numbers, got {a.dtype} {a.shape}")
    if a.dtype != np.float64:
        a = copy_as(a, np.float64, name)
    if any(s < 0 or s % 8 for s in a.strides):
        a = np.ascontiguousarray(a)
    return a
