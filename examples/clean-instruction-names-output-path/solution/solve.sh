#!/bin/bash
set -e
mkdir -p /app/output
cd /app/logs
for f in $(ls *.log | sort); do
  echo "$f $(wc -l < "$f")"
done > /app/output/summary.txt
