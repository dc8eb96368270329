#!/usr/bin/env bash
# Run the whole suite against the real Docker engine and redis-server that setup.sh installed.
set -uo pipefail
cd "$(dirname "$0")/.."
VENV="${QA_VENV:-.venv}"
"$VENV/bin/python" -m pytest "$@"
rc=$?
[ $rc -eq 5 ] && { echo "no tests were collected" >&2; exit 1; }
exit $rc
