"""Install a built wheel into fresh virtual environments of every CPython 3.9-3.13
found on this machine, with no Rust toolchain on PATH, and check it works there.

    python scripts/smoke_wheels.py dist/ranklens-*.whl

For each interpreter: a new venv, ``pip install WHEEL`` (numpy comes from the
package index), then, from a directory outside the source tree, the README's quick
start on the bundled example files (trec_eval says map 0.1785, P_5 0.2667), the five
headline metrics on both backends (the Rust one must equal the pure-Python reference
to 1e-12 on every query), the per-sample Scorer, and both console scripts; then, with
``pytest`` and ``hypothesis`` installed from the package index, the tests of the object
reads (``LAYOUT_TESTS``: ``src/bindings/layout/`` reads CPython internals through one
table per version, so each version it has a table for must pass them).  Before that,
the wheel's file list must hold the native module, its ``.pyi``, ``py.typed`` and the
license.

Interpreters are looked for under ``$PYENV_ROOT/versions`` (default ``~/.pyenv``) and
as ``python3.X`` on PATH.  A missing version is skipped with a message; finding none
besides the interpreter running this script is an error.  Exit status 1 if any
interpreter fails.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VERSIONS = ["3.9", "3.10", "3.11", "3.12", "3.13"]

# Runs inside each venv (cwd: a temporary directory, so `import ranklens` can only
# find the installed wheel).
CHECK = r"""
import math, subprocess, sys, os
import ranklens
assert "site-packages" in ranklens.__file__, ranklens.__file__
ex = sys.argv[1]
q = ranklens.Qrels.from_trec(os.path.join(ex, "qrels.txt"))
r = ranklens.Run.from_trec(os.path.join(ex, "run.txt"))
res = ranklens.evaluate(q, r, ["map", "P_5"])
assert f"{res['map']:.4f}" == "0.1785" and f"{res['P_5']:.4f}" == "0.2667", res
headline = ["ndcg@10", "map", "recall@100", "P@10", "mrr"]
rust = ranklens.evaluate(q, r, headline)
ref = ranklens.evaluate(q, r, headline, backend="python")
assert rust.query_ids == ref.query_ids
worst = float(abs(rust.values - ref.values).max())
assert worst <= 1e-12, worst
# The Scorer reads str ids through CPython calls that differ by version (str's
# hash slot from 3.10, the generic hash before): hand-derived values, a string
# built at run time so its hash is not cached yet.
scorer = ranklens.Scorer(["ndcg@3", "mrr"])
fresh = "".join(["c", "1"])
one = scorer(["a", "b", fresh], ["c1"])
assert one == {"ndcg@3": 0.5, "mrr": 1 / 3}, one  # 1/log2(4) over the ideal 1
batch = scorer.batch([["a", "b", "c1"], ["x", "c1"]], [["c1"], ["c1", "x"]])
assert list(batch["ndcg@3"]) == [0.5, 1.0] and list(batch["mrr"]) == [1 / 3, 1.0], batch
import shutil
bindir = os.path.dirname(sys.executable)
script = lambda name: shutil.which(name, path=bindir)
out = subprocess.run([script("ranklens"), os.path.join(ex, "qrels.txt"),
                      os.path.join(ex, "run.txt"), "-m", "map", "--format", "tsv"],
                     capture_output=True, text=True, check=True).stdout
assert "0.1785" in out, out
out = subprocess.run([script("ranklens-trec-eval"), "-m", "P.5",
                      os.path.join(ex, "qrels.txt"), os.path.join(ex, "run.txt")],
                     capture_output=True, text=True, check=True).stdout
assert out == "P_5                   \tall\t0.2667\n", repr(out)
print(f"ok: ranklens {ranklens.__version__} on Python {sys.version.split()[0]}: "
      f"quick start, 5 metrics x {len(rust.query_ids)} queries equal to the reference "
      f"(max diff {worst:g}), the Scorer, both scripts")
"""

# Run in each venv from a copy outside the source tree (with the helper they import).
LAYOUT_TESTS = ["test_layout.py", "test_nested_dict.py"]
TEST_HELPERS = ["_child.py"]
TEST_DEPS = ["pytest>=7", "hypothesis>=6.80"]

REQUIRED_IN_WHEEL = ["ranklens/py.typed", "ranklens/_ranklens.pyi", "ranklens/__init__.py"]


def check_wheel_files(wheel: Path) -> list[str]:
    names = zipfile.ZipFile(wheel).namelist()
    problems = [f"{wheel.name} lacks {n}" for n in REQUIRED_IN_WHEEL if n not in names]
    if not any(n.startswith("ranklens/_ranklens.") and n.endswith(".so") for n in names):
        if not any(n.startswith("ranklens/_ranklens.") and n.endswith(".pyd") for n in names):
            problems.append(f"{wheel.name} lacks the native module")
    if not any(".dist-info/" in n and "LICENSE" in n for n in names):
        problems.append(f"{wheel.name} lacks the license file")
    return problems


def interpreters() -> dict[str, Path]:
    found: dict[str, Path] = {}
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    for v in VERSIONS:
        candidates = sorted(root.glob(f"{v}.*/bin/python{v}")) if root.is_dir() else []
        # Free-threaded builds ("3.13.0t") cannot load an abi3 wheel: skip them.
        candidates = [c for c in candidates if not c.parent.parent.name.endswith("t")]
        on_path = shutil.which(f"python{v}")
        if candidates:
            found[v] = candidates[-1]
        elif on_path:
            found[v] = Path(on_path)
    return found


def without_rust(env: dict[str, str]) -> dict[str, str]:
    """PATH without any directory that holds cargo or rustc."""
    keep = [
        d
        for d in env.get("PATH", "").split(os.pathsep)
        if d and not (Path(d, "cargo").exists() or Path(d, "rustc").exists())
    ]
    out = dict(env, PATH=os.pathsep.join(keep))
    out.pop("PYTHONPATH", None)
    return out


def smoke(python: Path, wheel: Path, work: Path) -> tuple[bool, str]:
    venv = work / f"venv-{python.name}"
    subprocess.run([str(python), "-m", "venv", str(venv)], check=True)
    vpy = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    env = without_rust(os.environ)
    if shutil.which("cargo", path=env["PATH"]):
        return False, "cargo is still on PATH"
    pip = subprocess.run(
        [str(vpy), "-m", "pip", "install", "-q", "--disable-pip-version-check", str(wheel)],
        env=env,
        capture_output=True,
        text=True,
    )
    if pip.returncode != 0:
        return False, "pip install failed:\n" + pip.stdout + pip.stderr
    run = subprocess.run(
        [str(vpy), "-c", CHECK, str(ROOT / "examples")],
        env=env,
        cwd=work,
        capture_output=True,
        text=True,
    )
    if run.returncode != 0:
        return False, (run.stdout + run.stderr).strip()
    ok, out = layout_tests(vpy, env, work / f"tests-{python.name}")
    return ok, (run.stdout + run.stderr).strip() + "\n" + out


def layout_tests(vpy: Path, env: dict[str, str], where: Path) -> tuple[bool, str]:
    """``LAYOUT_TESTS`` in the venv of ``vpy``, from a copy in ``where``."""
    pip = subprocess.run(
        [str(vpy), "-m", "pip", "install", "-q", "--disable-pip-version-check", *TEST_DEPS],
        env=env,
        capture_output=True,
        text=True,
    )
    if pip.returncode != 0:
        return False, "pip install of the test dependencies failed:\n" + pip.stdout + pip.stderr
    where.mkdir()
    for name in LAYOUT_TESTS + TEST_HELPERS:
        shutil.copy(ROOT / "tests" / name, where / name)
    run = subprocess.run(
        [
            str(vpy),
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(where),
            *LAYOUT_TESTS,
        ],
        env=env,
        cwd=where,
        capture_output=True,
        text=True,
    )
    lines = (run.stdout + run.stderr).strip().splitlines()
    summary = lines[-1] if lines else ""
    if run.returncode != 0:
        return False, "\n".join(lines)
    return True, f"layout tests ({', '.join(LAYOUT_TESTS)}): {summary}"


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    wheel = Path(argv[0]).resolve()
    problems = check_wheel_files(wheel)
    for p in problems:
        print(f"FAIL {p}")
    found = interpreters()
    own = f"{sys.version_info.major}.{sys.version_info.minor}"
    for v in VERSIONS:
        if v not in found:
            print(f"skip Python {v}: not found on this machine")
    if not set(found) - {own}:
        print(f"FAIL no Python besides the build interpreter ({own}) found")
        return 1
    failed = bool(problems)
    with tempfile.TemporaryDirectory(prefix="ranklens-smoke-") as tmp:
        for v, python in found.items():
            ok, out = smoke(python, wheel, Path(tmp))
            print(("" if ok else f"FAIL Python {v} ({python}): ") + out)
            failed |= not ok
    print(f"{wheel.name}: {'FAILED' if failed else 'passed'} on {', '.join(found)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
