#!/bin/bash
set -e
sed -i 's/SELECT SUM(cents) FROM orders"/SELECT SUM(cents) FROM orders WHERE status = '"'"'paid'"'"'"/' /app/revenue.py
