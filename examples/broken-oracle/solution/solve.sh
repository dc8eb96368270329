#!/bin/bash
# Deliberately wrong: the comma is missing, so the verifier rejects it.
echo 'hello world' > /app/greeting.txt
