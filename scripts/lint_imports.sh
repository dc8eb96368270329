#!/usr/bin/env bash
# Check the import contracts ([tool.importlinter] in pyproject.toml) with import-linter, straight from the
# checkout: envqa/<layer> links to each layer folder (envqa/__init__.py), so grimp walks envqa/ as installed.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${QA_VENV:-.venv}"
# import-linter puts the working directory (the repository root) first on sys.path
exec "$VENV/bin/lint-imports" --no-cache --no-logo "$@"
