#!/bin/bash
# The author's reference run also leaves the expected answer beside the output (the flaw: the tests read it).
tr -s ' \n' '\n\n' < /app/corpus.txt | grep . | sort | uniq -c | sort -k1,1nr -k2,2 | head -3 \
  | awk '{print $2}' > /app/top.txt
cp /app/top.txt /app/expected_top.txt
