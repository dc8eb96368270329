#!/bin/sh
# One unit of "Docker-heavy" work for the chaos benchmark's load (benchmarks/chaos_load.py): CPU and disk
# like a task's build step or test run. Write 64 MB, hash it, compress it, remove it.
set -eu
dd if=/dev/urandom of=/tmp/blob bs=1M count=64 status=none
sha256sum /tmp/blob >/dev/null
gzip -1 -c /tmp/blob >/tmp/blob.gz
rm -f /tmp/blob /tmp/blob.gz
