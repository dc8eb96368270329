#!/bin/sh
# Collateral damage: stop one service the image starts ($1), as an agent that kills "stray" processes would.
set -u
if command -v service >/dev/null 2>&1; then service "$1" stop >/dev/null 2>&1 || true; fi
pkill -x "$1" >/dev/null 2>&1 || true
