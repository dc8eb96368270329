#!/usr/bin/env bash
# The fast tier: tests marked `fast`, with only the venv. No Docker engine, Redis, Postgres or Chromium is used or
# started: DOCKER_HOST points at nothing, `qa` runs its work in-process, and the Postgres pass is not run.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
VENV="${QA_VENV:-.venv}"
export QA_TEST_TIER=fast DOCKER_HOST="unix:///nonexistent/envqa-fast-tier.sock" QA_SCHEDULER_MODE=local
unset REDIS_URL QA_STORE_URL QA_TEST_STORE
bash scripts/precompile.sh || exit 1
"$VENV/bin/python" -m pytest -m fast "$@"
rc=$?
[ $rc -eq 5 ] && { echo "no tests were collected" >&2; exit 1; }
exit $rc
