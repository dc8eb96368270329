#!/usr/bin/env bash
# The suite against the real Docker engine, redis-server, Postgres and Chromium that setup.sh installed.
#   make test      (QA_TEST_SCOPE unset): every tier but `slow`, then the store's contract tests and the multi-host
#                  scenario a second time on Postgres (tests/store).
#   make test-all  (QA_TEST_SCOPE=all): every tier, `slow` included, then the store and scheduler tests on Postgres.
# With no arguments it runs three passes: the suite on QA_TEST_WORKERS pytest-xdist workers (default 2: measured
# 1.5x faster than one on the 2-core machine, whose Docker-heavy tests wait as much as they compute), then the
# `serial` tests alone (they assert on the host's state or on wall-time windows), then the Postgres pass. With
# arguments (the caller picked tests) it runs one plain pytest with them. The tiers are in tests/conftest.py; the
# slowest tests are listed at the end of each pass (--durations), so a test that grows past its tier shows in CI's log.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
VENV="${QA_VENV:-.venv}"
SCOPE="${QA_TEST_SCOPE:-default}"
WORKERS="${QA_TEST_WORKERS:-2}"
case "$SCOPE" in
  default) tier="not slow"; pg_paths=(tests/store) ;;
  all) tier="slow or not slow"; pg_paths=(tests/store tests/scheduler) ;;
  *) echo "QA_TEST_SCOPE must be 'default' or 'all', not '$SCOPE'" >&2; exit 2 ;;
esac
pytest() { "$VENV/bin/python" -m pytest "$@"; }
# The lint first (scripts/lint.sh, seconds): a style, type or layer error fails before the suite's minutes.
# QA_LINT_FORMAT (the Makefile's LINT_FORMAT_IN_TEST) says whether `ruff format --check` is part of it.
bash scripts/lint.sh || exit 1
bash scripts/precompile.sh || exit 1
if [ $# -gt 0 ]; then
  pytest -m "$tier" --durations=25 "$@"
  rc=$?
else
  parallel=()
  [ "$WORKERS" -gt 1 ] && parallel=(-n "$WORKERS" --dist loadgroup)
  pytest "${parallel[@]}" -m "($tier) and not serial" --durations=25
  rc=$?
  if [ $rc -eq 0 ]; then
    pytest -m "($tier) and serial" --durations=10
    rc=$?
  fi
  # The Postgres pass (issue 16): a private server per session, a fresh database per test. Skipped when the caller
  # set QA_TEST_STORE itself (then the passes above already ran on it).
  if [ $rc -eq 0 ] && [ -z "${QA_TEST_STORE:-}" ]; then
    QA_TEST_STORE=postgres pytest -m "$tier" --durations=10 "${pg_paths[@]}"
    rc=$?
  fi
fi
[ $rc -eq 5 ] && { echo "no tests were collected" >&2; exit 1; }
exit $rc
