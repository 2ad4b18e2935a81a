# One target per habit; CI (.ci/run) calls these same targets.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: venv install lint fmt test test-rust test-python bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --upgrade pip

venv: $(PY)
	$(PY) -m pip install "maturin>=1.7,<2" "ruff>=0.5"

# Build the extension (release) and install the package with its test dependencies.
install: venv
	$(PY) -m pip install ".[test]"

fmt:
	cargo fmt
	$(VENV)/bin/ruff format python tests benches scripts
	$(VENV)/bin/ruff check --fix python tests benches scripts

lint: venv
	cargo fmt --check
	cargo clippy --all-targets --all-features -- -D warnings
	$(VENV)/bin/ruff check python tests benches scripts
	$(VENV)/bin/ruff format --check python tests benches scripts
	$(PY) scripts/check_layers.py

test-rust:
	cargo test

test-python: install
	$(PY) -m pytest -q tests

# The whole suite: lint, Rust unit tests, Python tests against the installed package.
test: lint test-rust test-python

# Python libraries side by side (see benches/README.md), then the Rust core alone
# (criterion; --quick keeps it to about a minute after the build).
bench: install
	$(PY) -m pip install pytrec-eval-terrier ranx
	$(PY) benches/run_bench.py --scales 10000,100000
	$(PY) benches/bench_compat.py --queries 10000
	cargo bench --bench kernels -- --quick

clean:
	rm -rf $(VENV) target dist
