# Two commands a newcomer needs: `make demo` and `make test`. `make soak` runs the long tests
# `make test` leaves out (tests/support/tiers.py); CI runs both.
# Each creates its own virtual environment from nothing.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: demo test test-python test-fast soak lint bench clean test-extension test-vscode-e2e agents

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,lint]'
	touch $@

# Benchmarks only: plots and the diff engines compared (never runtime dependencies).
$(VENV)/.bench-installed: $(VENV)/.installed pyproject.toml
	$(PY) -m pip install --quiet -e '.[test,bench]'
	touch $@

demo: $(VENV)/.installed
	$(VENV)/bin/stet demo

test: lint test-python test-vscode-e2e

# The architecture (import contracts), style and types; `make test` runs it first.
lint: $(VENV)/.installed
	$(VENV)/bin/lint-imports --no-cache
	$(VENV)/bin/ruff check server tests benchmarks
	$(VENV)/bin/ruff format --check server tests benchmarks
	$(VENV)/bin/mypy

# The PostgreSQL engine's tests run against a private cluster where PostgreSQL is installed
# (.ci/with-pg; STET_TEST_PG=url names your own); without it they skip, and with-pg says so first.
# Every test not marked `soak`: a few minutes, every kind of test (tests/support/tiers.py).
test-python: $(VENV)/.installed agents
	.ci/with-pg $(PY) -m pytest -q -m "not soak" --durations=5

# The tests marked `soak`: the crash torture, fuzzing, load and the wider end-to-end runs (about
# 20 minutes on 2 cores). With `make test`, every test once.
soak: $(VENV)/.installed agents
	.ci/with-pg $(PY) -m pytest -q -m soak --durations=5

# The real agent CLIs the end-to-end tests run (Claude Code, Codex, Gemini CLI, Qwen Code), pinned in
# tests/support/agents_install.py and cached in ~/.cache/stet-test-agents (instant once there). Without
# the npm registry this says so loudly and their tests skip, each saying why.
agents: $(VENV)/.installed
	$(PY) tests/support/agents_install.py || echo "*** make agents: the real agent CLIs are NOT installed: their tests will SKIP ***" >&2

# The pure unit tests only: seconds, no processes.
test-fast: $(VENV)/.installed
	$(PY) -m pytest -q tests/unit

# Runs every benchmark against a real `stet serve` and writes docs/BENCHMARKS.md.
# BENCH_ARGS=--quick for a one-minute run with smaller sizes.
bench: $(VENV)/.bench-installed
	$(PY) benchmarks/run.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis

# The VS Code extension: unit tests of its pure logic, then the .vsix (client-extension/stet-*.vsix).
test-extension:
	cd client-extension && npm ci --no-audit --no-fund && npm test && npm run package

# The extension in a real VS Code workbench (code-server + Chromium) against the real server.
# The install step is idempotent and caches in ~/.cache/stet-vscode-e2e, shared by clones (apt-get needs root).
test-vscode-e2e: $(VENV)/.installed test-extension
	bash .ci/install-vscode-e2e.sh
	cd client-extension && STET_PYTHON=$(abspath $(PY)) node e2e/run.mjs
