#!/usr/bin/env bash
# `make lint`, and the first step of `make test`: ruff (lint, then the format check), mypy on the layers in
# [tool.mypy] packages, the import contracts, shellcheck on our own scripts, and the decision points per function
# (scripts/complexity.py: none over 25, issue 32). Every step runs even when an
# earlier one fails; the exit status is 1 when any failed, and the last line names them.
# QA_LINT_FORMAT=0 leaves out `ruff format --check` (scripts/test.sh does, until the tree has been formatted once).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
VENV="${QA_VENV:-.venv}"
failed=()
step() {
  local name="$1"; shift
  local t0=$SECONDS
  if "$@"; then
    printf '\033[1m[lint]\033[0m %s ok (%ss)\n' "$name" $((SECONDS - t0)) >&2
  else
    printf '\033[1;31m[lint]\033[0m %s FAILED (%ss)\n' "$name" $((SECONDS - t0)) >&2
    failed+=("$name")
  fi
}
step "ruff check" "$VENV/bin/ruff" check --quiet --output-format concise .
if [ "${QA_LINT_FORMAT:-1}" != 0 ]; then
  step "ruff format --check" "$VENV/bin/ruff" format --check --output-format concise .
fi
step "mypy" "$VENV/bin/mypy"
step "lint-imports" bash scripts/lint_imports.sh
step "complexity" "$VENV/bin/python" scripts/complexity.py
step "shellcheck" "$VENV/bin/shellcheck" -S warning scripts/*.sh .ci/run
if [ ${#failed[@]} -gt 0 ]; then
  echo "lint failed: ${failed[*]}" >&2
  exit 1
fi
