# The README's two commands: `make demo` (run qa on an example) and `make test` (the whole suite).
# Both run `make setup` first, which installs whatever is missing on a fresh Debian machine.
VENV ?= .venv
EXAMPLE ?= examples/clean-wordfreq
PYTEST_ARGS ?=

.PHONY: setup demo test bench clean-state

setup:
	bash scripts/setup.sh

demo: setup
	$(VENV)/bin/qa run $(EXAMPLE)

test: setup
	bash scripts/test.sh $(PYTEST_ARGS)

bench: setup
	$(VENV)/bin/python benchmarks/sandbox_overhead.py
	$(VENV)/bin/python benchmarks/scheduler.py
	$(VENV)/bin/python benchmarks/dispatch.py
	$(VENV)/bin/python benchmarks/adaptive.py

clean-state:
	rm -rf .qa
