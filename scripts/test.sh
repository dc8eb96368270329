#!/usr/bin/env bash
# Run the whole suite against the real Docker engine and redis-server that setup.sh installed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
VENV="${QA_VENV:-.venv}"
"$VENV/bin/python" -m pytest "$@"
rc=$?
# Second pass (issue 16): the store and scheduler tests on the Postgres backend (a private server per
# session, a fresh database per test). Skipped when the caller picked tests or set QA_TEST_STORE itself.
if [ $rc -eq 0 ] && [ $# -eq 0 ] && [ -z "${QA_TEST_STORE:-}" ]; then
  QA_TEST_STORE=postgres "$VENV/bin/python" -m pytest tests/store tests/scheduler
  rc=$?
fi
[ $rc -eq 5 ] && { echo "no tests were collected" >&2; exit 1; }
exit $rc
