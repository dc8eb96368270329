#!/bin/bash
cd "${TEST_DIR:-/tests}"
python3 -m pytest -rA -p no:cacheprovider test_outputs.py
