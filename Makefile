# Two commands a newcomer needs: `make demo` and `make test`.
# Each creates its own virtual environment from nothing.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: demo test test-python bench clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

# Benchmarks only: plots and the diff engines compared (never runtime dependencies).
$(VENV)/.bench-installed: $(VENV)/.installed pyproject.toml
	$(PY) -m pip install --quiet -e '.[test,bench]'
	touch $@

demo: $(VENV)/.installed
	$(VENV)/bin/stet demo

test: test-python

test-python: $(VENV)/.installed
	$(PY) -m pytest -q

# Runs every benchmark against a real `stet serve` and writes docs/BENCHMARKS.md.
# BENCH_ARGS=--quick for a one-minute run with smaller sizes.
bench: $(VENV)/.bench-installed
	$(PY) benchmarks/run.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
