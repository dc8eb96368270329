#!/bin/bash
set -e
sha256sum /app/message.txt | cut -d' ' -f1 > /app/digest.txt
