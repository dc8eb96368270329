#!/bin/bash
set -e
sha256sum /app/data/* | sort -k2 > /app/checksums.txt
