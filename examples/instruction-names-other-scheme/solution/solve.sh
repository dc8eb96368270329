#!/bin/bash
set -e
sed -i 's|^index-url = .*|index-url = http://mirror.internal.test/simple|' /app/pip.conf
