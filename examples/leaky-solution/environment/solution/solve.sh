#!/bin/bash
printf '#!/bin/sh\ntac\n' > /app/rev
chmod +x /app/rev
