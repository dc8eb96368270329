#!/bin/bash
# Install nginx (Terminal-Bench's nginx-request-logging does the same): needs deb.debian.org.
apt-get update && apt-get install -y nginx

mkdir -p /var/www/html
echo "Welcome to the benchmark webserver" > /var/www/html/index.html
cat > /etc/nginx/conf.d/benchmark-site.conf << 'CONF'
server {
    listen 8080;
    root /var/www/html;
}
CONF
rm -f /etc/nginx/sites-enabled/default
service nginx restart || nginx
