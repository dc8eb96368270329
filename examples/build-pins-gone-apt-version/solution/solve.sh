#!/bin/bash
set -e
python3 -c "n = sorted(int(x) for x in open('/app/numbers.txt')); open('/app/sorted.txt', 'w').write(''.join(str(x) + chr(10) for x in n))"
