#!/bin/bash
set -e
echo "sha256:$(sha256sum /app/release.tar | cut -d' ' -f1)" > /app/fingerprint.txt
