#!/bin/bash
set -e
# The server is already in the image: configure and start it, nothing to download.
mkdir -p /var/www/html
echo "Welcome to the benchmark webserver" > /var/www/html/index.html
nohup python3 -m http.server 8080 --bind 127.0.0.1 --directory /var/www/html > /tmp/server.log 2>&1 &
for _ in $(seq 50); do
  python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8080/', timeout=1)" 2>/dev/null && exit 0
  sleep 0.1
done
echo "server did not start" >&2
exit 1
