#!/bin/bash
set -e
/opt/wordcount/wordcount /app/input.txt > /app/count.txt
