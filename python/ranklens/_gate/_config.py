"""``[tool.ranklens.gate]`` in ``pyproject.toml``: the gate's settings, so that the
CI line is just ``ranklens gate QRELS BASELINE CANDIDATE``.

    [tool.ranklens.gate]
    metrics = ["ndcg@10", "recall@20"]      # optional: order, and metrics taking max_drop
    mode = "strict"                         # or "lenient"
    test = "t"                              # or "randomization", "bootstrap"
    correction = "holm"                     # or "bonferroni", "none"
    alpha = 0.05
    # top = 10, cutoffs = [10], n_resamples = 10000, seed = 0, relevance_level = 1

    [tool.ranklens.gate.max_drop]           # the budgets; or max_drop = 0.01 for all
    "ndcg@10" = 0.01
    "recall@20" = 0.02

The file is the first ``pyproject.toml`` found in the current directory or one
of its parents.  It is read with ``tomllib`` (Python 3.11+) or, on older Pythons,
``tomli`` when it is installed; without either, a file that has the table is an
error (a file without it is ignored).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ranklens.errors import RanklensInputError

_KEYS = {
    "metrics": list,
    "max_drop": (dict, int, float),
    "mode": str,
    "test": str,
    "correction": str,
    "alpha": (int, float),
    "top": int,
    "cutoffs": list,
    "n_resamples": int,
    "seed": int,
    "relevance_level": (int, float),
}


class ConfigError(RanklensInputError):
    """A ``[tool.ranklens.gate]`` table that cannot be read or used."""


def find_pyproject(start: str | os.PathLike[str] | None = None) -> Path | None:
    """The first ``pyproject.toml`` in ``start`` (default: the current directory)
    or one of its parents, or ``None``."""
    here = Path(start if start is not None else os.getcwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


# A pyproject.toml is a few kilobytes; a file past this is not one (``/dev/zero``
# or a log given by mistake), refused before it fills the memory.
MAX_CONFIG_BYTES = 1 << 20


def _read_text(file: Path) -> str:
    """The file's UTF-8 text; a ConfigError naming the file for anything else
    (missing, not a regular file, over :data:`MAX_CONFIG_BYTES`, not UTF-8)."""
    try:
        if not file.is_file():
            what = "no such file" if not file.exists() else "not a regular file"
            raise ConfigError(f"{file}: {what}")
        with open(file, "rb") as f:
            data = f.read(MAX_CONFIG_BYTES + 1)
    except OSError as e:
        raise ConfigError(f"{file}: {e.strerror or e}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{file}: larger than {MAX_CONFIG_BYTES} bytes: not a pyproject.toml")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise ConfigError(f"{file}:{line}: not UTF-8 (byte {e.start})") from None


def _toml_loads(text: str, path: Path) -> dict[str, Any]:
    try:
        import tomllib as toml
    except ImportError:  # Python < 3.11
        try:
            import tomli as toml  # type: ignore[no-redef]
        except ImportError:
            if "ranklens.gate" not in text:
                return {}  # no table to read: nothing is missing
            raise ConfigError(
                f"{path}: reading [tool.ranklens.gate] needs Python 3.11+ or the tomli "
                "package (pip install tomli)"
            ) from None
    try:
        return toml.loads(text)
    except toml.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML: {e}") from None


def load_config(path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """The ``[tool.ranklens.gate]`` table as keyword arguments of
    :func:`ranklens.gate` (``max_drop`` becomes ``budgets``), ``{}`` if there is
    none.  ``path``: a ``pyproject.toml`` (default: :func:`find_pyproject`).
    Raises :class:`ConfigError` (a ``RanklensInputError``) naming the file."""
    file = Path(path) if path is not None else find_pyproject()
    if file is None:
        return {}
    text = _read_text(file)
    table: Any = _toml_loads(text, file)
    where = []
    for part in ("tool", "ranklens", "gate"):
        if part not in table:
            return {}
        table = table[part]
        where.append(part)
        if not isinstance(table, dict):
            raise ConfigError(f"{file}: {'.'.join(where)} must be a table, got {table!r}")
    out: dict[str, Any] = {}
    for key, value in table.items():
        kind = _KEYS.get(key)
        if kind is None:
            raise ConfigError(
                f"{file}: unknown key {key!r} in [tool.ranklens.gate]; "
                f"known: {', '.join(sorted(_KEYS))}"
            )
        if not isinstance(value, kind) or isinstance(value, bool):
            raise ConfigError(f"{file}: [tool.ranklens.gate] {key} has the wrong type: {value!r}")
        out["budgets" if key == "max_drop" else key] = value
    return out
