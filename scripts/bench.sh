#!/usr/bin/env bash
# `make bench`: run each named benchmark (benchmarks/NAME.py) even after an earlier one missed, keep each one's
# whole stdout in $BENCH_LOGS/NAME.log, and end with one line per benchmark: its exit code, wall time and last
# line (the benchmark's JSON), so one run shows every figure and every miss. Exit 1 if any benchmark missed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
VENV="${VENV:-.venv}"
LOGS="${BENCH_LOGS:-.qa/bench}"
mkdir -p "$LOGS"
failed=""
summary=""
for b in "$@"; do
  start=$(date +%s)
  "$VENV/bin/python" "benchmarks/$b.py" | tee "$LOGS/$b.log"
  rc=${PIPESTATUS[0]}
  secs=$(( $(date +%s) - start ))
  [ "$rc" -ne 0 ] && failed="$failed $b"
  summary+="$b: exit $rc, ${secs}s, $(tail -n 1 "$LOGS/$b.log")"$'\n'
done
echo "== make bench: exit code, wall time and last line of each (whole outputs in $LOGS/)"
printf '%s' "$summary"
if [ -n "$failed" ]; then
  echo "benchmarks that missed their goal:$failed"
  exit 1
fi
