# The README's two commands: `make demo` (run qa on an example) and `make test` (the whole suite).
# Both run `make setup` first, which installs whatever is missing on a fresh Debian machine.
VENV ?= .venv
# A flawed example, so the demo shows the loop: found, fixed, gated, auto-approved, rerun clean.
EXAMPLE ?= examples/reward-tamper
DEMO_ARGS ?= --approval auto -c examples/demo.toml
PYTEST_ARGS ?=

.PHONY: setup demo test test-all test-fast docs lint lint-imports test-postgres bench clean-state lock check-latest fuzz

setup:
	bash scripts/setup.sh

demo: setup
	$(VENV)/bin/qa run $(EXAMPLE) $(DEMO_ARGS)

# Every tier but `slow` (tests/conftest.py), then the store's contract tests on Postgres: CI's command, <= 30 min.
# The lint runs first (scripts/test.sh), `ruff format --check` included; LINT_FORMAT_IN_TEST=0 leaves that one out
# while a change is still being written.
LINT_FORMAT_IN_TEST ?= 1
test: setup
	QA_LINT_FORMAT=$(LINT_FORMAT_IN_TEST) bash scripts/test.sh $(PYTEST_ARGS)

# Every tier, `slow` included (chaos, the real-model sweep, long liveness and kill tests), then the store and
# scheduler tests on Postgres. Run it before changing the scheduler, the store or the sandbox.
test-all: setup
	QA_LINT_FORMAT=$(LINT_FORMAT_IN_TEST) QA_TEST_SCOPE=all bash scripts/test.sh $(PYTEST_ARGS)

# The fast tier: the tests marked `fast` (roles, graphs, probes' logic, CLI, store on SQLite, the fake sandbox
# backend, the in-process executor). Needs only the venv: it installs no system package and starts no daemon.
test-fast:
	bash scripts/setup.sh --venv-only
	bash scripts/test_fast.sh $(PYTEST_ARGS)

# Bad input never crashes (issue 44): qa lint and qa analyze on many mutated copies of our seed tasks, qa.toml and
# run folders, in-process; prints the seed and the counts (tracebacks, non-JSON answers, trials lost, ...) and fails
# on any. `make fuzz FUZZ_ARGS="--seed N"` replays a series; `make test` runs a fixed small one
# (tests/fuzz_inputs/test_fuzz_inputs.py).
FUZZ_ARGS ?= --tasks 1000 --runs 300
fuzz:
	bash scripts/setup.sh --venv-only
	.venv/bin/python scripts/fuzz.py $(FUZZ_ARGS)

# Regenerate the generated docs: the rule catalogue (docs/reference/rules.md, from core/registry/) and the
# configuration reference (docs/reference/configuration.md, from core/config.py); tests/test_docs.py fails when stale.
docs:
	$(VENV)/bin/python scripts/gen_docs.py

# The layer contracts ([tool.importlinter] in pyproject.toml); tests/test_architecture.py runs this in every tier.
lint-imports:
	bash scripts/lint_imports.sh

# ruff check, ruff format --check, mypy ([tool.mypy] packages), the import contracts, shellcheck on scripts/, and
# scripts/complexity.py (no function over 25 decision points).
# Configured in pyproject.toml ([tool.ruff], [tool.mypy], [tool.importlinter]); needs only the venv.
lint:
	bash scripts/setup.sh --venv-only
	bash scripts/lint.sh

# The whole suite with the store on Postgres (a private server, a fresh database per test; QA_STORE_URL reaches
# every `qa` process and worker a test starts). Not in `make test`, which runs only the store and scheduler
# tests on Postgres a second time: the whole suite twice would not fit CI's time budget.
test-postgres: setup
	QA_TEST_STORE=postgres bash scripts/test.sh $(PYTEST_ARGS)

# Every benchmark runs even when an earlier one misses its goal; the run ends with each one's exit code, wall
# time and last (JSON) line (whole outputs in .qa/bench/), and `make bench` fails (exit 1) if any missed.
BENCHMARKS ?= sandbox_overhead scheduler dispatch adaptive chaos report
bench: setup
	VENV=$(VENV) bash scripts/bench.sh $(BENCHMARKS)

clean-state:
	rm -rf .qa

# Refresh requirements.lock from pyproject.toml's ranges (uv: one fast resolver that writes hashes for
# every wheel and resolves for Python 3.11 on Linux whatever runs it; pip installs the result).
lock:
	$(VENV)/bin/uv pip compile pyproject.toml requirements-build.in --extra dev --generate-hashes \
	  --python-version 3.11 --python-platform x86_64-manylinux_2_28 -o requirements.lock
	@echo "now commit requirements.lock"

# Install the NEWEST versions pyproject.toml allows into a throwaway venv and run a fast smoke subset:
# a release that breaks us is found here, on purpose, before the lock is refreshed to it.
check-latest: setup
	bash scripts/check_latest.sh
