#!/usr/bin/env bash
# Check the import contracts ([tool.importlinter] in pyproject.toml) with import-linter.
# The layer folders sit beside envqa/ in the repository and are mapped into the `envqa` namespace at install
# time; import-linter walks one package directory, so assemble that tree (a throwaway copy)
# and point it there.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${QA_VENV:-.venv}"
tree="$(mktemp -d /tmp/envqa-lint-imports.XXXXXX)"
trap 'rm -rf "$tree"' EXIT
mkdir -p "$tree/envqa"
cp envqa/__init__.py "$tree/envqa/"
for layer in core agents probes graphs sandbox store scheduler app demo prompts; do
  cp -r "$layer" "$tree/envqa/$layer"
done
repo="$PWD"
lint="$(cd "$VENV" && pwd)/bin/lint-imports"
# from inside the tree: import-linter puts the working directory first on sys.path
cd "$tree" && PYTHONPATH="$tree" "$lint" "$repo/pyproject.toml" --no-cache --no-logo "$@"
