#!/usr/bin/env bash
# `make check-latest`: install the NEWEST versions pyproject.toml allows (no lock) into a throwaway venv and
# run a fast smoke subset against them. A release inside our ranges that breaks us (as rq 3.0 would have,
# had the range allowed it) shows up here, on purpose, before `make lock` moves the lock onto it.
# Exit status: 0 the newest versions pass, 1 they do not (the failing tests are printed), 3 setup failed.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${QA_CHECK_PYTHON:-python3}"
# packaging, the two adapters over other libraries' internals, the retry policy, one real worker process
SMOKE=(
  tests/test_packaging.py
  tests/scheduler/test_rq_adapter.py
  tests/foundation/test_docker_adapter.py
  tests/scheduler/test_policy.py
  "tests/scheduler/test_workers.py::test_retries_back_off_and_permanent_errors_fail_fast"
)
say() { printf '\033[1m[check-latest]\033[0m %s\n' "$*" >&2; }

tmp="$(mktemp -d /tmp/envqa-check-latest.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT INT TERM

say "throwaway venv in $tmp"
"$PYTHON" -m venv "$tmp/venv" || { echo "check-latest: cannot create a venv with $PYTHON" >&2; exit 3; }
pip=("$tmp/venv/bin/pip" install -q --disable-pip-version-check --upgrade)
"${pip[@]}" pip setuptools wheel >/dev/null || { echo "check-latest: cannot reach the package index" >&2; exit 3; }
say "installing the newest allowed versions of every dependency (no lock)"
# A non-editable install from a copy of the tree: the throwaway venv never points back into the work tree.
"${pip[@]}" --upgrade-strategy eager ".[dev]" || { echo "check-latest: pip could not install .[dev]" >&2; exit 3; }
"$tmp/venv/bin/pip" check || { echo "check-latest: the newest versions conflict" >&2; exit 1; }

# What the newest resolution changed against the lock: the first place to look when the smoke fails.
"$tmp/venv/bin/python" - requirements.lock <<'EOF' >&2
import re, sys
from importlib.metadata import distributions
locked = {}
for line in open(sys.argv[1]):
    m = re.match(r"^([A-Za-z0-9_.\-\[\]]+)==([^\s\\;]+)", line)
    if m:
        locked[re.sub(r"\[.*\]", "", m.group(1)).lower().replace("_", "-")] = m.group(2)
newer = []
for d in distributions():
    name = d.metadata["Name"].lower().replace("_", "-")
    if name in locked and locked[name] != d.version:
        newer.append(f"  {name}: lock {locked[name]} -> newest {d.version}")
print("versions differing from requirements.lock:" if newer else "the lock is already the newest allowed")
print("\n".join(sorted(newer)))
EOF

say "smoke subset: ${SMOKE[*]}"
# From a scratch directory, with pytest's own entry point: neither the tests nor the worker processes they
# start (`python -m envqa.app.cli worker`, which puts its cwd first on sys.path) can import the work tree's
# envqa/ instead of the throwaway install, so the code under test runs with the newest dependencies.
mkdir -p "$tmp/run"
repo="$PWD"
set +e
(cd "$tmp/run" && "$tmp/venv/bin/pytest" -x -q -p no:cacheprovider --rootdir "$repo" -c "$repo/pyproject.toml" \
  "${SMOKE[@]/#/$repo/}")
code=$?
set -e
if [ "$code" -ne 0 ]; then
  say "FAILED against the newest allowed versions (exit $code): keep the lock, fix the code or narrow the range"
  exit 1
fi
say "the newest allowed versions pass the smoke subset"
