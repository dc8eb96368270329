#!/bin/sh
# Collateral damage: empty one file (a log, a config, a data file) the task never asked to touch ($1).
set -eu
if [ -f "$1" ]; then : > "$1"; fi
