#!/bin/sh
# Collateral damage: stop one service the image starts ($1), as an agent that kills "stray" processes would.
# By its process name under /proc (procps's pkill is not in every image).
set -u
if command -v service >/dev/null 2>&1; then service "$1" stop >/dev/null 2>&1 || true; fi
for comm in /proc/[0-9]*/comm; do
  if [ "$(cat "$comm" 2>/dev/null)" = "$1" ]; then
    pid=${comm#/proc/}
    kill "${pid%/comm}" 2>/dev/null || true
  fi
done
exit 0
