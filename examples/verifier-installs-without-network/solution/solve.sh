#!/bin/bash
set -e
# python3 is in the image; install it when a rebuilt image lacks it.
if ! command -v python3 >/dev/null 2>&1; then
    apt-get update && apt-get install -y --no-install-recommends python3-minimal
fi
python3 -c "n = sorted(int(x) for x in open('/app/numbers.txt')); open('/app/sorted.txt', 'w').write(''.join(str(x) + chr(10) for x in n))"
