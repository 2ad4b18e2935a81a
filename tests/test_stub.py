"""The native module's `.pyi` stub matches the module: same functions, same parameters."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import ranklens
from ranklens import _ranklens


def _stub_functions() -> dict[str, list[str]]:
    stub = Path(ranklens.__file__).with_name("_ranklens.pyi")
    assert stub.exists(), "the .pyi stub must ship with the package"
    tree = ast.parse(stub.read_text())
    out = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            args = node.args
            out[node.name] = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    return out


def _native_functions() -> dict[str, list[str]]:
    out = {}
    for name, obj in vars(_ranklens).items():
        if name.startswith("_") or not callable(obj) or isinstance(obj, type):
            continue
        out[name] = list(inspect.signature(obj).parameters)
    return out


def test_stub_lists_every_native_function_with_its_parameters():
    assert _stub_functions() == _native_functions()


def test_py_typed_marker_ships():
    assert Path(ranklens.__file__).with_name("py.typed").exists()
