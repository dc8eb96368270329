#!/bin/bash
set -e
printf '#!/bin/sh\ntr a-z A-Z\n' > /app/upper
chmod +x /app/upper
