#!/bin/sh
# Collateral damage: remove one file the task never asked to touch ($1), as a careless agent would.
set -eu
rm -f -- "$1"
