#!/bin/bash
sort -t, -k2,2nr -k1,1 /app/scores.csv | cut -d, -f1 > /app/ranking.txt
