# One target per habit; CI (.ci/run) calls these same targets.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: venv wheel install docs docs-build lint fmt test test-rust test-python smoke bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip

venv: $(PY)
	$(PY) -m pip install "maturin>=1.7,<2" "ruff>=0.5" "mypy>=1.10"

# One cp39-abi3 wheel (release build) in dist/, for every CPython from 3.9.
wheel: venv
	rm -f dist/ranklens-*.whl
	$(PY) -m maturin build --release --out dist

# That wheel installed with the test and documentation dependencies.
install: wheel
	$(PY) -m pip install --force-reinstall --no-deps dist/ranklens-*.whl
	$(PY) -m pip install "$$(ls dist/ranklens-*.whl)[test,docs]"

# The documentation site into site/ (mkdocs.yml; `$(VENV)/bin/mkdocs serve` serves it
# while editing).  --strict: a broken link or a docstring mkdocstrings cannot render
# fails the build (not with --quiet, which hides the warnings --strict counts).
docs: install docs-build

docs-build:
	@if $(PY) -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then \
		echo NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict; \
		NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict; \
	else echo 'mkdocs build skipped: the docs extra needs Python >= 3.11'; fi

fmt:
	cargo fmt
	$(VENV)/bin/ruff format python tests benches scripts
	$(VENV)/bin/ruff check --fix python tests benches scripts

# Formatting, clippy, ruff, the import layers, the native module's stub against
# the built module (which needs the wheel installed), and the documentation site.
lint: install
	cargo fmt --check
	cargo clippy --all-targets --all-features -- -D warnings
	RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --document-private-items --quiet
	$(VENV)/bin/ruff check python tests benches scripts
	$(VENV)/bin/ruff format --check python tests benches scripts
	$(PY) scripts/check_layers.py
	cd /tmp && $(abspath $(PY)) -m mypy.stubtest ranklens._ranklens
	@$(MAKE) --no-print-directory docs-build

test-rust:
	cargo test

test-python: install
	$(PY) -m pytest -q tests

# The same wheel in fresh venvs of every CPython 3.9-3.13 found, no Rust on PATH.
smoke: install
	$(PY) scripts/smoke_wheels.py dist/ranklens-*.whl

# The whole suite: lint, Rust unit tests, Python tests against the installed wheel,
# the wheel on every Python.
test: lint test-rust test-python smoke

# Python libraries side by side (see benches/README.md), then the Rust core alone
# (criterion; --quick keeps it to about a minute after the build).
bench: install
	$(PY) -m pip install pytrec-eval-terrier ranx
	$(PY) benches/run_bench.py --scales 10000,100000
	$(PY) benches/bench_compat.py --queries 10000
	cargo bench --bench kernels -- --quick

clean:
	rm -rf $(VENV) target dist site
