#!/bin/bash
set -e
python3 -c "
v = [int(x) for x in open('/app/data.txt').read().split()]
open('/app/stats.txt', 'w').write(f'{min(v)}\n{max(v)}\n{sum(v)}\n')
"
