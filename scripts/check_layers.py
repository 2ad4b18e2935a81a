"""Import layering of the ``ranklens`` package, checked in ``make lint``.

Every import in the package counts, including the lazy ones inside functions and
those under ``TYPE_CHECKING``: a lazy upward import is still an upward import.
Two rules:

1. A module imports only from its own unit (the top-level module or sub-package
   it belongs to, e.g. ``ranklens.compare.*``) or from units in layers BELOW its
   own; never sideways within a layer, never upward.
2. No import circle at all, within a unit included.

It also checks that the reference backend mirrors the Rust kernels: every public
``python/ranklens/metrics/<stem>.py`` has a ``src/core/metrics/<stem>.rs`` and
back (see CONTRIBUTING.md for the few files that have no twin, and why).

Usage: ``python scripts/check_layers.py`` (exit 1 with one line per violation).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "python" / "ranklens"

# Top to bottom; units in one layer may not import each other.
LAYERS: list[list[str]] = [
    ["cli"],
    ["compat", "plots", "testing", "__init__"],
    ["_report"],
    ["_gate"],
    ["dask", "spark", "compare", "_explain", "_score", "_prefs"],
    ["_distributed", "_stream", "_arrays"],
    ["_evaluate"],
    ["_data", "metrics"],
    ["_checks"],
    ["_io", "_names"],
    ["errors", "_ranklens"],
]

# Reference-backend files with no Rust twin of the same stem, and Rust metric
# files with no Python twin, each with where its counterpart lives.
PY_ONLY = {
    "_common": "src/core/metrics/query.rs (Query) and mod.rs",
    "_expected": "src/core/metrics/expected.rs",
    "_groups": "src/core/eval/ (grouped ground truth relabelling)",
    "dense": "src/core/dense/ (arrays, not a metric family)",
}
RS_ONLY = {
    "mod": "python/ranklens/metrics/__init__.py",
    "family": "python/ranklens/_names/_families.py (the registry)",
    "query": "python/ranklens/metrics/_common.py",
    "expected": "python/ranklens/metrics/_expected.py",
    "autorag": "python/ranklens/compat/autorag.py",
}


def module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def unit_of(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def imports_of(path: Path, module: str, modules: dict[str, Path]) -> set[str]:
    """The package's modules that ``module`` imports."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    is_pkg = path.name == "__init__.py"
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("ranklens"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base if is_pkg else base[:-1]
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("ranklens"):
                continue
            for a in node.names:
                # `from ranklens import _ranklens` imports the submodule, not the
                # package's face; `from ranklens._data import Qrels`, the package.
                sub = f"{target}.{a.name}"
                out.add(sub if sub in modules else target)
    return out


def main() -> int:
    files = sorted(PKG.rglob("*.py"))
    modules = {module_name(p): p for p in files}
    modules["ranklens._ranklens"] = PKG / "_ranklens.pyi"
    layer_of = {u: i for i, layer in enumerate(LAYERS) for u in layer}
    graph: dict[str, set[str]] = {}
    errors: list[str] = []
    for mod, path in modules.items():
        if path.suffix == ".pyi":
            graph[mod] = set()
            continue
        targets = set()
        for t in imports_of(path, mod, modules):
            while t not in modules and "." in t:  # an attribute, not a module
                t = t.rsplit(".", 1)[0]
            if t in modules and t != mod:
                targets.add(t)
        graph[mod] = targets
        src_unit = unit_of(mod)
        if src_unit not in layer_of:
            errors.append(f"{mod}: unit {src_unit!r} is in no layer (add it to LAYERS)")
            continue
        for t in sorted(targets):
            dst_unit = unit_of(t)
            if dst_unit == src_unit:
                continue
            if dst_unit not in layer_of:
                errors.append(f"{t}: unit {dst_unit!r} is in no layer (add it to LAYERS)")
            elif layer_of[dst_unit] <= layer_of[src_unit]:
                how = "sideways" if layer_of[dst_unit] == layer_of[src_unit] else "upward"
                errors.append(f"{mod} imports {t}: {how} ({src_unit} -> {dst_unit})")
    errors += [f"import circle among: {', '.join(c)}" for c in cycles(graph)]
    errors += mirror_errors()
    for e in errors:
        print(e)
    if not errors:
        print(f"layers: {len(modules)} modules, no upward or sideways import, no circle")
    return 1 if errors else 0


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The modules of each strongly connected component of more than one (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def mirror_errors() -> list[str]:
    py = {p.stem for p in (PKG / "metrics").glob("*.py")} - {"__init__"}
    rs = {p.stem for p in (ROOT / "src" / "core" / "metrics").glob("*.rs")}
    errors = []
    for stem in sorted(py - rs - set(PY_ONLY)):
        errors.append(f"metrics/{stem}.py has no src/core/metrics/{stem}.rs")
    for stem in sorted(rs - py - set(RS_ONLY)):
        errors.append(f"src/core/metrics/{stem}.rs has no python/ranklens/metrics/{stem}.py")
    return errors


if __name__ == "__main__":
    sys.exit(main())
